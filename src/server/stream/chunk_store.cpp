// Colocated chunks; see chunk_store.hpp.
#include "server/stream/chunk_store.hpp"

#include <algorithm>

#include "server/stream/stream_error.hpp"

namespace slipstream::server {

std::uint64_t ChunkStore::put(const Writer& writer, std::int64_t step, std::size_t limit,
                              Buffer bytes, MemoryReservation reservation) {
  std::lock_guard lock(mutex_);
  const auto dropped = std::find(dropped_.begin(), dropped_.end(),
                                 std::make_tuple(writer.stream, writer.rank, step));
  if (dropped != dropped_.end()) {
    throw StreamAborted("step " + std::to_string(step) + " of stream " + writer.stream +
                        " was aborted (writer " + std::to_string(writer.rank) +
                        "'s chunks of it were dropped)");
  }
  Window& window = windows_[writer];
  if (window.empty() || window.back().first != step) {
    auto known = std::find_if(window.begin(), window.end(),
                              [&](const auto& entry) { return entry.first == step; });
    if (known == window.end()) {
      window.emplace_back(step, std::vector<std::uint64_t>{});
      while (window.size() > std::max<std::size_t>(limit, 1)) {
        for (std::uint64_t id : window.front().second) erase_locked(id);
        window.pop_front();
      }
    }
  }
  auto entry = std::find_if(window.begin(), window.end(),
                            [&](const auto& e) { return e.first == step; });
  const std::uint64_t id = next_id_++;
  entry->second.push_back(id);
  bytes_ += bytes.size();
  chunks_.emplace(id, Held{std::make_shared<const Buffer>(std::move(bytes)),
                           std::move(reservation), writer.stream, writer.rank, step});
  return id;
}

std::vector<std::shared_ptr<const Buffer>> ChunkStore::get(
    std::span<const std::uint64_t> ids) const {
  std::lock_guard lock(mutex_);
  std::vector<std::shared_ptr<const Buffer>> out;
  out.reserve(ids.size());
  for (std::uint64_t id : ids) {
    auto found = chunks_.find(id);
    if (found == chunks_.end()) {
      throw StreamError("chunk " + std::to_string(id) +
                        " is not held here (its step was freed or aborted, or this shard "
                        "restarted)");
    }
    out.push_back(found->second.bytes);
  }
  return out;
}

void ChunkStore::erase_locked(std::uint64_t id) {
  auto found = chunks_.find(id);
  if (found == chunks_.end()) return;
  bytes_ -= found->second.bytes->size();
  chunks_.erase(found);  // gives the reserved memory back
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
  std::size_t freed = 0;
  for (std::int64_t step : steps) {
    dropped_.emplace_back(stream, rank, step);
    if (dropped_.size() > kDroppedRemembered) dropped_.pop_front();
  }
  for (auto& [writer, window] : windows_) {
    if (writer.stream != stream || writer.rank != rank) continue;
    std::erase_if(window, [&](auto& entry) {
      if (std::find(steps.begin(), steps.end(), entry.first) == steps.end()) return false;
      for (std::uint64_t id : entry.second) freed += chunks_.count(id);
      for (std::uint64_t id : entry.second) erase_locked(id);
      return true;
    });
  }
  // Chunks whose writer's window went with its connection.
  std::vector<std::uint64_t> orphans;
  for (const auto& [id, held] : chunks_) {
    if (held.stream == stream && held.rank == rank &&
        std::find(steps.begin(), steps.end(), held.step) != steps.end()) {
      orphans.push_back(id);
    }
  }
  for (std::uint64_t id : orphans) erase_locked(id);
  return freed + orphans.size();
}

bool ChunkStore::needs_close_hook(std::uint64_t session) {
  std::lock_guard lock(mutex_);
  return hooked_.insert(session).second;
}

void ChunkStore::session_closed(std::uint64_t session) {
  std::lock_guard lock(mutex_);
  hooked_.erase(session);
  std::erase_if(windows_, [&](const auto& entry) { return entry.first.session == session; });
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
