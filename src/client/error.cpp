// Out-of-line destructors (so each exception's vtable and type info live in libslipstream) and
// error-code names.
#include "slipstream/error.hpp"

namespace slipstream {

std::string_view error_code_name(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::kConnection:
      return "connection";
    case ErrorCode::kTimeout:
      return "timeout";
    case ErrorCode::kProtocol:
      return "protocol";
    case ErrorCode::kServer:
      return "server";
    case ErrorCode::kKeyNotFound:
      return "key not found";
    case ErrorCode::kWrongType:
      return "wrong type";
    case ErrorCode::kInvalidArgument:
      return "invalid argument";
    case ErrorCode::kBufferTooSmall:
      return "buffer too small";
    case ErrorCode::kOutOfMemory:
      return "out of memory";
    case ErrorCode::kAuth:
      return "authentication";
    case ErrorCode::kBackend:
      return "model backend";
  }
  return "unknown";
}

Error::~Error() = default;
ConnectionError::~ConnectionError() = default;
TimeoutError::~TimeoutError() = default;
ProtocolError::~ProtocolError() = default;
InvalidArgumentError::~InvalidArgumentError() = default;
BufferTooSmallError::~BufferTooSmallError() = default;
KeyNotFoundError::~KeyNotFoundError() = default;
ServerError::~ServerError() = default;
WrongTypeError::~WrongTypeError() = default;
OutOfMemoryError::~OutOfMemoryError() = default;
AuthError::~AuthError() = default;

}  // namespace slipstream
