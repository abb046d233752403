// SmartRedis enumerations <-> Slipstream types, and nested-layout copies.
#include "sr_types.hpp"

#include <cstring>
#include <iostream>
#include <limits>
#include <string>

#include "slipstream/tensor_data.hpp"
#include "srexception.h"

namespace slipstream::smartredis {

DType dtype_of(SRTensorType type) {
  switch (type) {
    case SRTensorTypeDouble: return DType::kFloat64;
    case SRTensorTypeFloat: return DType::kFloat32;
    case SRTensorTypeInt8: return DType::kInt8;
    case SRTensorTypeInt16: return DType::kInt16;
    case SRTensorTypeInt32: return DType::kInt32;
    case SRTensorTypeInt64: return DType::kInt64;
    case SRTensorTypeUint8: return DType::kUInt8;
    case SRTensorTypeUint16: return DType::kUInt16;
    case SRTensorTypeInvalid: break;
  }
  throw SRParameterException("invalid tensor type " + std::to_string(static_cast<int>(type)) +
                             " (expected one of SRTensorTypeDouble ... SRTensorTypeUint16)");
}

SRTensorType tensor_type_of(DType dtype) {
  switch (dtype) {
    case DType::kFloat64: return SRTensorTypeDouble;
    case DType::kFloat32: return SRTensorTypeFloat;
    case DType::kInt8: return SRTensorTypeInt8;
    case DType::kInt16: return SRTensorTypeInt16;
    case DType::kInt32: return SRTensorTypeInt32;
    case DType::kInt64: return SRTensorTypeInt64;
    case DType::kUInt8: return SRTensorTypeUint8;
    case DType::kUInt16: return SRTensorTypeUint16;
    case DType::kBool:
    case DType::kUInt32:
    case DType::kUInt64: break;
  }
  throw SRTypeException("the tensor holds " + std::string(dtype_name(dtype)) +
                        " elements, which SmartRedis has no tensor type for");
}

SRMetaDataType metadata_type_of(MetaDataType type) {
  return static_cast<SRMetaDataType>(static_cast<int>(type));  // same values by construction
}

MetaDataType metadata_type_from(SRMetaDataType type) {
  if (type < SRMetadataTypeDouble || type > SRMetadataTypeString) {
    throw SRParameterException("invalid metadata type " + std::to_string(static_cast<int>(type)));
  }
  return static_cast<MetaDataType>(static_cast<int>(type));
}

std::vector<std::int64_t> shape_of(const std::vector<std::size_t>& dims) {
  if (dims.empty()) throw SRParameterException("a tensor needs at least one dimension");
  std::vector<std::int64_t> shape;
  shape.reserve(dims.size());
  for (std::size_t dim : dims) {
    if (dim == 0 || dim > static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max())) {
      throw SRParameterException("tensor dimension " + std::to_string(dim) +
                                 " is not a positive size");
    }
    shape.push_back(static_cast<std::int64_t>(dim));
  }
  return shape;
}

std::vector<std::size_t> dims_of(std::span<const std::int64_t> shape) {
  return {shape.begin(), shape.end()};
}

void check_layout(SRMemoryLayout layout) {
  if (layout != SRMemLayoutNested && layout != SRMemLayoutContiguous) {
    throw SRParameterException("invalid memory layout " + std::to_string(static_cast<int>(layout)) +
                               " (expected SRMemLayoutNested or SRMemLayoutContiguous)");
  }
}

void check_batch_settings(int batch_size, int min_batch_size, int min_batch_timeout) {
  if (batch_size < 0 || min_batch_size < 0 || min_batch_timeout < 0) {
    throw SRParameterException(
        "batch_size, min_batch_size and min_batch_timeout must not be negative");
  }
  if (batch_size == 0 && (min_batch_size > 0 || min_batch_timeout > 0)) {
    throw SRRuntimeException(
        "batch_size must be non-zero if min_batch_size or min_batch_timeout is used; "
        "otherwise batching will not be performed.");
  }
  if (min_batch_timeout > 0 && min_batch_size == 0) {
    throw SRRuntimeException(
        "min_batch_size must be non-zero if min_batch_timeout is used; otherwise the "
        "min_batch_timeout parameter is ignored.");
  }
  if (min_batch_size > 0 && min_batch_timeout == 0) {
    std::cerr << "WARNING: min_batch_timeout was not set when a non-zero min_batch_size was "
                 "selected.\nSetting a small value (~10ms) for min_batch_timeout may improve "
                 "performance\n";
  }
}

namespace {

// Walks the nested arrays: level `depth` of `node` is an array of shape[depth] pointers, except
// the last level, which is a row of shape.back() elements.
template <typename RowCopy>
void walk_nested(const void* node, std::span<const std::int64_t> shape, std::size_t depth,
                 std::size_t element_size, std::size_t& row, RowCopy&& copy_row) {
  if (node == nullptr) throw SRParameterException("null pointer inside a nested tensor");
  if (depth + 1 == shape.size()) {
    copy_row(node, row++, static_cast<std::size_t>(shape.back()) * element_size);
    return;
  }
  auto children = static_cast<void* const*>(node);
  for (std::int64_t i = 0; i < shape[depth]; ++i) {
    walk_nested(children[i], shape, depth + 1, element_size, row, copy_row);
  }
}

}  // namespace

void gather_nested(const void* nested, std::span<const std::int64_t> shape,
                   std::size_t element_size, std::byte* out) {
  std::size_t row = 0;
  walk_nested(nested, shape, 0, element_size, row,
              [&](const void* src, std::size_t index, std::size_t bytes) {
                std::memcpy(out + index * bytes, src, bytes);
              });
}

void scatter_nested(const std::byte* in, std::span<const std::int64_t> shape,
                    std::size_t element_size, void* nested) {
  std::size_t row = 0;
  walk_nested(nested, shape, 0, element_size, row,
              [&](const void* dst, std::size_t index, std::size_t bytes) {
                std::memcpy(const_cast<void*>(dst), in + index * bytes, bytes);
              });
}

NestedBuffer::NestedBuffer(std::span<const std::int64_t> shape, std::size_t element_size) {
  // Pointer arrays for every level but the last: level d holds prod(shape[0..d]) pointers.
  std::size_t pointers = 0;
  std::size_t level_count = 1;
  for (std::size_t d = 0; d + 1 < shape.size(); ++d) {
    level_count *= static_cast<std::size_t>(shape[d]);
    pointers += level_count;
  }
  pointer_bytes_ = pointers * sizeof(void*);
  storage_.resize(pointer_bytes_ + element_count(shape) * element_size);

  auto slots = reinterpret_cast<void**>(storage_.data());
  std::size_t level_start = 0;  // index of the first pointer of the current level
  level_count = 1;
  for (std::size_t d = 0; d + 1 < shape.size(); ++d) {
    std::size_t count = level_count * static_cast<std::size_t>(shape[d]);
    std::size_t next_start = level_start + count;
    for (std::size_t i = 0; i < count; ++i) {
      if (d + 2 < shape.size()) {
        slots[level_start + i] = &slots[next_start + i * static_cast<std::size_t>(shape[d + 1])];
      } else {
        slots[level_start + i] =
            elements() + i * static_cast<std::size_t>(shape[d + 1]) * element_size;
      }
    }
    level_start = next_start;
    level_count = count;
  }
}

}  // namespace slipstream::smartredis
