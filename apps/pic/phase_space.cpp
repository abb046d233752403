#include "phase_space.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace slipstream::pic {

namespace {

void require(bool condition, const std::string& message) {
  if (!condition) throw std::invalid_argument(message);
}

}  // namespace

void PhaseSpaceBins::validate(const PicParameters& parameters) const {
  require(x_bins >= 2, "the phase-space grid needs at least 2 x-bins");
  require(v_bins >= 1, "the phase-space grid needs at least 1 v-bin");
  require(parameters.cells % x_bins == 0,
          "the phase-space x-bins (" + std::to_string(x_bins) + ") must divide the cells (" +
              std::to_string(parameters.cells) + "), so that a translation by one bin is exact");
  require(std::isfinite(v_max) && v_max > 0, "the phase-space v_max must be positive");
}

std::vector<double> phase_space_perturbation(const Pic& pic, const PhaseSpaceBins& bins,
                                             const Communicator& communicator) {
  const PicParameters& p = pic.parameters();
  const std::size_t nx = bins.x_bins, nv = bins.v_bins;
  const double inverse_bx = static_cast<double>(nx) / p.length;
  const double bv = 2 * bins.v_max / static_cast<double>(nv);
  const double inverse_dx = 1.0 / pic.cell_size();
  const auto field = pic.electric_field();
  const auto x = pic.positions();
  const auto v = pic.velocities();

  std::vector<double> f(nx * nv, 0.0);
  for (std::size_t i = 0; i < x.size(); ++i) {
    // v at t_n: half of the next kick back from t_{n+1/2} (the gather Pic uses: E of the cell).
    const auto cell = std::min(static_cast<std::size_t>(x[i] * inverse_dx), p.cells - 1);
    const double velocity = v[i] - 0.5 * p.dt * field[cell];

    const double sx = x[i] * inverse_bx;  // in [0, nx]: centres at whole numbers
    const auto left = std::min(static_cast<std::size_t>(sx), nx - 1);
    const double wx = sx - static_cast<double>(left);
    const std::size_t right = left + 1 == nx ? 0 : left + 1;

    // Centres at K + 1/2 in units of bv from -v_max; clamped to the outer centres.
    const double sv =
        std::clamp((velocity + bins.v_max) / bv - 0.5, 0.0, static_cast<double>(nv - 1));
    const auto low = std::min(static_cast<std::size_t>(sv), nv - 1);
    const double wv = sv - static_cast<double>(low);
    const std::size_t high = std::min(low + 1, nv - 1);

    f[left * nv + low] += (1 - wx) * (1 - wv);
    f[left * nv + high] += (1 - wx) * wv;
    f[right * nv + low] += wx * (1 - wv);
    f[right * nv + high] += wx * wv;
  }
  communicator.sum(f);

  // Normalised to a mean of 1 over the bins, then the x-average of each velocity row removed.
  const double scale = static_cast<double>(nx * nv) / static_cast<double>(p.particles());
  for (std::size_t k = 0; k < nv; ++k) {
    double mean = 0;
    for (std::size_t j = 0; j < nx; ++j) mean += f[j * nv + k];
    mean /= static_cast<double>(nx);
    for (std::size_t j = 0; j < nx; ++j) f[j * nv + k] = scale * (f[j * nv + k] - mean);
  }
  return f;
}

std::size_t sample_columns(const PhaseSpaceBins& bins, std::size_t cells) {
  return bins.size() + cells;
}

std::vector<std::size_t> sample_translations(std::size_t rank, std::size_t ranks,
                                             std::size_t x_bins) {
  std::vector<std::size_t> shifts;
  for (std::size_t b = rank; b < x_bins; b += ranks) shifts.push_back(b);
  return shifts;
}

void write_sample(std::span<const double> perturbation, std::span<const double> field,
                  const PhaseSpaceBins& bins, std::size_t shift, std::span<float> row) {
  const std::size_t nx = bins.x_bins, nv = bins.v_bins, cells = field.size();
  if (perturbation.size() != bins.size() || row.size() != bins.size() + cells || cells % nx != 0) {
    throw std::invalid_argument("write_sample: sizes do not match the phase-space grid");
  }
  for (std::size_t j = 0; j < nx; ++j) {
    const std::size_t from = (j + nx - shift % nx) % nx;
    for (std::size_t k = 0; k < nv; ++k) {
      row[j * nv + k] = static_cast<float>(perturbation[from * nv + k]);
    }
  }
  const std::size_t cell_shift = (shift % nx) * (cells / nx);
  for (std::size_t j = 0; j < cells; ++j) {
    row[bins.size() + j] = static_cast<float>(field[(j + cells - cell_shift) % cells]);
  }
}

}  // namespace slipstream::pic
