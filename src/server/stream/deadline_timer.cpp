// A thread that runs actions at deadlines; see deadline_timer.hpp.
#include "server/stream/deadline_timer.hpp"

#include <utility>

namespace slipstream::server {

DeadlineTimer::~DeadlineTimer() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void DeadlineTimer::schedule(Clock::time_point deadline, std::function<void()> action) {
  {
    std::lock_guard lock(mutex_);
    actions_.emplace(deadline, std::move(action));
    if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
  }
  changed_.notify_all();
}

void DeadlineTimer::run() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    if (actions_.empty()) {
      changed_.wait(lock);
      continue;
    }
    auto first = actions_.begin();
    if (Clock::now() < first->first) {
      changed_.wait_until(lock, first->first);
      continue;
    }
    std::function<void()> action = std::move(first->second);
    actions_.erase(first);
    lock.unlock();
    try {
      action();
    } catch (...) {  // an action that fails must not end the server
    }
    lock.lock();
  }
}

}  // namespace slipstream::server
