// The state a Series and everything in it share: how it was opened, its backend, the root and
// iteration objects, and the flush that turns queued stores, loads and attributes into backend
// calls (series.cpp, flush.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "openPMD/Series.hpp"
#include "openpmd/backend/backend.hpp"
#include "openpmd/config.hpp"
#include "openpmd/node.hpp"

namespace openPMD::internal {

struct SeriesState : std::enable_shared_from_this<SeriesState> {
  BackendTarget target;
  std::string directory;
  std::string extension;  ///< ".sst", ".h5", ...
  SeriesConfig config;
  std::function<std::vector<std::string>(const std::string&)> allgather;
  std::string rank_info;  ///< setRankTable

  std::unique_ptr<Backend> backend;
  std::shared_ptr<Node> root;
  std::optional<Container<Iteration, std::uint64_t>> iterations;

  bool closed = false;
  /// The iteration writeIterations() handed out last (closed when another is asked for).
  std::optional<std::uint64_t> current_write;
  /// Writing a stream: the newest iteration sent (closed and forgotten); later ones must be newer.
  std::optional<std::uint64_t> last_sent;
  /// Linear reading: started, and at the end.
  bool linear_started = false;
  bool linear_ended = false;
  /// READ_ONLY files read through readIterations(): the next position in the sorted indices.
  std::size_t random_position = 0;

  /// Reading a stream: the tree of the last iteration read, kept so that the next step, when it
  /// has the same shape and nobody holds a part of this one, updates it in place instead of
  /// building a new tree (reuse_read_tree).
  struct ReadTree {
    std::shared_ptr<Node> iteration;
    std::vector<long> use_counts;  ///< of every node, depth first, when it was handed out
    std::vector<Node*> components;  ///< per component of the layout (nullptr: left out)
    /// Per attribute of the layout: where it lives, and its copy on a SCALAR component.
    std::vector<std::pair<Attribute*, Attribute*>> attributes;
    bool reusable = false;  ///< false when the layout had constant components
  };
  ReadTree read_tree;

  ~SeriesState();

  bool reading() const noexcept {
    return target.access == Access::READ_ONLY || target.access == Access::READ_LINEAR;
  }
  bool is_stream() const noexcept { return backend && backend->name() == "SLIPSTREAM"; }

  /// Flushes every open iteration (closing: and closes them).
  void flush_all(bool closing);
  /// Flushes one iteration: its loads (reading) or its dataset declarations, stores and
  /// attributes (writing); closing also ends it in the backend.
  void flush_iteration(Node& iteration, bool closing);
  /// Writes the root attributes set since the last flush.
  void flush_root();
  /// Gets the backend ready for a span store of `component` and returns the backend's buffer,
  /// or nullptr.
  void* loan(Node& component, const Offset& offset, const Extent& extent);

  /// The iteration writeIterations()[index] gives.
  Iteration& write_iteration(std::uint64_t index);
  /// The next iteration of linear reading, or nullopt at the end.
  std::optional<IndexedIteration> next_read_iteration();
  /// Adds iteration `layout` to the iterations, its tree built from what it holds.
  Iteration& adopt_iteration(IterationLayout layout);
  /// The last iteration read, updated in place to `layout`, or nullptr where it cannot be (see
  /// ReadTree).
  Iteration* reuse_read_tree(IterationLayout& layout);
  /// Sets the root attributes read from the backend.
  void adopt_root_attributes(const std::vector<AttributeEntry>& attributes);

  /// Closes the open iterations and the backend (once).
  void close();
};

/// Now, as openPMD's `date` attribute writes it ("2026-12-06 23:05:00 +0000").
std::string now_text();

}  // namespace openPMD::internal
