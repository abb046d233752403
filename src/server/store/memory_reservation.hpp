// Bytes counted against --maxmemory before they are stored in the keyspace. A shared-memory loan
// holds one from the moment it is lent until it is committed (then the stored value counts the
// bytes) or given back, so memory a client is filling is never invisible to the limit.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <utility>

namespace slipstream::server {

/// Bytes added to a shared counter (Keyspace::reserve) and taken off again on release or
/// destruction. Move-only. Thread-safety: one owner at a time; the counter itself is atomic, and
/// shared so that a reservation may outlive the keyspace that granted it (a connection torn down
/// during shutdown).
class MemoryReservation {
 public:
  /// Holds nothing.
  MemoryReservation() = default;
  MemoryReservation(std::shared_ptr<std::atomic<std::size_t>> counter, std::size_t bytes) noexcept
      : counter_(std::move(counter)), bytes_(bytes) {}
  MemoryReservation(MemoryReservation&& other) noexcept
      : counter_(std::move(other.counter_)), bytes_(std::exchange(other.bytes_, 0)) {}
  MemoryReservation& operator=(MemoryReservation&& other) noexcept {
    if (this != &other) {
      release();
      counter_ = std::move(other.counter_);
      bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
  }
  MemoryReservation(const MemoryReservation&) = delete;
  MemoryReservation& operator=(const MemoryReservation&) = delete;
  ~MemoryReservation() { release(); }

  std::size_t bytes() const noexcept { return bytes_; }

  /// Adds what `other` holds (granted by the same keyspace) to this reservation; `other` then
  /// holds nothing.
  void absorb(MemoryReservation&& other) noexcept {
    if (other.bytes_ == 0) return;
    if (!counter_) counter_ = other.counter_;
    bytes_ += std::exchange(other.bytes_, 0);
    other.counter_.reset();
  }
  /// Gives `bytes` of it (at most what it holds) back now.
  void shrink(std::size_t bytes) noexcept {
    bytes = bytes < bytes_ ? bytes : bytes_;
    if (counter_ && bytes > 0) counter_->fetch_sub(bytes, std::memory_order_relaxed);
    bytes_ -= bytes;
  }

  /// Gives the bytes back now; the reservation then holds nothing.
  void release() noexcept {
    if (counter_ && bytes_ > 0) counter_->fetch_sub(bytes_, std::memory_order_relaxed);
    counter_.reset();
    bytes_ = 0;
  }

 private:
  std::shared_ptr<std::atomic<std::size_t>> counter_;
  std::size_t bytes_ = 0;
};

}  // namespace slipstream::server
