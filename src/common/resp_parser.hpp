// Incremental parser for client requests in RESP2: multibulk arrays of bulk strings, and inline
// commands (a line of space-separated words, with quotes) so that telnet and redis-cli work.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/buffer.hpp"

namespace slipstream {

struct RequestLimits {
  std::size_t max_bulk_len = 512ull << 20;  ///< longest single argument, in bytes
  std::size_t max_args = 1u << 20;          ///< most arguments in one request
  std::size_t max_inline_len = 64u << 10;   ///< longest inline request or header line
};

/// Parses requests out of a byte stream that arrives in arbitrary pieces.
///
/// Why a state machine: a 16 MiB tensor arrives in many reads, and the parser must (1) allocate the
/// argument's final buffer once, from the length in its header, so the connection can read the
/// rest of the payload straight into it (pending_bulk()), and (2) refuse an argument longer than
/// `max_bulk_len` before allocating anything, discarding its bytes to stay in sync with the stream.
///
/// Not thread-safe; one parser per connection.
class RequestParser {
 public:
  enum class Status {
    kNeedMore,  ///< all input consumed; feed more
    kRequest,   ///< a complete request is in args()
    kError,     ///< a request was consumed but is invalid: reply error(), then go on parsing
    kFatal,     ///< the stream cannot be resynchronised: reply error(), then close
  };
  struct Result {
    Status status;
    std::size_t consumed;  ///< bytes of the input used, whatever the status
  };

  explicit RequestParser(RequestLimits limits = {}) : limits_(limits) {}

  /// Consumes bytes from `input` until one request is complete, an error occurs or the input ends.
  Result parse(std::string_view input);

  /// Arguments of the request just completed (kRequest); the caller may move them out.
  std::vector<Buffer>& args() noexcept { return args_; }
  /// Error text for kError/kFatal, without the leading '-' (e.g. "ERR Protocol error: ...").
  const std::string& error() const noexcept { return error_; }

  /// While a bulk argument is being received, the part of its final buffer not yet filled. The
  /// connection may read socket bytes straight into it and then call commit_pending().
  std::span<char> pending_bulk() noexcept;
  void commit_pending(std::size_t bytes) noexcept;

  void set_limits(const RequestLimits& limits) noexcept { limits_ = limits; }
  /// True when no partial request is buffered inside the parser.
  bool idle() const noexcept { return state_ == State::kStart; }

 private:
  enum class State { kStart, kBulkHeader, kBulkData, kBulkSkip };

  Result finish_request(std::size_t consumed);
  Result fatal(std::string message, std::size_t consumed);
  Result parse_inline(std::string_view input);

  RequestLimits limits_;
  State state_ = State::kStart;
  std::vector<Buffer> args_;
  std::size_t expected_args_ = 0;
  Buffer bulk_;                  // argument being received
  std::size_t bulk_filled_ = 0;  // bytes of bulk_ already written
  std::size_t skip_left_ = 0;    // bytes still to discard of a refused argument (with CRLF)
  std::string deferred_error_;   // error to report once the refused request has been consumed
  std::string error_;
};

/// Splits an inline request line into arguments with redis-cli's quoting rules ("..." with
/// \n \r \t \b \a \\ \" \xHH escapes, '...' with \' only). Returns false on unbalanced quotes.
bool split_inline_args(std::string_view line, std::vector<Buffer>& out);

}  // namespace slipstream
