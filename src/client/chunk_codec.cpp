// The shared library's compression operators: src/codec behind chunk_codec.hpp.
#include "client/chunk_codec.hpp"

#include <string>

#include "codec/codec.hpp"
#include "slipstream/error.hpp"

namespace slipstream::client {
namespace {

class Codec final : public ChunkCodec {
 public:
  explicit Codec(codec::Operator op) : op_(op) {}
  std::vector<std::byte> encode(DType dtype, std::span<const std::uint64_t> extent,
                                std::span<const std::byte> raw,
                                std::string_view what) const override {
    try {
      return codec::encode(op_, dtype, extent, raw, what);
    } catch (const codec::CodecError& e) {
      throw InvalidArgumentError(e.what());
    }
  }
  std::string misfit(DType dtype, std::size_t dims) const override {
    if (op_.codec != codec::Codec::kZfp) return {};
    if ((dtype != DType::kFloat32 && dtype != DType::kFloat64) || dims < 1 || dims > 4) {
      return codec::describe(op_) + " encodes float32 and float64 arrays of 1 to 4 dimensions; "
             "this chunk is " + std::string(dtype_name(dtype)) + " of " + std::to_string(dims) +
             " dimensions";
    }
    return {};
  }

 private:
  codec::Operator op_;
};

}  // namespace

std::shared_ptr<const ChunkCodec> make_chunk_codec(const StreamOperator& op,
                                                   std::string_view what) {
  try {
    return std::make_shared<Codec>(codec::make_operator(op.type, op.parameters));
  } catch (const codec::CodecError& e) {
    throw InvalidArgumentError(std::string(what) + ": " + e.what());
  }
}

void decode_chunk(std::span<const std::byte> frame, DType dtype,
                  std::span<const std::uint64_t> extent, std::span<std::byte> out,
                  std::string_view what) {
  try {
    codec::decode(frame, dtype, extent, out, what);
  } catch (const codec::CodecError& e) {
    throw ProtocolError(e.what());
  }
}

}  // namespace slipstream::client
