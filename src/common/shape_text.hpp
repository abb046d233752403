// The text of a tensor's shape in messages, "[2, 3]" (or "{2, 3}", as the C++ client's shape
// errors write shapes), written once for the server, the clients and the bindings.
#pragma once

#include <string>
#include <string_view>

namespace slipstream {

/// The dimensions of `shape` (any range of integers), comma-separated between `brackets` (two
/// characters: opening and closing).
template <typename Range>
std::string shape_text(const Range& shape, std::string_view brackets = "[]") {
  std::string text(1, brackets.front());
  bool first = true;
  for (auto dimension : shape) {
    if (!first) text += ", ";
    first = false;
    text += std::to_string(dimension);
  }
  return text + brackets.back();
}

}  // namespace slipstream
