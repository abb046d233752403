// The MPI side of Pic, kept out of the core library so that it builds without MPI.
#pragma once

#include "pic.hpp"

namespace slipstream::pic {

/// MPI_COMM_WORLD as a Communicator.
class MpiCommunicator final : public Communicator {
 public:
  int rank() const override;
  int size() const override;
  void sum(std::span<std::int64_t> values) const override;
  void sum(std::span<double> values) const override;
  [[noreturn]] void abort(int status) const override;
};

/// MPI_Init on construction, MPI_Finalize on destruction.
class MpiSession {
 public:
  MpiSession(int& argc, char**& argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  const Communicator& world() const { return world_; }

 private:
  MpiCommunicator world_;
};

}  // namespace slipstream::pic
