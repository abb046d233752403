// Reads an openPMD HDF5 series written by any code that follows the standard (`slipstream stream
// replay`): a groupBased file or a fileBased pattern with %T, one iteration at a time, as the
// components, constants and attributes a stream step carries.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "cli/openpmd/hdf5_util.hpp"
#include "cli/openpmd/series_layout.hpp"
#include "slipstream/stream.hpp"

namespace slipstream::cli::openpmd {

/// A dataset of an iteration, whole, row-major, named by its stream path (`meshes/E/x`: the
/// file's meshesPath and particlesPath become `meshes/` and `particles/`).
struct ComponentData {
  std::string name;
  DType dtype = DType::kFloat64;
  std::vector<std::uint64_t> extent;
  std::vector<std::byte> bytes;
};

/// One iteration as a stream step: its datasets, and every attribute below the iteration (path
/// "/" for the iteration's own: time, dt, timeUnitSI). Constant record components (groups with
/// `value` and `shape`) are attributes only, as in the file.
struct IterationData {
  std::int64_t number = 0;
  std::vector<ComponentData> components;
  std::vector<StreamAttribute> attributes;
};

/// An openPMD series opened for reading.
///
/// The file is trusted no further than its own contents: only hard links are followed (an
/// external or soft link could lead to other files), nesting is bounded, and names that a stream
/// cannot carry are left out and reported.
class SeriesReader {
 public:
  /// Opens `path`: a file (groupBased, or one file of a fileBased series holding its iterations)
  /// or a pattern with %T naming every file of a fileBased series in one directory. Throws
  /// FileError when nothing can be read or the root attributes are not openPMD's.
  SeriesReader(const std::string& path, std::function<void(const std::string&)> problems);

  /// The iteration numbers, ascending.
  std::vector<std::int64_t> iterations() const;
  /// The root attributes a stream should carry (author, software, date, openPMDextension,
  /// comments...), without those that describe the file's layout (basePath, iterationEncoding,
  /// ...).
  const std::vector<NamedAttribute>& root_attributes() const noexcept { return root_; }
  /// Reads iteration `number` whole. Throws FileError when it cannot be read.
  IterationData read(std::int64_t number) const;

 private:
  void read_root(hid_t file, const std::string& path);
  void list_iterations(hid_t file, const std::string& path);

  std::function<void(const std::string&)> problems_;
  std::vector<NamedAttribute> root_;
  std::string base_group_ = "/data";  ///< basePath up to %T
  std::string meshes_path_ = "meshes/";
  std::string particles_path_ = "particles/";
  struct Location {
    std::string file;
    std::string group;  ///< the iteration's group name as written ("10", or "0010")
  };
  std::map<std::int64_t, Location> files_;
};

}  // namespace slipstream::cli::openpmd
