// SmartRedis's error reporting over Slipstream's exceptions: the translation of
// slipstream::Error into SmartRedis::Exception subclasses and the per-thread last error.
#include <new>
#include <string>

#include "slipstream/error.hpp"
#include "sr_errors.hpp"
#include "srexception.h"

namespace slipstream::smartredis {

namespace {

thread_local std::string last_error;

std::string message_for(std::string_view operation, const char* what) {
  if (operation.empty()) return what;
  return std::string(operation) + ": " + what;
}

}  // namespace

void rethrow_as_smartredis(std::string_view operation) {
  try {
    throw;
  } catch (const SmartRedis::Exception&) {
    throw;
  } catch (const Error& error) {
    std::string message = message_for(operation, error.what());
    switch (error.code()) {
      case ErrorCode::kConnection:
      case ErrorCode::kAuth:
      case ErrorCode::kOutOfMemory:
        throw SmartRedis::DatabaseException(message);
      case ErrorCode::kTimeout:
        throw SmartRedis::TimeoutException(message);
      case ErrorCode::kKeyNotFound:
        throw SmartRedis::KeyException(message);
      case ErrorCode::kWrongType:
        throw SmartRedis::TypeException(message);
      case ErrorCode::kInvalidArgument:
      case ErrorCode::kBufferTooSmall:
        throw SmartRedis::ParameterException(message);
      case ErrorCode::kProtocol:
        throw SmartRedis::InternalException(message);
      case ErrorCode::kServer:
      case ErrorCode::kBackend:
        throw SmartRedis::RuntimeException(message);
    }
    throw SmartRedis::RuntimeException(message);
  } catch (const std::bad_alloc&) {
    throw SmartRedis::BadAllocException(message_for(operation, "out of memory"));
  } catch (const std::exception& error) {
    throw SmartRedis::InternalException(message_for(operation, error.what()));
  } catch (...) {
    throw SmartRedis::InternalException(message_for(operation, "unknown exception"));
  }
}

SRError record_current_exception(std::string_view operation) noexcept {
  try {
    try {
      rethrow_as_smartredis(operation);
    } catch (const SmartRedis::Exception& error) {
      SmartRedis::SRSetLastError(error);
      return error.to_error_code();
    }
  } catch (...) {
    set_last_error("out of memory while recording an error");
    return SRBadAllocError;
  }
}

void set_last_error(std::string_view message) noexcept {
  try {
    last_error.assign(message);
  } catch (...) {
    last_error.clear();
  }
}

void clear_last_error() noexcept { last_error.clear(); }

}  // namespace slipstream::smartredis

namespace SmartRedis {

void SRSetLastError(const Exception& last_error) {
  slipstream::smartredis::set_last_error(last_error.what());
}

}  // namespace SmartRedis

extern "C" const char* SRGetLastError(void) {
  return slipstream::smartredis::last_error.c_str();
}
