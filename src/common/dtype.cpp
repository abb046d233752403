// Element-type names and sizes (see include/slipstream/tensor.hpp).
#include <array>
#include <strings.h>

#include "slipstream/tensor.hpp"

namespace slipstream {
namespace {

struct DTypeInfo {
  DType type;
  std::string_view name;
  std::size_t size;
};

constexpr std::array<DTypeInfo, 11> kDTypes = {{
    {DType::kFloat32, "FLOAT", 4},
    {DType::kFloat64, "DOUBLE", 8},
    {DType::kInt8, "INT8", 1},
    {DType::kInt16, "INT16", 2},
    {DType::kInt32, "INT32", 4},
    {DType::kInt64, "INT64", 8},
    {DType::kUInt8, "UINT8", 1},
    {DType::kUInt16, "UINT16", 2},
    {DType::kBool, "BOOL", 1},
    {DType::kUInt32, "UINT32", 4},
    {DType::kUInt64, "UINT64", 8},
}};

}  // namespace

std::size_t dtype_size(DType type) noexcept { return kDTypes[static_cast<int>(type)].size; }

std::string_view dtype_name(DType type) noexcept { return kDTypes[static_cast<int>(type)].name; }

std::optional<DType> parse_dtype(std::string_view name) noexcept {
  for (const auto& info : kDTypes) {
    if (info.name.size() == name.size() &&
        strncasecmp(info.name.data(), name.data(), name.size()) == 0) {
      return info.type;
    }
  }
  return std::nullopt;
}

}  // namespace slipstream
