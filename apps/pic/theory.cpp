#include "theory.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <sstream>
#include <stdexcept>

namespace slipstream::pic {

namespace {

using Polynomial = std::vector<double>;  // coefficients, lowest degree first

Polynomial multiply(const Polynomial& a, const Polynomial& b) {
  Polynomial product(a.size() + b.size() - 1, 0.0);
  for (std::size_t i = 0; i < a.size(); ++i) {
    for (std::size_t j = 0; j < b.size(); ++j) product[i + j] += a[i] * b[j];
  }
  return product;
}

std::complex<double> evaluate(const Polynomial& p, std::complex<double> z) {
  std::complex<double> value = 0;
  for (auto c = p.rbegin(); c != p.rend(); ++c) value = value * z + *c;
  return value;
}

/// (ω - k u)² - 3 k² vth²: the beam's denominator in the dispersion relation.
Polynomial beam_denominator(double k, const Beam& beam) {
  const double shift = k * beam.velocity;
  const double spread = 3 * k * k * beam.vth * beam.vth;
  return {shift * shift - spread, -2 * shift, 1.0};
}

/// The dispersion relation times the product of all denominators D_b: Π D_b - Σ_b n_b Π_{c≠b} D_c.
/// Monic, of degree 2 × beams.
Polynomial dispersion_polynomial(double k, std::span<const Beam> beams) {
  Polynomial result{1.0};
  for (const Beam& beam : beams) result = multiply(result, beam_denominator(k, beam));
  for (std::size_t b = 0; b < beams.size(); ++b) {
    Polynomial others{1.0};
    for (std::size_t c = 0; c < beams.size(); ++c) {
      if (c != b) others = multiply(others, beam_denominator(k, beams[c]));
    }
    for (std::size_t i = 0; i < others.size(); ++i) result[i] -= beams[b].density * others[i];
  }
  return result;
}

/// All roots of a monic polynomial by the Weierstrass (Durand-Kerner) iteration, started on a
/// circle that encloses every root (Cauchy's bound) and turned off the real axis so that the
/// iterates can leave it. It converges quadratically to simple roots, linearly to repeated ones
/// (hence the iteration cap rather than an error).
std::vector<std::complex<double>> polynomial_roots(const Polynomial& p) {
  const std::size_t degree = p.size() - 1;
  double bound = 0;
  for (std::size_t i = 0; i < degree; ++i) bound = std::max(bound, std::abs(p[i]));
  bound += 1;
  std::vector<std::complex<double>> z(degree);
  for (std::size_t i = 0; i < degree; ++i) {
    z[i] = std::polar(bound, 2 * std::numbers::pi * static_cast<double>(i) / degree + 0.25);
  }
  for (int iteration = 0; iteration < 1000; ++iteration) {
    double change = 0;
    for (std::size_t i = 0; i < degree; ++i) {
      std::complex<double> denominator = 1;
      for (std::size_t j = 0; j < degree; ++j) {
        if (j != i) denominator *= z[i] - z[j];
      }
      const auto delta = evaluate(p, z[i]) / denominator;
      z[i] -= delta;
      change = std::max(change, std::abs(delta));
    }
    if (change <= 1e-15 * bound) break;
  }
  return z;
}

}  // namespace

std::vector<Beam> counter_streaming_beams(double v0, double vth) {
  return {{.density = 0.5, .velocity = v0, .vth = vth},
          {.density = 0.5, .velocity = -v0, .vth = vth}};
}

std::vector<std::complex<double>> dispersion_roots(double k, std::span<const Beam> beams) {
  if (!(k > 0)) throw std::invalid_argument("the wavenumber must be positive");
  if (beams.empty()) throw std::invalid_argument("the dispersion relation needs a beam");
  return polynomial_roots(dispersion_polynomial(k, beams));
}

double growth_rate(double k, std::span<const Beam> beams) {
  const auto roots = dispersion_roots(k, beams);
  double rate = 0, scale = 0;
  for (const auto& root : roots) {
    rate = std::max(rate, root.imag());
    scale = std::max(scale, std::abs(root));
  }
  // Real roots come back with imaginary parts at the level of rounding: those are stable modes.
  return rate > 1e-10 * scale ? rate : 0.0;
}

GrowthFit fit_growth_rate(std::span<const double> times, std::span<const double> amplitudes) {
  if (times.size() != amplitudes.size()) {
    throw std::invalid_argument("the fit needs as many times as amplitudes");
  }
  if (amplitudes.empty() || !(amplitudes[0] > 0)) {
    throw std::runtime_error("no growth to fit: the mode starts at zero amplitude (no seed)");
  }
  const auto peak =
      static_cast<std::size_t>(std::ranges::max_element(amplitudes) - amplitudes.begin());
  const double low = 10 * amplitudes[0];
  const double high = amplitudes[peak] / 10;
  std::size_t begin = 0;
  while (begin < peak && amplitudes[begin] < low) ++begin;
  std::size_t end = begin;
  while (end < peak && amplitudes[end] < high) ++end;
  if (end < begin + 10) {
    std::ostringstream message;
    message << "no linear phase to fit: the mode amplitude goes from " << amplitudes[0]
            << " to a maximum of " << amplitudes[peak] << ", leaving " << end - begin
            << " samples between 10 times the first and 1/10 of the maximum (10 needed)";
    throw std::runtime_error(message.str());
  }
  const double n = static_cast<double>(end - begin);
  double mean_t = 0, mean_y = 0;
  for (std::size_t i = begin; i < end; ++i) {
    mean_t += times[i] / n;
    mean_y += std::log(amplitudes[i]) / n;
  }
  double covariance = 0, variance = 0;
  for (std::size_t i = begin; i < end; ++i) {
    covariance += (times[i] - mean_t) * (std::log(amplitudes[i]) - mean_y);
    variance += (times[i] - mean_t) * (times[i] - mean_t);
  }
  return {.rate = covariance / variance,
          .t_begin = times[begin],
          .t_end = times[end - 1],
          .points = end - begin};
}

}  // namespace slipstream::pic
