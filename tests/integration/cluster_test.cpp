// Cluster mode against a real 3-shard cluster on loopback: the CLUSTER commands' shapes, MOVED and
// CROSSSLOT on raw connections, the native client's routing (tensors, batches, datasets, lists,
// models on every shard, runs with co-located tensors), and one shard killed and restarted.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <memory>
#include <set>
#include <thread>
#include <string>
#include <vector>

#include "slipstream/client.hpp"
#include "slipstream/stream.hpp"
#include "support/raw_client.hpp"
#include "support/server_process.hpp"

namespace slipstream::testing {
namespace {

using namespace std::chrono_literals;

constexpr int kShards = 3;

std::string read_model(const std::string& name) {
  std::ifstream in(std::string(SLIPSTREAM_MODELS_DIR) + "/" + name, std::ios::binary);
  if (!in) throw std::runtime_error("missing test model " + name);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string make_dir() {
  char tmpl[] = "/tmp/slipstream-cluster-XXXXXX";
  const char* made = ::mkdtemp(tmpl);
  if (made == nullptr) throw std::runtime_error("mkdtemp failed");
  return made;
}

/// Three shards started with the same member list; each keeps its snapshots in its own
/// directory, so a shard can be restarted over its data.
class Cluster {
 public:
  Cluster() : ports_(free_loopback_ports(kShards)) {
    for (int k = 0; k < kShards; ++k) {
      if (!members_.empty()) members_ += ",";
      members_ += "127.0.0.1:" + std::to_string(ports_[k]);
      dirs_.push_back(make_dir());
    }
    for (int k = 0; k < kShards; ++k) start(k);
  }
  ~Cluster() {
    shards_.clear();
    for (const auto& dir : dirs_) {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  }

  void start(int k) {
    shards_.resize(kShards);
    shards_[k] = std::make_unique<ServerProcess>(
        std::vector<std::string>{"--cluster-nodes", members_, "--threads", "1"}, dirs_[k],
        ports_[k]);
  }
  void kill(int k) { shards_[k]->stop(SIGKILL); }

  int port(int k) const { return ports_[k]; }
  std::string address(int k) const { return "tcp://127.0.0.1:" + std::to_string(ports_[k]); }
  std::string unix_address(int k) const { return shards_[k]->unix_address(); }
  RawClient raw(int k) const { return RawClient::tcp(ports_[k]); }
  /// The shard owning `key`, asked of the cluster itself.
  int owner(const std::string& key) {
    long long slot = raw(0).call({"CLUSTER", "KEYSLOT", key}).integer;
    return static_cast<int>(slot * kShards / 16384);  // contiguous ranges of n = 3
  }

 private:
  std::vector<int> ports_;
  std::string members_;
  std::vector<std::string> dirs_;
  std::vector<std::unique_ptr<ServerProcess>> shards_;
};

class ClusterTest : public ::testing::Test {
 protected:
  Cluster cluster_;
};

std::vector<float> ramp(int n, float start) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = start + static_cast<float>(i);
  return v;
}

// ---- Server side
// ---------------------------------------------------------------------------------

TEST_F(ClusterTest, SlotsNodesInfoAndMyIdDescribeOneMap) {
  RespReply first = cluster_.raw(0).call({"CLUSTER", "SLOTS"});
  ASSERT_EQ(first.kind, RespReply::Kind::kArray);
  ASSERT_EQ(first.elements.size(), 3u);
  const long long starts[] = {0, 5461, 10922}, ends[] = {5460, 10921, 16383};
  for (int k = 0; k < kShards; ++k) {
    const RespReply& range = first.elements[k];
    ASSERT_EQ(range.elements.size(), 3u);
    EXPECT_EQ(range.elements[0].integer, starts[k]);
    EXPECT_EQ(range.elements[1].integer, ends[k]);
    const RespReply& node = range.elements[2];
    ASSERT_EQ(node.elements.size(), 3u);
    EXPECT_EQ(node.elements[0].str(), "$127.0.0.1");
    EXPECT_EQ(node.elements[1].integer, cluster_.port(k));
    ASSERT_EQ(node.elements[2].kind, RespReply::Kind::kBulk);
    EXPECT_EQ(node.elements[2].text.size(), 40u);
    EXPECT_EQ(node.elements[2].text.find_first_not_of("0123456789abcdef"), std::string::npos);
  }
  for (int k = 0; k < kShards; ++k) {
    RawClient c = cluster_.raw(k);
    // Every member reports the same map, and its own id in it.
    EXPECT_EQ(c.call({"CLUSTER", "SLOTS"}).str(), first.str());
    std::string id = first.elements[k].elements[2].elements[2].text;
    EXPECT_EQ(c.call({"CLUSTER", "MYID"}).str(), "$" + id);

    std::string nodes = c.call({"CLUSTER", "NODES"}).text;
    std::string port = std::to_string(cluster_.port(k));
    std::string own_line = id + " 127.0.0.1:" + port + "@" +
                           std::to_string(cluster_.port(k) + 10000) + " myself,master - 0 0 " +
                           std::to_string(k + 1) + " connected " + std::to_string(starts[k]) + "-" +
                           std::to_string(ends[k]) + "\n";
    EXPECT_NE(nodes.find(own_line), std::string::npos) << nodes;
    EXPECT_EQ(std::count(nodes.begin(), nodes.end(), '\n'), 3);
    EXPECT_EQ(std::count(nodes.begin(), nodes.end(), ','), 1) << "one myself,master line";

    std::string info = c.call({"CLUSTER", "INFO"}).text;
    for (const char* field : {"cluster_state:ok", "cluster_slots_assigned:16384",
                              "cluster_known_nodes:3", "cluster_size:3"}) {
      EXPECT_NE(info.find(field), std::string::npos) << field;
    }
    EXPECT_NE(c.call({"INFO", "cluster"}).text.find("cluster_enabled:1"), std::string::npos);
    EXPECT_EQ(c.call({"CLUSTER", "KEYSLOT", "foo"}).integer, 12182);
    EXPECT_EQ(c.call({"CLUSTER", "KEYSLOT", "{user1000}.following"}).integer,
              c.call({"CLUSTER", "KEYSLOT", "{user1000}.followers"}).integer);
    EXPECT_TRUE(c.call({"READONLY"}).is_ok());
    EXPECT_TRUE(c.call({"READWRITE"}).is_ok());
    EXPECT_TRUE(c.call({"ASKING"}).is_ok());
  }
}

TEST_F(ClusterTest, WrongShardGetsMovedAndSeveralSlotsGetCrossSlot) {
  // "foo" is slot 12182: shard 2.
  std::string moved = "-MOVED 12182 127.0.0.1:" + std::to_string(cluster_.port(2));
  EXPECT_EQ(cluster_.raw(0).call({"SET", "foo", "1"}).str(), moved);
  EXPECT_EQ(cluster_.raw(1).call({"GET", "foo"}).str(), moved);
  RawClient owner = cluster_.raw(2);
  EXPECT_TRUE(owner.call({"SET", "foo", "1"}).is_ok());
  EXPECT_EQ(owner.call({"GET", "foo"}).str(), "$1");

  const std::string crossslot = "-CROSSSLOT Keys in request don't hash to the same slot";
  // Redis's text, then which keys differ and the remedy.
  EXPECT_EQ(owner.call({"MSET", "foo", "1", "bar", "2"}).str(),
            crossslot +
                ": 'foo' is in slot 12182, 'bar' in slot 5061; keys used together must "
                "share a {hash tag}, e.g. '{run1}.in' and '{run1}.out'");
  auto cross_slot = [&](const RespReply& reply) { return reply.str().starts_with(crossslot); };
  EXPECT_TRUE(cross_slot(owner.call({"DEL", "foo", "bar"})));
  int tagged = cluster_.owner("{t}");
  RawClient t = cluster_.raw(tagged);
  EXPECT_TRUE(t.call({"MSET", "{t}.a", "1", "{t}.b", "2"}).is_ok());
  EXPECT_EQ(t.call({"EXISTS", "{t}.a", "{t}.b"}).integer, 2);
  // SS.WAIT's keys end before TIMEOUT.
  EXPECT_FALSE(t.call({"SS.WAIT", "{t}.a", "{t}.b", "TIMEOUT", "10"}).is_error());
  // Keyless commands are per node.
  long long total = 0;
  for (int k = 0; k < kShards; ++k) total += cluster_.raw(k).call({"DBSIZE"}).integer;
  EXPECT_EQ(total, 3);
  EXPECT_EQ(owner.call({"KEYS", "foo"}).str(), "[$foo]");

  // Model keys are never redirected (each shard stores its own copy); a run is routed by its
  // tensor keys only.
  std::string blob = read_model("scale.pt");
  for (int k = 0; k < kShards; ++k) {
    EXPECT_TRUE(
        cluster_.raw(k).call({"AI.MODELSTORE", "scale", "TORCH", "CPU", "BLOB", blob}).is_ok());
  }
  EXPECT_TRUE(cross_slot(
      t.call({"AI.MODELEXECUTE", "scale", "INPUTS", "1", "{t}.in", "OUTPUTS", "1", "{u}.out"})));
  EXPECT_TRUE(cross_slot(
      t.call({"AI.SCRIPTEXECUTE", "s", "f", "KEYS", "1", "{t}.k", "INPUTS", "1", "{u}.in"})));
  int other = (cluster_.owner("{t}") + 1) % kShards;
  EXPECT_TRUE(
      cluster_.raw(other)
          .call({"AI.MODELEXECUTE", "scale", "INPUTS", "1", "{t}.in", "OUTPUTS", "1", "{t}.out"})
          .str()
          .starts_with(
              "-MOVED " +
              std::to_string(cluster_.raw(0).call({"CLUSTER", "KEYSLOT", "{t}"}).integer)));
  EXPECT_TRUE(cluster_.raw(other).call({"AI.MODELGET", "scale", "META"}).kind ==
              RespReply::Kind::kArray);
}

TEST(ClusterStartup, BadMemberListsAreRefused) {
  int port = free_loopback_port();
  EXPECT_THROW(ServerProcess({"--cluster-nodes", "127.0.0.1:1,127.0.0.1:2"}), std::runtime_error)
      << "no entry has this server's port";
  EXPECT_THROW(ServerProcess({"--cluster-nodes", "127.0.0.1:" + std::to_string(port),
                              "--cluster-node-index", "1"},
                             {}, port),
               std::runtime_error);
  EXPECT_THROW(ServerProcess({"--cluster-nodes", "nonsense"}), std::runtime_error);
  ServerProcess explicit_index(
      {"--cluster-nodes", "10.0.0.1:7000,10.0.0.2:7000", "--cluster-node-index", "1"});
  EXPECT_EQ(RawClient::tcp(explicit_index.port()).call({"CLUSTER", "MYID"}).text.size(), 40u);
  // Member 1 of 2 owns slots 8192-16383: "foo" (12182) is its own, "bar" (5061) is not.
  EXPECT_TRUE(RawClient::tcp(explicit_index.port()).call({"SET", "foo", "1"}).is_ok());
  EXPECT_EQ(RawClient::tcp(explicit_index.port()).call({"SET", "bar", "1"}).str(),
            "-MOVED 5061 10.0.0.1:7000");
}

TEST(ClusterStartup, StandaloneServerHasNoCluster) {
  ServerProcess server;
  RawClient c = RawClient::tcp(server.port());
  EXPECT_EQ(c.call({"CLUSTER", "SLOTS"}).str(), "-ERR This instance has cluster support disabled");
  EXPECT_EQ(c.call({"CLUSTER", "KEYSLOT", "foo"}).integer, 12182);
  EXPECT_NE(c.call({"INFO"}).text.find("cluster_enabled:0"), std::string::npos);
  EXPECT_TRUE(c.call({"SET", "foo", "1"}).is_ok());
}

// ---- The native client
// ---------------------------------------------------------------------------

TEST_F(ClusterTest, ClientRoutesTensorsToTheirShards) {
  Client client(cluster_.address(1));
  std::vector<std::int64_t> shape{4};
  for (int i = 0; i < 60; ++i) {
    auto values = ramp(4, static_cast<float>(i));
    client.put_tensor<float>("t" + std::to_string(i), values, shape);
  }
  long long total = 0;
  for (int k = 0; k < kShards; ++k) {
    long long keys = cluster_.raw(k).call({"DBSIZE"}).integer;
    EXPECT_GT(keys, 5) << "shard " << k << " holds a share";
    total += keys;
  }
  EXPECT_EQ(total, 60);
  for (int i = 0; i < 60; ++i) {
    Tensor t = client.get_tensor("t" + std::to_string(i));
    EXPECT_EQ(t.data<float>()[3], static_cast<float>(i) + 3);
    std::vector<float> out(4);
    client.unpack_tensor<float>("t" + std::to_string(i), out);
    EXPECT_EQ(out[0], static_cast<float>(i));
  }
  EXPECT_TRUE(client.tensor_exists("t7"));
  EXPECT_TRUE(client.poll_tensor("t8", 10, 3));
  EXPECT_TRUE(client.wait_for_keys(std::vector<std::string>{"t1", "t2", "t3"}, 100ms));
  EXPECT_FALSE(client.wait_for_keys(std::vector<std::string>{"t1", "missing"}, 20ms));

  // Copy and rename across slots go through the client; within a slot, through the server.
  client.copy_tensor("t1", "copy-of-t1");
  EXPECT_EQ(client.get_tensor("copy-of-t1").data<float>()[0], 1.0f);
  client.rename_tensor("t2", "renamed-t2");
  EXPECT_FALSE(client.tensor_exists("t2"));
  EXPECT_EQ(client.get_tensor("renamed-t2").data<float>()[0], 2.0f);
  auto x = ramp(4, 7);
  client.put_tensor<float>("{x}.a", x, shape);
  client.rename_tensor("{x}.a", "{x}.b");
  EXPECT_EQ(client.get_tensor("{x}.b").data<float>()[0], 7.0f);
}

TEST_F(ClusterTest, ClientSplitsBatchesAcrossShardsAndKeepsTheOrder) {
  Client client(cluster_.address(0));
  std::vector<std::string> names;
  std::vector<std::vector<float>> data;
  std::vector<std::int64_t> shape{3};
  for (int i = 0; i < 24; ++i) {
    names.push_back("batch" + std::to_string(i));
    data.push_back(ramp(3, static_cast<float>(10 * i)));
  }
  std::vector<TensorRef> refs;
  for (int i = 0; i < 24; ++i) {
    refs.push_back(TensorRef::of<float>(names[i], data[i], shape));
  }
  client.put_tensors(refs);
  std::set<int> shards;
  for (const auto& name : names) shards.insert(cluster_.owner(name));
  EXPECT_EQ(shards.size(), 3u) << "the batch spans every shard";
  std::vector<Tensor> back = client.get_tensors(names);
  ASSERT_EQ(back.size(), names.size());
  for (int i = 0; i < 24; ++i) EXPECT_EQ(back[i].data<float>()[1], 10.0f * i + 1) << names[i];

  // A missing key fails the batch with its own error after every reply was read.
  std::vector<std::string> with_missing = {names[0], "nope", names[5]};
  EXPECT_THROW(client.get_tensors(with_missing), KeyNotFoundError);
  EXPECT_EQ(client.get_tensor(names[5]).data<float>()[0], 50.0f) << "streams stayed in step";

  // Raw commands: routed by their first argument, redirects followed.
  std::vector<Reply> replies =
      client.commands({{"SET", "foo", "1"}, {"SET", "bar", "2"}, {"GET", "foo"}, {"GET", "bar"}});
  ASSERT_EQ(replies.size(), 4u);
  EXPECT_EQ(replies[2].string, "1");
  EXPECT_EQ(replies[3].string, "2");
  EXPECT_EQ(client.command({"GET", "foo"}).string, "1");
}

TEST_F(ClusterTest, ClientDatasetsAndListsSpanShards) {
  Client client(cluster_.address(2));
  std::vector<std::int64_t> shape{2};
  for (int i = 0; i < 9; ++i) {
    DataSet ds("ds" + std::to_string(i));
    auto values = ramp(2, static_cast<float>(i));
    ds.add_tensor<float>("x", values, shape);
    ds.add_meta_scalar("step", static_cast<std::int64_t>(i));
    client.put_dataset(ds);
    client.append_to_list("all", ds);
  }
  std::set<int> shards;
  for (int i = 0; i < 9; ++i) shards.insert(cluster_.owner("{ds" + std::to_string(i) + "}"));
  EXPECT_GE(shards.size(), 2u);
  DataSet four = client.get_dataset("ds4");
  EXPECT_EQ(four.get_tensor("x").data<float>()[1], 5.0f);
  EXPECT_TRUE(client.dataset_exists("ds4"));
  EXPECT_EQ(client.get_list_length("all"), 9);
  std::vector<DataSet> all = client.get_datasets_from_list("all");
  ASSERT_EQ(all.size(), 9u);
  for (int i = 0; i < 9; ++i) {
    EXPECT_EQ(all[i].name(), "ds" + std::to_string(i));
    EXPECT_EQ(all[i].get_tensor("x").data<float>()[0], static_cast<float>(i));
  }
  client.copy_dataset("ds1", "ds1-copy");  // another hash tag: likely another shard
  EXPECT_EQ(client.get_dataset("ds1-copy").get_tensor("x").data<float>()[1], 2.0f);
  client.copy_list("all", "all-copy");
  EXPECT_EQ(client.get_list_length("all-copy"), 9);
  client.delete_dataset("ds4");
  EXPECT_FALSE(client.dataset_exists("ds4"));
}

TEST_F(ClusterTest, ModelsAreStoredOnEveryShardAndRunWhereTheirTensorsLive) {
  Client client(cluster_.address(0));
  std::string blob = read_model("scale.pt");
  EXPECT_EQ(client.command({"AI.MODELSTORE", "scale", "TORCH", "CPU", "BLOB", blob}).string, "OK");
  for (int k = 0; k < kShards; ++k) {
    EXPECT_EQ(cluster_.raw(k).call({"AI.MODELGET", "scale", "META"}).kind, RespReply::Kind::kArray)
        << "shard " << k << " holds the model";
  }
  std::set<int> used;
  std::vector<std::int64_t> shape{2, 3};
  for (int run = 0; run < 8; ++run) {
    std::string tag = "{run" + std::to_string(run) + "}";
    used.insert(cluster_.owner(tag));
    auto input = ramp(6, static_cast<float>(run));
    client.put_tensor<float>(tag + ".in", input, shape);
    EXPECT_EQ(client
                  .command({"AI.MODELEXECUTE", "scale", "INPUTS", "1", tag + ".in", "OUTPUTS", "1",
                            tag + ".out"})
                  .string,
              "OK");
    Tensor out = client.get_tensor(tag + ".out");
    for (int i = 0; i < 6; ++i) EXPECT_EQ(out.data<float>()[i], 2.0f * input[i] + 1.0f);
  }
  EXPECT_EQ(used.size(), 3u) << "the runs used every shard";
  // Each shard counts the runs it served; the client reports the sum.
  ModelInfo info = client.model_info("scale");
  EXPECT_EQ(info.calls, 8);
  EXPECT_EQ(info.samples, 16);
  EXPECT_EQ(info.errors, 0);
  EXPECT_EQ(info.version, 1);
  // Inputs and outputs in different slots: refused before anything is sent.
  try {
    client.command({"AI.MODELEXECUTE", "scale", "INPUTS", "1", "{run0}.in", "OUTPUTS", "1",
                    "{elsewhere}.out"});
    FAIL() << "expected InvalidArgumentError";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("different hash slots"), std::string::npos) << e.what();
  }
  client.command({"AI.MODELDEL", "scale"});
  for (int k = 0; k < kShards; ++k) {
    EXPECT_TRUE(cluster_.raw(k).call({"AI.MODELGET", "scale", "META"}).is_error());
  }
}

TEST_F(ClusterTest, ClusterModeIsDetectedAndCanBeRefused) {
  ServerProcess standalone;
  ClientOptions options;
  options.address = standalone.tcp_address();
  options.cluster = ClusterMode::kClustered;
  EXPECT_THROW(Client{options}, InvalidArgumentError);
  // Told it is standalone, the client sends everything to the address given (and gets MOVED).
  options.address = cluster_.address(0);
  options.cluster = ClusterMode::kStandalone;
  Client plain(options);
  try {
    plain.put_bytes("foo", "1");
    FAIL() << "expected ServerError";
  } catch (const ServerError& e) {
    // Not a bare MOVED: what happened and what to change.
    const std::string text = e.what();
    EXPECT_EQ(e.server_text().substr(0, 12), "MOVED 12182 ");
    EXPECT_NE(text.find("member of a cluster"), std::string::npos) << text;
    EXPECT_NE(text.find("SR_DB_TYPE=Standalone"), std::string::npos) << text;
    EXPECT_NE(text.find("SR_DB_TYPE unset"), std::string::npos) << text;
  }
}

TEST_F(ClusterTest, ClientOverAUnixSocketFindsItsShardAndReachesTheOthersOverTcp) {
  Client client(cluster_.unix_address(1));
  for (int i = 0; i < 12; ++i) client.put_bytes("u" + std::to_string(i), std::to_string(i));
  for (int i = 0; i < 12; ++i)
    EXPECT_EQ(client.get_bytes("u" + std::to_string(i)), std::to_string(i));
  long long total = 0;
  for (int k = 0; k < kShards; ++k) total += cluster_.raw(k).call({"DBSIZE"}).integer;
  EXPECT_EQ(total, 12);
}

// ---- Faults
// ---------------------------------------------------------------------------------------

TEST_F(ClusterTest, KilledShardFailsOnlyItsKeysAndIsServedAgainAfterRestart) {
  ClientOptions options;
  options.address = cluster_.address(0);
  Client client(options);
  std::vector<std::int64_t> shape{2};
  std::vector<std::string> on[kShards];
  for (int i = 0; on[0].size() < 3 || on[1].size() < 3 || on[2].size() < 3; ++i) {
    std::string name = "k" + std::to_string(i);
    auto values = ramp(2, static_cast<float>(i));
    client.put_tensor<float>(name, values, shape);
    on[cluster_.owner(name)].push_back(name);
  }
  ASSERT_TRUE(cluster_.raw(1).call({"SAVE"}).is_ok());
  cluster_.kill(1);

  auto start = std::chrono::steady_clock::now();
  try {
    client.get_tensor(on[1][0]);
    FAIL() << "expected ConnectionError";
  } catch (const ConnectionError& e) {
    std::string text = e.what();
    EXPECT_NE(text.find("shard 127.0.0.1:" + std::to_string(cluster_.port(1)) +
                        " (slots 5461-10921) is unreachable"),
              std::string::npos)
        << text;
  }
  auto took = std::chrono::steady_clock::now() - start;
  // The reconnects are bounded by reconnect_timeout (1 s; ~150 ms here); a hang would last until
  // command_timeout (60 s). The bound sits between, with room for a loaded machine.
  EXPECT_LT(took, 10s) << "bounded retries, no long hang";
  // The other shards keep serving, through the same client.
  EXPECT_EQ(client.get_tensor(on[0][0]).shape()[0], 2);
  EXPECT_EQ(client.get_tensor(on[2][0]).shape()[0], 2);
  auto values = ramp(2, 0);
  client.put_tensor<float>(on[2][1], values, shape);
  // A batch touching the dead shard fails with its error; the live shards' parts are done.
  std::vector<std::string> mixed = {on[0][1], on[1][1], on[2][2]};
  EXPECT_THROW(client.get_tensors(mixed), ConnectionError);

  cluster_.start(1);  // same port, same directory: loads the snapshot
  Tensor back = client.get_tensor(on[1][0]);
  EXPECT_EQ(back.shape()[0], 2);
  EXPECT_EQ(client.get_tensors(mixed).size(), 3u);
}

// A figure from INFO `section` ("name:value"); -1 when it is missing.
long long info_figure(RawClient& c, const std::string& name,
                      const std::string& section = "streams") {
  const std::string text = c.call({"INFO", section}).text;
  const std::size_t at = text.find("\n" + name + ":");
  if (at == std::string::npos) return -1;
  return std::stoll(text.substr(at + name.size() + 2));
}

// True once INFO's `name` is `value` (frees travel from shard to shard: not at once).
bool eventually_info(RawClient c, const std::string& name, long long value,
                     const std::string& section = "streams", bool at_least = false) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  for (;;) {
    const long long figure = info_figure(c, name, section);
    if (at_least ? figure >= value : figure == value) break;
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

// A stream name that lives on shard `k`.
std::string name_on(Cluster& cluster, int k, const std::string& stem) {
  for (int i = 0;; ++i) {
    std::string name = stem + std::to_string(i);
    if (cluster.owner(name) == k) return name;
  }
}

// Streams in a 3-shard cluster: three streams whose names fall on the three shards, each written
// by 2 writers and read by a group of 2 (slicedataset), writers and readers connected to some
// shard, not necessarily the stream's: every request follows the stream's slot, and every element
// of every step arrives once. Each stream's table and chunks live on the stream's shard.
TEST_F(ClusterTest, StreamsOnEveryShardDeliverEveryElement) {
  std::vector<std::string> names;
  std::set<int> owners;
  for (int i = 0; names.size() < 3 && i < 1000; ++i) {
    const std::string name = "run" + std::to_string(i);
    if (owners.insert(cluster_.owner(name)).second) names.push_back(name);
  }
  ASSERT_EQ(names.size(), 3u);
  constexpr std::uint64_t kRows = 6, kCols = 5;
  constexpr int kSteps = 3;
  auto value = [](int step, std::uint64_t row, std::uint64_t col) {
    return static_cast<double>(step * 100 + row * kCols + col);
  };
  std::atomic<int> wrong{0}, elements{0}, ends{0};
  std::vector<std::thread> threads;
  for (std::size_t n = 0; n < names.size(); ++n) {
    for (std::uint32_t rank = 0; rank < 2; ++rank) {
      threads.emplace_back([&, n, rank] {  // reader `rank`, through shard (n + rank) % 3
        StreamReaderOptions options;
        options.strategy = "slicedataset";
        options.next_timeout = 20s;
        ClientOptions client_options;
        client_options.address = cluster_.address(static_cast<int>((n + rank) % kShards));
        StreamReader reader(client_options, names[n], "g", rank, 2, options);
        for (;;) {
          StreamNext next = reader.next_step();
          if (next.kind == StreamNext::Kind::kEnd) {
            ++ends;
            return;
          }
          if (next.kind != StreamNext::Kind::kStep) {
            ++wrong;
            return;
          }
          const int step = static_cast<int>(next.step->number());
          for (const StreamPiece& piece : next.step->load("meshes/T")) {
            auto values = piece.as<double>();
            for (std::uint64_t r = 0; r < piece.piece.extent[0]; ++r) {
              for (std::uint64_t c = 0; c < kCols; ++c) {
                if (values[r * kCols + c] != value(step, piece.piece.offset[0] + r, c)) ++wrong;
                ++elements;
              }
            }
          }
        }
      });
    }
    for (std::uint32_t rank = 0; rank < 2; ++rank) {
      threads.emplace_back([&, n, rank] {  // writer `rank`, through shard (n + rank + 1) % 3
        StreamWriterOptions options;
        options.expected_groups = 1;
        ClientOptions client_options;
        client_options.address = cluster_.address(static_cast<int>((n + rank + 1) % kShards));
        StreamWriter writer(client_options, names[n], rank, 2, options);
        const std::vector<std::uint64_t> global{kRows, kCols}, offset{rank * kRows / 2, 0},
            extent{kRows / 2, kCols};
        std::vector<double> rows(kRows / 2 * kCols);
        for (int step = 0; step < kSteps; ++step) {
          writer.begin_step(step);
          for (std::uint64_t r = 0; r < kRows / 2; ++r) {
            for (std::uint64_t c = 0; c < kCols; ++c) {
              rows[r * kCols + c] = value(step, offset[0] + r, c);
            }
          }
          writer.put_chunk<double>("meshes/T", global, offset, extent, rows);
          writer.end_step();
        }
        writer.close();
      });
    }
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(ends.load(), 6);
  EXPECT_EQ(elements.load(), static_cast<int>(3 * kSteps * kRows * kCols));
  for (std::size_t n = 0; n < names.size(); ++n) {  // each stream lived on its own shard
    const int owner = cluster_.owner(names[n]);  // (ended and kept there for late joiners)
    RespReply here = cluster_.raw(owner).call({"SS.STREAM.INFO", names[n]});
    EXPECT_NE(here.str().find("$ended, :1, $kept_ms"), std::string::npos) << here.str();
    RespReply elsewhere = cluster_.raw((owner + 1) % kShards).call({"SS.STREAM.INFO", names[n]});
    EXPECT_EQ(elsewhere.text.rfind("MOVED", 0), 0u) << elsewhere.str();
  }
  // Writers connected through another shard kept their chunks there; the streams' shards freed
  // every one of them once their steps were freed.
  for (int k = 0; k < kShards; ++k) {
    EXPECT_TRUE(eventually_info(cluster_.raw(k), "colocated_chunks", 0)) << "shard " << k;
  }
}

// Colocated chunks: a writer connected through shard 1 to a stream on shard 0 keeps its chunks on
// shard 1 (the stream's table names them there); a reader through shard 2 fetches them from
// shard 1; once the step is released, shard 0 tells shard 1 to free them. The bound holds too:
// a writer's chunks never belong to more than its queue limit of steps.
TEST_F(ClusterTest, ColocatedChunksLiveOnTheWritersShardUntilTheirStepIsFreed) {
  const std::string name = name_on(cluster_, 0, "colocated");
  StreamWriterOptions writer_options;
  writer_options.expected_groups = 1;
  writer_options.queue_limit = 2;
  ClientOptions through_1, through_2;
  through_1.address = cluster_.address(1);
  through_2.address = cluster_.address(2);
  StreamWriter writer(through_1, name, 0, 1, writer_options);
  StreamReaderOptions reader_options;
  reader_options.next_timeout = 10s;
  StreamReader reader(through_2, name, "g", 0, 1, reader_options);
  const std::vector<std::uint64_t> global{4, 8}, origin{0, 0};
  std::vector<double> values(32);
  for (int step = 0; step < 3; ++step) {
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = step * 1000.0 + static_cast<double>(i);
    writer.begin_step(step);
    writer.put_chunk<double>("meshes/E/x", global, origin, global, values);
    ASSERT_TRUE(writer.end_step());
    RawClient writer_shard = cluster_.raw(1);
    EXPECT_EQ(info_figure(writer_shard, "colocated_chunks"), 1);
    EXPECT_EQ(info_figure(writer_shard, "colocated_chunk_bytes"), 256);
    RawClient stream_shard = cluster_.raw(0);
    EXPECT_EQ(info_figure(stream_shard, "colocated_chunks"), 0);
    EXPECT_EQ(info_figure(stream_shard, "stream_bytes_held"), 256);  // the stream's, wherever

    StreamNext next = reader.next_step();
    ASSERT_EQ(next.kind, StreamNext::Kind::kStep);
    std::vector<StreamPiece> pieces = next.step->load("meshes/E/x");
    ASSERT_EQ(pieces.size(), 1u);
    auto got = pieces[0].as<double>();
    ASSERT_EQ(got.size(), values.size());
    for (std::size_t i = 0; i < values.size(); ++i) EXPECT_EQ(got[i], values[i]) << i;
    next.step->release();
    EXPECT_TRUE(eventually_info(cluster_.raw(1), "colocated_chunks", 0)) << "step " << step;
  }
  writer.close();
  EXPECT_EQ(reader.next_step().kind, StreamNext::Kind::kEnd);
  // Counted once the peer has answered, which may come after the reader's end: waited for.
  RawClient stream_shard = cluster_.raw(0);
  EXPECT_TRUE(eventually_info(cluster_.raw(0), "peer_messages_delivered", 3, "streams", true))
      << info_figure(stream_shard, "peer_messages_delivered");

  // The bound: with a limit of 2, a writer's third step drops its first.
  RawClient direct = cluster_.raw(1);
  const std::string chunk(64, 'x');
  std::vector<long long> ids;
  for (int step = 10; step < 13; ++step) {
    RespReply id = direct.call({"SS.CHUNKS.PUT", "bounded", "0", std::to_string(step), "2", chunk});
    ASSERT_EQ(id.kind, RespReply::Kind::kInteger) << id.str();
    ids.push_back(id.integer);
  }
  EXPECT_EQ(direct.call({"SS.CHUNKS.GET", std::to_string(ids[0])}).kind, RespReply::Kind::kError);
  RespReply kept = direct.call({"SS.CHUNKS.GET", std::to_string(ids[1]), std::to_string(ids[2])});
  ASSERT_EQ(kept.elements.size(), 2u) << kept.str();
  EXPECT_EQ(kept.elements[1].text, chunk);
  EXPECT_EQ(direct.call({"SS.CHUNKS.FREE", std::to_string(ids[1]), std::to_string(ids[2])}).integer, 2);
  EXPECT_EQ(info_figure(direct, "colocated_chunks"), 0);
}

// On the writer's node, colocated chunks go through shared memory: a writer given its shard's
// Unix socket fills segments lent there (put_chunk copies into one, loan_chunk hands it out), a
// reader on the same node maps them (no copy), a reader elsewhere gets the bytes over TCP. The
// segments are lent again once the stream's shard frees their step, so their number stays put.
TEST_F(ClusterTest, ColocatedChunksGoThroughSharedMemoryOnTheWritersNode) {
  const std::string name = name_on(cluster_, 0, "shared");
  constexpr std::uint64_t kRows = 128, kCols = 64;  // 64 KiB of doubles: the shared-memory size
  constexpr int kSteps = 6;
  auto value = [](int step, std::uint64_t i) { return step * 1e6 + static_cast<double>(i); };
  ClientOptions near_options, far_options;
  near_options.address = cluster_.unix_address(1);
  far_options.address = cluster_.address(2);
  StreamReaderOptions reader_options;
  reader_options.next_timeout = 10s;
  StreamReader near(near_options, name, "near", 0, 1, reader_options);
  StreamReader far(far_options, name, "far", 0, 1, reader_options);
  std::atomic<int> wrong{0}, shared{0}, copied{0};
  auto read_all = [&](StreamReader& reader) {
    for (;;) {
      StreamNext next = reader.next_step();
      if (next.kind != StreamNext::Kind::kStep) {
        if (next.kind != StreamNext::Kind::kEnd) ++wrong;
        return;
      }
      const int step = static_cast<int>(next.step->number());
      for (const char* component : {"meshes/put", "meshes/loan"}) {
        for (const StreamPiece& piece : next.step->load(component)) {
          (piece.shared ? shared : copied)++;
          auto got = piece.as<double>();
          if (got.size() != kRows * kCols) ++wrong;
          for (std::size_t i = 0; i < got.size(); ++i) {
            if (got[i] != value(step, i) + (component[7] == 'l' ? 0.5 : 0)) ++wrong;
          }
        }
      }
    }
  };
  std::thread near_thread(read_all, std::ref(near)), far_thread(read_all, std::ref(far));
  {
    StreamWriterOptions writer_options;
    writer_options.expected_groups = 2;
    writer_options.queue_limit = 2;
    ClientOptions writer_client;
    writer_client.address = cluster_.unix_address(1);
    StreamWriter writer(writer_client, name, 0, 1, writer_options);
    const std::vector<std::uint64_t> global{kRows, kCols}, origin{0, 0};
    std::vector<double> values(kRows * kCols);
    for (int step = 0; step < kSteps; ++step) {
      for (std::size_t i = 0; i < values.size(); ++i) values[i] = value(step, i);
      writer.begin_step(step);
      writer.put_chunk<double>("meshes/put", global, origin, global, values);
      std::span<std::byte> loan =
          writer.loan_chunk("meshes/loan", DType::kFloat64, global, origin, global);
      auto* into = reinterpret_cast<double*>(loan.data());
      for (std::size_t i = 0; i < values.size(); ++i) into[i] = values[i] + 0.5;
      ASSERT_TRUE(writer.end_step());
    }
    // Two components, lent for at most the queue limit plus the step asked for with BEGIN.
    RawClient writer_shard = cluster_.raw(1);
    const long long segments = info_figure(writer_shard, "shm_files", "memory");
    EXPECT_GT(segments, 0);
    EXPECT_LE(segments, 2 * 3);
    writer.close();
  }
  near_thread.join();
  far_thread.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(shared.load(), 2 * kSteps);  // the near reader mapped every chunk
  EXPECT_EQ(copied.load(), 2 * kSteps);  // the far one received them
  EXPECT_TRUE(eventually_info(cluster_.raw(1), "colocated_chunks", 0));
  EXPECT_TRUE(eventually_info(cluster_.raw(1), "shm_files", 0, "memory"));  // the writer has gone
}

// A writer that dies between storing its chunks on its shard and ending the step: the stream's
// shard aborts the step and tells the writer's shard to drop that writer's chunks of it.
// CHUNKS-ON names a member of the cluster, nothing else.
TEST_F(ClusterTest, AWriterThatDiesMidStepLeavesNoColocatedChunks) {
  const std::string name = name_on(cluster_, 0, "dies");
  const std::string member_1 = cluster_.raw(1).call({"CLUSTER", "MYID"}).text;
  {
    RawClient bad = cluster_.raw(0);
    RespReply refused = bad.call({"SS.STREAM.WRITE", name, "0", "1", "h", "CHUNKS-ON",
                                  std::string(40, 'f')});
    EXPECT_NE(refused.text.find("not a member"), std::string::npos) << refused.str();
  }
  auto stream_side = std::make_unique<RawClient>(cluster_.raw(0));
  ASSERT_EQ(stream_side->call({"SS.STREAM.WRITE", name, "0", "1", "h", "EXPECT-GROUPS", "0",
                               "CHUNKS-ON", member_1}).text, "OK");
  ASSERT_EQ(stream_side->call({"SS.STREAM.BEGIN", name, "0", "0"}).text, "OK");
  RawClient chunk_side = cluster_.raw(1);
  RespReply id = chunk_side.call({"SS.CHUNKS.PUT", name, "0", "0", "2", std::string(128, 'y')});
  ASSERT_EQ(id.kind, RespReply::Kind::kInteger) << id.str();
  EXPECT_EQ(info_figure(chunk_side, "colocated_chunks"), 1);
  stream_side.reset();  // the writer's connection to the stream's shard closes: it failed
  EXPECT_TRUE(eventually_info(cluster_.raw(1), "colocated_chunks", 0));
}

}  // namespace
}  // namespace slipstream::testing
