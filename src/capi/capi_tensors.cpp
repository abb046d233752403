// C API: tensors (put, unpack, get, batches, rename/copy/delete, polls), library-owned tensor
// handles, and raw keys (exists, waits, plain byte strings).
#include <chrono>
#include <memory>

#include "capi/capi_internal.hpp"

using namespace slipstream::capi;
using slipstream::Tensor;
using slipstream::TensorRef;

namespace slipstream::capi {

// Converts C tensor references; `shapes` keeps nothing (the spans borrow the caller's arrays).
std::vector<TensorRef> tensor_refs(const slipstream_tensor_ref_t* tensors, std::size_t count) {
  std::vector<TensorRef> refs;
  if (count == 0) return refs;
  if (tensors == nullptr) {
    throw InvalidArgumentError("tensors is NULL but its count is " + std::to_string(count));
  }
  refs.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    const slipstream_tensor_ref_t& t = tensors[i];
    const DType dtype = dtype_arg(t.dtype);
    const auto shape = shape_arg(t.shape, t.rank);
    refs.push_back(TensorRef{string_arg(t.name, t.name_length, "tensor name"), dtype, t.data,
                             tensor_bytes(dtype, shape), shape, order_arg(t.order)});
  }
  return refs;
}

// Stores owned tensors into a caller array only once all of them exist (all or nothing).
void tensors_out(std::vector<Tensor> tensors, slipstream_tensor_t** out) {
  std::vector<std::unique_ptr<Tensor>> owned;
  owned.reserve(tensors.size());
  for (Tensor& t : tensors) owned.push_back(std::make_unique<Tensor>(std::move(t)));
  for (std::size_t i = 0; i < owned.size(); ++i) out[i] = tensor_handle(owned[i].release());
}

}  // namespace slipstream::capi

extern "C" {

slipstream_status_t slipstream_put_tensor(slipstream_client_t* client, const char* name,
                                          size_t name_length, const void* data,
                                          const int64_t* shape, size_t rank,
                                          slipstream_dtype_t dtype,
                                          slipstream_memory_order_t order) {
  return slipstream_put_tensor_compressed(client, name, name_length, data, shape, rank, dtype,
                                          order, nullptr, 0, nullptr, 0);
}

// `type` NULL: stored raw (slipstream_put_tensor).
slipstream_status_t slipstream_put_tensor_compressed(
    slipstream_client_t* client, const char* name, size_t name_length, const void* data,
    const int64_t* shape, size_t rank, slipstream_dtype_t dtype, slipstream_memory_order_t order,
    const char* type, size_t type_length, const char* parameters, size_t parameters_length) {
  return guarded([&] {
    slipstream::Client& cpp = client_of(client);
    const auto element = dtype_arg(dtype);
    const auto dims = shape_arg(shape, rank);
    const std::size_t bytes = tensor_bytes(element, dims);
    if (data == nullptr && bytes > 0) throw slipstream::InvalidArgumentError("tensor data is NULL");
    const std::string_view key = string_arg(name, name_length, "name");
    if (type == nullptr) {
      cpp.put_tensor(key, element, data, bytes, dims, order_arg(order));
      return;
    }
    const slipstream::CompressionOperator op = operator_arg(
        type, type_length, parameters, parameters_length,
        "compression of tensor '" + std::string(key) + "'");
    cpp.put_tensor(key, element, data, bytes, dims, order_arg(order), op);
  });
}

slipstream_status_t slipstream_unpack_tensor(slipstream_client_t* client, const char* name,
                                             size_t name_length, void* buffer, size_t buffer_bytes,
                                             const int64_t* expected_shape, size_t expected_rank,
                                             slipstream_dtype_t dtype,
                                             slipstream_memory_order_t order) {
  return guarded([&] {
    slipstream::Client& cpp = client_of(client);
    if (buffer == nullptr && buffer_bytes > 0) {
      throw slipstream::InvalidArgumentError("buffer is NULL but buffer_bytes is " +
                                             std::to_string(buffer_bytes));
    }
    cpp.unpack_tensor(string_arg(name, name_length, "name"), dtype_arg(dtype), buffer, buffer_bytes,
                      shape_arg(expected_shape, expected_rank), order_arg(order));
  });
}

slipstream_status_t slipstream_get_tensor(slipstream_client_t* client, const char* name,
                                          size_t name_length, slipstream_tensor_t** tensor) {
  return guarded([&] {
    slipstream::Client& cpp = client_of(client);
    deref(tensor, "tensor output pointer");
    auto result = std::make_unique<Tensor>(cpp.get_tensor(string_arg(name, name_length, "name")));
    *tensor = tensor_handle(result.release());
  });
}

slipstream_status_t slipstream_delete_tensor(slipstream_client_t* client, const char* name,
                                             size_t name_length, int* existed) {
  return guarded([&] {
    flag_out(client_of(client).delete_tensor(string_arg(name, name_length, "name")), existed);
  });
}

slipstream_status_t slipstream_tensor_exists(slipstream_client_t* client, const char* name,
                                             size_t name_length, int* exists) {
  return guarded([&] {
    slipstream::Client& cpp = client_of(client);
    deref(exists, "exists output pointer");
    flag_out(cpp.tensor_exists(string_arg(name, name_length, "name")), exists);
  });
}

slipstream_status_t slipstream_rename_tensor(slipstream_client_t* client, const char* old_name,
                                             size_t old_name_length, const char* new_name,
                                             size_t new_name_length) {
  return guarded([&] {
    client_of(client).rename_tensor(string_arg(old_name, old_name_length, "old_name"),
                                    string_arg(new_name, new_name_length, "new_name"));
  });
}

slipstream_status_t slipstream_copy_tensor(slipstream_client_t* client, const char* source,
                                           size_t source_length, const char* destination,
                                           size_t destination_length) {
  return guarded([&] {
    client_of(client).copy_tensor(string_arg(source, source_length, "source"),
                                  string_arg(destination, destination_length, "destination"));
  });
}

slipstream_status_t slipstream_poll_tensor(slipstream_client_t* client, const char* name,
                                           size_t name_length, int poll_ms, int tries,
                                           int* exists) {
  return guarded([&] {
    slipstream::Client& cpp = client_of(client);
    deref(exists, "exists output pointer");
    flag_out(cpp.poll_tensor(string_arg(name, name_length, "name"), poll_ms, tries), exists);
  });
}

slipstream_status_t slipstream_put_tensors(slipstream_client_t* client,
                                           const slipstream_tensor_ref_t* tensors, size_t count) {
  return guarded([&] {
    slipstream::Client& cpp = client_of(client);
    const std::vector<TensorRef> refs = tensor_refs(tensors, count);
    cpp.put_tensors(refs);
  });
}

slipstream_status_t slipstream_get_tensors(slipstream_client_t* client, const char* const* names,
                                           const size_t* name_lengths, size_t count,
                                           slipstream_tensor_t** tensors) {
  return guarded([&] {
    slipstream::Client& cpp = client_of(client);
    if (count > 0) deref(tensors, "tensors output array");
    const std::vector<std::string> keys = string_list_arg(names, name_lengths, count, "names");
    tensors_out(cpp.get_tensors(keys), tensors);
  });
}

// ---- Library-owned tensors ----------------------------------------------------------------------

// Not guarded: it cannot fail, and leaving the last error alone lets a caller free the results of
// a failed step (slipstream_tensor_copy_to_shape on run_model_on's results) and still report why.
slipstream_status_t slipstream_tensor_destroy(slipstream_tensor_t** tensor) {
  if (tensor != nullptr) {
    delete reinterpret_cast<Tensor*>(*tensor);
    *tensor = nullptr;
  }
  return SLIPSTREAM_OK;
}

slipstream_status_t slipstream_tensor_dtype(const slipstream_tensor_t* tensor,
                                            slipstream_dtype_t* dtype) {
  return guarded([&] {
    const Tensor& t = tensor_of(tensor);
    deref(dtype, "dtype output pointer") = static_cast<slipstream_dtype_t>(t.dtype());
  });
}

slipstream_status_t slipstream_tensor_shape(const slipstream_tensor_t* tensor,
                                            const int64_t** shape, size_t* rank) {
  return guarded([&] {
    const Tensor& t = tensor_of(tensor);
    deref(shape, "shape output pointer") = t.shape().data();
    deref(rank, "rank output pointer") = t.shape().size();
  });
}

slipstream_status_t slipstream_tensor_data(const slipstream_tensor_t* tensor, const void** data,
                                           size_t* bytes) {
  return guarded([&] {
    const Tensor& t = tensor_of(tensor);
    deref(data, "data output pointer") = t.bytes().data();
    if (bytes != nullptr) *bytes = t.byte_size();
  });
}

slipstream_status_t slipstream_tensor_copy_to(const slipstream_tensor_t* tensor, void* buffer,
                                              size_t buffer_bytes, slipstream_dtype_t dtype,
                                              slipstream_memory_order_t order) {
  return slipstream_tensor_copy_to_shape(tensor, buffer, buffer_bytes, nullptr, 0, dtype, order);
}

slipstream_status_t slipstream_tensor_copy_to_shape(const slipstream_tensor_t* tensor, void* buffer,
                                                    size_t buffer_bytes,
                                                    const int64_t* expected_shape,
                                                    size_t expected_rank, slipstream_dtype_t dtype,
                                                    slipstream_memory_order_t order) {
  return guarded([&] {
    const Tensor& t = tensor_of(tensor);
    check_expected_shape("result", t.shape(), expected_shape, expected_rank);
    if (buffer == nullptr && buffer_bytes > 0) {
      throw slipstream::InvalidArgumentError("buffer is NULL");
    }
    t.copy_to(dtype_arg(dtype), buffer, buffer_bytes, order_arg(order));
  });
}

// ---- Raw keys ---------------------------------------------------------------------------------

slipstream_status_t slipstream_key_exists(slipstream_client_t* client, const char* key,
                                          size_t key_length, int* exists) {
  return guarded([&] {
    slipstream::Client& cpp = client_of(client);
    deref(exists, "exists output pointer");
    flag_out(cpp.key_exists(string_arg(key, key_length, "key")), exists);
  });
}

slipstream_status_t slipstream_poll_key(slipstream_client_t* client, const char* key,
                                        size_t key_length, int poll_ms, int tries, int* exists) {
  return guarded([&] {
    slipstream::Client& cpp = client_of(client);
    deref(exists, "exists output pointer");
    flag_out(cpp.poll_key(string_arg(key, key_length, "key"), poll_ms, tries), exists);
  });
}

slipstream_status_t slipstream_wait_for_keys(slipstream_client_t* client, const char* const* keys,
                                             const size_t* key_lengths, size_t count,
                                             int64_t timeout_ms, int* all_exist) {
  return guarded([&] {
    slipstream::Client& cpp = client_of(client);
    deref(all_exist, "all_exist output pointer");
    const std::vector<std::string> names = string_list_arg(keys, key_lengths, count, "keys");
    const auto timeout =
        timeout_ms < 0 ? slipstream::kWaitForever : std::chrono::milliseconds(timeout_ms);
    flag_out(cpp.wait_for_keys(names, timeout), all_exist);
  });
}

slipstream_status_t slipstream_put_bytes(slipstream_client_t* client, const char* key,
                                         size_t key_length, const char* bytes, size_t length) {
  return guarded([&] {
    client_of(client).put_bytes(string_arg(key, key_length, "key"),
                                string_arg(bytes, length, "bytes"));
  });
}

slipstream_status_t slipstream_get_bytes(slipstream_client_t* client, const char* key,
                                         size_t key_length, char** bytes, size_t* length) {
  return guarded([&] {
    slipstream::Client& cpp = client_of(client);
    deref(bytes, "bytes output pointer");
    string_out(cpp.get_bytes(string_arg(key, key_length, "key")), bytes, length, "bytes");
  });
}

slipstream_status_t slipstream_delete_bytes(slipstream_client_t* client, const char* key,
                                            size_t key_length, int* existed) {
  return guarded([&] {
    flag_out(client_of(client).delete_bytes(string_arg(key, key_length, "key")), existed);
  });
}

}  // extern "C"
