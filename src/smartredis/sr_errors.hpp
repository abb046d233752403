// Turning Slipstream's errors into SmartRedis's: the C++ layer rethrows them as
// SmartRedis::Exception subclasses, the C and Fortran layers turn any exception into an SRError
// code plus the thread's last-error text (SRGetLastError).
#pragma once

#include <string_view>

#include "srexception.h"

namespace slipstream::smartredis {

/// Inside a catch block: throws the SmartRedis exception matching the exception being handled.
/// slipstream::Error by its code (connection, auth, out of memory -> DatabaseException; timeout
/// -> TimeoutException; key not found -> KeyException; wrong type -> TypeException; bad argument
/// or small buffer -> ParameterException; protocol -> InternalException; server and backend ->
/// RuntimeException), std::bad_alloc -> BadAllocException, a SmartRedis::Exception unchanged,
/// anything else -> InternalException. `operation` (e.g. "put_tensor") starts the message.
[[noreturn]] void rethrow_as_smartredis(std::string_view operation);

/// Runs `call()`, rethrowing what it throws as rethrow_as_smartredis does.
template <typename Call>
auto translate_errors(std::string_view operation, Call&& call) -> decltype(call()) {
  try {
    return call();
  } catch (...) {
    rethrow_as_smartredis(operation);
  }
}

/// Inside a catch block, for the C and Fortran APIs: records the exception being handled as the
/// thread's last error and returns its SRError code. Never throws.
SRError record_current_exception(std::string_view operation) noexcept;

/// Records `message` as the thread's last error (e.g. a null argument found by the C API).
void set_last_error(std::string_view message) noexcept;
/// Clears the thread's last error (SRGetLastError then returns "").
void clear_last_error() noexcept;

}  // namespace slipstream::smartredis
