#include "pic_mpi.hpp"

#include <mpi.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace slipstream::pic {

namespace {

void check(int status, const char* call) {
  if (status != MPI_SUCCESS) throw std::runtime_error(std::string(call) + " failed");
}

}  // namespace

int MpiCommunicator::rank() const {
  int rank = 0;
  check(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank");
  return rank;
}

int MpiCommunicator::size() const {
  int size = 0;
  check(MPI_Comm_size(MPI_COMM_WORLD, &size), "MPI_Comm_size");
  return size;
}

void MpiCommunicator::sum(std::span<std::int64_t> values) const {
  check(MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_INT64_T,
                      MPI_SUM, MPI_COMM_WORLD),
        "MPI_Allreduce");
}

void MpiCommunicator::sum(std::span<double> values) const {
  check(MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_DOUBLE,
                      MPI_SUM, MPI_COMM_WORLD),
        "MPI_Allreduce");
}

void MpiCommunicator::abort(int status) const {
  MPI_Abort(MPI_COMM_WORLD, status);
  std::abort();  // MPI_Abort does not return; this only tells the compiler so
}

MpiSession::MpiSession(int& argc, char**& argv) { check(MPI_Init(&argc, &argv), "MPI_Init"); }

MpiSession::~MpiSession() { MPI_Finalize(); }

}  // namespace slipstream::pic
