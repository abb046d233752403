// Registry of parked blocking waits; see waits.hpp.
#include "server/store/waits.hpp"

namespace slipstream::server {

void WaitRegistry::add(const std::shared_ptr<Wait>& wait) {
  {
    std::lock_guard lock(mutex_);
    for (const auto& key : wait->keys) by_key_.emplace(key, wait);
    count_.fetch_add(1);
  }
  if (wait->ready()) {
    if (finish(wait)) wait->complete(false);
  }
}

void WaitRegistry::notify(std::string_view key) {
  if (count_.load(std::memory_order_acquire) == 0) return;
  std::vector<std::shared_ptr<Wait>> candidates;
  {
    std::lock_guard lock(mutex_);
    auto [begin, end] = by_key_.equal_range(std::string(key));
    for (auto it = begin; it != end; ++it) candidates.push_back(it->second);
  }
  for (const auto& wait : candidates) {
    if (!wait->finished.load() && wait->ready() && finish(wait)) wait->complete(false);
  }
}

void WaitRegistry::expire(const std::shared_ptr<Wait>& wait) {
  if (finish(wait)) wait->complete(true);
}

void WaitRegistry::cancel(const std::shared_ptr<Wait>& wait) { finish(wait); }

bool WaitRegistry::finish(const std::shared_ptr<Wait>& wait) {
  if (wait->finished.exchange(true)) return false;
  std::lock_guard lock(mutex_);
  for (const auto& key : wait->keys) {
    auto [begin, end] = by_key_.equal_range(key);
    for (auto it = begin; it != end; ++it) {
      if (it->second == wait) {
        by_key_.erase(it);
        break;
      }
    }
  }
  count_.fetch_sub(1);
  return true;
}

}  // namespace slipstream::server
