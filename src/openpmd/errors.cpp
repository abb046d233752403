// The exception classes of include/openPMD/Error.hpp.
#include <string>
#include <utility>
#include <vector>

#include "openPMD/Dataset.hpp"
#include "openPMD/Error.hpp"

namespace openPMD {

Error::~Error() = default;

namespace error {

OperationUnsupportedInBackend::OperationUnsupportedInBackend(std::string backend_, std::string what)
    : Error("Operation unsupported in " + backend_ + ": " + what), backend(std::move(backend_)) {}
OperationUnsupportedInBackend::~OperationUnsupportedInBackend() = default;

WrongAPIUsage::WrongAPIUsage(std::string what) : Error("Wrong API usage: " + what) {}
WrongAPIUsage::~WrongAPIUsage() = default;

namespace {
std::string location_text(const std::vector<std::string>& location) {
  std::string text;
  for (const std::string& key : location) text += (text.empty() ? "" : ".") + key;
  return text;
}
}  // namespace

BackendConfigSchema::BackendConfigSchema(std::vector<std::string> error_location, std::string what)
    : Error("Wrong JSON/TOML schema at index '" + location_text(error_location) + "': " + what),
      errorLocation(std::move(error_location)) {}
BackendConfigSchema::~BackendConfigSchema() = default;

ReadError::ReadError(AffectedObject affected_object, Reason reason_,
                     std::optional<std::string> backend_, std::string description_)
    : Error((backend_ ? "Read Error in backend " + *backend_ : std::string("Read Error")) +
            ": " + description_),
      affectedObject(affected_object),
      reason(reason_),
      backend(std::move(backend_)),
      description(std::move(description_)) {}
ReadError::~ReadError() = default;

NoSuchAttribute::NoSuchAttribute(std::string attribute)
    : Error("No such attribute: " + std::move(attribute)) {}
NoSuchAttribute::~NoSuchAttribute() = default;

IllegalInOpenPMDStandard::IllegalInOpenPMDStandard(std::string what)
    : Error("Operation leads to illegal use of the openPMD standard: " + std::move(what)) {}
IllegalInOpenPMDStandard::~IllegalInOpenPMDStandard() = default;

Internal::Internal(const std::string& what)
    : Error("Internal error: " + what + "\nThis is a bug. Please report it.") {}
Internal::~Internal() = default;

}  // namespace error

Dataset::Dataset(Datatype dtype_, Extent extent_, std::string options_)
    : extent(std::move(extent_)),
      dtype(dtype_),
      rank(static_cast<std::uint8_t>(extent.size())),
      options(std::move(options_)) {}

Dataset::Dataset(Extent extent_) : Dataset(Datatype::UNDEFINED, std::move(extent_)) {}

Dataset& Dataset::extend(Extent new_extent) {
  if (new_extent.size() != rank) {
    throw error::WrongAPIUsage("Dataset::extend: the dimensionality changes from " +
                               std::to_string(rank) + " to " + std::to_string(new_extent.size()));
  }
  for (std::size_t d = 0; d < new_extent.size(); ++d) {
    if (new_extent[d] < extent[d]) {
      throw error::WrongAPIUsage("Dataset::extend: dimension " + std::to_string(d) +
                                 " shrinks from " + std::to_string(extent[d]) + " to " +
                                 std::to_string(new_extent[d]));
    }
  }
  extent = std::move(new_extent);
  return *this;
}

}  // namespace openPMD
