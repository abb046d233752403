// Linear theory of the beam-plasma system simulated by Pic, and the fit that measures a growth
// rate from a simulation's mode amplitude.
#pragma once

#include <complex>
#include <cstddef>
#include <span>
#include <vector>

namespace slipstream::pic {

/// One electron beam: a water-bag (uniform) velocity distribution of half-width √3 vth around
/// `velocity`; vth = 0 is a cold beam. `density` is the beam's share of ω_p² (the shares add to 1).
struct Beam {
  double density;
  double velocity;
  double vth;
};

/// The beams Pic loads: two of half the density at +v0 and -v0.
std::vector<Beam> counter_streaming_beams(double v0, double vth);

/// All roots ω of the electrostatic dispersion relation at wavenumber k,
///   1 = Σ_b density_b / ((ω - k velocity_b)² - 3 k² vth_b²),
/// which is exact for water-bag beams (and the cold-beam relation for vth = 0). Cleared of
/// denominators it is a polynomial of degree 2 × beams, solved for all its roots at once.
std::vector<std::complex<double>> dispersion_roots(double k, std::span<const Beam> beams);

/// The largest Im ω over the roots; 0 where every mode is stable.
double growth_rate(double k, std::span<const Beam> beams);

/// A least-squares fit of ln(amplitude) = γ t + c over the linear phase.
struct GrowthFit {
  double rate;  // γ
  double t_begin, t_end;
  std::size_t points;
};

/// Fits over the linear phase, taken as the samples from where the amplitude first reaches 10 ×
/// its initial value (the seed's non-growing parts have become small next to the growing mode)
/// up to where it first reaches 1/10 of its maximum (the saturation, where trapping begins).
/// Throws std::runtime_error when that window holds fewer than 10 samples.
GrowthFit fit_growth_rate(std::span<const double> times, std::span<const double> amplitudes);

}  // namespace slipstream::pic
