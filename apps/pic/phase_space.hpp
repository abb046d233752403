// What the plasma teaches a model: the electron phase-space density binned on a coarse grid, and
// the training samples built from it. A sample pairs that density (the kinetic state) with the
// electric field the solver computed from the same particles (the target), so a model trained on
// them is a learned field solve whose error against the solver is a physical, checkable figure.
// Needs no Slipstream: pic_coupling.* sends what is computed here.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "pic.hpp"

namespace slipstream::pic {

/// The coarse phase-space grid: x_bins bins over the periodic box, v_bins over [-v_max, v_max].
///
/// Bin centres: X_I = I L / x_bins (every (cells / x_bins)-th node of the field grid) and
/// V_K = -v_max + (K + 1/2) Δv. A particle is shared between the two nearest bins in x and in v
/// with linear (cloud-in-cell) weights, periodic in x; a velocity beyond the outermost centres goes
/// whole to the edge bin, so that no particle is lost and Σ_K f(I, K) is the density at X_I.
/// With these centres the coarse density is an exact linear smoothing of the solver's own
/// cloud-in-cell charge density (n_I = Σ_m (c - |m|)/c n_{cI+m}, c = cells / x_bins), and a
/// translation by a whole bin is a translation of the field grid by c cells.
struct PhaseSpaceBins {
  std::size_t x_bins = 16;
  std::size_t v_bins = 16;
  double v_max = 3.0;

  /// Throws std::invalid_argument naming the first value out of range (x_bins must divide the
  /// grid's cells, so that translations by a bin are exact).
  void validate(const PicParameters& parameters) const;
  std::size_t size() const { return x_bins * v_bins; }
};

/// δf(X_I, V_K): the binned density f normalised to a mean of 1 over the bins, minus its average
/// over x at each V_K, as [x_bins][v_bins] (x-major). The x-average carries no charge perturbation
/// and so no field; removing it in double precision keeps the small perturbations of the linear
/// phase (10⁻⁶ of f at the seed) exact in the float32 samples. Velocities are taken at t_n (the
/// mean of v at t_{n-1/2} and t_{n+1/2}, as for the kinetic energy), positions at t_n, so the
/// state matches electric_field(). A collective: each rank bins its own particles and the bins
/// are summed across ranks.
std::vector<double> phase_space_perturbation(const Pic& pic, const PhaseSpaceBins& bins,
                                             const Communicator& communicator);

/// The layout of a training sample row: δf (bins.size() values, x-major), then E at the cell
/// centres (cells values), as float32.
std::size_t sample_columns(const PhaseSpaceBins& bins, std::size_t cells);

/// The translations (in whole x-bins) whose samples rank `rank` of `ranks` writes: b = rank,
/// rank + ranks, ... below x_bins. Periodic translation is an exact symmetry of the system, so
/// each translated state is a true sample; spread over the ranks, every step gives x_bins distinct
/// samples and the ranks do the same work (ranks beyond x_bins write none).
std::vector<std::size_t> sample_translations(std::size_t rank, std::size_t ranks,
                                             std::size_t x_bins);

/// Fills `row` (sample_columns values) with the sample of the state translated by `shift` x-bins:
/// δf'(I) = δf(I - shift), E'(j) = E(j - shift × cells / x_bins), indices modulo the grids.
void write_sample(std::span<const double> perturbation, std::span<const double> field,
                  const PhaseSpaceBins& bins, std::size_t shift, std::span<float> row);

}  // namespace slipstream::pic
