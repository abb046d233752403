// Incremental parser for client requests in RESP2: multibulk arrays of bulk strings, and inline
// commands (a line of space-separated words, with quotes) so that telnet and redis-cli work.
#pragma once

#include <atomic>
#include <cstddef>
#include <optional>
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
  /// Most bytes the arguments of one request may hold together (client-query-buffer-limit): a
  /// request that would exceed it is refused with a fatal error.
  std::size_t max_request_bytes = 1ull << 30;
  /// Redis's rules before AUTH (CVE-2021-32675): a count above max_args or a bulk longer than
  /// max_bulk_len is a fatal "unauthenticated" protocol error instead of a refusal the stream
  /// survives, so a client that has not authenticated cannot make the server read or hold much.
  bool unauthenticated = false;

  /// The limits for a connection that has not authenticated yet: 10 arguments of 16 KiB at most,
  /// as Redis since 6.2.6 (enough for AUTH and HELLO ... AUTH ... SETNAME).
  static RequestLimits before_auth() {
    RequestLimits limits;
    limits.max_bulk_len = 16u << 10;
    limits.max_args = 10;
    limits.unauthenticated = true;
    return limits;
  }
};

/// Bytes that the arguments of requests being received may hold, shared by every connection of a
/// server (max-pending-input). A bulk argument's buffer is allocated whole from the length in its
/// header, before its bytes arrive (so they can be read straight into it); reserving that length
/// here first means that what clients merely declare can never add up to more than the capacity.
/// Each request may hold `free_per_request` bytes without reserving, so that ordinary small
/// requests never touch the shared counter.
///
/// Thread-safe.
class InputBudget {
 public:
  explicit InputBudget(std::size_t capacity, std::size_t free_per_request = 64u << 10) noexcept
      : capacity_(capacity), free_per_request_(free_per_request) {}
  InputBudget(const InputBudget&) = delete;
  InputBudget& operator=(const InputBudget&) = delete;

  std::size_t capacity() const noexcept { return capacity_.load(std::memory_order_relaxed); }
  /// A smaller capacity refuses new reservations until enough are released; none is revoked.
  void set_capacity(std::size_t bytes) noexcept {
    capacity_.store(bytes, std::memory_order_relaxed);
  }
  std::size_t free_per_request() const noexcept { return free_per_request_; }
  /// Bytes reserved now, by all connections together.
  std::size_t reserved() const noexcept { return reserved_.load(std::memory_order_relaxed); }

  /// Reserves `bytes` and returns true, or returns false (reserving nothing) when that would take
  /// the total over the capacity.
  bool try_reserve(std::size_t bytes) noexcept;
  /// Gives back bytes reserved earlier.
  void release(std::size_t bytes) noexcept {
    if (bytes > 0) reserved_.fetch_sub(bytes, std::memory_order_relaxed);
  }

 private:
  std::atomic<std::size_t> capacity_;
  std::atomic<std::size_t> reserved_{0};
  const std::size_t free_per_request_;
};

/// Parses requests out of a byte stream that arrives in arbitrary pieces.
///
/// Why a state machine: a 16 MiB tensor arrives in many reads, and the parser must (1) allocate the
/// argument's final buffer once, from the length in its header, so the connection can read the
/// rest of the payload straight into it (pending_bulk()), and (2) refuse an argument before
/// allocating anything when it is longer than `max_bulk_len`, when the budget cannot cover it or
/// when the memory cannot be had, discarding its bytes to stay in sync with the stream.
///
/// What happens to a bulk argument, decided from its header alone:
///   1. before AUTH, longer than max_bulk_len: kFatal ("unauthenticated bulk length");
///   2. longer than max_bulk_len: refused, skipped, kError after the request;
///   3. the request's arguments would exceed max_request_bytes: kFatal;
///   4. the request's arguments would exceed the budget's whole capacity (it could never be
///      received): kFatal, "-OOM ...";
///   5. the budget is short now, or the allocation fails: refused, skipped, kError ("-OOM ...")
///      after the request, so the client can retry on the same connection.
/// Once an argument of a request is refused, the rest of that request is skipped unallocated.
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

  /// `budget`, when given, must outlive the parser; without one, bulks are not budgeted.
  explicit RequestParser(RequestLimits limits = {}, InputBudget* budget = nullptr)
      : limits_(limits), budget_(budget) {}
  ~RequestParser();
  RequestParser(const RequestParser&) = delete;
  RequestParser& operator=(const RequestParser&) = delete;

  /// Consumes bytes from `input` until one request is complete, an error occurs or the input ends.
  Result parse(std::string_view input);

  /// Arguments of the request just completed (kRequest); the caller may move them out. Their bytes
  /// no longer count against the budget: they are the caller's from now on.
  std::vector<Buffer>& args() noexcept { return args_; }
  /// Error text for kError/kFatal, without the leading '-' (e.g. "ERR Protocol error: ...").
  const std::string& error() const noexcept { return error_; }
  /// True when the last kFatal was a limit on memory (max_request_bytes or the budget's capacity)
  /// rather than malformed input: worth a warning in the server's log.
  bool fatal_over_limit() const noexcept { return fatal_over_limit_; }

  /// While a bulk argument is being received, the part of its final buffer not yet filled. The
  /// connection may read socket bytes straight into it and then call commit_pending().
  std::span<char> pending_bulk() noexcept;
  void commit_pending(std::size_t bytes) noexcept;

  /// Takes effect from the next request header.
  void set_limits(const RequestLimits& limits) noexcept { limits_ = limits; }
  const RequestLimits& limits() const noexcept { return limits_; }
  /// True when no partial request is buffered inside the parser.
  bool idle() const noexcept { return state_ == State::kStart; }
  /// Bytes held for the request being received: its arguments so far, with the whole declared
  /// length of the one being received.
  std::size_t request_bytes() const noexcept { return request_bytes_; }

 private:
  enum class State { kStart, kBulkHeader, kBulkData, kBulkSkip };

  Result finish_request(std::size_t consumed);
  Result fatal(std::string message, std::size_t consumed, bool over_limit = false);
  Result parse_inline(std::string_view input);
  // Accounts a bulk of `len` bytes, whose header ends at `pos`, to the current request and
  // allocates its buffer, or refuses it (rules 3 to 5 of the class comment). Returns a result only
  // when the stream must end (kFatal).
  std::optional<Result> start_bulk(std::size_t len, std::size_t pos);
  // Refuses the rest of the current request with `error` (reported once it has been consumed):
  // frees what it holds, and skips the `skip` bytes of the current argument.
  void refuse(std::string error, std::size_t skip);
  void release_request() noexcept;

  RequestLimits limits_;
  InputBudget* budget_;
  State state_ = State::kStart;
  std::vector<Buffer> args_;
  std::size_t expected_args_ = 0;
  Buffer bulk_;                    // argument being received
  std::size_t bulk_filled_ = 0;    // bytes of bulk_ already written
  std::size_t skip_left_ = 0;      // bytes still to discard of a refused argument (with CRLF)
  std::size_t request_bytes_ = 0;  // declared bytes of the current request's accepted arguments
  std::size_t reserved_ = 0;       // of budget_, for the current request
  std::string deferred_error_;     // error to report once the refused request has been consumed
  std::string error_;
  bool fatal_over_limit_ = false;
};

/// Splits an inline request line into arguments with redis-cli's quoting rules ("..." with
/// \n \r \t \b \a \\ \" \xHH escapes, '...' with \' only). Returns false on unbalanced quotes.
bool split_inline_args(std::string_view line, std::vector<Buffer>& out);

}  // namespace slipstream
