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

// Linear in the writer's segments and the sizes asked for (with a logarithm for the maps): a
// writer that reuses thousands of segments a step must not stall the stream's other clients.
std::vector<SegmentPool::Lent> SegmentPool::lend(std::uint32_t rank, std::int64_t step,
                                                 std::span<const std::size_t> sizes,
                                                 std::size_t steps_held, const Create& create,
                                                 std::vector<std::uint64_t>* dropped) {
  std::vector<Lent> out(sizes.size());
  std::vector<std::size_t> wanted(sizes.size());  // segment sizes
  for (std::size_t i = 0; i < sizes.size(); ++i) wanted[i] = segment_size(sizes[i]);
  // The rank's free segments by size, each reused at most once (in pool order).
  std::map<std::size_t, std::vector<std::size_t>> free_by_size;  // size -> indices, reversed
  for (std::size_t e = entries_.size(); e-- > 0;) {
    const Entry& entry = entries_[e];
    if (entry.rank == rank && entry.step < 0 && !entry.orphan) {
      free_by_size[entry.segment->size()].push_back(e);
    }
  }
  std::vector<bool> taken(entries_.size(), false);
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    auto found = free_by_size.find(wanted[i]);
    if (found == free_by_size.end() || found->second.empty()) continue;
    const std::size_t e = found->second.back();
    found->second.pop_back();
    taken[e] = true;
    out[i].segment = entries_[e].segment;
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
    const bool free = entry.step < 0 && !taken[e];
    if (entry.rank == rank && !free) ++counted[entry.segment->size()];
  }
  std::vector<bool> doomed(entries_.size(), false);
  for (std::size_t e = 0; e < entries_.size(); ++e) {
    Entry& entry = entries_[e];
    if (entry.rank != rank || entry.step >= 0 || entry.orphan) continue;
    if (taken[e]) {
      entry.step = step;  // lent now
      entry.used = false;
    } else if (counted[entry.segment->size()]++ >= allowed[entry.segment->size()]) {
      doomed[e] = true;
    }
  }
  std::size_t index = 0;
  erase_if([&](const Entry&) { return doomed[index++]; });
  std::vector<Entry> created;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (out[i].segment) continue;
    try {
      out[i].segment = create(wanted[i]);
    } catch (...) {  // nothing lent: the reused ones are free again
      for (const Lent& lent : out) {
        if (!lent.segment || lent.fresh) continue;
        if (auto found = by_id_.find(lent.segment->id()); found != by_id_.end()) {
          entries_[found->second].step = -1;
        }
      }
      throw;
    }
    out[i].fresh = true;
    created.push_back(Entry{out[i].segment, rank, step, false, false});
  }
  for (Entry& entry : created) {
    ++made_;
    bytes_ += entry.segment->size();
    by_id_[entry.segment->id()] = entries_.size();
    entries_.push_back(std::move(entry));
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
  if (auto found = by_id_.find(id); found != by_id_.end()) {
    Entry& entry = entries_[found->second];
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

// One pass, in order (`doomed` is called once per entry, first to last), keeping the order of
// the entries that stay.
void SegmentPool::erase_if(const std::function<bool(const Entry&)>& doomed) {
  std::size_t kept = 0;
  for (std::size_t e = 0; e < entries_.size(); ++e) {
    Entry& entry = entries_[e];
    if (doomed(entry)) {
      bytes_ -= entry.segment->size();
      if (!entry.orphan) dropped_[entry.rank].push_back(entry.segment->id());
      continue;
    }
    if (kept != e) entries_[kept] = std::move(entry);
    ++kept;
  }
  entries_.resize(kept);
  by_id_.clear();
  for (std::size_t e = 0; e < entries_.size(); ++e) by_id_[entries_[e].segment->id()] = e;
}

}  // namespace slipstream::server
