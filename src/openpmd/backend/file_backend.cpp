// The HDF5 file backend of the openPMD layer: openPMD 1.1.0 series in one file (groupBased) or
// one file per iteration (fileBased), datasets and attributes with their exact types.
#include "openpmd/backend/file_backend.hpp"

#include <charconv>
#include <filesystem>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "openpmd/config.hpp"

namespace openPMD::internal {
namespace {

namespace fs = std::filesystem;
using slipstream::openpmd::check;
using slipstream::openpmd::check_attribute_name;
using slipstream::openpmd::checked;
using slipstream::openpmd::kMaxDepth;
using slipstream::openpmd::Link;
using slipstream::openpmd::links_of;
using slipstream::openpmd::FileError;
using slipstream::openpmd::FilePattern;
using slipstream::openpmd::split_object_path;
using Affected = error::ReadError::AffectedObject;
using Reason = error::ReadError::Reason;

constexpr const char* kBackend = "HDF5";

/// An iteration group's name: decimal digits only ("0010" is 10).
std::optional<std::uint64_t> iteration_number(std::string_view name) {
  std::uint64_t number = 0;
  if (name.empty() || name.front() < '0' || name.front() > '9') return std::nullopt;
  auto [rest, error] = std::from_chars(name.data(), name.data() + name.size(), number);
  if (error != std::errc() || rest != name.data() + name.size()) return std::nullopt;
  return number;
}

/// The object at `segments` below `base`, following hard links only (a soft or external link
/// could lead out of the iteration, or to another file). Missing groups are created with
/// `create`; without it a missing object gives an invalid handle.
Handle open_path(hid_t base, const std::vector<std::string>& segments, bool create) {
  Handle current = checked(H5Oopen(base, ".", H5P_DEFAULT), "cannot open a group");
  for (const std::string& segment : segments) {
    if (H5Iget_type(current) != H5I_GROUP) {
      throw FileError("'" + segment + "' would be below a dataset");
    }
    if (check(H5Lexists(current, segment.c_str(), H5P_DEFAULT),
              "cannot look up '" + segment + "'") == 0) {
      if (!create) return Handle();
      current = checked(H5Gcreate2(current, segment.c_str(), H5P_DEFAULT, H5P_DEFAULT,
                                   H5P_DEFAULT),
                        "cannot create group '" + segment + "'");
      continue;
    }
    H5L_info_t link{};
    check(H5Lget_info(current, segment.c_str(), &link, H5P_DEFAULT),
          "cannot look up '" + segment + "'");
    if (link.type != H5L_TYPE_HARD) {
      throw FileError("'" + segment + "' is a soft or external link (only hard links are "
                      "followed)");
    }
    current = checked(H5Oopen(current, segment.c_str(), H5P_DEFAULT),
                      "cannot open '" + segment + "'");
  }
  return current;
}

std::vector<hsize_t> dims_of(hid_t space, std::vector<hsize_t>* max_dims = nullptr) {
  const int rank = check(H5Sget_simple_extent_ndims(space), "cannot read a dataspace");
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  if (max_dims != nullptr) max_dims->assign(dims.size(), 0);
  check(H5Sget_simple_extent_dims(space, dims.data(),
                                  max_dims != nullptr ? max_dims->data() : nullptr),
        "cannot read a dataspace");
  return dims;
}

template <typename Numbers>
std::string shown(const Numbers& numbers) {
  std::string out = "[";
  for (std::size_t k = 0; k < numbers.size(); ++k) {
    out += (k > 0 ? ", " : "") + std::to_string(numbers[k]);
  }
  return out + "]";
}

/// Chunks of at most 1 MiB: a dataset that fits is one chunk of exactly its extent (it takes no
/// more room than it holds); a larger one has its dimensions halved in turn, the slowest first,
/// until a chunk fits. An empty dimension counts as 1024 (it is expected to grow).
std::vector<hsize_t> guess_chunk(const Extent& extent, std::size_t element_size) {
  constexpr double kMaxBytes = 8 * 1024 * 1024;
  std::vector<hsize_t> chunk;
  for (std::uint64_t e : extent) chunk.push_back(e == 0 ? 1024 : e);
  for (std::size_t k = 0;; ++k) {
    double bytes = static_cast<double>(element_size);
    for (hsize_t c : chunk) bytes *= static_cast<double>(c);
    if (bytes <= kMaxBytes) break;
    hsize_t& c = chunk[k % chunk.size()];
    c = (c + 1) / 2;
  }
  return chunk;
}

/// openPMD-api's datasets live in the file: external raw storage and virtual datasets (which
/// read other files on H5Dread) are refused, as SeriesReader refuses them.
void refuse_other_files(hid_t dataset, const std::string& where) {
  Handle create = checked(H5Dget_create_plist(dataset), "cannot read the dataset's properties");
  if (check(H5Pget_layout(create), "cannot read the dataset's layout") == H5D_VIRTUAL) {
    throw error::ReadError(Affected::Dataset, Reason::UnexpectedContent, kBackend,
                           where + ": a virtual dataset (its elements would be read from other "
                                   "datasets, possibly in other files): refused");
  }
  if (check(H5Pget_external_count(create), "cannot read the dataset's storage") > 0) {
    throw error::ReadError(Affected::Dataset, Reason::UnexpectedContent, kBackend,
                           where + ": keeps its elements in external files (external raw "
                                   "storage): refused");
  }
}

/// Writes (`write`) or reads the box at `offset` of `extent` of `dataset` from or into `data`
/// (row-major elements of `dtype`). Misuse (another type, another rank, a box outside the
/// dataset) throws WrongAPIUsage naming `where`.
void transfer(hid_t dataset, const std::string& where, Datatype dtype, const Offset& offset,
              const Extent& extent, bool write, void* data) {
  Handle file_type = checked(H5Dget_type(dataset), "cannot read the dataset's type");
  const std::optional<Datatype> stored = datatype_of(file_type);
  if (!stored || !same_element(dtype, *stored)) {
    throw error::WrongAPIUsage(
        where + ": the dataset holds " +
        (stored ? datatypeToString(*stored) : std::string("a type openPMD has no name for")) +
        ", so chunks of " + datatypeToString(dtype) + " cannot be " +
        (write ? "written to" : "read from") + " it");
  }
  Handle space = checked(H5Dget_space(dataset), "cannot read the dataset's dataspace");
  std::vector<hsize_t> dims = dims_of(space);
  const bool scalar = dims.empty();
  if (scalar) dims = {1};  // a scalar dataset reads as one element of extent {1}
  if (offset.size() != dims.size() || extent.size() != dims.size()) {
    throw error::WrongAPIUsage(where + ": a chunk with an offset of " +
                               std::to_string(offset.size()) + " and an extent of " +
                               std::to_string(extent.size()) + " dimensions for a dataset of " +
                               std::to_string(dims.size()));
  }
  bool empty = false;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    if (offset[d] > dims[d] || extent[d] > dims[d] - offset[d]) {
      throw error::WrongAPIUsage(where + ": the chunk at offset " + shown(offset) +
                                 " of extent " + shown(extent) +
                                 " lies outside the dataset's extent " + shown(dims));
    }
    empty = empty || extent[d] == 0;
  }
  if (empty) return;
  if (data == nullptr) {
    throw error::WrongAPIUsage(where + ": a chunk of extent " + shown(extent) + " has no data");
  }
  Handle memory_type = element_type(dtype);
  Handle memory, selection;
  if (!scalar) {
    const std::vector<hsize_t> start(offset.begin(), offset.end());
    const std::vector<hsize_t> count(extent.begin(), extent.end());
    memory = checked(H5Screate_simple(static_cast<int>(count.size()), count.data(), nullptr),
                     "cannot make the chunk's dataspace");
    selection = checked(H5Scopy(space), "cannot copy the dataset's dataspace");
    check(H5Sselect_hyperslab(selection, H5S_SELECT_SET, start.data(), nullptr, count.data(),
                              nullptr),
          "cannot select the chunk");
  }
  const hid_t memory_space = scalar ? H5S_ALL : memory.get();
  const hid_t file_space = scalar ? H5S_ALL : selection.get();
  if (write) {
    check(H5Dwrite(dataset, memory_type, memory_space, file_space, H5P_DEFAULT, data),
          "cannot write the chunk at offset " + shown(offset));
  } else {
    check(H5Dread(dataset, memory_type, memory_space, file_space, H5P_DEFAULT, data),
          "cannot read the chunk at offset " + shown(offset));
  }
}

}  // namespace

template <typename Body>
decltype(auto) FileBackend::guarded(std::optional<Affected> reading,
                                    std::optional<std::uint64_t> index, const std::string& path,
                                    Body&& body) {
  std::string message;
  try {
    return body();
  } catch (const FileError& e) {
    message = where(index, path) + ": " + e.what();
  } catch (const fs::filesystem_error& e) {
    message = where(index, path) + ": " + e.what();
  }
  if (reading) throw error::ReadError(*reading, Reason::CannotRead, kBackend, message);
  throw Error(message);
}

FileBackend::FileBackend(const BackendTarget& target) : target_(target) {
  slipstream::openpmd::silence_hdf5_errors();
  if (target_.encoding == IterationEncoding::variableBased) {
    throw error::OperationUnsupportedInBackend(
        kBackend, "'" + target_.path + "': variable-based encoding needs ADIOS2; use groupBased "
                  "or fileBased");
  }
  if (target_.size > 1 && writable()) {
    throw error::OperationUnsupportedInBackend(
        kBackend, "'" + target_.path + "' cannot be written by " + std::to_string(target_.size) +
                      " MPI ranks: parallel HDF5 is not available in this build; write one file "
                      "per rank (the rank in the file name) or use a stream (.sst)");
  }
  if (target_.encoding == IterationEncoding::fileBased) {
    try {
      pattern_ = FilePattern::parse(target_.path);
    } catch (const std::invalid_argument& e) {
      throw error::WrongAPIUsage(std::string("HDF5: ") + e.what());
    }
    if (!pattern_) {
      throw error::WrongAPIUsage("HDF5: a fileBased series needs an iteration placeholder in "
                                 "its file name (data_%T.h5, data_%06T.h5); got '" +
                                 target_.path + "'");
    }
  }
  const std::optional<Affected> reading =
      writable() ? std::nullopt : std::optional<Affected>(Affected::File);
  guarded(reading, std::nullopt, "", [&] {
    if (file_based()) {
      if (writable()) return;
      list_files();
      if (listed_.empty()) {
        throw error::ReadError(Affected::File, Reason::NotFound, kBackend,
                               "no file matches '" + target_.path + "' in '" +
                                   pattern_->directory() + "'");
      }
    } else if (!writable()) {
      file_ = create_or_open(target_.path, false);
    } else {
      file_ = create_or_open(target_.path, target_.access == Access::CREATE);
    }
  });
}

FileBackend::~FileBackend() {
  try {
    close();
  } catch (...) {  // NOLINT(bugprone-empty-catch): a destructor reports nothing
  }
}

bool FileBackend::writable() const noexcept {
  return target_.access == Access::CREATE || target_.access == Access::READ_WRITE ||
         target_.access == Access::APPEND;
}

std::string FileBackend::file_name(std::optional<std::uint64_t> index) const {
  if (!file_based()) return target_.path;
  if (!index) return pattern_->text();
  if (auto it = listed_.find(*index); it != listed_.end()) return it->second;
  return pattern_->expand(static_cast<std::int64_t>(*index));
}

std::string FileBackend::where(std::optional<std::uint64_t> index,
                               const std::string& path) const {
  std::string out = "HDF5 file '" + file_name(index) + "'";
  out += index ? ", iteration " + std::to_string(*index) : std::string(", series root");
  if (path.empty()) return out;
  // Names from files may hold anything: what cannot be printed is shown as '?'.
  out += ", '";
  for (char c : path.substr(0, 200)) out += c >= ' ' && c <= '~' ? c : '?';
  return out + (path.size() > 200 ? "...'" : "'");
}

std::vector<std::string> FileBackend::segments_of(std::optional<std::uint64_t> index,
                                                  const std::string& path) const {
  if (path.empty()) return {};
  try {
    return split_object_path(path);
  } catch (const std::invalid_argument& e) {
    throw error::WrongAPIUsage(where(index, "") + ": " + e.what());
  }
}

void FileBackend::require_open(std::optional<std::uint64_t> index, bool write) const {
  if (closed_) throw error::WrongAPIUsage(where(index, "") + ": the series is closed");
  if (write && !writable()) {
    throw error::WrongAPIUsage(where(index, "") + ": the series was opened read-only");
  }
}

Handle FileBackend::create_or_open(const std::string& path, bool truncate) {
  const bool exists = fs::exists(path);
  if (!writable()) {
    if (!exists) {
      throw error::ReadError(Affected::File, Reason::NotFound, kBackend,
                             "HDF5 file '" + path + "' does not exist");
    }
  } else if (truncate || !exists) {
    const fs::path parent = fs::path(path).parent_path();
    if (!parent.empty()) fs::create_directories(parent);
    return checked(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT),
                   "cannot create the file");
  }
  const hid_t file = H5Fopen(path.c_str(), writable() ? H5F_ACC_RDWR : H5F_ACC_RDONLY,
                             H5P_DEFAULT);
  try {
    return checked(file, "cannot open the file as HDF5");
  } catch (const FileError& e) {
    throw error::ReadError(Affected::File, Reason::CannotRead, kBackend,
                           "HDF5 file '" + path + "': " + e.what());
  }
}

hid_t FileBackend::file_for(std::uint64_t index, bool write) {
  require_open(index, write);
  if (!file_based()) return file_;
  if (auto it = files_.find(index); it != files_.end()) return it->second;
  if (!write && !listed_.contains(index)) list_files();
  const std::string path = file_name(index);
  Handle file;
  if (write) {
    // CREATE truncates an iteration's file once; reopened later, it keeps what it has.
    const bool truncate = target_.access == Access::CREATE && !created_.contains(index);
    file = create_or_open(path, truncate);
    if (truncate) created_.insert(index);
    write_root_attributes(file, root_);
  } else {
    if (!fs::exists(path)) {
      throw error::ReadError(Affected::File, Reason::NotFound, kBackend,
                             where(index, "") + ": no such file");
    }
    file = create_or_open(path, false);
  }
  return files_.emplace(index, std::move(file)).first->second;
}

Handle FileBackend::iteration_group(std::uint64_t index, bool write) {
  const hid_t file = file_for(index, write);
  const auto named = group_names_.find(index);
  const std::string name = named != group_names_.end() ? named->second : std::to_string(index);
  Handle group = open_path(file, {"data", name}, write);
  if (group.get() < 0) {
    throw error::ReadError(Affected::Group, Reason::NotFound, kBackend,
                           where(index, "") + ": the file has no group /data/" + name);
  }
  if (H5Iget_type(group) != H5I_GROUP) {
    throw error::ReadError(Affected::Group, Reason::UnexpectedContent, kBackend,
                           where(index, "") + ": /data/" + name + " is not a group");
  }
  return group;
}

Handle FileBackend::open_dataset(std::uint64_t index, const std::string& path, bool write) {
  const std::vector<std::string> segments = segments_of(index, path);
  if (segments.empty()) throw error::WrongAPIUsage(where(index, path) + ": no dataset path");
  Handle group = iteration_group(index, write);
  Handle dataset = open_path(group, segments, false);
  if (dataset.get() >= 0 && H5Iget_type(dataset) == H5I_DATASET) return dataset;
  const std::string why = dataset.get() < 0 ? ": no such dataset" : ": a group, not a dataset";
  if (write) throw error::WrongAPIUsage(where(index, path) + why + " (define_dataset first)");
  throw error::ReadError(Affected::Dataset, Reason::NotFound, kBackend, where(index, path) + why);
}

void FileBackend::write_root_attributes(hid_t file,
                                        const std::vector<AttributeEntry>& attributes) {
  Handle root = checked(H5Oopen(file, "/", H5P_DEFAULT), "cannot open the root group");
  for (const AttributeEntry& entry : attributes) {
    Handle object = open_path(root, segments_of(std::nullopt, entry.path), true);
    write_typed_attribute(object, entry.name, entry.value);
  }
}

// ---- Writing

void FileBackend::open_iteration(std::uint64_t index) {
  guarded(std::nullopt, index, "", [&] {
    iteration_group(index, true);
    writing_.insert(index);
  });
}

void FileBackend::define_dataset(std::uint64_t index, const std::string& path, Datatype dtype,
                                 const Extent& extent) {
  guarded(std::nullopt, index, path, [&] {
    require_open(index, true);
    const std::vector<std::string> segments = segments_of(index, path);
    if (segments.empty()) throw error::WrongAPIUsage(where(index, path) + ": no dataset path");
    if (!same_element(dtype, dtype)) {
      throw error::WrongAPIUsage(where(index, path) + ": datasets of " +
                                 datatypeToString(dtype) +
                                 " are not possible (expected a number or a boolean)");
    }
    if (extent.empty()) {
      throw error::WrongAPIUsage(where(index, path) + ": a dataset needs at least one dimension");
    }
    Handle group = iteration_group(index, true);
    const std::vector<std::string> parents(segments.begin(), segments.end() - 1);
    Handle parent = open_path(group, parents, true);
    const std::vector<hsize_t> dims(extent.begin(), extent.end());
    const std::string& leaf = segments.back();
    if (check(H5Lexists(parent, leaf.c_str(), H5P_DEFAULT), "cannot look up the dataset") > 0) {
      // Defined again: the same dataset, possibly grown.
      Handle dataset = open_path(parent, {leaf}, false);
      if (H5Iget_type(dataset) != H5I_DATASET) {
        throw error::WrongAPIUsage(where(index, path) + ": a group, not a dataset");
      }
      Handle file_type = checked(H5Dget_type(dataset), "cannot read the dataset's type");
      const std::optional<Datatype> stored = datatype_of(file_type);
      if (!stored || !same_element(*stored, dtype)) {
        throw error::WrongAPIUsage(
            where(index, path) + ": the dataset holds " +
            (stored ? datatypeToString(*stored) : std::string("a type openPMD has no name for")) +
            "; it cannot become " + datatypeToString(dtype));
      }
      Handle space = checked(H5Dget_space(dataset), "cannot read the dataset's dataspace");
      std::vector<hsize_t> max_dims;
      const std::vector<hsize_t> old_dims = dims_of(space, &max_dims);
      if (old_dims.size() != dims.size()) {
        throw error::WrongAPIUsage(where(index, path) + ": the dataset has " +
                                   std::to_string(old_dims.size()) +
                                   " dimensions; it cannot be redefined with " +
                                   std::to_string(dims.size()));
      }
      if (old_dims == dims) return;
      for (std::size_t d = 0; d < dims.size(); ++d) {
        if (dims[d] < old_dims[d]) {
          throw error::WrongAPIUsage(where(index, path) + ": the extent " + shown(old_dims) +
                                     " cannot shrink to " + shown(dims));
        }
        if (dims[d] > max_dims[d]) {
          throw error::OperationUnsupportedInBackend(
              kBackend, where(index, path) + ": the extent " + shown(old_dims) +
                            " cannot grow to " + shown(dims) + " (the dataset's maximum is " +
                            shown(max_dims) + ": it was not created chunked)");
        }
      }
      check(H5Dset_extent(dataset, dims.data()), "cannot extend the dataset to " + shown(dims));
      return;
    }
    // Chunked with unlimited dimensions, so that it can grow.
    Handle type = element_type(dtype);
    const std::vector<hsize_t> unlimited(dims.size(), H5S_UNLIMITED);
    Handle space = checked(H5Screate_simple(static_cast<int>(dims.size()), dims.data(),
                                            unlimited.data()),
                           "cannot make a dataspace of extent " + shown(dims));
    Handle create = checked(H5Pcreate(H5P_DATASET_CREATE), "cannot make dataset properties");
    const std::vector<hsize_t> chunk = guess_chunk(extent, H5Tget_size(type));
    check(H5Pset_chunk(create, static_cast<int>(chunk.size()), chunk.data()),
          "cannot set the chunk size " + shown(chunk));
    // Elements no store covers are not written with a fill value first (openPMD leaves them
    // undefined): a store is then the dataset's only write.
    check(H5Pset_fill_time(create, H5D_FILL_TIME_NEVER), "cannot set the fill time");
    checked(H5Dcreate2(parent, leaf.c_str(), type, space, H5P_DEFAULT, create, H5P_DEFAULT),
            "cannot create the dataset");
  });
}

void FileBackend::write_chunks(std::uint64_t index, const std::vector<ChunkStore>& chunks,
                               bool /*until_close: every chunk is written before returning*/) {
  for (const ChunkStore& chunk : chunks) {
    guarded(std::nullopt, index, chunk.path, [&] {
      Handle dataset = open_dataset(index, chunk.path, true);
      transfer(dataset, where(index, chunk.path), chunk.dtype, chunk.offset, chunk.extent, true,
               const_cast<void*>(chunk.data));
    });
  }
}

void FileBackend::write_attributes(std::optional<std::uint64_t> index,
                                   const std::vector<AttributeEntry>& attributes) {
  require_open(index, true);
  for (const AttributeEntry& entry : attributes) {  // all checked before any is written
    segments_of(index, entry.path);
    try {
      check_attribute_name(entry.name);
    } catch (const std::invalid_argument& e) {
      throw error::WrongAPIUsage(where(index, entry.path) + ": " + e.what());
    }
  }
  if (!index) {
    guarded(std::nullopt, index, "", [&] {
      if (!file_based()) return write_root_attributes(file_, attributes);
      // Every iteration file gets them: those open now, and those opened later.
      for (const AttributeEntry& entry : attributes) {
        auto same = [&](const AttributeEntry& a) {
          return a.path == entry.path && a.name == entry.name;
        };
        std::erase_if(root_, same);
        root_.push_back(entry);
      }
      for (const auto& [number, file] : files_) write_root_attributes(file, attributes);
    });
    return;
  }
  guarded(std::nullopt, index, "", [&] {
    Handle group = iteration_group(*index, true);
    for (const AttributeEntry& entry : attributes) {
      try {
        Handle object = open_path(group, segments_of(index, entry.path), true);
        write_typed_attribute(object, entry.name, entry.value);
      } catch (const FileError& e) {
        throw FileError("'" + entry.path + "', attribute '" + entry.name + "': " + e.what());
      }
    }
  });
}

void FileBackend::close_iteration(std::uint64_t index) {
  guarded(std::nullopt, index, "", [&] {
    require_open(index, false);
    writing_.erase(index);
    if (!writable()) return release_iteration(index);
    if (!file_based()) {
      check(H5Fflush(file_, H5F_SCOPE_LOCAL), "cannot flush the file");
      return;
    }
    auto it = files_.find(index);
    if (it == files_.end()) return;
    // Its root attributes are there: written when it was opened and whenever they changed. The
    // series' meshesPath and particlesPath belong only in files that have meshes or particles
    // (the standard ties them to those): each file of a file-based series says what it holds.
    const std::string iteration = "data/" + std::to_string(index) + "/";
    for (const auto& [attribute, group] : {std::pair{"meshesPath", "meshes"},
                                           std::pair{"particlesPath", "particles"}}) {
      const bool has = check(H5Lexists(it->second, ("data/" + std::to_string(index)).c_str(),
                                       H5P_DEFAULT), "cannot look up the iteration") > 0 &&
                       check(H5Lexists(it->second, (iteration + group).c_str(), H5P_DEFAULT),
                             "cannot look up a group") > 0;
      if (!has && H5Aexists(it->second, attribute) > 0) {
        check(H5Adelete(it->second, attribute), "cannot remove an attribute");
      }
    }
    check(H5Fflush(it->second, H5F_SCOPE_LOCAL), "cannot flush the file");
    files_.erase(it);
  });
}

// ---- Reading

void FileBackend::list_files() {
  std::error_code error;
  const std::string directory = pattern_->directory();
  std::map<std::uint64_t, std::string> found;
  for (fs::directory_iterator it(directory, error), end; !error && it != end;
       it.increment(error)) {
    const auto number = pattern_->match(it->path().filename().string());
    if (!number || !it->is_regular_file(error)) continue;
    const auto index = static_cast<std::uint64_t>(*number);
    std::string path = it->path().string();
    auto [place, added] = found.emplace(index, path);
    if (!added) {
      // data_5.h5 and data_05.h5 for %T: read from the first name in order.
      if (path < place->second) std::swap(place->second, path);
      warnings_.push_back("iteration " + std::to_string(index) + " has two files, '" +
                          place->second + "' and '" + path + "': read from the first");
    }
  }
  if (error && error != std::errc::no_such_file_or_directory) {
    throw FileError("cannot list '" + directory + "': " + error.message());
  }
  listed_ = std::move(found);
}

std::vector<std::uint64_t> FileBackend::iterations() {
  return guarded(file_based() ? Affected::File : Affected::Group, std::nullopt, "", [&] {
    require_open(std::nullopt, false);
    std::set<std::uint64_t> found;
    if (file_based()) {
      list_files();
      for (const auto& [index, path] : listed_) found.insert(index);
      for (const auto& [index, file] : files_) found.insert(index);
      return std::vector<std::uint64_t>(found.begin(), found.end());
    }
    Handle data = open_path(file_, {"data"}, false);
    if (data.get() < 0) return std::vector<std::uint64_t>();
    for (const Link& link : links_of(data)) {
      const auto number = iteration_number(link.name);
      if (!number || !link.hard) {
        warnings_.push_back(where(std::nullopt, "") + ": /data/" + link.name +
                            " is not an iteration: left out");
        continue;
      }
      if (!found.insert(*number).second) {
        warnings_.push_back(where(*number, "") + ": /data/" + group_names_[*number] +
                            " and /data/" + link.name + ": read from the first");
        continue;
      }
      group_names_[*number] = link.name;
    }
    return std::vector<std::uint64_t>(found.begin(), found.end());
  });
}

void FileBackend::add_attributes(hid_t object, std::optional<std::uint64_t> index,
                                 const std::string& path, std::vector<AttributeEntry>& out) {
  std::vector<std::string> skipped;
  for (TypedAttribute& a : read_typed_attributes(object, skipped)) {
    out.push_back({path, std::move(a.name), std::move(a.value)});
  }
  for (const std::string& s : skipped) warnings_.push_back(where(index, path) + ": " + s);
}

void FileBackend::add_dataset(hid_t dataset, const std::string& path, IterationLayout& layout) {
  refuse_other_files(dataset, where(layout.index, path));
  Handle type = checked(H5Dget_type(dataset), "cannot read the type of '" + path + "'");
  const std::optional<Datatype> dtype = datatype_of(type);
  if (!dtype) {
    warnings_.push_back(where(layout.index, path) +
                        ": a dataset of a type openPMD has no name for: left out");
    return;
  }
  Handle space = checked(H5Dget_space(dataset), "cannot read the dataspace of '" + path + "'");
  if (H5Sget_simple_extent_type(space) == H5S_NULL) {
    warnings_.push_back(where(layout.index, path) + ": a dataset without a dataspace: left out");
    return;
  }
  const std::vector<hsize_t> dims = dims_of(space);
  ComponentLayout component;
  component.path = path;
  component.dtype = *dtype;
  component.extent = dims.empty() ? Extent{1} : Extent(dims.begin(), dims.end());
  component.chunks = {WrittenChunkInfo(Offset(component.extent.size(), 0), component.extent, 0)};
  layout.components.push_back(std::move(component));
}

void FileBackend::walk(hid_t group, const std::string& relative, int depth,
                       IterationLayout& layout) {
  if (depth > kMaxDepth) {
    warnings_.push_back(where(layout.index, relative) + ": nested more than " +
                        std::to_string(kMaxDepth) + " levels deep: left out");
    return;
  }
  for (const Link& link : links_of(group)) {
    const std::string path = relative.empty() ? link.name : relative + "/" + link.name;
    if (!link.hard) {
      warnings_.push_back(where(layout.index, path) + ": a soft or external link: left out");
      continue;
    }
    try {
      split_object_path(path);
    } catch (const std::invalid_argument& e) {
      warnings_.push_back(where(layout.index, "") + ": left out: " + e.what());
      continue;
    }
    Handle object = checked(H5Oopen(group, link.name.c_str(), H5P_DEFAULT),
                            "cannot open '" + path + "'");
    const H5I_type_t type = H5Iget_type(object);
    if (type != H5I_DATASET && type != H5I_GROUP) continue;  // named datatypes
    add_attributes(object, layout.index, path, layout.attributes);
    if (type == H5I_DATASET) {
      add_dataset(object, path, layout);
    } else {
      walk(object, path, depth + 1, layout);
    }
  }
}

IterationLayout FileBackend::read_iteration(std::uint64_t index) {
  return guarded(Affected::Group, index, "", [&] {
    IterationLayout layout;
    layout.index = index;
    Handle group = iteration_group(index, false);
    add_attributes(group, index, "", layout.attributes);
    walk(group, "", 0, layout);
    return layout;
  });
}

std::optional<IterationLayout> FileBackend::next_iteration() {
  if (!linear_) linear_ = iterations();
  if (linear_next_ >= linear_->size()) return std::nullopt;
  return read_iteration((*linear_)[linear_next_++]);
}

std::vector<AttributeEntry> FileBackend::series_attributes() {
  return guarded(Affected::Group, std::nullopt, "", [&] {
    require_open(std::nullopt, false);
    hid_t file = file_;
    if (file_based()) {
      list_files();
      std::optional<std::uint64_t> first;
      if (!listed_.empty()) first = listed_.begin()->first;
      if (!files_.empty() && (!first || files_.begin()->first < *first)) {
        first = files_.begin()->first;
      }
      if (!first) return root_;  // nothing written or found yet
      file = file_for(*first, false);
    }
    Handle root = checked(H5Oopen(file, "/", H5P_DEFAULT), "cannot open the root group");
    std::vector<AttributeEntry> out;
    add_attributes(root, std::nullopt, "", out);
    return out;
  });
}

void FileBackend::read_chunks(std::uint64_t index, const std::vector<ChunkLoad>& loads) {
  for (const ChunkLoad& load : loads) {
    guarded(Affected::Dataset, index, load.path, [&] {
      Handle dataset = open_dataset(index, load.path, false);
      refuse_other_files(dataset, where(index, load.path));
      transfer(dataset, where(index, load.path), load.dtype, load.offset, load.extent, false,
               load.destination);
    });
  }
}

void FileBackend::release_iteration(std::uint64_t index) {
  guarded(Affected::File, index, "", [&] {
    if (!file_based() || writing_.contains(index)) return;
    auto it = files_.find(index);
    if (it == files_.end()) return;
    if (writable()) check(H5Fflush(it->second, H5F_SCOPE_LOCAL), "cannot flush the file");
    files_.erase(it);
  });
}

void FileBackend::close() {
  if (closed_) return;
  closed_ = true;
  std::string failure;
  auto flush = [&](std::optional<std::uint64_t> index, hid_t file) {
    if (!writable() || file < 0) return;
    try {
      check(H5Fflush(file, H5F_SCOPE_LOCAL), "cannot flush the file");
    } catch (const FileError& e) {
      if (failure.empty()) failure = where(index, "") + ": " + e.what();
    }
  };
  for (const auto& [index, file] : files_) flush(index, file);
  flush(std::nullopt, file_);
  files_.clear();
  file_.reset();
  writing_.clear();
  if (!failure.empty()) throw Error(failure);
}

std::unique_ptr<Backend> make_file_backend(const BackendTarget& target,
                                           const SeriesConfig& /*config*/) {
  return std::make_unique<FileBackend>(target);
}

}  // namespace openPMD::internal
