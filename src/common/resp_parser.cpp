// Incremental RESP request parser; see resp_parser.hpp.
#include "common/resp_parser.hpp"

#include <charconv>
#include <cstring>
#include <optional>

namespace slipstream {
namespace {

// Parses a decimal integer that fills the whole of `text` (optional leading '-').
// Leading zeros are refused (as Redis does), so a valid length is at most 20 characters and its
// validity never depends on how the header line was split across reads.
bool parse_length(std::string_view text, long long& out) {
  if (text.empty()) return false;
  std::string_view digits = text[0] == '-' ? text.substr(1) : text;
  if (digits.size() > 1 && digits[0] == '0') return false;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

bool split_inline_args(std::string_view line, std::vector<Buffer>& out) {
  std::size_t i = 0;
  const std::size_t n = line.size();
  while (true) {
    while (i < n && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r' || line[i] == '\n')) ++i;
    if (i >= n) return true;
    std::string word;
    bool in_double = false, in_single = false, done = false;
    while (!done) {
      if (in_double) {
        if (i >= n) return false;
        char c = line[i];
        if (c == '\\' && i + 3 < n && line[i + 1] == 'x' && hex_value(line[i + 2]) >= 0 &&
            hex_value(line[i + 3]) >= 0) {
          word.push_back(static_cast<char>(hex_value(line[i + 2]) * 16 + hex_value(line[i + 3])));
          i += 3;
        } else if (c == '\\' && i + 1 < n) {
          ++i;
          switch (line[i]) {
            case 'n': word.push_back('\n'); break;
            case 'r': word.push_back('\r'); break;
            case 't': word.push_back('\t'); break;
            case 'b': word.push_back('\b'); break;
            case 'a': word.push_back('\a'); break;
            default: word.push_back(line[i]); break;
          }
        } else if (c == '"') {
          // A closing quote must be followed by a space or the end of the line.
          if (i + 1 < n && line[i + 1] != ' ' && line[i + 1] != '\t') return false;
          done = true;
        } else {
          word.push_back(c);
        }
      } else if (in_single) {
        if (i >= n) return false;
        char c = line[i];
        if (c == '\\' && i + 1 < n && line[i + 1] == '\'') {
          ++i;
          word.push_back('\'');
        } else if (c == '\'') {
          if (i + 1 < n && line[i + 1] != ' ' && line[i + 1] != '\t') return false;
          done = true;
        } else {
          word.push_back(c);
        }
      } else {
        if (i >= n) break;
        char c = line[i];
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
          done = true;
        } else if (c == '"') {
          in_double = true;
        } else if (c == '\'') {
          in_single = true;
        } else {
          word.push_back(c);
        }
      }
      if (i < n) ++i;
    }
    out.push_back(Buffer::copy_of(word));
  }
}

bool InputBudget::try_reserve(std::size_t bytes) noexcept {
  if (bytes == 0) return true;
  const std::size_t limit = capacity();
  std::size_t current = reserved_.load(std::memory_order_relaxed);
  do {
    if (bytes > limit || current > limit - bytes) return false;
  } while (!reserved_.compare_exchange_weak(current, current + bytes, std::memory_order_relaxed));
  return true;
}

RequestParser::~RequestParser() { release_request(); }

void RequestParser::release_request() noexcept {
  if (budget_ != nullptr) budget_->release(reserved_);
  reserved_ = 0;
  request_bytes_ = 0;
}

RequestParser::Result RequestParser::fatal(std::string message, std::size_t consumed,
                                           bool over_limit) {
  error_ = std::move(message);
  fatal_over_limit_ = over_limit;
  state_ = State::kStart;
  args_.clear();
  bulk_ = Buffer();
  deferred_error_.clear();
  release_request();
  return {Status::kFatal, consumed};
}

RequestParser::Result RequestParser::finish_request(std::size_t consumed) {
  state_ = State::kStart;
  release_request();  // the arguments are the caller's now
  if (!deferred_error_.empty()) {
    error_ = std::move(deferred_error_);
    deferred_error_.clear();
    args_.clear();
    return {Status::kError, consumed};
  }
  return {Status::kRequest, consumed};
}

void RequestParser::refuse(std::string error, std::size_t skip) {
  deferred_error_ = std::move(error);
  // Nothing of a refused request will be used: free it now rather than when it ends.
  args_.clear();
  bulk_ = Buffer();
  release_request();
  skip_left_ = skip;
  state_ = State::kBulkSkip;
}

std::optional<RequestParser::Result> RequestParser::start_bulk(std::size_t len, std::size_t pos) {
  // Saturating: a limit near SIZE_MAX must not let the sum wrap around.
  const std::size_t total = len > SIZE_MAX - request_bytes_ ? SIZE_MAX : request_bytes_ + len;
  if (total > limits_.max_request_bytes) {
    return fatal("ERR Protocol error: request of " + std::to_string(total) +
                     " bytes or more exceeds the client's query buffer limit of " +
                     std::to_string(limits_.max_request_bytes) +
                     " bytes (client-query-buffer-limit)",
                 pos, true);
  }
  if (budget_ != nullptr) {
    const std::size_t free = budget_->free_per_request();
    const std::size_t needed = total > free ? total - free : 0;
    const std::size_t capacity = budget_->capacity();
    if (needed > capacity) {  // would never fit, however long the client waited
      return fatal("OOM request of " + std::to_string(total) +
                       " bytes or more exceeds the server's budget of " + std::to_string(capacity) +
                       " bytes for arguments being received (max-pending-input)",
                   pos, true);
    }
    if (needed > reserved_) {
      if (!budget_->try_reserve(needed - reserved_)) {
        refuse("OOM cannot receive a bulk of " + std::to_string(len) +
                   " bytes now: arguments being received hold " +
                   std::to_string(budget_->reserved()) + " of the server's " +
                   std::to_string(capacity) + " bytes (max-pending-input); retry later",
               len + 2);
        return std::nullopt;
      }
      reserved_ = needed;
    }
  }
  std::optional<Buffer> buffer = Buffer::try_uninitialized(len);
  if (!buffer) {
    refuse("OOM out of memory allocating a bulk of " + std::to_string(len) + " bytes", len + 2);
    return std::nullopt;
  }
  bulk_ = std::move(*buffer);
  bulk_filled_ = 0;
  request_bytes_ = total;
  state_ = State::kBulkData;
  return std::nullopt;
}

RequestParser::Result RequestParser::parse_inline(std::string_view input) {
  const char* newline = static_cast<const char*>(std::memchr(input.data(), '\n', input.size()));
  if (newline == nullptr) {
    if (input.size() > limits_.max_inline_len) {
      return fatal("ERR Protocol error: too big inline request", input.size());
    }
    return {Status::kNeedMore, 0};
  }
  std::size_t line_len = static_cast<std::size_t>(newline - input.data());
  std::size_t consumed = line_len + 1;
  if (line_len > limits_.max_inline_len) {
    return fatal("ERR Protocol error: too big inline request", consumed);
  }
  std::string_view line = input.substr(0, line_len);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  args_.clear();
  if (!split_inline_args(line, args_)) {
    args_.clear();
    error_ = "ERR Protocol error: unbalanced quotes in request";
    return {Status::kError, consumed};
  }
  if (args_.empty()) return {Status::kNeedMore, consumed};  // empty line: ignored
  return {Status::kRequest, consumed};
}

RequestParser::Result RequestParser::parse(std::string_view input) {
  std::size_t pos = 0;
  while (true) {
    std::string_view rest = input.substr(pos);
    switch (state_) {
      case State::kStart: {
        if (rest.empty()) return {Status::kNeedMore, pos};
        if (rest[0] != '*') {
          Result r = parse_inline(rest);
          r.consumed += pos;
          if (r.status == Status::kNeedMore && r.consumed > pos) {
            pos = r.consumed;  // skipped an empty line; keep going
            continue;
          }
          return r;
        }
        const char* cr = static_cast<const char*>(std::memchr(rest.data(), '\r', rest.size()));
        if (cr == nullptr) {
          if (rest.size() > limits_.max_inline_len) {
            return fatal("ERR Protocol error: too big mbulk count string", input.size());
          }
          return {Status::kNeedMore, pos};
        }
        std::size_t line_len = static_cast<std::size_t>(cr - rest.data());
        if (line_len > limits_.max_inline_len) {  // same verdict however the line was split
          return fatal("ERR Protocol error: too big mbulk count string", pos + line_len);
        }
        if (line_len + 1 >= rest.size()) return {Status::kNeedMore, pos};  // wait for '\n'
        if (rest[line_len + 1] != '\n') {
          return fatal("ERR Protocol error: expected '\\n' after '\\r'", pos + line_len + 2);
        }
        long long count = 0;
        if (!parse_length(rest.substr(1, line_len - 1), count)) {
          return fatal("ERR Protocol error: invalid multibulk length", pos + line_len + 2);
        }
        if (count > static_cast<long long>(limits_.max_args)) {
          return fatal(limits_.unauthenticated
                           ? "ERR Protocol error: unauthenticated multibulk length"
                           : "ERR Protocol error: invalid multibulk length",
                       pos + line_len + 2);
        }
        pos += line_len + 2;
        if (count <= 0) continue;  // "*0" and "*-1" are empty requests, ignored as Redis does
        args_.clear();
        args_.reserve(static_cast<std::size_t>(std::min<long long>(count, 1024)));
        expected_args_ = static_cast<std::size_t>(count);
        state_ = State::kBulkHeader;
        continue;
      }
      case State::kBulkHeader: {
        if (rest.empty()) return {Status::kNeedMore, pos};
        if (rest[0] != '$') {
          std::string got = (rest[0] >= 32 && rest[0] < 127) ? std::string(1, rest[0]) : "?";
          return fatal("ERR Protocol error: expected '$', got '" + got + "'", pos + 1);
        }
        const char* cr = static_cast<const char*>(std::memchr(rest.data(), '\r', rest.size()));
        if (cr == nullptr) {
          if (rest.size() > 32) return fatal("ERR Protocol error: invalid bulk length", input.size());
          return {Status::kNeedMore, pos};
        }
        std::size_t line_len = static_cast<std::size_t>(cr - rest.data());
        if (line_len + 1 >= rest.size()) return {Status::kNeedMore, pos};
        if (rest[line_len + 1] != '\n') {
          return fatal("ERR Protocol error: expected '\\n' after '\\r'", pos + line_len + 2);
        }
        long long length = 0;
        if (!parse_length(rest.substr(1, line_len - 1), length) || length < 0) {
          return fatal("ERR Protocol error: invalid bulk length", pos + line_len + 2);
        }
        pos += line_len + 2;
        const auto len = static_cast<std::size_t>(length);
        if (limits_.unauthenticated && len > limits_.max_bulk_len) {
          return fatal("ERR Protocol error: unauthenticated bulk length", pos);
        }
        if (!deferred_error_.empty()) {
          // An earlier argument of this request was refused: skip this one unallocated too.
          skip_left_ = len + 2;
          state_ = State::kBulkSkip;
          continue;
        }
        if (len > limits_.max_bulk_len) {
          // Refuse before allocating: discard the payload and its CRLF, report after the request.
          refuse("ERR Protocol error: bulk of " + std::to_string(len) +
                     " bytes exceeds the maximum of " + std::to_string(limits_.max_bulk_len) +
                     " bytes (max-bulk-len)",
                 len + 2);
          continue;
        }
        if (std::optional<Result> end = start_bulk(len, pos)) return *end;
        continue;
      }
      case State::kBulkData: {
        std::size_t need = bulk_.size() - bulk_filled_;
        std::size_t take = std::min(need, rest.size());
        if (take > 0) {
          std::memcpy(bulk_.data() + bulk_filled_, rest.data(), take);
          bulk_filled_ += take;
          pos += take;
          rest = rest.substr(take);
        }
        if (bulk_filled_ < bulk_.size()) return {Status::kNeedMore, pos};
        if (rest.size() < 2) return {Status::kNeedMore, pos};
        if (rest[0] != '\r' || rest[1] != '\n') {
          return fatal("ERR Protocol error: bulk argument not terminated by CRLF", pos);
        }
        pos += 2;
        args_.push_back(std::move(bulk_));
        bulk_ = Buffer();
        if (--expected_args_ == 0) return finish_request(pos);
        state_ = State::kBulkHeader;
        continue;
      }
      case State::kBulkSkip: {
        std::size_t take = std::min(skip_left_, rest.size());
        skip_left_ -= take;
        pos += take;
        if (skip_left_ > 0) return {Status::kNeedMore, pos};
        if (--expected_args_ == 0) return finish_request(pos);
        state_ = State::kBulkHeader;
        continue;
      }
    }
  }
}

std::span<char> RequestParser::pending_bulk() noexcept {
  if (state_ != State::kBulkData) return {};
  return {bulk_.data() + bulk_filled_, bulk_.size() - bulk_filled_};
}

void RequestParser::commit_pending(std::size_t bytes) noexcept { bulk_filled_ += bytes; }

}  // namespace slipstream
