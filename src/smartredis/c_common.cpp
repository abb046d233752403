// The SmartRedis-compatible C API's shared parts: last error, status and type mappings, argument
// checks, nested layouts and memory kept for the caller (see c_common.hpp).
#include "c_common.hpp"

#include <cstring>
#include <limits>

#include "sr_errors.hpp"

namespace slipstream::smartredis::c_api {

namespace {

// The message is the library's one last error (sr_errors.hpp), shared with the C++ layer; the
// location is the C function that failed.
thread_local std::string last_location;

// Elements per index of each level: stride[level] = product(shape[level + 1 ..]).
std::vector<std::size_t> strides(const std::vector<std::int64_t>& shape) {
  std::vector<std::size_t> result(shape.size(), 1);
  for (std::size_t level = shape.size(); level-- > 1;) {
    result[level - 1] = result[level] * static_cast<std::size_t>(shape[level]);
  }
  return result;
}

// Walks nested pointer arrays down to the innermost rows, calling copy(row, element offset).
template <typename Copy>
void walk_nested(const void* node, const std::vector<std::int64_t>& shape,
                 const std::vector<std::size_t>& stride, std::size_t level, std::size_t offset,
                 Copy& copy) {
  if (level + 1 >= shape.size()) {
    copy(node, offset);
    return;
  }
  require(node, "nested tensor row pointer");
  auto* rows = static_cast<void* const*>(node);
  for (std::int64_t i = 0; i < shape[level]; ++i) {
    walk_nested(rows[i], shape, stride, level + 1,
                offset + static_cast<std::size_t>(i) * stride[level], copy);
  }
}

}  // namespace

std::byte* KeptMemory::allocate(std::size_t bytes) {
  auto block = std::make_unique<std::byte[]>(bytes == 0 ? 1 : bytes);
  std::byte* pointer = block.get();
  std::lock_guard lock(mutex_);
  blocks_.push_back(std::move(block));
  return pointer;
}

SRError error_of(slipstream_status_t status) noexcept {
  switch (status) {
    case SLIPSTREAM_OK:
      return SRNoError;
    case SLIPSTREAM_TIMEOUT_ERROR:
      return SRTimeoutError;
    case SLIPSTREAM_KEY_NOT_FOUND:
      return SRKeyError;
    case SLIPSTREAM_WRONG_TYPE:
      return SRTypeError;
    case SLIPSTREAM_INVALID_ARGUMENT:
    case SLIPSTREAM_BUFFER_TOO_SMALL:
      return SRParameterError;
    // An error reply is SmartRedis's runtime error (it throws SRRuntimeException for replies
    // with an error), as in the C++ and Python layers; the database error is for a server that
    // cannot be reached or spoken to.
    case SLIPSTREAM_BACKEND_ERROR:
    case SLIPSTREAM_STEP_ABORTED:
    case SLIPSTREAM_SERVER_ERROR:
    case SLIPSTREAM_OUT_OF_MEMORY:
      return SRRuntimeError;
    case SLIPSTREAM_CLIENT_OUT_OF_MEMORY:
      return SRBadAllocError;
    case SLIPSTREAM_INTERNAL_ERROR:
      return SRInternalError;
    case SLIPSTREAM_CONNECTION_ERROR:
    case SLIPSTREAM_PROTOCOL_ERROR:
    case SLIPSTREAM_AUTH_ERROR:
      return SRDatabaseError;
  }
  return SRInternalError;
}

void set_last_error(std::string_view message, std::string_view location) noexcept {
  try {
    if (message.empty() || location.empty()) {
      slipstream::smartredis::set_last_error(message);
    } else {
      slipstream::smartredis::set_last_error(std::string(location) + ": " + std::string(message));
    }
  } catch (...) {
    slipstream::smartredis::set_last_error(message);
  }
  set_last_location(location);
}

void set_last_location(std::string_view location) noexcept {
  try {
    last_location.assign(location);
  } catch (...) {
    last_location.clear();
  }
}

const char* last_error_location() noexcept { return last_location.c_str(); }

SRError record_exception(const char* location) noexcept {
  set_last_location(location);
  return slipstream::smartredis::record_current_exception(location);
}

void check(slipstream_status_t status) {
  if (status != SLIPSTREAM_OK) throw Failure{error_of(status), slipstream_last_error()};
}

void parameter_error(std::string message) { throw Failure{SRParameterError, std::move(message)}; }

void require(const void* pointer, const char* what) {
  if (pointer == nullptr) parameter_error(std::string(what) + " is NULL");
}

ClientHandle& client_of(void* c_client) {
  require(c_client, "client");
  Handle* handle = handle_of(c_client);
  if (handle->kind != Handle::Kind::kClient) {
    parameter_error("the client argument is another kind of object (a dataset?)");
  }
  return static_cast<ClientHandle&>(*handle);
}

DataSetHandle& dataset_of(const void* dataset) {
  require(dataset, "dataset");
  Handle* handle = handle_of(dataset);
  if (handle->kind != Handle::Kind::kDataSet) {
    parameter_error("the dataset argument is another kind of object (a client?)");
  }
  return static_cast<DataSetHandle&>(*handle);
}

SmartRedis::ConfigOptions& configoptions_of(void* c_cfgopts) {
  require(c_cfgopts, "ConfigOptions");
  Handle* handle = handle_of(c_cfgopts);
  if (handle->kind != Handle::Kind::kConfigOptions) {
    parameter_error("the ConfigOptions argument is another kind of object");
  }
  return *static_cast<ConfigOptionsHandle*>(handle)->options;
}

std::string_view text(const char* data, std::size_t length, const char* what) {
  if (data == nullptr && length != 0) {
    parameter_error(std::string(what) + " is NULL with length " + std::to_string(length));
  }
  return data == nullptr ? std::string_view() : std::string_view(data, length);
}

slipstream_dtype_t dtype_of(SRTensorType type) {
  switch (type) {
    case SRTensorTypeDouble:
      return SLIPSTREAM_FLOAT64;
    case SRTensorTypeFloat:
      return SLIPSTREAM_FLOAT32;
    case SRTensorTypeInt8:
      return SLIPSTREAM_INT8;
    case SRTensorTypeInt16:
      return SLIPSTREAM_INT16;
    case SRTensorTypeInt32:
      return SLIPSTREAM_INT32;
    case SRTensorTypeInt64:
      return SLIPSTREAM_INT64;
    case SRTensorTypeUint8:
      return SLIPSTREAM_UINT8;
    case SRTensorTypeUint16:
      return SLIPSTREAM_UINT16;
    case SRTensorTypeInvalid:
      break;
  }
  parameter_error("tensor type " + std::to_string(static_cast<int>(type)) +
                  " is not an SRTensorType (expected SRTensorTypeDouble ... SRTensorTypeUint16)");
}

SRTensorType tensor_type_of(slipstream_dtype_t dtype) {
  switch (dtype) {
    case SLIPSTREAM_FLOAT64:
      return SRTensorTypeDouble;
    case SLIPSTREAM_FLOAT32:
      return SRTensorTypeFloat;
    case SLIPSTREAM_INT8:
      return SRTensorTypeInt8;
    case SLIPSTREAM_INT16:
      return SRTensorTypeInt16;
    case SLIPSTREAM_INT32:
      return SRTensorTypeInt32;
    case SLIPSTREAM_INT64:
      return SRTensorTypeInt64;
    case SLIPSTREAM_UINT8:
      return SRTensorTypeUint8;
    case SLIPSTREAM_UINT16:
      return SRTensorTypeUint16;
    default:
      break;
  }
  throw Failure{SRTypeError, "the tensor's element type (bool) has no SRTensorType"};
}

slipstream_meta_type_t meta_type_of(SRMetaDataType type) {
  if (type >= SRMetadataTypeDouble && type <= SRMetadataTypeString) {
    return static_cast<slipstream_meta_type_t>(type);  // the values are SmartRedis's type bytes
  }
  parameter_error("metadata type " + std::to_string(static_cast<int>(type)) +
                  " is not an SRMetaDataType (expected SRMetadataTypeDouble ... String)");
}

SRMetaDataType sr_meta_type_of(slipstream_meta_type_t type) {
  return static_cast<SRMetaDataType>(type);
}

std::vector<std::int64_t> shape_of(const std::size_t* dims, std::size_t n_dims) {
  if (n_dims == 0) parameter_error("n_dims is 0: a tensor needs at least one dimension");
  require(dims, "dims");
  std::vector<std::int64_t> shape(n_dims);
  for (std::size_t i = 0; i < n_dims; ++i) {
    if (dims[i] == 0 ||
        dims[i] > static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max())) {
      parameter_error("dims[" + std::to_string(i) + "] is " + std::to_string(dims[i]) +
                      "; every dimension must be at least 1");
    }
    shape[i] = static_cast<std::int64_t>(dims[i]);
  }
  return shape;
}

std::size_t byte_count(const std::vector<std::int64_t>& shape, slipstream_dtype_t dtype) {
  std::size_t bytes = slipstream_dtype_size(dtype);
  for (std::int64_t dim : shape) {
    auto d = static_cast<std::size_t>(dim);
    if (bytes > std::numeric_limits<std::size_t>::max() / d) {
      parameter_error("the tensor's size in bytes overflows");
    }
    bytes *= d;
  }
  return bytes;
}

Layout layout_of(SRMemoryLayout layout) {
  switch (layout) {
    case SRMemLayoutContiguous:
      return Layout::kContiguous;
    case SRMemLayoutFortranContiguous:
      return Layout::kFortran;
    case SRMemLayoutNested:
      return Layout::kNested;
    case SRMemLayoutFortranNested:
      parameter_error(
          "SRMemLayoutFortranNested is not supported; use SRMemLayoutFortranContiguous");
    case SRMemLayoutInvalid:
      break;
  }
  parameter_error("memory layout " + std::to_string(static_cast<int>(layout)) +
                  " is not an SRMemoryLayout (expected SRMemLayoutNested, SRMemLayoutContiguous "
                  "or SRMemLayoutFortranContiguous)");
}

slipstream_memory_order_t order_of(Layout layout) {
  return layout == Layout::kFortran ? SLIPSTREAM_FORTRAN_ORDER : SLIPSTREAM_C_ORDER;
}

void gather_nested(const void* nested, const std::vector<std::int64_t>& shape,
                   std::size_t element_size, std::byte* out) {
  std::vector<std::size_t> stride = strides(shape);
  std::size_t row_bytes = static_cast<std::size_t>(shape.back()) * element_size;
  auto copy = [&](const void* row, std::size_t offset) {
    require(row, "nested tensor row");
    std::memcpy(out + offset * element_size, row, row_bytes);
  };
  walk_nested(nested, shape, stride, 0, 0, copy);
}

void scatter_nested(const std::byte* contiguous, const std::vector<std::int64_t>& shape,
                    std::size_t element_size, void* nested) {
  std::vector<std::size_t> stride = strides(shape);
  std::size_t row_bytes = static_cast<std::size_t>(shape.back()) * element_size;
  auto copy = [&](const void* row, std::size_t offset) {
    require(row, "nested tensor row");
    std::memcpy(const_cast<void*>(row), contiguous + offset * element_size, row_bytes);
  };
  walk_nested(nested, shape, stride, 0, 0, copy);
}

void tensor_out(const slipstream_tensor_t* tensor, Layout layout, KeptMemory& kept, void** data,
                std::size_t** dims, std::size_t* n_dims, SRTensorType* type) {
  require(data, "data");
  require(dims, "dims");
  require(n_dims, "n_dims");
  require(type, "type");
  slipstream_dtype_t dtype = 0;
  const std::int64_t* shape_data = nullptr;
  std::size_t rank = 0;
  check(slipstream_tensor_dtype(tensor, &dtype));
  check(slipstream_tensor_shape(tensor, &shape_data, &rank));
  SRTensorType sr_type = tensor_type_of(dtype);
  std::vector<std::int64_t> shape(shape_data, shape_data + rank);
  std::size_t bytes = byte_count(shape, dtype);
  std::byte* elements = kept.allocate(bytes);
  check(slipstream_tensor_copy_to(tensor, elements, bytes, dtype, order_of(layout)));
  void* result = elements;
  if (layout == Layout::kNested && rank > 1) {
    // Pointer arrays from the innermost level out: level l has product(shape[0..l]) pointers,
    // each to the start of its row in the level below (the elements for l = rank - 2).
    std::byte* below = elements;
    std::size_t below_step =
        static_cast<std::size_t>(shape[rank - 1]) * slipstream_dtype_size(dtype);
    std::vector<std::size_t> counts(rank - 1);
    std::size_t count = 1;
    for (std::size_t l = 0; l + 1 < rank; ++l)
      counts[l] = count *= static_cast<std::size_t>(shape[l]);
    for (std::size_t l = rank - 1; l-- > 0;) {
      auto* pointers = reinterpret_cast<void**>(kept.allocate(counts[l] * sizeof(void*)));
      for (std::size_t k = 0; k < counts[l]; ++k) pointers[k] = below + k * below_step;
      below = reinterpret_cast<std::byte*>(pointers);
      below_step = static_cast<std::size_t>(shape[l]) * sizeof(void*);
    }
    result = below;
  }
  auto* dims_out = reinterpret_cast<std::size_t*>(kept.allocate(rank * sizeof(std::size_t)));
  for (std::size_t i = 0; i < rank; ++i) dims_out[i] = static_cast<std::size_t>(shape[i]);
  *data = result;
  *dims = dims_out;
  *n_dims = rank;
  *type = sr_type;
}

void require_strings(const char** strings, std::size_t count, const char* what) {
  if (count == 0) return;
  require(strings, what);
  for (std::size_t i = 0; i < count; ++i) {
    if (strings[i] == nullptr)
      parameter_error(std::string(what) + "[" + std::to_string(i) + "] is NULL");
  }
}

void strings_out(const std::vector<std::string>& strings, KeptMemory& kept, char*** data,
                 std::size_t* count, std::size_t** lengths) {
  require(data, "data");
  require(count, "n_strings");
  require(lengths, "lengths");
  auto* pointers = reinterpret_cast<char**>(kept.allocate(strings.size() * sizeof(char*)));
  auto* sizes = reinterpret_cast<std::size_t*>(kept.allocate(strings.size() * sizeof(std::size_t)));
  for (std::size_t i = 0; i < strings.size(); ++i) {
    auto* copy = reinterpret_cast<char*>(kept.allocate(strings[i].size() + 1));
    std::memcpy(copy, strings[i].data(), strings[i].size());
    pointers[i] = copy;
    sizes[i] = strings[i].size();
  }
  *data = pointers;
  *count = strings.size();
  *lengths = sizes;
}

}  // namespace slipstream::smartredis::c_api

extern "C" {

const char* SRGetLastErrorLocation(void) {
  return slipstream::smartredis::c_api::last_error_location();
}

}  // extern "C"

// For the Fortran module smartredis_client: records an error it finds itself (dims that do not
// match the array, ...) so that get_last_error / SRGetLastError report it.
extern "C" void slipstream_smartredis_set_fortran_error(const char* message, size_t length) {
  slipstream::smartredis::c_api::set_last_error(std::string_view(message, length),
                                                "Fortran client");
}
