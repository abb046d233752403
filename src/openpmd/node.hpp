// The state behind every handle of the data model (openPMD::Attributable and its subclasses):
// one Node per object of a series, with its attributes, its place in the tree, and for record
// components the dataset and the stores and loads queued until the next flush.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "openPMD/Attribute.hpp"
#include "openPMD/Dataset.hpp"
#include "openPMD/RecordComponent.hpp"
#include "openpmd/config.hpp"

namespace openPMD::internal {

struct SeriesState;

/// What an object is, which decides its path segment and its default attributes.
enum class Kind {
  kDetached,
  kSeries,
  kIterations,
  kIteration,
  kMeshes,
  kParticles,
  kMesh,
  kMeshComponent,
  kSpecies,
  kRecord,
  kRecordComponent,
  kPatches,
  kPatchRecord,
  kPatchComponent,
};

/// A store queued by storeChunk: the bytes at `data` (kept alive by it) go to the box at
/// `offset` with `extent`.
struct QueuedStore {
  Offset offset;
  Extent extent;
  std::shared_ptr<const void> data;
  bool loaned = false;  ///< a buffer the backend lent (filled in place, nothing to send)
};

/// A load queued by loadChunk.
struct QueuedLoad {
  Offset offset;
  Extent extent;
  std::shared_ptr<void> data;
};

/// A record component's data: its dataset, constant value, what is queued, and (reading) the
/// chunks the writers wrote.
struct ComponentState {
  Datatype dtype = Datatype::UNDEFINED;
  Extent extent;
  bool has_extent = false;
  bool constant = false;
  bool defined = false;  ///< the dataset was declared to the backend in this iteration
  std::vector<QueuedStore> stores;
  std::vector<QueuedLoad> loads;
  ChunkTable chunks;  ///< reading: what was written
  /// The Dataset's own adios2.dataset.operators (resetDataset's options), or none.
  std::optional<DatasetOperator> op;
};

struct Node {
  Kind kind = Kind::kDetached;
  std::string name;  ///< the key in its parent ("E", "x", "\vScalar", "100")
  std::weak_ptr<Node> parent;
  std::weak_ptr<SeriesState> series;
  using Attributes = std::map<std::string, Attribute, std::less<>>;  ///< found by string_view too
  Attributes attributes;
  /// The attributes set since the last flush, in the order first set (a list, not a set of
  /// names: the flush takes them without looking them up, and nothing is allocated per step once
  /// a node has been flushed).
  std::vector<Attributes::iterator> dirty;

  Node() = default;
  Node(const Node&) = delete;  // `dirty` points into `attributes`
  Node& operator=(const Node&) = delete;

  /// Sets `name` to `value` and marks it to be written at the next flush.
  void set_attribute(std::string_view name, Attribute value) {
    auto found = attributes.find(name);
    if (found == attributes.end()) {
      found = attributes.emplace(std::string(name), std::move(value)).first;
    } else {
      found->second = std::move(value);
    }
    mark_dirty(found);
  }
  void mark_dirty(Attributes::iterator at) {
    for (const Attributes::iterator& marked : dirty) {
      if (marked == at) return;
    }
    dirty.push_back(at);
  }
  /// Removes `name` (and its mark); false when there was none.
  bool erase_attribute(std::string_view name) {
    auto found = attributes.find(name);
    if (found == attributes.end()) return false;
    std::erase(dirty, found);
    attributes.erase(found);
    return true;
  }
  std::shared_ptr<void> children;  ///< the Container's typed map
  std::map<std::string, std::shared_ptr<Node>> child_nodes;  ///< the same children, untyped
  ComponentState component;
  bool closed = false;  ///< iterations: closed by Iteration::close
  bool written = false;  ///< something of it reached the backend
  std::uint64_t index = 0;  ///< iterations: their index
};

/// The series `node` belongs to; throws error::WrongAPIUsage when it has none (a default
/// Series, or a handle that outlived its series).
std::shared_ptr<SeriesState> series_of(const Node& node);
/// The iteration node above `node` (or itself), or nullptr.
std::shared_ptr<Node> iteration_of(const std::shared_ptr<Node>& node);
/// The path of `node` below its iteration ("meshes/E/x"; a SCALAR component: its record's
/// path; "" for the iteration itself), with the series' meshesPath and particlesPath.
std::string path_in_iteration(const std::shared_ptr<Node>& node);
/// The segment `node` adds to its parent's path in path_in_iteration ("" for none).
std::string path_segment(const Node& node);
/// "series 'name', iteration 100, component 'meshes/E/x'" for messages.
std::string describe(const std::shared_ptr<Node>& node);

/// Sets `node`'s kind (called by the constructors of the handles, most derived last).
void become(Node& node, Kind kind);

}  // namespace openPMD::internal
