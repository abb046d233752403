// Stream writer segments, lent and reused; see segment_pool.hpp.
#include "server/stream/segment_pool.hpp"

#include <algorithm>
#include <bit>
#include <limits>

#include "server/stream/stream_error.hpp"

namespace slipstream::server {

std::size_t SegmentPool::size_class(std::size_t bytes) noexcept {
  constexpr std::size_t kPage = 4096;
  if (bytes <= kPage) return kPage;
  // The step: an eighth of the largest power of two not above `bytes`, at least a page.
  const std::size_t top = std::size_t{1} << (std::bit_width(bytes) - 1);
  const std::size_t step = std::max(kPage, top / 8);
  if (bytes > std::numeric_limits<std::size_t>::max() - step) return bytes;
  return (bytes + step - 1) / step * step;
}

std::vector<SegmentPool::Lent> SegmentPool::lend(std::uint32_t rank, std::int64_t step,
                                                 std::span<const std::size_t> sizes,
                                                 std::size_t steps_held, const Create& create,
                                                 std::vector<std::uint64_t>* dropped) {
  std::vector<Lent> out(sizes.size());
  std::vector<std::size_t> wanted(sizes.size());  // segment sizes
  for (std::size_t i = 0; i < sizes.size(); ++i) wanted[i] = segment_size(sizes[i]);
  std::vector<std::size_t> taken;  // indices of entries_ reused
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    for (std::size_t e = 0; e < entries_.size(); ++e) {
      const Entry& entry = entries_[e];
      if (entry.rank == rank && entry.step < 0 && !entry.orphan &&
          entry.segment->size() == wanted[i] &&
          std::find(taken.begin(), taken.end(), e) == taken.end()) {
        taken.push_back(e);
        out[i].segment = entry.segment;
        break;
      }
    }
  }
  // The writer's free segments not lent now stay for its next steps while its segments of their
  // size (busy, lent now and free) are at most `steps_held` steps' worth; the others go first, so
  // that a writer whose chunks change size or number does not hold the old ones as well as the
  // new. (Keeping none of them made a writer that is more than one step ahead of the step freed
  // last, as a queue limit above 2 allows, create and map new segments at every step.)
  std::map<std::size_t, std::size_t> allowed;  // size -> segments of that size the rank may hold
  for (std::size_t size : wanted) allowed[size] += std::max<std::size_t>(steps_held, 1);
  std::map<std::size_t, std::size_t> counted;
  for (std::size_t e = 0; e < entries_.size(); ++e) {
    const Entry& entry = entries_[e];
    const bool free = entry.step < 0 && std::find(taken.begin(), taken.end(), e) == taken.end();
    if (entry.rank == rank && !free) ++counted[entry.segment->size()];
  }
  std::vector<std::shared_ptr<ShmWriterSegment>> keep;
  for (std::size_t e = 0; e < entries_.size(); ++e) {
    const Entry& entry = entries_[e];
    if (entry.rank != rank || entry.step >= 0 || entry.orphan) continue;
    const bool lent_now = std::find(taken.begin(), taken.end(), e) != taken.end();
    if (lent_now || counted[entry.segment->size()]++ < allowed[entry.segment->size()]) {
      keep.push_back(entry.segment);
    }
  }
  erase_if([&](const Entry& entry) {
    return entry.rank == rank && entry.step < 0 &&
           std::find(keep.begin(), keep.end(), entry.segment) == keep.end();
  });
  std::vector<Entry> created;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (out[i].segment) continue;
    out[i].segment = create(wanted[i]);  // may throw: nothing lent yet
    out[i].fresh = true;
    created.push_back(Entry{out[i].segment, rank, -1, false, false});
  }
  for (Entry& entry : created) {
    ++made_;
    bytes_ += entry.segment->size();
    entries_.push_back(std::move(entry));
  }
  for (const Lent& lent : out) {
    for (Entry& entry : entries_) {
      if (entry.segment == lent.segment) {
        entry.step = step;
        entry.used = false;
      }
    }
  }
  auto gone = dropped_.find(rank);
  if (gone != dropped_.end()) {
    *dropped = std::move(gone->second);
    dropped_.erase(gone);
  }
  return out;
}

std::shared_ptr<ShmWriterSegment> SegmentPool::use(std::uint32_t rank, std::int64_t step,
                                                   std::uint64_t id, std::size_t bytes) {
  for (Entry& entry : entries_) {
    if (entry.segment->id() != id) continue;
    if (entry.rank != rank || entry.step != step) {
      throw StreamError("segment " + std::to_string(id) + " was not lent to writer " +
                        std::to_string(rank) + " for step " + std::to_string(step) +
                        " (SS.STREAM.SEGMENTS first)");
    }
    if (entry.used) {
      throw StreamError("segment " + std::to_string(id) + " already holds a chunk of step " +
                        std::to_string(step));
    }
    if (size_classes_ ? entry.segment->size() < bytes : entry.segment->size() != bytes) {
      throw StreamError("segment " + std::to_string(id) + " has " +
                        std::to_string(entry.segment->size()) + " bytes; the chunk's extent needs " +
                        std::to_string(bytes));
    }
    std::string error;
    if (!entry.segment->seal_for_readers(&error)) throw StreamError(error);
    entry.used = true;
    return entry.segment;
  }
  throw StreamError("unknown segment " + std::to_string(id));
}

void SegmentPool::step_freed(std::int64_t step) {
  for (Entry& entry : entries_) {
    if (entry.step == step) {
      entry.step = -1;
      entry.used = false;
    }
  }
  erase_if([](const Entry& entry) { return entry.orphan && entry.step < 0; });
}

void SegmentPool::retire(std::int64_t step) {
  erase_if([&](const Entry& entry) { return entry.step == step; });  // reported as dropped
}

void SegmentPool::writer_gone(std::uint32_t rank) {
  dropped_.erase(rank);
  for (Entry& entry : entries_) {
    if (entry.rank == rank) entry.orphan = true;
  }
  erase_if([](const Entry& entry) { return entry.orphan && entry.step < 0; });
}

void SegmentPool::erase_if(const std::function<bool(const Entry&)>& doomed) {
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (doomed(*it)) {
      bytes_ -= it->segment->size();
      if (!it->orphan) dropped_[it->rank].push_back(it->segment->id());
      it = entries_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace slipstream::server
