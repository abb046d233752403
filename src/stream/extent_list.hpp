// The wire form of offsets and extents in the SS.STREAM.* commands and replies: unsigned decimal
// integers separated by commas ("64,32,32"), one per dimension. Shared by server and client.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace slipstream::stream {

/// "64,32,32" -> {64, 32, 32}; nullopt unless `text` is one or more unsigned decimal integers
/// (no sign, no spaces, each below 2^64) separated by single commas.
std::optional<std::vector<std::uint64_t>> parse_extent_list(std::string_view text);

/// The inverse of parse_extent_list.
std::string format_extent_list(std::span<const std::uint64_t> values);

}  // namespace slipstream::stream
