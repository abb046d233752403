// Colocated chunks; see chunk_store.hpp.
#include "server/stream/chunk_store.hpp"

#include <algorithm>

#include "server/shm/shm.hpp"
#include "server/stream/stream_error.hpp"

namespace slipstream::server {
ChunkStore::ChunkStore() : next_id_(random_id_start()) {}

std::vector<std::uint64_t>& ChunkStore::open_step(const Writer& writer, std::int64_t step,
                                                  std::size_t limit) {
  if (writer.stream.size() > kMaxStreamName) {
    throw StreamError("stream name of " + std::to_string(writer.stream.size()) +
                      " bytes is longer than " + std::to_string(kMaxStreamName));
  }
  auto& window = writers_[writer].window;
  auto entry = std::find_if(window.begin(), window.end(),
                            [&](const auto& e) { return e.first == step; });
  if (entry != window.end()) return entry->second;
  while (window.size() >= std::max<std::size_t>(limit, 1)) {
    const std::vector<std::uint64_t> doomed = window.front().second;
    const std::int64_t oldest = window.front().first;
    for (std::uint64_t id : doomed) erase_locked(id, /*evicted=*/true);
    if (!window.empty() && window.front().first == oldest) window.pop_front();
  }
  window.emplace_back(step, std::vector<std::uint64_t>{});
  return window.back().second;
}

std::uint64_t ChunkStore::hold(Held held, std::vector<std::uint64_t>& ids) {
  const std::uint64_t id = next_id_++;
  ids.push_back(id);
  bytes_ += held.size;
  chunks_.emplace(id, std::move(held));
  return id;
}

std::uint64_t ChunkStore::put(const Writer& writer, std::int64_t step, std::size_t limit,
                              Buffer bytes, MemoryReservation reservation) {
  std::lock_guard lock(mutex_);
  std::vector<std::uint64_t>& ids = open_step(writer, step, limit);
  const std::size_t size = bytes.size();
  return hold(Held{ChunkBytes{std::make_shared<const Buffer>(std::move(bytes)), nullptr}, size,
                   std::move(reservation), writer, step},
              ids);
}

std::vector<ChunkStore::Lent> ChunkStore::lend(const Writer& writer, std::int64_t step,
                                               std::size_t limit,
                                               std::span<const std::size_t> sizes,
                                               const SegmentPool::Create& create,
                                               std::vector<std::uint64_t>* dropped) {
  std::lock_guard lock(mutex_);
  std::vector<std::uint64_t>& ids = open_step(writer, step, limit);
  std::vector<SegmentPool::Lent> lent;
  try {
    lent = writers_[writer].segments.lend(writer.rank, step, sizes, limit, create, dropped);
  } catch (...) {
    auto& window = writers_[writer].window;
    if (ids.empty() && !window.empty() && window.back().first == step) window.pop_back();
    throw;
  }
  std::vector<Lent> out;
  for (SegmentPool::Lent& one : lent) {
    const std::size_t size = one.segment->size();
    const std::uint64_t id = hold(Held{ChunkBytes{nullptr, one.segment, size}, size, {}, writer, step}, ids);
    out.push_back(Lent{id, std::move(one)});
  }
  return out;
}

std::vector<ChunkBytes> ChunkStore::get(std::span<const std::uint64_t> ids) {
  std::lock_guard lock(mutex_);
  std::vector<ChunkBytes> out;
  out.reserve(ids.size());
  for (std::uint64_t id : ids) {
    auto found = chunks_.find(id);
    if (found == chunks_.end()) {
      throw StreamError("chunk " + std::to_string(id) +
                        " is not held here (its step was freed or aborted, or this shard "
                        "restarted)");
    }
    // A segment goes to readers sealed: only its writer's mapping, made when it was lent, writes.
    std::string error;
    if (found->second.bytes.segment && !found->second.bytes.segment->seal_for_readers(&error)) {
      throw StreamError(error);
    }
    out.push_back(found->second.bytes);
  }
  return out;
}

void ChunkStore::erase_locked(std::uint64_t id, bool evicted) {
  auto found = chunks_.find(id);
  if (found == chunks_.end()) return;
  bytes_ -= found->second.size;
  const Writer writer = found->second.writer;
  const std::int64_t step = found->second.step;
  chunks_.erase(found);  // gives the reserved memory back
  auto state = writers_.find(writer);
  if (state == writers_.end()) return;
  auto& window = state->second.window;
  auto entry = std::find_if(window.begin(), window.end(),
                            [&](const auto& e) { return e.first == step; });
  if (entry == window.end() ||
      std::any_of(entry->second.begin(), entry->second.end(),
                  [&](std::uint64_t other) { return chunks_.count(other) > 0; })) {
    return;
  }
  // None of the step's chunks is held: it leaves the window (it no longer counts against the
  // bound), and its segments are lent again, or destroyed when the bound pushed it out.
  window.erase(entry);
  if (evicted) {
    state->second.segments.retire(step);
  } else {
    state->second.segments.step_freed(step);
  }
}

std::size_t ChunkStore::free(std::span<const std::uint64_t> ids) {
  std::lock_guard lock(mutex_);
  std::size_t freed = 0;
  for (std::uint64_t id : ids) {
    if (chunks_.count(id)) ++freed;
    erase_locked(id);
  }
  return freed;
}

std::size_t ChunkStore::drop(const std::string& stream, std::uint32_t rank,
                             std::span<const std::int64_t> steps) {
  std::lock_guard lock(mutex_);
  // Whichever connection stored them, windows gone with their connection included.
  std::vector<std::uint64_t> doomed;
  for (const auto& [id, held] : chunks_) {
    if (held.writer.stream == stream && held.writer.rank == rank &&
        std::find(steps.begin(), steps.end(), held.step) != steps.end()) {
      doomed.push_back(id);
    }
  }
  for (std::uint64_t id : doomed) erase_locked(id);
  return doomed.size();
}

bool ChunkStore::needs_close_hook(std::uint64_t session) {
  std::lock_guard lock(mutex_);
  return hooked_.insert(session).second;
}

void ChunkStore::session_closed(std::uint64_t session) {
  std::lock_guard lock(mutex_);
  hooked_.erase(session);
  std::erase_if(writers_, [&](const auto& entry) { return entry.first.session == session; });
}

std::size_t ChunkStore::chunks() const {
  std::lock_guard lock(mutex_);
  return chunks_.size();
}

std::size_t ChunkStore::bytes() const {
  std::lock_guard lock(mutex_);
  return bytes_;
}

}  // namespace slipstream::server
