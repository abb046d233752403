// Cluster mode: the static member list every shard is started with, the contiguous slot range
// each member owns, and the check that sends a request for another shard's keys away (-MOVED) or
// refuses keys of several slots (-CROSSSLOT) before the command runs.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/buffer.hpp"

namespace slipstream::server {

struct CommandSpec;

/// One member of the cluster, as every member computes it from the same list.
struct ClusterNode {
  std::string host;
  int port = 0;
  std::string id;  ///< 40 lower-case hex digits, derived from "host:port" (same on every member)
  int first_slot = 0, last_slot = 0;  ///< inclusive slot range owned

  std::string endpoint() const { return host + ":" + std::to_string(port); }
};

/// Immutable after construction; thread-safe to read.
class Cluster {
 public:
  /// Builds the map from `members` ("host:port,host:port,..."). The local member is `index`
  /// when it is >= 0, else the one entry whose port is `port` and whose host is `bind`, else the
  /// only entry whose port is `port`. Member k owns
  /// slots [k*16384/n, (k+1)*16384/n - 1]. Throws std::invalid_argument with a message naming
  /// the problem (empty list, malformed entry, duplicate member, index out of range, no or
  /// several matching entries).
  Cluster(std::string_view members, int index, int port, std::string_view bind);

  const std::vector<ClusterNode>& nodes() const noexcept { return nodes_; }
  const ClusterNode& self() const noexcept { return nodes_[self_]; }
  std::size_t self_index() const noexcept { return self_; }
  /// The member owning `slot` (in [0, 16384)).
  const ClusterNode& owner(int slot) const;

  /// The error reply for a request that must not run here, or nothing when it may: the keys of
  /// `args` (positions from `spec`) all hash to one slot, and this member owns it. Returns
  /// "CROSSSLOT ..." for keys of several slots, "MOVED <slot> <host>:<port>" for another member's
  /// slot. Commands without keys always run.
  std::optional<std::string> check(const CommandSpec& spec, std::span<const Buffer> args) const;

 private:
  std::vector<ClusterNode> nodes_;
  std::size_t self_ = 0;
};

/// The positions (in `args`, command name at 0) of the keys a command names, from the spec's key
/// hook when it has one, else from first_key/last_key/key_step (negative last_key counts from the
/// end, as in Redis).
std::vector<std::size_t> command_key_positions(const CommandSpec& spec,
                                               std::span<const Buffer> args);

/// KeyFinder for AI.MODELEXECUTE / AI.MODELRUN / AI.SCRIPTEXECUTE / AI.SCRIPTRUN: their tensor
/// keys (common/command_keys.hpp), not the model or script key, which every shard holds.
std::vector<std::size_t> redisai_run_keys(std::span<const Buffer> args);

/// Deterministic 40-hex-digit node id for "host:port".
std::string cluster_node_id(std::string_view endpoint);

}  // namespace slipstream::server
