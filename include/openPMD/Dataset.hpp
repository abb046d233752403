// openPMD-api's Dataset: the type, extent and backend options of a record component's data.
#pragma once

#include <cstdint>
#include <string>

#include "openPMD/Datatype.hpp"
#include "slipstream/export.hpp"

namespace openPMD {

class SLIPSTREAM_API Dataset {
 public:
  /// Marks a dimension whose extent is kept as it is by resetDataset (openPMD-api's
  /// Dataset::JOINED_DIMENSION is not supported; a reset with it is refused).
  static constexpr std::uint64_t UNDEFINED_EXTENT = std::uint64_t(0) - 1;
  static constexpr std::uint64_t JOINED_DIMENSION = std::uint64_t(0) - 2;

  /// A dataset of `dtype` and `extent`. `options` is JSON or TOML backend configuration for this
  /// dataset (accepted; operators are reported as not applied).
  Dataset(Datatype dtype, Extent extent, std::string options = "{}");
  /// Only a new extent (for resetDataset of a component whose type is already set).
  explicit Dataset(Extent extent);
  Dataset() = default;

  /// Grows the extent (same dimensionality, no dimension smaller). Throws
  /// error::WrongAPIUsage otherwise.
  Dataset& extend(Extent new_extent);

  Extent extent;
  Datatype dtype = Datatype::UNDEFINED;
  std::uint8_t rank = 0;
  std::string options = "{}";
};

}  // namespace openPMD
