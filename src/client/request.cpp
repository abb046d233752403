// RESP request encoding into a scatter/gather list (see request.hpp).
#include "client/request.hpp"

#include <charconv>

namespace slipstream::client {

void Request::append_text(std::string_view text) {
  if (segments_.empty() || segments_.back().external != nullptr) {
    segments_.push_back({nullptr, text_.size(), 0});
  }
  text_.append(text);
  segments_.back().size += text.size();
}

void Request::command(std::size_t argc) {
  char header[32];
  header[0] = '*';
  auto end = std::to_chars(header + 1, header + sizeof header - 2, argc).ptr;
  *end++ = '\r';
  *end++ = '\n';
  append_text({header, static_cast<std::size_t>(end - header)});
  ++commands_;
}

void Request::command(std::initializer_list<std::string_view> args) {
  command(args.size());
  for (auto a : args) arg(a);
}

void Request::arg(std::string_view value) {
  if (value.size() >= kBorrowThreshold) {
    arg_borrowed(value.data(), value.size());
    return;
  }
  char header[32];
  header[0] = '$';
  auto end = std::to_chars(header + 1, header + sizeof header - 2, value.size()).ptr;
  *end++ = '\r';
  *end++ = '\n';
  append_text({header, static_cast<std::size_t>(end - header)});
  append_text(value);
  append_text("\r\n");
}

void Request::arg(std::int64_t value) {
  char digits[24];
  auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
  arg(std::string_view(digits, static_cast<std::size_t>(end - digits)));
}

void Request::arg_borrowed(const void* data, std::size_t size) {
  char header[32];
  header[0] = '$';
  auto end = std::to_chars(header + 1, header + sizeof header - 2, size).ptr;
  *end++ = '\r';
  *end++ = '\n';
  append_text({header, static_cast<std::size_t>(end - header)});
  if (size > 0) segments_.push_back({data, 0, size});
  append_text("\r\n");
}

void Request::arg_owned(std::unique_ptr<std::byte[]> data, std::size_t size) {
  arg_borrowed(data.get(), size);
  owned_.push_back(std::move(data));
}

std::vector<iovec> Request::iovecs() const {
  std::vector<iovec> out;
  out.reserve(segments_.size());
  for (const auto& s : segments_) {
    const void* base = s.external != nullptr ? s.external : text_.data() + s.offset;
    out.push_back({const_cast<void*>(base), s.size});
  }
  return out;
}

}  // namespace slipstream::client
