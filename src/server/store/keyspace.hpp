// The keyspace: keys -> shared values, split into lock-striped shards.
//
// Thread-safety: every method may be called from any thread. Each shard has its own mutex; an
// operation on one key takes one shard lock, RENAME/COPY/MSET take their shards' locks in
// ascending order. Values are shared and immutable to their holders (see value.hpp), so get()
// returns a reference that stays valid and unchanged after the key is overwritten or deleted.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/store/memory_reservation.hpp"
#include "server/store/value.hpp"

namespace slipstream::server {

/// Access to one key's slot while its shard is locked (see Keyspace::update).
class MutableSlot {
 public:
  explicit MutableSlot(std::shared_ptr<Value>& slot) : slot_(slot) {}
  /// The current value, or null when the key does not exist.
  const Value* peek() const noexcept { return slot_.get(); }
  /// A reader's reference to the current value (stays unchanged after later writes).
  ValuePtr share() const { return slot_; }
  /// The value for in-place change; copied first if a reader still holds it. Requires peek().
  Value& mutate();
  void assign(std::shared_ptr<Value> value) { slot_ = std::move(value); }
  void remove() { slot_.reset(); }

 private:
  std::shared_ptr<Value>& slot_;
};

class Keyspace {
 public:
  static constexpr int kShardBits = 6;
  static constexpr std::size_t kShardCount = std::size_t{1} << kShardBits;
  /// Bytes a key's map node costs beyond the key's name, for memory accounting.
  static constexpr std::size_t kNodeOverhead = 64;
  /// Bytes a new key costs beyond its name and its value's contents: lets a write that creates
  /// many keys (MSET) count them before it stores anything.
  static constexpr std::size_t kKeyOverhead = kNodeOverhead + Value::kOverhead;

  Keyspace();
  Keyspace(const Keyspace&) = delete;
  Keyspace& operator=(const Keyspace&) = delete;

  /// Called (outside any lock) after each write to a key, for blocking waits.
  void set_write_listener(std::function<void(std::string_view key)> listener);
  /// 0 means unlimited.
  void set_max_memory(std::size_t bytes) noexcept { max_memory_.store(bytes); }
  std::size_t max_memory() const noexcept { return max_memory_.load(); }
  /// Bytes counted against --maxmemory: stored values plus outstanding reservations.
  std::size_t used_memory() const noexcept { return stored_memory() + reserved_memory(); }
  /// Bytes of the stored values alone.
  std::size_t stored_memory() const noexcept { return used_memory_.load(); }
  /// Bytes held by outstanding reservations (shared-memory loans not yet committed).
  std::size_t reserved_memory() const noexcept { return reserved_memory_->load(); }
  /// True when storing `extra` more bytes would exceed --maxmemory.
  bool over_limit(std::size_t extra) const noexcept;
  /// Counts `bytes` against --maxmemory until the returned reservation is released or destroyed;
  /// nullopt (nothing counted) when they would take used_memory() over the limit. For memory that
  /// will become a value later (a shared-memory loan): release the reservation once the value is
  /// stored, so the bytes are counted by exactly one of the two at any time but a moment.
  std::optional<MemoryReservation> reserve(std::size_t bytes);

  ValuePtr get(std::string_view key) const;
  bool exists(std::string_view key) const;
  /// Stores `value` under `key`, replacing any previous value.
  void set(std::string_view key, std::shared_ptr<Value> value);
  /// Stores `value` unless the key holds a value of another type: then nothing is stored and the
  /// result is false (the caller replies WRONGTYPE).
  bool set_unless_other_type(std::string_view key, std::shared_ptr<Value> value);
  /// Stores all pairs atomically: no reader sees some of them without the others.
  void set_many(std::vector<std::pair<std::string, std::shared_ptr<Value>>> entries);
  /// Removes the key; returns true when it existed.
  bool erase(std::string_view key);

  enum class MoveResult { kOk, kNoSuchKey, kTargetExists, kOverLimit };
  /// RENAME (replace = true) and RENAMENX semantics.
  MoveResult rename(std::string_view from, std::string_view to, bool replace = true);
  /// COPY semantics: the copy shares the source's immutable bytes, but is accounted as a value of
  /// its own (it becomes one as soon as either side changes). kOverLimit, with nothing stored,
  /// when the copy's bytes would take used_memory() over --maxmemory.
  MoveResult copy(std::string_view from, std::string_view to, bool replace);

  /// Replaces `key`'s value by `replacement` if the key still holds `expected`, without waking
  /// waiters or write listeners: for a change no reader can see (the same tensor's bytes moved
  /// into shared memory). False if the key changed meanwhile.
  bool replace_unseen(std::string_view key, const Value* expected,
                      std::shared_ptr<Value> replacement);
  /// Runs `fn(MutableSlot&)` with the key's shard locked and returns its result. `fn` must be
  /// short and must not call back into the keyspace.
  template <typename Fn>
  auto update(std::string_view key, Fn&& fn);

  std::size_t size() const;
  void clear();

  struct ScanPage {
    std::uint64_t next_cursor = 0;  ///< 0 when the iteration is complete
    std::vector<std::string> keys;
  };
  /// SCAN semantics: a key present for the whole iteration is returned at least once.
  ScanPage scan(std::uint64_t cursor, std::size_t count, std::string_view pattern,
                std::optional<ValueType> type) const;
  std::vector<std::string> keys(std::string_view pattern) const;
  /// Calls `fn(key, value)` for every entry; each shard's references are copied under its lock
  /// and `fn` runs without locks held.
  void for_each(const std::function<void(const std::string&, const ValuePtr&)>& fn) const;

 private:
  struct KeyId {
    std::uint64_t hash;
    std::string name;
  };
  struct KeyRef {
    std::uint64_t hash;
    std::string_view name;
  };
  struct KeyOrder {
    using is_transparent = void;
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const noexcept {
      if (a.hash != b.hash) return a.hash < b.hash;
      return std::string_view(a.name) < std::string_view(b.name);
    }
  };
  using Map = std::map<KeyId, std::shared_ptr<Value>, KeyOrder>;
  struct alignas(64) Shard {
    mutable std::mutex mutex;
    Map map;
  };

  static KeyRef key_ref(std::string_view key) noexcept;
  static std::size_t shard_of(std::uint64_t hash) noexcept { return hash >> (64 - kShardBits); }
  Shard& shard_for(const KeyRef& ref) const { return shards_[shard_of(ref.hash)]; }
  // Adjusts accounting for a slot changing from `before` to `after` bytes.
  void account(std::size_t before, std::size_t after) noexcept;
  static std::size_t entry_bytes(std::string_view key, const Value* value) noexcept;
  void notify(std::string_view key) const;
  // Stores into a locked shard; returns the bytes before/after for accounting.
  void store_locked(Shard& shard, const KeyRef& ref, std::shared_ptr<Value> value);
  void lock_pair(Shard& a, Shard& b, std::unique_lock<std::mutex>& la,
                 std::unique_lock<std::mutex>& lb) const;

  mutable std::array<Shard, kShardCount> shards_;
  std::atomic<std::size_t> used_memory_{0};  // stored values
  // Shared with the reservations it counts, which may outlive the keyspace.
  std::shared_ptr<std::atomic<std::size_t>> reserved_memory_ =
      std::make_shared<std::atomic<std::size_t>>(0);
  std::atomic<std::size_t> max_memory_{0};
  std::function<void(std::string_view)> write_listener_;
};

template <typename Fn>
auto Keyspace::update(std::string_view key, Fn&& fn) {
  KeyRef ref = key_ref(key);
  Shard& shard = shard_for(ref);
  std::unique_lock lock(shard.mutex);
  auto it = shard.map.find(ref);
  std::shared_ptr<Value> fresh;
  std::shared_ptr<Value>& slot = it == shard.map.end() ? fresh : it->second;
  const std::size_t before = entry_bytes(key, slot.get());
  MutableSlot mutable_slot(slot);
  auto finish = [&] {
    const std::size_t after = entry_bytes(key, slot.get());
    if (it == shard.map.end()) {
      if (fresh) shard.map.emplace(KeyId{ref.hash, std::string(key)}, std::move(fresh));
    } else if (!it->second) {
      shard.map.erase(it);
    }
    account(before, after);
    lock.unlock();
    if (before != 0 || after != 0) notify(key);
  };
  if constexpr (std::is_void_v<decltype(fn(mutable_slot))>) {
    fn(mutable_slot);
    finish();
  } else {
    auto result = fn(mutable_slot);
    finish();
    return result;
  }
}

}  // namespace slipstream::server
