// A 1D1V electrostatic particle-in-cell code: electrons as macro-particles on a fixed neutralising
// ion background in a periodic box, cloud-in-cell deposition, the energy-conserving field gather,
// leapfrog push. Parallel over particles: every rank holds the whole (small) grid, deposits its
// own particles, and the charge is summed across ranks before each rank solves the same field.
//
// Normalised units: time in 1/ω_p (ω_p of the total electron density), ε0 = 1, electron
// charge-to-mass ratio -1, mean electron charge density -1 (the ions' is +1); lengths in any unit,
// velocities in that unit per 1/ω_p. See README.md for the equations and the discretisation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <numbers>
#include <span>
#include <vector>

namespace slipstream::pic {

/// The ranks of a run. Every rank calls the same collectives in the same order.
class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// Element-wise sum over the ranks, in place, the result on every rank (an all-reduce).
  virtual void sum(std::span<std::int64_t> values) const = 0;
  virtual void sum(std::span<double> values) const = 0;
  /// Ends every rank of the run at once: for an error on one rank only, when the others may be
  /// waiting for it in a collective.
  [[noreturn]] virtual void abort(int status) const = 0;
};

/// A run of one rank: nothing to exchange.
class SerialCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void sum(std::span<std::int64_t>) const override {}
  void sum(std::span<double>) const override {}
  [[noreturn]] void abort(int status) const override { std::exit(status); }
};

struct PicParameters {
  std::size_t cells = 64;
  std::size_t particles_per_cell = 1000;  // both beams together
  /// 2π√(8/3): with mode 1 and v0 = 1, k v0 = √(3/8), the fastest-growing mode of cold beams.
  double length = 2 * std::numbers::pi * 1.6329931618554521;
  int mode = 1;                // the seeded (and diagnosed) Fourier mode, k = 2π mode / length
  double v0 = 1.0;             // the beams drift at +v0 and -v0
  double vth = 0.0;            // rms thermal speed of each beam: a water-bag of half-width √3 vth
  double perturbation = 1e-6;  // relative amplitude of the seeded density perturbation
  double dt = 0.1;             // ω_p Δt
  std::uint64_t seed = 1;      // for the random start only
  bool quiet_start = true;     // evenly spaced positions, bit-reversed velocities; else random

  /// Throws std::invalid_argument naming the first value out of range.
  void validate() const;
  std::size_t particles() const { return cells * particles_per_cell; }
  double wavenumber() const { return 2 * std::numbers::pi * mode / length; }
};

/// Time-centred energies and the seeded mode at one integer time step.
struct Diagnostics {
  std::size_t step = 0;
  double time = 0;
  double field_energy = 0;    // (1/2) ∫ E² dx
  double kinetic_energy = 0;  // Σ m v²/2 at t_n: the mean of its values at t_{n-1/2} and t_{n+1/2}
  double mode_amplitude = 0;  // amplitude of E's Fourier component at the seeded mode
  double total_energy() const { return field_energy + kinetic_energy; }
};

/// The simulation. The state between steps is x at t_n, v at t_{n-1/2}, and ρ, φ, E at t_n.
class Pic {
 public:
  /// Loads this rank's share of the particles (the same global particles whatever the number of
  /// ranks) and solves the initial field. `communicator` must outlive the Pic.
  Pic(const PicParameters& parameters, const Communicator& communicator);

  /// Advances one time step (a collective: every rank calls it).
  void step();

  const PicParameters& parameters() const { return parameters_; }
  std::size_t step_count() const { return steps_; }
  double time() const { return static_cast<double>(steps_) * parameters_.dt; }
  double cell_size() const { return dx_; }

  /// Grid quantities at t_n, identical on every rank: ρ and φ at the nodes x_j = j Δx,
  /// E at the cell centres x_{j+1/2} = (j + 1/2) Δx.
  std::span<const double> charge_density() const { return rho_; }
  std::span<const double> potential() const { return phi_; }
  std::span<const double> electric_field() const { return field_; }

  /// This rank's particles, global indices [particle_offset(), particle_offset() + size()):
  /// positions at t_n in [0, length), velocities at t_{n-1/2}. Every macro-particle has
  /// charge -length / N_p and mass length / N_p.
  std::span<const double> positions() const { return x_; }
  std::span<const double> velocities() const { return v_; }
  std::size_t particle_offset() const { return offset_; }

  /// The diagnostics at t_n (all ranks hold the same values).
  const Diagnostics& diagnostics() const { return diagnostics_; }

 private:
  void load_particles();
  void kick(double duration);
  void deposit_charge();
  void solve_field();
  void diagnose();

  PicParameters parameters_;
  const Communicator& communicator_;
  double dx_;
  std::int64_t weight_unit_;  // the fixed-point value of one particle's charge, see deposit_charge
  std::size_t offset_ = 0;
  std::size_t steps_ = 0;
  std::vector<double> x_, v_;
  std::vector<std::int64_t> counts_;
  std::vector<double> rho_, phi_, field_;
  Diagnostics diagnostics_;
};

}  // namespace slipstream::pic
