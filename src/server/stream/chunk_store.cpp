// Colocated chunks; see chunk_store.hpp.
#include "server/stream/chunk_store.hpp"

#include <algorithm>

#include "server/shm/shm.hpp"
#include "server/stream/stream_error.hpp"

namespace slipstream::server {
namespace {

void check_not_dropped(
    const std::deque<std::tuple<std::string, std::uint32_t, std::int64_t>>& dropped,
    const ChunkStore::Writer& writer, std::int64_t step) {
  if (std::find(dropped.begin(), dropped.end(),
                std::make_tuple(writer.stream, writer.rank, step)) != dropped.end()) {
    throw StreamAborted("step " + std::to_string(step) + " of stream " + writer.stream +
                        " was aborted (writer " + std::to_string(writer.rank) +
                        "'s chunks of it were dropped)");
  }
}

}  // namespace

std::vector<std::uint64_t>& ChunkStore::open_step(const Writer& writer, std::int64_t step,
                                                  std::size_t limit) {
  check_not_dropped(dropped_, writer, step);
  auto& window = writers_[writer].window;
  auto entry = std::find_if(window.begin(), window.end(),
                            [&](const auto& e) { return e.first == step; });
  if (entry != window.end()) return entry->second;
  window.emplace_back(step, std::vector<std::uint64_t>{});
  while (window.size() > std::max<std::size_t>(limit, 1)) {
    const std::vector<std::uint64_t> doomed = window.front().second;
    for (std::uint64_t id : doomed) erase_locked(id);
    window.pop_front();
  }
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
  std::vector<SegmentPool::Lent> lent =
      writers_[writer].segments.lend(writer.rank, step, sizes, create, dropped);
  std::vector<Lent> out;
  for (SegmentPool::Lent& one : lent) {
    const std::size_t size = one.segment->size();
    const std::uint64_t id = hold(Held{ChunkBytes{nullptr, one.segment}, size, {}, writer, step}, ids);
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

void ChunkStore::erase_locked(std::uint64_t id) {
  auto found = chunks_.find(id);
  if (found == chunks_.end()) return;
  bytes_ -= found->second.size;
  const Writer writer = found->second.writer;
  const std::int64_t step = found->second.step;
  const bool segment = found->second.bytes.segment != nullptr;
  chunks_.erase(found);  // gives the reserved memory back
  if (!segment) return;
  // The step's segments are lent again once none of its chunks is held.
  auto state = writers_.find(writer);
  if (state == writers_.end()) return;
  for (const auto& [number, step_ids] : state->second.window) {
    if (number != step) continue;
    if (std::none_of(step_ids.begin(), step_ids.end(),
                     [&](std::uint64_t other) { return chunks_.count(other) > 0; })) {
      state->second.segments.step_freed(step);
    }
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
  for (std::int64_t step : steps) {
    dropped_.emplace_back(stream, rank, step);
    if (dropped_.size() > kDroppedRemembered) dropped_.pop_front();
  }
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
