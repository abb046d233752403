// Collective over MPI_COMM_WORLD; see collective.hpp. An MPI error aborts the job (MPI's default
// handler), so a dead rank stops the others rather than leaving them in a collective.
#include <mpi.h>

#include <algorithm>
#include <stdexcept>

#include "slipstream/collective.hpp"

namespace slipstream::train {
namespace {

class MpiWorld final : public Collective {
 public:
  MpiWorld() {
    int initialised = 0;
    MPI_Initialized(&initialised);
    if (!initialised) throw std::logic_error("mpi_world: MPI_Init has not been called");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void sum(std::span<float> values) override { sum_in_parts(values, MPI_FLOAT); }
  void sum(std::span<double> values) override { sum_in_parts(values, MPI_DOUBLE); }
  std::int64_t sum(std::int64_t value) override {
    MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    return value;
  }
  void broadcast(std::span<float> values, int root) override {
    for (std::size_t first = 0; first < values.size(); first += kMaxCount) {
      const std::size_t n = std::min(kMaxCount, values.size() - first);
      MPI_Bcast(values.data() + first, static_cast<int>(n), MPI_FLOAT, root, MPI_COMM_WORLD);
    }
  }
  bool all(bool ok) override {
    int value = ok ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return value != 0;
  }

 private:
  // MPI counts are ints: buffers longer than that go in parts (one call for any real model).
  static constexpr std::size_t kMaxCount = 1u << 30;
  template <typename T>
  void sum_in_parts(std::span<T> values, MPI_Datatype type) {
    for (std::size_t first = 0; first < values.size(); first += kMaxCount) {
      const std::size_t n = std::min(kMaxCount, values.size() - first);
      MPI_Allreduce(MPI_IN_PLACE, values.data() + first, static_cast<int>(n), type, MPI_SUM,
                    MPI_COMM_WORLD);
    }
  }

  int rank_ = 0, size_ = 1;
};

}  // namespace

std::unique_ptr<Collective> mpi_world() { return std::make_unique<MpiWorld>(); }

}  // namespace slipstream::train
