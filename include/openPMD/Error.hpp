// openPMD-api's exceptions (openPMD::Error and openPMD::error::*), thrown with messages that name
// the series, the iteration and the record component concerned.
#pragma once

#include <exception>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "slipstream/export.hpp"

namespace openPMD {

/// Base of every exception of this layer.
class SLIPSTREAM_API Error : public std::exception {
 public:
  explicit Error(std::string message) : message_(std::move(message)) {}
  ~Error() override;
  const char* what() const noexcept override { return message_.c_str(); }

 protected:
  std::string message_;
};

namespace error {

/// The backend cannot do this (e.g. random access to a stream's steps).
class SLIPSTREAM_API OperationUnsupportedInBackend : public Error {
 public:
  OperationUnsupportedInBackend(std::string backend, std::string what);
  ~OperationUnsupportedInBackend() override;
  std::string backend;
};

/// A call the API does not allow in this state (a dataset redefined with another type, a chunk
/// outside the extent, a closed iteration written to, ...).
class SLIPSTREAM_API WrongAPIUsage : public Error {
 public:
  explicit WrongAPIUsage(std::string what);
  ~WrongAPIUsage() override;
};

/// A JSON/TOML configuration that does not parse, or a value of the wrong type.
class SLIPSTREAM_API BackendConfigSchema : public Error {
 public:
  BackendConfigSchema(std::vector<std::string> error_location, std::string what);
  ~BackendConfigSchema() override;
  std::vector<std::string> errorLocation;
};

/// A series, an iteration or a component could not be read.
class SLIPSTREAM_API ReadError : public Error {
 public:
  enum class AffectedObject { Attribute, Dataset, File, Group, Other };
  enum class Reason { NotFound, CannotRead, UnexpectedContent, Inaccessible, Other };
  ReadError(AffectedObject affected_object, Reason reason,
            std::optional<std::string> backend, std::string description);
  ~ReadError() override;
  AffectedObject affectedObject;
  Reason reason;
  std::optional<std::string> backend;
  std::string description;
};

/// getAttribute() of an attribute that does not exist.
class SLIPSTREAM_API NoSuchAttribute : public Error {
 public:
  explicit NoSuchAttribute(std::string attribute);
  ~NoSuchAttribute() override;
};

/// A name or value the openPMD standard does not allow.
class SLIPSTREAM_API IllegalInOpenPMDStandard : public Error {
 public:
  explicit IllegalInOpenPMDStandard(std::string what);
  ~IllegalInOpenPMDStandard() override;
};

/// A failure below the API that should not happen (reported as a bug).
class SLIPSTREAM_API Internal : public Error {
 public:
  explicit Internal(const std::string& what);
  ~Internal() override;
};

}  // namespace error
}  // namespace openPMD
