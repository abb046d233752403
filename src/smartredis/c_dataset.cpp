// SmartRedis 0.6's C dataset functions (include/smartredis/c_dataset.h) over the Slipstream C
// API's datasets; memory the getters return is kept by the dataset handle.
#include "c_dataset.h"

#include <cstring>

#include "c_common.hpp"

using namespace slipstream::smartredis::c_api;

namespace {

slipstream_dataset_t* native(void* dataset) { return dataset_of(dataset).dataset; }

// The strings of a list the Slipstream C API gives as count + name(index) (freed after copying).
template <typename Count, typename Name>
std::vector<std::string> string_list(Count&& count_of, Name&& name_of) {
  std::size_t count = 0;
  check(count_of(&count));
  std::vector<std::string> names;
  names.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    char* name = nullptr;
    std::size_t length = 0;
    check(name_of(i, &name, &length));
    names.emplace_back(name, length);
    slipstream_free(name);
  }
  return names;
}

const slipstream_tensor_t* find_tensor(void* dataset, const char* name, std::size_t length) {
  const slipstream_tensor_t* tensor = nullptr;
  check(slipstream_dataset_get_tensor(native(dataset), name, length, &tensor));
  return tensor;
}

SRError release(const char* location, void** dataset) {
  return guarded(location, [&] {
    require(dataset, "dataset");
    if (*dataset != nullptr) delete &dataset_of(*dataset);
    *dataset = nullptr;
  });
}

}  // namespace

extern "C" {

SRError CDataSet(const char* name, const size_t name_length, void** new_dataset) {
  return guarded("CDataSet", [&] {
    require(new_dataset, "new_dataset");
    auto handle = std::make_unique<DataSetHandle>(std::string(text(name, name_length, "name")));
    check(slipstream_dataset_create(name, name_length, &handle->dataset));
    *new_dataset = to_void(handle.release());
  });
}

SRError DeallocateDataSet(void** dataset) { return release("DeallocateDataSet", dataset); }
SRError DeallocateeDataSet(void** dataset) { return release("DeallocateeDataSet", dataset); }

SRError add_tensor(void* dataset, const char* name, const size_t name_length, void* data,
                   const size_t* dims, const size_t n_dims, const SRTensorType type,
                   const SRMemoryLayout mem_layout) {
  return guarded("add_tensor", [&] {
    slipstream_dataset_t* target = native(dataset);
    put_from(data, dims, n_dims, type, mem_layout,
             [&](const void* bytes, const std::vector<std::int64_t>& shape,
                 slipstream_dtype_t dtype, slipstream_memory_order_t order) {
               return slipstream_dataset_add_tensor(target, name, name_length, bytes, shape.data(),
                                                    shape.size(), dtype, order);
             });
  });
}

SRError add_meta_scalar(void* dataset, const char* name, const size_t name_length, const void* data,
                        const SRMetaDataType type) {
  return guarded("add_meta_scalar", [&] {
    require(data, "data");
    if (type == SRMetadataTypeString) {
      parameter_error("add_meta_scalar takes numbers; use add_meta_string for strings");
    }
    check(slipstream_dataset_add_meta_scalar(native(dataset), name, name_length, data,
                                             meta_type_of(type)));
  });
}

SRError add_meta_string(void* dataset, const char* name, const size_t name_length, const char* data,
                        const size_t data_length) {
  return guarded("add_meta_string", [&] {
    check(
        slipstream_dataset_add_meta_string(native(dataset), name, name_length, data, data_length));
  });
}

SRError get_dataset_tensor(void* dataset, const char* name, const size_t name_length, void** data,
                           size_t** dims, size_t* n_dims, SRTensorType* type,
                           const SRMemoryLayout mem_layout) {
  return guarded("get_dataset_tensor", [&] {
    Layout layout = layout_of(mem_layout);
    tensor_out(find_tensor(dataset, name, name_length), layout, dataset_of(dataset).kept, data,
               dims, n_dims, type);
  });
}

SRError unpack_dataset_tensor(void* dataset, const char* name, const size_t name_length, void* data,
                              const size_t* dims, const size_t n_dims, const SRTensorType type,
                              const SRMemoryLayout mem_layout) {
  return guarded("unpack_dataset_tensor", [&] {
    slipstream_dataset_t* source = native(dataset);
    unpack_into(data, dims, n_dims, type, mem_layout,
                [&](void* buffer, std::size_t bytes, const std::vector<std::int64_t>& shape,
                    slipstream_dtype_t dtype, slipstream_memory_order_t order) {
                  return slipstream_dataset_unpack_tensor(source, name, name_length, buffer, bytes,
                                                          shape.data(), shape.size(), dtype, order);
                });
  });
}

SRError get_meta_scalars(void* dataset, const char* name, const size_t name_length, size_t* length,
                         SRMetaDataType* type, void** scalar_data) {
  return guarded("get_meta_scalars", [&] {
    DataSetHandle& handle = dataset_of(dataset);
    require(length, "length");
    require(type, "type");
    require(scalar_data, "scalar_data");
    slipstream_meta_type_t field_type = SLIPSTREAM_META_DOUBLE;
    check(slipstream_dataset_field_type(handle.dataset, name, name_length, &field_type));
    if (field_type == SLIPSTREAM_META_STRING) {
      throw Failure{SRTypeError, "field '" + std::string(text(name, name_length, "name")) +
                                     "' holds strings; use get_meta_strings"};
    }
    std::size_t count = 0;
    // The first call only counts (BUFFER_TOO_SMALL with the count set for a non-empty field).
    slipstream_status_t status = slipstream_dataset_get_meta_scalars(
        handle.dataset, name, name_length, field_type, nullptr, 0, &count);
    if (status != SLIPSTREAM_BUFFER_TOO_SMALL) check(status);
    std::size_t element = field_type == SLIPSTREAM_META_FLOAT ||
                                  field_type == SLIPSTREAM_META_INT32 ||
                                  field_type == SLIPSTREAM_META_UINT32
                              ? 4
                              : 8;
    std::byte* values = handle.kept.allocate(count * element);
    check(slipstream_dataset_get_meta_scalars(handle.dataset, name, name_length, field_type, values,
                                              count, &count));
    *length = count;
    *type = sr_meta_type_of(field_type);
    *scalar_data = values;
  });
}

SRError get_meta_strings(void* dataset, const char* name, const size_t name_length, char*** data,
                         size_t* n_strings, size_t** lengths) {
  return guarded("get_meta_strings", [&] {
    DataSetHandle& handle = dataset_of(dataset);
    std::vector<std::string> values = string_list(
        [&](std::size_t* count) {
          return slipstream_dataset_get_meta_string_count(handle.dataset, name, name_length, count);
        },
        [&](std::size_t i, char** value, std::size_t* length) {
          return slipstream_dataset_get_meta_string(handle.dataset, name, name_length, i, value,
                                                    length);
        });
    strings_out(values, handle.kept, data, n_strings, lengths);
  });
}

SRError get_tensor_names(void* dataset, char*** data, size_t* n_strings, size_t** lengths) {
  return guarded("get_tensor_names", [&] {
    DataSetHandle& handle = dataset_of(dataset);
    std::vector<std::string> names = string_list(
        [&](std::size_t* count) { return slipstream_dataset_tensor_count(handle.dataset, count); },
        [&](std::size_t i, char** value, std::size_t* length) {
          return slipstream_dataset_tensor_name(handle.dataset, i, value, length);
        });
    strings_out(names, handle.kept, data, n_strings, lengths);
  });
}

SRError get_tensor_type(void* dataset, const char* name, size_t name_len, SRTensorType* ttype) {
  return guarded("get_tensor_type", [&] {
    require(ttype, "ttype");
    slipstream_dtype_t dtype = 0;
    check(slipstream_tensor_dtype(find_tensor(dataset, name, name_len), &dtype));
    *ttype = tensor_type_of(dtype);
  });
}

SRError get_tensor_dims(void* dataset, const char* name, size_t name_len, size_t** dims,
                        size_t* ndims) {
  return guarded("get_tensor_dims", [&] {
    require(dims, "dims");
    require(ndims, "ndims");
    const std::int64_t* shape = nullptr;
    std::size_t rank = 0;
    check(slipstream_tensor_shape(find_tensor(dataset, name, name_len), &shape, &rank));
    std::size_t capacity = *ndims;
    *ndims = rank;
    if (*dims != nullptr && capacity < rank) {
      throw Failure{SRBadAllocError, "dims has room for " + std::to_string(capacity) +
                                         " dimensions; the tensor has " + std::to_string(rank)};
    }
    if (*dims == nullptr) {
      *dims =
          reinterpret_cast<std::size_t*>(dataset_of(dataset).kept.allocate(rank * sizeof(size_t)));
    }
    for (std::size_t i = 0; i < rank; ++i) (*dims)[i] = static_cast<std::size_t>(shape[i]);
  });
}

SRError get_metadata_field_names(void* dataset, char*** data, size_t* n_strings, size_t** lengths) {
  return guarded("get_metadata_field_names", [&] {
    DataSetHandle& handle = dataset_of(dataset);
    std::vector<std::string> names = string_list(
        [&](std::size_t* count) { return slipstream_dataset_field_count(handle.dataset, count); },
        [&](std::size_t i, char** value, std::size_t* length) {
          return slipstream_dataset_field_name(handle.dataset, i, value, length);
        });
    strings_out(names, handle.kept, data, n_strings, lengths);
  });
}

SRError get_metadata_field_type(void* dataset, const char* name, size_t name_len,
                                SRMetaDataType* mdtype) {
  return guarded("get_metadata_field_type", [&] {
    require(mdtype, "mdtype");
    slipstream_meta_type_t type = SLIPSTREAM_META_DOUBLE;
    check(slipstream_dataset_field_type(native(dataset), name, name_len, &type));
    *mdtype = sr_meta_type_of(type);
  });
}

const char* dataset_to_string(void* dataset) {
  thread_local std::string description;
  SRError code = guarded("dataset_to_string", [&] {
    slipstream_dataset_t* handle = native(dataset);
    const char* name = nullptr;
    std::size_t length = 0;
    std::size_t tensors = 0, fields = 0;
    check(slipstream_dataset_name(handle, &name, &length));
    check(slipstream_dataset_tensor_count(handle, &tensors));
    check(slipstream_dataset_field_count(handle, &fields));
    description = "DataSet (" + std::string(name, length) + "): " + std::to_string(tensors) +
                  " tensors, " + std::to_string(fields) + " metadata fields";
  });
  if (code != SRNoError) description = SRGetLastError();
  return description.c_str();
}

}  // extern "C"
