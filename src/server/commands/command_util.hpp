// Small helpers shared by the command handlers: integer parsing, case-insensitive keywords and
// the standard error texts.
#pragma once

#include <strings.h>

#include <cctype>
#include <algorithm>
#include <charconv>
#include <chrono>
#include <string>
#include <cstdint>
#include <optional>
#include <string_view>

namespace slipstream::server {

inline constexpr std::string_view kWrongType =
    "WRONGTYPE Operation against a key holding the wrong kind of value";
inline constexpr std::string_view kNotInteger = "ERR value is not an integer or out of range";
inline constexpr std::string_view kSyntaxError = "ERR syntax error";
inline constexpr std::string_view kOomError =
    "OOM command not allowed when used memory > 'maxmemory'.";

inline bool equals_nocase(std::string_view a, std::string_view b) noexcept {
  return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
}

/// Redis's error for a known subcommand with the wrong number of arguments ('config|get').
inline std::string subcommand_arity_error(std::string_view command, std::string_view sub) {
  std::string text = "ERR wrong number of arguments for '";
  text.append(command);
  text.push_back('|');
  for (char c : sub) text.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  return text + "' command";
}

/// Redis's error for an unknown subcommand ("ERR unknown subcommand 'X'. Try CONFIG HELP.").
inline std::string unknown_subcommand_error(std::string_view sub, std::string_view command) {
  std::string text = "ERR unknown subcommand '";
  text.append(sub.substr(0, 128));
  text.append("'. Try ");
  text.append(command);
  return text + " HELP.";
}

/// Parses a whole string as a signed 64-bit integer (no spaces, no '+').
inline std::optional<std::int64_t> parse_int(std::string_view text) noexcept {
  std::int64_t value = 0;
  if (text.empty()) return std::nullopt;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

/// The longest wait a timeout argument means: 2^40 ms, about 34 years. Longer ones are taken as
/// this (a clock's deadline of now + 2^63 ms would overflow to the past and expire at once).
inline constexpr std::int64_t kLongestTimeoutMs = std::int64_t{1} << 40;

/// `ms` (>= 0) saturated at kLongestTimeoutMs.
inline std::chrono::milliseconds saturated_timeout(std::int64_t ms) noexcept {
  return std::chrono::milliseconds(std::clamp<std::int64_t>(ms, 0, kLongestTimeoutMs));
}

}  // namespace slipstream::server
