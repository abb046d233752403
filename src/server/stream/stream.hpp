// One stream on the server: its StepQueue, the connection each writer and reader rank is bound
// to, the bytes and attributes of the steps it holds, and the requests parked on it. The queue
// rules themselves are StepQueue's (src/stream/step_queue.hpp); this class adds what a server
// needs around them.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "server/stream/segment_pool.hpp"
#include "server/stream/stream_data.hpp"
#include "stream/step_queue.hpp"

namespace slipstream::server {

class Keyspace;
class ReplyBuffer;
class Session;
class Stream;

/// SS.STREAM.WRITE's options (FIRST-STEP-PRECIOUS is config.first_step_precious); every writer
/// of a stream must give the same.
struct WriterOptions {
  stream::StreamConfig config;
  std::int64_t step_timeout_ms = 0;  ///< 0: no limit
};

/// SS.STREAM.JOIN's options (DISTRIBUTION is config.distribution); every reader of a group must
/// give the same size, policy, strategy and distribution.
struct JoinOptions {
  stream::GroupConfig config;
  std::string strategy;  ///< canonical (lower-case) ChunkStrategy name
};

/// SS.STREAM.PUT's (or PUTSEG's) arguments, validated for syntax.
struct PutRequest {
  std::string component;
  DType dtype = DType::kFloat32;
  std::vector<std::uint64_t> global_extent, offset, extent;
  Buffer bytes;               ///< the chunk's bytes (PUT)
  std::uint64_t segment = 0;  ///< or the segment the writer filled with them (PUTSEG); 0: none
  std::uint64_t remote = 0;   ///< or their id on the writer's chunk shard (PUTREF); 0: none
  /// ENCODED size: the bytes are a codec frame of this many bytes (src/codec), which the server
  /// stores as they are and never decodes; 0: the raw elements.
  std::uint64_t encoded = 0;
};

/// A cluster member holding colocated chunks: its index in the member list and its node id.
struct ChunkNode {
  std::size_t index = 0;
  std::string id;
};

/// What a stream asks other members to free once its lock is released (cluster mode).
struct RemoteWork {
  /// Chunk ids to free (SS.CHUNKS.FREE), by member index.
  std::map<std::size_t, std::vector<std::uint64_t>> frees;
  /// A failed writer's aborted steps, whose chunks its member must drop (SS.CHUNKS.DROP).
  struct Drop {
    std::size_t node = 0;
    std::uint32_t rank = 0;
    std::vector<std::int64_t> steps;
  };
  std::vector<Drop> drops;
  bool empty() const noexcept { return frees.empty() && drops.empty(); }
};


using RankNames = std::vector<std::pair<std::uint32_t, std::string>>;

/// What SS.STREAM.NEXT hands a reader, copied out of the stream so that the reply can be written
/// after the lock is released. For kStep everything is filled; kSkipped has step and reason.
struct StepDelivery {
  stream::Delivery::Kind kind = stream::Delivery::Kind::kWait;
  std::int64_t step = -1;
  std::string reason;
  RankNames readers;  ///< the group's readers for this step; index = strategy rank
  RankNames writers;
  std::string strategy;
  std::vector<Attribute> attributes;      ///< stream level first, then the step's
  std::vector<ComponentData> components;  ///< chunk tables, no bytes
  /// By chunk id: the writer segment holding the chunk, or null (heap bytes).
  std::vector<std::shared_ptr<ShmWriterSegment>> segments;
  /// By chunk id: where a colocated chunk is (node id, id there); an empty node id: here.
  std::vector<std::pair<std::string, std::uint64_t>> remote;
  /// The stream's queue limit: a writer's segment comes back at most this many steps later
  /// (plus one in cluster mode), so readers keep their mappings that long.
  std::size_t queue_limit = 0;
};

using ReplyWriter = std::function<void(ReplyBuffer&)>;

/// A request parked on a stream: SS.STREAM.BEGIN waiting for a slot, SS.STREAM.NEXT waiting for
/// a step.
struct ParkedRequest {
  std::weak_ptr<Session> session;
  /// Runs with the stream locked each time it changes: nullopt while the request must still
  /// wait, else its reply (an error reply included). Must not throw.
  std::function<std::optional<ReplyWriter>(Stream&)> retry;
};

/// Figures for SS.STREAM.INFO.
struct StreamInfo {
  struct Group {
    std::string name, policy, strategy;
    std::string distribution;  ///< all, round_robin or on_demand
    std::uint32_t size = 0;
    stream::GroupStats stats;
  };
  std::uint32_t writers = 0;  ///< 0 while no writer has attached
  std::size_t writers_attached = 0;
  std::size_t queue_limit = 0;
  std::size_t bytes_held = 0;
  std::size_t segment_bytes = 0;
  std::uint64_t segments = 0;       ///< writer segments lent or kept for the next steps
  std::uint64_t segments_made = 0;  ///< over the stream's life
  stream::QueueStats queue;
  bool ended = false;
  /// An ended run kept for late joiners: milliseconds until it is forgotten; -1 otherwise.
  std::int64_t kept_ms = -1;
  /// The chunk bytes of the precious first step kept (queue.precious_step; 0 when none).
  std::size_t precious_bytes = 0;
  std::vector<Group> groups;
};

/// One incarnation of a stream.
///
/// Thread safety: every member function requires mutex() to be held (StreamRegistry takes it);
/// none blocks. Member functions that refuse a request throw StreamError, or QueueError /
/// StrategyError from the stream library, and leave the stream as it was.
///
/// Binding: a writer rank belongs to the connection (session id) that attached it, a reader
/// (group, rank) to the one that joined it, until CLOSE / LEAVE or the connection closes;
/// requests for a bound rank from another connection are refused.
class Stream : public std::enable_shared_from_this<Stream> {
 public:
  /// `keyspace`: what the stream's metadata (attributes, chunk tables, host and group names) is
  /// counted against (--maxmemory); null: not counted (tests of the stream alone).
  explicit Stream(std::string name, Keyspace* keyspace = nullptr)
      : name_(std::move(name)), keyspace_(keyspace) {}
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  std::mutex& mutex() noexcept { return mutex_; }
  const std::string& name() const noexcept { return name_; }

  // ---- Writers ------------------------------------------------------------------------------
  /// True once a writer has attached (the StepQueue exists); before that readers may join and
  /// wait ("awaiting writers").
  bool has_writers() const noexcept { return queue_.has_value(); }
  /// True once no more steps will come (StepQueue::ended()).
  bool ended() const noexcept { return queue_ && queue_->ended(); }
  bool writer_bound(std::uint32_t rank) const { return writer_sessions_.count(rank) > 0; }
  bool writer_bound_to(std::uint32_t rank, std::uint64_t session) const;
  /// Binds writer `rank` to `session`; the first writer creates the StepQueue from `options`.
  void attach_writer(std::uint32_t rank, const WriterOptions& options, std::string hostname,
                     std::uint64_t session);
  /// StepQueue::begin: true once the step has a slot, false while the writer must wait.
  bool begin(std::uint32_t rank, std::int64_t step, std::uint64_t session);
  /// Cluster mode: writer `rank` stores its chunks on member `node` (SS.CHUNKS.PUT there) and
  /// names them here with PUTREF.
  void set_chunk_node(std::uint32_t rank, ChunkNode node, std::uint64_t session);
  /// Stores a chunk of a step the writer has begun and not ended; its bytes are counted against
  /// --maxmemory through `keyspace` (StreamOutOfMemory when they do not fit). A PUTREF chunk
  /// (request.remote) is held by the writer's chunk node and costs nothing here.
  void put(std::uint32_t rank, std::int64_t step, PutRequest request, std::uint64_t session,
           Keyspace& keyspace);
  /// Lends writer `rank` segments for the chunks of `step`, which it has begun and not ended
  /// (SegmentPool::lend).
  std::vector<SegmentPool::Lent> lend_segments(std::uint32_t rank, std::int64_t step,
                                               std::span<const std::size_t> sizes,
                                               std::uint64_t session,
                                               const SegmentPool::Create& create,
                                               std::vector<std::uint64_t>* dropped);
  /// StepQueue::reserve of `step` for writer `rank` (at its END of the step before), and, when
  /// reserved and `sizes` is not empty, segments lent for it as lend_segments does. False when
  /// no slot is free now or the step cannot be begun (nothing reserved, nothing lent). The
  /// step's timeout starts when a writer uses it (a chunk, attribute or end), not before.
  bool reserve(std::uint32_t rank, std::int64_t step, std::span<const std::size_t> sizes,
               std::uint64_t session, const SegmentPool::Create* create,
               std::vector<SegmentPool::Lent>* lent, std::vector<std::uint64_t>* dropped);
  /// Sets a stream-level (attribute.step == -1) or step attribute; last write wins.
  void set_attribute(std::uint32_t rank, Attribute attribute, std::uint64_t session);
  /// Ends the step for the writer; refused (once) after refuse() for it.
  void end(std::uint32_t rank, std::int64_t step, std::uint64_t session);
  /// A chunk or attribute writer `rank` sent for `step` was refused: its next END of the step is
  /// refused too, so that an END pipelined behind the puts never makes a step visible without
  /// one of them. Nothing happens when the writer has no such open step.
  void refuse(std::uint32_t rank, std::int64_t step);
  /// The writer is done: StepQueue::close_writer, and the rank is unbound. `open`: the step the
  /// writer closes inside (it began it, perhaps on a reservation, and did not end it), aborted;
  /// without it a reservation is withdrawn (a writer reserves its next step at each END).
  void close_writer(std::uint32_t rank, std::uint64_t session,
                    std::optional<std::int64_t> open = std::nullopt);
  /// The step timeout: aborts `step` if it is still held and incomplete.
  void expire_step(std::int64_t step);

  // ---- Readers ------------------------------------------------------------------------------
  bool reader_bound_to(const std::string& group, std::uint32_t rank, std::uint64_t session) const;
  void join(const std::string& group, std::uint32_t rank, const JoinOptions& options,
            std::string hostname, std::uint64_t session);
  /// StepQueue::next; nullopt while the reader must wait.
  std::optional<StepDelivery> next(const std::string& group, std::uint32_t rank,
                                   std::uint64_t session);
  /// The bytes of chunks `ids` of `step`, which the reader must hold.
  std::vector<ChunkBytes> get(const std::string& group, std::uint32_t rank,
                                                 std::int64_t step,
                                                 const std::vector<std::uint64_t>& ids,
                                                 std::uint64_t session);
  void release(const std::string& group, std::uint32_t rank, std::int64_t step,
               std::uint64_t session);
  void leave(const std::string& group, std::uint32_t rank, std::uint64_t session);

  // ---- Connections and parked requests -------------------------------------------------------
  /// True the first time for `session`: its connection then needs a close hook that calls
  /// session_closed().
  bool needs_close_hook(std::uint64_t session) { return hooked_sessions_.insert(session).second; }
  /// The I/O thread this stream's shared-memory connections share: the first one's to bind a
  /// rank (`candidate`), kept from then on.
  unsigned home_io_thread(unsigned candidate) {
    if (!home_io_thread_) home_io_thread_ = candidate;
    return *home_io_thread_;
  }
  /// The connection closed: its writers fail (their open steps are aborted), its readers leave.
  void session_closed(std::uint64_t session);
  /// SS.STREAM.DELETE / FLUSHALL: every step, chunk, segment and attribute goes now (their memory
  /// with them; chunks of other members are freed through take_remote_work), parked requests are
  /// answered with an error, and nobody is bound to it any more. The registry forgets it.
  void erase();
  void park(std::shared_ptr<ParkedRequest> request) { parked_.push_back(std::move(request)); }
  /// Takes `request` off the stream; false when it was no longer parked (already answered).
  bool withdraw(const ParkedRequest* request);
  /// Call after every change: drops the data of the steps the queue freed and answers the
  /// parked requests that may now go on. Returns the steps begun since the last call that need
  /// a timeout, with it.
  std::vector<std::pair<std::int64_t, std::chrono::milliseconds>> settle();
  /// What other members must be told since the last call (chunks of freed steps, a failed
  /// writer's aborted steps).
  RemoteWork take_remote_work() { return std::exchange(remote_work_, {}); }

  // ---- Introspection -------------------------------------------------------------------------
  using Clock = std::chrono::steady_clock;
  /// How long a run that has ended is remembered once idle, so that a group joining late is given
  /// its end (after the steps it can still read) instead of an empty stream that never ends.
  static constexpr std::chrono::seconds kEndedRunKept{60};
  /// True when no rank is bound, nothing is parked, and either no writer ever attached or it has
  /// ended with every step freed (but a precious first step no group holds, which goes with the
  /// stream).
  bool idle() const;
  /// True when the stream may be forgotten at `now`: idle, and either no writer ever attached or
  /// it is an ended run idle for kEndedRunKept. The first call that finds an ended run idle starts
  /// that time and sets `*recheck` to when it passes.
  bool forgettable(Clock::time_point now, std::optional<Clock::time_point>* recheck);
  /// An ended run kept only for late joiners (idle, its time started): not counted as live.
  bool kept_ended() const { return kept_until_.has_value() && idle(); }
  /// True while a rank is bound to it or a request is parked on it: someone may still reach it.
  bool reachable() const;
  /// True when it ended because writers failed and nobody is bound to it any more: what it still
  /// holds belongs to a dead run that nobody will read, and a new run under its name replaces it.
  /// (A stream whose writers all closed keeps its last steps for readers that come late.)
  bool stale() const;
  StreamInfo info() const;
  std::size_t bytes_held() const noexcept { return bytes_held_; }
  /// Bytes of the segments lent to writers (in use by held steps, or free for the next ones).
  std::size_t segment_bytes() const noexcept { return segments_.bytes(); }
  std::size_t steps_held() const noexcept { return step_data_.size(); }
  std::size_t parked() const noexcept { return parked_.size(); }

 private:
  struct GroupData {
    JoinOptions options;
    stream::RankTable hostnames;  // every reader that joined
  };
  using ReaderKey = std::pair<std::string, std::uint32_t>;

  void check_writer(std::uint32_t rank, std::uint64_t session) const;
  void check_reader(const ReaderKey& reader, std::uint64_t session) const;
  StepData& open_step(std::uint32_t rank, std::int64_t step);
  // Writer `rank` uses `step`: its reservation (if any) is confirmed, and the step's timeout
  // starts if it has not yet.
  void use_reservation(std::uint32_t rank, std::int64_t step, StepData& data);
  // Takes back the step writer `rank` reserved and has not used, if any (StepQueue::withdraw):
  // when it closes outside a step.
  void withdraw_reservation(std::uint32_t rank);
  // Makes the step writer `rank` reserved and has not used, if any, an ordinary begun step
  // (StepQueue::confirm): when it fails, or closes inside that step, so the step is aborted.
  void confirm_reservation(std::uint32_t rank);
  // `with_stream_attributes`: the stream-level attributes go with the step (the reader has not
  // seen them as they are now); else only the step's.
  StepDelivery make_delivery(const std::string& group, const stream::Delivery& delivery,
                             bool with_stream_attributes) const;
  void fail_writer(std::uint32_t rank);
  // Aborted steps, so that a surviving writer still busy with one is told so (StreamAborted)
  // rather than refused as if it had misbehaved. The most recent kAbortedRemembered are kept.
  void remember_aborted(std::int64_t step, const std::string& reason);
  void check_not_aborted(std::int64_t step) const;
  static constexpr std::size_t kAbortedRemembered = 64;
  void drop_freed();
  // The steps' worth of segments a writer keeps: the queue limit, and one more while a precious
  // first step holds its segments for good.
  std::size_t segment_steps() const {
    return options_->config.queue_limit + (queue_ && queue_->precious_step() ? 1 : 0);
  }

  std::mutex mutex_;
  const std::string name_;
  std::optional<WriterOptions> options_;
  std::optional<stream::StepQueue> queue_;
  // Joins that came before the first writer; applied when the queue is created.
  std::vector<std::pair<ReaderKey, stream::GroupConfig>> pending_joins_;
  stream::RankTable writer_hosts_;
  std::set<std::uint32_t> departed_writers_;  // closed or failed
  std::set<std::uint32_t> failed_writers_;    // failed (connection closed, no CLOSE)
  std::map<std::int64_t, std::string> aborted_;  // recently aborted steps, with the reason
  std::map<std::uint32_t, std::uint64_t> writer_sessions_;
  std::map<std::uint32_t, ChunkNode> chunk_nodes_;  // writers whose chunks are colocated
  RemoteWork remote_work_;
  std::map<std::string, GroupData> groups_;
  std::map<ReaderKey, std::uint64_t> reader_sessions_;
  std::map<ReaderKey, std::int64_t> holding_;  // step each reader was handed and holds
  // The version of the stream-level attributes each reader was last handed (none: not yet). A
  // reader gets them with its first step and again only when they change (their version then
  // grows): its client keeps them and shows them with every step.
  std::map<ReaderKey, std::uint64_t> stream_attributes_seen_;
  std::uint64_t stream_attributes_version_ = 0;
  std::set<std::uint64_t> hooked_sessions_;
  std::optional<unsigned> home_io_thread_;
  // Counts `bytes` of metadata (`what`, for the error) against --maxmemory into `into`; throws
  // StreamOutOfMemory (nothing counted) when they do not fit.
  void count_metadata(MemoryReservation& into, std::size_t bytes, const std::string& what);
  // Sets `attribute` in `list`, counting it into `counted` (a replaced value is given back).
  void store_attribute(AttributeList& list, MemoryReservation& counted, Attribute attribute);

  Keyspace* const keyspace_;
  // Stream-level attributes, and the host and group names of every writer and reader that ever
  // attached, counted against --maxmemory for the stream's life.
  AttributeList stream_attributes_;
  MemoryReservation metadata_;
  std::map<std::int64_t, StepData> step_data_;  // held steps
  std::size_t bytes_held_ = 0;
  SegmentPool segments_;
  std::list<std::shared_ptr<ParkedRequest>> parked_;
  std::vector<std::pair<std::int64_t, std::chrono::milliseconds>> new_deadlines_;
  std::optional<Clock::time_point> kept_until_;  // an ended run: forgotten at this time
};

}  // namespace slipstream::server
