// Parsing and formatting of SS.STREAM.* arguments: ranks, steps, extent lists ("64,32,32"),
// component names and typed attribute values. Every parser throws StreamError saying what was
// wrong and what was expected.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/buffer.hpp"
#include "server/stream/stream_data.hpp"

namespace slipstream::server {

/// A rank (0..2^32-1). `what` names it in the error ("writer rank").
std::uint32_t parse_rank(std::string_view text, std::string_view what);
/// A count of at least `minimum` that fits in 32 bits ("writers", "size").
std::uint32_t parse_count(std::string_view text, std::string_view what, std::uint32_t minimum);
/// A step number >= 0, or -1 too when `allow_stream_level` (SS.STREAM.ATTR).
std::int64_t parse_step(std::string_view text, bool allow_stream_level = false);
/// A positive id that fits in a signed 64-bit integer (segment, chunk).
std::uint64_t parse_id(std::string_view text, std::string_view what);
/// Milliseconds >= 0 (0 = no limit).
std::int64_t parse_milliseconds(std::string_view text, std::string_view what);

/// A comma-separated list of 1 to 32 unsigned decimal integers ("64,32,32").
std::vector<std::uint64_t> parse_extent(std::string_view text, std::string_view what);
/// The inverse of parse_extent.
std::string format_extent(const std::vector<std::uint64_t>& extent);

/// Throws unless `name` is a valid component path: non-empty, at most 256 bytes, printable ASCII
/// without spaces (`meshes/E/x`, `particles/e/position/x`).
void check_component_name(std::string_view name);

/// Most bytes a host, group or attribute name may have, and an attribute's values together.
constexpr std::size_t kMaxHostName = 255;
constexpr std::size_t kMaxGroupName = 256;
constexpr std::size_t kMaxAttributeName = 256;
constexpr std::size_t kMaxAttributeBytes = std::size_t{1} << 20;
/// Throws unless `name` has 1 to `most` bytes; `what` names it ("host name").
void check_name(std::string_view name, std::string_view what, std::size_t most);

/// Parses SS.STREAM.ATTR's type and values (at most kMaxAttributeBytes of them together) into `attribute` (singular types take exactly one
/// value; ints are int64 and floats double, parsed strictly).
void parse_attribute_value(std::string_view type, std::span<const Buffer> values,
                           Attribute& attribute);
std::string_view attribute_type_name(AttributeType type) noexcept;

}  // namespace slipstream::server
