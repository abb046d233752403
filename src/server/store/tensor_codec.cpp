#include "server/store/tensor_codec.hpp"

#include <vector>

#include "codec/codec.hpp"

namespace slipstream::server {
namespace {

std::span<const std::byte> bytes_of(std::string_view text) {
  return {reinterpret_cast<const std::byte*>(text.data()), text.size()};
}

}  // namespace

std::size_t tensor_element_bytes(const Tensor& tensor) {
  std::size_t size = dtype_size(tensor.dtype);
  for (std::int64_t dim : tensor.shape) size *= static_cast<std::size_t>(dim);
  return size;
}

std::string encoded_tensor_problem(DType dtype, std::size_t element_bytes, std::string_view frame) {
  try {
    const codec::FrameInfo info = codec::inspect(bytes_of(frame), "the tensor's frame");
    if (info.dtype != dtype) {
      return "the frame holds " + std::string(dtype_name(info.dtype)) + " elements, not " +
             std::string(dtype_name(dtype));
    }
    if (info.raw_bytes != element_bytes) {
      return "the frame decodes to " + std::to_string(info.raw_bytes) +
             " bytes; the shape needs " + std::to_string(element_bytes);
    }
  } catch (const codec::CodecError& e) {
    return e.what();
  }
  return "";
}

std::shared_ptr<const DecodedTensor> decode_tensor(Keyspace& keyspace, const Tensor& tensor,
                                                   std::string* error) {
  const std::size_t size = tensor_element_bytes(tensor);
  std::optional<MemoryReservation> counted = keyspace.reserve(size);
  std::optional<Buffer> data = counted ? Buffer::try_uninitialized(size) : std::nullopt;
  if (!data) {
    *error = "OOM command not allowed when used memory > 'maxmemory' (decoding a compressed "
             "tensor of " + std::to_string(size) + " bytes)";
    return nullptr;
  }
  try {
    const std::vector<std::uint64_t> extent(tensor.shape.begin(), tensor.shape.end());
    codec::decode(bytes_of(tensor.data.view()), tensor.dtype, extent,
                  {reinterpret_cast<std::byte*>(data->data()), size}, "the stored tensor");
  } catch (const codec::CodecError& e) {
    *error = std::string("ERR the tensor's frame does not decode: ") + e.what();
    return nullptr;
  }
  return std::make_shared<const DecodedTensor>(
      DecodedTensor{std::move(*data), std::move(*counted)});
}

}  // namespace slipstream::server
