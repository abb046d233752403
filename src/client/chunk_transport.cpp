// How a stream's chunk bytes travel (chunk_transport.hpp): a writer's segments, held chunks,
// private loans and colocated chunks; a reader's fetches and its cache of segment mappings.
#include "client/chunk_transport.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "client/server_errors.hpp"

namespace slipstream::client {
namespace {

// Maps a passed segment descriptor and closes it; null when the kernel refuses.
std::shared_ptr<SegmentMapping> map_segment(int fd, std::size_t size, bool writable) {
  void* address =
      ::mmap(nullptr, size, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (address == MAP_FAILED) return nullptr;
  return std::make_shared<SegmentMapping>(address, size);
}

// A segment a writer was lent, mapped writable (null when it could not be), with the chunk id
// that comes with it from SS.CHUNKS.SEGMENTS.
struct LentSegment {
  std::uint64_t segment = 0, chunk = 0;
  std::shared_ptr<SegmentMapping> mapping;
};

// Reads an SS.STREAM.SEGMENTS reply ([[segment, fresh, bytes]...], [dropped...]) or,
// `with_chunks`, an SS.CHUNKS.SEGMENTS one ([[chunk, segment, fresh]...], [dropped...]): one entry
// per size, fresh segments mapped whole (their descriptors come in order; a stream's segment may
// be larger than the size asked for, SS.CHUNKS' are that size) and added to `mapped`, dropped
// ones removed from it. An error reply lends nothing.
std::vector<LentSegment> parse_lent_segments(
    Connection& c, const Reply& reply, std::span<const std::size_t> sizes, bool with_chunks,
    std::unordered_map<std::uint64_t, std::shared_ptr<SegmentMapping>>& mapped) {
  if (reply.is_error()) return {};
  const std::size_t width = 3;
  if (!reply.is_array() || reply.elements.size() != 2 ||
      reply.elements[0].elements.size() != sizes.size()) {
    c.protocol_error("malformed SEGMENTS reply");
  }
  std::vector<LentSegment> out;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const Reply& entry = reply.elements[0].elements[i];
    if (entry.elements.size() != width) c.protocol_error("malformed SEGMENTS reply");
    const std::size_t first = with_chunks ? 1 : 0;  // the segment id's index
    LentSegment one;
    if (with_chunks) one.chunk = static_cast<std::uint64_t>(entry.elements[0].integer);
    one.segment = static_cast<std::uint64_t>(entry.elements[first].integer);
    const std::int64_t bytes =
        with_chunks ? static_cast<std::int64_t>(sizes[i]) : entry.elements[2].integer;
    if (bytes < 0 || static_cast<std::uint64_t>(bytes) < sizes[i]) {
      c.protocol_error("malformed SEGMENTS reply: a segment smaller than its chunk");
    }
    if (entry.elements[first + 1].integer != 0) {
      one.mapping = map_segment(c.take_fd(), static_cast<std::size_t>(bytes), /*writable=*/true);
      if (one.mapping) mapped[one.segment] = one.mapping;
    } else if (auto known = mapped.find(one.segment); known != mapped.end()) {
      one.mapping = known->second;
    }
    if (one.mapping && one.mapping->size != static_cast<std::size_t>(bytes)) one.mapping = nullptr;
    out.push_back(std::move(one));
  }
  for (const Reply& id : reply.elements[1].elements) {
    mapped.erase(static_cast<std::uint64_t>(id.integer));
  }
  return out;
}

}  // namespace

SegmentMapping::~SegmentMapping() { ::munmap(address, size); }

void PendingCommands::start(std::size_t argc, std::string_view command, std::int64_t step) {
  request.command(argc);
  request.arg(command);
  request.arg(stream);
  request.arg(static_cast<std::int64_t>(rank));
  request.arg(step);
  ++count;
}

void PendingCommands::clear() {
  request = Request();
  count = 0;
  owned.clear();
}

// ---- ChunkSender: the stream's shard ------------------------------------------------------------

void ChunkSender::attach_member() {
  member_shm_ = member_ && client_.member_shared_memory(*member_);
}

bool ChunkSender::through_shared_memory(std::size_t bytes) const {
  return client_.shm_link().active() && bytes > 0 && bytes >= options_.shared_memory_min_bytes;
}

bool ChunkSender::through_member_segment(std::size_t bytes) const {
  return member_shm_ && bytes > 0 && bytes >= options_.shared_memory_min_bytes;
}

// Queues `command stream rank step component dtype global offset extent` and one more argument,
// which the caller adds: the bytes (PUT), a segment id (PUTSEG) or a chunk id (PUTREF); then
// finish_chunk_command.
void ChunkSender::start_chunk_command(std::string_view command, std::int64_t step,
                                      const ChunkPlace& place) {
  pending_.start(place.encoded ? 12 : 10, command, step);
  pending_.request.arg(pending_.keep(std::string(place.component)));
  pending_.request.arg(dtype_name(place.dtype));
  pending_.request.arg(place.global);
  pending_.request.arg(place.offset);
  pending_.request.arg(place.extent);
}

// An encoded chunk's command ends with ENCODED and its frame's size.
void ChunkSender::finish_chunk_command(const ChunkPlace& place, std::size_t bytes) {
  if (!place.encoded) return;
  pending_.request.arg("ENCODED");
  pending_.request.arg(static_cast<std::int64_t>(bytes));
}

void ChunkSender::add_put(std::int64_t step, const ChunkPlace& place, const void* data,
                          std::size_t bytes) {
  start_chunk_command("SS.STREAM.PUT", step, place);
  pending_.request.arg_borrowed(data, bytes);
  finish_chunk_command(place, bytes);
}

// Segments of `sizes` for `step`: SS.STREAM.SEGMENTS from the stream's shard, or (`on_member`)
// SS.CHUNKS.SEGMENTS from the member, with the window it keeps for this writer.
void ChunkSender::add_segments_request(Request& request, std::int64_t step,
                                       std::span<const std::size_t> sizes, bool on_member) const {
  request.command((on_member ? 5 : 4) + sizes.size());
  request.arg(on_member ? "SS.CHUNKS.SEGMENTS" : "SS.STREAM.SEGMENTS");
  request.arg(stream_);
  request.arg(static_cast<std::int64_t>(rank_));
  request.arg(step);
  if (on_member) request.arg(member_limit());
  for (std::size_t size : sizes) request.arg(static_cast<std::int64_t>(size));
}

// Reads a SEGMENTS reply into `lent_`, mapping fresh segments (and forgetting dropped ones).
// An error reply (pool full, out of memory, the step not begun) lends nothing.
void ChunkSender::read_segments(Connection& c, std::span<const std::size_t> sizes) {
  for (const LentSegment& one : parse_lent_segments(c, c.read_reply(), sizes, false, segments_)) {
    if (one.mapping) lent_.push_back(Lent{one.segment, one.mapping, false});
  }
}

// Takes an unused segment from `from` for a chunk of `bytes` bytes (`exact`: of that size; else
// the smallest that holds it) and queues `command` (PUTSEG: the segment id; PUTREF: the chunk id)
// naming it; returns the segment's writable bytes, or null when none fits.
std::byte* ChunkSender::take_from(std::vector<Lent>& from, bool exact, std::string_view command,
                                  std::int64_t step, const ChunkPlace& place, std::size_t bytes) {
  auto free = from.end();
  for (auto l = from.begin(); l != from.end(); ++l) {
    const std::size_t size = l->mapping->size;
    if (l->used || size < bytes || (exact && size != bytes)) continue;
    if (free == from.end() || size < free->mapping->size) free = l;
  }
  if (free == from.end()) return nullptr;
  free->used = true;
  start_chunk_command(command, step, place);
  pending_.request.arg(static_cast<std::int64_t>(free->id));
  finish_chunk_command(place, bytes);
  return free->mapping->bytes();
}

std::byte* ChunkSender::take_segment(std::int64_t step, const ChunkPlace& place,
                                     std::size_t bytes) {
  return take_from(lent_, /*exact=*/false, "SS.STREAM.PUTSEG", step, place, bytes);
}

// Copies a chunk into an unused lent segment of its size (take_segment); false when there is
// none.
bool ChunkSender::put_into_segment(std::int64_t step, const ChunkPlace& place, const void* data,
                                   std::size_t bytes) {
  std::byte* into = take_segment(step, place, bytes);
  if (into == nullptr) return false;
  std::memcpy(into, data, bytes);
  return true;
}

// Asks for segments of `sizes` for `step` now (one round trip); those lent join `lent_`.
void ChunkSender::lend_now(std::int64_t step, std::span<const std::size_t> sizes) {
  Request request;
  add_segments_request(request, step, sizes, /*on_member=*/false);
  try {
    client_.exchange(stream_, request, [&](Connection& c) { read_segments(c, sizes); });
  } catch (const ServerError&) {  // pool full, out of memory: the socket it is
  }
}

bool ChunkSender::add_predicted_segments(Request& request, std::int64_t step) const {
  // Segments for chunks of the sizes the last step put through shared memory, asked for in the
  // same round trip (the server takes them once the step has its slot), so that put_chunk can
  // copy straight into them.
  const bool predict = client_.shm_link().active() && !last_sizes_.empty();
  if (predict) add_segments_request(request, step, last_sizes_, /*on_member=*/false);
  return predict;
}

void ChunkSender::read_predicted_segments(Connection& c) { read_segments(c, last_sizes_); }

// ---- ChunkSender: colocated chunks (cluster mode) -----------------------------------------------
// Through shared memory when this writer is on its member's node: segments lent there for the
// open step, each with the chunk id it will be.

// The window the member keeps for this writer: the queue limit, plus the step whose segments are
// asked for alongside BEGIN (before the stream's shard has given it a slot).
std::string ChunkSender::member_limit() const { return std::to_string(options_.queue_limit + 1); }

// Reads an SS.CHUNKS.SEGMENTS reply into member_lent_, mapping fresh segments (a chunk id whose
// segment cannot be used is freed at end_step). An error reply lends nothing.
void ChunkSender::read_member_segments(Connection& c, std::span<const std::size_t> sizes) {
  for (const LentSegment& one :
       parse_lent_segments(c, c.read_reply(), sizes, true, member_segments_)) {
    if (one.mapping) {
      member_lent_.push_back(Lent{one.chunk, one.mapping, false});
    } else {
      unusable_.push_back(one.chunk);
    }
  }
}

// Asks the member for segments of `sizes` for `step` now (one round trip).
void ChunkSender::member_lend_now(std::int64_t step, std::span<const std::size_t> sizes) {
  Request request;
  add_segments_request(request, step, sizes, /*on_member=*/true);
  try {
    client_.exchange(Route::any(), request, [&](Connection& c) { read_member_segments(c, sizes); });
  } catch (const ServerError&) {  // pool full, out of memory: the socket it is
  }
}

std::byte* ChunkSender::take_member_segment(std::int64_t step, const ChunkPlace& place,
                                            std::size_t bytes) {
  return take_from(member_lent_, /*exact=*/true, "SS.STREAM.PUTREF", step, place, bytes);
}

bool ChunkSender::predicts_member_segments() const noexcept {
  return member_shm_ && !last_sizes_.empty();
}

void ChunkSender::add_predicted_member_segments(Request& request, std::int64_t step) const {
  add_segments_request(request, step, last_sizes_, /*on_member=*/true);
}

void ChunkSender::read_predicted_member_segments(Connection& c) {
  read_member_segments(c, last_sizes_);
}

// The member's segments lent for a step no END will name them in: their chunk ids are freed.
void ChunkSender::give_back_member_lent() {
  for (const Lent& l : member_lent_) unusable_.push_back(l.id);
  member_lent_.clear();
  free_colocated(std::exchange(unusable_, {}));
}

// Frees colocated chunks no step will name (best effort: the shard's bound frees them too).
void ChunkSender::free_colocated(std::span<const std::uint64_t> ids) {
  if (ids.empty()) return;
  Request request;
  request.command(1 + ids.size());
  request.arg("SS.CHUNKS.FREE");
  for (std::uint64_t id : ids) request.arg(static_cast<std::int64_t>(id));
  try {
    client_.exchange(Route::any(), request, [](Connection& c) { c.read_reply(); });
  } catch (const Error&) {
  }
}

void ChunkSender::store_colocated(std::int64_t step) {
  try {
    Request request;
    const std::string limit = member_limit();
    for (const HeldChunk& chunk : colocated_) {
      request.command(6);
      request.arg("SS.CHUNKS.PUT");
      request.arg(stream_);
      request.arg(static_cast<std::int64_t>(rank_));
      request.arg(step);
      request.arg(limit);
      request.arg_borrowed(chunk.data, chunk.bytes);
    }
    std::vector<std::uint64_t> ids;
    std::string refused;
    client_.exchange(Route::any(), request, [&](Connection& c) {
      for (std::size_t i = 0; i < colocated_.size(); ++i) {
        Reply reply = c.read_reply();
        if (reply.is_integer() && reply.integer > 0) {
          ids.push_back(static_cast<std::uint64_t>(reply.integer));
        } else if (reply.is_error()) {
          if (refused.empty()) refused = reply.string;
        } else {
          c.protocol_error("malformed SS.CHUNKS.PUT reply");
        }
      }
    });
    if (!refused.empty()) {
      free_colocated(ids);
      throw_server_error(refused, "SS.CHUNKS.PUT");
    }
    for (std::size_t i = 0; i < colocated_.size(); ++i) {
      start_chunk_command("SS.STREAM.PUTREF", step, colocated_[i].place());
      pending_.request.arg(static_cast<std::int64_t>(ids[i]));
      finish_chunk_command(colocated_[i].place(), colocated_[i].bytes);
    }
    stored_.insert(stored_.end(), ids.begin(), ids.end());
  } catch (const ServerError&) {
    member_lent_.clear();
    throw;
  }
}

// ---- ChunkSender: the writer's calls ------------------------------------------------------------

void ChunkSender::forget_lent() {
  lent_.clear();
  member_lent_.clear();
}

void ChunkSender::release_loans() {
  lent_.clear();
  give_back_member_lent();
}

void ChunkSender::put(std::int64_t step, const ChunkPlace& place, const void* data,
                      std::size_t bytes) {
  if (member_) {
    std::byte* into =
        through_member_segment(bytes) ? take_member_segment(step, place, bytes) : nullptr;
    if (into != nullptr) {
      std::memcpy(into, data, bytes);
    } else {
      colocated_.push_back(HeldChunk::of(place, data, bytes));
    }
    return;
  }
  if (through_shared_memory(bytes)) {
    if (!put_into_segment(step, place, data, bytes)) {
      shm_chunks_.push_back(HeldChunk::of(place, data, bytes));
    }
    return;
  }
  add_put(step, place, data, bytes);
}

std::span<std::byte> ChunkSender::loan(std::int64_t step, const ChunkPlace& place,
                                       std::size_t bytes) {
  if (through_shared_memory(bytes)) {
    std::byte* into = take_segment(step, place, bytes);
    if (into == nullptr) {  // no segment of this size lent with BEGIN: ask for one now
      const std::size_t sizes[] = {bytes};
      lend_now(step, sizes);
      into = take_segment(step, place, bytes);
    }
    if (into != nullptr) return {into, bytes};
  }
  if (through_member_segment(bytes)) {
    std::byte* into = take_member_segment(step, place, bytes);
    if (into == nullptr) {  // none of this size lent with BEGIN: ask for one now
      const std::size_t sizes[] = {bytes};
      member_lend_now(step, sizes);
      into = take_member_segment(step, place, bytes);
    }
    if (into != nullptr) return {into, bytes};
  }
  // Private memory, sent on the socket at end_step.
  const std::span<std::byte> memory = private_memory(bytes);
  if (member_) {
    colocated_.push_back(HeldChunk::of(place, memory.data(), bytes));
    return memory;
  }
  add_put(step, place, memory.data(), bytes);
  return memory;
}

std::span<std::byte> ChunkSender::private_memory(std::size_t bytes) {
  auto& memory = private_loans_.emplace_back(std::make_unique_for_overwrite<std::byte[]>(bytes));
  return {memory.get(), bytes};
}

void ChunkSender::lend_held(std::int64_t step) {
  stored_.clear();
  next_lent_.clear();
  // Segments for the chunks put before any of their size was lent, copied in, PUTSEG queued. A
  // chunk that gets no segment is queued as a plain PUT.
  if (!shm_chunks_.empty()) {
    std::vector<std::size_t> sizes;
    for (const HeldChunk& chunk : shm_chunks_) sizes.push_back(chunk.bytes);
    lend_now(step, sizes);
    for (const HeldChunk& chunk : shm_chunks_) {
      if (!put_into_segment(step, chunk.place(), chunk.data, chunk.bytes)) {
        add_put(step, chunk.place(), chunk.data, chunk.bytes);
      }
    }
    shm_chunks_.clear();
  }
  // Colocated, over shared memory: segments for the chunks held back, copied in; what gets none
  // stays held for SS.CHUNKS.PUT.
  if (member_shm_ && !colocated_.empty()) {
    std::vector<std::size_t> sizes;
    for (const HeldChunk& chunk : colocated_) {
      if (chunk.bytes >= options_.shared_memory_min_bytes && chunk.bytes > 0) {
        sizes.push_back(chunk.bytes);
      }
    }
    if (!sizes.empty()) member_lend_now(step, sizes);
    std::erase_if(colocated_, [&](const HeldChunk& chunk) {
      std::byte* into = take_member_segment(step, chunk.place(), chunk.bytes);
      if (into != nullptr) std::memcpy(into, chunk.data, chunk.bytes);
      return into != nullptr;
    });
  }
  for (const Lent& l : member_lent_) (l.used ? stored_ : unusable_).push_back(l.id);
  free_colocated(std::exchange(unusable_, {}));  // lent and not used: nothing will name them
}

void ChunkSender::settle() {
  last_sizes_.clear();
  for (const Lent& l : lent_) {
    if (l.used) last_sizes_.push_back(l.mapping->size);
  }
  for (const Lent& l : member_lent_) {
    if (l.used) last_sizes_.push_back(l.mapping->size);
  }
  member_lent_.clear();
}

std::span<const std::size_t> ChunkSender::sizes_to_lend() const {
  if (!client_.shm_link().active()) return {};
  return last_sizes_;
}

void ChunkSender::read_next_lent(Connection& c, const Reply& reply) {
  for (const LentSegment& one : parse_lent_segments(c, reply, last_sizes_, false, segments_)) {
    if (one.mapping) next_lent_.push_back(Lent{one.segment, one.mapping, false});
  }
}

void ChunkSender::keep_next_lent() { lent_ = std::exchange(next_lent_, {}); }

void ChunkSender::drop_step() {
  // The stream frees the colocated chunks it was told of; the others go here (twice is harmless).
  free_colocated(stored_);
  lent_.clear();
  next_lent_.clear();
}

void ChunkSender::reset() {
  shm_chunks_.clear();
  colocated_.clear();
  private_loans_.clear();
}

// ---- ChunkFetcher -------------------------------------------------------------------------------

// A segment already mapped read-only (`size` bytes), marked used now; null if none is.
std::shared_ptr<SegmentMapping> ChunkFetcher::cached_mapping(std::uint64_t id, std::size_t size) {
  auto cached = segments_.find(id);
  if (cached == segments_.end() || cached->second.mapping->size != size) return nullptr;
  cached->second.last_step = steps_seen_;
  return cached->second.mapping;
}

// A segment mapped read-only, as fetch() last used it; its descriptor is the next one passed.
std::shared_ptr<SegmentMapping> ChunkFetcher::map_passed(Connection& c, std::uint64_t id,
                                                         std::size_t size) {
  const int fd = c.take_fd();
  if (auto cached = cached_mapping(id, size)) {
    ::close(fd);
    return cached;
  }
  auto mapped = map_segment(fd, size, /*writable=*/false);
  if (!mapped) {
    throw ConnectionError("mapping a stream segment of " + std::to_string(size) +
                          " bytes failed: " + std::strerror(errno));
  }
  segments_[id] = CachedSegment{mapped, steps_seen_};
  return mapped;
}

// Mappings not used in the last few steps go (their segments were most likely dropped by the
// writer; ids are never reused, so a cached mapping is never wrong, only memory). "Few": a
// writer's segment comes back after at most the stream's queue limit of steps (one more in
// cluster mode), which NEXT ... MAP tells; a mapping kept shorter than that is made and faulted in
// again at every step. The ids let go are told to the server with the next NEXT ... MAP CACHED.
void ChunkFetcher::next_step() {
  ++steps_seen_;
  std::erase_if(segments_, [&](const auto& entry) {
    if (entry.second.last_step + cache_steps_ >= steps_seen_) return false;
    dropped_.push_back(entry.first);
    return true;
  });
}

void ChunkFetcher::retry_step(std::span<const std::uint64_t> dropped) {
  dropped_.insert(dropped_.begin(), dropped.begin(), dropped.end());
  --steps_seen_;
}

void ChunkFetcher::set_queue_limit(std::int64_t limit) {
  cache_steps_ =
      std::clamp<std::uint64_t>(static_cast<std::uint64_t>(std::max<std::int64_t>(limit, 0)) + 2,
                                kSegmentCacheSteps, kSegmentCacheStepsMax);
}

MappedChunks ChunkFetcher::map_step_segments(Connection& c, const Reply& entries) {
  MappedChunks mapped;
  // [chunk id, segment, bytes, passed]: passed 0, a segment this reader maps already.
  for (const Reply& entry : entries.elements) {
    if (entry.elements.size() != 4) c.protocol_error("malformed SS.STREAM.NEXT reply");
    const auto segment = static_cast<std::uint64_t>(entry.elements[1].integer);
    const auto bytes = static_cast<std::size_t>(entry.elements[2].integer);
    std::shared_ptr<SegmentMapping> mapping = entry.elements[3].integer != 0
                                                  ? map_passed(c, segment, bytes)
                                                  : cached_mapping(segment, bytes);
    // Not mapped here after all (the server's record and ours disagree): fetch() asks for the
    // chunk with SS.STREAM.VIEW.
    if (mapping) mapped[entry.elements[0].integer] = std::move(mapping);
  }
  return mapped;
}

std::vector<ReceivedChunk> ChunkFetcher::fetch(std::int64_t step, const MappedChunks& mapped,
                                               std::span<const ChunkToFetch> wanted) {
  using Received = ReceivedChunk;
  std::vector<Received> received(wanted.size());
  // Chunks whose segments came with NEXT are mapped already; the others are asked for: over
  // shared memory, chunks in writer segments come as descriptors (mapped, not copied), the rest,
  // and all of them over TCP, as bytes.
  std::vector<std::size_t> asked;  // indices into `wanted`
  for (std::size_t k = 0; k < wanted.size(); ++k) {
    const std::size_t size = wanted[k].bytes;
    auto found = mapped.find(wanted[k].id);
    if (found != mapped.end() && found->second->size >= size) {
      received[k] = Received{{found->second->bytes(), size}, found->second, true};
    } else {
      asked.push_back(k);
    }
  }
  if (asked.empty()) return received;
  const bool shared = client_.shm_link().active();
  const char* command = shared ? "SS.STREAM.VIEW" : "SS.STREAM.GET";
  // Chunks the stream's shard holds are asked for there; colocated ones (cluster mode) from the
  // member holding each, all in one round trip.
  struct Ask {
    std::string_view member;         // empty: the stream's shard
    std::vector<std::size_t> which;  // indices into `wanted`
    const char* command;
  };
  std::vector<Ask> asks;
  for (std::size_t k : asked) {
    const std::string_view member = wanted[k].member;
    auto ask =
        std::find_if(asks.begin(), asks.end(), [&](const Ask& a) { return a.member == member; });
    if (ask == asks.end()) {
      // The member of this reader's node, over shared memory, hands out its segments.
      const char* there = member.empty()                         ? command
                          : client_.member_shared_memory(member) ? "SS.CHUNKS.VIEW"
                                                                 : "SS.CHUNKS.GET";
      ask = asks.insert(asks.end(), Ask{member, {}, there});
    }
    ask->which.push_back(k);
  }
  auto add = [&](Request& request, std::size_t i) {
    const Ask& ask = asks[i];
    if (ask.member.empty()) {
      request.command(5 + ask.which.size());
      request.arg(command);
      request.arg(stream_);
      request.arg(group_);
      request.arg(static_cast<std::int64_t>(rank_));
      request.arg(step);
      for (std::size_t k : ask.which) request.arg(wanted[k].id);
    } else {
      request.command(1 + ask.which.size());
      request.arg(ask.command);
      for (std::size_t k : ask.which) request.arg(wanted[k].id_there);
    }
  };
  auto read = [&](Connection& c, std::size_t i) {
    const Ask& ask = asks[i];
    const char* what = ask.command;
    Reply reply = c.read_reply();
    if (reply.is_error()) throw_server_error(reply.string, what);
    if (!reply.is_array() || reply.elements.size() != ask.which.size()) {
      c.protocol_error(std::string(what) + ": expected " + std::to_string(ask.which.size()) +
                       " chunks");
    }
    for (std::size_t a = 0; a < ask.which.size(); ++a) {
      const std::size_t k = ask.which[a];
      Reply& element = reply.elements[a];
      const std::size_t size = wanted[k].bytes;
      if (element.is_array()) {  // [segment id, bytes] and a descriptor; the chunk leads it
        if (element.elements.size() != 2 || element.elements[1].integer < 0 ||
            static_cast<std::size_t>(element.elements[1].integer) < size) {
          c.protocol_error(std::string(what) + ": chunk of '" + std::string(wanted[k].component) +
                           "' has the wrong size");
        }
        auto mapping = map_passed(c, static_cast<std::uint64_t>(element.elements[0].integer),
                                  static_cast<std::size_t>(element.elements[1].integer));
        received[k] = Received{{mapping->bytes(), size}, mapping, true};
      } else {
        if (element.string.size() != size) {
          c.protocol_error(std::string(what) + ": chunk of '" + std::string(wanted[k].component) +
                           "' has the wrong size");
        }
        auto bytes = std::make_shared<const std::string>(std::move(element.string));
        received[k] =
            Received{{reinterpret_cast<const std::byte*>(bytes->data()), size}, bytes, false};
      }
    }
  };
  if (asks.size() == 1 && asks[0].member.empty()) {
    Request request;
    add(request, 0);
    client_.exchange(stream_, request, [&](Connection& c) { read(c, 0); });
  } else {
    client_.exchange_batch(
        asks.size(),
        [&](std::size_t i) {
          return asks[i].member.empty() ? Route(stream_) : Route::member(asks[i].member);
        },
        add, read);
  }
  return received;
}

}  // namespace slipstream::client
