// Parsing and formatting of SS.STREAM.* arguments; see stream_arguments.hpp.
#include "server/stream/stream_arguments.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

#include "server/commands/command_util.hpp"
#include "server/stream/stream_error.hpp"
#include "stream/extent_list.hpp"

namespace slipstream::server {
namespace {

constexpr std::size_t kMaxComponentName = 256;
constexpr std::size_t kMaxDimensions = 32;

// A copy of a client's argument for an error message, cut short so errors stay small.
std::string shown(std::string_view text) {
  constexpr std::size_t kShown = 64;
  return text.size() <= kShown ? std::string(text) : std::string(text.substr(0, kShown)) + "...";
}

std::optional<std::uint64_t> parse_unsigned(std::string_view text) noexcept {
  std::uint64_t value = 0;
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text.front()))) return std::nullopt;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

std::uint32_t parse_rank(std::string_view text, std::string_view what) {
  auto value = parse_unsigned(text);
  if (!value || *value > std::numeric_limits<std::uint32_t>::max()) {
    throw StreamError(std::string(what) + " must be an integer from 0 to 4294967295, got '" +
                      shown(text) + "'");
  }
  return static_cast<std::uint32_t>(*value);
}

std::uint64_t parse_id(std::string_view text, std::string_view what) {
  auto value = parse_unsigned(text);
  if (!value || *value == 0 ||
      *value > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    throw StreamError(std::string(what) + " must be a positive integer, got '" + shown(text) +
                      "'");
  }
  return *value;
}

std::uint32_t parse_count(std::string_view text, std::string_view what, std::uint32_t minimum) {
  auto value = parse_unsigned(text);
  if (!value || *value < minimum || *value > std::numeric_limits<std::uint32_t>::max()) {
    throw StreamError(std::string(what) + " must be an integer from " + std::to_string(minimum) +
                      " to 4294967295, got '" + shown(text) + "'");
  }
  return static_cast<std::uint32_t>(*value);
}

std::int64_t parse_step(std::string_view text, bool allow_stream_level) {
  auto value = parse_int(text);
  const std::int64_t lowest = allow_stream_level ? -1 : 0;
  if (!value || *value < lowest) {
    throw StreamError("step must be an integer >= " + std::to_string(lowest) +
                      (allow_stream_level ? " (-1: the stream itself)" : "") + ", got '" +
                      shown(text) + "'");
  }
  return *value;
}

std::int64_t parse_milliseconds(std::string_view text, std::string_view what) {
  auto value = parse_int(text);
  if (!value || *value < 0) {
    throw StreamError(std::string(what) + " must be milliseconds >= 0 (0: no limit), got '" +
                      shown(text) + "'");
  }
  return saturated_timeout(*value).count();  // a deadline of now + 2^63 ms would be in the past
}

std::vector<std::uint64_t> parse_extent(std::string_view text, std::string_view what) {
  auto values = stream::parse_extent_list(text);
  if (values && values->size() > kMaxDimensions) {
    throw StreamError(std::string(what) + " has " + std::to_string(values->size()) +
                      " dimensions; at most " + std::to_string(kMaxDimensions) + " are allowed");
  }
  if (!values) {
    throw StreamError(std::string(what) +
                      " must be a comma-separated list of unsigned integers such as 64,32,32, "
                      "got '" +
                      shown(text) + "'");
  }
  return std::move(*values);
}

std::string format_extent(const std::vector<std::uint64_t>& extent) {
  return stream::format_extent_list(extent);
}

void check_component_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxComponentName) {
    throw StreamError("component name must be 1 to 256 bytes, got " + std::to_string(name.size()));
  }
  for (char c : name) {
    if (c <= ' ' || c > '~') {
      throw StreamError(
          "component name must be printable ASCII without spaces (an openPMD path "
          "such as meshes/E/x), got '" +
          shown(name) + "'");
    }
  }
}

void check_name(std::string_view name, std::string_view what, std::size_t most) {
  if (name.empty() || name.size() > most) {
    throw StreamError(std::string(what) + " must be 1 to " + std::to_string(most) +
                      " bytes, got " + std::to_string(name.size()));
  }
}

std::string_view attribute_type_name(AttributeType type) noexcept {
  switch (type) {
    case AttributeType::kString:
      return "string";
    case AttributeType::kInt:
      return "int";
    case AttributeType::kFloat:
      return "float";
    case AttributeType::kStrings:
      return "strings";
    case AttributeType::kInts:
      return "ints";
    case AttributeType::kFloats:
      return "floats";
  }
  return "string";
}

namespace {
// The element types an attribute of a wire type may declare (openPMD's Datatype names).
constexpr std::string_view kIntegerElements[] = {"CHAR", "SCHAR", "UCHAR", "SHORT", "USHORT",
                                                 "INT", "UINT", "LONG", "LONGLONG", "ULONG",
                                                 "ULONGLONG", "BOOL"};
constexpr std::string_view kFloatElements[] = {"FLOAT", "DOUBLE", "LONG_DOUBLE", "ARR_DBL_7"};
}  // namespace

void parse_attribute_value(std::string_view type_and_element, std::span<const Buffer> values,
                           Attribute& attribute) {
  // "type" or "type:ELEMENT" (the writer's own element type, see Attribute::element).
  const std::size_t colon = type_and_element.find(':');
  const std::string_view type = type_and_element.substr(0, colon);
  constexpr AttributeType kTypes[] = {AttributeType::kString, AttributeType::kInt,
                                      AttributeType::kFloat,  AttributeType::kStrings,
                                      AttributeType::kInts,   AttributeType::kFloats};
  bool known = false;
  for (AttributeType candidate : kTypes) {
    if (equals_nocase(type, attribute_type_name(candidate))) {
      attribute.type = candidate;
      known = true;
    }
  }
  if (!known) {
    throw StreamError("unknown attribute type '" + shown(type) +
                      "'; expected string, int, float, strings, ints or floats");
  }
  if (colon != std::string_view::npos) {
    const std::string_view element = type_and_element.substr(colon + 1);
    const bool integer = attribute.type == AttributeType::kInt || attribute.type == AttributeType::kInts;
    const bool floating =
        attribute.type == AttributeType::kFloat || attribute.type == AttributeType::kFloats;
    bool allowed = false;
    if (integer) {
      for (std::string_view name : kIntegerElements) allowed = allowed || element == name;
    } else if (floating) {
      for (std::string_view name : kFloatElements) allowed = allowed || element == name;
    }
    if (!allowed) {
      throw StreamError("attribute element type '" + shown(element) + "' for " +
                        std::string(attribute_type_name(attribute.type)) + "; expected " +
                        (integer    ? "CHAR, SCHAR, UCHAR, SHORT, USHORT, INT, UINT, LONG, "
                                      "LONGLONG, ULONG, ULONGLONG or BOOL"
                         : floating ? "FLOAT, DOUBLE, LONG_DOUBLE or ARR_DBL_7"
                                    : "none (strings have no element type)"));
    }
    attribute.element = std::string(element);
  }
  const bool singular = attribute.type == AttributeType::kString ||
                        attribute.type == AttributeType::kInt ||
                        attribute.type == AttributeType::kFloat;
  if (singular && values.size() != 1) {
    throw StreamError("attribute type " + std::string(attribute_type_name(attribute.type)) +
                      " takes exactly 1 value, got " + std::to_string(values.size()));
  }
  std::size_t total = 0;
  for (const Buffer& value : values) total += value.size();
  if (total > kMaxAttributeBytes) {
    throw StreamError("attribute " + shown(attribute.name) + " has " + std::to_string(total) +
                      " bytes of values; at most " + std::to_string(kMaxAttributeBytes) +
                      " are allowed (store large data as a component)");
  }
  for (const Buffer& value : values) {
    const std::string_view text = value.view();
    switch (attribute.type) {
      case AttributeType::kString:
      case AttributeType::kStrings:
        attribute.strings.emplace_back(text);
        break;
      case AttributeType::kInt:
      case AttributeType::kInts: {
        auto parsed = parse_int(text);
        if (!parsed) {
          throw StreamError("attribute value '" + shown(text) + "' is not a 64-bit integer");
        }
        attribute.ints.push_back(*parsed);
        break;
      }
      case AttributeType::kFloat:
      case AttributeType::kFloats: {
        double parsed = 0;
        auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), parsed);
        if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() ||
            !std::isfinite(parsed)) {
          throw StreamError("attribute value '" + shown(text) +
                            "' is not a finite floating-point number");
        }
        attribute.floats.push_back(parsed);
        break;
      }
    }
  }
}

}  // namespace slipstream::server
