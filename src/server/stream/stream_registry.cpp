// The server's streams by name; see stream_registry.hpp.
#include "server/stream/stream_registry.hpp"

#include <algorithm>
#include <mutex>
#include <optional>

#include "server/stream/stream.hpp"
#include "server/stream/stream_error.hpp"

namespace slipstream::server {

StreamRegistry::~StreamRegistry() = default;

std::shared_ptr<Stream> StreamRegistry::find_locked(std::string_view name,
                                                    const BoundHere& bound_here) const {
  if (auto replaced = replaced_.find(name); replaced != replaced_.end() && bound_here) {
    for (const auto& stream : replaced->second) {
      std::lock_guard lock(stream->mutex());
      if (bound_here(*stream)) return stream;
    }
  }
  auto current = current_.find(name);
  return current == current_.end() ? nullptr : current->second;
}

bool StreamRegistry::run_locked(Stream& stream, const Operation& operation) {
  std::lock_guard lock(stream.mutex());
  auto settle = [&] {
    const auto now = DeadlineTimer::Clock::now();
    std::weak_ptr<Stream> weak = stream.weak_from_this();
    for (const auto& [step, timeout] : stream.settle()) {
      deadlines_.schedule(now + timeout, [this, weak, step = step] {
        if (auto expiring = weak.lock()) {
          with_stream(expiring, [step](Stream& s) { s.expire_step(step); });
        }
      });
    }
    if (RemoteWork work = stream.take_remote_work(); !work.empty() && remote_sink_) {
      remote_sink_(stream.name(), work);
    }
  };
  try {
    operation(stream);
  } catch (...) {
    settle();
    throw;
  }
  settle();
  return stream.idle() || !stream.reachable();  // collect() decides
}

void StreamRegistry::with_existing(std::string_view name, const BoundHere& bound_here,
                                   const Operation& operation) {
  std::shared_ptr<Stream> stream;
  bool idle = false;
  {
    std::shared_lock lock(mutex_);
    stream = find_locked(name, bound_here);
    if (!stream) throw StreamError("no stream named '" + std::string(name) + "'");
    idle = run_locked(*stream, operation);
  }
  if (idle) collect(stream);
}

void StreamRegistry::with_current(std::string_view name, const Operation& operation) {
  std::shared_ptr<Stream> stream;
  bool idle = false;
  {
    std::unique_lock lock(mutex_);
    auto& current = current_[std::string(name)];
    if (std::shared_ptr<Stream> old = current) {
      // A dead run (its writers failed, nobody bound) is never mistaken for the live one: a
      // reader that comes first for the next run gets a fresh stream, and the old one goes.
      std::lock_guard stream_lock(old->mutex());
      if (old->stale()) {
        release_locked(*old);
        current = nullptr;
      }
    }
    if (!current) current = std::make_shared<Stream>(std::string(name), keyspace_);
    stream = current;
    try {
      idle = run_locked(*stream, operation);
    } catch (...) {
      std::lock_guard stream_lock(stream->mutex());
      if (forget_now(stream)) current_.erase(std::string(name));  // created for nothing
      throw;
    }
    if (idle) {
      std::lock_guard stream_lock(stream->mutex());
      if (forget_now(stream)) current_.erase(std::string(name));
    }
  }
}

void StreamRegistry::with_writer(std::string_view name, std::uint32_t rank,
                                 const Operation& operation) {
  std::unique_lock lock(mutex_);
  auto& current = current_[std::string(name)];
  if (std::shared_ptr<Stream> old = current) {  // `old` outlives the lock on its mutex
    std::lock_guard stream_lock(old->mutex());
    if (old->ended() && !old->writer_bound(rank)) {
      // Kept, out of sight, only while someone bound to it may still come back to it.
      if (old->reachable()) {
        replaced_[std::string(name)].push_back(old);
      } else {
        release_locked(*old);
      }
      current = nullptr;
    }
  }
  if (!current) current = std::make_shared<Stream>(std::string(name), keyspace_);
  std::shared_ptr<Stream> stream = current;
  bool idle = false;
  try {
    idle = run_locked(*stream, operation);
  } catch (...) {
    std::lock_guard stream_lock(stream->mutex());
    if (forget_now(stream)) current_.erase(std::string(name));
    throw;
  }
  if (idle) {
    std::lock_guard stream_lock(stream->mutex());
    if (forget_now(stream)) current_.erase(std::string(name));
  }
}

void StreamRegistry::with_stream(const std::shared_ptr<Stream>& stream,
                                 const Operation& operation) {
  bool idle = false;
  {
    std::shared_lock lock(mutex_);
    idle = run_locked(*stream, operation);
  }
  if (idle) collect(stream);
}

bool StreamRegistry::forget_now(const std::shared_ptr<Stream>& stream) {
  std::optional<DeadlineTimer::Clock::time_point> recheck;
  if (stream->forgettable(DeadlineTimer::Clock::now(), &recheck)) {
    release_locked(*stream);
    return true;
  }
  if (recheck) {
    deadlines_.schedule(*recheck, [this, weak = std::weak_ptr<Stream>(stream)] {
      if (auto kept = weak.lock()) collect(kept);
    });
  }
  return false;
}

// A current stream goes once idle (ended, every step freed, nobody bound), an ended run
// Stream::kEndedRunKept later. A replaced one goes as soon as nobody can reach it: no new reader
// or writer ever finds it, so the steps it still holds can never be read.
void StreamRegistry::collect(const std::shared_ptr<Stream>& stream) {
  std::unique_lock lock(mutex_);
  std::lock_guard stream_lock(stream->mutex());
  const std::string& name = stream->name();
  if (auto current = current_.find(name); current != current_.end() && current->second == stream) {
    if (forget_now(stream)) current_.erase(current);
    return;
  }
  if (stream->reachable()) return;
  if (auto replaced = replaced_.find(name); replaced != replaced_.end()) {
    if (std::find(replaced->second.begin(), replaced->second.end(), stream) !=
        replaced->second.end()) {
      release_locked(*stream);
    }
    std::erase(replaced->second, stream);
    if (replaced->second.empty()) replaced_.erase(replaced);
  }
}

void StreamRegistry::erase_locked(const std::shared_ptr<Stream>& stream) {
  std::lock_guard stream_lock(stream->mutex());
  release_locked(*stream);
}

void StreamRegistry::release_locked(Stream& stream) {
  stream.erase();
  if (RemoteWork work = stream.take_remote_work(); !work.empty() && remote_sink_) {
    remote_sink_(stream.name(), work);
  }
}

std::size_t StreamRegistry::erase(std::string_view name) {
  std::unique_lock lock(mutex_);
  std::size_t erased = 0;
  if (auto current = current_.find(name); current != current_.end()) {
    erase_locked(current->second);
    current_.erase(current);
    ++erased;
  }
  if (auto replaced = replaced_.find(name); replaced != replaced_.end()) {
    for (const auto& stream : replaced->second) erase_locked(stream);
    erased += replaced->second.size();
    replaced_.erase(replaced);
  }
  return erased;
}

std::size_t StreamRegistry::erase_all() {
  std::unique_lock lock(mutex_);
  std::size_t erased = current_.size();
  for (const auto& [name, stream] : current_) erase_locked(stream);
  for (const auto& [name, streams] : replaced_) {
    for (const auto& stream : streams) erase_locked(stream);
    erased += streams.size();
  }
  current_.clear();
  replaced_.clear();
  return erased;
}

StreamTotals StreamRegistry::totals() const {
  StreamTotals out;
  std::shared_lock lock(mutex_);
  auto add = [&](const std::shared_ptr<Stream>& stream) {
    std::lock_guard stream_lock(stream->mutex());
    out.parked += stream->parked();
    if (stream->kept_ended()) {
      ++out.ended_kept;
      return;
    }
    ++out.streams;
    out.bytes_held += stream->bytes_held();
    out.steps_held += stream->steps_held();
    out.segment_bytes += stream->segment_bytes();
  };
  for (const auto& [name, stream] : current_) add(stream);
  for (const auto& [name, streams] : replaced_) {
    for (const auto& stream : streams) add(stream);
  }
  return out;
}

}  // namespace slipstream::server
