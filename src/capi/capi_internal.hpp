// Shared by the C API's translation units: the handle types behind the opaque C names, the
// exception-to-status guard, and conversions of C arguments (pointer + length strings, shapes,
// enums) into the C++ client's types with a clear error for each bad one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "slipstream.h"
#include "slipstream/client.hpp"

// The client and dataset handles wrap the C++ objects. Tensors and replies have no wrapper: a
// slipstream_tensor_t* is a slipstream::Tensor* (and a slipstream_reply_t* a slipstream::Reply*)
// cast to the opaque type, so a tensor borrowed from a dataset or an element borrowed from a
// reply is the same kind of pointer as an owned one.
struct slipstream_client {
  explicit slipstream_client(slipstream::Client c) : client(std::move(c)) {}
  slipstream::Client client;
};

struct slipstream_dataset {
  explicit slipstream_dataset(slipstream::DataSet d) : dataset(std::move(d)) {}
  slipstream::DataSet dataset;
};

// The helpers marked SLIPSTREAM_CAPI_SHARED are exported from libslipstream_c for its sibling C
// libraries (libslipstream_local_c), so that their errors land in the same per-thread last error
// and their arguments are read the same way. They are not a public API.
#define SLIPSTREAM_CAPI_SHARED __attribute__((visibility("default")))

namespace slipstream::capi {

/// Records `message` as this thread's last error and returns `status`. Never throws.
SLIPSTREAM_CAPI_SHARED slipstream_status_t fail(slipstream_status_t status,
                                                const char* message) noexcept;
/// Clears this thread's last error (every entry point does so first).
SLIPSTREAM_CAPI_SHARED void clear_last_error() noexcept;

/// Runs `body`, turning every exception into a status and a last-error message, so that no
/// exception ever crosses into C. Returns SLIPSTREAM_OK if `body` returns normally.
template <typename Body>
slipstream_status_t guarded(Body&& body) noexcept {
  clear_last_error();
  try {
    body();
    return SLIPSTREAM_OK;
  } catch (const slipstream::Error& e) {
    return fail(static_cast<slipstream_status_t>(e.code()), e.what());
  } catch (const std::bad_alloc&) {
    return fail(SLIPSTREAM_CLIENT_OUT_OF_MEMORY, "out of memory in the client process");
  } catch (const std::exception& e) {
    std::string message;
    try {
      message = std::string("internal error: ") + e.what();
    } catch (...) {
      return fail(SLIPSTREAM_INTERNAL_ERROR, "internal error");
    }
    return fail(SLIPSTREAM_INTERNAL_ERROR, message.c_str());
  } catch (...) {
    return fail(SLIPSTREAM_INTERNAL_ERROR, "internal error: unknown exception");
  }
}

/// The string `data`/`length` (SLIPSTREAM_NTS: NUL-terminated). `what` names the argument in the
/// error thrown for a NULL pointer with a non-zero length.
SLIPSTREAM_CAPI_SHARED std::string_view string_arg(const char* data, std::size_t length,
                                                   const char* what);
/// An optional string: nullopt when `data` is NULL.
std::optional<std::string> optional_string_arg(const char* data, std::size_t length);
/// The C++ options for a C options struct (NULL: the defaults), strings checked by string_arg.
slipstream::ClientOptions client_options_arg(const slipstream_client_options_t* options);
/// `count` strings (lengths NULL: all NUL-terminated).
std::vector<std::string> string_list_arg(const char* const* data, const std::size_t* lengths,
                                         std::size_t count, const char* what);
/// A shape of `rank` dimensions (rank 0: a scalar, `data` may be NULL).
SLIPSTREAM_CAPI_SHARED std::span<const std::int64_t> shape_arg(const std::int64_t* data,
                                                               std::size_t rank);
SLIPSTREAM_CAPI_SHARED DType dtype_arg(slipstream_dtype_t dtype);
SLIPSTREAM_CAPI_SHARED MemoryOrder order_arg(slipstream_memory_order_t order);
/// element_count(shape) * dtype_size(dtype), checking the product does not overflow.
std::size_t tensor_bytes(DType dtype, std::span<const std::int64_t> shape);
/// A compression operator from C: its type and "name=value,name=value" parameters (NULL or empty:
/// none; spaces around names and values are not part of them). `what` names it in errors.
slipstream::CompressionOperator operator_arg(const char* type, std::size_t type_length,
                                             const char* parameters, std::size_t parameters_length,
                                             std::string_view what);

/// Throws InvalidArgumentError naming `what` if `pointer` is NULL.
template <typename T>
T& deref(T* pointer, const char* what) {
  if (pointer == nullptr) throw InvalidArgumentError(std::string(what) + " is NULL");
  return *pointer;
}
inline Client& client_of(slipstream_client_t* client) {
  return deref(client, "client handle").client;
}
inline const DataSet& dataset_of(const slipstream_dataset_t* dataset) {
  return deref(dataset, "dataset handle").dataset;
}
inline DataSet& dataset_of(slipstream_dataset_t* dataset) {
  return deref(dataset, "dataset handle").dataset;
}
inline const Tensor& tensor_of(const slipstream_tensor_t* tensor) {
  return deref(reinterpret_cast<const Tensor*>(tensor), "tensor handle");
}
inline slipstream_tensor_t* tensor_handle(Tensor* tensor) {
  return reinterpret_cast<slipstream_tensor_t*>(tensor);
}

/// A malloc'd, NUL-terminated copy of `bytes` (released with slipstream_free). Throws
/// std::bad_alloc.
char* copy_out(std::string_view bytes);
/// Stores a malloc'd copy of `bytes` in *out and its length in *length (either may be NULL only if
/// the caller asked for nothing; `out` is required).
SLIPSTREAM_CAPI_SHARED void string_out(std::string_view bytes, char** out, std::size_t* length,
                                       const char* what);

/// Borrowing C++ views of C tensor references (the caller's arrays must outlive their use).
SLIPSTREAM_CAPI_SHARED std::vector<TensorRef> tensor_refs(const slipstream_tensor_ref_t* tensors,
                                                          std::size_t count);
/// Moves tensors into new handles stored in out[0..size) (all or none).
void tensors_out(std::vector<Tensor> tensors, slipstream_tensor_t** out);

/// Converts a bool result for an optional `int*` output.
inline void flag_out(bool value, int* out) {
  if (out != nullptr) *out = value ? 1 : 0;
}

/// Throws InvalidArgumentError if a tensor's shape differs from the expected one (rank 0: no
/// check).
void check_expected_shape(std::string_view name, std::span<const std::int64_t> actual,
                          const std::int64_t* expected, std::size_t expected_rank);

}  // namespace slipstream::capi
