// C API: dataset handles (tensors and metadata), storing and fetching datasets, and aggregation
// lists of datasets.
#include <cstdlib>
#include <cstring>
#include <memory>

#include "capi/capi_internal.hpp"

using namespace slipstream::capi;
using slipstream::DataSet;
using slipstream::InvalidArgumentError;

namespace {

slipstream::MetaDataType scalar_type_arg(slipstream_meta_type_t type) {
  const auto value = static_cast<int>(type);
  if (value < SLIPSTREAM_META_DOUBLE || value > SLIPSTREAM_META_UINT64) {
    throw InvalidArgumentError("metadata type " + std::to_string(value) +
                               " is not a scalar slipstream_meta_type_t (expected 1 to 6)");
  }
  return static_cast<slipstream::MetaDataType>(value);
}

template <typename T>
void append_scalar(DataSet& dataset, std::string_view field, const void* value) {
  T typed;
  std::memcpy(&typed, value, sizeof(T));
  dataset.add_meta_scalar<T>(field, typed);
}

template <typename T>
void copy_scalars(const DataSet& dataset, std::string_view field, void* values,
                  std::size_t capacity, std::size_t* count) {
  const std::vector<T> all = dataset.get_meta_scalars<T>(field);
  *count = all.size();
  if (capacity < all.size()) {
    throw slipstream::BufferTooSmallError(
        "metadata field '" + std::string(field) + "' holds " + std::to_string(all.size()) +
        " values but the buffer has room for " + std::to_string(capacity));
  }
  if (!all.empty()) std::memcpy(values, all.data(), all.size() * sizeof(T));
}

std::string index_error(const char* what, std::size_t index, std::size_t count) {
  return std::string(what) + " index " + std::to_string(index) + " is out of range (there are " +
         std::to_string(count) + ")";
}

// Moves datasets into a malloc'd array of new handles (released by
// slipstream_dataset_array_destroy); all or nothing.
void datasets_out(std::vector<DataSet> datasets, slipstream_dataset_t*** out, std::size_t* count) {
  deref(out, "datasets output pointer");
  deref(count, "count output pointer");
  std::vector<std::unique_ptr<slipstream_dataset>> owned;
  owned.reserve(datasets.size());
  for (DataSet& d : datasets) owned.push_back(std::make_unique<slipstream_dataset>(std::move(d)));
  slipstream_dataset_t** array = nullptr;
  if (!owned.empty()) {
    array = static_cast<slipstream_dataset_t**>(std::malloc(owned.size() * sizeof(*array)));
    if (array == nullptr) throw std::bad_alloc();
    for (std::size_t i = 0; i < owned.size(); ++i) array[i] = owned[i].release();
  }
  *out = array;
  *count = owned.size();
}

}  // namespace

extern "C" {

slipstream_status_t slipstream_dataset_create(const char* name, size_t name_length,
                                              slipstream_dataset_t** dataset) {
  return guarded([&] {
    deref(dataset, "dataset output pointer");
    auto handle = std::make_unique<slipstream_dataset>(
        DataSet(std::string(string_arg(name, name_length, "name"))));
    *dataset = handle.release();
  });
}

slipstream_status_t slipstream_dataset_destroy(slipstream_dataset_t** dataset) {
  return guarded([&] {
    if (dataset == nullptr) return;
    delete *dataset;
    *dataset = nullptr;
  });
}

slipstream_status_t slipstream_dataset_name(const slipstream_dataset_t* dataset, const char** name,
                                            size_t* length) {
  return guarded([&] {
    const std::string& text = dataset_of(dataset).name();
    deref(name, "name output pointer") = text.c_str();
    if (length != nullptr) *length = text.size();
  });
}

slipstream_status_t slipstream_dataset_add_tensor(slipstream_dataset_t* dataset, const char* name,
                                                  size_t name_length, const void* data,
                                                  const int64_t* shape, size_t rank,
                                                  slipstream_dtype_t dtype,
                                                  slipstream_memory_order_t order) {
  return guarded([&] {
    DataSet& d = dataset_of(dataset);
    const auto type = dtype_arg(dtype);
    const auto dims = shape_arg(shape, rank);
    const std::size_t bytes = tensor_bytes(type, dims);
    if (data == nullptr && bytes > 0) throw InvalidArgumentError("tensor data is NULL");
    d.add_tensor(string_arg(name, name_length, "name"), type, data, bytes, dims, order_arg(order));
  });
}

slipstream_status_t slipstream_dataset_get_tensor(const slipstream_dataset_t* dataset,
                                                  const char* name, size_t name_length,
                                                  const slipstream_tensor_t** tensor) {
  return guarded([&] {
    const DataSet& d = dataset_of(dataset);
    deref(tensor, "tensor output pointer");
    const slipstream::Tensor& t = d.get_tensor(string_arg(name, name_length, "name"));
    *tensor = reinterpret_cast<const slipstream_tensor_t*>(&t);
  });
}

slipstream_status_t slipstream_dataset_unpack_tensor(const slipstream_dataset_t* dataset,
                                                     const char* name, size_t name_length,
                                                     void* buffer, size_t buffer_bytes,
                                                     const int64_t* expected_shape,
                                                     size_t expected_rank, slipstream_dtype_t dtype,
                                                     slipstream_memory_order_t order) {
  return guarded([&] {
    const DataSet& d = dataset_of(dataset);
    const std::string_view tensor_name = string_arg(name, name_length, "name");
    const slipstream::Tensor& t = d.get_tensor(tensor_name);
    if (buffer == nullptr && buffer_bytes > 0) throw InvalidArgumentError("buffer is NULL");
    const auto type = dtype_arg(dtype);
    if (t.dtype() != type) {
      throw InvalidArgumentError(
          "tensor '" + std::string(tensor_name) + "' of dataset '" + d.name() + "' is " +
          std::string(slipstream::dtype_name(t.dtype())) + ", not the requested " +
          std::string(slipstream::dtype_name(type)));
    }
    check_expected_shape(tensor_name, t.shape(), expected_shape, expected_rank);
    t.copy_to(type, buffer, buffer_bytes, order_arg(order));
  });
}

slipstream_status_t slipstream_dataset_has_tensor(const slipstream_dataset_t* dataset,
                                                  const char* name, size_t name_length, int* has) {
  return guarded([&] {
    const DataSet& d = dataset_of(dataset);
    deref(has, "has output pointer");
    flag_out(d.has_tensor(string_arg(name, name_length, "name")), has);
  });
}

slipstream_status_t slipstream_dataset_tensor_count(const slipstream_dataset_t* dataset,
                                                    size_t* count) {
  return guarded([&] {
    deref(count, "count output pointer") = dataset_of(dataset).get_tensor_names().size();
  });
}

slipstream_status_t slipstream_dataset_tensor_name(const slipstream_dataset_t* dataset,
                                                   size_t index, char** name, size_t* length) {
  return guarded([&] {
    const std::vector<std::string> names = dataset_of(dataset).get_tensor_names();
    if (index >= names.size())
      throw InvalidArgumentError(index_error("tensor", index, names.size()));
    string_out(names[index], name, length, "name");
  });
}

slipstream_status_t slipstream_dataset_add_meta_scalar(slipstream_dataset_t* dataset,
                                                       const char* field, size_t field_length,
                                                       const void* value,
                                                       slipstream_meta_type_t type) {
  return guarded([&] {
    DataSet& d = dataset_of(dataset);
    const std::string_view name = string_arg(field, field_length, "field");
    if (value == nullptr) throw InvalidArgumentError("value is NULL");
    switch (scalar_type_arg(type)) {
      case slipstream::MetaDataType::kDouble:
        return append_scalar<double>(d, name, value);
      case slipstream::MetaDataType::kFloat:
        return append_scalar<float>(d, name, value);
      case slipstream::MetaDataType::kInt32:
        return append_scalar<std::int32_t>(d, name, value);
      case slipstream::MetaDataType::kInt64:
        return append_scalar<std::int64_t>(d, name, value);
      case slipstream::MetaDataType::kUInt32:
        return append_scalar<std::uint32_t>(d, name, value);
      case slipstream::MetaDataType::kUInt64:
        return append_scalar<std::uint64_t>(d, name, value);
      case slipstream::MetaDataType::kString:
        break;
    }
  });
}

slipstream_status_t slipstream_dataset_add_meta_string(slipstream_dataset_t* dataset,
                                                       const char* field, size_t field_length,
                                                       const char* value, size_t value_length) {
  return guarded([&] {
    dataset_of(dataset).add_meta_string(string_arg(field, field_length, "field"),
                                        string_arg(value, value_length, "value"));
  });
}

slipstream_status_t slipstream_dataset_get_meta_scalars(const slipstream_dataset_t* dataset,
                                                        const char* field, size_t field_length,
                                                        slipstream_meta_type_t type, void* values,
                                                        size_t capacity, size_t* count) {
  return guarded([&] {
    const DataSet& d = dataset_of(dataset);
    const std::string_view name = string_arg(field, field_length, "field");
    deref(count, "count output pointer");
    if (values == nullptr && capacity > 0) throw InvalidArgumentError("values is NULL");
    switch (scalar_type_arg(type)) {
      case slipstream::MetaDataType::kDouble:
        return copy_scalars<double>(d, name, values, capacity, count);
      case slipstream::MetaDataType::kFloat:
        return copy_scalars<float>(d, name, values, capacity, count);
      case slipstream::MetaDataType::kInt32:
        return copy_scalars<std::int32_t>(d, name, values, capacity, count);
      case slipstream::MetaDataType::kInt64:
        return copy_scalars<std::int64_t>(d, name, values, capacity, count);
      case slipstream::MetaDataType::kUInt32:
        return copy_scalars<std::uint32_t>(d, name, values, capacity, count);
      case slipstream::MetaDataType::kUInt64:
        return copy_scalars<std::uint64_t>(d, name, values, capacity, count);
      case slipstream::MetaDataType::kString:
        break;
    }
  });
}

slipstream_status_t slipstream_dataset_get_meta_string_count(const slipstream_dataset_t* dataset,
                                                             const char* field, size_t field_length,
                                                             size_t* count) {
  return guarded([&] {
    const DataSet& d = dataset_of(dataset);
    deref(count, "count output pointer") =
        d.get_meta_strings(string_arg(field, field_length, "field")).size();
  });
}

slipstream_status_t slipstream_dataset_get_meta_string(const slipstream_dataset_t* dataset,
                                                       const char* field, size_t field_length,
                                                       size_t index, char** value, size_t* length) {
  return guarded([&] {
    const std::vector<std::string> values =
        dataset_of(dataset).get_meta_strings(string_arg(field, field_length, "field"));
    if (index >= values.size()) {
      throw InvalidArgumentError(index_error("metadata string", index, values.size()));
    }
    string_out(values[index], value, length, "value");
  });
}

slipstream_status_t slipstream_dataset_field_count(const slipstream_dataset_t* dataset,
                                                   size_t* count) {
  return guarded([&] {
    deref(count, "count output pointer") = dataset_of(dataset).get_metadata_field_names().size();
  });
}

slipstream_status_t slipstream_dataset_field_name(const slipstream_dataset_t* dataset, size_t index,
                                                  char** name, size_t* length) {
  return guarded([&] {
    const std::vector<std::string> names = dataset_of(dataset).get_metadata_field_names();
    if (index >= names.size()) {
      throw InvalidArgumentError(index_error("metadata field", index, names.size()));
    }
    string_out(names[index], name, length, "name");
  });
}

slipstream_status_t slipstream_dataset_has_field(const slipstream_dataset_t* dataset,
                                                 const char* field, size_t field_length, int* has) {
  return guarded([&] {
    const DataSet& d = dataset_of(dataset);
    deref(has, "has output pointer");
    flag_out(d.has_field(string_arg(field, field_length, "field")), has);
  });
}

slipstream_status_t slipstream_dataset_field_type(const slipstream_dataset_t* dataset,
                                                  const char* field, size_t field_length,
                                                  slipstream_meta_type_t* type) {
  return guarded([&] {
    const DataSet& d = dataset_of(dataset);
    deref(type, "type output pointer");
    *type = static_cast<slipstream_meta_type_t>(
        d.get_metadata_field_type(string_arg(field, field_length, "field")));
  });
}

slipstream_status_t slipstream_dataset_clear_field(slipstream_dataset_t* dataset, const char* field,
                                                   size_t field_length) {
  return guarded(
      [&] { dataset_of(dataset).clear_field(string_arg(field, field_length, "field")); });
}

// ---- Datasets on the server
// ----------------------------------------------------------------------

slipstream_status_t slipstream_put_dataset(slipstream_client_t* client,
                                           const slipstream_dataset_t* dataset) {
  return guarded([&] { client_of(client).put_dataset(dataset_of(dataset)); });
}

slipstream_status_t slipstream_get_dataset(slipstream_client_t* client, const char* name,
                                           size_t name_length, slipstream_dataset_t** dataset) {
  return guarded([&] {
    slipstream::Client& cpp = client_of(client);
    deref(dataset, "dataset output pointer");
    auto handle = std::make_unique<slipstream_dataset>(
        cpp.get_dataset(string_arg(name, name_length, "name")));
    *dataset = handle.release();
  });
}

slipstream_status_t slipstream_delete_dataset(slipstream_client_t* client, const char* name,
                                              size_t name_length) {
  return guarded([&] { client_of(client).delete_dataset(string_arg(name, name_length, "name")); });
}

slipstream_status_t slipstream_dataset_exists(slipstream_client_t* client, const char* name,
                                              size_t name_length, int* exists) {
  return guarded([&] {
    slipstream::Client& cpp = client_of(client);
    deref(exists, "exists output pointer");
    flag_out(cpp.dataset_exists(string_arg(name, name_length, "name")), exists);
  });
}

slipstream_status_t slipstream_poll_dataset(slipstream_client_t* client, const char* name,
                                            size_t name_length, int poll_ms, int tries,
                                            int* exists) {
  return guarded([&] {
    slipstream::Client& cpp = client_of(client);
    deref(exists, "exists output pointer");
    flag_out(cpp.poll_dataset(string_arg(name, name_length, "name"), poll_ms, tries), exists);
  });
}

slipstream_status_t slipstream_copy_dataset(slipstream_client_t* client, const char* source,
                                            size_t source_length, const char* destination,
                                            size_t destination_length) {
  return guarded([&] {
    client_of(client).copy_dataset(string_arg(source, source_length, "source"),
                                   string_arg(destination, destination_length, "destination"));
  });
}

slipstream_status_t slipstream_rename_dataset(slipstream_client_t* client, const char* old_name,
                                              size_t old_name_length, const char* new_name,
                                              size_t new_name_length) {
  return guarded([&] {
    client_of(client).rename_dataset(string_arg(old_name, old_name_length, "old_name"),
                                     string_arg(new_name, new_name_length, "new_name"));
  });
}

// ---- Aggregation lists
// ---------------------------------------------------------------------------

slipstream_status_t slipstream_append_to_list(slipstream_client_t* client, const char* list_name,
                                              size_t list_name_length,
                                              const slipstream_dataset_t* dataset) {
  return guarded([&] {
    client_of(client).append_to_list(string_arg(list_name, list_name_length, "list_name"),
                                     dataset_of(dataset));
  });
}

slipstream_status_t slipstream_delete_list(slipstream_client_t* client, const char* list_name,
                                           size_t list_name_length) {
  return guarded(
      [&] { client_of(client).delete_list(string_arg(list_name, list_name_length, "list_name")); });
}

slipstream_status_t slipstream_copy_list(slipstream_client_t* client, const char* source,
                                         size_t source_length, const char* destination,
                                         size_t destination_length) {
  return guarded([&] {
    client_of(client).copy_list(string_arg(source, source_length, "source"),
                                string_arg(destination, destination_length, "destination"));
  });
}

slipstream_status_t slipstream_rename_list(slipstream_client_t* client, const char* old_name,
                                           size_t old_name_length, const char* new_name,
                                           size_t new_name_length) {
  return guarded([&] {
    client_of(client).rename_list(string_arg(old_name, old_name_length, "old_name"),
                                  string_arg(new_name, new_name_length, "new_name"));
  });
}

slipstream_status_t slipstream_get_list_length(slipstream_client_t* client, const char* list_name,
                                               size_t list_name_length, int64_t* length) {
  return guarded([&] {
    slipstream::Client& cpp = client_of(client);
    deref(length, "length output pointer") =
        cpp.get_list_length(string_arg(list_name, list_name_length, "list_name"));
  });
}

slipstream_status_t slipstream_poll_list_length(slipstream_client_t* client, const char* list_name,
                                                size_t list_name_length, int64_t length,
                                                int poll_ms, int tries, int* reached) {
  return guarded([&] {
    slipstream::Client& cpp = client_of(client);
    deref(reached, "reached output pointer");
    flag_out(cpp.poll_list_length(string_arg(list_name, list_name_length, "list_name"), length,
                                  poll_ms, tries),
             reached);
  });
}

slipstream_status_t slipstream_poll_list_length_gte(slipstream_client_t* client,
                                                    const char* list_name, size_t list_name_length,
                                                    int64_t length, int poll_ms, int tries,
                                                    int* reached) {
  return guarded([&] {
    slipstream::Client& cpp = client_of(client);
    deref(reached, "reached output pointer");
    flag_out(cpp.poll_list_length_gte(string_arg(list_name, list_name_length, "list_name"), length,
                                      poll_ms, tries),
             reached);
  });
}

slipstream_status_t slipstream_poll_list_length_lte(slipstream_client_t* client,
                                                    const char* list_name, size_t list_name_length,
                                                    int64_t length, int poll_ms, int tries,
                                                    int* reached) {
  return guarded([&] {
    slipstream::Client& cpp = client_of(client);
    deref(reached, "reached output pointer");
    flag_out(cpp.poll_list_length_lte(string_arg(list_name, list_name_length, "list_name"), length,
                                      poll_ms, tries),
             reached);
  });
}

slipstream_status_t slipstream_get_datasets_from_list(slipstream_client_t* client,
                                                      const char* list_name,
                                                      size_t list_name_length,
                                                      slipstream_dataset_t*** datasets,
                                                      size_t* count) {
  return guarded([&] {
    slipstream::Client& cpp = client_of(client);
    deref(datasets, "datasets output pointer");
    deref(count, "count output pointer");
    datasets_out(cpp.get_datasets_from_list(string_arg(list_name, list_name_length, "list_name")),
                 datasets, count);
  });
}

slipstream_status_t slipstream_get_dataset_list_range(slipstream_client_t* client,
                                                      const char* list_name,
                                                      size_t list_name_length, int64_t start,
                                                      int64_t end, slipstream_dataset_t*** datasets,
                                                      size_t* count) {
  return guarded([&] {
    slipstream::Client& cpp = client_of(client);
    deref(datasets, "datasets output pointer");
    deref(count, "count output pointer");
    datasets_out(cpp.get_dataset_list_range(string_arg(list_name, list_name_length, "list_name"),
                                            start, end),
                 datasets, count);
  });
}

slipstream_status_t slipstream_dataset_array_destroy(slipstream_dataset_t*** datasets,
                                                     size_t count) {
  return guarded([&] {
    if (datasets == nullptr || *datasets == nullptr) return;
    for (std::size_t i = 0; i < count; ++i) delete (*datasets)[i];
    std::free(*datasets);
    *datasets = nullptr;
  });
}

}  // extern "C"
