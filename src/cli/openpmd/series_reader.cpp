// SeriesReader: an openPMD HDF5 series, iteration by iteration, as stream steps.
#include "cli/openpmd/series_reader.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <optional>
#include <stdexcept>

namespace slipstream::cli::openpmd {
namespace {

constexpr int kMaxDepth = 16;  // below an iteration: meshes/E/x is 3, particle patches 5

struct Link {
  std::string name;
  bool hard = false;
};

herr_t collect_link(hid_t, const char* name, const H5L_info_t* info, void* data) {
  static_cast<std::vector<Link>*>(data)->push_back({name, info->type == H5L_TYPE_HARD});
  return 0;
}

std::vector<Link> links_of(hid_t group) {
  std::vector<Link> links;
  check(H5Literate(group, H5_INDEX_NAME, H5_ITER_INC, nullptr, collect_link, &links),
        "cannot list a group");
  return links;
}

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

// Walks the objects below an iteration group into `out`.
class IterationWalker {
 public:
  IterationWalker(const std::string& meshes_path, const std::string& particles_path,
                  const std::function<void(const std::string&)>& problems, IterationData& out)
      : meshes_path_(meshes_path), particles_path_(particles_path), problems_(problems),
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
      add_attributes(object, path);
      const H5I_type_t type = H5Iget_type(object);
      if (type == H5I_DATASET) {
        read_dataset(object, path);
      } else if (type == H5I_GROUP &&
                 !(has_attribute(object, "value") && has_attribute(object, "shape"))) {
        walk(object, file_path, depth + 1);
      }
    }
  }

  void add_attributes(hid_t object, const std::string& path) {
    std::vector<std::string> skipped;
    for (NamedAttribute& a : read_attributes(object, skipped)) {
      out_.attributes.push_back({out_.number, path, std::move(a.name), std::move(a.value)});
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

  void read_dataset(hid_t dataset, const std::string& path) {
    try {
      Handle file_type = checked(H5Dget_type(dataset), "dataset type");
      ComponentData component;
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
      std::uint64_t elements = 1;
      for (std::uint64_t e : component.extent) elements *= e;
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
  const std::function<void(const std::string&)>& problems_;
  IterationData& out_;
};

}  // namespace

SeriesReader::SeriesReader(const std::string& path,
                           std::function<void(const std::string&)> problems)
    : problems_(std::move(problems)) {
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
  const Location& location = files_.at(number);
  const std::string& path = location.file;
  Handle file = open_file(path);
  std::vector<std::string> segments = split_object_path(base_group_.substr(1));
  segments.push_back(location.group);
  Handle iteration = open_if_exists(file, segments);
  if (iteration.get() < 0) {
    throw FileError("iteration " + std::to_string(number) + " is missing from '" + path + "'");
  }
  IterationData data;
  data.number = number;
  IterationWalker walker(meshes_path_, particles_path_, problems_, data);
  walker.add_attributes(iteration, "/");
  walker.walk(iteration, "", 0);
  return data;
}

}  // namespace slipstream::cli::openpmd
