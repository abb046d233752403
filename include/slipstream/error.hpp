// Typed exceptions thrown by the C++ client library, each carrying a stable ErrorCode.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "slipstream/export.hpp"

namespace slipstream {

/// What went wrong. The numeric values are stable: the C API returns them as status codes, with 0
/// meaning success, so never renumber an entry and only append new ones.
enum class ErrorCode : std::int32_t {
  kConnection = 1,       ///< cannot connect, or the connection broke mid-request
  kTimeout = 2,          ///< connect or command timeout expired (the connection is closed)
  kProtocol = 3,         ///< the server sent something that is not the expected RESP reply
  kServer = 4,           ///< the server replied with an error not covered by a code below
  kKeyNotFound = 5,      ///< the tensor, dataset, list or key does not exist
  kWrongType = 6,        ///< the key holds another kind of value (server WRONGTYPE)
  kInvalidArgument = 7,  ///< a bad argument detected by the client (shape, dtype, address ...)
  kBufferTooSmall = 8,   ///< the caller's buffer cannot hold the tensor
  kOutOfMemory = 9,      ///< the server is over its memory limit (server -OOM)
  kAuth = 10,            ///< wrong password, or a password is required (WRONGPASS / NOAUTH)
  kBackend = 11,         ///< the in-process model backend failed to load or run a model
};

/// A short stable name for a code ("connection", "timeout", ...).
SLIPSTREAM_API std::string_view error_code_name(ErrorCode code) noexcept;

/// Base of every exception the library throws. what() says what was wrong and, where it applies,
/// which key or address was involved.
class SLIPSTREAM_API Error : public std::runtime_error {
 public:
  ~Error() override;
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

/// Connecting failed or the connection broke. The client reconnects on its next call.
class SLIPSTREAM_API ConnectionError : public Error {
 public:
  ~ConnectionError() override;
  explicit ConnectionError(const std::string& message) : Error(ErrorCode::kConnection, message) {}
};

/// A connect or command timeout expired. The connection is closed (its reply stream would be out
/// of step); the client reconnects on its next call.
class SLIPSTREAM_API TimeoutError : public Error {
 public:
  ~TimeoutError() override;
  explicit TimeoutError(const std::string& message) : Error(ErrorCode::kTimeout, message) {}
};

/// The server sent bytes that are not a valid reply to the request. The connection is closed.
class SLIPSTREAM_API ProtocolError : public Error {
 public:
  ~ProtocolError() override;
  explicit ProtocolError(const std::string& message) : Error(ErrorCode::kProtocol, message) {}
};

/// A bad argument caught before anything was sent (or a reply that does not fit the request, such
/// as a tensor of another dtype than the one asked for).
class SLIPSTREAM_API InvalidArgumentError : public Error {
 public:
  ~InvalidArgumentError() override;
  explicit InvalidArgumentError(const std::string& message)
      : Error(ErrorCode::kInvalidArgument, message) {}
};

/// The caller's buffer is smaller than the tensor. Nothing was written to it.
class SLIPSTREAM_API BufferTooSmallError : public Error {
 public:
  ~BufferTooSmallError() override;
  explicit BufferTooSmallError(const std::string& message)
      : Error(ErrorCode::kBufferTooSmall, message) {}
};

/// The named tensor, dataset, list or key does not exist.
class SLIPSTREAM_API KeyNotFoundError : public Error {
 public:
  ~KeyNotFoundError() override;
  explicit KeyNotFoundError(const std::string& message) : Error(ErrorCode::kKeyNotFound, message) {}
};

/// The server answered with an error reply. server_text() is the reply exactly as sent (without
/// the leading '-'); what() adds the command and key it answered.
class SLIPSTREAM_API ServerError : public Error {
 public:
  ~ServerError() override;
  ServerError(const std::string& message, std::string server_text,
              ErrorCode code = ErrorCode::kServer)
      : Error(code, message), server_text_(std::move(server_text)) {}
  const std::string& server_text() const noexcept { return server_text_; }

 private:
  std::string server_text_;
};

/// The server replied WRONGTYPE: the key holds another kind of value.
class SLIPSTREAM_API WrongTypeError : public ServerError {
 public:
  ~WrongTypeError() override;
  WrongTypeError(const std::string& message, std::string server_text)
      : ServerError(message, std::move(server_text), ErrorCode::kWrongType) {}
};

/// The server replied OOM: it is over --maxmemory and stored nothing.
class SLIPSTREAM_API OutOfMemoryError : public ServerError {
 public:
  ~OutOfMemoryError() override;
  OutOfMemoryError(const std::string& message, std::string server_text)
      : ServerError(message, std::move(server_text), ErrorCode::kOutOfMemory) {}
};

/// Authentication failed (wrong password) or is required and was not done.
class SLIPSTREAM_API AuthError : public ServerError {
 public:
  ~AuthError() override;
  AuthError(const std::string& message, std::string server_text)
      : ServerError(message, std::move(server_text), ErrorCode::kAuth) {}
};

}  // namespace slipstream
