// The shared-memory segments a stream lends its writers for chunk bytes, reused step after step.
// A writer on the server's node asks for segments of the sizes of its step's chunks
// (SS.STREAM.SEGMENTS), fills them through its own writable mapping and names them in
// SS.STREAM.PUTSEG; readers on the node map the same pages read-only. A segment is lent to its
// writer again only once the step that used it has been freed, so a step never changes while any
// reader holds it. Plain data; the Stream that owns it does the locking.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <unordered_map>
#include <string>
#include <vector>

#include "server/shm/shm.hpp"

namespace slipstream::server {

class SegmentPool {
 public:
  /// With `size_classes`, a segment is made in the size class of the chunk it is asked for
  /// (size_class) and holds any chunk of up to its size, so that chunks whose sizes change a
  /// little from step to step (particle records) reuse the same segments; without, a segment has
  /// exactly the size asked for and holds only a chunk of that size.
  explicit SegmentPool(bool size_classes = true) : size_classes_(size_classes) {}

  /// The size of the segments made for a chunk of `bytes` bytes: rounded up to a whole page and
  /// to one of 8 steps per power of two (at most 12.5% above the chunk, plus the page).
  static std::size_t size_class(std::size_t bytes) noexcept;

  /// Makes a new segment of `size` bytes, or throws (StreamError / StreamOutOfMemory).
  using Create = std::function<std::shared_ptr<ShmWriterSegment>(std::size_t size)>;

  /// One segment per entry of `sizes` for writer `rank`'s `step`: a free segment of that rank
  /// and exactly that size when there is one, else a new one (`fresh` set: its descriptor must be
  /// passed to the writer). The rank keeps enough for `steps_held` steps of this shape (the
  /// stream's queue limit) so that steady writing never makes a new one: its free segments of a
  /// size no entry asks for are destroyed (its chunk sizes changed), and so are free ones of a
  /// size it asks for past `steps_held` times that size's count. Nothing is lent if creating one
  /// throws (free segments it would not keep may be gone). Linear in the rank's segments and
  /// `sizes` (with their logarithms).
  struct Lent {
    std::shared_ptr<ShmWriterSegment> segment;
    bool fresh = false;
  };
  /// `dropped` gets the ids of this writer's segments destroyed since its last call, so that it
  /// can unmap them.
  std::vector<Lent> lend(std::uint32_t rank, std::int64_t step,
                         std::span<const std::size_t> sizes, std::size_t steps_held,
                         const Create& create, std::vector<std::uint64_t>* dropped);

  /// The segment `id` as the storage of a chunk of `bytes` bytes in writer `rank`'s `step`: it
  /// must have been lent for that step, not used by another chunk, and hold `bytes` (exactly,
  /// without size classes). Throws StreamError.
  std::shared_ptr<ShmWriterSegment> use(std::uint32_t rank, std::int64_t step, std::uint64_t id,
                                        std::size_t bytes);

  /// The step was freed (or aborted and freed): its segments may be lent again.
  void step_freed(std::int64_t step);
  /// The step's segments leave the pool without being lent again (whoever holds them keeps
  /// them alive until done).
  void retire(std::int64_t step);
  /// The writer closed or failed: its free segments go now, the busy ones when their step is
  /// freed.
  void writer_gone(std::uint32_t rank);
  /// The stream is deleted: every segment leaves the pool now (readers that map one keep it
  /// alive until they drop it).
  void clear() noexcept {
    entries_.clear();
    by_id_.clear();
    dropped_.clear();
    bytes_ = 0;
  }

  std::size_t bytes() const noexcept { return bytes_; }
  std::size_t count() const noexcept { return entries_.size(); }
  /// Segments made over the pool's life: steady writing makes none after its first steps.
  std::uint64_t made() const noexcept { return made_; }

 private:
  struct Entry {
    std::shared_ptr<ShmWriterSegment> segment;
    std::uint32_t rank = 0;
    std::int64_t step = -1;  // lent for this step; -1: free
    bool used = false;       // named by a chunk of that step
    bool orphan = false;     // its writer is gone: destroy once free
  };
  void erase_if(const std::function<bool(const Entry&)>& doomed);

  std::vector<Entry> entries_;
  std::unordered_map<std::uint64_t, std::size_t> by_id_;  // segment id -> index in entries_
  std::map<std::uint32_t, std::vector<std::uint64_t>> dropped_;  // by live writer rank
  std::size_t segment_size(std::size_t bytes) const noexcept {
    return size_classes_ ? size_class(bytes) : bytes;
  }

  bool size_classes_;
  std::size_t bytes_ = 0;
  std::uint64_t made_ = 0;
};

}  // namespace slipstream::server
