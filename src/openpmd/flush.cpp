// The flush: the queued stores, loads and attributes of an iteration become backend calls, in
// one batch per iteration, with the standard's required attributes filled in where the writer
// left them out.
#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "openPMD/Error.hpp"
#include "openPMD/Iteration.hpp"
#include "openpmd/dataset_types.hpp"
#include "openpmd/series_state.hpp"

namespace openPMD::internal {
namespace {

bool is_component(Kind kind) {
  return kind == Kind::kRecordComponent || kind == Kind::kMeshComponent ||
         kind == Kind::kPatchComponent;
}

// Sets `name` to `make()` unless the writer set it: the value is made only then (this runs for
// every node of every iteration, and most defaults are set by the second flush of a node).
template <typename Make>
void set_default(Node& node, std::string_view name, Make make) {
  if (node.attributes.find(name) == node.attributes.end()) {
    node.mark_dirty(node.attributes.emplace(std::string(name), Attribute(make())).first);
  }
}

// The dimensionality of a mesh: that of its first component with a dataset.
std::size_t mesh_dimensions(const Node& mesh) {
  for (const auto& [name, child] : mesh.child_nodes) {
    if (child->component.has_extent) return child->component.extent.size();
  }
  return 0;
}

// The standard's required attributes that the writer did not set (openPMD 1.1.0).
void fill_defaults(Node& node) {
  switch (node.kind) {
    case Kind::kIteration:
      set_default(node, "time", [&] { return 0.0; });
      set_default(node, "dt", [&] { return 1.0; });
      set_default(node, "timeUnitSI", [&] { return 1.0; });
      break;
    case Kind::kMesh: {
      const std::size_t dims = mesh_dimensions(node);
      set_default(node, "geometry", [&] { return std::string("cartesian"); });
      set_default(node, "dataOrder", [&] { return std::string("C"); });
      if (dims > 0) {
        set_default(node, "axisLabels", [&] {
          static const char* const kNames[] = {"x", "y", "z"};
          std::vector<std::string> labels;
          for (std::size_t d = 0; d < dims; ++d) {
            labels.push_back(dims <= 3 ? kNames[d] : "d" + std::to_string(d));
          }
          return labels;
        });
        set_default(node, "gridSpacing", [&] { return std::vector<double>(dims, 1.0); });
        set_default(node, "gridGlobalOffset", [&] { return std::vector<double>(dims, 0.0); });
      }
      set_default(node, "gridUnitSI", [&] { return 1.0; });
      set_default(node, "unitDimension", [&] { return std::array<double, 7>{}; });
      set_default(node, "timeOffset", [&] { return 0.0f; });
      break;
    }
    case Kind::kRecord:
      set_default(node, "unitDimension", [&] { return std::array<double, 7>{}; });
      set_default(node, "timeOffset", [&] { return 0.0f; });
      break;
    case Kind::kPatchRecord:
      set_default(node, "unitDimension", [&] { return std::array<double, 7>{}; });
      break;
    case Kind::kMeshComponent:
      if (node.component.has_extent) {
        set_default(node, "position",
                    [&] { return std::vector<double>(node.component.extent.size(), 0.0); });
      }
      set_default(node, "unitSI", [&] { return 1.0; });
      break;
    case Kind::kRecordComponent:
    case Kind::kPatchComponent:
      set_default(node, "unitSI", [&] { return 1.0; });
      break;
    default:
      break;
  }
}

// Every node below `node` (whose path below its iteration is `path`), depth first, with its path
// as path_in_iteration gives it: built from the parent's, once per node.
void walk(const std::shared_ptr<Node>& node, const std::string& path,
          std::vector<std::shared_ptr<Node>>& nodes, std::vector<std::string>& paths) {
  nodes.push_back(node);
  paths.push_back(path);
  for (const auto& [name, child] : node->child_nodes) {
    std::string part = path_segment(*child);
    if (part.empty()) {
      walk(child, path, nodes, paths);
    } else {
      walk(child, path.empty() ? part : path + '/' + part, nodes, paths);
    }
  }
}

// A constant's value as `dtype` bytes, for a load of a constant component.
std::vector<std::byte> constant_bytes(const Attribute& value, Datatype dtype) {
  return with_dataset_type(dtype, "a constant", [&](auto* tag) {
    const auto typed = value.get<std::remove_pointer_t<decltype(tag)>>();
    std::vector<std::byte> bytes(sizeof(typed));
    std::memcpy(bytes.data(), &typed, sizeof(typed));
    return bytes;
  });
}

// Appends the attributes of `node` set since the last flush to `entries` (which refer to them
// and to `path`: both must outlive the write).
void take_dirty(Node& node, const std::string& path, std::vector<AttributeRef>& entries) {
  for (const Node::Attributes::iterator& at : node.dirty) {
    entries.push_back({path, at->first, &at->second});
  }
  node.dirty.clear();
}

}  // namespace

void SeriesState::flush_root() {
  static const std::string kRoot;
  std::vector<AttributeRef> entries;
  take_dirty(*root, kRoot, entries);
  if (!entries.empty()) backend->write_attribute_refs(std::nullopt, entries);
}

void SeriesState::flush_all(bool closing) {
  if (closed || !backend) return;
  std::vector<std::shared_ptr<Node>> open;
  for (const auto& [name, node] : iterations->node()->child_nodes) {
    if (!node->closed) open.push_back(node);
  }
  for (const std::shared_ptr<Node>& node : open) flush_iteration(*node, closing);
  if (!reading()) flush_root();
}

void SeriesState::flush_iteration(Node& iteration, bool closing) {
  if (iteration.closed) return;
  std::shared_ptr<Node> self;
  if (auto found = iterations->node()->child_nodes.find(iteration.name);
      found != iterations->node()->child_nodes.end() && found->second.get() == &iteration) {
    self = found->second;
  }
  if (!self) throw error::Internal("an iteration missing from its series");
  std::vector<std::shared_ptr<Node>> nodes;
  // The attributes refer to the paths: not grown once the walk is done.
  std::vector<std::string> paths;
  walk(self, std::string(), nodes, paths);
  const std::uint64_t index = iteration.index;

  if (reading()) {
    std::vector<ChunkLoad> loads;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      const std::shared_ptr<Node>& node = nodes[i];
      ComponentState& state = node->component;
      for (QueuedLoad& load : state.loads) {
        if (RecordComponent::elementCount(load.extent) == 0) continue;
        if (state.constant) {
          std::vector<std::byte> value = constant_bytes(node->attributes.at("value"), state.dtype);
          const std::uint64_t count = RecordComponent::elementCount(load.extent);
          auto* out = static_cast<std::byte*>(load.data.get());
          for (std::uint64_t i = 0; i < count; ++i) {
            std::memcpy(out + i * value.size(), value.data(), value.size());
          }
          continue;
        }
        loads.push_back({paths[i], state.dtype, load.offset, load.extent, load.data.get()});
      }
    }
    if (!loads.empty()) backend->read_chunks(index, loads);
    for (const std::shared_ptr<Node>& node : nodes) node->component.loads.clear();
    if (closing) {
      backend->release_iteration(index);
      iteration.closed = true;
    }
    return;
  }

  backend->open_iteration(index);
  iteration.written = true;
  // The root's paths for meshes and particles, once an iteration has some.
  for (const std::shared_ptr<Node>& node : nodes) {
    if (node->kind == Kind::kMeshes && !node->child_nodes.empty()) {
      set_default(*root, "meshesPath", [&] { return std::string("meshes/"); });
    }
    if (node->kind == Kind::kParticles && !node->child_nodes.empty()) {
      set_default(*root, "particlesPath", [&] { return std::string("particles/"); });
    }
  }
  flush_root();

  std::vector<ChunkStore> stores;
  std::vector<AttributeRef> attributes;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const std::shared_ptr<Node>& node = nodes[i];
    fill_defaults(*node);
    const std::string& path = paths[i];
    if (is_component(node->kind)) {
      ComponentState& state = node->component;
      if (state.constant) {
        std::vector<unsigned long> shape(state.extent.begin(), state.extent.end());
        auto found = node->attributes.find("shape");
        if (found == node->attributes.end() || found->second.get<std::vector<unsigned long>>() != shape) {
          node->set_attribute("shape", Attribute(std::move(shape)));
        }
      } else if (state.has_extent && !state.defined) {
        backend->define_dataset(index, path, state.dtype, state.extent);
        if (state.op) backend->set_operator(path, *state.op);
        state.defined = true;
      }
      for (const QueuedStore& store : state.stores) {
        if (store.loaned || RecordComponent::elementCount(store.extent) == 0) continue;
        stores.push_back({path, state.dtype, state.extent, store.offset, store.extent,
                          store.data.get()});
      }
    }
    take_dirty(*node, path, attributes);
    node->written = true;
  }
  if (!stores.empty()) backend->write_chunks(index, stores, closing);
  if (!attributes.empty()) backend->write_attribute_refs(index, attributes);
  if (closing) {
    backend->close_iteration(index);
    iteration.closed = true;
    // The buffers lent or kept for the step are given back now.
    for (const std::shared_ptr<Node>& node : nodes) node->component.stores.clear();
    // A stream's sent iterations leave the series: its memory stays that of the open ones,
    // however long the run (handles to them stay valid, and closed).
    if (is_stream()) {
      last_sent = std::max(last_sent.value_or(index), index);
      iterations->forget(index);
    }
  } else {
    for (const std::shared_ptr<Node>& node : nodes) {
      auto& queued = node->component.stores;
      queued.erase(std::remove_if(queued.begin(), queued.end(),
                                  [](const QueuedStore& store) { return !store.loaned; }),
                   queued.end());
    }
  }
}

void* SeriesState::loan(Node& component, const Offset& offset, const Extent& extent) {
  std::shared_ptr<Node> self;
  for (std::shared_ptr<Node> at = component.parent.lock(); at; at = at->parent.lock()) {
    if (at->kind == Kind::kIteration) {
      self = at;
      break;
    }
  }
  if (!self) return nullptr;
  // The component's own shared_ptr, found through its parent.
  std::shared_ptr<Node> node;
  if (std::shared_ptr<Node> parent = component.parent.lock()) {
    auto found = parent->child_nodes.find(component.name);
    if (found != parent->child_nodes.end()) node = found->second;
  }
  if (!node) return nullptr;
  backend->open_iteration(self->index);
  self->written = true;
  ComponentState& state = component.component;
  const std::string path = path_in_iteration(node);
  if (!state.defined) {
    backend->define_dataset(self->index, path, state.dtype, state.extent);
    if (state.op) backend->set_operator(path, *state.op);
    state.defined = true;
  }
  return backend->loan_chunk(self->index, {path, state.dtype, state.extent, offset, extent, nullptr});
}

}  // namespace openPMD::internal
