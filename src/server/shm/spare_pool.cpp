// Spare memfds made ahead of demand; see spare_pool.hpp.
#include "server/shm/spare_pool.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <functional>
#include <string>

#include "server/shm/shm.hpp"

namespace slipstream::server {
namespace {

constexpr std::size_t kPage = 4096;
constexpr std::size_t kHugePage = std::size_t{2} << 20;
// A spare's pages are allocated this much at a time, so a loan that needs its room waits for
// no more than one piece (a few milliseconds) before the spare is abandoned.
constexpr std::size_t kAllocationPiece = std::size_t{16} << 20;

std::size_t round_up(std::size_t bytes, std::size_t unit) {
  return (bytes + unit - 1) / unit * unit;
}

// Whether shmem_enabled (the bracketed word) lets the kernel back memfds with huge pages
// without an madvise on a mapping: "always", "within_size" or "force".
bool read_huge_pages() {
  std::ifstream file("/sys/kernel/mm/transparent_hugepage/shmem_enabled");
  std::string word;
  while (file >> word) {
    if (word.size() > 2 && word.front() == '[' && word.back() == ']') {
      word = word.substr(1, word.size() - 2);
      return word == "always" || word == "within_size" || word == "force";
    }
  }
  return false;
}

// A sized, size-sealed memfd with its pages allocated (not yet zeroed: shared memory clears a
// page when it is first read or partly written, so a loan filled whole is never cleared twice).
// -1 when the kernel refuses or `abandon` is set before it is done; an fallocate the file system
// cannot do still leaves a usable file.
int make_spare(std::size_t file_size, const std::atomic<bool>& abandon) {
  int fd = ::memfd_create("slipstream-loan", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return -1;
  if (::ftruncate(fd, static_cast<off_t>(file_size)) != 0 ||
      ::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) != 0) {
    ::close(fd);
    return -1;
  }
  for (std::size_t offset = 0; offset < file_size; offset += kAllocationPiece) {
    if (abandon.load(std::memory_order_relaxed)) {
      ::close(fd);
      return -1;
    }
    const std::size_t piece = std::min(kAllocationPiece, file_size - offset);
    if (::fallocate(fd, 0, static_cast<off_t>(offset), static_cast<off_t>(piece)) != 0) {
      if (errno != ENOSPC) break;  // not supported here: the pages come when first touched
      ::close(fd);  // no memory to hold it: no spare rather than a loan that fails when filled
      return -1;
    }
  }
  return fd;
}

}  // namespace

bool ShmSparePool::huge_pages() noexcept {
  static const bool enabled = [] {
    try {
      return read_huge_pages();
    } catch (...) {
      return false;
    }
  }();
  return enabled;
}

std::size_t ShmSparePool::file_size_for(std::size_t bytes) noexcept {
  return round_up(bytes, huge_pages() && bytes >= kHugePage ? kHugePage : kPage);
}

ShmSparePool::ShmSparePool(std::shared_ptr<ShmCounters> counters, std::size_t capacity,
                           std::size_t max_files)
    : counters_(std::move(counters)), capacity_(capacity), max_files_(max_files) {
  thread_ = std::thread([this] { run(); });
}

ShmSparePool::~ShmSparePool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
  std::lock_guard lock(mutex_);
  drop_all_locked();
}

int ShmSparePool::take(std::size_t file_size, bool miss_makes_one) {
  int fd = -1;
  {
    std::lock_guard lock(mutex_);
    SizeClass& size_class = classes_[file_size];
    size_class.last_asked = std::chrono::steady_clock::now();
    if (!size_class.spares.empty()) {
      fd = size_class.spares.back();
      size_class.spares.pop_back();
    }
  }
  if (fd >= 0) {
    // Its room and file stay counted (in used_bytes and files): the loan holds them now.
    counters_->spare_bytes.fetch_sub(file_size, std::memory_order_relaxed);
    counters_->spares.fetch_sub(1, std::memory_order_relaxed);
    counters_->spares_ready.fetch_sub(1, std::memory_order_relaxed);
    counters_->pool_hits.fetch_add(1, std::memory_order_relaxed);
  } else if (miss_makes_one) {
    counters_->pool_misses.fetch_add(1, std::memory_order_relaxed);
  }
  wake_.notify_one();
  return fd;
}

void ShmSparePool::close_locked(std::size_t file_size, SizeClass& size_class) {
  for (int fd : size_class.spares) ::close(fd);
  const std::size_t count = size_class.spares.size();
  size_class.spares.clear();
  if (count == 0) return;
  const std::size_t bytes = count * file_size;
  counters_->spare_bytes.fetch_sub(bytes, std::memory_order_relaxed);
  counters_->spares.fetch_sub(count, std::memory_order_relaxed);
  counters_->spares_ready.fetch_sub(count, std::memory_order_relaxed);
  counters_->used_bytes.fetch_sub(bytes, std::memory_order_relaxed);
  counters_->files.fetch_sub(count, std::memory_order_relaxed);
}

std::size_t ShmSparePool::drop_all_locked() {
  std::size_t freed = 0;
  for (auto& [file_size, size_class] : classes_) {
    freed += file_size * size_class.spares.size();
    close_locked(file_size, size_class);
  }
  return freed;
}

void ShmSparePool::give_way(const std::function<void()>& retry) {
  std::unique_lock lock(mutex_);
  ++giving_way_;  // the thread reserves no room for a new spare until retry has run
  std::size_t freed = 0;
  if (making_ > 0) {
    // Its room was reserved when the thread began it; the thread gives it back once it sees the
    // flag (after the piece it is allocating).
    freed += making_;
    abandon_.store(true, std::memory_order_relaxed);
    made_.wait(lock, [this] { return making_ == 0; });
  }
  freed += drop_all_locked();
  if (freed > 0) retry();
  --giving_way_;
  lock.unlock();
  wake_.notify_all();
}

void ShmSparePool::age_locked(std::chrono::steady_clock::time_point now) {
  std::vector<std::pair<std::chrono::steady_clock::time_point, std::size_t>> by_age;
  for (auto& [file_size, size_class] : classes_) by_age.emplace_back(size_class.last_asked, file_size);
  std::sort(by_age.begin(), by_age.end(), std::greater<>());  // most recently asked first
  for (std::size_t i = 0; i < by_age.size(); ++i) {
    if (i < kMaxClasses && now - by_age[i].first < kClassLifetime) continue;
    auto it = classes_.find(by_age[i].second);
    close_locked(it->first, it->second);
    classes_.erase(it);
  }
}

std::size_t ShmSparePool::wanted_locked(const std::set<std::size_t>& refused) const {
  std::size_t wanted = 0;
  std::chrono::steady_clock::time_point latest{};
  for (const auto& [file_size, size_class] : classes_) {
    if (size_class.spares.size() < kSparesPerClass && !refused.contains(file_size) &&
        size_class.last_asked >= latest) {
      wanted = file_size;
      latest = size_class.last_asked;
    }
  }
  return wanted;
}

void ShmSparePool::run() {
  std::unique_lock lock(mutex_);
  std::set<std::size_t> refused;  // classes that did not fit: not retried until the next wake
  while (!stopping_) {
    if (giving_way_ > 0) {
      wake_.wait(lock, [this] { return giving_way_ == 0 || stopping_; });
      continue;
    }
    age_locked(std::chrono::steady_clock::now());
    const std::size_t file_size = wanted_locked(refused);
    if (file_size == 0) {
      // Woken by a take (which may free room or ask for a class) or to age the classes.
      wake_.wait_for(lock, std::chrono::seconds(1));
      refused.clear();
      continue;
    }
    // Room: a quarter of the pool and of the file budget at most, and only while the pool,
    // spares included, stays under three quarters full. One compare-and-swap on used_bytes
    // (which counts spares too), so a loan racing with the thread never overcommits the pool.
    std::size_t used = counters_->used_bytes.load(std::memory_order_relaxed);
    bool fits;
    do {
      fits = counters_->spare_bytes.load(std::memory_order_relaxed) + file_size <= capacity_ / 4 &&
             used + file_size <= capacity_ / 4 * 3 &&
             counters_->files.load(std::memory_order_relaxed) + 1 <= max_files_ / 4 * 3 &&
             counters_->spares.load(std::memory_order_relaxed) + 1 <= max_files_ / 4;
    } while (fits && !counters_->used_bytes.compare_exchange_weak(used, used + file_size,
                                                                  std::memory_order_relaxed));
    if (!fits) {
      refused.insert(file_size);
      continue;
    }
    counters_->files.fetch_add(1, std::memory_order_relaxed);
    counters_->spare_bytes.fetch_add(file_size, std::memory_order_relaxed);
    counters_->spares.fetch_add(1, std::memory_order_relaxed);
    making_ = file_size;
    lock.unlock();
    const int fd = make_spare(file_size, abandon_);
    lock.lock();
    making_ = 0;
    const bool abandoned = abandon_.exchange(false, std::memory_order_relaxed);
    auto it = classes_.find(file_size);
    if (fd >= 0 && !abandoned && it != classes_.end() && !stopping_) {
      it->second.spares.push_back(fd);
      counters_->spares_ready.fetch_add(1, std::memory_order_relaxed);
      made_.notify_all();
      continue;
    }
    if (fd >= 0) ::close(fd);
    counters_->spare_bytes.fetch_sub(file_size, std::memory_order_relaxed);
    counters_->spares.fetch_sub(1, std::memory_order_relaxed);
    counters_->used_bytes.fetch_sub(file_size, std::memory_order_relaxed);
    counters_->files.fetch_sub(1, std::memory_order_relaxed);
    made_.notify_all();  // after its room is given back: a give_way waiting on it retries now
    if (fd < 0 && !abandoned) refused.insert(file_size);  // the kernel refused: not before a wake
  }
}

}  // namespace slipstream::server
