// The collectives a data-parallel trainer needs, behind an interface so that the trainer runs
// with one rank and no MPI as well as under mpirun (public: a user's own training loop uses
// it too). The MPI implementation (src/train/mpi_collective.cpp, libslipstream_training_mpi) is
// the only code that includes MPI; a user may also implement it over their own communicator.
//
// Every rank must make the same calls in the same order (they are collective). A rank with nothing
// to contribute still calls (with zeros), so that no rank can hang the others.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "slipstream/export.hpp"

namespace slipstream::train {

class SLIPSTREAM_API Collective {
 public:
  virtual ~Collective() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// Element-wise sum over the ranks, in place, in one call (a fused buffer, not one per tensor).
  virtual void sum(std::span<float> values) = 0;
  virtual void sum(std::span<double> values) = 0;
  virtual std::int64_t sum(std::int64_t value) = 0;
  /// Every rank gets `root`'s values.
  virtual void broadcast(std::span<float> values, int root) = 0;
  /// True on every rank when `ok` is true on every rank.
  virtual bool all(bool ok) = 0;
};

/// One rank, no MPI: sums are the values themselves.
SLIPSTREAM_API std::unique_ptr<Collective> single_process();

/// MPI_COMM_WORLD (MPI must be initialised). Defined in libslipstream_training_mpi, the only
/// library that links MPI.
SLIPSTREAM_API std::unique_ptr<Collective> mpi_world();

}  // namespace slipstream::train
