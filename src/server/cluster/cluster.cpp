// Cluster member list, slot ranges and the MOVED / CROSSSLOT check; see cluster.hpp.
#include "server/cluster/cluster.hpp"

#include <charconv>
#include <cstdint>
#include <stdexcept>

#include "common/command_keys.hpp"
#include "common/slot.hpp"
#include "server/commands/command_table.hpp"

namespace slipstream::server {
namespace {

// FNV-1a over the text, then splitmix64 finalisation: cheap, stable across builds and platforms.
std::uint64_t mix(std::string_view text, std::uint64_t seed) {
  std::uint64_t h = 0xcbf29ce484222325ULL ^ seed;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  h += 0x9e3779b97f4a7c15ULL;
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
  return h ^ (h >> 31);
}

ClusterNode parse_member(std::string_view entry) {
  auto colon = entry.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == entry.size()) {
    throw std::invalid_argument("cluster member '" + std::string(entry) +
                                "' is not of the form host:port");
  }
  ClusterNode node;
  node.host = std::string(entry.substr(0, colon));
  if (node.host.size() > 2 && node.host.front() == '[' && node.host.back() == ']') {
    node.host = node.host.substr(1, node.host.size() - 2);  // [::1]:7000
  }
  std::string_view port = entry.substr(colon + 1);
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), node.port);
  if (ec != std::errc() || end != port.data() + port.size() || node.port <= 0 ||
      node.port > 65535) {
    throw std::invalid_argument("cluster member '" + std::string(entry) +
                                "' has an invalid port (expected 1-65535)");
  }
  return node;
}

}  // namespace

std::string cluster_node_id(std::string_view endpoint) {
  static const char* kHex = "0123456789abcdef";
  std::string id;
  id.reserve(48);
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    std::uint64_t h = mix(endpoint, seed);
    for (int i = 0; i < 16; ++i) id.push_back(kHex[(h >> (60 - 4 * i)) & 0xf]);
  }
  id.resize(40);
  return id;
}

Cluster::Cluster(std::string_view members, int index, int port, std::string_view bind) {
  while (!members.empty()) {
    auto comma = members.find(',');
    std::string_view entry = members.substr(0, comma);
    while (!entry.empty() && entry.front() == ' ') entry.remove_prefix(1);
    while (!entry.empty() && entry.back() == ' ') entry.remove_suffix(1);
    if (!entry.empty()) nodes_.push_back(parse_member(entry));
    if (comma == std::string_view::npos) break;
    members.remove_prefix(comma + 1);
  }
  if (nodes_.empty()) throw std::invalid_argument("--cluster-nodes lists no members");
  if (nodes_.size() > static_cast<std::size_t>(kSlotCount)) {
    throw std::invalid_argument("--cluster-nodes lists more members than there are slots");
  }
  const auto n = static_cast<int>(nodes_.size());
  for (int k = 0; k < n; ++k) {
    ClusterNode& node = nodes_[static_cast<std::size_t>(k)];
    node.id = cluster_node_id(node.endpoint());
    node.first_slot = k * kSlotCount / n;
    node.last_slot = (k + 1) * kSlotCount / n - 1;
    for (int j = 0; j < k; ++j) {
      if (nodes_[static_cast<std::size_t>(j)].endpoint() == node.endpoint()) {
        throw std::invalid_argument("cluster member " + node.endpoint() + " is listed twice");
      }
    }
  }
  if (index >= 0) {
    if (index >= n) {
      throw std::invalid_argument("--cluster-node-index " + std::to_string(index) +
                                  " is out of range: --cluster-nodes lists " + std::to_string(n) +
                                  " members (indices 0-" + std::to_string(n - 1) + ")");
    }
    self_ = static_cast<std::size_t>(index);
    return;
  }
  // No index: the entry with our port and bind address, else the only entry with our port (the
  // list may name this host differently from --bind, e.g. a host name with --bind 0.0.0.0).
  std::vector<std::size_t> same_port, same_endpoint;
  for (std::size_t k = 0; k < nodes_.size(); ++k) {
    if (nodes_[k].port != port) continue;
    same_port.push_back(k);
    if (nodes_[k].host == bind) same_endpoint.push_back(k);
  }
  if (same_endpoint.size() == 1) {
    self_ = same_endpoint.front();
  } else if (same_port.size() == 1) {
    self_ = same_port.front();
  } else {
    throw std::invalid_argument(
        "cannot tell which --cluster-nodes entry is this server (--port " + std::to_string(port) +
        ", --bind " + std::string(bind) +
        "): " + (same_port.empty() ? "no entry has this port" : "several entries have this port") +
        "; pass --cluster-node-index");
  }
}

const ClusterNode& Cluster::owner(int slot) const {
  // Ranges are contiguous and in list order: invert k*16384/n <= slot.
  const auto n = static_cast<int>(nodes_.size());
  int k = static_cast<int>((static_cast<std::int64_t>(slot) * n + n - 1) / kSlotCount);
  while (k > 0 && nodes_[static_cast<std::size_t>(k)].first_slot > slot) --k;
  while (k + 1 < n && nodes_[static_cast<std::size_t>(k)].last_slot < slot) ++k;
  return nodes_[static_cast<std::size_t>(k)];
}

std::vector<std::size_t> command_key_positions(const CommandSpec& spec,
                                               std::span<const Buffer> args) {
  if (spec.keys != nullptr) return spec.keys(args);
  std::vector<std::size_t> positions;
  if (spec.first_key <= 0 || spec.key_step <= 0) return positions;
  const auto argc = static_cast<std::int64_t>(args.size());
  std::int64_t last = spec.last_key < 0 ? argc + spec.last_key : spec.last_key;
  last = std::min(last, argc - 1);
  for (std::int64_t i = spec.first_key; i <= last; i += spec.key_step) {
    positions.push_back(static_cast<std::size_t>(i));
  }
  return positions;
}

std::vector<std::size_t> redisai_run_keys(std::span<const Buffer> args) {
  std::vector<std::string_view> views;
  views.reserve(args.size());
  for (const Buffer& arg : args) views.push_back(arg.view());
  return redisai_run_key_positions(views);
}

namespace {

// A client's key in an error message, cut short so that errors stay small (the reply itself
// replaces CR and LF).
std::string shown_key(std::string_view key) {
  constexpr std::size_t kShown = 64;
  return key.size() <= kShown ? std::string(key) : std::string(key.substr(0, kShown)) + "...";
}

// Redis's text first (clients match on it), then the two keys that differ and the remedy.
std::string cross_slot_error(std::string_view first, int first_slot, std::string_view other,
                             int other_slot) {
  return "CROSSSLOT Keys in request don't hash to the same slot: '" + shown_key(first) +
         "' is in slot " + std::to_string(first_slot) + ", '" + shown_key(other) + "' in slot " +
         std::to_string(other_slot) +
         "; keys used together must share a {hash tag}, e.g. '{run1}.in' and '{run1}.out'";
}

}  // namespace

std::optional<std::string> Cluster::check(const CommandSpec& spec,
                                          std::span<const Buffer> args) const {
  std::vector<std::size_t> positions = command_key_positions(spec, args);
  if (positions.empty()) return std::nullopt;
  int slot = -1;
  std::size_t slot_key = 0;  // the argument that set `slot`
  for (std::size_t position : positions) {
    if (position >= args.size()) continue;
    int s = key_slot(args[position].view());
    if (slot >= 0 && s != slot) {
      return cross_slot_error(args[slot_key].view(), slot, args[position].view(), s);
    }
    if (slot < 0) slot_key = position;
    slot = s;
  }
  if (slot < 0) return std::nullopt;
  const ClusterNode& node = owner(slot);
  if (&node == &self()) return std::nullopt;
  return "MOVED " + std::to_string(slot) + " " + node.endpoint();
}

}  // namespace slipstream::server
