// An owning byte buffer that can be allocated without zero-filling: bulk payloads are read from the
// socket straight into one and then kept as the stored value, so the bytes are never copied again.
#pragma once

#include <cstddef>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

namespace slipstream {

class Buffer {
 public:
  Buffer() = default;
  Buffer(Buffer&&) noexcept = default;
  Buffer& operator=(Buffer&&) noexcept = default;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  /// A buffer of `size` bytes whose contents are unspecified until written.
  static Buffer uninitialized(std::size_t size) {
    Buffer buffer;
    if (size > 0) buffer.data_.reset(new char[size]);
    buffer.size_ = size;
    return buffer;
  }
  static Buffer copy_of(std::string_view bytes) {
    Buffer buffer = uninitialized(bytes.size());
    if (!bytes.empty()) std::memcpy(buffer.data(), bytes.data(), bytes.size());
    return buffer;
  }
  Buffer clone() const { return copy_of(view()); }

  char* data() noexcept { return data_.get(); }
  const char* data() const noexcept { return data_.get(); }
  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  std::string_view view() const noexcept { return {data_.get(), size_}; }
  std::string str() const { return std::string(view()); }

 private:
  std::unique_ptr<char[]> data_;
  std::size_t size_ = 0;
};

}  // namespace slipstream
