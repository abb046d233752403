// The C API's error state (last message per thread), argument conversions, and the helpers that
// do not touch a client (status names, dtype sizes, slipstream_free).
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "capi/capi_internal.hpp"

namespace slipstream::capi {
namespace {

// The message of this thread's last failure. If storing it fails (no memory), `fallback` points to
// a static text instead.
thread_local std::string last_message;
thread_local const char* fallback = nullptr;

// The C status values are ErrorCode's numbers; a renumbering on either side must break the build.
static_assert(SLIPSTREAM_CONNECTION_ERROR == static_cast<int>(ErrorCode::kConnection));
static_assert(SLIPSTREAM_TIMEOUT_ERROR == static_cast<int>(ErrorCode::kTimeout));
static_assert(SLIPSTREAM_PROTOCOL_ERROR == static_cast<int>(ErrorCode::kProtocol));
static_assert(SLIPSTREAM_SERVER_ERROR == static_cast<int>(ErrorCode::kServer));
static_assert(SLIPSTREAM_KEY_NOT_FOUND == static_cast<int>(ErrorCode::kKeyNotFound));
static_assert(SLIPSTREAM_WRONG_TYPE == static_cast<int>(ErrorCode::kWrongType));
static_assert(SLIPSTREAM_INVALID_ARGUMENT == static_cast<int>(ErrorCode::kInvalidArgument));
static_assert(SLIPSTREAM_BUFFER_TOO_SMALL == static_cast<int>(ErrorCode::kBufferTooSmall));
static_assert(SLIPSTREAM_OUT_OF_MEMORY == static_cast<int>(ErrorCode::kOutOfMemory));
static_assert(SLIPSTREAM_AUTH_ERROR == static_cast<int>(ErrorCode::kAuth));
static_assert(SLIPSTREAM_BACKEND_ERROR == static_cast<int>(ErrorCode::kBackend));
static_assert(SLIPSTREAM_BOOL == static_cast<int>(DType::kBool));
static_assert(SLIPSTREAM_UINT16 == static_cast<int>(DType::kUInt16));
static_assert(SLIPSTREAM_UINT32 == static_cast<int>(DType::kUInt32));
static_assert(SLIPSTREAM_UINT64 == static_cast<int>(DType::kUInt64));
static_assert(SLIPSTREAM_FORTRAN_ORDER == static_cast<int>(MemoryOrder::kFortran));
static_assert(SLIPSTREAM_REPLY_PUSH == static_cast<int>(Reply::Kind::kPush));

}  // namespace

slipstream_status_t fail(slipstream_status_t status, const char* message) noexcept {
  try {
    last_message = message;
    fallback = nullptr;
  } catch (...) {
    fallback = "(the error message could not be stored: out of memory)";
  }
  return status;
}

void clear_last_error() noexcept {
  last_message.clear();
  fallback = nullptr;
}

const char* last_error() noexcept { return fallback != nullptr ? fallback : last_message.c_str(); }

std::string_view string_arg(const char* data, std::size_t length, const char* what) {
  if (length == SLIPSTREAM_NTS)
    return data == nullptr ? std::string_view() : std::string_view(data);
  if (data == nullptr && length != 0) {
    throw InvalidArgumentError(std::string(what) + " is NULL but its length is " +
                               std::to_string(length));
  }
  return {data, length};
}

slipstream::ClientOptions client_options_arg(const slipstream_client_options_t* options) {
  slipstream::ClientOptions cpp;
  if (options == nullptr) return cpp;
  cpp.address = string_arg(options->address, options->address_length, "address");
  if (options->password != nullptr) {
    cpp.password = string_arg(options->password, options->password_length, "password");
  }
  if (options->connect_timeout_ms > 0) {
    cpp.connect_timeout = std::chrono::milliseconds(options->connect_timeout_ms);
  }
  if (options->command_timeout_ms >= 0) {
    cpp.command_timeout = std::chrono::milliseconds(options->command_timeout_ms);
  }
  if (options->key_prefix_out != nullptr) {
    cpp.key_prefix_out =
        string_arg(options->key_prefix_out, options->key_prefix_out_length, "key_prefix_out");
  }
  if (options->key_prefixes_in != nullptr) {
    cpp.key_prefixes_in =
        string_arg(options->key_prefixes_in, options->key_prefixes_in_length, "key_prefixes_in");
  }
  return cpp;
}

std::optional<std::string> optional_string_arg(const char* data, std::size_t length) {
  if (data == nullptr) return std::nullopt;
  return std::string(string_arg(data, length, "string"));
}

std::vector<std::string> string_list_arg(const char* const* data, const std::size_t* lengths,
                                         std::size_t count, const char* what) {
  std::vector<std::string> strings;
  if (count == 0) return strings;
  if (data == nullptr) {
    throw InvalidArgumentError(std::string(what) + " is NULL but its count is " +
                               std::to_string(count));
  }
  strings.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    std::string element_name = std::string(what) + "[" + std::to_string(i) + "]";
    strings.emplace_back(string_arg(data[i], lengths != nullptr ? lengths[i] : SLIPSTREAM_NTS,
                                    element_name.c_str()));
  }
  return strings;
}

std::span<const std::int64_t> shape_arg(const std::int64_t* data, std::size_t rank) {
  if (rank == 0) return {};
  if (data == nullptr) {
    throw InvalidArgumentError("shape is NULL but the rank is " + std::to_string(rank));
  }
  return {data, rank};
}

DType dtype_arg(slipstream_dtype_t dtype) {
  const auto value = static_cast<int>(dtype);
  if (value < SLIPSTREAM_FLOAT32 || value > SLIPSTREAM_UINT64) {
    throw InvalidArgumentError("dtype " + std::to_string(value) +
                               " is not a slipstream_dtype_t (expected 0 to 10)");
  }
  return static_cast<DType>(value);
}

MemoryOrder order_arg(slipstream_memory_order_t order) {
  const auto value = static_cast<int>(order);
  if (value != SLIPSTREAM_C_ORDER && value != SLIPSTREAM_FORTRAN_ORDER) {
    throw InvalidArgumentError(
        "memory order " + std::to_string(value) +
        " is neither SLIPSTREAM_C_ORDER (0) nor SLIPSTREAM_FORTRAN_ORDER (1)");
  }
  return static_cast<MemoryOrder>(value);
}

std::size_t tensor_bytes(DType dtype, std::span<const std::int64_t> shape) {
  const std::size_t count = element_count(shape);  // throws for bad dimensions or overflow
  const std::size_t size = dtype_size(dtype);
  if (count > std::numeric_limits<std::size_t>::max() / size) {
    throw InvalidArgumentError("tensor of " + std::to_string(count) + " elements is too large");
  }
  return count * size;
}

slipstream::CompressionOperator operator_arg(const char* type, std::size_t type_length,
                                             const char* parameters, std::size_t parameters_length,
                                             std::string_view what) {
  slipstream::CompressionOperator op{std::string(string_arg(type, type_length, "type")), {}};
  const std::string_view list = parameters == nullptr
                                    ? std::string_view()
                                    : string_arg(parameters, parameters_length, "parameters");
  auto trim = [](std::string_view text) {
    while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
    while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
    return std::string(text);
  };
  for (std::size_t at = 0; at < list.size();) {
    const std::size_t end = std::min(list.find(',', at), list.size());
    const std::string_view pair = list.substr(at, end - at);
    const std::size_t equals = pair.find('=');
    if (equals == std::string_view::npos) {
      throw InvalidArgumentError(std::string(what) + ": parameter '" + trim(pair) +
                                 "' is not name=value");
    }
    op.parameters.emplace_back(trim(pair.substr(0, equals)), trim(pair.substr(equals + 1)));
    at = end + 1;
  }
  return op;
}

char* copy_out(std::string_view bytes) {
  auto* out = static_cast<char*>(std::malloc(bytes.size() + 1));
  if (out == nullptr) throw std::bad_alloc();
  if (!bytes.empty()) std::memcpy(out, bytes.data(), bytes.size());
  out[bytes.size()] = '\0';
  return out;
}

void string_out(std::string_view bytes, char** out, std::size_t* length, const char* what) {
  if (out == nullptr) throw InvalidArgumentError(std::string(what) + " output pointer is NULL");
  *out = copy_out(bytes);
  if (length != nullptr) *length = bytes.size();
}

void check_expected_shape(std::string_view name, std::span<const std::int64_t> actual,
                          const std::int64_t* expected, std::size_t expected_rank) {
  if (expected_rank == 0) return;
  std::span<const std::int64_t> wanted = shape_arg(expected, expected_rank);
  if (std::equal(actual.begin(), actual.end(), wanted.begin(), wanted.end())) return;
  auto format = [](std::span<const std::int64_t> shape) {
    std::string text = "{";
    for (std::size_t i = 0; i < shape.size(); ++i) {
      if (i > 0) text += ", ";
      text += std::to_string(shape[i]);
    }
    return text + "}";
  };
  throw InvalidArgumentError("tensor '" + std::string(name) + "' has shape " + format(actual) +
                             ", not the expected " + format(wanted));
}

}  // namespace slipstream::capi

using namespace slipstream::capi;

extern "C" {

const char* slipstream_last_error(void) { return last_error(); }

const char* slipstream_status_name(slipstream_status_t status) {
  switch (status) {
    case SLIPSTREAM_OK:
      return "ok";
    case SLIPSTREAM_CLIENT_OUT_OF_MEMORY:
      return "client out of memory";
    case SLIPSTREAM_INTERNAL_ERROR:
      return "internal error";
    case SLIPSTREAM_STEP_ABORTED:
      return "step aborted";
    default:
      break;
  }
  const auto code = static_cast<int>(status);
  if (code >= 1 && code <= static_cast<int>(slipstream::ErrorCode::kBackend)) {
    // error_code_name returns views of string literals, so .data() is NUL-terminated.
    return slipstream::error_code_name(static_cast<slipstream::ErrorCode>(code)).data();
  }
  return "unknown status";
}

size_t slipstream_dtype_size(slipstream_dtype_t dtype) {
  const auto value = static_cast<int>(dtype);
  if (value < SLIPSTREAM_FLOAT32 || value > SLIPSTREAM_UINT64) return 0;
  return slipstream::dtype_size(static_cast<slipstream::DType>(value));
}

void slipstream_free(void* pointer) { std::free(pointer); }

}  // extern "C"

// For language bindings that refuse an argument before any C call (Fortran's tensor_ref names):
// records `message` as this thread's last error, so slipstream_last_error() says why, and returns
// `status`. Exported from libslipstream_c, not declared in slipstream.h: not a public API.
extern "C" SLIPSTREAM_CAPI_SHARED int slipstream_binding_fail(int status, const char* message,
                                                              std::size_t length) {
  try {
    return slipstream::capi::fail(static_cast<slipstream_status_t>(status),
                                  std::string(message, length).c_str());
  } catch (...) {
    return slipstream::capi::fail(static_cast<slipstream_status_t>(status), "invalid argument");
  }
}
