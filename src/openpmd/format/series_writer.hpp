// Writes a stream's steps as an openPMD 1.1.0 series in HDF5 (`slipstream stream dump`): one file
// with /data/<iteration>/ groups (groupBased) or one file per iteration (fileBased). Components
// become datasets assembled from their chunks; attributes go to the matching groups and
// datasets; the standard's required attributes that the writers did not set get its defaults.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "openpmd/format/hdf5_util.hpp"
#include "openpmd/format/series_layout.hpp"
#include "slipstream/stream.hpp"

namespace slipstream::openpmd {

/// Receives a problem that left something out of the file (a refused name, an attribute HDF5
/// could not store) and lets the caller report it.
using ProblemSink = std::function<void(const std::string&)>;

/// What the root group says about who wrote the file, when the stream does not say it.
struct Provenance {
  std::string author;
  std::string software;
  std::string software_version;
  std::string date;  ///< openPMD's "YYYY-MM-DD HH:mm:ss tz"
};

/// One series being written. Iterations are written one at a time: begin_iteration(), then
/// write_component() for each component, then end_iteration().
///
/// Untrusted names: component names and attribute paths come from the stream's writers. They
/// only ever name HDF5 objects below the iteration's group (split_object_path refuses anything
/// else); the files written are the ones the path given to the constructor names.
///
/// Thread safety: one thread at a time.
class SeriesWriter {
 public:
  /// Prepares the series at `path`: a file name for kGroupBased (created now, replacing any file
  /// of that name), a FilePattern for kFileBased (each iteration's file is created when it
  /// begins). Throws std::invalid_argument when the path and the encoding disagree, FileError
  /// when the file cannot be created.
  SeriesWriter(const std::string& path, Encoding encoding, Provenance provenance,
               ProblemSink problems);
  ~SeriesWriter();
  SeriesWriter(const SeriesWriter&) = delete;
  SeriesWriter& operator=(const SeriesWriter&) = delete;

  /// Starts iteration `number` with `attributes` (the step's and the stream's, as a StreamStep
  /// holds them: stream-level ones at path "/" go to the file's root, others to every iteration).
  void begin_iteration(std::int64_t number, const std::vector<StreamAttribute>& attributes);
  /// Writes a component from its pieces (each a box of the global extent, row-major bytes).
  /// Throws std::invalid_argument for a name that is not a path inside the iteration, FileError
  /// when HDF5 refuses (a name taken by another object, a piece outside the extent); nothing is
  /// left half-made but the dataset itself.
  void write_component(std::string_view name, DType dtype,
                       const std::vector<std::uint64_t>& global_extent,
                       const std::vector<StreamPiece>& pieces);
  /// Writes the attributes, the constant record components (paths with `value` and `shape`
  /// attributes and no chunks), the standard's defaults, and flushes (groupBased) or closes
  /// (fileBased) the file, so that what is written survives an interrupted dump.
  void end_iteration();

  /// The file an iteration goes to.
  std::string file_of(std::int64_t number) const;

 private:
  using AttributeKey = std::pair<std::string, std::string>;  // (path, name)

  void write_root_attributes();
  void write_attributes();
  void add_position_offsets();
  void fill_defaults();
  void fill_default(hid_t object, const std::string& name, const AttributeValue& value,
                    StoredType type = StoredType::kAsGiven);
  std::size_t mesh_dimensions(const std::string& record, std::size_t rank) const;
  Handle open_object(std::string_view path);

  std::string path_;
  Encoding encoding_;
  std::optional<FilePattern> pattern_;
  Provenance provenance_;
  ProblemSink problems_;

  Handle file_;
  Handle iteration_;
  std::int64_t number_ = -1;
  std::map<AttributeKey, AttributeValue> root_attributes_;
  std::map<AttributeKey, AttributeValue> attributes_;       // the iteration's, by path
  std::map<std::string, std::vector<std::uint64_t>> components_;  // path -> extent (or shape)
  std::set<std::string> constants_;
  bool has_meshes_ = false;     ///< the file has meshes (so the root names meshesPath)
  bool has_particles_ = false;  ///< the file has particles (particlesPath)
};

/// The HDF5 type the openPMD standard gives attribute `name` (e.g. timeOffset: float32, shape:
/// uint64), or kAsGiven for names it does not type.
StoredType standard_type(std::string_view name);

}  // namespace slipstream::openpmd
