// Shared by the SmartRedis-compatible C API's translation units (c_client.cpp, c_dataset.cpp):
// the handles behind SmartRedis's `void*` clients and datasets, memory kept for the caller, the
// last error, and conversions from SmartRedis's arguments (size_t dims, SRTensorType,
// SRMemoryLayout) to the Slipstream C API's, with a clear message for each bad one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "configoptions.h"
#include "slipstream.h"
#include "sr_enums.h"
#include "srexception.h"

namespace slipstream::smartredis::c_api {

/// Blocks of memory handed to the caller (get_tensor, get_model ...) that stay valid until their
/// owner (a client or a dataset) is deleted, as SmartRedis promises. Thread-safe.
class KeptMemory {
 public:
  /// A new zeroed block of `bytes` bytes (at least 1), owned by this object.
  std::byte* allocate(std::size_t bytes);

 private:
  std::mutex mutex_;
  std::vector<std::unique_ptr<std::byte[]>> blocks_;  // GUARDED_BY(mutex_)
};

/// What every `void*` handle of this API points to first: what it is (so that a dataset passed
/// as a client is an error, not a crash) and the context its log lines carry (a client's logger
/// name, a dataset's name, a logging context's name). A `void*` handle is always a Handle*
/// converted to void*.
struct Handle {
  enum class Kind { kClient, kDataSet, kConfigOptions, kLogContext };
  Handle(Kind k, std::string context) : kind(k), log_context(std::move(context)) {}
  Kind kind;
  std::string log_context;
};

/// What a SmartRedis `void*` client points to.
struct ClientHandle : Handle {
  explicit ClientHandle(std::string logger_name) : Handle(Kind::kClient, std::move(logger_name)) {}
  slipstream_client_t* client = nullptr;
  KeptMemory kept;
};

/// What a SmartRedis `void*` dataset points to.
struct DataSetHandle : Handle {
  explicit DataSetHandle(std::string name) : Handle(Kind::kDataSet, std::move(name)) {}
  slipstream_dataset_t* dataset = nullptr;
  KeptMemory kept;
  ~DataSetHandle() { slipstream_dataset_destroy(&dataset); }
};

/// What a SmartRedis `void*` ConfigOptions points to (c_configoptions.cpp).
struct ConfigOptionsHandle : Handle {
  explicit ConfigOptionsHandle(std::unique_ptr<SmartRedis::ConfigOptions> o)
      : Handle(Kind::kConfigOptions, ""), options(std::move(o)) {}
  std::unique_ptr<SmartRedis::ConfigOptions> options;
  KeptMemory kept;
};

/// What a SmartRedis `void*` logging context points to (c_logcontext.cpp): its name only.
struct LogContextHandle : Handle {
  explicit LogContextHandle(std::string name) : Handle(Kind::kLogContext, std::move(name)) {}
};

/// The `void*` SmartRedis gets for a handle.
inline void* to_void(Handle* handle) { return handle; }
/// The handle behind a `void*` (NULL stays NULL).
inline Handle* handle_of(const void* pointer) {
  return static_cast<Handle*>(const_cast<void*>(pointer));
}

/// A failure detected in this layer, turned into a code and a message by guarded().
struct Failure {
  SRError code;
  std::string message;
};

/// The SRError for a Slipstream status.
SRError error_of(slipstream_status_t status) noexcept;
/// Records the last error of this thread (SRGetLastError: "location: message") and the C
/// function that raised it (SRGetLastErrorLocation).
void set_last_error(std::string_view message, std::string_view location) noexcept;
void set_last_location(std::string_view location) noexcept;
/// Inside a catch block: records the exception being handled (the C++ layer's translation, so
/// that C and C++ report the same code and text) and returns its code.
SRError record_exception(const char* location) noexcept;

/// Where this thread's last error was raised (SRGetLastErrorLocation).
const char* last_error_location() noexcept;

/// Throws a Failure carrying slipstream_last_error() if `status` is not SLIPSTREAM_OK.
void check(slipstream_status_t status);

/// Runs `body` for the C function `location`: clears the last error, and turns a Failure or an
/// exception into its code and message, so that none crosses into C.
template <typename Body>
SRError guarded(const char* location, Body&& body) noexcept {
  set_last_error("", "");
  try {
    body();
    return SRNoError;
  } catch (const Failure& failure) {
    set_last_error(failure.message, location);
    return failure.code;
  } catch (...) {
    return record_exception(location);
  }
}

[[noreturn]] void parameter_error(std::string message);

ClientHandle& client_of(void* c_client);
DataSetHandle& dataset_of(const void* dataset);
SmartRedis::ConfigOptions& configoptions_of(void* c_cfgopts);
/// Throws a parameter error naming `what` when `pointer` is NULL.
void require(const void* pointer, const char* what);
/// A string argument: NULL is allowed only with length 0.
std::string_view text(const char* data, std::size_t length, const char* what);

/// The Slipstream dtype of a SmartRedis tensor type, and back (bool has no SmartRedis type).
slipstream_dtype_t dtype_of(SRTensorType type);
SRTensorType tensor_type_of(slipstream_dtype_t dtype);
/// The Slipstream metadata type of a SmartRedis one, and back.
slipstream_meta_type_t meta_type_of(SRMetaDataType type);
SRMetaDataType sr_meta_type_of(slipstream_meta_type_t type);

/// SmartRedis dims as a Slipstream shape (each dimension > 0 and representable).
std::vector<std::int64_t> shape_of(const std::size_t* dims, std::size_t n_dims);
/// product(shape) * element size of `dtype`, checked for overflow.
std::size_t byte_count(const std::vector<std::int64_t>& shape, slipstream_dtype_t dtype);

/// A caller's tensor buffer described by SmartRedis's layout: contiguous row-major or
/// column-major, or nested pointer arrays (row-major, gathered into / scattered from a
/// contiguous copy).
enum class Layout { kContiguous, kFortran, kNested };
Layout layout_of(SRMemoryLayout layout);
slipstream_memory_order_t order_of(Layout layout);

/// Copies nested row-major pointer arrays into `out` (product(shape) elements), and back.
void gather_nested(const void* nested, const std::vector<std::int64_t>& shape,
                   std::size_t element_size, std::byte* out);
void scatter_nested(const std::byte* contiguous, const std::vector<std::int64_t>& shape,
                    std::size_t element_size, void* nested);

/// A tensor handed to the caller in `kept` memory: its elements in `layout` (nested pointer
/// arrays for kNested), its dims and its type.
void tensor_out(const slipstream_tensor_t* tensor, Layout layout, KeptMemory& kept, void** data,
                std::size_t** dims, std::size_t* n_dims, SRTensorType* type);
/// Copies a tensor into a caller's buffer of shape `dims` and type `type` in `layout`;
/// `unpack(buffer, bytes, shape, dtype, order)` does the Slipstream call.
template <typename Unpack>
void unpack_into(void* data, const std::size_t* dims, std::size_t n_dims, SRTensorType type,
                 SRMemoryLayout mem_layout, Unpack&& unpack) {
  require(data, "result buffer");
  std::vector<std::int64_t> shape = shape_of(dims, n_dims);
  slipstream_dtype_t dtype = dtype_of(type);
  Layout layout = layout_of(mem_layout);
  std::size_t bytes = byte_count(shape, dtype);
  if (layout != Layout::kNested) {
    check(unpack(data, bytes, shape, dtype, order_of(layout)));
    return;
  }
  std::vector<std::byte> contiguous(bytes);
  check(unpack(contiguous.data(), bytes, shape, dtype, SLIPSTREAM_C_ORDER));
  scatter_nested(contiguous.data(), shape, slipstream_dtype_size(dtype), data);
}
/// Calls `put(data, shape, dtype, order)` for a caller's buffer in `mem_layout` (nested arrays
/// gathered into a contiguous copy first).
template <typename Put>
void put_from(void* data, const std::size_t* dims, std::size_t n_dims, SRTensorType type,
              SRMemoryLayout mem_layout, Put&& put) {
  require(data, "tensor data");
  std::vector<std::int64_t> shape = shape_of(dims, n_dims);
  slipstream_dtype_t dtype = dtype_of(type);
  Layout layout = layout_of(mem_layout);
  if (layout != Layout::kNested) {
    check(put(data, shape, dtype, order_of(layout)));
    return;
  }
  std::vector<std::byte> contiguous(byte_count(shape, dtype));
  gather_nested(data, shape, slipstream_dtype_size(dtype), contiguous.data());
  check(put(contiguous.data(), shape, dtype, SLIPSTREAM_C_ORDER));
}

/// `count` strings as SmartRedis passes them (lengths may be NULL: NUL-terminated).
void require_strings(const char** strings, std::size_t count, const char* what);

/// Strings handed to the caller in `kept` memory as SmartRedis returns them: an array of
/// NUL-terminated copies and an array of their lengths.
void strings_out(const std::vector<std::string>& strings, KeptMemory& kept, char*** data,
                 std::size_t* count, std::size_t** lengths);

}  // namespace slipstream::smartredis::c_api
