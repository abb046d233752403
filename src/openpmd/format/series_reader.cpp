// SeriesReader: an openPMD HDF5 series, iteration by iteration, as stream steps.
#include "openpmd/format/series_reader.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <optional>
#include <stdexcept>

namespace slipstream::openpmd {
namespace {

Handle open_file(const std::string& path) {
  return checked(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT),
                 "cannot open '" + path + "' as an HDF5 file");
}

std::optional<std::int64_t> iteration_number(std::string_view name) {
  std::int64_t number = 0;
  auto [rest, error] = std::from_chars(name.data(), name.data() + name.size(), number);
  if (name.empty() || error != std::errc() || rest != name.data() + name.size() || number < 0) {
    return std::nullopt;
  }
  return number;
}

const std::string* string_attribute(const std::vector<NamedAttribute>& attributes,
                                    std::string_view name) {
  for (const NamedAttribute& a : attributes) {
    if (a.name == name) return std::get_if<std::string>(&a.value);
  }
  return nullptr;
}

bool is_layout_attribute(std::string_view name) {
  return name == "openPMD" || name == "basePath" || name == "meshesPath" ||
         name == "particlesPath" || name == "iterationEncoding" || name == "iterationFormat";
}

// Saturating arithmetic for sizes a file declares: a product that overflows is as refused as a
// huge one.
std::uint64_t saturating_multiply(std::uint64_t a, std::uint64_t b) {
  std::uint64_t product = 0;
  return __builtin_mul_overflow(a, b, &product) ? UINT64_MAX : product;
}

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
  return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

// What the datasets of one iteration may hold, and what they hold so far (see SeriesReader).
struct Budget {
  std::uint64_t file_bytes = 0;
  std::uint64_t max_iteration_bytes = 0;  // zero: judged from file_bytes
  std::uint64_t declared = 0;
};

// Walks the objects below an iteration group into `out`. With `read_elements` false it only
// checks every dataset (no element is read, no attribute collected): the pass that lets a
// refused series publish nothing.
class IterationWalker {
 public:
  IterationWalker(const std::string& meshes_path, const std::string& particles_path,
                  const std::string& group_path, const std::string& file, Budget budget,
                  bool read_elements, const std::function<void(const std::string&)>& problems,
                  IterationData& out)
      : meshes_path_(meshes_path), particles_path_(particles_path), group_path_(group_path),
        file_(file), budget_(budget), read_elements_(read_elements), problems_(problems),
        out_(out) {}

  void walk(hid_t group, const std::string& relative, int depth) {
    if (depth > kMaxDepth) {
      problems_("'" + relative + "' is nested more than " + std::to_string(kMaxDepth) +
                " levels deep: left out");
      return;
    }
    for (const Link& link : links_of(group)) {
      const std::string file_path = relative.empty() ? link.name : relative + "/" + link.name;
      if (!link.hard) {
        problems_("'" + file_path + "' is a soft or external link: left out");
        continue;
      }
      const std::string path = stream_path(file_path);
      try {
        split_object_path(path);
      } catch (const std::invalid_argument& e) {
        problems_(std::string("left out: ") + e.what());
        continue;
      }
      Handle object = checked(H5Oopen(group, link.name.c_str(), H5P_DEFAULT),
                              "cannot open '" + file_path + "'");
      if (read_elements_) add_attributes(object, path);
      const H5I_type_t type = H5Iget_type(object);
      if (type == H5I_DATASET) {
        read_dataset(object, file_path, path);
      } else if (type == H5I_GROUP &&
                 !(has_attribute(object, "value") && has_attribute(object, "shape"))) {
        walk(object, file_path, depth + 1);
      }
    }
  }

  void add_attributes(hid_t object, const std::string& path) {
    std::vector<std::string> skipped;
    for (NamedAttribute& a : read_attributes(object, skipped)) {
      out_.attributes.push_back({out_.number, path, std::move(a.name), std::move(a.value), ""});
    }
    for (const std::string& s : skipped) problems_("'" + path + "': " + s + ": left out");
  }

 private:
  // The file's meshesPath and particlesPath become the stream's meshes/ and particles/.
  std::string stream_path(const std::string& file_path) const {
    const std::string with_slash = file_path + "/";
    for (const auto& [from, to] : {std::pair{meshes_path_, "meshes"},
                                   std::pair{particles_path_, "particles"}}) {
      if (from.empty() || !with_slash.starts_with(from)) continue;
      std::string rest = with_slash.substr(from.size());
      if (!rest.empty()) rest.pop_back();
      return rest.empty() ? std::string(to) : std::string(to) + "/" + rest;
    }
    return file_path;
  }

  // Refusals name the dataset as the file does, so that it can be found with any HDF5 tool.
  [[noreturn]] void refuse(const std::string& file_path, const std::string& why) const {
    throw FileError("dataset '" + group_path_ + "/" + file_path + "' in '" + file_ + "' " + why +
                    ": refused, nothing of the series is published");
  }

  // Case 1 of SeriesReader: elements kept outside the file. Checked from the creation properties
  // alone; HDF5 opens an external or source file only when elements are read.
  void refuse_other_files(hid_t dataset, const std::string& file_path) const {
    Handle create = checked(H5Dget_create_plist(dataset), "cannot read the properties of '" +
                                                              file_path + "'");
    if (check(H5Pget_layout(create), "cannot read the layout of '" + file_path + "'") ==
        H5D_VIRTUAL) {
      refuse(file_path, "is a virtual dataset (its elements would be read from other datasets, "
                        "possibly in other files)");
    }
    if (check(H5Pget_external_count(create), "cannot read the storage of '" + file_path + "'") >
        0) {
      refuse(file_path, "keeps its elements in external files (external raw storage)");
    }
  }

  // Cases 2 and 3 of SeriesReader: what the dataset declares against what the file stores.
  void admit_size(hid_t dataset, const std::string& file_path, std::uint64_t elements,
                  std::size_t element_size) {
    const std::uint64_t declared = saturating_multiply(elements, element_size);
    const std::string declares = "declares " + std::to_string(declared) + " bytes (" +
                                 std::to_string(elements) + " elements of " +
                                 std::to_string(element_size) + " bytes)";
    budget_.declared = saturating_add(budget_.declared, declared);
    if (budget_.max_iteration_bytes > 0) {
      if (budget_.declared > budget_.max_iteration_bytes) {
        refuse(file_path, declares + ", and iteration " + std::to_string(out_.number) +
                              " would hold more than the limit of " +
                              std::to_string(budget_.max_iteration_bytes) + " bytes");
      }
      return;
    }
    const std::uint64_t stored = std::min<std::uint64_t>(H5Dget_storage_size(dataset),
                                                         budget_.file_bytes);
    const std::uint64_t expansion = SeriesReader::kMaxExpansion;
    const std::uint64_t allowance = SeriesReader::kUnstoredAllowance;
    if (declared > saturating_add(saturating_multiply(stored, expansion), allowance)) {
      refuse(file_path, declares + " but stores " + std::to_string(stored) +
                            " bytes in the file (at most " + std::to_string(expansion) +
                            " times what is stored plus " + std::to_string(allowance) +
                            " bytes; --max-bytes sets an explicit limit for trusted files)");
    }
    const std::uint64_t iteration_limit =
        saturating_add(saturating_multiply(budget_.file_bytes, expansion), allowance);
    if (budget_.declared > iteration_limit) {
      refuse(file_path, declares + ", and iteration " + std::to_string(out_.number) +
                            " would hold more than " + std::to_string(iteration_limit) +
                            " bytes, " + std::to_string(expansion) + " times the file's " +
                            std::to_string(budget_.file_bytes) +
                            " bytes plus " + std::to_string(allowance) +
                            " (--max-bytes sets an explicit limit for trusted files)");
    }
  }

  void read_dataset(hid_t dataset, const std::string& file_path, const std::string& path) {
    refuse_other_files(dataset, file_path);
    ComponentData component;
    try {
      Handle file_type = checked(H5Dget_type(dataset), "dataset type");
      component.name = path;
      component.dtype = dtype_for(file_type);
      Handle space = checked(H5Dget_space(dataset), "dataspace");
      const int rank = check(H5Sget_simple_extent_ndims(space), "dataspace");
      std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
      check(H5Sget_simple_extent_dims(space, dims.data(), nullptr), "dataspace");
      component.extent.assign(dims.begin(), dims.end());
      if (rank == 0) {
        component.extent = {1};  // a stream component has at least one dimension
        problems_("'" + path + "' is a scalar dataset: replayed as one element of extent 1");
      }
    } catch (const FileError& e) {
      problems_("dataset '" + path + "' left out: " + e.what());
      return;
    }
    std::uint64_t elements = 1;
    for (std::uint64_t e : component.extent) elements = saturating_multiply(elements, e);
    admit_size(dataset, file_path, elements, dtype_size(component.dtype));
    if (!read_elements_) return;
    try {
      component.bytes.resize(elements * dtype_size(component.dtype));
      if (elements > 0) {
        Handle type = memory_type(component.dtype);
        check(H5Dread(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, component.bytes.data()),
              "cannot read '" + path + "'");
      }
      out_.components.push_back(std::move(component));
    } catch (const FileError& e) {
      problems_("dataset '" + path + "' left out: " + e.what());
    }
  }

  const std::string& meshes_path_;
  const std::string& particles_path_;
  const std::string& group_path_;  // the iteration's group, e.g. /data/10
  const std::string& file_;
  Budget budget_;
  bool read_elements_;
  const std::function<void(const std::string&)>& problems_;
  IterationData& out_;
};

}  // namespace

SeriesReader::SeriesReader(const std::string& path,
                           std::function<void(const std::string&)> problems, ReadLimits limits)
    : problems_(std::move(problems)), limits_(limits) {
  const std::optional<FilePattern> pattern = FilePattern::parse(path);
  std::vector<std::pair<std::int64_t, std::string>> files;
  if (pattern) {
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(pattern->directory(), error)) {
      if (auto number = pattern->match(entry.path().filename().string())) {
        files.emplace_back(*number, entry.path().string());
      }
    }
    if (error) {
      throw FileError("cannot list '" + pattern->directory() + "': " + error.message());
    }
    std::sort(files.begin(), files.end());
    if (files.empty()) throw FileError("no file matches '" + path + "'");
  } else {
    files.emplace_back(0, path);
  }
  for (const auto& [number, file_path] : files) {
    Handle file = open_file(file_path);
    if (file_path == files.front().second) read_root(file, file_path);
    list_iterations(file, file_path);
  }
  if (files_.empty()) throw FileError("'" + path + "' holds no iteration");
  for (const auto& [number, location] : files_) walk_iteration(number, false);
}

void SeriesReader::read_root(hid_t file, const std::string& path) {
  Handle root = checked(H5Oopen(file, "/", H5P_DEFAULT), "cannot open the root of '" + path + "'");
  std::vector<std::string> skipped;
  std::vector<NamedAttribute> attributes = read_attributes(root, skipped);
  for (const std::string& s : skipped) problems_("root " + s + ": left out");
  if (string_attribute(attributes, "openPMD") == nullptr) {
    throw FileError("'" + path + "' is not an openPMD file: its root has no openPMD attribute");
  }
  // openPMD 1.x fixes basePath to "/data/%T/"; read it all the same.
  if (const std::string* base = string_attribute(attributes, "basePath")) {
    const std::size_t placeholder = base->find("%T");
    if (placeholder == std::string::npos || placeholder == 0 || (*base)[0] != '/' ||
        base->substr(placeholder) != "%T/") {
      throw FileError("'" + path + "' has basePath '" + *base + "'; expected /data/%T/");
    }
    base_group_ = base->substr(0, placeholder - 1);
  }
  if (const std::string* meshes = string_attribute(attributes, "meshesPath")) {
    meshes_path_ = *meshes;
  }
  if (const std::string* particles = string_attribute(attributes, "particlesPath")) {
    particles_path_ = *particles;
  }
  for (NamedAttribute& a : attributes) {
    if (!is_layout_attribute(a.name)) root_.push_back(std::move(a));
  }
}

void SeriesReader::list_iterations(hid_t file, const std::string& path) {
  std::vector<std::string> segments;
  try {
    segments = split_object_path(base_group_.substr(1));
  } catch (const std::invalid_argument& e) {
    throw FileError("'" + path + "' has a basePath that is not a group path: " + e.what());
  }
  Handle base = open_if_exists(file, segments);
  if (base.get() < 0) return;  // no iterations in this file
  for (const Link& link : links_of(base)) {
    const auto number = iteration_number(link.name);
    if (!number || !link.hard) {
      problems_("'" + base_group_ + "/" + link.name + "' in '" + path +
                "' is not an iteration: left out");
      continue;
    }
    if (!files_.emplace(*number, Location{path, link.name}).second) {
      problems_("iteration " + link.name + " is in '" + files_[*number].file + "' and '" + path +
                "': read from the first");
    }
  }
}

std::vector<std::int64_t> SeriesReader::iterations() const {
  std::vector<std::int64_t> out;
  for (const auto& [number, file] : files_) out.push_back(number);
  return out;
}

IterationData SeriesReader::read(std::int64_t number) const {
  return walk_iteration(number, true);
}

IterationData SeriesReader::walk_iteration(std::int64_t number, bool read_elements) const {
  const Location& location = files_.at(number);
  const std::string& path = location.file;
  Handle file = open_file(path);
  std::vector<std::string> segments = split_object_path(base_group_.substr(1));
  segments.push_back(location.group);
  Handle iteration = open_if_exists(file, segments);
  if (iteration.get() < 0) {
    throw FileError("iteration " + std::to_string(number) + " is missing from '" + path + "'");
  }
  std::error_code error;
  const std::uintmax_t file_bytes = std::filesystem::file_size(path, error);
  if (error) throw FileError("cannot find the size of '" + path + "': " + error.message());
  const Budget budget{file_bytes, limits_.max_iteration_bytes, 0};
  const std::string group_path = base_group_ + "/" + location.group;
  IterationData data;
  data.number = number;
  // The checking pass reports nothing: the reading pass reports the same problems.
  const std::function<void(const std::string&)> quiet = [](const std::string&) {};
  IterationWalker walker(meshes_path_, particles_path_, group_path, path, budget, read_elements,
                         read_elements ? problems_ : quiet, data);
  if (read_elements) walker.add_attributes(iteration, "/");
  walker.walk(iteration, "", 0);
  return data;
}

}  // namespace slipstream::openpmd
