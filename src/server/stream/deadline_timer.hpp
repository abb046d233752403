// A thread that runs actions at deadlines: the step timeouts of streams, which belong to no
// connection (the writer that began a step may be gone when it times out).
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

namespace slipstream::server {

/// Runs each scheduled action once, on its own thread, at or after its deadline, oldest deadline
/// first. The thread starts with the first schedule(). Thread-safe.
class DeadlineTimer {
 public:
  using Clock = std::chrono::steady_clock;

  DeadlineTimer() = default;
  /// Stops the thread; actions not yet due never run.
  ~DeadlineTimer();
  DeadlineTimer(const DeadlineTimer&) = delete;
  DeadlineTimer& operator=(const DeadlineTimer&) = delete;

  /// Runs `action` at `deadline`. The action runs without the timer's lock held and must not
  /// throw (what it throws is dropped).
  void schedule(Clock::time_point deadline, std::function<void()> action);

 private:
  void run();

  std::mutex mutex_;
  std::condition_variable changed_;
  std::multimap<Clock::time_point, std::function<void()>> actions_;  // guarded by mutex_
  bool stopping_ = false;                                            // guarded by mutex_
  std::thread thread_;                                               // started under mutex_
};

}  // namespace slipstream::server
