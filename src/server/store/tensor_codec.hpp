// Compressed tensors in the store (Tensor::encoded): the checks a frame passes before it is
// stored, and its elements decoded for whoever cannot take a frame (a RedisAI client's
// AI.TENSORGET, VALUES, a shared-memory view, a model's input). docs/clients.md, "Compressed
// tensors".
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "common/buffer.hpp"
#include "server/store/keyspace.hpp"
#include "server/store/memory_reservation.hpp"
#include "server/store/value.hpp"

namespace slipstream::server {

/// The bytes of a tensor's elements: prod(shape) * dtype_size(dtype), whatever its data holds.
std::size_t tensor_element_bytes(const Tensor& tensor);

/// Why `frame` cannot be the data of an encoded tensor of `dtype` with `element_bytes` bytes of
/// elements, or "" when it can (its header: a frame, of that dtype, decoding to that size).
std::string encoded_tensor_problem(DType dtype, std::size_t element_bytes, std::string_view frame);

/// An encoded tensor's elements, counted against --maxmemory while they live.
struct DecodedTensor {
  Buffer data;
  MemoryReservation counted;
};

/// Decodes an encoded tensor's frame. Returns null and sets `error` (a reply text: OOM when the
/// elements would take the server over --maxmemory, ERR when the frame does not decode).
std::shared_ptr<const DecodedTensor> decode_tensor(Keyspace& keyspace, const Tensor& tensor,
                                                   std::string* error);

}  // namespace slipstream::server
