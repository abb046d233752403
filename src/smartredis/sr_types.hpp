// Conversions between SmartRedis's enumerations and Slipstream's types, and the copies between
// a caller's nested (pointer-array) layout and a row-major block. Shared by the C++ and C layers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "slipstream/dataset.hpp"
#include "slipstream/tensor.hpp"
#include "sr_enums.h"

namespace slipstream::smartredis {

/// The DType of a SmartRedis tensor type. Throws SmartRedis::ParameterException for
/// SRTensorTypeInvalid or a value outside the enumeration.
DType dtype_of(SRTensorType type);
/// The SmartRedis tensor type of a DType. Throws SmartRedis::TypeException for BOOL, which
/// SmartRedis has no type for.
SRTensorType tensor_type_of(DType dtype);
/// The SmartRedis metadata type of a field type, and back (ParameterException for Invalid).
SRMetaDataType metadata_type_of(MetaDataType type);
MetaDataType metadata_type_from(SRMetaDataType type);

/// Dimensions as Slipstream shapes them. Throws SmartRedis::ParameterException for an empty
/// list, a zero dimension or one beyond INT64_MAX.
std::vector<std::int64_t> shape_of(const std::vector<std::size_t>& dims);
std::vector<std::size_t> dims_of(std::span<const std::int64_t> shape);

/// Checks a memory layout argument (ParameterException unless Nested or Contiguous).
void check_layout(SRMemoryLayout layout);

/// SmartRedis's checks of set_model's batching arguments, before anything is sent: a negative
/// value is a ParameterException; min_batch_size or min_batch_timeout without batch_size, and
/// min_batch_timeout without min_batch_size, are RuntimeExceptions (the server would ignore
/// them); min_batch_size without min_batch_timeout prints SmartRedis's warning to stderr.
void check_batch_settings(int batch_size, int min_batch_size, int min_batch_timeout);

/// Copies a tensor of `shape` from the caller's nested arrays (pointer arrays down to the last
/// dimension, whose rows hold the elements) into the row-major block `out`.
void gather_nested(const void* nested, std::span<const std::int64_t> shape,
                   std::size_t element_size, std::byte* out);
/// Copies the row-major block `in` into the caller's nested arrays of `shape`.
void scatter_nested(const std::byte* in, std::span<const std::int64_t> shape,
                    std::size_t element_size, void* nested);

/// Memory for a tensor handed out in nested layout: the pointer arrays and the elements in one
/// allocation, pointers first. `root()` is what SmartRedis returns as the data pointer.
class NestedBuffer {
 public:
  NestedBuffer(std::span<const std::int64_t> shape, std::size_t element_size);
  void* root() { return storage_.data(); }
  /// Where the elements start (row-major).
  std::byte* elements() { return storage_.data() + pointer_bytes_; }

 private:
  std::vector<std::byte> storage_;
  std::size_t pointer_bytes_ = 0;
};

}  // namespace slipstream::smartredis
