// Tensor and string copies between SmartRedis callers and Slipstream's types.
#include "cpp_tensors.hpp"

#include <algorithm>
#include <cstring>

#include "sr_types.hpp"
#include "srexception.h"

namespace slipstream::smartredis {

CallerTensor caller_tensor(const void* data, const std::vector<std::size_t>& dims,
                           SRTensorType type, SRMemoryLayout layout) {
  CallerTensor result;
  result.dtype = dtype_of(type);
  check_layout(layout);
  result.shape = shape_of(dims);
  if (data == nullptr) throw SRParameterException("the tensor data pointer is null");
  result.bytes = element_count(result.shape) * dtype_size(result.dtype);
  if (layout == SRMemLayoutNested && result.shape.size() > 1) {
    result.gathered.resize(result.bytes);
    gather_nested(data, result.shape, dtype_size(result.dtype), result.gathered.data());
    result.data = result.gathered.data();
  } else {
    result.data = data;
  }
  return result;
}

void* hand_out_tensor(const Tensor& tensor, SRMemoryLayout layout, KeptMemory& keep) {
  check_layout(layout);
  std::span<const std::byte> bytes = tensor.bytes();
  if (layout == SRMemLayoutNested && tensor.shape().size() > 1) {
    auto buffer = std::make_shared<NestedBuffer>(tensor.shape(), dtype_size(tensor.dtype()));
    std::memcpy(buffer->elements(), bytes.data(), bytes.size());
    keep.push_back(buffer);
    return buffer->root();
  }
  auto buffer = std::make_shared<std::vector<std::byte>>(bytes.begin(), bytes.end());
  keep.push_back(buffer);
  return buffer->data();
}

std::size_t* hand_out_dims(std::span<const std::int64_t> shape, KeptMemory& keep) {
  auto dims = std::make_shared<std::vector<std::size_t>>(shape.begin(), shape.end());
  keep.push_back(dims);
  return dims->data();
}

namespace {
struct StringList {
  std::vector<std::string> strings;
  std::vector<char*> pointers;
  std::vector<std::size_t> lengths;
};
}  // namespace

void hand_out_strings(const std::vector<std::string>& strings, KeptMemory& keep, char**& data,
                      std::size_t& n_strings, std::size_t*& lengths) {
  auto list = std::make_shared<StringList>();
  list->strings = strings;
  for (std::string& s : list->strings) {
    list->pointers.push_back(s.data());
    list->lengths.push_back(s.size());
  }
  keep.push_back(list);
  data = list->pointers.empty() ? nullptr : list->pointers.data();
  lengths = list->lengths.empty() ? nullptr : list->lengths.data();
  n_strings = list->strings.size();
}

void check_unpack(const Tensor& tensor, std::string_view name,
                  const std::vector<std::size_t>& dims, SRTensorType type,
                  SRMemoryLayout layout) {
  check_layout(layout);
  DType wanted = dtype_of(type);
  if (wanted != tensor.dtype()) {
    throw SRParameterException("tensor '" + std::string(name) + "' holds " +
                               std::string(dtype_name(tensor.dtype())) +
                               " elements, but the memory given is for " +
                               std::string(dtype_name(wanted)));
  }
  std::vector<std::int64_t> given = shape_of(dims);
  bool fits = layout == SRMemLayoutNested
                  ? std::equal(given.begin(), given.end(), tensor.shape().begin(),
                               tensor.shape().end())
                  : element_count(given) == tensor.size();
  if (!fits) {
    throw SRParameterException("tensor '" + std::string(name) + "' has shape " +
                               shape_text(tensor.shape()) + ", but the memory given has dims " +
                               shape_text(given));
  }
}

void unpack_into(const Tensor& tensor, std::string_view name, void* data,
                 const std::vector<std::size_t>& dims, SRTensorType type, SRMemoryLayout layout) {
  check_unpack(tensor, name, dims, type, layout);
  if (data == nullptr) throw SRParameterException("the result data pointer is null");
  if (layout == SRMemLayoutNested && tensor.shape().size() > 1) {
    scatter_nested(tensor.bytes().data(), tensor.shape(), dtype_size(tensor.dtype()), data);
  } else {
    std::memcpy(data, tensor.bytes().data(), tensor.byte_size());
  }
}

DataSet clone_dataset(const DataSet& dataset) {
  DataSet copy(dataset.name());
  for (const std::string& name : dataset.get_tensor_names()) {
    copy.add_tensor(name, dataset.get_tensor(name).clone());
  }
  for (const std::string& field : dataset.get_metadata_field_names()) {
    switch (dataset.get_metadata_field_type(field)) {
      case MetaDataType::kDouble:
        for (double v : dataset.get_meta_scalars<double>(field)) copy.add_meta_scalar(field, v);
        break;
      case MetaDataType::kFloat:
        for (float v : dataset.get_meta_scalars<float>(field)) copy.add_meta_scalar(field, v);
        break;
      case MetaDataType::kInt32:
        for (auto v : dataset.get_meta_scalars<std::int32_t>(field)) copy.add_meta_scalar(field, v);
        break;
      case MetaDataType::kInt64:
        for (auto v : dataset.get_meta_scalars<std::int64_t>(field)) copy.add_meta_scalar(field, v);
        break;
      case MetaDataType::kUInt32:
        for (auto v : dataset.get_meta_scalars<std::uint32_t>(field)) {
          copy.add_meta_scalar(field, v);
        }
        break;
      case MetaDataType::kUInt64:
        for (auto v : dataset.get_meta_scalars<std::uint64_t>(field)) {
          copy.add_meta_scalar(field, v);
        }
        break;
      case MetaDataType::kString:
        for (const auto& v : dataset.get_meta_strings(field)) copy.add_meta_string(field, v);
        break;
    }
  }
  return copy;
}

}  // namespace slipstream::smartredis
