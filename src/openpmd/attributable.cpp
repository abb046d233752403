// Attributable and the tree of Nodes behind the handles: attributes, children, paths, and the
// small accessors of records, meshes and iterations.
#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "openPMD/Error.hpp"
#include "openPMD/Iteration.hpp"
#include "openPMD/Record.hpp"
#include "openPMD/Series.hpp"
#include "openpmd/node.hpp"
#include "openpmd/series_state.hpp"

namespace openPMD {
namespace internal {

std::shared_ptr<SeriesState> series_of(const Node& node) {
  std::shared_ptr<SeriesState> series = node.series.lock();
  if (!series) {
    throw error::WrongAPIUsage("the object belongs to no open series (a default-constructed "
                               "Series, or a handle kept after its series was destroyed)");
  }
  return series;
}

std::shared_ptr<Node> iteration_of(const std::shared_ptr<Node>& node) {
  for (std::shared_ptr<Node> at = node; at; at = at->parent.lock()) {
    if (at->kind == Kind::kIteration) return at;
  }
  return nullptr;
}

namespace {

std::string trimmed_path(const Node& root, const char* key, const char* fallback) {
  auto found = root.attributes.find(key);
  std::string path = fallback;
  if (found != root.attributes.end()) {
    if (auto text = found->second.getOptional<std::string>()) path = *text;
  }
  while (!path.empty() && path.back() == '/') path.pop_back();
  while (!path.empty() && path.front() == '/') path.erase(path.begin());
  return path;
}

}  // namespace

std::string path_segment(const Node& node) {
  switch (node.kind) {
    case Kind::kIteration:
    case Kind::kSeries:
    case Kind::kIterations:
    case Kind::kDetached:
      return "";
    case Kind::kMeshes:
    case Kind::kParticles: {
      std::shared_ptr<SeriesState> series = node.series.lock();
      const bool meshes = node.kind == Kind::kMeshes;
      if (!series) return meshes ? "meshes" : "particles";
      return meshes ? trimmed_path(*series->root, "meshesPath", "meshes/")
                    : trimmed_path(*series->root, "particlesPath", "particles/");
    }
    case Kind::kPatches:
      return "particlePatches";
    default:
      return node.name == RecordComponent::SCALAR ? "" : node.name;
  }
}

std::string path_in_iteration(const std::shared_ptr<Node>& node) {
  std::vector<std::string> segments;
  for (std::shared_ptr<Node> at = node; at && at->kind != Kind::kIteration; at = at->parent.lock()) {
    std::string part = path_segment(*at);
    if (!part.empty()) segments.push_back(std::move(part));
  }
  std::string path;
  for (auto it = segments.rbegin(); it != segments.rend(); ++it) {
    if (!path.empty()) path += '/';
    path += *it;
  }
  return path;
}

std::string describe(const std::shared_ptr<Node>& node) {
  std::string text;
  if (std::shared_ptr<SeriesState> series = node->series.lock()) {
    text = "series '" + series->target.path + "'";
  }
  if (std::shared_ptr<Node> iteration = iteration_of(node)) {
    text += (text.empty() ? "" : ", ") + std::string("iteration ") + std::to_string(iteration->index);
    if (iteration != node) {
      text += ", '" + path_in_iteration(node) + "'";
    }
  }
  return text;
}

void become(Node& node, Kind kind) {
  node.kind = kind;
  if (kind == Kind::kIteration) {
    try {
      node.index = std::stoull(node.name);
    } catch (const std::exception&) {
      node.index = 0;
    }
  }
}

namespace {
std::shared_ptr<Node> member_node(const std::shared_ptr<Node>& parent, const std::string& name,
                                  Kind kind) {
  auto found = parent->child_nodes.find(name);
  if (found != parent->child_nodes.end()) return found->second;
  auto node = std::make_shared<Node>();
  node->name = name;
  node->kind = kind;
  node->parent = parent;
  node->series = parent->series;
  parent->child_nodes.emplace(name, node);
  return node;
}
}  // namespace

}  // namespace internal

using internal::Kind;
using internal::Node;

Attributable::Attributable() : node_(std::make_shared<Node>()) {}
Attributable::Attributable(std::shared_ptr<Node> node)
    : node_(node ? std::move(node) : std::make_shared<Node>()) {}
Attributable::~Attributable() = default;

bool Attributable::setAttributeImpl(const std::string& key, Attribute value) {
  if (key.empty() || key.find('/') != std::string::npos) {
    throw error::IllegalInOpenPMDStandard("attribute name '" + key +
                                          "': must be non-empty and contain no '/'");
  }
  if (auto series = node_->series.lock()) {
    if (series->reading()) {
      throw error::WrongAPIUsage("setAttribute('" + key + "') in " + internal::describe(node_) +
                                 ": the series is open for reading");
    }
    if (std::shared_ptr<Node> iteration = internal::iteration_of(node_);
        iteration && iteration->closed) {
      throw error::WrongAPIUsage("setAttribute('" + key + "') in " + internal::describe(node_) +
                                 ": the iteration is closed");
    }
  }
  const bool replaced = node_->attributes.count(key) != 0;
  node_->set_attribute(key, std::move(value));
  return replaced;
}

Attribute Attributable::getAttribute(const std::string& key) const {
  auto found = node_->attributes.find(key);
  if (found == node_->attributes.end()) throw error::NoSuchAttribute(key);
  return found->second;
}

bool Attributable::deleteAttribute(const std::string& key) {
  if (auto series = node_->series.lock(); series && series->reading()) {
    throw error::WrongAPIUsage("deleteAttribute('" + key + "'): the series is open for reading");
  }
  return node_->erase_attribute(key);
}

std::vector<std::string> Attributable::attributes() const {
  std::vector<std::string> names;
  for (const auto& [name, value] : node_->attributes) names.push_back(name);
  return names;
}

std::size_t Attributable::numAttributes() const { return node_->attributes.size(); }

bool Attributable::containsAttribute(const std::string& key) const {
  return node_->attributes.count(key) != 0;
}

std::string Attributable::comment() const {
  return containsAttribute("comment") ? getAttribute("comment").get<std::string>() : "";
}

Attributable& Attributable::setComment(const std::string& comment) {
  setAttribute("comment", comment);
  return *this;
}

void Attributable::seriesFlush(const std::string&) {
  internal::series_of(*node_)->flush_all(false);
}

std::string Attributable::MyPath::filePath() const {
  return directory + seriesName + seriesExtension;
}

std::string Attributable::MyPath::openPMDPath() const {
  std::string path;
  for (const std::string& part : group) path += "/" + part;
  return path.empty() ? "/" : path;
}

Attributable::MyPath Attributable::myPath() const {
  MyPath path;
  if (auto series = node_->series.lock()) {
    path.directory = series->directory;
    path.seriesName = series->target.name;
    path.seriesExtension = series->extension;
    path.access = series->target.access;
  }
  std::vector<std::string> segments;
  for (std::shared_ptr<Node> at = node_; at; at = at->parent.lock()) {
    if (at->kind == Kind::kSeries) break;
    if (at->kind == Kind::kIterations) {
      segments.push_back("data");
      continue;
    }
    std::string part = at->kind == Kind::kIteration ? at->name : internal::path_in_iteration(at);
    if (at->kind != Kind::kIteration) {
      // path_in_iteration gave the whole path below the iteration: jump to the iteration.
      std::shared_ptr<Node> iteration = internal::iteration_of(at);
      if (!part.empty()) {
        std::vector<std::string> below;
        std::size_t start = 0;
        while (start <= part.size()) {
          std::size_t end = part.find('/', start);
          if (end == std::string::npos) end = part.size();
          below.push_back(part.substr(start, end - start));
          start = end + 1;
        }
        segments.insert(segments.end(), below.rbegin(), below.rend());
      }
      if (!iteration) break;
      at = iteration;
      segments.push_back(at->name);
      continue;
    }
    segments.push_back(part);
  }
  path.group.assign(segments.rbegin(), segments.rend());
  return path;
}

std::shared_ptr<void>& Attributable::childrenSlot() const { return node_->children; }

std::shared_ptr<Node> Attributable::makeChild(const std::string& name) const {
  if (auto series = node_->series.lock()) {
    if (series->reading()) {
      throw std::out_of_range("Key '" + name + "' does not exist (read-only) in " +
                              internal::describe(node_) + ".");
    }
    if (std::shared_ptr<Node> iteration = internal::iteration_of(node_);
        iteration && iteration->closed) {
      throw error::WrongAPIUsage("cannot add '" + name + "' to " + internal::describe(node_) +
                                 ": the iteration is closed");
    }
  }
  return adoptChild(name);
}

std::shared_ptr<Node> Attributable::adoptChild(const std::string& name) const {
  auto child = std::make_shared<Node>();
  child->name = name;
  child->parent = node_;
  child->series = node_->series;
  node_->child_nodes.insert_or_assign(name, child);
  return child;
}

void Attributable::eraseChildNode(const std::string& name) const {
  node_->child_nodes.erase(name);
}

void Attributable::rekeyChildNode(const std::string& from, const std::string& to) const {
  auto handle = node_->child_nodes.extract(from);
  if (handle.empty()) return;
  handle.key() = to;
  handle.mapped()->name = to;
  node_->child_nodes.insert(std::move(handle));
}

void Attributable::eraseChild(const std::string& name) const {
  auto found = node_->child_nodes.find(name);
  if (found == node_->child_nodes.end()) return;
  if (found->second->written) {
    throw error::WrongAPIUsage("cannot erase '" + name + "' from " + internal::describe(node_) +
                               ": it has been written");
  }
  node_->child_nodes.erase(found);
}

// The handles' constructors: each names the kind of object it is (the most derived last).

BaseRecordComponent::BaseRecordComponent(std::shared_ptr<Node> node)
    : Attributable(std::move(node)) {
  internal::become(*node_, Kind::kRecordComponent);
}
RecordComponent::RecordComponent(std::shared_ptr<Node> node)
    : BaseRecordComponent(std::move(node)) {}
MeshRecordComponent::MeshRecordComponent(std::shared_ptr<Node> node)
    : RecordComponent(std::move(node)) {
  internal::become(*node_, Kind::kMeshComponent);
}
PatchRecordComponent::PatchRecordComponent(std::shared_ptr<Node> node)
    : RecordComponent(std::move(node)) {
  internal::become(*node_, Kind::kPatchComponent);
}
Record::Record(std::shared_ptr<Node> node) : BaseRecord(std::move(node)) {
  internal::become(*node_, Kind::kRecord);
}
Mesh::Mesh(std::shared_ptr<Node> node) : BaseRecord(std::move(node)) {
  internal::become(*node_, Kind::kMesh);
}
PatchRecord::PatchRecord(std::shared_ptr<Node> node) : BaseRecord(std::move(node)) {
  internal::become(*node_, Kind::kPatchRecord);
}
ParticlePatches::ParticlePatches(std::shared_ptr<Node> node) : Container(std::move(node)) {
  internal::become(*node_, Kind::kPatches);
}
ParticleSpecies::ParticleSpecies(std::shared_ptr<Node> node)
    : Container(node), particlePatches(internal::member_node(node, "particlePatches", Kind::kPatches)) {
  internal::become(*node_, Kind::kSpecies);
}
Iteration::Iteration(std::shared_ptr<Node> node)
    : Attributable(node),
      meshes(internal::member_node(node, "meshes", Kind::kMeshes)),
      particles(internal::member_node(node, "particles", Kind::kParticles)) {
  internal::become(*node_, Kind::kIteration);
  internal::become(*meshes.node(), Kind::kMeshes);
  internal::become(*particles.node(), Kind::kParticles);
}

std::uint64_t ParticlePatches::numPatches() const {
  auto found = find("numParticles");
  if (found == end()) return 0;
  auto component = found->second.find(RecordComponent::SCALAR);
  if (component == found->second.end()) return 0;
  Extent extent = component->second.getExtent();
  return extent.empty() ? 0 : extent[0];
}

namespace detail {
std::array<double, 7> unitDimensionArray(const std::array<double, 7>& start,
                                         const std::map<UnitDimension, double>& powers) {
  std::array<double, 7> out = start;
  for (const auto& [dimension, power] : powers) out[static_cast<std::size_t>(dimension)] = power;
  return out;
}
}  // namespace detail

// Mesh's attributes.

namespace {
const char* geometry_name(Mesh::Geometry geometry) {
  switch (geometry) {
    case Mesh::Geometry::cartesian: return "cartesian";
    case Mesh::Geometry::thetaMode: return "thetaMode";
    case Mesh::Geometry::cylindrical: return "cylindrical";
    case Mesh::Geometry::spherical: return "spherical";
    case Mesh::Geometry::other: return "other";
  }
  return "other";
}
}  // namespace

Mesh::Geometry Mesh::geometry() const {
  const std::string name = geometryString();
  for (Geometry g : {Geometry::cartesian, Geometry::thetaMode, Geometry::cylindrical,
                     Geometry::spherical}) {
    if (name == geometry_name(g)) return g;
  }
  return Geometry::other;
}
std::string Mesh::geometryString() const {
  return containsAttribute("geometry") ? getAttribute("geometry").get<std::string>() : "cartesian";
}
Mesh& Mesh::setGeometry(Geometry geometry) {
  setAttribute("geometry", std::string(geometry_name(geometry)));
  return *this;
}
Mesh& Mesh::setGeometry(std::string geometry) {
  setAttribute("geometry", std::move(geometry));
  return *this;
}
std::string Mesh::geometryParameters() const {
  return containsAttribute("geometryParameters")
             ? getAttribute("geometryParameters").get<std::string>()
             : "";
}
Mesh& Mesh::setGeometryParameters(const std::string& parameters) {
  setAttribute("geometryParameters", parameters);
  return *this;
}
Mesh::DataOrder Mesh::dataOrder() const {
  if (!containsAttribute("dataOrder")) return DataOrder::C;
  const std::string order = getAttribute("dataOrder").get<std::string>();
  return order == "F" ? DataOrder::F : DataOrder::C;
}
Mesh& Mesh::setDataOrder(DataOrder order) {
  setAttribute("dataOrder", std::string(1, static_cast<char>(order)));
  return *this;
}
std::vector<std::string> Mesh::axisLabels() const {
  return containsAttribute("axisLabels")
             ? getAttribute("axisLabels").get<std::vector<std::string>>()
             : std::vector<std::string>{};
}
Mesh& Mesh::setAxisLabels(std::vector<std::string> labels) {
  setAttribute("axisLabels", std::move(labels));
  return *this;
}
std::vector<double> Mesh::gridGlobalOffset() const {
  return containsAttribute("gridGlobalOffset")
             ? getAttribute("gridGlobalOffset").get<std::vector<double>>()
             : std::vector<double>{};
}
Mesh& Mesh::setGridGlobalOffset(std::vector<double> offset) {
  setAttribute("gridGlobalOffset", std::move(offset));
  return *this;
}
double Mesh::gridUnitSI() const {
  return containsAttribute("gridUnitSI") ? getAttribute("gridUnitSI").get<double>() : 1.0;
}
Mesh& Mesh::setGridUnitSI(double unit) {
  setAttribute("gridUnitSI", unit);
  return *this;
}

double Iteration::timeUnitSI() const {
  return containsAttribute("timeUnitSI") ? getAttribute("timeUnitSI").get<double>() : 1.0;
}
Iteration& Iteration::setTimeUnitSI(double unit) {
  setAttribute("timeUnitSI", unit);
  return *this;
}
Iteration& Iteration::close(bool) {
  std::shared_ptr<internal::SeriesState> series = internal::series_of(*node_);
  if (node_->closed) {
    throw error::WrongAPIUsage("Iteration::close: " + internal::describe(node_) +
                               " was closed already");
  }
  series->flush_iteration(*node_, true);
  return *this;
}
Iteration& Iteration::open() {
  std::shared_ptr<internal::SeriesState> series = internal::series_of(*node_);
  if (node_->closed) {
    if (series->is_stream()) {
      throw error::WrongAPIUsage("Iteration::open: " + internal::describe(node_) +
                                 " was closed, and a stream's steps cannot be reopened");
    }
    node_->closed = false;
  }
  return *this;
}
bool Iteration::closed() const { return node_->closed; }

}  // namespace openPMD
