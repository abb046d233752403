// The I/O backends below the data model (as openPMD-api's AbstractIOHandler): a Slipstream
// stream (stream_backend.cpp) or an HDF5 file series (file_backend.cpp). The data model calls
// them at flush time with paths relative to an iteration ("meshes/E/x"; "" is the iteration
// itself) and never touches a stream or a file itself.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "openPMD/Attribute.hpp"
#include "openPMD/RecordComponent.hpp"
#include "openPMD/Series.hpp"
#include "openpmd/config.hpp"

namespace openPMD::internal {

struct AttributeEntry {
  std::string path;  ///< below the iteration ("" for the iteration itself; the series' root
                     ///< attributes use "" too)
  std::string name;
  Attribute value;
};

/// An attribute to write, referring to where the data model keeps it (valid during the call).
struct AttributeRef {
  std::string_view path;
  std::string_view name;
  const Attribute* value = nullptr;
};

/// One dataset of an iteration being read.
struct ComponentLayout {
  std::string path;
  Datatype dtype = Datatype::UNDEFINED;
  Extent extent;
  ChunkTable chunks;  ///< what was written (files: the whole extent, source 0)
};

/// What an iteration holds: its datasets and every attribute of it and below it. Constant
/// components are attributes only (`value` and `shape` at their path), as in the standard.
struct IterationLayout {
  std::uint64_t index = 0;
  std::vector<ComponentLayout> components;
  std::vector<AttributeEntry> attributes;
  /// Where a backend keeps the attributes itself (a stream reader converts only what changed
  /// since its last step): they are in `*kept` instead of `attributes`, valid until the next
  /// next_iteration().
  const std::vector<AttributeEntry>* kept = nullptr;
  /// The components' paths and types and the attributes' paths, names and types are those of the
  /// previous layout, in the same order; `changed[i]` says whether attribute i's value differs.
  bool same_shape = false;
  std::vector<bool> changed;

  const std::vector<AttributeEntry>& all_attributes() const { return kept ? *kept : attributes; }
};

struct ChunkStore {
  std::string path;
  Datatype dtype = Datatype::UNDEFINED;
  Extent global_extent;
  Offset offset;
  Extent extent;
  const void* data = nullptr;
};

struct ChunkLoad {
  std::string path;
  Datatype dtype = Datatype::UNDEFINED;
  Offset offset;
  Extent extent;
  void* destination = nullptr;
};

/// Where a series lives and how it was opened, as the backends need it.
struct BackendTarget {
  std::string path;       ///< as given to Series (a file, a %T pattern, "name.sst")
  std::string name;       ///< stream name / file stem
  Access access = Access::CREATE;
  int rank = 0;
  int size = 1;
  IterationEncoding encoding = IterationEncoding::groupBased;
};

class Backend {
 public:
  virtual ~Backend() = default;
  /// "SLIPSTREAM" or "HDF5".
  virtual std::string name() const = 0;

  // Writing. Every call names the iteration it is for; the layer opens one before it writes to
  // it and closes it once.
  virtual void open_iteration(std::uint64_t index) = 0;
  /// Declares a dataset of the iteration (before its chunks; again with a larger extent when it
  /// grows).
  virtual void define_dataset(std::uint64_t index, const std::string& path, Datatype dtype,
                              const Extent& extent) = 0;
  /// The compression operator a dataset's own options ask for (after define_dataset, before its
  /// chunks). A backend without operators ignores it (the series says so once).
  virtual void set_operator(const std::string& path, const DatasetOperator& op) {
    (void)path;
    (void)op;
  }
  /// Writes chunks. `until_close`: the data stay valid and unchanged until close_iteration, so
  /// the backend may keep the pointers instead of copying; otherwise it must be done with them
  /// when it returns.
  virtual void write_chunks(std::uint64_t index, const std::vector<ChunkStore>& chunks,
                            bool until_close) = 0;
  /// Memory of the backend's for a chunk that the caller fills before close_iteration (a
  /// stream's shared-memory loan), or nullptr when it has none (the layer allocates and stores).
  virtual void* loan_chunk(std::uint64_t /*index*/, const ChunkStore& /*chunk*/) {
    return nullptr;
  }
  /// Writes attributes of the iteration, or of the series' root when `index` is nullopt.
  virtual void write_attributes(std::optional<std::uint64_t> index,
                                const std::vector<AttributeEntry>& attributes) = 0;
  /// The same for attributes the data model keeps (what the flush calls): by default copied into
  /// entries for write_attributes; a backend that only reads them overrides it.
  virtual void write_attribute_refs(std::optional<std::uint64_t> index,
                                    std::span<const AttributeRef> attributes) {
    std::vector<AttributeEntry> entries;
    entries.reserve(attributes.size());
    for (const AttributeRef& ref : attributes) {
      entries.push_back({std::string(ref.path), std::string(ref.name), *ref.value});
    }
    write_attributes(index, entries);
  }
  /// Ends the iteration: what was written to it is complete.
  virtual void close_iteration(std::uint64_t index) = 0;

  // Reading.
  /// The iterations, ascending (random access). Streams throw
  /// error::OperationUnsupportedInBackend.
  virtual std::vector<std::uint64_t> iterations() = 0;
  /// Iteration `index`'s layout (random access).
  virtual IterationLayout read_iteration(std::uint64_t index) = 0;
  /// The next iteration (linear access: waits for a stream's next step); nullopt at the end.
  virtual std::optional<IterationLayout> next_iteration() = 0;
  /// The series' root attributes (a stream's: known once a step has arrived).
  virtual std::vector<AttributeEntry> series_attributes() = 0;
  /// False when series_attributes() holds what it held when this was last asked (a stream's
  /// root attributes rarely change between steps); true by default.
  virtual bool series_attributes_changed() { return true; }
  /// Fills every load's destination, all of them at once where the backend can.
  virtual void read_chunks(std::uint64_t index, const std::vector<ChunkLoad>& loads) = 0;
  /// Done with iteration `index` (a stream's step is released).
  virtual void release_iteration(std::uint64_t index) = 0;
  /// The writers' ranks and hosts (streams; empty for files).
  virtual chunk_assignment::RankMeta writer_ranks() { return {}; }

  /// Ends the series (a stream's writer closes, a reader leaves; files are closed).
  virtual void close() = 0;
};

/// The backends. Throws as the Series constructor documents.
std::unique_ptr<Backend> make_stream_backend(const BackendTarget& target,
                                             const struct SeriesConfig& config);
std::unique_ptr<Backend> make_file_backend(const BackendTarget& target,
                                           const struct SeriesConfig& config);

}  // namespace openPMD::internal
