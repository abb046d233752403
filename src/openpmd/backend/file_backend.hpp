// The HDF5 file backend of the openPMD layer (make_file_backend): a series in one file
// (groupBased, /data/<index>/) or one file per iteration (fileBased, a %T pattern).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "openPMD/Error.hpp"
#include "openpmd/backend/backend.hpp"
#include "openpmd/backend/file_backend_types.hpp"
#include "openpmd/format/series_layout.hpp"

namespace openPMD::internal {

/// An openPMD 1.1.0 series in HDF5 files, written and read with exact types. Everything it does
/// is done when a call returns (no deferred I/O). Failures throw openPMD's errors naming the
/// file, the iteration and the object with HDF5's reason: error::ReadError when reading,
/// error::WrongAPIUsage for misuse, error::OperationUnsupportedInBackend for what a serial HDF5
/// cannot do, and openPMD::Error when writing fails.
class FileBackend final : public Backend {
 public:
  /// Opens or creates the series (see make_file_backend).
  explicit FileBackend(const BackendTarget& target);
  /// Closes every file; errors go unreported.
  ~FileBackend() override;
  FileBackend(const FileBackend&) = delete;
  FileBackend& operator=(const FileBackend&) = delete;

  std::string name() const override { return "HDF5"; }

  void open_iteration(std::uint64_t index) override;
  void define_dataset(std::uint64_t index, const std::string& path, Datatype dtype,
                      const Extent& extent) override;
  void write_chunks(std::uint64_t index, const std::vector<ChunkStore>& chunks,
                    bool until_close) override;
  void write_attributes(std::optional<std::uint64_t> index,
                        const std::vector<AttributeEntry>& attributes) override;
  void close_iteration(std::uint64_t index) override;

  std::vector<std::uint64_t> iterations() override;
  IterationLayout read_iteration(std::uint64_t index) override;
  std::optional<IterationLayout> next_iteration() override;
  std::vector<AttributeEntry> series_attributes() override;
  void read_chunks(std::uint64_t index, const std::vector<ChunkLoad>& loads) override;
  void release_iteration(std::uint64_t index) override;
  void close() override;

  /// What reading left out (attributes of types openPMD has no name for, soft links, datasets
  /// of other types, objects nested too deep), one line each.
  const std::vector<std::string>& warnings() const noexcept { return warnings_; }

 private:
  bool writable() const noexcept;
  bool file_based() const noexcept { return pattern_.has_value(); }
  /// The file of iteration `index` (nullopt: the series' root), for opening and messages.
  std::string file_name(std::optional<std::uint64_t> index) const;
  /// "'<file>', iteration <index>, '<path>'" for messages.
  std::string where(std::optional<std::uint64_t> index, const std::string& path) const;
  /// Runs `body`, turning FileError and filesystem errors into openPMD's errors: ReadError of
  /// `reading` when reading, openPMD::Error when writing (`reading` nullopt).
  template <typename Body>
  decltype(auto) guarded(std::optional<error::ReadError::AffectedObject> reading,
                         std::optional<std::uint64_t> index, const std::string& path,
                         Body&& body);
  std::vector<std::string> segments_of(std::optional<std::uint64_t> index,
                                       const std::string& path) const;

  /// The open file of iteration `index`: fileBased files are opened (`write`: created or
  /// opened read-write, with the root attributes) on first use.
  hid_t file_for(std::uint64_t index, bool write);
  Handle create_or_open(const std::string& path, bool truncate);
  /// /data/<index>, created when `write`; throws ReadError when it is missing.
  Handle iteration_group(std::uint64_t index, bool write);
  /// The dataset at `path` of iteration `index`; throws (WrongAPIUsage when `write`, ReadError
  /// otherwise) when there is none.
  Handle open_dataset(std::uint64_t index, const std::string& path, bool write);
  void write_root_attributes(hid_t file, const std::vector<AttributeEntry>& attributes);
  void list_files();
  void walk(hid_t group, const std::string& relative, int depth, IterationLayout& layout);
  void add_attributes(hid_t object, std::optional<std::uint64_t> index, const std::string& path,
                      std::vector<AttributeEntry>& out);
  void add_dataset(hid_t dataset, const std::string& path, IterationLayout& layout);
  void require_open(std::optional<std::uint64_t> index, bool write) const;

  BackendTarget target_;
  std::optional<slipstream::openpmd::FilePattern> pattern_;  ///< fileBased only
  Handle file_;                                               ///< groupBased: the file
  std::map<std::uint64_t, Handle> files_;  ///< fileBased: the iteration files now open
  std::map<std::uint64_t, std::string> listed_;  ///< fileBased: existing files by iteration
  std::set<std::uint64_t> created_;    ///< fileBased: files this backend created (CREATE)
  std::set<std::uint64_t> writing_;    ///< iterations opened and not yet closed
  std::vector<AttributeEntry> root_;   ///< fileBased: the root attributes of every file
  std::map<std::uint64_t, std::string> group_names_;  ///< as listed ("0010" for 10)
  std::optional<std::vector<std::uint64_t>> linear_;  ///< next_iteration()'s list
  std::size_t linear_next_ = 0;
  std::vector<std::string> warnings_;
  bool closed_ = false;
};

}  // namespace openPMD::internal
