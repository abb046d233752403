// Turns a server error reply into the matching typed exception.
#pragma once

#include <string_view>

#include "slipstream/error.hpp"

namespace slipstream::client {

/// Throws the exception for error reply `server_text` (without the leading '-') received for
/// `context` (e.g. "AI.TENSORGET 'temperature'"): WRONGTYPE -> WrongTypeError, OOM ->
/// OutOfMemoryError, NOAUTH / WRONGPASS / bad password -> AuthError, a missing tensor or RENAME
/// source -> KeyNotFoundError, anything else -> ServerError (MOVED with a word on cluster mode).
[[noreturn]] void throw_server_error(std::string_view server_text, std::string_view context);

/// True for errors after which the connection's reply stream can no longer be trusted.
inline bool breaks_connection(ErrorCode code) {
  return code == ErrorCode::kConnection || code == ErrorCode::kTimeout ||
         code == ErrorCode::kProtocol;
}

}  // namespace slipstream::client
