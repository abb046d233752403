// The four codecs behind codec.hpp's frames, each a pair of functions over byte buffers: encode
// appends its output to `out`; decode fills `out` (exactly the raw size) or throws CodecError.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "codec/codec.hpp"

namespace slipstream::codec::detail {

/// blosc's inner compressors by BloscCompressor's value, as blosc names them.
inline constexpr const char* kBloscCompressors[] = {"blosclz", "lz4", "lz4hc", "snappy", "zlib", "zstd"};

void zstd_encode(const Operator& op, std::span<const std::byte> raw, std::vector<std::byte>& out);
void zstd_decode(std::span<const std::byte> payload, std::span<std::byte> out, std::string_view what);

void blosc_encode(const Operator& op, std::size_t type_size, std::span<const std::byte> raw,
                  std::vector<std::byte>& out, std::string_view what);
void blosc_decode(std::span<const std::byte> payload, std::span<std::byte> out, std::string_view what);

void bzip2_encode(const Operator& op, std::span<const std::byte> raw, std::vector<std::byte>& out,
                  std::string_view what);
void bzip2_decode(std::span<const std::byte> payload, std::span<std::byte> out, std::string_view what);

void zfp_encode(const Operator& op, DType dtype, std::span<const std::uint64_t> extent,
                std::span<const std::byte> raw, std::vector<std::byte>& out, std::string_view what);
void zfp_decode(DType dtype, std::span<const std::uint64_t> extent, std::span<const std::byte> payload,
                std::span<std::byte> out, std::string_view what);

}  // namespace slipstream::codec::detail
