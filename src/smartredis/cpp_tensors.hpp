// Tensors between a SmartRedis caller's memory (contiguous or nested, SRTensorType) and
// Slipstream's row-major tensors, for the C++ Client and DataSet; and the memory those classes
// hand out and keep until they are destroyed.
#pragma once

#include "common/shape_text.hpp"
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "slipstream/dataset.hpp"
#include "slipstream/tensor_data.hpp"
#include "sr_enums.h"

namespace slipstream::smartredis {

/// Memory handed to the caller, freed with the object that handed it out.
using KeptMemory = std::vector<std::shared_ptr<void>>;

/// A tensor as the caller gave it: row-major bytes, borrowed (contiguous layout) or gathered
/// into `gathered` (nested layout). Throws SmartRedis::ParameterException for a null pointer or
/// bad dims, type or layout.
struct CallerTensor {
  DType dtype = DType::kFloat32;
  std::vector<std::int64_t> shape;
  const void* data = nullptr;
  std::size_t bytes = 0;
  std::vector<std::byte> gathered;
};
CallerTensor caller_tensor(const void* data, const std::vector<std::size_t>& dims,
                           SRTensorType type, SRMemoryLayout layout);

/// The tensor's elements laid out as asked, in memory kept in `keep`.
void* hand_out_tensor(const Tensor& tensor, SRMemoryLayout layout, KeptMemory& keep);
/// A copy of `values` kept in `keep`.
std::size_t* hand_out_dims(std::span<const std::int64_t> shape, KeptMemory& keep);
/// C strings (NUL-terminated copies) and their lengths, kept in `keep`.
void hand_out_strings(const std::vector<std::string>& strings, KeptMemory& keep, char**& data,
                      std::size_t& n_strings, std::size_t*& lengths);

/// Checks that the caller's `dims` and `type` describe `tensor` (contiguous: the same number of
/// elements; nested: the same dims). Throws SmartRedis::ParameterException naming `name`, the
/// stored and the given type or shape.
void check_unpack(const Tensor& tensor, std::string_view name, const std::vector<std::size_t>& dims,
                  SRTensorType type, SRMemoryLayout layout);
/// check_unpack, then copies the elements into the caller's memory.
void unpack_into(const Tensor& tensor, std::string_view name, void* data,
                 const std::vector<std::size_t>& dims, SRTensorType type, SRMemoryLayout layout);


/// A deep copy of a dataset (slipstream::DataSet is move-only; SmartRedis's DataSet copies).
DataSet clone_dataset(const DataSet& dataset);

}  // namespace slipstream::smartredis
