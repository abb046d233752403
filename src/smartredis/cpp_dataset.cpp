// SmartRedis::DataSet over slipstream::DataSet.
#include <sstream>

#include "cpp_dataset_access.hpp"
#include "cpp_tensors.hpp"
#include "dataset.h"
#include "sr_errors.hpp"
#include "sr_types.hpp"

namespace SmartRedis {

using slipstream::smartredis::KeptMemory;
using slipstream::smartredis::translate_errors;
namespace sr = slipstream::smartredis;

struct DataSet::Impl {
  explicit Impl(slipstream::DataSet dataset) : data(std::move(dataset)) {}
  slipstream::DataSet data;
  KeptMemory kept;  ///< memory handed out by the get_* calls
};

DataSet::DataSet(const std::string& name)
    : SRObject(name),
      name_(name),
      impl_(translate_errors("DataSet", [&] {
        return std::make_unique<Impl>(slipstream::DataSet(name));
      })) {}

DataSet::DataSet(const DataSet& dataset)
    : SRObject(dataset),
      name_(dataset.name_),
      impl_(std::make_unique<Impl>(sr::clone_dataset(dataset.impl_->data))) {}

DataSet& DataSet::operator=(const DataSet& dataset) {
  if (this != &dataset) {
    SRObject::operator=(dataset);
    name_ = dataset.name_;
    impl_ = std::make_unique<Impl>(sr::clone_dataset(dataset.impl_->data));
  }
  return *this;
}

DataSet::DataSet(DataSet&&) noexcept = default;
DataSet& DataSet::operator=(DataSet&&) noexcept = default;
DataSet::~DataSet() = default;

void DataSet::add_tensor(const std::string& name, const void* data,
                         const std::vector<size_t>& dims, const SRTensorType type,
                         const SRMemoryLayout mem_layout) {
  translate_errors("add_tensor", [&] {
    sr::CallerTensor tensor = sr::caller_tensor(data, dims, type, mem_layout);
    impl_->data.add_tensor(name, tensor.dtype, tensor.data, tensor.bytes, tensor.shape);
  });
}

void DataSet::add_meta_scalar(const std::string& name, const void* data,
                              const SRMetaDataType type) {
  translate_errors("add_meta_scalar", [&] {
    if (data == nullptr) throw SRParameterException("the metadata value pointer is null");
    auto& d = impl_->data;
    switch (type) {
      case SRMetadataTypeDouble: d.add_meta_scalar(name, *static_cast<const double*>(data)); break;
      case SRMetadataTypeFloat: d.add_meta_scalar(name, *static_cast<const float*>(data)); break;
      case SRMetadataTypeInt32: d.add_meta_scalar(name, *static_cast<const int32_t*>(data)); break;
      case SRMetadataTypeInt64: d.add_meta_scalar(name, *static_cast<const int64_t*>(data)); break;
      case SRMetadataTypeUint32:
        d.add_meta_scalar(name, *static_cast<const uint32_t*>(data));
        break;
      case SRMetadataTypeUint64:
        d.add_meta_scalar(name, *static_cast<const uint64_t*>(data));
        break;
      case SRMetadataTypeString:
        throw SRParameterException("add_meta_scalar cannot add a string; use add_meta_string");
      default:
        throw SRParameterException("invalid metadata type " +
                                   std::to_string(static_cast<int>(type)));
    }
  });
}

void DataSet::add_meta_string(const std::string& name, const std::string& data) {
  translate_errors("add_meta_string", [&] { impl_->data.add_meta_string(name, data); });
}

void DataSet::get_tensor(const std::string& name, void*& data, std::vector<size_t>& dims,
                         SRTensorType& type, const SRMemoryLayout mem_layout) {
  translate_errors("get_tensor", [&] {
    const slipstream::Tensor& tensor = impl_->data.get_tensor(name);
    type = sr::tensor_type_of(tensor.dtype());
    data = sr::hand_out_tensor(tensor, mem_layout, impl_->kept);
    dims = sr::dims_of(tensor.shape());
  });
}

void DataSet::get_tensor(const std::string& name, void*& data, size_t*& dims, size_t& n_dims,
                         SRTensorType& type, const SRMemoryLayout mem_layout) {
  translate_errors("get_tensor", [&] {
    const slipstream::Tensor& tensor = impl_->data.get_tensor(name);
    type = sr::tensor_type_of(tensor.dtype());
    data = sr::hand_out_tensor(tensor, mem_layout, impl_->kept);
    dims = sr::hand_out_dims(tensor.shape(), impl_->kept);
    n_dims = tensor.shape().size();
  });
}

void DataSet::unpack_tensor(const std::string& name, void* data, const std::vector<size_t>& dims,
                            const SRTensorType type, const SRMemoryLayout mem_layout) {
  translate_errors("unpack_tensor", [&] {
    sr::unpack_into(impl_->data.get_tensor(name), name, data, dims, type, mem_layout);
  });
}

namespace {

template <typename T>
void* kept_values(const slipstream::DataSet& dataset, const std::string& name, size_t& length,
                  KeptMemory& kept) {
  auto values = std::make_shared<std::vector<T>>(dataset.get_meta_scalars<T>(name));
  kept.push_back(values);
  length = values->size();
  return values->data();
}

}  // namespace

void DataSet::get_meta_scalars(const std::string& name, void*& data, size_t& length,
                               SRMetaDataType& type) {
  translate_errors("get_meta_scalars", [&] {
    const slipstream::DataSet& d = impl_->data;
    slipstream::MetaDataType field_type = d.get_metadata_field_type(name);
    switch (field_type) {
      case slipstream::MetaDataType::kDouble: data = kept_values<double>(d, name, length, impl_->kept); break;
      case slipstream::MetaDataType::kFloat: data = kept_values<float>(d, name, length, impl_->kept); break;
      case slipstream::MetaDataType::kInt32: data = kept_values<int32_t>(d, name, length, impl_->kept); break;
      case slipstream::MetaDataType::kInt64: data = kept_values<int64_t>(d, name, length, impl_->kept); break;
      case slipstream::MetaDataType::kUInt32: data = kept_values<uint32_t>(d, name, length, impl_->kept); break;
      case slipstream::MetaDataType::kUInt64: data = kept_values<uint64_t>(d, name, length, impl_->kept); break;
      case slipstream::MetaDataType::kString:
        throw SRTypeException("metadata field '" + name +
                              "' holds strings; use get_meta_strings");
    }
    type = sr::metadata_type_of(field_type);
  });
}

void DataSet::get_meta_strings(const std::string& name, char**& data, size_t& n_strings,
                               size_t*& lengths) {
  translate_errors("get_meta_strings", [&] {
    sr::hand_out_strings(impl_->data.get_meta_strings(name), impl_->kept, data, n_strings,
                         lengths);
  });
}

std::vector<std::string> DataSet::get_meta_strings(const std::string& name) const {
  return translate_errors("get_meta_strings", [&] { return impl_->data.get_meta_strings(name); });
}

bool DataSet::has_field(const std::string& field_name) const {
  return impl_->data.has_field(field_name);
}

void DataSet::clear_field(const std::string& field_name) {
  translate_errors("clear_field", [&] { impl_->data.clear_field(field_name); });
}

std::vector<std::string> DataSet::get_tensor_names() const {
  return impl_->data.get_tensor_names();
}

void DataSet::get_tensor_names(char**& data, size_t& n_strings, size_t*& lengths) {
  sr::hand_out_strings(impl_->data.get_tensor_names(), impl_->kept, data, n_strings, lengths);
}

std::vector<size_t> DataSet::get_tensor_dims(const std::string& name) const {
  return translate_errors("get_tensor_dims",
                          [&] { return sr::dims_of(impl_->data.get_tensor(name).shape()); });
}

void DataSet::get_tensor_dims(const std::string& name, size_t*& dims, size_t& ndims) {
  translate_errors("get_tensor_dims", [&] {
    const slipstream::Tensor& tensor = impl_->data.get_tensor(name);
    dims = sr::hand_out_dims(tensor.shape(), impl_->kept);
    ndims = tensor.shape().size();
  });
}

std::vector<std::string> DataSet::get_metadata_field_names() const {
  return impl_->data.get_metadata_field_names();
}

void DataSet::get_metadata_field_names(char**& data, size_t& n_strings, size_t*& lengths) {
  sr::hand_out_strings(impl_->data.get_metadata_field_names(), impl_->kept, data, n_strings,
                       lengths);
}

SRMetaDataType DataSet::get_metadata_field_type(const std::string& name) const {
  return translate_errors("get_metadata_field_type", [&] {
    return sr::metadata_type_of(impl_->data.get_metadata_field_type(name));
  });
}

SRTensorType DataSet::get_tensor_type(const std::string& name) const {
  return translate_errors("get_tensor_type", [&] {
    return sr::tensor_type_of(impl_->data.get_tensor(name).dtype());
  });
}

std::string DataSet::to_string() const {
  std::ostringstream text;
  text << "DataSet (" << name_ << "):\n";
  for (const std::string& name : impl_->data.get_tensor_names()) {
    const slipstream::Tensor& tensor = impl_->data.get_tensor(name);
    text << "  tensor " << name << ": " << slipstream::dtype_name(tensor.dtype()) << ' '
         << slipstream::shape_text(tensor.shape()) << '\n';
  }
  for (const std::string& field : impl_->data.get_metadata_field_names()) {
    text << "  field " << field << '\n';
  }
  return text.str();
}

}  // namespace SmartRedis

namespace slipstream::smartredis {

const DataSet& DataSetAccess::native(const SmartRedis::DataSet& dataset) {
  return dataset.impl_->data;
}

SmartRedis::DataSet DataSetAccess::wrap(DataSet dataset) {
  SmartRedis::DataSet result(dataset.name());
  result.impl_->data = std::move(dataset);
  return result;
}

}  // namespace slipstream::smartredis
