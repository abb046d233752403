// How a stream's chunk bytes travel: inline on the socket, in shared-memory segments the server
// lends, or (cluster mode) as colocated chunks on a writer's own member. client_stream.cpp keeps
// the stream protocol and step state and calls this seam; docs/architecture.md, "Client".
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "client/client_impl.hpp"
#include "client/connection.hpp"
#include "client/request.hpp"
#include "slipstream/stream.hpp"

namespace slipstream::client {

// A stream segment mapped into this process: writable for its writer, read-only for readers.
// Unmapped when the last piece or cache entry that uses it goes.
struct SegmentMapping {
  SegmentMapping(void* address, std::size_t size) : address(address), size(size) {}
  ~SegmentMapping();
  SegmentMapping(const SegmentMapping&) = delete;
  SegmentMapping& operator=(const SegmentMapping&) = delete;
  std::byte* bytes() const noexcept { return static_cast<std::byte*>(address); }
  void* address;
  std::size_t size;
};

// Chunks whose segments NEXT ... MAP passed, mapped, by chunk id.
using MappedChunks = std::unordered_map<std::int64_t, std::shared_ptr<SegmentMapping>>;

// ---- Writer side --------------------------------------------------------------------------------

// The commands a stream writer queues for its next round trip, and the strings they borrow (long
// arguments are referenced, not copied).
struct PendingCommands {
  PendingCommands(std::string_view stream, std::uint32_t rank) : stream(stream), rank(rank) {}
  std::string_view keep(std::string text) { return owned.emplace_back(std::move(text)); }
  // Starts `command stream rank step` of `argc` arguments in all.
  void start(std::size_t argc, std::string_view command, std::int64_t step);
  void clear();

  std::string_view stream;
  std::uint32_t rank;
  Request request;
  std::size_t count = 0;
  std::deque<std::string> owned;
};

// A chunk as SS.STREAM.PUT, PUTSEG and PUTREF name it; the extents are strings kept in the
// pending commands.
struct ChunkPlace {
  std::string_view component;
  DType dtype;
  std::string_view global, offset, extent;
  // The bytes are a codec frame (an operator's output; src/codec), sent with ENCODED size.
  bool encoded = false;
};

// Where a writer's chunk bytes go, and the segments and memory that hold them until they are
// sent. Chunks go on the socket (PUT, borrowing the caller's bytes), into a segment the stream's
// server lent (PUTSEG), or, when the stream lives on another cluster member, onto this writer's
// own member (SS.CHUNKS.PUT, or one of its segments) and named there with PUTREF. The
// shared-memory paths are a speed-up, never a new way to fail: a chunk that gets no segment goes
// the plain way. Not thread-safe (one writer's state).
class ChunkSender {
 public:
  ChunkSender(Client::Impl& client, std::string_view stream, std::uint32_t rank,
              const StreamWriterOptions& options, PendingCommands& pending)
      : client_(client), stream_(stream), rank_(rank), options_(options), pending_(pending) {}
  ChunkSender(const ChunkSender&) = delete;
  ChunkSender& operator=(const ChunkSender&) = delete;

  // Cluster mode: the member (node id) this writer keeps its chunks on, set before the writer's
  // SS.STREAM.WRITE names it; nothing when chunks go to the stream's shard.
  void colocate_on(std::optional<std::string> member) { member_ = std::move(member); }
  const std::optional<std::string>& member() const noexcept { return member_; }
  // After SS.STREAM.WRITE: notes whether that member is reached over shared memory.
  void attach_member();

  // ---- begin_step
  // Adds SS.STREAM.SEGMENTS to `request` (the BEGIN of `step`) for the sizes the last step put
  // through shared memory, when the stream's shard is reached over it; true when it did.
  bool add_predicted_segments(Request& request, std::int64_t step) const;
  // Reads the reply to that request; what is lent is this step's.
  void read_predicted_segments(Connection& c);
  // True when the BEGIN round trip also asks the member for segments (colocated, over shared
  // memory, and the last step put chunks through segments): a batch of BEGIN and this.
  bool predicts_member_segments() const noexcept;
  void add_predicted_member_segments(Request& request, std::int64_t step) const;
  void read_predicted_member_segments(Connection& c);
  // Forgets the segments lent for another step (a step other than the reserved one is begun, or
  // a BEGIN failed); the server takes them back.
  void forget_lent();
  // The step did not happen: the stream's segments are forgotten, the member's given back.
  void release_loans();

  // ---- put_chunk, loan_chunk
  // Places a chunk of the open `step`: copied into a lent segment, held for end_step, or queued
  // as a PUT borrowing `data` (which must stay valid until end_step).
  void put(std::int64_t step, const ChunkPlace& place, const void* data, std::size_t bytes);
  // Memory for a chunk the caller fills before end_step: a lent segment (asked for now when none
  // of its size was lent with BEGIN), or private memory sent on the socket.
  std::span<std::byte> loan(std::int64_t step, const ChunkPlace& place, std::size_t bytes);
  // Memory to fill that is never sent (the step was aborted); valid until reset().
  std::span<std::byte> private_memory(std::size_t bytes);

  // ---- end_step, in this order: lend_held, store_colocated (when holds_colocated), settle.
  // Copies the chunks held back into segments asked for now (a round trip to the stream's shard,
  // one to the member), queuing their PUTSEG and PUTREF; a chunk that gets no segment
  // is queued as a PUT, or stays held for store_colocated. Member segments lent and not used are
  // freed.
  void lend_held(std::int64_t step);
  bool holds_colocated() const noexcept { return !colocated_.empty(); }
  // Stores the held colocated chunks on the member (one round trip) and queues a PUTREF for each.
  // A refused chunk is thrown (ServerError; ABORTED when the step was dropped) after freeing the
  // ones this call stored; the member's segments lent for the step are then forgotten.
  void store_colocated(std::int64_t step);
  // Remembers the sizes this step put through segments, for the next step's loans.
  void settle();
  // The sizes to ask the stream's shard to lend with END ... NEXT; empty without shared memory.
  std::span<const std::size_t> sizes_to_lend() const;
  // Reads the segments END ... NEXT lent (`reply`, an error or a SEGMENTS reply) for the next step.
  void read_next_lent(Connection& c, const Reply& reply);
  // END succeeded: what it lent is the next step's.
  void keep_next_lent();
  // END found the step aborted: colocated chunks stored for it are freed, its segments forgotten.
  void drop_step();

  // The queued commands were sent or dropped: chunks held and private memory go.
  void reset();

 private:
  // A chunk held back until end_step: put before a segment of its size was lent for the step, or
  // a colocated one.
  struct HeldChunk {
    std::string component;
    DType dtype;
    std::string_view global, offset, extent;  // kept in the pending commands
    bool encoded;
    const void* data;
    std::size_t bytes;
    static HeldChunk of(const ChunkPlace& place, const void* data, std::size_t bytes) {
      return {std::string(place.component), place.dtype, place.global, place.offset, place.extent,
              place.encoded, data, bytes};
    }
    ChunkPlace place() const { return {component, dtype, global, offset, extent, encoded}; }
  };
  // A segment lent for the open step, mapped writable (id: the segment's, or on a member the
  // chunk id it will be).
  struct Lent {
    std::uint64_t id = 0;
    std::shared_ptr<SegmentMapping> mapping;
    bool used = false;
  };

  bool through_shared_memory(std::size_t bytes) const;
  bool through_member_segment(std::size_t bytes) const;
  void start_chunk_command(std::string_view command, std::int64_t step, const ChunkPlace& place);
  void finish_chunk_command(const ChunkPlace& place, std::size_t bytes);
  void add_put(std::int64_t step, const ChunkPlace& place, const void* data, std::size_t bytes);
  void add_segments_request(Request& request, std::int64_t step,
                            std::span<const std::size_t> sizes, bool on_member) const;
  void read_segments(Connection& c, std::span<const std::size_t> sizes);
  std::byte* take_from(std::vector<Lent>& from, bool exact, std::string_view command,
                       std::int64_t step, const ChunkPlace& place, std::size_t bytes);
  std::byte* take_segment(std::int64_t step, const ChunkPlace& place, std::size_t bytes);
  bool put_into_segment(std::int64_t step, const ChunkPlace& place, const void* data,
                        std::size_t bytes);
  void lend_now(std::int64_t step, std::span<const std::size_t> sizes);
  std::string member_limit() const;
  void read_member_segments(Connection& c, std::span<const std::size_t> sizes);
  void member_lend_now(std::int64_t step, std::span<const std::size_t> sizes);
  std::byte* take_member_segment(std::int64_t step, const ChunkPlace& place, std::size_t bytes);
  void give_back_member_lent();
  void free_colocated(std::span<const std::uint64_t> ids);

  Client::Impl& client_;
  std::string_view stream_;
  std::uint32_t rank_;
  const StreamWriterOptions& options_;
  PendingCommands& pending_;

  std::vector<HeldChunk> shm_chunks_;  // put before a segment of their size was lent
  // The segments the stream's server lent this writer, mapped writable, by id.
  std::unordered_map<std::uint64_t, std::shared_ptr<SegmentMapping>> segments_;
  std::vector<Lent> lent_;       // lent for the open step
  std::vector<Lent> next_lent_;  // lent with END ... NEXT for the step reserved
  // Chunks loaned without shared memory: sent on the socket at end_step.
  std::vector<std::unique_ptr<std::byte[]>> private_loans_;
  std::vector<std::size_t> last_sizes_;  // of the chunks the last step put through segments

  // Cluster mode: the member this writer keeps its chunks on, when the stream lives on another.
  std::optional<std::string> member_;
  bool member_shm_ = false;              // member_ reached over shared memory
  std::vector<HeldChunk> colocated_;     // the open step's chunks for member_
  std::vector<Lent> member_lent_;        // lent there for the open step (id: the chunk id)
  std::vector<std::uint64_t> unusable_;  // chunk ids lent there that could not be used
  std::vector<std::uint64_t> stored_;    // chunk ids there the open step's END names
  // The member's segments this writer has mapped, by segment id.
  std::unordered_map<std::uint64_t, std::shared_ptr<SegmentMapping>> member_segments_;
};

// ---- Reader side --------------------------------------------------------------------------------

// A chunk's bytes as a reader got them: mapped (shared) or received, kept alive by `owner`.
struct ReceivedChunk {
  std::span<const std::byte> bytes;
  std::shared_ptr<const void> owner;
  bool shared = false;
};

// One chunk a reader fetches from the step it holds.
struct ChunkToFetch {
  std::int64_t id = 0;        // on the stream's shard
  std::string_view member;    // cluster mode: the member holding it (colocated); empty: none
  std::int64_t id_there = 0;  // its id on that member
  std::size_t bytes = 0;
  std::string_view component;  // its component's name, for messages
};

// How a reader gets chunk bytes: the chunks NEXT ... MAP passed, mapped; the others asked for in
// one round trip (SS.STREAM.GET inline, SS.STREAM.VIEW as segment descriptors, a member's
// SS.CHUNKS.GET or SS.CHUNKS.VIEW). Keeps the mappings of writer segments across steps. Not
// thread-safe (one reader's state).
class ChunkFetcher {
 public:
  ChunkFetcher(Client::Impl& client, std::string_view stream, std::string_view group,
               std::uint32_t rank)
      : client_(client), stream_(stream), group_(group), rank_(rank) {}
  ChunkFetcher(const ChunkFetcher&) = delete;
  ChunkFetcher& operator=(const ChunkFetcher&) = delete;

  // A new step: mappings not used in the last few steps go; their ids are taken by take_dropped.
  void next_step();
  // The NEXT for the step was refused before the server acted on it: asked again, the next
  // next_step() counts the same step, and `dropped` is told again.
  void retry_step(std::span<const std::uint64_t> dropped);
  // The segment ids unmapped since the last call, for NEXT ... MAP CACHED DROPPED.
  std::vector<std::uint64_t> take_dropped() { return std::exchange(dropped_, {}); }
  // The stream's queue limit, as NEXT ... MAP tells it: how long a mapping is worth keeping.
  void set_queue_limit(std::int64_t limit);
  // Reads NEXT ... MAP's entries ([chunk id, segment, bytes, passed]...; descriptors of those
  // passed come in order) into the chunks mapped, by chunk id.
  MappedChunks map_step_segments(Connection& c, const Reply& entries);
  // The bytes of each of `wanted` in step `step`, in order: from `mapped`, else asked for.
  std::vector<ReceivedChunk> fetch(std::int64_t step, const MappedChunks& mapped,
                                   std::span<const ChunkToFetch> wanted);

 private:
  struct CachedSegment {
    std::shared_ptr<SegmentMapping> mapping;
    std::uint64_t last_step = 0;
  };
  std::shared_ptr<SegmentMapping> cached_mapping(std::uint64_t id, std::size_t size);
  std::shared_ptr<SegmentMapping> map_passed(Connection& c, std::uint64_t id, std::size_t size);

  static constexpr std::uint64_t kSegmentCacheSteps = 4, kSegmentCacheStepsMax = 1024;
  Client::Impl& client_;
  std::string stream_, group_;
  std::uint32_t rank_;
  std::uint64_t cache_steps_ = kSegmentCacheSteps;
  std::unordered_map<std::uint64_t, CachedSegment> segments_;
  std::vector<std::uint64_t> dropped_;  // unmapped since the last NEXT ... MAP CACHED
  std::uint64_t steps_seen_ = 0;
};

}  // namespace slipstream::client
