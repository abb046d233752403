// Model serving against a real server: AI.MODEL*, AI.SCRIPT*, AI.INFO and AI.CONFIG replies and
// errors, batching across concurrent callers, timeouts, replacement while running, snapshots.
// The models are written by models/make_models.py (a CTest fixture) into SLIPSTREAM_MODELS_DIR.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <thread>

#include "support/raw_client.hpp"
#include "support/server_process.hpp"

namespace slipstream::testing {
namespace {

using namespace std::chrono_literals;

std::string read_model(const std::string& name) {
  std::ifstream in(std::string(SLIPSTREAM_MODELS_DIR) + "/" + name, std::ios::binary);
  if (!in) throw std::runtime_error("missing test model " + name);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string floats(const std::vector<float>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * 4);
}

std::vector<float> to_floats(const std::string& bytes) {
  std::vector<float> out(bytes.size() / 4);
  std::memcpy(out.data(), bytes.data(), out.size() * 4);
  return out;
}

// make_models.py's Mlp, by hand.
std::vector<float> mlp_reference(const std::vector<float>& x) {
  std::vector<float> out;
  for (std::size_t r = 0; r < x.size() / 4; ++r) {
    double y = 0.5;
    for (int j = 0; j < 8; ++j) {
      double h = 0.01 * j - 0.02;
      for (int i = 0; i < 4; ++i) h += (0.1 * (i + 1) - 0.05 * j) * x[r * 4 + i];
      y += (0.2 - 0.03 * j) * std::max(h, 0.0);
    }
    out.push_back(static_cast<float>(y));
  }
  return out;
}

std::vector<float> cells(std::size_t rows, float seed) {
  std::vector<float> x(rows * 4);
  for (std::size_t k = 0; k < x.size(); ++k) x[k] = std::sin(seed + 0.37f * static_cast<float>(k));
  return x;
}

void expect_close(const std::vector<float>& actual, const std::vector<float>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) EXPECT_NEAR(actual[i], expected[i], 1e-5) << i;
}

class ModelTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { server_ = new ServerProcess({"--executor-threads", "1"}); }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  void SetUp() override {
    ASSERT_TRUE(c_.call({"FLUSHDB"}).is_ok());
    ASSERT_TRUE(c_.call({"AI.CONFIG", "MODEL_CHUNK_SIZE", "535822336"}).is_ok());
  }
  RawClient client() { return RawClient::tcp(server_->port()); }
  void store(const std::string& key, const std::string& file, std::vector<std::string> options = {}) {
    std::vector<std::string> args = {"AI.MODELSTORE", key, "TORCH", "CPU"};
    args.insert(args.end(), options.begin(), options.end());
    args.push_back("BLOB");
    args.push_back(read_model(file));
    ASSERT_TRUE(c_.call(args).is_ok()) << key;
  }
  std::vector<float> run_mlp(RawClient& c, const std::string& in, const std::string& out,
                             const std::vector<float>& x) {
    EXPECT_TRUE(c.call({"AI.TENSORSET", in, "FLOAT", std::to_string(x.size() / 4), "4", "BLOB",
                        floats(x)})
                    .is_ok());
    RespReply r = c.call({"AI.MODELEXECUTE", "mlp", "INPUTS", "1", in, "OUTPUTS", "1", out});
    EXPECT_TRUE(r.is_ok()) << r.str();
    RespReply meta = c.call({"AI.TENSORGET", out, "META", "BLOB"});
    EXPECT_EQ(meta.elements[3].str(), "[:" + std::to_string(x.size() / 4) + ", :1]");
    return to_floats(meta.elements[5].text);
  }
  static ServerProcess* server_;
  RawClient c_ = RawClient::tcp(server_->port());
};
ServerProcess* ModelTest::server_ = nullptr;

TEST_F(ModelTest, StoreExecuteAndReadTheResult) {
  store("mlp", "mlp.pt");
  std::vector<float> x = cells(5, 0.1f);
  expect_close(run_mlp(c_, "x", "y", x), mlp_reference(x));
  EXPECT_EQ(c_.call({"TYPE", "mlp"}).str(), "+AI__MODEL");
  EXPECT_EQ(c_.call({"EXISTS", "mlp"}).integer, 1);
  RespReply scan = c_.call({"SCAN", "0", "COUNT", "100", "TYPE", "AI__MODEL"});
  EXPECT_EQ(scan.elements[1].str(), "[$mlp]");
}

TEST_F(ModelTest, BlobMayArriveInChunks) {
  std::string blob = read_model("mlp.pt");
  std::size_t third = blob.size() / 3;
  ASSERT_TRUE(c_.call({"AI.MODELSTORE", "mlp", "TORCH", "cpu", "BLOB", blob.substr(0, third),
                       blob.substr(third, third), blob.substr(2 * third)})
                  .is_ok());
  EXPECT_EQ(c_.call({"AI.MODELGET", "mlp", "BLOB"}).text, blob);
  std::vector<float> x = cells(3, 2.0f);
  expect_close(run_mlp(c_, "x", "y", x), mlp_reference(x));
}

TEST_F(ModelTest, ModelGetRepliesLikeRedisAI) {
  std::string blob = read_model("mlp.pt");
  ASSERT_TRUE(c_.call({"AI.MODELSTORE", "mlp", "TORCH", "CPU", "TAG", "eke:v1", "BATCHSIZE", "16",
                       "MINBATCHSIZE", "4", "MINBATCHTIMEOUT", "7", "INPUTS", "1", "features",
                       "OUTPUTS", "1", "eke", "BLOB", blob})
                  .is_ok());
  EXPECT_EQ(c_.call({"AI.MODELGET", "mlp", "META"}).str(),
            "[$backend, $TORCH, $device, $CPU, $tag, $eke:v1, $batchsize, :16, $minbatchsize, :4, "
            "$inputs, [$features], $outputs, [$eke], $minbatchtimeout, :7]");
  RespReply both = c_.call({"AI.MODELGET", "mlp"});
  ASSERT_EQ(both.elements.size(), 18u);
  EXPECT_EQ(both.elements[16].text, "blob");
  EXPECT_EQ(both.elements[17].text, blob);
  // Over MODEL_CHUNK_SIZE the blob comes back as chunks: len / size + 1 of them.
  ASSERT_TRUE(c_.call({"AI.CONFIG", "MODEL_CHUNK_SIZE", "1000"}).is_ok());
  EXPECT_EQ(c_.call({"AI.CONFIG", "GET", "MODEL_CHUNK_SIZE"}).str(), ":1000");
  RespReply chunks = c_.call({"AI.MODELGET", "mlp", "BLOB"});
  ASSERT_EQ(chunks.kind, RespReply::Kind::kArray);
  EXPECT_EQ(chunks.elements.size(), blob.size() / 1000 + 1);
  std::string joined;
  for (const auto& chunk : chunks.elements) joined += chunk.text;
  EXPECT_EQ(joined, blob);
}

TEST_F(ModelTest, StoreErrors) {
  std::string blob = read_model("mlp.pt");
  auto store_args = [&](std::vector<std::string> middle) {
    std::vector<std::string> args = {"AI.MODELSTORE", "m"};
    args.insert(args.end(), middle.begin(), middle.end());
    return c_.call(args).str();
  };
  EXPECT_EQ(store_args({"PORCH", "CPU", "BLOB", blob}), "-ERR unsupported backend");
  EXPECT_NE(store_args({"TF", "CPU", "BLOB", blob}).find("not available"), std::string::npos);
  EXPECT_EQ(store_args({"TORCH", "TPU", "BLOB", blob}), "-ERR Invalid DEVICE");
  EXPECT_EQ(store_args({"TORCH", "CPU", "MINBATCHSIZE", "2", "BLOB", blob}),
            "-ERR MINBATCHSIZE specified without BATCHSIZE");
  EXPECT_EQ(store_args({"TORCH", "CPU", "BATCHSIZE", "2", "MINBATCHTIMEOUT", "5", "BLOB", blob}),
            "-ERR MINBATCHTIMEOUT specified without MINBATCHSIZE");
  EXPECT_EQ(store_args({"TORCH", "CPU", "BATCHSIZE", "x", "BLOB", blob}),
            "-ERR Invalid argument for BATCHSIZE");
  EXPECT_EQ(store_args({"TORCH", "CPU", "BATCHSIZE", "2"}),
            "-ERR Insufficient arguments, missing model BLOB");
  EXPECT_EQ(store_args({"TORCH", "CPU", "NOT_BLOB", blob}), "-ERR Invalid argument, expected BLOB");
  std::string garbage = store_args({"TORCH", "CPU", "BLOB", "not a torchscript archive"});
  EXPECT_EQ(garbage.rfind("-ERR ", 0), 0u);
  EXPECT_NE(garbage.find("zip archive"), std::string::npos) << garbage;  // torch's own words
  std::string gpu = store_args({"TORCH", "GPU:3", "BLOB", blob});
  EXPECT_NE(gpu.find("GPU"), std::string::npos) << gpu;  // no CUDA here: refused at store time
  EXPECT_EQ(c_.call({"EXISTS", "m"}).integer, 0);
  ASSERT_TRUE(c_.call({"SET", "s", "x"}).is_ok());
  EXPECT_EQ(c_.call({"AI.MODELSTORE", "s", "TORCH", "CPU", "BLOB", blob}).str(),
            "-WRONGTYPE Operation against a key holding the wrong kind of value");
  EXPECT_EQ(c_.call({"AI.MODELGET", "nope"}).str(), "-ERR model key is empty");
  EXPECT_EQ(c_.call({"AI.MODELDEL", "nope"}).str(), "-ERR model key is empty");
}

TEST_F(ModelTest, ExecuteErrorsWriteNoOutput) {
  store("mlp", "mlp.pt");
  store("two", "two_outputs.pt");
  ASSERT_TRUE(c_.call({"AI.TENSORSET", "x", "FLOAT", "2", "4"}).is_ok());
  ASSERT_TRUE(c_.call({"AI.TENSORSET", "bad", "FLOAT", "2", "3"}).is_ok());
  auto exec = [&](std::vector<std::string> args) { return c_.call(args).str(); };
  EXPECT_EQ(exec({"AI.MODELEXECUTE", "none", "INPUTS", "1", "x", "OUTPUTS", "1", "y"}),
            "-ERR model key is empty");
  // The missing input is named, and a single server does not speak of shards.
  EXPECT_EQ(exec({"AI.MODELEXECUTE", "mlp", "INPUTS", "1", "missing", "OUTPUTS", "1", "y"}),
            "-ERR no such key: input tensor 'missing' does not exist");
  EXPECT_EQ(exec({"AI.MODELEXECUTE", "mlp", "IN", "1", "x", "OUTPUTS", "1", "y"}),
            "-ERR INPUTS not specified");
  EXPECT_EQ(exec({"AI.MODELEXECUTE", "mlp", "INPUTS", "1", "x", "OUTPS", "1", "y"}),
            "-ERR OUTPUTS not specified");
  EXPECT_EQ(exec({"AI.MODELEXECUTE", "mlp", "INPUTS", "1", "x", "OUTPUTS", "1", "y", "TIMEOUT",
                  "-4"}),
            "-ERR Invalid value for TIMEOUT");
  // The backend refuses: its message is quoted and no output key appears.
  std::string shape = exec({"AI.MODELEXECUTE", "mlp", "INPUTS", "1", "bad", "OUTPUTS", "1", "y"});
  EXPECT_EQ(shape.rfind("-ERR ", 0), 0u) << shape;
  EXPECT_NE(shape.find("mat1 and mat2 shapes cannot be multiplied"), std::string::npos) << shape;
  std::string count =
      exec({"AI.MODELEXECUTE", "mlp", "INPUTS", "2", "x", "x", "OUTPUTS", "1", "y"});
  EXPECT_NE(count.find("forward"), std::string::npos) << count;
  // Two outputs but one OUTPUTS key: nothing is stored, not even the first output.
  std::string outs = exec({"AI.MODELEXECUTE", "two", "INPUTS", "2", "x", "x", "OUTPUTS", "1", "y"});
  EXPECT_NE(outs.find("nothing was stored"), std::string::npos) << outs;
  EXPECT_EQ(c_.call({"EXISTS", "y"}).integer, 0);
  EXPECT_TRUE(
      c_.call({"AI.MODELEXECUTE", "two", "INPUTS", "2", "x", "x", "OUTPUTS", "2", "s", "p"})
          .is_ok());
  EXPECT_EQ(c_.call({"EXISTS", "s", "p"}).integer, 2);
  RespReply info = c_.call({"AI.INFO", "mlp"});
  EXPECT_EQ(info.elements[17].integer, 2);  // errors: the two backend refusals
}

TEST_F(ModelTest, InfoCountsAndResets) {
  store("mlp", "mlp.pt", {"TAG", "t1"});
  std::vector<float> x = cells(6, 1.0f);
  run_mlp(c_, "x", "y", x);
  run_mlp(c_, "x", "y", x);
  RespReply info = c_.call({"AI.INFO", "mlp"});
  ASSERT_EQ(info.elements.size(), 30u) << info.str();
  EXPECT_EQ(info.elements[0].text, "key");
  EXPECT_EQ(info.elements[1].text, "mlp");
  EXPECT_EQ(info.elements[3].text, "MODEL");
  EXPECT_EQ(info.elements[5].text, "TORCH");
  EXPECT_EQ(info.elements[7].text, "CPU");
  EXPECT_EQ(info.elements[9].text, "t1");
  EXPECT_EQ(info.elements[10].text, "duration");
  EXPECT_GT(info.elements[11].integer, 0);
  EXPECT_EQ(info.elements[13].integer, 12);  // samples: 2 calls x 6 rows
  EXPECT_EQ(info.elements[15].integer, 2);   // calls
  EXPECT_EQ(info.elements[17].integer, 0);   // errors
  EXPECT_EQ(info.elements[18].text, "version");
  EXPECT_EQ(info.elements[19].integer, 1);
  EXPECT_TRUE(c_.call({"AI.INFO", "mlp", "RESETSTAT"}).is_ok());
  EXPECT_EQ(c_.call({"AI.INFO", "mlp"}).elements[15].integer, 0);
  EXPECT_EQ(c_.call({"AI.INFO", "nope"}).str(), "-ERR cannot find run info for key");
}

// BUG (issue 26.D4): a TIMEOUT of 2^63-1 ms overflowed the run's deadline into the past, and the
// run answered TIMEDOUT at once. Timeouts saturate at about 34 years.
TEST_F(ModelTest, HugeTimeoutsMeanNoTimeout) {
  ASSERT_TRUE(c_.call({"AI.SCRIPTSTORE", "huge", "CPU", "ENTRY_POINTS", "1", "twice", "SOURCE",
                       "def twice(tensors: List[Tensor], keys: List[str], args: List[str]):\n"
                       "    return tensors[0] * 2\n"})
                  .is_ok());
  ASSERT_TRUE(c_.call({"AI.TENSORSET", "huge_in", "FLOAT", "2", "VALUES", "1", "2"}).is_ok());
  EXPECT_TRUE(c_.call({"AI.SCRIPTEXECUTE", "huge", "twice", "INPUTS", "1", "huge_in", "OUTPUTS",
                       "1", "huge_out", "TIMEOUT", "9223372036854775807"})
                  .is_ok());
  EXPECT_EQ(c_.call({"AI.TENSORGET", "huge_out", "VALUES"}).str(), "[$2, $4]");
}

TEST_F(ModelTest, ScriptsBothForms) {
  const std::string source =
      "def add(tensors: List[Tensor], keys: List[str], args: List[str]):\n"
      "    return tensors[0] + tensors[1] * float(args[0])\n"
      "def pair(a, b):\n"
      "    return a - b, a * b\n";
  ASSERT_TRUE(c_.call({"AI.SCRIPTSTORE", "s", "CPU", "TAG", "v", "ENTRY_POINTS", "1", "add",
                       "SOURCE", source})
                  .is_ok());
  ASSERT_TRUE(c_.call({"AI.TENSORSET", "a", "FLOAT", "2", "VALUES", "1", "2"}).is_ok());
  ASSERT_TRUE(c_.call({"AI.TENSORSET", "b", "FLOAT", "2", "VALUES", "10", "20"}).is_ok());
  EXPECT_TRUE(c_.call({"AI.SCRIPTEXECUTE", "s", "add", "INPUTS", "2", "a", "b", "ARGS", "1", "0.5",
                       "OUTPUTS", "1", "c"})
                  .is_ok());
  EXPECT_EQ(c_.call({"AI.TENSORGET", "c", "VALUES"}).str(), "[$6, $12]");
  ASSERT_TRUE(c_.call({"AI.SCRIPTSET", "old", "CPU", "SOURCE", source}).is_ok());
  EXPECT_TRUE(
      c_.call({"AI.SCRIPTRUN", "old", "pair", "INPUTS", "a", "b", "OUTPUTS", "d", "m"}).is_ok());
  EXPECT_EQ(c_.call({"AI.TENSORGET", "d", "VALUES"}).str(), "[$-9, $-18]");
  EXPECT_EQ(c_.call({"AI.TENSORGET", "m", "VALUES"}).str(), "[$10, $40]");
  EXPECT_EQ(c_.call({"AI.SCRIPTGET", "s", "META"}).str(),
            "[$device, $CPU, $tag, $v, $Entry Points, [$add]]");
  EXPECT_EQ(c_.call({"AI.SCRIPTGET", "s", "SOURCE"}).text, source);
  EXPECT_EQ(c_.call({"TYPE", "s"}).str(), "+AI_SCRIPT");
  std::string unknown = c_.call({"AI.SCRIPTRUN", "old", "nope", "INPUTS", "a", "OUTPUTS", "z"}).str();
  EXPECT_NE(unknown.find("nope"), std::string::npos) << unknown;
  EXPECT_EQ(c_.call({"AI.SCRIPTSTORE", "t", "CPU", "ENTRY_POINTS", "1", "missing", "SOURCE",
                     source})
                .str(),
            "-ERR Function missing does not exist in the given script.");
  std::string compile = c_.call({"AI.SCRIPTSET", "t", "CPU", "SOURCE", "def f(:\n"}).str();
  EXPECT_EQ(compile.rfind("-ERR ", 0), 0u) << compile;
  EXPECT_EQ(c_.call({"EXISTS", "t", "z"}).integer, 0);
  EXPECT_EQ(c_.call({"AI.SCRIPTGET", "nope"}).str(), "-ERR script key is empty");
  EXPECT_TRUE(c_.call({"AI.SCRIPTDEL", "s"}).is_ok());
  EXPECT_EQ(c_.call({"AI.SCRIPTDEL", "s"}).str(), "-ERR script key is empty");
}

// Eight callers of 8 rows each against BATCHSIZE 64 / MINBATCHSIZE 64: the executor must gather
// all of them into one run, and every caller must get exactly its unbatched result. The batch
// runs as soon as all eight are there; MINBATCHTIMEOUT is only how long the first waits for the
// last, which a loaded machine may make seconds.
TEST_F(ModelTest, ConcurrentCallersAreBatchedAndGetTheirOwnResults) {
  store("mlp", "mlp.pt", {"BATCHSIZE", "64", "MINBATCHSIZE", "64", "MINBATCHTIMEOUT", "20000"});
  std::vector<std::vector<float>> results(8);
  std::vector<std::thread> callers;
  for (int t = 0; t < 8; ++t) {
    callers.emplace_back([&, t] {
      RawClient c = client();
      results[t] = run_mlp(c, "x" + std::to_string(t), "y" + std::to_string(t),
                           cells(8, static_cast<float>(t)));
    });
  }
  for (auto& thread : callers) thread.join();
  for (int t = 0; t < 8; ++t) {
    SCOPED_TRACE(t);
    expect_close(results[t], mlp_reference(cells(8, static_cast<float>(t))));
  }
  RespReply info = c_.call({"AI.INFO", "mlp"});
  EXPECT_EQ(info.elements[15].integer, 8);  // calls
  EXPECT_EQ(info.elements[21].integer, 1);  // runs: all eight in one
  EXPECT_EQ(info.elements[23].integer, 1);  // batches
  EXPECT_EQ(info.elements[25].text, "8");   // mean batch size
  std::string text = c_.call({"INFO", "models"}).text;
  EXPECT_NE(text.find("model_mlp:version=1,device=CPU,calls=8,samples=64,errors=0,runs=1,"
                      "batches=1,mean_batch_size=8.00"),
            std::string::npos)
      << text;
}

TEST_F(ModelTest, IncompatibleShapesRunSeparatelyInsteadOfFailing) {
  store("scale", "scale.pt", {"BATCHSIZE", "8", "MINBATCHSIZE", "8", "MINBATCHTIMEOUT", "300"});
  std::vector<std::string> replies(2);
  std::vector<std::thread> callers;
  for (int t = 0; t < 2; ++t) {
    callers.emplace_back([&, t] {
      RawClient c = client();
      std::string cols = t == 0 ? "3" : "5";
      c.call({"AI.TENSORSET", "in" + std::to_string(t), "FLOAT", "2", cols});
      replies[t] = c.call({"AI.MODELEXECUTE", "scale", "INPUTS", "1", "in" + std::to_string(t),
                           "OUTPUTS", "1", "out" + std::to_string(t)})
                       .str();
    });
  }
  for (auto& thread : callers) thread.join();
  EXPECT_EQ(replies[0], "+OK");
  EXPECT_EQ(replies[1], "+OK");
  EXPECT_EQ(c_.call({"AI.TENSORGET", "out1", "META"}).elements[3].str(), "[:2, :5]");
}

TEST_F(ModelTest, TimeoutDropsAQueuedRunAndIoThreadsStayFree) {
  // The single executor thread is held gathering a batch that never fills (8 s); a run queued
  // behind it with TIMEOUT 100 is dropped and answered TIMEDOUT, and nothing is written.
  store("slow", "mlp.pt", {"BATCHSIZE", "100", "MINBATCHSIZE", "100", "MINBATCHTIMEOUT", "8000"});
  store("scale", "scale.pt");
  ASSERT_TRUE(c_.call({"AI.TENSORSET", "x", "FLOAT", "1", "4"}).is_ok());
  RawClient first = client();
  first.send({"AI.MODELEXECUTE", "slow", "INPUTS", "1", "x", "OUTPUTS", "1", "y"});
  // Queued ahead of the next run once submitted (AI.INFO's calls count submissions): waited for,
  // not slept for, since a loaded machine may take longer than any fixed pause.
  for (int i = 0; i < 1500 && c_.call({"AI.INFO", "slow"}).elements[15].integer < 1; ++i) {
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_EQ(c_.call({"AI.INFO", "slow"}).elements[15].integer, 1);
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(c_.call({"AI.MODELEXECUTE", "scale", "INPUTS", "1", "x", "OUTPUTS", "1", "z",
                     "TIMEOUT", "100"})
                .str(),
            "+TIMEDOUT");
  // Answered at its own timeout, not once the slow batch gave up waiting (8 s after it came):
  // the bound sits between the two, with room for a loaded machine.
  EXPECT_LT(std::chrono::steady_clock::now() - start, 4000ms);
  EXPECT_EQ(c_.call({"PING"}).str(), "+PONG");  // I/O is not blocked by model execution
  EXPECT_TRUE(first.read_reply(30000).is_ok());
  EXPECT_EQ(c_.call({"EXISTS", "z"}).integer, 0);
  EXPECT_EQ(c_.call({"EXISTS", "y"}).integer, 1);
}

// Regression: a run waiting for its batch to fill has not started, so its TIMEOUT applies.
// The batch would wait 60 s; the bounds sit far below that and far above what a store and two
// runs take on a loaded machine (a model store alone has taken seconds in sanitizer builds).
TEST_F(ModelTest, TimeoutAppliesWhileWaitingForABatch) {
  store("slow", "mlp.pt", {"BATCHSIZE", "100", "MINBATCHSIZE", "100", "MINBATCHTIMEOUT", "60000"});
  ASSERT_TRUE(c_.call({"AI.TENSORSET", "x", "FLOAT", "2", "4"}).is_ok());
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(c_.call({"AI.MODELEXECUTE", "slow", "INPUTS", "1", "x", "OUTPUTS", "1", "y", "TIMEOUT",
                     "100"})
                .str(),
            "+TIMEDOUT");
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  EXPECT_EQ(c_.call({"EXISTS", "y"}).integer, 0);
  // The executor is free again at once: a store and a run of another model go through.
  store("scale", "scale.pt");
  EXPECT_TRUE(
      c_.call({"AI.MODELEXECUTE", "scale", "INPUTS", "1", "x", "OUTPUTS", "1", "z"}).is_ok());
  EXPECT_LT(std::chrono::steady_clock::now() - start, 20s);
}

TEST_F(ModelTest, ReplacingAModelWhileItRuns) {
  store("mlp", "mlp.pt");
  std::atomic<bool> stop{false};
  std::atomic<int> ok{0}, failed{0};
  std::thread runner([&] {
    RawClient c = client();
    std::vector<float> x = cells(16, 3.0f);
    c.call({"AI.TENSORSET", "rx", "FLOAT", "16", "4", "BLOB", floats(x)});
    while (!stop) {
      RespReply r = c.call({"AI.MODELEXECUTE", "mlp", "INPUTS", "1", "rx", "OUTPUTS", "1", "ry"});
      (r.is_ok() ? ok : failed)++;
    }
  });
  // The runner is running before the replacements start (on a loaded machine its thread may start
  // late enough to miss them all).
  for (int i = 0; i < 3000 && ok + failed == 0; ++i) std::this_thread::sleep_for(10ms);
  for (int i = 0; i < 5; ++i) {
    store("mlp", "mlp.pt");
    std::this_thread::sleep_for(20ms);
  }
  stop = true;
  runner.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_GT(ok.load(), 0);
  EXPECT_EQ(c_.call({"AI.INFO", "mlp"}).elements[19].integer, 6);  // version
}

TEST(ModelPersistenceTest, ModelsAndScriptsSurviveARestart) {
  char tmpl[] = "/tmp/slipstream-models-XXXXXX";
  std::string dir = ::mkdtemp(tmpl);
  std::vector<float> x = cells(4, 0.5f);
  {
    ServerProcess server({}, dir);
    RawClient c = RawClient::tcp(server.port());
    ASSERT_TRUE(c.call({"AI.MODELSTORE", "mlp", "TORCH", "CPU", "TAG", "kept", "BLOB",
                        read_model("mlp.pt")})
                    .is_ok());
    ASSERT_TRUE(c.call({"AI.MODELSTORE", "mlp", "TORCH", "CPU", "TAG", "kept", "BLOB",
                        read_model("mlp.pt")})
                    .is_ok());  // version 2
    ASSERT_TRUE(c.call({"AI.SCRIPTSET", "s", "CPU", "SOURCE", "def neg(a):\n    return -a\n"})
                    .is_ok());
    c.send({"SHUTDOWN"});
    ASSERT_TRUE(server.wait_exit(30s));  // a guard against a hang: model workers stop first
  }
  ServerProcess server({}, dir);
  RawClient c = RawClient::tcp(server.port());
  ASSERT_TRUE(c.call({"AI.TENSORSET", "x", "FLOAT", "4", "4", "BLOB", floats(x)}).is_ok());
  ASSERT_TRUE(c.call({"AI.MODELEXECUTE", "mlp", "INPUTS", "1", "x", "OUTPUTS", "1", "y"}).is_ok());
  expect_close(to_floats(c.call({"AI.TENSORGET", "y", "BLOB"}).text), mlp_reference(x));
  EXPECT_EQ(c.call({"AI.INFO", "mlp"}).elements[19].integer, 2);
  EXPECT_EQ(c.call({"AI.MODELGET", "mlp", "META"}).elements[5].text, "kept");
  ASSERT_TRUE(c.call({"AI.SCRIPTRUN", "s", "neg", "INPUTS", "y", "OUTPUTS", "n"}).is_ok());
  server.stop();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace slipstream::testing
