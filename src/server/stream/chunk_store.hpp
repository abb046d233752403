// Colocated chunks (cluster mode): the chunk bytes a writer stores on its own node's shard while
// its stream's table lives on another shard (SS.CHUNKS.*). The stream's shard names each chunk
// by the id this store gave it, hands the id to readers with the step, and frees the chunks when
// the step is freed (SS.CHUNKS.FREE, sent from shard to shard) or aborted by a writer's failure
// (SS.CHUNKS.DROP).
//
// A chunk's bytes are either received (SS.CHUNKS.PUT) or in a shared-memory segment lent to the
// writer for the step (SS.CHUNKS.SEGMENTS: a writer on this node fills it through its own
// mapping; readers on this node map it read-only). A segment is lent again only once every chunk
// id of the step it served has been freed.
//
// Bound: a writer's chunks never belong to more than the last `limit` steps it stored chunks for
// (the stream's queue limit): the stream's shard holds at most that many of its steps, so older
// ones are dropped here even when the message freeing them is late or lost.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "common/buffer.hpp"
#include "server/store/memory_reservation.hpp"
#include "server/stream/segment_pool.hpp"
#include "server/stream/stream_data.hpp"

namespace slipstream::server {

class ChunkStore {
 public:
  ChunkStore();
  /// The longest stream name the store accepts (names are kept with every chunk).
  static constexpr std::size_t kMaxStreamName = 1024;

  /// Who stored a chunk: the connection, the stream's name and the writer rank.
  struct Writer {
    std::uint64_t session = 0;
    std::string stream;
    std::uint32_t rank = 0;
    auto operator<=>(const Writer&) const = default;
  };
  /// A segment lent for a chunk, with the chunk's id.
  struct Lent {
    std::uint64_t id = 0;
    SegmentPool::Lent lent;
  };

  /// Stores `bytes` (counted by `reservation`) as a chunk of `writer`'s `step` and returns its
  /// id (never reused, and random from one server process to the next, so that a late free
  /// for a previous process's id frees nothing). When this is a step the writer has not stored
  /// chunks for yet, its chunks of steps older than its last `limit` go, and their segments with
  /// them (never lent again: readers may still map them).
  std::uint64_t put(const Writer& writer, std::int64_t step, std::size_t limit, Buffer bytes,
                    MemoryReservation reservation);
  /// As put, for chunks of `sizes` bytes that the writer will write into segments: one segment
  /// and one chunk id per size (SegmentPool::lend; `dropped`: the writer's segments destroyed
  /// since its last call). A chunk id the writer does not name on the stream's shard should be
  /// freed by the writer.
  std::vector<Lent> lend(const Writer& writer, std::int64_t step, std::size_t limit,
                         std::span<const std::size_t> sizes, const SegmentPool::Create& create,
                         std::vector<std::uint64_t>* dropped);
  /// The chunks `ids`, shared (zero copy); segments are sealed for readers first. Throws
  /// StreamError naming the first id not held.
  std::vector<ChunkBytes> get(std::span<const std::uint64_t> ids);
  /// Frees the chunks `ids` (unknown ones are ignored: freeing is idempotent). Returns how many
  /// were held.
  std::size_t free(std::span<const std::uint64_t> ids);
  /// Frees every chunk of `stream`'s writer `rank` in `steps` held now, whichever connection
  /// stored it (the stream's shard sends it for a failed writer's aborted steps). Returns how
  /// many were held.
  std::size_t drop(const std::string& stream, std::uint32_t rank,
                   std::span<const std::int64_t> steps);
  /// True the first time for `session`: its connection then needs a close hook that calls
  /// session_closed().
  bool needs_close_hook(std::uint64_t session);
  /// The connection closed: its writers' windows and free segments go (chunks stay until freed).
  void session_closed(std::uint64_t session);

  std::size_t chunks() const;
  /// Bytes of the chunks held (received, or the size of their segments).
  std::size_t bytes() const;

 private:
  struct Held {
    ChunkBytes bytes;
    std::size_t size = 0;
    MemoryReservation reservation;
    Writer writer;
    std::int64_t step = 0;
  };
  // A writer's steps with chunks here, oldest first, with their chunk ids; and its segments.
  struct WriterState {
    std::deque<std::pair<std::int64_t, std::vector<std::uint64_t>>> window;
    SegmentPool segments{/*size_classes=*/false};  // a held chunk is its whole segment
  };
  // The window entry of `writer`'s `step`, opened (and the bound applied) when new.
  std::vector<std::uint64_t>& open_step(const Writer& writer, std::int64_t step,
                                        std::size_t limit);
  std::uint64_t hold(Held held, std::vector<std::uint64_t>& ids);
  // Frees chunk `id`. A step none of whose chunks is held any more leaves its writer's window,
  // and its segments are lent again, except when `evicted` (the bound pushed the step out while
  // the stream's shard may still hold it): then they are destroyed.
  void erase_locked(std::uint64_t id, bool evicted = false);

  mutable std::mutex mutex_;
  std::unordered_map<std::uint64_t, Held> chunks_;
  std::map<Writer, WriterState> writers_;
  std::set<std::uint64_t> hooked_;  // sessions with a close hook
  std::uint64_t next_id_;
  std::size_t bytes_ = 0;
};

}  // namespace slipstream::server
