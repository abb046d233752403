// Series: opening a series on a stream or a file (ending, configuration, backend), its root
// attributes, building the tree of an iteration that was read, and the ways of going through
// the iterations (readIterations, writeIterations, snapshots).
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "openPMD/Error.hpp"
#include "openPMD/Series.hpp"
#include "openpmd/series_state.hpp"

namespace openPMD {
namespace internal {
namespace {

struct ParsedName {
  std::string directory;  // with its trailing '/'
  std::string name;       // the stem
  std::string extension;  // ".sst", ".h5", ".%E", ""
};

ParsedName parse_name(const std::string& path) {
  ParsedName parsed;
  const std::size_t slash = path.rfind('/');
  parsed.directory = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  std::string file = slash == std::string::npos ? path : path.substr(slash + 1);
  const std::size_t dot = file.rfind('.');
  if (dot != std::string::npos && dot != 0) {
    parsed.extension = file.substr(dot);
    file.resize(dot);
  }
  parsed.name = file;
  return parsed;
}

bool is_stream_ending(const std::string& extension) {
  return extension == ".sst" || extension == ".ssc" || extension == ".slip";
}

std::string supported_text() {
  return "supported: .sst, .ssc and .slip (Slipstream streams), .h5 (HDF5 files, with %T for "
         "one file per iteration), .%E with backend = \"slipstream\" or \"hdf5\", and any name "
         "with backend = \"slipstream\"";
}

// The child `key` of a container being read, made when missing.
template <typename Container>
auto& child(Container& container, const std::string& key) {
  return container.contains(key) ? container.at(key) : container.adopt(key, nullptr);
}

// The node that segments[at...] name below `record`: the record itself (or, for a component,
// its SCALAR one) when nothing is left, else the component of that name.
template <typename Record>
std::shared_ptr<Node> record_node(Record& record, const std::vector<std::string>& segments,
                                  std::size_t at, bool component) {
  if (segments.size() == at) {
    return component ? child(record, RecordComponent::SCALAR).node() : record.node();
  }
  if (segments.size() == at + 1) return child(record, segments[at]).node();
  return nullptr;
}

// The tree node for `path` (segments below the iteration) that a component or attribute names,
// created as a mesh, record or patch component as the path says. Returns nullptr for paths
// outside meshes and particles.
std::shared_ptr<Node> node_for(Iteration& iteration, const std::vector<std::string>& segments,
                               const std::string& meshes, const std::string& particles,
                               bool component) {
  if (segments.size() < 2) return nullptr;
  if (segments[0] == meshes) {
    return record_node(child(iteration.meshes, segments[1]), segments, 2, component);
  }
  if (segments[0] != particles) return nullptr;
  ParticleSpecies& species = child(iteration.particles, segments[1]);
  if (segments.size() == 2) return component ? nullptr : species.node();
  if (segments[2] != "particlePatches") {
    return record_node(child(species, segments[2]), segments, 3, component);
  }
  if (segments.size() == 3) return component ? nullptr : species.particlePatches.node();
  return record_node(child(species.particlePatches, segments[3]), segments, 4, component);
}

std::vector<std::string> split(const std::string& path) {
  std::vector<std::string> segments;
  std::size_t start = 0;
  while (start < path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    if (end > start) segments.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  return segments;
}

std::string trimmed(std::string path) {
  while (!path.empty() && path.back() == '/') path.pop_back();
  return path;
}

}  // namespace

// openPMD's date format: "YYYY-MM-DD HH:mm:ss tz".
std::string now_text() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char text[64];
  std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M:%S %z", &local);
  return text;
}


SeriesState::~SeriesState() {
  try {
    close();
  } catch (const std::exception& e) {
    std::cerr << "openPMD: closing series '" << target.path << "': " << e.what() << "\n";
  }
}

void SeriesState::close() {
  if (closed || !backend) return;
  if (!reading()) {
    flush_all(true);
  } else {
    for (const auto& [name, node] : iterations->node()->child_nodes) {
      if (!node->closed) {
        node->component.loads.clear();
        backend->release_iteration(node->index);
        node->closed = true;
      }
    }
  }
  closed = true;
  backend->close();
}

void SeriesState::adopt_root_attributes(const std::vector<AttributeEntry>& attributes) {
  for (const AttributeEntry& entry : attributes) {
    if (entry.path.empty() || entry.path == "/") root->attributes.insert_or_assign(entry.name, entry.value);
  }
}

Iteration& SeriesState::adopt_iteration(IterationLayout layout) {
  read_tree = ReadTree{};
  auto node = std::make_shared<Node>();
  node->name = std::to_string(layout.index);
  node->parent = iterations->node();
  node->series = weak_from_this();
  iterations->node()->child_nodes.insert_or_assign(node->name, node);
  Iteration& iteration = iterations->adopt(layout.index, node);
  // Nodes adopted below get their series and parent from the containers.
  const std::string meshes = trimmed(root->attributes.count("meshesPath")
                                         ? root->attributes.at("meshesPath").get<std::string>()
                                         : "meshes/");
  const std::string particles =
      trimmed(root->attributes.count("particlesPath")
                  ? root->attributes.at("particlesPath").get<std::string>()
                  : "particles/");
  for (ComponentLayout& component : layout.components) {
    std::shared_ptr<Node> target_node =
        node_for(iteration, split(component.path), meshes, particles, true);
    read_tree.components.push_back(target_node.get());
    if (!target_node) {
      std::cerr << "openPMD: " << target.path << ", iteration " << layout.index << ": '"
                << component.path << "' is neither a mesh nor a particle record (left out)\n";
      continue;
    }
    ComponentState& state = target_node->component;
    state.dtype = component.dtype;
    state.extent = std::move(component.extent);
    state.has_extent = true;
    state.chunks = std::move(component.chunks);
  }
  read_tree.reusable = true;
  // Constant components: `value` and `shape` at a path with no dataset.
  std::map<std::string, std::pair<const Attribute*, const Attribute*>> constants;
  const bool kept = layout.kept != nullptr;
  std::vector<AttributeEntry>& attributes =
      kept ? const_cast<std::vector<AttributeEntry>&>(*layout.kept) : layout.attributes;
  for (const AttributeEntry& entry : attributes) {
    if (entry.name == "value") constants[entry.path].first = &entry.value;
    if (entry.name == "shape") constants[entry.path].second = &entry.value;
  }
  for (const auto& [path, pair] : constants) {
    if (!pair.first || !pair.second) continue;
    std::shared_ptr<Node> target_node = node_for(iteration, split(path), meshes, particles, true);
    if (!target_node || target_node->component.has_extent) continue;
    ComponentState& state = target_node->component;
    read_tree.reusable = false;
    state.constant = true;
    state.dtype = pair.first->dtype;
    auto shape = pair.second->getOptional<std::vector<std::uint64_t>>();
    state.extent = shape ? Extent(shape->begin(), shape->end()) : Extent{};
    state.has_extent = true;
    state.chunks = {WrittenChunkInfo(Offset(state.extent.size(), 0), state.extent)};
  }
  // A layout of this call's own gives its values to the nodes; one the backend keeps is copied.
  // A path's attributes come together, so its node is looked up once for all of them.
  const std::string* last_path = nullptr;
  std::shared_ptr<Node> target_node;
  Node* scalar_node = nullptr;
  for (AttributeEntry& entry : attributes) {
    if (!last_path || entry.path != *last_path) {
      last_path = &entry.path;
      scalar_node = nullptr;
      if (entry.path.empty()) {
        target_node = node;
      } else {
        // A scalar record's path names the record and its component: both get the attribute.
        target_node = node_for(iteration, split(entry.path), meshes, particles, false);
        if (target_node) {
          if (auto scalar = target_node->child_nodes.find(RecordComponent::SCALAR);
              scalar != target_node->child_nodes.end()) {
            scalar_node = scalar->second.get();
          }
        }
      }
    }
    if (!target_node) {
      read_tree.attributes.emplace_back(nullptr, nullptr);
      continue;
    }
    Attribute* scalar_slot = nullptr;
    if (scalar_node) {
      scalar_slot = &scalar_node->attributes.insert_or_assign(entry.name, entry.value).first->second;
    }
    Attribute* slot =
        kept ? &target_node->attributes.insert_or_assign(entry.name, entry.value).first->second
             : &target_node->attributes
                    .insert_or_assign(std::move(entry.name), std::move(entry.value))
                    .first->second;
    read_tree.attributes.emplace_back(slot, scalar_slot);
  }
  node->closed = false;
  read_tree.iteration = node;
  return iteration;
}

namespace {
// The use counts of `node` and every node below it, depth first.
void collect_use_counts(const std::shared_ptr<Node>& node, std::vector<long>& out) {
  out.push_back(node.use_count());
  for (const auto& [name, child] : node->child_nodes) collect_use_counts(child, out);
}
}  // namespace

Iteration* SeriesState::reuse_read_tree(IterationLayout& layout) {
  ReadTree& tree = read_tree;
  if (!tree.reusable || !tree.iteration || !tree.iteration->closed || !layout.same_shape ||
      tree.components.size() != layout.components.size() ||
      tree.attributes.size() != layout.all_attributes().size() ||
      layout.changed.size() != tree.attributes.size() || iterations->contains(layout.index)) {
    return nullptr;
  }
  // Nobody else may hold a part of the tree: a handle kept from the last iteration must keep
  // showing it, not this one. Handles taken and dropped leave the counts as they were.
  std::vector<long> counts;
  counts.reserve(tree.use_counts.size());
  collect_use_counts(tree.iteration, counts);
  if (counts != tree.use_counts) return nullptr;

  iterations->rekey(tree.iteration->index, layout.index);
  tree.iteration->index = layout.index;
  tree.iteration->closed = false;
  for (std::size_t i = 0; i < layout.components.size(); ++i) {
    Node* node = tree.components[i];
    if (!node) continue;
    ComponentState& state = node->component;
    ComponentLayout& component = layout.components[i];
    state.dtype = component.dtype;
    state.extent = std::move(component.extent);
    state.chunks = std::move(component.chunks);
  }
  const std::vector<AttributeEntry>& attributes = layout.all_attributes();
  for (std::size_t i = 0; i < attributes.size(); ++i) {
    if (!layout.changed[i]) continue;
    auto [slot, scalar_slot] = tree.attributes[i];
    if (slot) *slot = attributes[i].value;
    if (scalar_slot) *scalar_slot = attributes[i].value;
  }
  return &iterations->at(layout.index);
}


std::optional<IndexedIteration> SeriesState::next_read_iteration() {
  if (linear_ended) return std::nullopt;
  if (target.access == Access::READ_ONLY && !is_stream()) {
    std::vector<std::uint64_t> indices;
    for (const auto& [index, iteration] : *iterations) indices.push_back(index);
    if (random_position >= indices.size()) {
      linear_ended = true;
      return std::nullopt;
    }
    const std::uint64_t index = indices[random_position++];
    Iteration& iteration = iterations->at(index);
    iteration.open();
    return IndexedIteration(iteration, index);
  }
  std::optional<IterationLayout> layout = backend->next_iteration();
  const bool root_changed = backend->series_attributes_changed();
  if (root_changed) adopt_root_attributes(backend->series_attributes());
  if (!layout) {
    linear_ended = true;
    read_tree = ReadTree{};
    return std::nullopt;
  }
  // The root's meshesPath and particlesPath decide where components go: a change builds anew.
  if (root_changed) read_tree.reusable = false;
  if (Iteration* reused = is_stream() ? reuse_read_tree(*layout) : nullptr) {
    return IndexedIteration(*reused, layout->index);
  }
  // A stream holds one step at a time: the iterations read before are gone.
  if (is_stream()) {
    std::vector<std::uint64_t> done;
    for (const auto& [index, iteration] : *iterations) {
      if (iteration.node()->closed) done.push_back(index);
    }
    for (std::uint64_t index : done) {
      iterations->node()->child_nodes.erase(std::to_string(index));
      // erase() refuses written children; these were read, not written.
      iterations->erase(index);
    }
  }
  const std::uint64_t index = layout->index;
  Iteration& iteration = adopt_iteration(std::move(*layout));
  if (is_stream() && read_tree.iteration) {
    collect_use_counts(read_tree.iteration, read_tree.use_counts);
  } else {
    read_tree = ReadTree{};
  }
  return IndexedIteration(iteration, index);
}

Iteration& SeriesState::write_iteration(std::uint64_t index) {
  if (reading()) {
    throw error::WrongAPIUsage("writeIterations() of series '" + target.path +
                               "', which is open for reading");
  }
  if (current_write && *current_write != index && iterations->contains(*current_write)) {
    Iteration& previous = iterations->at(*current_write);
    if (!previous.closed()) previous.close();
  }
  if (is_stream() && last_sent && index <= *last_sent) {
    throw error::WrongAPIUsage("writeIterations()[" + std::to_string(index) + "] of series '" +
                               target.path + "': iteration " + std::to_string(*last_sent) +
                               " was sent already, and a stream's iterations only go forward");
  }
  if (iterations->contains(index) && iterations->at(index).closed()) {
    throw error::WrongAPIUsage("writeIterations()[" + std::to_string(index) + "] of series '" +
                               target.path + "': the iteration was closed already");
  }
  current_write = index;
  return (*iterations)[index];
}

}  // namespace internal

using internal::Kind;
using internal::Node;
using internal::SeriesState;

Series::Series() : iterations(std::make_shared<Node>()) {}

Series::Series(const std::string& filepath, Access access, const std::string& options)
    : Series(filepath, access, options, 0, 1, nullptr) {}

Series::Series(const std::string& filepath, Access access, const std::string& options, int rank,
               int size, Allgather allgather)
    : Attributable(std::make_shared<Node>()), iterations(std::make_shared<Node>()) {
  auto state = std::make_shared<SeriesState>();
  state->config = internal::parse_config(options);
  internal::ParsedName parsed = internal::parse_name(filepath);
  state->target.path = filepath;
  state->target.name = parsed.name;
  state->target.access = access;
  state->target.rank = rank;
  state->target.size = size;
  state->directory = parsed.directory;
  state->extension = parsed.extension;
  state->allgather = std::move(allgather);

  const std::string& chosen = state->config.backend;
  bool stream = false;
  if (chosen == "slipstream") {
    stream = true;
  } else if (parsed.extension == ".%E") {
    if (chosen == "hdf5") {
      state->extension = ".h5";
      state->target.path = parsed.directory + parsed.name + ".h5";
    } else {
      throw error::WrongAPIUsage("series '" + filepath + "': the ending .%E takes the backend "
                                 "from the configuration, which names " +
                                 (chosen.empty() ? std::string("none") : "'" + chosen + "'") +
                                 "; " + internal::supported_text());
    }
  } else if (internal::is_stream_ending(parsed.extension)) {
    stream = true;
  } else if (parsed.extension == ".h5") {
    // HDF5.
  } else if (parsed.extension == ".bp" || parsed.extension == ".bp4" || parsed.extension == ".bp5") {
    throw error::WrongAPIUsage("series '" + filepath + "': ADIOS2 files (" + parsed.extension +
                               ") are not available here; " + internal::supported_text());
  } else {
    throw error::WrongAPIUsage("series '" + filepath +
                               "': Unknown file format! Did you specify a file ending? " +
                               internal::supported_text());
  }
  const bool pattern = filepath.find("%T") != std::string::npos ||
                       filepath.find('%') != std::string::npos;
  if (stream && pattern && parsed.extension != ".%E") {
    throw error::WrongAPIUsage("series '" + filepath +
                               "': a stream is one series; %T (one file per iteration) is for "
                               "files");
  }
  state->target.encoding = pattern ? IterationEncoding::fileBased : IterationEncoding::groupBased;
  if (state->config.iteration_encoding == "file_based") state->target.encoding = IterationEncoding::fileBased;
  if (state->config.iteration_encoding == "variable_based") state->target.encoding = IterationEncoding::variableBased;
  if (state->config.iteration_encoding == "group_based") state->target.encoding = IterationEncoding::groupBased;

  state->root = node_;
  node_->kind = Kind::kSeries;
  node_->series = state;
  auto iterations_node = std::make_shared<Node>();
  iterations_node->kind = Kind::kIterations;
  iterations_node->name = "data";
  iterations_node->parent = node_;
  iterations_node->series = state;
  iterations = Container<Iteration, std::uint64_t>(iterations_node);
  state->iterations.emplace(iterations);

  if (!stream && state->config.dataset_operator) {
    state->config.warnings.push_back("adios2.dataset.operators apply to streams: HDF5 files are "
                                     "written without them");
  }
  if (rank == 0) {
    for (const std::string& warning : state->config.warnings) {
      std::cerr << "openPMD: " << filepath << ": " << warning << "\n";
    }
  }

  state->backend = stream ? internal::make_stream_backend(state->target, state->config)
                          : internal::make_file_backend(state->target, state->config);
  state_ = state;

  if (!state->reading() && access != Access::READ_WRITE && access != Access::APPEND) {
    setOpenPMD("1.1.0");
    setOpenPMDextension(0);
    // What openPMD-api writes unless told otherwise; setSoftware/setDate replace them. The date
    // from rank 0 only: the clocks of a stream's writer ranks need not agree to the second, and
    // the writers of a stream must agree on every attribute they both set.
    setSoftware("Slipstream openPMD layer", getVersion());
    if (rank == 0) setDate(internal::now_text());
    setAttribute("basePath", std::string("/data/%T/"));
    switch (state->target.encoding) {
      case IterationEncoding::fileBased:
        setAttribute("iterationEncoding", std::string("fileBased"));
        setAttribute("iterationFormat", parsed.name + state->extension);
        break;
      case IterationEncoding::groupBased:
        setAttribute("iterationEncoding", std::string("groupBased"));
        setAttribute("iterationFormat", std::string("/data/%T/"));
        break;
      case IterationEncoding::variableBased:
        setAttribute("iterationEncoding", std::string("variableBased"));
        setAttribute("iterationFormat", std::string("/data/%T/"));
        break;
    }
    return;
  }
  if (stream) return;  // a stream's root and steps arrive with its first step
  state->adopt_root_attributes(state->backend->series_attributes());
  if (access == Access::READ_LINEAR) return;
  for (std::uint64_t index : state->backend->iterations()) {
    Iteration& iteration = state->adopt_iteration(state->backend->read_iteration(index));
    if (access != Access::READ_ONLY) iteration.node()->closed = true;
  }
}

Series::~Series() = default;

Series::operator bool() const noexcept { return state_ != nullptr; }

namespace {
std::string text_attribute(const Attributable& object, const char* name) {
  return object.containsAttribute(name) ? object.getAttribute(name).get<std::string>() : "";
}
}  // namespace

std::string Series::openPMD() const { return text_attribute(*this, "openPMD"); }
Series& Series::setOpenPMD(const std::string& version) {
  setAttribute("openPMD", version);
  return *this;
}
std::uint32_t Series::openPMDextension() const {
  return containsAttribute("openPMDextension") ? getAttribute("openPMDextension").get<std::uint32_t>()
                                               : 0;
}
Series& Series::setOpenPMDextension(std::uint32_t extension) {
  setAttribute("openPMDextension", extension);
  return *this;
}
std::string Series::basePath() const {
  return containsAttribute("basePath") ? text_attribute(*this, "basePath") : "/data/%T/";
}
Series& Series::setBasePath(const std::string& path) {
  if (path != "/data/%T/") {
    throw error::WrongAPIUsage("setBasePath: only \"/data/%T/\" is supported (the openPMD 1.x "
                               "standard's fixed base path)");
  }
  setAttribute("basePath", path);
  return *this;
}
std::string Series::meshesPath() const { return text_attribute(*this, "meshesPath"); }
Series& Series::setMeshesPath(const std::string& path) {
  setAttribute("meshesPath", path.empty() || path.back() == '/' ? path : path + "/");
  return *this;
}
std::string Series::particlesPath() const { return text_attribute(*this, "particlesPath"); }
Series& Series::setParticlesPath(const std::string& path) {
  setAttribute("particlesPath", path.empty() || path.back() == '/' ? path : path + "/");
  return *this;
}
std::string Series::author() const { return text_attribute(*this, "author"); }
Series& Series::setAuthor(const std::string& author) {
  setAttribute("author", author);
  return *this;
}
std::string Series::software() const { return text_attribute(*this, "software"); }
Series& Series::setSoftware(const std::string& name, const std::string& version) {
  setAttribute("software", name);
  setAttribute("softwareVersion", version);
  return *this;
}
std::string Series::softwareVersion() const { return text_attribute(*this, "softwareVersion"); }
std::string Series::date() const { return text_attribute(*this, "date"); }
Series& Series::setDate(const std::string& date) {
  setAttribute("date", date);
  return *this;
}
std::string Series::softwareDependencies() const {
  return text_attribute(*this, "softwareDependencies");
}
Series& Series::setSoftwareDependencies(const std::string& dependencies) {
  setAttribute("softwareDependencies", dependencies);
  return *this;
}
std::string Series::machine() const { return text_attribute(*this, "machine"); }
Series& Series::setMachine(const std::string& machine) {
  setAttribute("machine", machine);
  return *this;
}
IterationEncoding Series::iterationEncoding() const {
  const std::string encoding = text_attribute(*this, "iterationEncoding");
  if (encoding == "fileBased") return IterationEncoding::fileBased;
  if (encoding == "variableBased") return IterationEncoding::variableBased;
  return IterationEncoding::groupBased;
}
Series& Series::setIterationEncoding(IterationEncoding encoding) {
  if (state_ && state_->target.encoding != encoding && !state_->reading()) {
    const bool file_based = encoding == IterationEncoding::fileBased;
    if (file_based != (state_->target.encoding == IterationEncoding::fileBased)) {
      throw error::WrongAPIUsage("setIterationEncoding on series '" + state_->target.path +
                                 "': file-based encoding is chosen by a %T in the name");
    }
  }
  static const char* const kNames[] = {"fileBased", "groupBased", "variableBased"};
  setAttribute("iterationEncoding", std::string(kNames[static_cast<int>(encoding)]));
  return *this;
}
std::string Series::iterationFormat() const { return text_attribute(*this, "iterationFormat"); }
Series& Series::setIterationFormat(const std::string& format) {
  setAttribute("iterationFormat", format);
  return *this;
}
std::string Series::name() const { return state_ ? state_->target.name : ""; }
Series& Series::setName(const std::string& name) {
  if (state_) state_->target.name = name;
  return *this;
}
std::string Series::backend() const { return state_ ? state_->backend->name() : ""; }

void Series::flush(const std::string&) {
  if (state_) state_->flush_all(false);
}

void Series::close() {
  if (state_) state_->close();
}

void Series::parseBase() {}

ReadIterations Series::readIterations() {
  if (!state_ || !state_->reading()) {
    throw error::WrongAPIUsage("readIterations() of a series not open for reading");
  }
  return ReadIterations(state_);
}

WriteIterations Series::writeIterations() {
  if (!state_ || state_->reading()) {
    throw error::WrongAPIUsage("writeIterations() of a series not open for writing");
  }
  return WriteIterations(state_);
}

Snapshots Series::snapshots() {
  if (!state_) throw error::WrongAPIUsage("snapshots() of a default-constructed Series");
  return Snapshots(state_);
}

chunk_assignment::RankMeta Series::rankTable(bool collective) {
  if (!state_) return {};
  if (state_->reading()) return state_->backend->writer_ranks();
  std::string mine = state_->rank_info;
  if (mine.empty()) {
    char host[256] = {};
    if (gethostname(host, sizeof(host) - 1) == 0) mine = host;
  }
  chunk_assignment::RankMeta table;
  if (collective && state_->allgather) {
    std::vector<std::string> all = state_->allgather(mine);
    for (std::size_t r = 0; r < all.size(); ++r) table.emplace(static_cast<unsigned>(r), all[r]);
  } else {
    table.emplace(static_cast<unsigned>(state_->target.rank), mine);
  }
  return table;
}

Series& Series::setRankTable(const std::string& my_rank_info) {
  if (state_) state_->rank_info = my_rank_info;
  return *this;
}

// Going through the iterations.

ReadIterations::iterator::iterator(std::shared_ptr<internal::SeriesState> series)
    : series_(std::move(series)) {
  advance();
}

void ReadIterations::iterator::advance() {
  if (current_ && !current_->closed()) current_->close();
  current_.reset();
  if (std::optional<IndexedIteration> next = series_->next_read_iteration()) {
    current_.emplace(std::move(*next));
  }
}

ReadIterations::iterator& ReadIterations::iterator::operator++() {
  advance();
  return *this;
}

ReadIterations::iterator ReadIterations::begin() { return iterator(series_); }

Iteration& WriteIterations::operator[](std::uint64_t index) {
  return series_->write_iteration(index);
}

std::optional<IndexedIteration> WriteIterations::currentIteration() {
  if (!series_->current_write || !series_->iterations->contains(*series_->current_write)) {
    return std::nullopt;
  }
  Iteration& iteration = series_->iterations->at(*series_->current_write);
  if (iteration.closed()) return std::nullopt;
  return IndexedIteration(iteration, *series_->current_write);
}

Snapshots::iterator::iterator(std::shared_ptr<internal::SeriesState> series, bool linear)
    : series_(std::move(series)), linear_(linear) {
  if (linear_) reading_.emplace(series_);
  load();
}

void Snapshots::iterator::load() {
  current_.reset();
  if (linear_) {
    if (*reading_ != ReadIterations::iterator()) {
      IndexedIteration& iteration = **reading_;
      current_.emplace(iteration.iterationIndex, iteration);
    }
    return;
  }
  auto found = series_->iterations->begin();
  while (found != series_->iterations->end() && found->first < next_key_) ++found;
  if (found != series_->iterations->end()) {
    current_.emplace(found->first, found->second);
    next_key_ = found->first + 1;
  }
}

Snapshots::iterator& Snapshots::iterator::operator++() {
  if (linear_) ++*reading_;
  load();
  return *this;
}

Snapshots::iterator Snapshots::begin() {
  const bool linear = series_->reading() &&
                      (series_->is_stream() || series_->target.access == Access::READ_LINEAR);
  return iterator(series_, linear);
}

Iteration& Snapshots::operator[](std::uint64_t index) {
  if (!series_->reading()) return series_->write_iteration(index);
  return series_->iterations->at(index);
}

Iteration& Snapshots::at(std::uint64_t index) { return series_->iterations->at(index); }
std::size_t Snapshots::size() const { return series_->iterations->size(); }
bool Snapshots::contains(std::uint64_t index) const { return series_->iterations->contains(index); }

std::vector<std::string> getFileExtensions() {
#if openPMD_HAVE_HDF5
  return {"h5", "slip", "ssc", "sst"};
#else
  return {"slip", "ssc", "sst"};
#endif
}
std::string getVersion() { return "0.16.1"; }
std::string getStandard() { return "1.1.0"; }
std::string getStandardDefault() { return "1.1.0"; }
std::string getStandardMinimum() { return "1.0.0"; }
std::map<std::string, bool> getVariants() {
  return {{"mpi", openPMD_HAVE_MPI != 0}, {"json", false}, {"toml", false},
          {"hdf5", openPMD_HAVE_HDF5 != 0}, {"adios1", false}, {"adios2", true},
          {"slipstream", true}};
}

}  // namespace openPMD
