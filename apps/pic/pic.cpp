#include "pic.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <stdexcept>
#include <string>

namespace slipstream::pic {

namespace {

/// A position in grid units: x = (cell + fraction) Δx with fraction in [0, 1].
struct GridPoint {
  std::size_t cell;
  double fraction;
};

GridPoint locate(double x, double inverse_dx, std::size_t cells) {
  const double s = x * inverse_dx;
  // A position just below the length can round to s = cells: it belongs to the last cell.
  const auto cell = std::min(static_cast<std::size_t>(s), cells - 1);
  return {cell, s - static_cast<double>(cell)};
}

double wrap(double x, double length) {
  x -= length * std::floor(x / length);
  return x < length ? x : 0.0;  // a tiny negative x lands on `length` after rounding
}

std::uint64_t splitmix64(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
  z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
  return z ^ (z >> 31);
}

/// A uniform number in [0, 1) that depends only on (seed, index): the random start is the same
/// whichever rank loads a particle.
double uniform(std::uint64_t seed, std::uint64_t index) {
  return static_cast<double>(splitmix64(splitmix64(seed) + index) >> 11) * 0x1.0p-53;
}

/// The base-2 van der Corput sequence: consecutive indices spread evenly over [0, 1).
double radical_inverse(std::uint64_t index) {
  double result = 0;
  for (double digit = 0.5; index != 0; index >>= 1, digit *= 0.5) {
    if (index & 1) result += digit;
  }
  return result;
}

void require(bool condition, const std::string& message) {
  if (!condition) throw std::invalid_argument(message);
}

}  // namespace

void PicParameters::validate() const {
  require(cells >= 4, "cells must be at least 4");
  require(particles_per_cell >= 1, "particles per cell must be at least 1");
  require(particles() % 2 == 0, "cells x particles per cell must be even (two equal beams)");
  require(particles() <= (std::size_t{1} << 40), "at most 2^40 particles");
  require(std::isfinite(length) && length > 0, "the length must be positive");
  require(mode >= 1 && static_cast<std::size_t>(mode) < cells / 2,
          "the mode must be at least 1 and below cells / 2 (the grid's Nyquist mode)");
  require(std::isfinite(v0) && v0 >= 0, "v0 must be zero or positive");
  require(std::isfinite(vth) && vth >= 0, "vth must be zero or positive");
  require(perturbation >= 0 && perturbation < 1,
          "the perturbation must be in [0, 1) (at 1 the displaced particles would cross)");
  require(dt > 0 && dt < 2, "dt must be in (0, 2): leapfrog is unstable for omega_p dt >= 2");
}

Pic::Pic(const PicParameters& parameters, const Communicator& communicator)
    : parameters_(parameters), communicator_(communicator) {
  parameters_.validate();
  dx_ = parameters_.length / static_cast<double>(parameters_.cells);
  // Each particle deposits a charge of exactly weight_unit_ integer units, split between two
  // nodes. Integer sums are exact, so ρ, and with it every trajectory, is bit for bit the same
  // whatever the number of ranks and the order of the all-reduce. The unit leaves room for all
  // particles in one node below 2^62.
  weight_unit_ = std::int64_t{1} << (62 - std::bit_width(parameters_.particles()));
  counts_.resize(parameters_.cells);
  rho_.resize(parameters_.cells);
  phi_.resize(parameters_.cells);
  field_.resize(parameters_.cells);
  load_particles();
  deposit_charge();
  solve_field();
  kick(-0.5 * parameters_.dt);  // leapfrog starts from v at t_{-1/2}
  diagnose();
}

void Pic::load_particles() {
  const std::size_t total = parameters_.particles();
  const auto ranks = static_cast<std::size_t>(communicator_.size());
  const auto rank = static_cast<std::size_t>(communicator_.rank());
  // Contiguous blocks of global indices; the first total % ranks ranks take one more.
  offset_ = rank * (total / ranks) + std::min(rank, total % ranks);
  const std::size_t count = total / ranks + (rank < total % ranks ? 1 : 0);
  x_.resize(count);
  v_.resize(count);

  const double length = parameters_.length;
  const double k = parameters_.wavenumber();
  const double displacement = parameters_.perturbation / k;
  const double half_width = std::sqrt(3.0) * parameters_.vth;
  const std::size_t per_beam = total / 2;
  for (std::size_t p = 0; p < count; ++p) {
    const std::size_t i = offset_ + p;  // even: the +v0 beam, odd: the -v0 beam
    const std::size_t j = i / 2;        // index within the beam
    double x0, u;
    if (parameters_.quiet_start) {
      x0 = (static_cast<double>(j) + 0.5) * length / static_cast<double>(per_beam);
      u = radical_inverse(j);
    } else {
      x0 = length * uniform(parameters_.seed, 2 * i);
      u = uniform(parameters_.seed, 2 * i + 1);
    }
    // Moving x0 by (ε/k) sin(k x0) makes the density n0 (1 - ε cos(k x)) to first order in ε.
    x_[p] = wrap(x0 + displacement * std::sin(k * x0), length);
    v_[p] = (i % 2 == 0 ? parameters_.v0 : -parameters_.v0) + half_width * (2 * u - 1);
  }
}

void Pic::step() {
  kick(parameters_.dt);
  const double length = parameters_.length;
  for (std::size_t p = 0; p < x_.size(); ++p) x_[p] = wrap(x_[p] + v_[p] * parameters_.dt, length);
  deposit_charge();
  solve_field();
  ++steps_;
  diagnose();
}

// The gather that conserves energy with linear deposition: the force on a particle is minus the
// gradient of the potential interpolated with the deposition's own weights, which is E at the
// centre of the particle's cell (see README.md).
void Pic::kick(double duration) {
  const double inverse_dx = 1.0 / dx_;
  for (std::size_t p = 0; p < x_.size(); ++p) {
    const auto point = locate(x_[p], inverse_dx, parameters_.cells);
    v_[p] -= field_[point.cell] * duration;  // dv/dt = (q/m) E with q/m = -1
  }
}

void Pic::deposit_charge() {
  const std::size_t cells = parameters_.cells;
  const double inverse_dx = 1.0 / dx_;
  const auto unit = static_cast<double>(weight_unit_);
  std::ranges::fill(counts_, 0);
  for (const double x : x_) {
    const auto point = locate(x, inverse_dx, cells);
    const std::int64_t right = std::llround(point.fraction * unit);
    counts_[point.cell] += weight_unit_ - right;
    counts_[point.cell + 1 == cells ? 0 : point.cell + 1] += right;
  }
  communicator_.sum(counts_);
  // n_j / n0 = counts_j / unit × cells / N_p; ρ = 1 (ions) - n_j / n0.
  const double scale =
      static_cast<double>(cells) / (static_cast<double>(parameters_.particles()) * unit);
  double mean = 0;
  for (std::size_t j = 0; j < cells; ++j) {
    rho_[j] = 1.0 - static_cast<double>(counts_[j]) * scale;
    mean += rho_[j];
  }
  // The periodic problem needs a neutral grid; the sum is neutral up to rounding in `scale`.
  mean /= static_cast<double>(cells);
  for (double& rho : rho_) rho -= mean;
}

// The three-point Poisson equation -(φ_{j+1} - 2φ_j + φ_{j-1}) / Δx² = ρ_j with
// E_{j+1/2} = -(φ_{j+1} - φ_j) / Δx is Gauss's law (E_{j+1/2} - E_{j-1/2}) / Δx = ρ_j: a running
// sum, exact in O(N_g), with the constant fixed by a periodic φ (zero mean E).
void Pic::solve_field() {
  double running = 0, mean = 0;
  for (std::size_t j = 0; j < rho_.size(); ++j) {
    running += dx_ * rho_[j];
    field_[j] = running;
    mean += running;
  }
  mean /= static_cast<double>(field_.size());
  for (double& e : field_) e -= mean;

  double potential = 0;
  mean = 0;
  for (std::size_t j = 0; j < field_.size(); ++j) {
    phi_[j] = potential;
    mean += potential;
    potential -= dx_ * field_[j];
  }
  mean /= static_cast<double>(phi_.size());
  for (double& phi : phi_) phi -= mean;
}

void Pic::diagnose() {
  // Kinetic energy at t_n: the mean of v² at t_{n-1/2} and t_{n+1/2} (v - E Δt, the next kick).
  const double inverse_dx = 1.0 / dx_;
  double sum_v2 = 0;
  for (std::size_t p = 0; p < x_.size(); ++p) {
    const auto point = locate(x_[p], inverse_dx, parameters_.cells);
    const double next = v_[p] - field_[point.cell] * parameters_.dt;
    sum_v2 += 0.5 * (v_[p] * v_[p] + next * next);
  }
  communicator_.sum(std::span(&sum_v2, 1));
  const double mass = parameters_.length / static_cast<double>(parameters_.particles());

  double field_energy = 0;
  std::complex<double> mode = 0;
  const double phase_step =
      2 * std::numbers::pi * parameters_.mode / static_cast<double>(parameters_.cells);
  for (std::size_t j = 0; j < field_.size(); ++j) {
    field_energy += field_[j] * field_[j];
    mode += field_[j] * std::polar(1.0, -phase_step * (static_cast<double>(j) + 0.5));
  }
  diagnostics_ = {.step = steps_,
                  .time = time(),
                  .field_energy = 0.5 * dx_ * field_energy,
                  .kinetic_energy = 0.5 * mass * sum_v2,
                  .mode_amplitude = 2 * std::abs(mode) / static_cast<double>(field_.size())};
}

}  // namespace slipstream::pic
