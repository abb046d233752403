// Shared-memory segments, loans and the pool; see shm.hpp.
#include "server/shm/shm.hpp"

#include "common/sealed_file.hpp"

#include <random>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace slipstream::server {
namespace {

constexpr unsigned kSizeSeals = F_SEAL_SHRINK | F_SEAL_GROW;
constexpr unsigned kAllSeals = F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

// Raises the soft descriptor limit to the hard one (each segment holds a descriptor) and returns
// how many memfds the pool may keep open: half the limit, the rest for connections and files.
std::size_t file_budget() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return 512;
  if (limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &limit);
    ::getrlimit(RLIMIT_NOFILE, &limit);
  }
  if (limit.rlim_cur == RLIM_INFINITY) return std::size_t{1} << 20;
  return static_cast<std::size_t>(limit.rlim_cur) / 2;
}

// Maps a write-sealed memfd read-only. Kernels before 6.7 refuse a shared mapping of a
// write-sealed memfd opened read-write even without PROT_WRITE; a private read-only mapping shows
// the same pages (nothing can change them, so copy-on-write never happens).
void* map_read_only(int fd, std::size_t size) {
  void* mapping = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  if (mapping == MAP_FAILED && (errno == EPERM || errno == EACCES)) {
    mapping = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  }
  return mapping;
}

}  // namespace

ShmReservation::~ShmReservation() {
  if (counters_ && bytes_ > 0) counters_->used_bytes.fetch_sub(bytes_, std::memory_order_relaxed);
  if (counters_) counters_->files.fetch_sub(1, std::memory_order_relaxed);
}

ShmSegment::ShmSegment(int fd, void* mapping, std::size_t size, ShmReservation reservation,
                       std::shared_ptr<ShmCounters> counters)
    : fd_(fd),
      mapping_(mapping),
      size_(size),
      reservation_(std::move(reservation)),
      counters_(std::move(counters)) {
  counters_->segments.fetch_add(1, std::memory_order_relaxed);
}

ShmSegment::~ShmSegment() {
  ::munmap(mapping_, size_);
  ::close(fd_);
  counters_->segments.fetch_sub(1, std::memory_order_relaxed);
}

ShmLoan::ShmLoan(int fd, std::size_t size, std::size_t file_size, ShmReservation reservation,
                 MemoryReservation memory, std::shared_ptr<ShmCounters> counters)
    : fd_(fd),
      size_(size),
      file_size_(file_size),
      reservation_(std::move(reservation)),
      memory_(std::move(memory)),
      counters_(std::move(counters)) {
  counters_->loans.fetch_add(1, std::memory_order_relaxed);
}

ShmLoan::~ShmLoan() {
  if (fd_ >= 0) ::close(fd_);
  counters_->loans.fetch_sub(1, std::memory_order_relaxed);
  if (ahead_bytes_ > 0) {
    counters_->loans_ahead.fetch_sub(1, std::memory_order_relaxed);
    counters_->loans_ahead_bytes.fetch_sub(ahead_bytes_, std::memory_order_relaxed);
  }
}

std::uint64_t random_id_start() {
  std::random_device random;
  const std::uint64_t high = (static_cast<std::uint64_t>(random()) << 8) ^ random();
  return ((high & 0xFFFFFFFFFFULL) << 20) | 1;
}

SharedMemory::SharedMemory(std::size_t capacity)
    : capacity_(capacity),
      max_files_(capacity > 0 ? file_budget() : 0),
      counters_(std::make_shared<ShmCounters>()),
      spares_(capacity > 0 ? std::make_unique<ShmSparePool>(counters_, capacity_, max_files_)
                           : nullptr) {}

std::optional<ShmReservation> SharedMemory::reserve(std::size_t bytes, std::string* error) {
  std::optional<ShmReservation> reservation = try_reserve(bytes, error);
  if (reservation || !spares_) return reservation;
  // Spares are made ahead for speed, never at the cost of a value: drop them (and the one being
  // made) and try again before the thread can reserve room for another.
  spares_->give_way([&] {
    counters_->total_refusals.fetch_sub(1, std::memory_order_relaxed);
    reservation.reset();
    if (auto retried = try_reserve(bytes, error)) reservation.emplace(std::move(*retried));
  });
  return reservation;
}

std::optional<ShmReservation> SharedMemory::try_reserve(std::size_t bytes, std::string* error) {
  if (counters_->files.fetch_add(1, std::memory_order_relaxed) >= max_files_) {
    counters_->files.fetch_sub(1, std::memory_order_relaxed);
    counters_->total_refusals.fetch_add(1, std::memory_order_relaxed);
    *error = "SHMFULL shared-memory pool holds its most segments (" + std::to_string(max_files_) +
             ")";
    return std::nullopt;
  }
  std::size_t used = counters_->used_bytes.load(std::memory_order_relaxed);
  do {
    if (bytes > capacity_ - std::min(used, capacity_)) {
      counters_->files.fetch_sub(1, std::memory_order_relaxed);
      counters_->total_refusals.fetch_add(1, std::memory_order_relaxed);
      *error = "SHMFULL shared-memory pool is full: " + std::to_string(bytes) + " bytes wanted, " +
               std::to_string(capacity_ - std::min(used, capacity_)) + " of " +
               std::to_string(capacity_) + " free (--shm-size)";
      return std::nullopt;
    }
  } while (!counters_->used_bytes.compare_exchange_weak(used, used + bytes,
                                                        std::memory_order_relaxed));
  return ShmReservation(counters_, bytes);
}

std::unique_ptr<ShmLoan> SharedMemory::lend(std::size_t size, MemoryReservation memory,
                                            ShmFailure* failure, std::string* error) {
  const std::size_t file_size = ShmSparePool::file_size_for(size);
  if (int spare = spares_ ? spares_->take(file_size) : -1; spare >= 0) {
    *failure = ShmFailure::kNone;  // its room and file were counted when it was made
    return std::make_unique<ShmLoan>(spare, size, file_size, ShmReservation(counters_, file_size),
                                     std::move(memory), counters_);
  }
  *failure = ShmFailure::kFull;
  auto reservation = reserve(file_size, error);
  if (!reservation) return nullptr;
  *failure = ShmFailure::kSystem;
  // No name anyone could guess or open: the descriptor is the only way in, and it is handed only
  // to the client that asked, over its authenticated socket.
  int fd = ::memfd_create("slipstream-loan", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) {
    *error = "ERR " + errno_text("memfd_create");
    return nullptr;
  }
  // Sealing the size now means a client can never shrink the file under the server's mapping.
  if (::ftruncate(fd, static_cast<off_t>(file_size)) != 0 ||
      ::fcntl(fd, F_ADD_SEALS, kSizeSeals) != 0) {
    *error = "ERR " + errno_text("sizing the loan");
    ::close(fd);
    return nullptr;
  }
  *failure = ShmFailure::kNone;
  return std::make_unique<ShmLoan>(fd, size, file_size, std::move(*reservation), std::move(memory),
                                   counters_);
}

std::unique_ptr<ShmLoan> SharedMemory::lend_ahead(std::size_t size, MemoryReservation memory) {
  if (!spares_) return nullptr;
  const std::size_t file_size = ShmSparePool::file_size_for(size);
  // Claim the share first, so concurrent commits on other I/O threads cannot overshoot it.
  std::size_t held = counters_->loans_ahead_bytes.load(std::memory_order_relaxed);
  do {
    if (held + file_size > capacity_ / kAheadShare) return nullptr;
  } while (!counters_->loans_ahead_bytes.compare_exchange_weak(held, held + file_size,
                                                                 std::memory_order_relaxed));
  const int spare = spares_->take(file_size, false);
  if (spare < 0) {
    counters_->loans_ahead_bytes.fetch_sub(file_size, std::memory_order_relaxed);
    return nullptr;
  }
  std::unique_ptr<ShmLoan> loan;
  try {
    loan = std::make_unique<ShmLoan>(spare, size, file_size, ShmReservation(counters_, file_size),
                                     std::move(memory), counters_);
  } catch (...) {  // its room and file were given back with the reservation
    ::close(spare);
    counters_->loans_ahead_bytes.fetch_sub(file_size, std::memory_order_relaxed);
    throw;
  }
  loan->ahead_bytes_ = file_size;
  counters_->loans_ahead.fetch_add(1, std::memory_order_relaxed);
  return loan;
}

std::optional<Buffer> SharedMemory::seal(std::unique_ptr<ShmLoan> loan, std::string* error) {
  const int fd = loan->fd_;
  // F_SEAL_WRITE fails with EBUSY while any process maps the file writable: once it succeeds,
  // nobody (the client included) can change the bytes again. F_SEAL_SEAL keeps the set final.
  if (::fcntl(fd, F_ADD_SEALS, kAllSeals) != 0) {
    *error = errno == EBUSY ? "ERR the loan is still mapped writable; unmap it before committing"
                            : "ERR cannot seal the loan: " + std::string(std::strerror(errno));
    return std::nullopt;
  }
  int seals = ::fcntl(fd, F_GET_SEALS);
  struct stat info {};
  if (seals < 0 || (static_cast<unsigned>(seals) & kAllSeals) != kAllSeals ||
      ::fstat(fd, &info) != 0 || static_cast<std::size_t>(info.st_size) != loan->file_size_) {
    *error = "ERR the loan's file was altered";
    return std::nullopt;
  }
  void* mapping = map_read_only(fd, loan->size_);
  if (mapping == MAP_FAILED) {
    *error = "ERR " + errno_text("mapping the committed loan");
    return std::nullopt;
  }
  ShmReservation reservation = std::move(*loan->reservation_);
  loan->reservation_.reset();
  loan->fd_ = -1;  // now the segment's
  counters_->total_commits.fetch_add(1, std::memory_order_relaxed);
  return segment_buffer(fd, mapping, loan->size_, std::move(reservation));
}

Buffer SharedMemory::segment_buffer(int fd, void* mapping, std::size_t size,
                                    ShmReservation reservation) {
  auto segment =
      std::make_unique<ShmSegment>(fd, mapping, size, std::move(reservation), counters_);
  return Buffer::adopt(static_cast<char*>(mapping), size, std::move(segment));
}

std::optional<Buffer> SharedMemory::copy_in(std::string_view bytes, ShmFailure* failure,
                                            std::string* error) {
  *failure = ShmFailure::kFull;
  auto reservation = reserve(bytes.size(), error);
  if (!reservation) return std::nullopt;
  *failure = ShmFailure::kSystem;
  int fd = ::memfd_create("slipstream-copy", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) {
    *error = "ERR " + errno_text("memfd_create");
    return std::nullopt;
  }
  std::size_t written = 0;
  while (written < bytes.size()) {
    ssize_t n = ::pwrite(fd, bytes.data() + written, bytes.size() - written,
                         static_cast<off_t>(written));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *error = "ERR " + errno_text("writing shared memory");
      ::close(fd);
      return std::nullopt;
    }
    written += static_cast<std::size_t>(n);
  }
  void* mapping = MAP_FAILED;
  if (::fcntl(fd, F_ADD_SEALS, kAllSeals) == 0) mapping = map_read_only(fd, bytes.size());
  if (mapping == MAP_FAILED) {
    *error = "ERR " + errno_text("sealing shared memory");
    ::close(fd);
    return std::nullopt;
  }
  *failure = ShmFailure::kNone;
  return segment_buffer(fd, mapping, bytes.size(), std::move(*reservation));
}

std::optional<Buffer> SharedMemory::adopt_sealed(const Buffer& buffer, ShmFailure* failure,
                                                 std::string* error) {
  const auto* sealed = dynamic_cast<const SealedFile*>(buffer.storage());
  *failure = ShmFailure::kSystem;
  if (sealed == nullptr || buffer.empty()) {
    *error = "ERR not a sealed memory file";
    return std::nullopt;
  }
  *failure = ShmFailure::kFull;
  auto reservation = reserve(buffer.size(), error);
  if (!reservation) return std::nullopt;
  *failure = ShmFailure::kSystem;
  const int fd = ::fcntl(sealed->fd(), F_DUPFD_CLOEXEC, 0);
  if (fd < 0) {
    *error = "ERR " + errno_text("adopting a sealed file");
    return std::nullopt;
  }
  void* mapping = map_read_only(fd, buffer.size());
  if (mapping == MAP_FAILED) {
    *error = "ERR " + errno_text("mapping a sealed file");
    ::close(fd);
    return std::nullopt;
  }
  *failure = ShmFailure::kNone;
  return segment_buffer(fd, mapping, buffer.size(), std::move(*reservation));
}

ShmWriterSegment::ShmWriterSegment(std::uint64_t id, int fd, void* mapping, std::size_t size,
                                   ShmReservation reservation, MemoryReservation memory,
                                   std::shared_ptr<ShmCounters> counters)
    : id_(id),
      fd_(fd),
      mapping_(mapping),
      size_(size),
      reservation_(std::move(reservation)),
      memory_(std::move(memory)),
      counters_(std::move(counters)) {
  counters_->writer_segments.fetch_add(1, std::memory_order_relaxed);
}

ShmWriterSegment::~ShmWriterSegment() {
  ::munmap(mapping_, size_);
  ::close(fd_);
  counters_->writer_segments.fetch_sub(1, std::memory_order_relaxed);
}

bool ShmWriterSegment::seal_for_readers(std::string* error) {
  if (sealed_) return true;
  if (::fcntl(fd_, F_ADD_SEALS, F_SEAL_FUTURE_WRITE | F_SEAL_SEAL) != 0) {
    *error = errno_text("sealing a stream segment against other writers");
    return false;
  }
  sealed_ = true;
  return true;
}

std::shared_ptr<ShmWriterSegment> SharedMemory::create_writer_segment(std::size_t size,
                                                                      MemoryReservation memory,
                                                                      ShmFailure* failure,
                                                                      std::string* error) {
  *failure = ShmFailure::kFull;
  auto reservation = reserve(size, error);
  if (!reservation) return nullptr;
  *failure = ShmFailure::kSystem;
  int fd = ::memfd_create("slipstream-stream", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) {
    *error = "ERR " + errno_text("memfd_create");
    return nullptr;
  }
  // The size is sealed before the writer ever sees the file, so it can never shrink it under the
  // server's (or a reader's) mapping.
  void* mapping = MAP_FAILED;
  if (::ftruncate(fd, static_cast<off_t>(size)) == 0 &&
      ::fcntl(fd, F_ADD_SEALS, kSizeSeals) == 0) {
    mapping = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  }
  if (mapping == MAP_FAILED) {
    *error = "ERR " + errno_text("sizing a stream segment");
    ::close(fd);
    return nullptr;
  }
  *failure = ShmFailure::kNone;
  return std::make_shared<ShmWriterSegment>(
      next_writer_segment_.fetch_add(1, std::memory_order_relaxed), fd, mapping, size,
      std::move(*reservation), std::move(memory), counters_);
}

const ShmSegment* SharedMemory::segment_of(const Buffer& buffer) noexcept {
  return dynamic_cast<const ShmSegment*>(buffer.storage());
}

ShmSession::ShmSession(std::shared_ptr<ShmCounters> counters) : counters_(std::move(counters)) {
  counters_->attached_clients.fetch_add(1, std::memory_order_relaxed);
}

ShmSession::~ShmSession() {
  counters_->leases.fetch_sub(leases_.size(), std::memory_order_relaxed);
  leases_.clear();
  loans_.clear();
  counters_->attached_clients.fetch_sub(1, std::memory_order_relaxed);  // last: all given back
}

std::uint64_t ShmSession::add_loan(std::unique_ptr<ShmLoan> loan) {
  std::uint64_t id = next_id_++;
  loans_.emplace(id, std::move(loan));
  return id;
}

std::unique_ptr<ShmLoan> ShmSession::take_loan(std::uint64_t id) {
  auto it = loans_.find(id);
  if (it == loans_.end()) return nullptr;
  auto loan = std::move(it->second);
  loans_.erase(it);
  return loan;
}

std::uint64_t ShmSession::add_lease(std::shared_ptr<const void> owner) {
  std::uint64_t id = next_id_++;
  leases_.emplace(id, std::move(owner));
  counters_->leases.fetch_add(1, std::memory_order_relaxed);
  return id;
}

void ShmSession::note_passed(std::uint64_t segment) {
  if (passed_segments_.size() >= kPassedSegmentsMax) passed_segments_.clear();
  passed_segments_.insert(segment);
}

bool ShmSession::release(std::uint64_t id) {
  if (leases_.erase(id) > 0) {
    counters_->leases.fetch_sub(1, std::memory_order_relaxed);
    return true;
  }
  return loans_.erase(id) > 0;
}

}  // namespace slipstream::server
