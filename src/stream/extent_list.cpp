// The wire form of offsets and extents; see extent_list.hpp.
#include "stream/extent_list.hpp"

#include <charconv>

namespace slipstream::stream {

std::optional<std::vector<std::uint64_t>> parse_extent_list(std::string_view text) {
  std::vector<std::uint64_t> out;
  const char* at = text.data();
  const char* const end = text.data() + text.size();
  while (true) {
    if (at == end || *at < '0' || *at > '9') return std::nullopt;
    std::uint64_t value = 0;
    auto [next, ec] = std::from_chars(at, end, value);
    if (ec != std::errc()) return std::nullopt;
    out.push_back(value);
    if (next == end) return out;
    if (*next != ',') return std::nullopt;
    at = next + 1;
  }
}

std::string format_extent_list(std::span<const std::uint64_t> values) {
  std::string out;
  for (std::size_t d = 0; d < values.size(); ++d) {
    if (d > 0) out.push_back(',');
    out += std::to_string(values[d]);
  }
  return out;
}

}  // namespace slipstream::stream
