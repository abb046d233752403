// SeriesWriter: a stream's steps as an openPMD 1.1.0 HDF5 series.
#include "openpmd/format/series_writer.hpp"

#include <stdexcept>
#include <type_traits>
#include <variant>

namespace slipstream::openpmd {
namespace {

constexpr std::string_view kBasePath = "/data/%T/";

// Root attributes that describe this file's layout: always the dump's own, whatever the stream
// says (a replayed series carries the layout of the file it came from).
bool is_layout_attribute(std::string_view name) {
  return name == "openPMD" || name == "basePath" || name == "meshesPath" ||
         name == "particlesPath" || name == "iterationEncoding" || name == "iterationFormat";
}

std::string join(const std::vector<std::string>& segments, std::size_t count) {
  std::string out;
  for (std::size_t k = 0; k < count && k < segments.size(); ++k) {
    if (k > 0) out += '/';
    out += segments[k];
  }
  return out;
}

// openPMD's axisLabels for dataOrder "C": the slowest axis first.
std::vector<std::string> default_axis_labels(std::size_t dims) {
  if (dims == 1) return {"x"};
  if (dims == 2) return {"y", "x"};
  if (dims == 3) return {"z", "y", "x"};
  std::vector<std::string> labels;
  for (std::size_t d = 0; d < dims; ++d) labels.push_back("axis" + std::to_string(d));
  return labels;
}

std::vector<std::uint64_t> shape_of(const AttributeValue& value) {
  std::vector<std::uint64_t> shape;
  if (auto* list = std::get_if<std::vector<std::int64_t>>(&value)) {
    for (std::int64_t v : *list) {
      if (v < 0) throw std::invalid_argument("a constant's shape has a negative entry");
      shape.push_back(static_cast<std::uint64_t>(v));
    }
  } else if (auto* one = std::get_if<std::int64_t>(&value); one != nullptr && *one >= 0) {
    shape.push_back(static_cast<std::uint64_t>(*one));
  } else {
    throw std::invalid_argument("a constant's shape must be non-negative integers");
  }
  return shape;
}

}  // namespace

StoredType standard_type(std::string_view name) {
  if (name == "openPMDextension") return StoredType::kUInt32;
  if (name == "shape") return StoredType::kUInt64;
  if (name == "timeOffset") return StoredType::kFloat32;
  for (std::string_view floating : {"time", "dt", "timeUnitSI", "gridUnitSI", "unitSI",
                                    "gridSpacing", "gridGlobalOffset", "position",
                                    "unitDimension"}) {
    if (name == floating) return StoredType::kFloat64;
  }
  return StoredType::kAsGiven;
}

SeriesWriter::SeriesWriter(const std::string& path, Encoding encoding, Provenance provenance,
                           ProblemSink problems)
    : path_(path),
      encoding_(encoding),
      pattern_(FilePattern::parse(path)),
      provenance_(std::move(provenance)),
      problems_(std::move(problems)) {
  if (encoding_ == Encoding::kFileBased && !pattern_) {
    throw std::invalid_argument("fileBased output needs an iteration placeholder in the path, "
                                "e.g. out_%T.h5 or out_%06T.h5; got '" + path + "'");
  }
  if (encoding_ == Encoding::kGroupBased) {
    if (pattern_) {
      throw std::invalid_argument("groupBased output is one file, but '" + path +
                                  "' has an iteration placeholder; use fileBased or drop it");
    }
    file_ = checked(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT),
                    "cannot create '" + path + "'");
    write_root_attributes();  // a stream without steps still leaves a valid, empty series
  }
}

SeriesWriter::~SeriesWriter() = default;

std::string SeriesWriter::file_of(std::int64_t number) const {
  return pattern_ && encoding_ == Encoding::kFileBased ? pattern_->expand(number) : path_;
}

void SeriesWriter::begin_iteration(std::int64_t number,
                                   const std::vector<StreamAttribute>& attributes) {
  number_ = number;
  root_attributes_.clear();
  attributes_.clear();
  components_.clear();
  constants_.clear();
  // The step's own attributes win over the stream's of the same path and name.
  for (bool step_level : {false, true}) {
    for (const StreamAttribute& a : attributes) {
      if ((a.step >= 0) != step_level) continue;
      auto& target = (a.step < 0 && a.path == "/") ? root_attributes_ : attributes_;
      target[{a.path, a.name}] = a.value;
    }
  }
  if (encoding_ == Encoding::kFileBased) {
    has_meshes_ = has_particles_ = false;  // each file says what it holds
    const std::string file = pattern_->expand(number);
    file_ = checked(H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT),
                    "cannot create '" + file + "'");
  }
  write_root_attributes();
  Handle data = open_or_create_group(file_, {"data"});
  const std::string name = std::to_string(number);
  if (check(H5Lexists(data, name.c_str(), H5P_DEFAULT), "cannot look up an iteration") > 0) {
    throw FileError("iteration " + name + " is already in '" + file_of(number) + "'");
  }
  iteration_ = checked(H5Gcreate2(data, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                       "cannot create iteration " + name);
}

void SeriesWriter::write_root_attributes() {
  Handle root = checked(H5Oopen(file_, "/", H5P_DEFAULT), "cannot open the root group");
  std::map<std::string, AttributeValue> values = {
      {"author", provenance_.author},
      {"software", provenance_.software},
      {"softwareVersion", provenance_.software_version},
      {"date", provenance_.date},
      {"openPMDextension", std::int64_t{0}},
  };
  for (const auto& [key, value] : root_attributes_) {
    if (!is_layout_attribute(key.second)) values[key.second] = value;
  }
  values["openPMD"] = std::string("1.1.0");
  values["basePath"] = std::string(kBasePath);
  // Only where the file has meshes or particles: the standard ties the paths to them.
  if (has_meshes_) values["meshesPath"] = std::string("meshes/");
  if (has_particles_) values["particlesPath"] = std::string("particles/");
  values["iterationEncoding"] = std::string(encoding_name(encoding_));
  std::string format(kBasePath);
  if (encoding_ == Encoding::kFileBased) {
    const std::size_t slash = pattern_->text().rfind('/');
    format = slash == std::string::npos ? pattern_->text() : pattern_->text().substr(slash + 1);
  }
  values["iterationFormat"] = format;
  for (const auto& [name, value] : values) {
    try {
      check_attribute_name(name);
      write_attribute(root, name, value, standard_type(name));
    } catch (const std::exception& e) {
      problems_("root attribute left out: " + std::string(e.what()));
    }
  }
}

void SeriesWriter::write_component(std::string_view name, DType dtype,
                                   const std::vector<std::uint64_t>& global_extent,
                                   const std::vector<StreamPiece>& pieces) {
  const std::vector<std::string> segments = split_object_path(name);
  const std::vector<std::string> parents(segments.begin(), segments.end() - 1);
  Handle parent = open_or_create_group(iteration_, parents);
  if (check(H5Lexists(parent, segments.back().c_str(), H5P_DEFAULT), "cannot look up a name") >
      0) {
    throw FileError("'" + std::string(name) + "' names an object that already exists");
  }
  const std::vector<hsize_t> dims(global_extent.begin(), global_extent.end());
  Handle space = checked(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr),
                         "bad extent for '" + std::string(name) + "'");
  Handle type = memory_type(dtype);
  // Elements no chunk covers stay unwritten: no fill pass over a large, sparsely written dataset.
  Handle create = checked(H5Pcreate(H5P_DATASET_CREATE), "dataset properties");
  check(H5Pset_fill_time(create, H5D_FILL_TIME_NEVER), "dataset properties");
  Handle dataset = checked(H5Dcreate2(parent, segments.back().c_str(), type, space, H5P_DEFAULT,
                                      create, H5P_DEFAULT),
                           "cannot create dataset '" + std::string(name) + "'");
  components_[std::string(name)] = global_extent;
  for (const StreamPiece& piece : pieces) {
    const std::uint64_t elements = piece.piece.element_count();
    if (elements == 0) continue;
    if (piece.piece.extent.size() != dims.size() ||
        piece.bytes.size() != elements * dtype_size(dtype)) {
      throw FileError("a chunk of '" + std::string(name) + "' does not match its extent");
    }
    const std::vector<hsize_t> offset(piece.piece.offset.begin(), piece.piece.offset.end());
    const std::vector<hsize_t> count(piece.piece.extent.begin(), piece.piece.extent.end());
    Handle memory = checked(H5Screate_simple(static_cast<int>(count.size()), count.data(),
                                             nullptr),
                            "chunk dataspace");
    Handle file_space = checked(H5Scopy(space), "dataspace");
    check(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, offset.data(), nullptr, count.data(),
                              nullptr),
          "a chunk of '" + std::string(name) + "' lies outside its extent");
    check(H5Dwrite(dataset, type, memory, file_space, H5P_DEFAULT, piece.bytes.data()),
          "cannot write a chunk of '" + std::string(name) + "'");
  }
}

Handle SeriesWriter::open_object(std::string_view path) {
  if (path == "/") return checked(H5Oopen(iteration_, ".", H5P_DEFAULT), "cannot open iteration");
  const std::vector<std::string> segments = split_object_path(path);
  Handle object = open_if_exists(iteration_, segments);
  return object.get() >= 0 ? std::move(object) : open_or_create_group(iteration_, segments);
}

void SeriesWriter::write_attributes() {
  // Constant record components first, so that their attributes find a group.
  for (const auto& [key, value] : attributes_) {
    const auto& [path, name] = key;
    if (name != "value" || path == "/" || components_.contains(path)) continue;
    auto shape = attributes_.find({path, "shape"});
    if (shape == attributes_.end()) continue;
    try {
      const std::vector<std::uint64_t> extent = shape_of(shape->second);
      open_or_create_group(iteration_, split_object_path(path));
      components_[path] = extent;
      constants_.insert(path);
    } catch (const std::exception& e) {
      problems_("constant '" + path + "' left out: " + e.what());
    }
  }
  for (const auto& [key, value] : attributes_) {
    const auto& [path, name] = key;
    try {
      check_attribute_name(name);
      Handle object = open_object(path);
      write_attribute(object, name, value, standard_type(name));
    } catch (const std::exception& e) {
      problems_("attribute '" + name + "' of '" + path + "' left out: " + e.what());
    }
  }
}

// openPMD requires positionOffset next to position. A species that has position but no
// positionOffset gets constant zeros of position's shape, which is what the missing record means.
void SeriesWriter::add_position_offsets() {
  std::map<std::string, std::vector<std::pair<std::string, std::vector<std::uint64_t>>>> needed;
  std::set<std::string> present;
  for (const auto& [path, extent] : components_) {
    const std::vector<std::string> s = split_object_path(path);
    if (s.size() < 3 || s[0] != "particles") continue;
    const std::string species = s[0] + "/" + s[1];
    if (s[2] == "positionOffset") present.insert(species);
    if (s[2] == "position" && s.size() <= 4) {
      needed[species].emplace_back(s.size() == 4 ? s[3] : "", extent);
    }
  }
  for (const auto& [species, components] : needed) {
    if (present.contains(species)) continue;
    const std::string record = species + "/positionOffset";
    try {
      for (const auto& [component, extent] : components) {
        const std::string path = component.empty() ? record : record + "/" + component;
        Handle group = open_or_create_group(iteration_, split_object_path(path));
        write_attribute(group, "value", 0.0);
        std::vector<std::int64_t> shape(extent.begin(), extent.end());
        write_attribute(group, "shape", shape, StoredType::kUInt64);
        components_[path] = extent;
        constants_.insert(path);
      }
      auto position_units = attributes_.find({species + "/position", "unitDimension"});
      Handle group = open_or_create_group(iteration_, split_object_path(record));
      write_attribute(group, "unitDimension",
                      position_units != attributes_.end()
                          ? position_units->second
                          : AttributeValue(std::vector<double>{1, 0, 0, 0, 0, 0, 0}),
                      StoredType::kFloat64);
    } catch (const std::exception& e) {
      problems_("positionOffset of '" + species + "' left out: " + e.what());
    }
  }
}

// A mesh's spatial dimensions: those its writers described (a thetaMode mesh has two, r and z,
// for a three-dimensional dataset of modes), else its dataset's.
std::size_t SeriesWriter::mesh_dimensions(const std::string& record, std::size_t rank) const {
  for (const char* name : {"axisLabels", "gridSpacing", "gridGlobalOffset"}) {
    auto found = attributes_.find({record, name});
    if (found == attributes_.end()) continue;
    return std::visit(
        [](const auto& value) -> std::size_t {
          if constexpr (requires { value.size(); } &&
                        !std::is_same_v<std::decay_t<decltype(value)>, std::string>) {
            return value.size();
          } else {
            return 1;
          }
        },
        found->second);
  }
  return rank;
}

void SeriesWriter::fill_default(hid_t object, const std::string& name, const AttributeValue& value,
                                StoredType type) {
  if (!has_attribute(object, name)) {
    write_attribute(object, name, value, type == StoredType::kAsGiven ? standard_type(name) : type);
  }
}

// The standard's defaults for the required attributes the writers did not set (openPMD-api's
// defaults: cartesian, C order, unit spacing, zero offsets, SI factors of 1, dimensionless).
void SeriesWriter::fill_defaults() {
  try {
    fill_default(iteration_, "time", 0.0);
    fill_default(iteration_, "dt", 1.0);
    fill_default(iteration_, "timeUnitSI", 1.0);
  } catch (const FileError& e) {
    problems_(std::string("iteration attributes left out: ") + e.what());
  }
  const std::vector<double> dimensionless(7, 0.0);
  for (const auto& [path, extent] : components_) {
    try {
      const std::vector<std::string> s = split_object_path(path);
      const bool mesh = s[0] == "meshes" && (s.size() == 2 || s.size() == 3);
      const bool particle = s[0] == "particles" && (s.size() == 3 || s.size() == 4) &&
                            s[2] != "particlePatches";
      if (!mesh && !particle) continue;
      Handle component = open_object(path);
      const std::size_t record_depth = mesh ? 2 : 3;
      Handle record = s.size() == record_depth ? open_object(path)
                                               : open_object(join(s, record_depth));
      fill_default(record, "unitDimension", dimensionless);
      fill_default(record, "timeOffset", 0.0);
      fill_default(component, "unitSI", 1.0);
      if (mesh) {
        const std::size_t dims = mesh_dimensions(join(s, record_depth), extent.size());
        fill_default(record, "geometry", std::string("cartesian"));
        fill_default(record, "dataOrder", std::string("C"));
        fill_default(record, "axisLabels", default_axis_labels(dims));
        fill_default(record, "gridSpacing", std::vector<double>(dims, 1.0));
        fill_default(record, "gridGlobalOffset", std::vector<double>(dims, 0.0));
        fill_default(record, "gridUnitSI", 1.0);
        fill_default(component, "position", std::vector<double>(dims, 0.0));
      }
    } catch (const std::exception& e) {
      problems_("standard attributes of '" + path + "' left out: " + e.what());
    }
  }
}

void SeriesWriter::end_iteration() {
  write_attributes();
  add_position_offsets();
  fill_defaults();
  // The root names the meshes' and particles' paths once the file has some.
  const bool had_meshes = has_meshes_, had_particles = has_particles_;
  for (const auto& [path, extent] : components_) {
    has_meshes_ = has_meshes_ || path.rfind("meshes/", 0) == 0;
    has_particles_ = has_particles_ || path.rfind("particles/", 0) == 0;
  }
  if (has_meshes_ != had_meshes || has_particles_ != had_particles) write_root_attributes();
  iteration_.reset();
  if (encoding_ == Encoding::kFileBased) {
    file_.reset();
  } else {
    check(H5Fflush(file_, H5F_SCOPE_GLOBAL), "cannot flush '" + path_ + "'");
  }
}

}  // namespace slipstream::openpmd
