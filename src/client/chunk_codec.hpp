// Compression operators as the client sees them: a seam between the stream code and src/codec.
// The shared library implements it with the codecs (chunk_codec.cpp); the static library, whose
// users link it fully static and for which Debian ships no static zfp, without them
// (chunk_codec_none.cpp: every operator is refused, saying why).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "slipstream/stream.hpp"
#include "slipstream/tensor.hpp"

namespace slipstream::client {

// An operator, checked, ready to encode chunks.
class ChunkCodec {
 public:
  virtual ~ChunkCodec() = default;
  // A frame of `raw`, an array of `dtype` with `extent` (row-major). `what` names the chunk in
  // errors (InvalidArgumentError: the operator does not fit the data, e.g. zfp on integers).
  virtual std::vector<std::byte> encode(DType dtype, std::span<const std::uint64_t> extent,
                                        std::span<const std::byte> raw,
                                        std::string_view what) const = 0;
  // Why chunks of `dtype` with `dims` dimensions cannot be encoded by this operator, or empty
  // when they can (checked at put, before anything is queued).
  virtual std::string misfit(DType dtype, std::size_t dims) const = 0;
};

// Checks `op` (InvalidArgumentError naming `what` for an unknown operator or parameter).
std::shared_ptr<const ChunkCodec> make_chunk_codec(const StreamOperator& op, std::string_view what);

// Decodes `frame` into `out` (exactly the raw size of `extent` elements of `dtype`). Throws
// ProtocolError naming `what` when the frame is corrupt, truncated or of another shape or type.
void decode_chunk(std::span<const std::byte> frame, DType dtype,
                  std::span<const std::uint64_t> extent, std::span<std::byte> out,
                  std::string_view what);

}  // namespace slipstream::client
