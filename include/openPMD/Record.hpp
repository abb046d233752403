// openPMD-api's records: meshes (fields on a grid), particle records and particle patches, each
// a container of record components (one, SCALAR, for a scalar record), and particle species.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "openPMD/Container.hpp"
#include "openPMD/RecordComponent.hpp"
#include "slipstream/export.hpp"

namespace openPMD {

namespace detail {
/// The unitDimension array of a map of powers.
SLIPSTREAM_API std::array<double, 7> unitDimensionArray(
    const std::array<double, 7>& start, const std::map<UnitDimension, double>& powers);
}  // namespace detail

/// A record: its components by name.
template <typename Component>
class BaseRecord : public Container<Component> {
 public:
  explicit BaseRecord(std::shared_ptr<internal::Node> node)
      : Container<Component>(std::move(node)) {}
  /// The powers of the SI base units (L, M, T, I, theta, N, J); all 0 when unset.
  std::array<double, 7> unitDimension() const {
    if (!this->containsAttribute("unitDimension")) return {};
    return this->getAttribute("unitDimension").template get<std::array<double, 7>>();
  }
  /// True when the record has exactly the one SCALAR component.
  bool scalar() const { return this->size() == 1 && this->contains(RecordComponent::SCALAR); }

 protected:
  void setUnitDimensionImpl(const std::map<UnitDimension, double>& powers) {
    this->setAttribute("unitDimension", detail::unitDimensionArray(unitDimension(), powers));
  }
};

class SLIPSTREAM_API Record : public BaseRecord<RecordComponent> {
 public:
  explicit Record(std::shared_ptr<internal::Node> node);
  Record& setUnitDimension(const std::map<UnitDimension, double>& powers) {
    setUnitDimensionImpl(powers);
    return *this;
  }
  template <typename T = float>
  T timeOffset() const {
    return containsAttribute("timeOffset") ? getAttribute("timeOffset").get<T>() : T(0);
  }
  template <typename T>
  Record& setTimeOffset(T offset) {
    setAttribute("timeOffset", offset);
    return *this;
  }
};

class SLIPSTREAM_API Mesh : public BaseRecord<MeshRecordComponent> {
 public:
  enum class Geometry { cartesian, thetaMode, cylindrical, spherical, other };
  enum class DataOrder : char { C = 'C', F = 'F' };

  explicit Mesh(std::shared_ptr<internal::Node> node);

  Geometry geometry() const;
  std::string geometryString() const;
  Mesh& setGeometry(Geometry geometry);
  Mesh& setGeometry(std::string geometry);
  std::string geometryParameters() const;
  Mesh& setGeometryParameters(const std::string& parameters);
  DataOrder dataOrder() const;
  Mesh& setDataOrder(DataOrder order);
  std::vector<std::string> axisLabels() const;
  Mesh& setAxisLabels(std::vector<std::string> labels);
  template <typename T = double>
  std::vector<T> gridSpacing() const {
    return containsAttribute("gridSpacing") ? getAttribute("gridSpacing").get<std::vector<T>>()
                                            : std::vector<T>{};
  }
  template <typename T>
  Mesh& setGridSpacing(std::vector<T> spacing) {
    setAttribute("gridSpacing", std::move(spacing));
    return *this;
  }
  std::vector<double> gridGlobalOffset() const;
  Mesh& setGridGlobalOffset(std::vector<double> offset);
  double gridUnitSI() const;
  Mesh& setGridUnitSI(double unit);
  Mesh& setUnitDimension(const std::map<UnitDimension, double>& powers) {
    setUnitDimensionImpl(powers);
    return *this;
  }
  template <typename T = float>
  T timeOffset() const {
    return containsAttribute("timeOffset") ? getAttribute("timeOffset").get<T>() : T(0);
  }
  template <typename T>
  Mesh& setTimeOffset(T offset) {
    setAttribute("timeOffset", offset);
    return *this;
  }
};

class SLIPSTREAM_API PatchRecord : public BaseRecord<PatchRecordComponent> {
 public:
  explicit PatchRecord(std::shared_ptr<internal::Node> node);
  PatchRecord& setUnitDimension(const std::map<UnitDimension, double>& powers) {
    setUnitDimensionImpl(powers);
    return *this;
  }
};

class SLIPSTREAM_API ParticlePatches : public Container<PatchRecord> {
 public:
  explicit ParticlePatches(std::shared_ptr<internal::Node> node);
  /// The number of patches (the extent of numParticles; 0 when there is none).
  std::uint64_t numPatches() const;
};

class SLIPSTREAM_API ParticleSpecies : public Container<Record> {
 public:
  explicit ParticleSpecies(std::shared_ptr<internal::Node> node);
  ParticlePatches particlePatches;
};

}  // namespace openPMD
