// The server's streams by name. Hands each request the stream it addresses, locked; replaces a
// stream that has ended when a new run's writers attach; forgets streams nobody uses any more;
// runs step timeouts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "server/stream/deadline_timer.hpp"

namespace slipstream::server {

class Keyspace;
class Stream;
struct RemoteWork;

/// Figures for INFO's "# Streams" section.
struct StreamTotals {
  std::size_t streams = 0;  ///< live: not counting ended runs kept for late joiners
  std::size_t ended_kept = 0;
  std::size_t bytes_held = 0;
  std::size_t steps_held = 0;
  std::size_t segment_bytes = 0;  ///< shared-memory segments lent to writers
  std::size_t parked = 0;         ///< requests waiting (BEGIN for a slot, NEXT for a step)
};

/// Thread safety: every member function is thread-safe. Lock order: the registry's lock, then
/// one stream's lock; operations run with both held, so they must be short and must not block.
///
/// Ended runs: a stream whose run has ended is kept, idle, for Stream::kEndedRunKept, so that a
/// group joining late gets its end; a writer attaching replaces it at once.
///
/// Incarnations: when a writer attaches to a stream that has ended (and the rank is not attached
/// to it any more), the stream is replaced by a fresh one under the same name. The old one is
/// kept, out of sight of new readers and writers, until its own readers have left: requests from
/// a connection bound to the old one still reach it, so a stale run is never mistaken for live.
class StreamRegistry {
 public:
  using Operation = std::function<void(Stream&)>;
  /// For routing: true when the stream holds the requester's binding.
  using BoundHere = std::function<bool(const Stream&)>;

  StreamRegistry() = default;
  ~StreamRegistry();
  StreamRegistry(const StreamRegistry&) = delete;
  StreamRegistry& operator=(const StreamRegistry&) = delete;

  /// Runs `operation` on the stream called `name`: the replaced incarnation for which
  /// `bound_here` is true, if any, else the current one. Throws StreamError when there is none.
  /// After `operation` (even when it throws) the stream settles: freed steps are dropped, parked
  /// requests retried, step timeouts scheduled, and an idle stream forgotten.
  void with_existing(std::string_view name, const BoundHere& bound_here,
                     const Operation& operation);
  /// As with_existing for the current incarnation, creating the stream (awaiting writers) when
  /// there is none.
  void with_current(std::string_view name, const Operation& operation);
  /// For SS.STREAM.WRITE: the current incarnation, replaced by a fresh one first when it has
  /// ended and writer `rank` is not attached to it.
  void with_writer(std::string_view name, std::uint32_t rank, const Operation& operation);
  /// Runs `operation` on `stream`, wherever it is (close hooks, timers).
  void with_stream(const std::shared_ptr<Stream>& stream, const Operation& operation);

  StreamTotals totals() const;

  /// Deletes the streams called `name` (every incarnation; Stream::erase); their bound writers and
  /// readers are told "no stream" from then on. Returns how many there were.
  std::size_t erase(std::string_view name);
  /// Deletes every stream (FLUSHALL). Returns how many there were.
  std::size_t erase_all();

  /// What new streams count their metadata against (--maxmemory). Set before serving.
  void set_keyspace(Keyspace* keyspace) { keyspace_ = keyspace; }

  /// Cluster mode: receives, after each settle, what a stream asks other members to do (free
  /// colocated chunks). Runs with the stream locked: it must only queue the work. Set before
  /// serving.
  using RemoteSink = std::function<void(const std::string& stream, RemoteWork& work)>;
  void set_remote_sink(RemoteSink sink) { remote_sink_ = std::move(sink); }

 private:
  // Runs the operation with the stream locked, then settles it; true when it is idle after.
  bool run_locked(Stream& stream, const Operation& operation);
  // Forgets `stream` if it is still idle (an ended run once its time is up).
  void collect(const std::shared_ptr<Stream>& stream);
  // With the stream locked: Stream::forgettable now; when it starts an ended run's time, a
  // collect() is scheduled for when it passes.
  bool forget_now(const std::shared_ptr<Stream>& stream);
  // With the registry's lock held: erases `stream` (Stream::erase) and passes on its remote work.
  void erase_locked(const std::shared_ptr<Stream>& stream);
  // Stream::erase with the stream's mutex held, telling other members what to free: for a
  // stream the registry lets go of (forgotten or replaced), whose steps (a precious first step
  // kept for good, or steps of a dead run) would otherwise keep chunks on other members.
  void release_locked(Stream& stream);
  // The stream the registry's lock must be held for; null when there is none.
  std::shared_ptr<Stream> find_locked(std::string_view name, const BoundHere& bound_here) const;

  RemoteSink remote_sink_;
  Keyspace* keyspace_ = nullptr;
  mutable std::shared_mutex mutex_;
  std::map<std::string, std::shared_ptr<Stream>, std::less<>> current_;  // guarded by mutex_
  std::map<std::string, std::vector<std::shared_ptr<Stream>>, std::less<>>
      replaced_;  // guarded by mutex_
  // Declared last so that it stops first: its actions use the maps above.
  DeadlineTimer deadlines_;
};

}  // namespace slipstream::server
