// An owning byte buffer that can be allocated without zero-filling: bulk payloads are read from the
// socket straight into one and then kept as the stored value, so the bytes are never copied again.
// A buffer may also own memory it did not allocate (a read-only shared-memory mapping, say) through
// a BufferStorage that releases it: the rest of the code sees the same data()/size()/view().
#pragma once

#include <cstddef>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace slipstream {

/// Owner of memory adopted by a Buffer (see Buffer::adopt). Its destructor releases the memory.
/// Subclasses may carry more (a shared-memory segment keeps its file descriptor).
class BufferStorage {
 public:
  virtual ~BufferStorage() = default;
};

class Buffer {
 public:
  Buffer() = default;
  Buffer(Buffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)),
        size_(std::exchange(other.size_, 0)),
        storage_(std::move(other.storage_)) {}
  Buffer& operator=(Buffer&& other) noexcept {
    if (this != &other) {
      release();
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
      storage_ = std::move(other.storage_);
    }
    return *this;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { release(); }

  /// A buffer of `size` bytes whose contents are unspecified until written.
  static Buffer uninitialized(std::size_t size) {
    Buffer buffer;
    if (size > 0) buffer.data_ = new char[size];
    buffer.size_ = size;
    return buffer;
  }
  /// As uninitialized(), but returns nothing instead of throwing when the memory cannot be had:
  /// for sizes a peer declared, which must never end the process.
  static std::optional<Buffer> try_uninitialized(std::size_t size) noexcept {
    Buffer buffer;
    if (size > 0) {
      buffer.data_ = new (std::nothrow) char[size];
      if (buffer.data_ == nullptr) return std::nullopt;
    }
    buffer.size_ = size;
    return buffer;
  }
  static Buffer copy_of(std::string_view bytes) {
    Buffer buffer = uninitialized(bytes.size());
    if (!bytes.empty()) std::memcpy(buffer.data(), bytes.data(), bytes.size());
    return buffer;
  }
  /// A buffer over `size` bytes at `data` that `storage` owns and releases when the buffer goes.
  /// The memory may be read-only: then data() must not be written through (stored values never
  /// are).
  static Buffer adopt(char* data, std::size_t size, std::unique_ptr<BufferStorage> storage) {
    Buffer buffer;
    buffer.data_ = data;
    buffer.size_ = size;
    buffer.storage_ = std::move(storage);
    return buffer;
  }
  /// A heap copy (whatever this buffer's storage).
  Buffer clone() const { return copy_of(view()); }

  char* data() noexcept { return data_; }
  const char* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  std::string_view view() const noexcept { return {data_, size_}; }
  std::string str() const { return std::string(view()); }
  /// The owner of adopted memory; nullptr for heap memory allocated by the buffer itself.
  const BufferStorage* storage() const noexcept { return storage_.get(); }

 private:
  void release() noexcept {
    if (!storage_) delete[] data_;
    storage_.reset();
    data_ = nullptr;
    size_ = 0;
  }

  char* data_ = nullptr;
  std::size_t size_ = 0;
  std::unique_ptr<BufferStorage> storage_;  // null: data_ came from new char[]
};

}  // namespace slipstream
