// Memfds made ahead of demand for the shared-memory pool (SharedMemory::lend): a loan's file is
// created, sized, size-sealed and its pages allocated by a background thread, so a put's critical
// path pays for none of it. Size classes are learnt from the loans asked for (a simulation puts
// the same fields step after step): the thread keeps a few spares of each size asked for
// recently, within a share of the pool's room and file budget, and drops a class nobody has
// asked for in a while. Spares are not values: they are dropped first when a loan or segment
// needs their room. See docs/architecture.md, "Shared-memory fast path".
//
// Thread-safety: every member may be called from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace slipstream::server {

struct ShmCounters;

class ShmSparePool {
 public:
  /// Spares kept of each size class, and how many classes are kept.
  static constexpr std::size_t kSparesPerClass = 2;
  static constexpr std::size_t kMaxClasses = 4;
  /// A class nobody asked for in this long loses its spares.
  static constexpr std::chrono::seconds kClassLifetime{10};

  /// `capacity` and `max_files` are the pool's (--shm-size and the descriptor budget); spares
  /// take at most a quarter of either, and only while the pool is less than three quarters full.
  ShmSparePool(std::shared_ptr<ShmCounters> counters, std::size_t capacity,
               std::size_t max_files);
  ~ShmSparePool();  // stops the thread and closes the spares
  ShmSparePool(const ShmSparePool&) = delete;
  ShmSparePool& operator=(const ShmSparePool&) = delete;

  /// The file size a loan of `bytes` gets: whole pages, and whole huge pages from 2 MiB up where
  /// the kernel backs shared memory with transparent huge pages.
  static std::size_t file_size_for(std::size_t bytes) noexcept;
  /// True when the kernel gives shared memory transparent huge pages (shmem_enabled).
  static bool huge_pages() noexcept;

  /// A spare memfd of `file_size` bytes (sized, size-sealed, pages allocated), or -1 when none
  /// is ready. Records the demand either way, so the thread makes the next one. The caller owns
  /// the descriptor; its bytes and file are no longer counted as spare. A hit counts in
  /// pool_hits; a miss in pool_misses when `miss_makes_one` (the caller makes the file itself).
  int take(std::size_t file_size, bool miss_makes_one = true);
  /// Makes way for a loan or segment that needs the spares' room: closes every spare, stops the
  /// one being made (and waits for the thread to give its room back), then runs `retry` before
  /// the thread may reserve room for another. `retry` is not run when there was no spare to
  /// free (the caller's refusal stands).
  void give_way(const std::function<void()>& retry);

 private:
  struct SizeClass {
    std::vector<int> spares;
    std::chrono::steady_clock::time_point last_asked;
  };

  void run();
  // Under the lock: the class (file size) asked for most recently that lacks spares and is not
  // in `refused`, or 0.
  std::size_t wanted_locked(const std::set<std::size_t>& refused) const;
  // Under the lock: closes the spares of classes asked for longest ago beyond kMaxClasses and of
  // those past kClassLifetime.
  void age_locked(std::chrono::steady_clock::time_point now);
  void close_locked(std::size_t file_size, SizeClass& size_class);
  // Under the lock: closes every spare; returns the bytes freed.
  std::size_t drop_all_locked();

  std::shared_ptr<ShmCounters> counters_;
  std::size_t capacity_;
  std::size_t max_files_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable made_;               // the spare being made is done or abandoned
  std::map<std::size_t, SizeClass> classes_;  // guarded by mutex_
  bool stopping_ = false;                      // guarded by mutex_
  std::size_t making_ = 0;       // guarded by mutex_: file size of the spare being made, or 0
  std::size_t giving_way_ = 0;   // guarded by mutex_: give_way calls in progress (no new spares)
  std::atomic<bool> abandon_{false};  // set under mutex_: the spare being made is not wanted
  std::thread thread_;
};

}  // namespace slipstream::server
