// The PIC run both codec_bench and link_bench take their data from: the two-stream instability
// seeded in mode 4 of a box 4 times the default, cold beams, run into its nonlinear phase.
#pragma once

#include <cstddef>

#include "pic.hpp"

namespace slipstream::bench {

inline pic::PicParameters two_stream_parameters(std::size_t cells, std::size_t particles_per_cell) {
  pic::PicParameters parameters;
  parameters.cells = cells;
  parameters.particles_per_cell = particles_per_cell;
  parameters.mode = 4;
  parameters.length *= 4;
  parameters.vth = 0.05;
  parameters.perturbation = 1e-3;
  return parameters;
}

}  // namespace slipstream::bench
