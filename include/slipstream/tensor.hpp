// Element types and memory orders shared by the server, the clients and the wire protocol.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "slipstream/export.hpp"

namespace slipstream {

/// Element type of a tensor. The names on the wire are RedisAI's (FLOAT, DOUBLE, INT8, ...).
enum class DType : std::uint8_t {
  kFloat32,
  kFloat64,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUInt8,
  kUInt16,
  kBool,
  kUInt32,  ///< Slipstream's own (RedisAI has none): stream components, tensors; no model input
  kUInt64,
};

/// Memory order of a caller's buffer. Tensors are always stored row-major (C order); a buffer in
/// Fortran order is transposed on the way in and out so that the logical shape is the same in
/// every language (a Fortran `a(nx, ny)` is shape {nx, ny} everywhere).
enum class MemoryOrder : std::uint8_t { kC, kFortran };

/// Size in bytes of one element.
SLIPSTREAM_API std::size_t dtype_size(DType type) noexcept;
/// RedisAI's name for the type ("FLOAT", "INT32", ...).
SLIPSTREAM_API std::string_view dtype_name(DType type) noexcept;
/// Parses a RedisAI type name, case-insensitively. Returns nullopt for an unknown name.
SLIPSTREAM_API std::optional<DType> parse_dtype(std::string_view name) noexcept;

/// The DType of a C++ element type, for typed client calls.
template <typename T>
struct DTypeOf;
template <> struct DTypeOf<float> { static constexpr DType value = DType::kFloat32; };
template <> struct DTypeOf<double> { static constexpr DType value = DType::kFloat64; };
template <> struct DTypeOf<std::int8_t> { static constexpr DType value = DType::kInt8; };
template <> struct DTypeOf<std::int16_t> { static constexpr DType value = DType::kInt16; };
template <> struct DTypeOf<std::int32_t> { static constexpr DType value = DType::kInt32; };
template <> struct DTypeOf<std::int64_t> { static constexpr DType value = DType::kInt64; };
template <> struct DTypeOf<std::uint8_t> { static constexpr DType value = DType::kUInt8; };
template <> struct DTypeOf<std::uint16_t> { static constexpr DType value = DType::kUInt16; };
template <> struct DTypeOf<bool> { static constexpr DType value = DType::kBool; };
template <> struct DTypeOf<std::uint32_t> { static constexpr DType value = DType::kUInt32; };
template <> struct DTypeOf<std::uint64_t> { static constexpr DType value = DType::kUInt64; };
template <typename T>
inline constexpr DType dtype_of = DTypeOf<T>::value;

/// Largest number of dimensions a tensor may have.
inline constexpr std::size_t kMaxTensorRank = 32;

}  // namespace slipstream
