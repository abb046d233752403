// ASCII case folding for command names, option words and configuration values (never for user
// data, which is bytes).
#pragma once

#include <cctype>
#include <string>
#include <string_view>

namespace slipstream {

/// `text` with ASCII letters in lower case.
inline std::string ascii_lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace slipstream
