// Blocking waits (SS.WAIT, SS.WAITLEN): park a request until a condition on some keys holds,
// re-checked only when one of those keys is written. No polling and no thread is held.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace slipstream::server {

/// One parked request.
struct Wait {
  std::vector<std::string> keys;
  /// Checked after every write to one of `keys`; may read the keyspace. Must be cheap.
  std::function<bool()> ready;
  /// Called exactly once: timed_out is false when `ready` held, true on timeout.
  std::function<void(bool timed_out)> complete;
  std::atomic<bool> finished{false};
};

/// Thread-safe registry of parked waits, keyed by the keys they watch.
class WaitRegistry {
 public:
  /// Registers `wait` and then checks it once, so a write that raced with registration is never
  /// missed: either notify() sees the registered wait or this check sees the written key.
  void add(const std::shared_ptr<Wait>& wait);
  /// Re-checks the waits on `key`. Cheap (one atomic load) when nothing waits.
  void notify(std::string_view key);
  /// Ends `wait` with timed_out = true (if it has not finished).
  void expire(const std::shared_ptr<Wait>& wait);
  /// Withdraws `wait` without completing it (its connection closed).
  void cancel(const std::shared_ptr<Wait>& wait);
  std::size_t parked() const noexcept { return count_.load(); }

 private:
  // Returns true if this call finished the wait (and removed it from the registry).
  bool finish(const std::shared_ptr<Wait>& wait);

  mutable std::mutex mutex_;
  std::unordered_multimap<std::string, std::shared_ptr<Wait>> by_key_;
  std::atomic<std::size_t> count_{0};
};

}  // namespace slipstream::server
