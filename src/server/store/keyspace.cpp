// Lock-striped keyspace; see keyspace.hpp.
#include "server/store/keyspace.hpp"

#include <algorithm>

#include "common/glob.hpp"

namespace slipstream::server {

Value& MutableSlot::mutate() {
  // The map holds one reference; any other holder is a reader that must keep its old version.
  // use_count() is a relaxed load, so a reader's last reads (made before it dropped its reference)
  // must still be ordered before our writes: copying the pointer is an acquire-release increment
  // of the same count that the reader's release decremented. (A standalone acquire fence would do
  // too, but ThreadSanitizer does not model fences and would report a race.) No reader can take a
  // new reference meanwhile: they do so under the shard lock that our caller holds.
  if (slot_.use_count() > 1) {
    slot_ = slot_->clone();
  } else {
    const std::shared_ptr<Value> acquire = slot_;
  }
  return *slot_;
}

Keyspace::Keyspace() = default;

void Keyspace::set_write_listener(std::function<void(std::string_view)> listener) {
  write_listener_ = std::move(listener);
}

bool Keyspace::over_limit(std::size_t extra) const noexcept {
  const std::size_t limit = max_memory_.load(std::memory_order_relaxed);
  if (limit == 0) return false;
  const std::size_t used = used_memory_.load(std::memory_order_relaxed) +
                           reserved_memory_->load(std::memory_order_relaxed);
  return used > limit || extra > limit - used;
}

std::optional<MemoryReservation> Keyspace::reserve(std::size_t bytes) {
  // The compare-exchange makes concurrent reservations see each other, so two loans cannot both
  // take the last free bytes. Stored values change beside it, as every other write's check does.
  std::atomic<std::size_t>& reserved = *reserved_memory_;
  std::size_t current = reserved.load(std::memory_order_relaxed);
  do {
    const std::size_t limit = max_memory_.load(std::memory_order_relaxed);
    const std::size_t used = used_memory_.load(std::memory_order_relaxed) + current;
    if (limit != 0 && (used > limit || bytes > limit - used)) return std::nullopt;
  } while (!reserved.compare_exchange_weak(current, current + bytes, std::memory_order_relaxed));
  return MemoryReservation(reserved_memory_, bytes);
}

Keyspace::KeyRef Keyspace::key_ref(std::string_view key) noexcept {
  std::uint64_t hash = std::hash<std::string_view>{}(key);
  if (hash == 0) hash = 1;  // cursor 0 means "start/complete" in SCAN
  return {hash, key};
}

std::size_t Keyspace::entry_bytes(std::string_view key, const Value* value) noexcept {
  return value == nullptr ? 0 : key.size() + kNodeOverhead + value->memory_usage();
}

void Keyspace::account(std::size_t before, std::size_t after) noexcept {
  if (after >= before) {
    used_memory_.fetch_add(after - before, std::memory_order_relaxed);
  } else {
    used_memory_.fetch_sub(before - after, std::memory_order_relaxed);
  }
}

void Keyspace::notify(std::string_view key) const {
  if (write_listener_) write_listener_(key);
}

ValuePtr Keyspace::get(std::string_view key) const {
  KeyRef ref = key_ref(key);
  Shard& shard = shard_for(ref);
  std::lock_guard lock(shard.mutex);
  auto it = shard.map.find(ref);
  return it == shard.map.end() ? nullptr : it->second;
}

bool Keyspace::exists(std::string_view key) const {
  KeyRef ref = key_ref(key);
  Shard& shard = shard_for(ref);
  std::lock_guard lock(shard.mutex);
  return shard.map.find(ref) != shard.map.end();
}

void Keyspace::store_locked(Shard& shard, const KeyRef& ref, std::shared_ptr<Value> value) {
  const std::size_t after = entry_bytes(ref.name, value.get());
  auto it = shard.map.find(ref);
  std::shared_ptr<Value> old;  // released after accounting; the bytes die with the last reader
  if (it == shard.map.end()) {
    shard.map.emplace(KeyId{ref.hash, std::string(ref.name)}, std::move(value));
    account(0, after);
  } else {
    account(entry_bytes(ref.name, it->second.get()), after);
    old = std::exchange(it->second, std::move(value));
  }
}

void Keyspace::set(std::string_view key, std::shared_ptr<Value> value) {
  KeyRef ref = key_ref(key);
  Shard& shard = shard_for(ref);
  {
    std::lock_guard lock(shard.mutex);
    store_locked(shard, ref, std::move(value));
  }
  notify(key);
}

bool Keyspace::replace_unseen(std::string_view key, const Value* expected,
                              std::shared_ptr<Value> replacement) {
  KeyRef ref = key_ref(key);
  Shard& shard = shard_for(ref);
  std::lock_guard lock(shard.mutex);
  auto it = shard.map.find(ref);
  if (it == shard.map.end() || it->second.get() != expected) return false;
  store_locked(shard, ref, std::move(replacement));  // no notify(): nothing a reader can see
  return true;
}

bool Keyspace::set_unless_other_type(std::string_view key, std::shared_ptr<Value> value) {
  const ValueType type = value->type();
  return update(key, [&](MutableSlot& slot) {
    if (slot.peek() && slot.peek()->type() != type) return false;
    slot.assign(std::move(value));
    return true;
  });
}

void Keyspace::set_many(std::vector<std::pair<std::string, std::shared_ptr<Value>>> entries) {
  std::vector<std::size_t> shard_ids;
  for (const auto& entry : entries) shard_ids.push_back(shard_of(key_ref(entry.first).hash));
  std::sort(shard_ids.begin(), shard_ids.end());
  shard_ids.erase(std::unique(shard_ids.begin(), shard_ids.end()), shard_ids.end());
  {
    std::vector<std::unique_lock<std::mutex>> locks;
    locks.reserve(shard_ids.size());
    for (std::size_t id : shard_ids) locks.emplace_back(shards_[id].mutex);
    for (auto& [key, value] : entries) {
      KeyRef ref = key_ref(key);
      store_locked(shard_for(ref), ref, std::move(value));
    }
  }
  for (const auto& entry : entries) notify(entry.first);
}

bool Keyspace::erase(std::string_view key) {
  KeyRef ref = key_ref(key);
  Shard& shard = shard_for(ref);
  std::shared_ptr<Value> old;
  {
    std::lock_guard lock(shard.mutex);
    auto it = shard.map.find(ref);
    if (it == shard.map.end()) return false;
    account(entry_bytes(key, it->second.get()), 0);
    old = std::move(it->second);
    shard.map.erase(it);
  }
  notify(key);
  return true;
}

void Keyspace::lock_pair(Shard& a, Shard& b, std::unique_lock<std::mutex>& la,
                         std::unique_lock<std::mutex>& lb) const {
  if (&a == &b) {
    la = std::unique_lock(a.mutex);
  } else if (&a < &b) {
    la = std::unique_lock(a.mutex);
    lb = std::unique_lock(b.mutex);
  } else {
    lb = std::unique_lock(b.mutex);
    la = std::unique_lock(a.mutex);
  }
}

Keyspace::MoveResult Keyspace::rename(std::string_view from, std::string_view to, bool replace) {
  KeyRef src = key_ref(from), dst = key_ref(to);
  Shard& src_shard = shard_for(src);
  Shard& dst_shard = shard_for(dst);
  {
    std::unique_lock<std::mutex> la, lb;
    lock_pair(src_shard, dst_shard, la, lb);
    auto it = src_shard.map.find(src);
    if (it == src_shard.map.end()) return MoveResult::kNoSuchKey;
    if (from == to) return replace ? MoveResult::kOk : MoveResult::kTargetExists;
    if (!replace && dst_shard.map.find(dst) != dst_shard.map.end()) {
      return MoveResult::kTargetExists;
    }
    std::shared_ptr<Value> value = std::move(it->second);
    account(entry_bytes(from, value.get()), 0);
    src_shard.map.erase(it);
    store_locked(dst_shard, dst, std::move(value));
  }
  notify(from);
  notify(to);
  return MoveResult::kOk;
}

Keyspace::MoveResult Keyspace::copy(std::string_view from, std::string_view to, bool replace) {
  KeyRef src = key_ref(from), dst = key_ref(to);
  Shard& src_shard = shard_for(src);
  Shard& dst_shard = shard_for(dst);
  {
    std::unique_lock<std::mutex> la, lb;
    lock_pair(src_shard, dst_shard, la, lb);
    auto it = src_shard.map.find(src);
    if (it == src_shard.map.end()) return MoveResult::kNoSuchKey;
    if (!replace && dst_shard.map.find(dst) != dst_shard.map.end()) {
      return MoveResult::kTargetExists;
    }
    if (from == to) return MoveResult::kTargetExists;
    // Checked as SET checks its payload: the whole copy, whatever it replaces.
    if (over_limit(entry_bytes(to, it->second.get()))) return MoveResult::kOverLimit;
    // Sharing is safe: values are immutable to holders and containers are copied on write.
    store_locked(dst_shard, dst, it->second);
  }
  notify(to);
  return MoveResult::kOk;
}

std::size_t Keyspace::size() const {
  std::size_t total = 0;
  for (auto& shard : shards_) {
    std::lock_guard lock(shard.mutex);
    total += shard.map.size();
  }
  return total;
}

void Keyspace::clear() {
  for (auto& shard : shards_) {
    Map old;
    {
      std::lock_guard lock(shard.mutex);
      for (const auto& [id, value] : shard.map) account(entry_bytes(id.name, value.get()), 0);
      old.swap(shard.map);
    }
    for (const auto& [id, value] : old) notify(id.name);
  }
}

Keyspace::ScanPage Keyspace::scan(std::uint64_t cursor, std::size_t count,
                                  std::string_view pattern,
                                  std::optional<ValueType> type) const {
  // The cursor is the key hash to resume from; shards partition the hash space in order, so a
  // walk in hash order visits every key present throughout exactly once.
  ScanPage page;
  count = std::max<std::size_t>(count, 1);
  std::size_t visited = 0;
  for (std::size_t s = shard_of(cursor); s < kShardCount; ++s) {
    const Shard& shard = shards_[s];
    std::lock_guard lock(shard.mutex);
    auto it = shard.map.lower_bound(KeyRef{cursor, std::string_view()});
    for (; it != shard.map.end(); ++it) {
      if (visited >= count && it->first.hash != std::prev(it)->first.hash) {
        page.next_cursor = it->first.hash;
        return page;
      }
      ++visited;
      if (!pattern.empty() && !glob_match(pattern, it->first.name)) continue;
      if (type && it->second->type() != *type) continue;
      page.keys.push_back(it->first.name);
    }
    if (s + 1 < kShardCount) cursor = std::uint64_t{s + 1} << (64 - kShardBits);
    if (visited >= count && s + 1 < kShardCount) {
      page.next_cursor = cursor;
      return page;
    }
  }
  page.next_cursor = 0;
  return page;
}

std::vector<std::string> Keyspace::keys(std::string_view pattern) const {
  std::vector<std::string> result;
  const bool all = pattern == "*";
  for (const auto& shard : shards_) {
    std::lock_guard lock(shard.mutex);
    for (const auto& [id, value] : shard.map) {
      if (all || glob_match(pattern, id.name)) result.push_back(id.name);
    }
  }
  return result;
}

void Keyspace::for_each(
    const std::function<void(const std::string&, const ValuePtr&)>& fn) const {
  for (const auto& shard : shards_) {
    std::vector<std::pair<std::string, ValuePtr>> entries;
    {
      std::lock_guard lock(shard.mutex);
      entries.reserve(shard.map.size());
      for (const auto& [id, value] : shard.map) entries.emplace_back(id.name, value);
    }
    for (const auto& [key, value] : entries) fn(key, value);
  }
}

}  // namespace slipstream::server
