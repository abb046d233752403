// ASCII case folding for command names, option words and configuration values (never for user
// data, which is bytes).
#pragma once

#include <string>
#include <string_view>

namespace slipstream {

/// `c` in lower case if it is an ASCII capital letter (no locale: this runs per request).
constexpr char ascii_lower(char c) noexcept {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

/// `text` with ASCII letters in lower case.
inline std::string ascii_lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = ascii_lower(c);
  return out;
}

}  // namespace slipstream
