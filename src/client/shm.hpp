// The shared-memory fast path inside the client: the state a Client shares with the loans and
// views it hands out (which may outlive them). The operations are Client::Impl members
// (client_impl.hpp, implemented in client_shm.cpp).
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "slipstream/shared_memory.hpp"
#include "slipstream/tensor_data.hpp"

namespace slipstream {
namespace client {

class Connection;

/// Shared by a Client, its loans and its views. Leases and loans belong to one server connection
/// (`generation`); ids given back are sent with the Client's next request (SS.SHM.RELEASE) and
/// dropped if the connection was replaced meanwhile (the server already released them).
struct ShmLink {
  /// Records a new connection (under the Client's I/O lock): whether it has the fast path.
  void connected(bool with_shm) {
    std::lock_guard lock(mutex);
    ++generation;
    attached = with_shm;
    pending.clear();
  }
  bool active() const {
    std::lock_guard lock(mutex);
    return attached;
  }
  std::uint64_t current_generation() const {
    std::lock_guard lock(mutex);
    return generation;
  }
  /// Queues `id` for release if it belongs to the current connection. Thread-safe, noexcept.
  void give_back(std::uint64_t of_generation, std::uint64_t id) noexcept {
    try {
      std::lock_guard lock(mutex);
      if (of_generation == generation && attached) pending.push_back(id);
    } catch (...) {
    }
  }
  std::vector<std::uint64_t> take_pending() {
    std::lock_guard lock(mutex);
    return std::exchange(pending, {});
  }

  mutable std::mutex mutex;
  std::uint64_t generation = 0;         // guarded by mutex
  bool attached = false;                // guarded by mutex
  std::vector<std::uint64_t> pending;   // guarded by mutex

  std::atomic<std::uint64_t> shm_puts{0}, shm_loan_puts{0}, shm_lent_ahead_puts{0}, shm_gets{0},
      shm_views{0}, socket_puts{0}, socket_gets{0}, fallbacks{0};
};

/// A lease of a stored tensor's bytes (SS.SHM.VIEW): its memfd, open until mapped or read.
struct ShmLease {
  int fd = -1;
  std::uint64_t id = 0;
  std::uint64_t generation = 0;
  DType dtype = DType::kFloat32;
  std::vector<std::int64_t> shape;
  std::size_t bytes = 0;
};

/// SS.SHM.VIEW's reply: a lease, or the server's error.
struct ShmLeaseReply {
  std::string error;
  ShmLease lease;
};

/// SS.SHM.LOAN's reply: a loan's descriptor and id, or the server's error.
struct ShmLoanReply {
  std::string error;
  int fd = -1;
  std::uint64_t id = 0;
  std::uint64_t generation = 0;
};

/// Reads the fields of loans and views; defined in client_shm.cpp.
struct ShmAccess;

}  // namespace client

}  // namespace slipstream
