// RESP reply building; see reply.hpp.
#include "server/net/reply.hpp"

#include <cmath>
#include <cstdio>

#include <fmt/format.h>

namespace slipstream::server {
namespace {

void append_header(std::string& out, char prefix, std::int64_t n) {
  out.push_back(prefix);
  fmt::format_to(std::back_inserter(out), "{}", n);
  out.append("\r\n");
}

// Redis formats doubles with %.17g and spells out infinities.
std::string format_double(double value) {
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  if (std::isnan(value)) return "nan";
  char text[64];
  int n = std::snprintf(text, sizeof text, "%.17g", value);
  return std::string(text, static_cast<std::size_t>(n));
}

}  // namespace

void ReplyBuffer::simple(std::string_view text) {
  small_.push_back('+');
  small_.append(text);
  small_.append("\r\n");
}

void ReplyBuffer::error(std::string_view text) {
  small_.push_back('-');
  // An error line may not contain CR or LF.
  for (char c : text) small_.push_back(c == '\r' || c == '\n' ? ' ' : c);
  small_.append("\r\n");
}

void ReplyBuffer::integer(std::int64_t value) { append_header(small_, ':', value); }

void ReplyBuffer::bulk(std::string_view bytes) {
  append_header(small_, '$', static_cast<std::int64_t>(bytes.size()));
  small_.append(bytes);
  small_.append("\r\n");
}

void ReplyBuffer::null() { small_.append(protocol_ == 3 ? "_\r\n" : "$-1\r\n"); }

void ReplyBuffer::null_array() { small_.append(protocol_ == 3 ? "_\r\n" : "*-1\r\n"); }

void ReplyBuffer::array(std::size_t count) {
  append_header(small_, '*', static_cast<std::int64_t>(count));
}

void ReplyBuffer::map(std::size_t pairs) {
  if (protocol_ == 3) {
    append_header(small_, '%', static_cast<std::int64_t>(pairs));
  } else {
    append_header(small_, '*', static_cast<std::int64_t>(pairs * 2));
  }
}

void ReplyBuffer::set(std::size_t count) {
  append_header(small_, protocol_ == 3 ? '~' : '*', static_cast<std::int64_t>(count));
}

void ReplyBuffer::double_value(double value) {
  std::string text = format_double(value);
  if (protocol_ == 3) {
    small_.push_back(',');
    small_.append(text);
    small_.append("\r\n");
  } else {
    bulk(text);
  }
}

void ReplyBuffer::verbatim(std::string_view text) {
  if (protocol_ == 3) {
    append_header(small_, '=', static_cast<std::int64_t>(text.size() + 4));
    small_.append("txt:");
    small_.append(text);
    small_.append("\r\n");
  } else {
    bulk(text);
  }
}

void ReplyBuffer::raw(std::string_view bytes) { small_.append(bytes); }

void ReplyBuffer::close_open_piece() {
  if (open_ < small_.size()) {
    pieces_.push_back({false, open_, small_.size() - open_, nullptr});
    open_ = small_.size();
  }
}

void ReplyBuffer::bulk_shared(std::shared_ptr<const void> owner, std::string_view bytes) {
  // Small payloads are cheaper to copy than to send as a separate iovec.
  if (bytes.size() < 4096) {
    bulk(bytes);
    return;
  }
  append_header(small_, '$', static_cast<std::int64_t>(bytes.size()));
  close_open_piece();
  pieces_.push_back({true, 0, bytes.size(), bytes.data()});
  owners_.push_back(std::move(owner));
  shared_bytes_ += bytes.size();
  small_.append("\r\n");
}

std::vector<ReplyBuffer::Piece> ReplyBuffer::pieces() {
  close_open_piece();
  std::vector<Piece> out;
  out.reserve(pieces_.size());
  for (const Entry& e : pieces_) {
    out.push_back({e.shared ? e.data : small_.data() + e.offset, e.size});
  }
  return out;
}

void ReplyBuffer::pass_fd(int fd, std::shared_ptr<const void> owner) {
  fds_.push_back({fd, small_.size() + shared_bytes_});
  owners_.push_back(std::move(owner));
}

void ReplyBuffer::clear() {
  small_.clear();
  open_ = 0;
  pieces_.clear();
  owners_.clear();
  shared_bytes_ = 0;
  fds_.clear();
}

}  // namespace slipstream::server
