// Messages from this shard to the other members of its cluster: today the stream's shard telling
// a writer's shard that colocated chunks may go (SS.CHUNKS.FREE / SS.CHUNKS.DROP). Delivery is
// at least once and in order per member: a queue per member, one worker thread that connects
// (authenticating with this server's password), pipelines the queued commands and retries with
// back-off while the member cannot be reached. The commands sent must be idempotent.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "server/cluster/cluster.hpp"

namespace slipstream::server {

class PeerLinks {
 public:
  /// Links to the members of `cluster` but itself, authenticating with `password` (if any).
  PeerLinks(const Cluster& cluster, std::string password);
  /// Makes one last attempt to deliver what is queued (bounded by the I/O timeouts), then stops.
  ~PeerLinks();
  PeerLinks(const PeerLinks&) = delete;
  PeerLinks& operator=(const PeerLinks&) = delete;

  /// Queues `command` for member `node` (an index into cluster.nodes(), not this shard). Never
  /// blocks. Beyond kMaxQueued commands for one member the oldest are dropped (and counted).
  void send(std::size_t node, std::vector<std::string> command);

  /// Figures for INFO: commands waiting, delivered, dropped.
  struct Stats {
    std::size_t queued = 0;
    std::uint64_t delivered = 0, dropped = 0;
  };
  Stats stats() const;
  /// The password for connections made from now on (CONFIG SET requirepass).
  void set_password(std::string password);

  static constexpr std::size_t kMaxQueued = 100000;

 private:
  struct Link {
    std::deque<std::vector<std::string>> queue;
    std::uint64_t popped = 0;  // commands taken off the front so far (delivered or dropped)
    int fd = -1;               // the worker's alone
    std::chrono::steady_clock::time_point retry_at{};
    std::chrono::milliseconds backoff{0};
    bool warned = false;  // the current run of failures has been logged
  };

  void run();
  // Sends `batch` to member `node` over `fd` (connecting first when it is -1) and reads the
  // replies; false with `error` set when the member could not be reached. Runs unlocked.
  bool deliver(std::size_t node, int& fd, const std::vector<std::vector<std::string>>& batch,
               const std::string& password, std::string& error);
  // Bookkeeping after a delivery, with the lock held.
  void delivered(std::size_t node, Link& link);
  void failed(std::size_t node, Link& link, const std::string& why);

  const std::vector<ClusterNode> nodes_;
  const std::size_t self_;
  mutable std::mutex mutex_;
  std::string password_;  // guarded by mutex_
  std::condition_variable wake_;
  std::vector<Link> links_;  // by node index; guarded by mutex_ (fd and back-off: worker only)
  bool stopping_ = false;
  std::uint64_t delivered_ = 0, dropped_ = 0;
  std::thread worker_;  // last: starts once everything above exists
};

}  // namespace slipstream::server
