// Cluster commands: CLUSTER SLOTS / SHARDS / NODES / INFO / KEYSLOT / MYID / HELP, and the
// READONLY / READWRITE / ASKING no-ops cluster clients (redis-cli -c, hiredis-cluster) send. The
// map is static (from --cluster-nodes), so these only describe it; see server/cluster.hpp.
#include <fmt/format.h>

#include "common/slot.hpp"
#include "server/commands/command_util.hpp"
#include "server/net/reply.hpp"
#include "server/server.hpp"

namespace slipstream::server {
namespace {

constexpr std::string_view kClusterDisabled = "ERR This instance has cluster support disabled";

// Redis's cluster bus port convention: the client port + 10000.
int bus_port(const ClusterNode& node) { return node.port + 10000; }

void reply_slots(const Cluster& cluster, ReplyBuffer& reply) {
  reply.array(cluster.nodes().size());
  for (const ClusterNode& node : cluster.nodes()) {
    reply.array(3);
    reply.integer(node.first_slot);
    reply.integer(node.last_slot);
    reply.array(3);
    reply.bulk(node.host);
    reply.integer(node.port);
    reply.bulk(node.id);
  }
}

void reply_shards(const Cluster& cluster, ReplyBuffer& reply) {
  reply.array(cluster.nodes().size());
  for (const ClusterNode& node : cluster.nodes()) {
    reply.map(2);
    reply.bulk("slots");
    reply.array(2);
    reply.integer(node.first_slot);
    reply.integer(node.last_slot);
    reply.bulk("nodes");
    reply.array(1);
    reply.map(7);
    reply.bulk("id");
    reply.bulk(node.id);
    reply.bulk("port");
    reply.integer(node.port);
    reply.bulk("ip");
    reply.bulk(node.host);
    reply.bulk("endpoint");
    reply.bulk(node.host);
    reply.bulk("role");
    reply.bulk("master");
    reply.bulk("replication-offset");
    reply.integer(0);
    reply.bulk("health");
    reply.bulk("online");
  }
}

std::string nodes_text(const Cluster& cluster) {
  std::string text;
  for (std::size_t k = 0; k < cluster.nodes().size(); ++k) {
    const ClusterNode& node = cluster.nodes()[k];
    text += fmt::format("{} {}:{}@{} {} - 0 0 {} connected {}-{}\n", node.id, node.host,
                        node.port, bus_port(node),
                        k == cluster.self_index() ? "myself,master" : "master", k + 1,
                        node.first_slot, node.last_slot);
  }
  return text;
}

std::string info_text(const Cluster& cluster) {
  std::size_t n = cluster.nodes().size();
  return fmt::format(
      "cluster_enabled:1\r\ncluster_state:ok\r\ncluster_slots_assigned:{0}\r\n"
      "cluster_slots_ok:{0}\r\ncluster_slots_pfail:0\r\ncluster_slots_fail:0\r\n"
      "cluster_known_nodes:{1}\r\ncluster_size:{1}\r\ncluster_current_epoch:{1}\r\n"
      "cluster_my_epoch:{2}\r\ncluster_stats_messages_sent:0\r\n"
      "cluster_stats_messages_received:0\r\ntotal_cluster_links_buffer_limit_exceeded:0\r\n",
      kSlotCount, n, cluster.self_index() + 1);
}

// KEYSLOT and HELP need no cluster: the slot of a key is a pure function.
Outcome cluster_keyslot(CommandContext& c) {
  c.reply.integer(key_slot(c.arg(2)));
  return Outcome::kDone;
}

Outcome cluster_help(CommandContext& c) {
  const char* lines[] = {"CLUSTER <subcommand> [<arg> ...]. Subcommands are:",
                         "SLOTS", "SHARDS", "NODES", "INFO", "KEYSLOT <key>", "MYID", "HELP"};
  c.reply.array(std::size(lines));
  for (const char* line : lines) c.reply.simple(line);
  return Outcome::kDone;
}

// The other subcommands describe the cluster map: without one, they answer kClusterDisabled.
template <void (*kDescribe)(const Cluster&, ReplyBuffer&)>
Outcome with_cluster(CommandContext& c) {
  const Cluster* cluster = c.server.cluster();
  if (cluster == nullptr) {
    c.reply.error(kClusterDisabled);
  } else {
    kDescribe(*cluster, c.reply);
  }
  return Outcome::kDone;
}

void reply_nodes(const Cluster& cluster, ReplyBuffer& reply) {
  reply.verbatim(nodes_text(cluster));
}

void reply_info(const Cluster& cluster, ReplyBuffer& reply) { reply.verbatim(info_text(cluster)); }

void reply_myid(const Cluster& cluster, ReplyBuffer& reply) { reply.bulk(cluster.self().id); }

constexpr CommandSpec kClusterSubcommands[] = {
    {"SLOTS", 2, kStale, 0, 0, 0, with_cluster<reply_slots>, "cluster", "",
     "Each member's slot range: [start, end, [host, port, node-id]]."},
    {"SHARDS", 2, kStale, 0, 0, 0, with_cluster<reply_shards>, "cluster", "",
     "Each member as a shard: its slots and its one node (a master, online)."},
    {"NODES", 2, kStale, 0, 0, 0, with_cluster<reply_nodes>, "cluster", "",
     "The members in Redis's CLUSTER NODES line format."},
    {"INFO", 2, kStale, 0, 0, 0, with_cluster<reply_info>, "cluster", "",
     "cluster_state:ok, the slots assigned, the known nodes and the cluster size."},
    {"KEYSLOT", 3, kStale, 0, 0, 0, cluster_keyslot, "cluster", "key",
     "The hash slot of a key (works without a cluster; the key is not routed)."},
    {"MYID", 2, kStale, 0, 0, 0, with_cluster<reply_myid>, "cluster", "", "This member's node id."},
    {"HELP", 2, kStale, 0, 0, 0, cluster_help, "cluster", "", "Lists the subcommands."},
};

// READONLY / READWRITE (replica reads) and ASKING (slot migration) have nothing to change here:
// there are no replicas and slots never move.
Outcome accept(CommandContext& c) {
  c.reply.simple("OK");
  return Outcome::kDone;
}

}  // namespace

void add_cluster_commands(std::vector<CommandSpec>& out) {
  out.insert(out.end(), {
    {"CLUSTER", -2, kStale, 0, 0, 0, nullptr, "cluster", "subcommand [argument ...]",
     "Describes the cluster map (from --cluster-nodes); KEYSLOT works without a cluster.",
     nullptr, kClusterSubcommands},
    {"READONLY", 1, kFast | kStale, 0, 0, 0, accept, "cluster", "",
     "Accepted for cluster clients; +OK (there are no replicas)."},
    {"READWRITE", 1, kFast | kStale, 0, 0, 0, accept, "cluster", "",
     "Accepted for cluster clients; +OK."},
    {"ASKING", 1, kFast | kStale, 0, 0, 0, accept, "cluster", "",
     "Accepted for cluster clients; +OK (slots never migrate)."},
  });
}

}  // namespace slipstream::server
