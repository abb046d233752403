// Builds RESP requests (one or many pipelined commands) as a scatter/gather list: framing and small
// arguments are copied into one string, large payloads are referenced in place and sent by the
// kernel straight from the caller's memory.
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace slipstream::client {

class Request {
 public:
  /// Arguments at least this long are referenced, not copied.
  static constexpr std::size_t kBorrowThreshold = 4096;

  /// Starts a command of `argc` arguments; exactly that many arg calls must follow.
  void command(std::size_t argc);
  /// An argument; if long, `value` is borrowed and must outlive the send.
  void arg(std::string_view value);
  void arg(std::int64_t value);
  /// A payload always sent from the caller's memory, which must outlive the send.
  void arg_borrowed(const void* data, std::size_t size);
  /// A payload owned by the request (e.g. a transposed copy).
  void arg_owned(std::unique_ptr<std::byte[]> data, std::size_t size);

  /// Convenience: a whole command from string arguments.
  void command(std::initializer_list<std::string_view> args);

  std::size_t command_count() const noexcept { return commands_; }
  /// The scatter/gather list; valid until the request is modified or destroyed.
  std::vector<iovec> iovecs() const;

 private:
  struct Segment {
    const void* external;  ///< nullptr: bytes [offset, offset + size) of text_
    std::size_t offset;
    std::size_t size;
  };
  void append_text(std::string_view text);

  std::string text_;
  std::vector<Segment> segments_;
  std::vector<std::unique_ptr<std::byte[]>> owned_;
  std::size_t commands_ = 0;
};

}  // namespace slipstream::client
