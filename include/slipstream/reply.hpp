// A server reply as a plain value tree, returned by Client::command for commands the typed API
// does not cover.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "slipstream/export.hpp"

namespace slipstream {

/// One RESP reply. Which members are meaningful depends on `kind`:
/// kString, kStatus, kError, kDouble, kBigNumber: `string` (binary-safe);
/// kInteger, kBool: `integer`; kArray, kMap (keys and values alternate), kSet, kPush: `elements`;
/// kNil: nothing. RESP2 servers only send kString, kStatus, kError, kInteger, kArray and kNil.
struct SLIPSTREAM_API Reply {
  enum class Kind : std::uint8_t {
    kNil,
    kString,
    kStatus,
    kError,
    kInteger,
    kArray,
    kDouble,
    kBool,
    kBigNumber,
    kMap,
    kSet,
    kPush,
  };

  Kind kind = Kind::kNil;
  std::string string;
  std::int64_t integer = 0;
  std::vector<Reply> elements;

  bool is_nil() const noexcept { return kind == Kind::kNil; }
  bool is_error() const noexcept { return kind == Kind::kError; }
  bool is_string() const noexcept { return kind == Kind::kString || kind == Kind::kStatus; }
  bool is_integer() const noexcept { return kind == Kind::kInteger; }
  bool is_array() const noexcept {
    return kind == Kind::kArray || kind == Kind::kMap || kind == Kind::kSet || kind == Kind::kPush;
  }
  /// True for a simple-string reply equal to `status` (e.g. "OK").
  bool is_status(std::string_view status) const noexcept {
    return kind == Kind::kStatus && string == status;
  }
};

}  // namespace slipstream
