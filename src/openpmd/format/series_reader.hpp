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

#include "openpmd/format/hdf5_util.hpp"
#include "openpmd/format/series_layout.hpp"
#include "slipstream/stream.hpp"

namespace slipstream::openpmd {

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

/// How much memory reading a series may take.
struct ReadLimits {
  /// The most bytes the datasets of one iteration may hold once read. Zero: judged from the
  /// file instead (see SeriesReader).
  std::uint64_t max_iteration_bytes = 0;
};

/// An openPMD series opened for reading.
///
/// The file is trusted no further than its own contents: only hard links are followed (an
/// external or soft link could lead to other files), nesting is bounded, and names that a stream
/// cannot carry are left out and reported.
///
/// Nor is a dataset read from anywhere but the file itself, or into more memory than the file
/// can justify. A dataset is refused, and with it the whole series, when
///  1. it keeps its elements in other files: external raw storage (H5Pset_external) or a
///     virtual dataset (layout H5D_VIRTUAL), either of which could publish any file the reader
///     may read;
///  2. without `max_iteration_bytes`, what it declares (elements x element size) exceeds
///     kMaxExpansion times the bytes it stores in the file (no more than the file's size) plus
///     kUnstoredAllowance, or the datasets of one iteration together exceed kMaxExpansion times
///     the file's size plus kUnstoredAllowance: a small file cannot make the reader hold
///     gigabytes of fill values;
///  3. with `max_iteration_bytes`, the datasets of one iteration together exceed it (instead of
///     the checks of 2, for trusted files whose datasets are mostly unwritten).
/// The constructor checks every iteration so (reading no elements), so a refused series
/// publishes nothing; read() checks again before it allocates.
class SeriesReader {
 public:
  /// Compression cannot do better: deflate stays below 1032:1.
  static constexpr std::uint64_t kMaxExpansion = 1024;
  /// What a dataset (or an iteration) may declare beyond its storage: small datasets left to
  /// their fill value.
  static constexpr std::uint64_t kUnstoredAllowance = std::uint64_t{1} << 20;

  /// Opens `path`: a file (groupBased, or one file of a fileBased series holding its iterations)
  /// or a pattern with %T naming every file of a fileBased series in one directory, and checks
  /// every dataset as described above. Throws FileError when nothing can be read, the root
  /// attributes are not openPMD's, or a dataset is refused (the message names it).
  SeriesReader(const std::string& path, std::function<void(const std::string&)> problems,
               ReadLimits limits = {});

  /// The iteration numbers, ascending.
  std::vector<std::int64_t> iterations() const;
  /// The root attributes a stream should carry (author, software, date, openPMDextension,
  /// comments...), without those that describe the file's layout (basePath, iterationEncoding,
  /// ...).
  const std::vector<NamedAttribute>& root_attributes() const noexcept { return root_; }
  /// Reads iteration `number` whole. Throws FileError when it cannot be read or a dataset is
  /// refused.
  IterationData read(std::int64_t number) const;

 private:
  IterationData walk_iteration(std::int64_t number, bool read_elements) const;

  void read_root(hid_t file, const std::string& path);
  void list_iterations(hid_t file, const std::string& path);

  std::function<void(const std::string&)> problems_;
  ReadLimits limits_;
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

}  // namespace slipstream::openpmd
