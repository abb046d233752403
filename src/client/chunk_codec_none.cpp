// The static library's compression operators: none. Its users link fully static, and the codecs'
// libraries are not all shipped as static archives (Debian has no static zfp), so every operator
// is refused here with the reason and the way out.
#include "client/chunk_codec.hpp"

#include <string>

#include "slipstream/error.hpp"

namespace slipstream::client {
namespace {

constexpr const char* kWhy =
    "compression operators are in the shared client library (libslipstream.so) only: this "
    "program links the static one, which has no codecs";

}  // namespace

std::shared_ptr<const ChunkCodec> make_chunk_codec(const StreamOperator& op,
                                                   std::string_view what) {
  throw InvalidArgumentError(std::string(what) + ": operator '" + op.type + "': " + kWhy);
}

void decode_chunk(std::span<const std::byte>, DType, std::span<const std::uint64_t>,
                  std::span<std::byte>, std::string_view what) {
  throw ProtocolError(std::string(what) + " is encoded (a writer set an operator), and " + kWhy);
}

}  // namespace slipstream::client
