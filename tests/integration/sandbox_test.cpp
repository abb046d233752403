// The model sandbox against a real server (issue: hardening items 1, 2, 3, 7): models and scripts
// that read files, write into their inputs, crash libtorch's loader or never end cost an error
// reply, never the server, its files or its stored values. The hostile inputs are written by
// tests/hostile/make_hostile_models.py (a CTest fixture) into SLIPSTREAM_HOSTILE_MODELS_DIR.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <thread>

#include "support/raw_client.hpp"
#include "support/server_process.hpp"

namespace slipstream::testing {
namespace {

using namespace std::chrono_literals;

std::string hostile(const std::string& name) {
  std::ifstream in(std::string(SLIPSTREAM_HOSTILE_MODELS_DIR) + "/" + name, std::ios::binary);
  if (!in) throw std::runtime_error("missing hostile test input " + name);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Stores and runs go to worker processes that may be starting or restarting on a loaded machine.
RespReply call_slow(RawClient& c, const std::vector<std::string>& args, int timeout_ms = 30000) {
  return c.call(args, timeout_ms);
}

std::string floats(const std::vector<float>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * 4);
}

// A float tensor of `count` values i - count/2 (half negative, so a ReLU changes them).
std::vector<float> ramp(std::size_t count) {
  std::vector<float> values(count);
  for (std::size_t i = 0; i < count; ++i) values[i] = static_cast<float>(i) - count / 2.0f;
  return values;
}

void put(RawClient& c, const std::string& key, const std::vector<float>& values) {
  ASSERT_TRUE(c.call({"AI.TENSORSET", key, "FLOAT", std::to_string(values.size()), "BLOB",
                      floats(values)})
                  .is_ok());
}

std::string blob(RawClient& c, const std::string& key) {
  RespReply r = c.call({"AI.TENSORGET", key, "BLOB"});
  EXPECT_EQ(r.kind, RespReply::Kind::kBulk) << r.str();
  return r.text;
}

// The server still answers and still runs an ordinary model correctly.
void expect_healthy(RawClient& c) {
  EXPECT_EQ(c.call({"PING"}).str(), "+PONG");
  ASSERT_TRUE(call_slow(c, {"AI.MODELSTORE", "healthy", "TORCH", "CPU", "BLOB", hostile("scale.pt")})
                  .is_ok());
  put(c, "healthy_in", {1, 2, 3, 4, 5, 6});
  ASSERT_TRUE(c.call({"AI.MODELEXECUTE", "healthy", "INPUTS", "1", "healthy_in", "OUTPUTS", "1",
                      "healthy_out"})
                  .is_ok());
  EXPECT_EQ(blob(c, "healthy_out"), floats({3, 5, 7, 9, 11, 13}));
}

class SandboxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream(secret_path_) << "TOP-SECRET-0600!";
    ::chmod(secret_path_.c_str(), 0600);
  }
  void TearDown() override { std::remove(secret_path_.c_str()); }
  // make_hostile_models.py's default secret path: the from_file models read this file.
  const std::string secret_path_ = "/tmp/slipstream-hostile-secret";
};

TEST_F(SandboxTest, ModelsThatReadFilesAreRefusedAtStoreTime) {
  ServerProcess server;
  RawClient c = RawClient::tcp(server.port());
  for (const char* name : {"from_file_model.pt", "hidden_from_file_model.pt"}) {
    RespReply r = call_slow(c, {"AI.MODELSTORE", "m", "TORCH", "CPU", "BLOB", hostile(name)});
    ASSERT_TRUE(r.is_error()) << name << ": " << r.str();
    EXPECT_NE(r.text.find("aten::from_file"), std::string::npos) << r.text;
  }
  EXPECT_EQ(c.call({"EXISTS", "m"}).str(), ":0");
  expect_healthy(c);
}

TEST_F(SandboxTest, ScriptsThatReadOrWriteFilesAreRefusedAtStoreTime) {
  ServerProcess server;
  RawClient c = RawClient::tcp(server.port());
  RespReply r = call_slow(c, {"AI.SCRIPTSTORE", "s", "CPU", "ENTRY_POINTS", "2", "read_file",
                        "write_file", "SOURCE", hostile("from_file_script.txt")});
  ASSERT_TRUE(r.is_error()) << r.str();
  EXPECT_NE(r.text.find("aten::from_file"), std::string::npos) << r.text;
  EXPECT_EQ(c.call({"EXISTS", "s"}).str(), ":0");
}

// Both sizes: below 64 KiB tensors live on the heap; from 64 KiB a model's outputs live in sealed
// read-only shared memory, where an in-place write used to kill the server with SIGSEGV.
TEST_F(SandboxTest, InPlaceModelsAndScriptsNeverChangeStoredInputs) {
  ServerProcess server;
  RawClient c = RawClient::tcp(server.port());
  ASSERT_TRUE(call_slow(c, {"AI.MODELSTORE", "relu", "TORCH", "CPU", "BLOB",
                      hostile("inplace_relu.pt")})
                  .is_ok());
  ASSERT_TRUE(call_slow(c, {"AI.MODELSTORE", "scale", "TORCH", "CPU", "BLOB", hostile("scale.pt")})
                  .is_ok());
  ASSERT_TRUE(call_slow(c, {"AI.SCRIPTSTORE", "sub", "CPU", "ENTRY_POINTS", "2", "f", "g", "SOURCE",
                      hostile("inplace_script.txt")})
                  .is_ok());
  for (std::size_t count : {16u, 64u * 1024u}) {
    SCOPED_TRACE("values: " + std::to_string(count));
    const std::vector<float> values = ramp(count);
    put(c, "x", values);
    // A model output fed back in: large ones are stored in read-only shared memory.
    ASSERT_TRUE(c.call({"AI.MODELEXECUTE", "scale", "INPUTS", "1", "x", "OUTPUTS", "1", "y"})
                    .is_ok());
    const std::string x_before = blob(c, "x"), y_before = blob(c, "y");
    ASSERT_TRUE(c.call({"COPY", "y", "y_copy", "REPLACE"}).str() == ":1");
    for (const std::string input : {"x", "y"}) {
      RespReply r =
          c.call({"AI.MODELEXECUTE", "relu", "INPUTS", "1", input, "OUTPUTS", "1", "out"});
      EXPECT_TRUE(r.is_ok()) << r.str();
      r = c.call({"AI.SCRIPTEXECUTE", "sub", "f", "INPUTS", "1", input, "OUTPUTS", "1", "out"});
      EXPECT_TRUE(r.is_ok()) << r.str();
      r = c.call({"AI.SCRIPTEXECUTE", "sub", "g", "INPUTS", "1", input, "OUTPUTS", "1", "out"});
      EXPECT_TRUE(r.is_ok()) << r.str();
    }
    EXPECT_EQ(blob(c, "x"), x_before);
    EXPECT_EQ(blob(c, "y"), y_before);
    EXPECT_EQ(blob(c, "y_copy"), y_before);
    // And the script's result is the input minus one, computed on a copy.
    ASSERT_TRUE(c.call({"AI.SCRIPTEXECUTE", "sub", "g", "INPUTS", "1", "x", "OUTPUTS", "1", "o"})
                    .is_ok());
    std::vector<float> expected = values;
    for (float& v : expected) v -= 1.0f;
    EXPECT_EQ(blob(c, "o"), floats(expected));
  }
  expect_healthy(c);
}

TEST_F(SandboxTest, ArchivesThatCrashTheLoaderCostAnErrorReply) {
  ServerProcess server;
  RawClient c = RawClient::tcp(server.port());
  for (const char* name : {"crash_archive.pt", "crash_heap_archive.pt"}) {
    RespReply r = call_slow(c, {"AI.MODELSTORE", "bad", "TORCH", "CPU", "BLOB", hostile(name)}, 30000);
    ASSERT_TRUE(r.is_error()) << name << ": " << r.str();
    EXPECT_NE(r.text.find("crashed the sandboxed worker process"), std::string::npos) << r.text;
  }
  for (const char* name : {"bad_truncated.pt", "bad_garbage.pt", "bad_no_data_pkl.pt"}) {
    EXPECT_TRUE(call_slow(c, {"AI.MODELSTORE", "bad", "TORCH", "CPU", "BLOB", hostile(name)}).is_error())
        << name;
  }
  EXPECT_EQ(c.call({"EXISTS", "bad"}).str(), ":0");
  expect_healthy(c);
}

TEST_F(SandboxTest, EndlessRunsAreStoppedAtTheCallersTimeoutAndTheServersLimit) {
  ServerProcess server({"--run-timeout", "1500"});
  RawClient c = RawClient::tcp(server.port());
  ASSERT_TRUE(call_slow(c, {"AI.SCRIPTSTORE", "spin", "CPU", "ENTRY_POINTS", "2", "spin", "spin_plain",
                      "SOURCE", hostile("spin_script.txt")})
                  .is_ok());
  put(c, "x", {1, 2, 3});
  // Two endless runs at once used to hold both executor threads forever.
  RawClient d = RawClient::tcp(server.port());
  c.send({"AI.SCRIPTEXECUTE", "spin", "spin", "INPUTS", "1", "x", "OUTPUTS", "1", "o", "TIMEOUT",
          "400"});
  d.send({"AI.SCRIPTEXECUTE", "spin", "spin_plain", "INPUTS", "1", "x", "OUTPUTS", "1", "o"});
  // Guards against a hang (30 s, as call_slow): the runs are stopped at 0.4 and 1.5 s, but
  // stopping and replacing their workers takes seconds on a loaded machine.
  EXPECT_EQ(c.read_reply(30000).str(), "+TIMEDOUT");
  RespReply limited = d.read_reply(30000);
  ASSERT_TRUE(limited.is_error()) << limited.str();
  EXPECT_NE(limited.text.find("--run-timeout"), std::string::npos) << limited.text;
  EXPECT_EQ(c.call({"EXISTS", "o"}).str(), ":0");
  // The stopped workers are replaced: ordinary runs go on.
  expect_healthy(c);
  ASSERT_TRUE(call_slow(c, {"AI.MODELSTORE", "spin_model", "TORCH", "CPU", "BLOB",
                      hostile("spin_model.pt")})
                  .is_ok());
  EXPECT_EQ(c.call({"AI.MODELEXECUTE", "spin_model", "INPUTS", "1", "x", "OUTPUTS", "1", "o",
                    "TIMEOUT", "300"},
                   30000)
                .str(),
            "+TIMEDOUT");
  expect_healthy(c);
}

TEST_F(SandboxTest, ShutdownFinishesWhileARunNeverEnds) {
  ServerProcess server({"--run-timeout", "0"});
  RawClient c = RawClient::tcp(server.port());
  ASSERT_TRUE(call_slow(c, {"AI.SCRIPTSTORE", "spin", "CPU", "ENTRY_POINTS", "1", "spin_plain",
                      "SOURCE", hostile("spin_script.txt")})
                  .is_ok());
  put(c, "x", {1, 2, 3});
  c.send({"AI.SCRIPTEXECUTE", "spin", "spin_plain", "INPUTS", "1", "x", "OUTPUTS", "1", "o"});
  std::this_thread::sleep_for(300ms);  // the run is under way
  ::kill(server.pid(), SIGTERM);
  int status = 0;
  ASSERT_TRUE(server.wait_exit(30s, &status)) << "the server did not exit after SIGTERM";
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

TEST_F(SandboxTest, RunsThatCrashTheirWorkerCostAnErrorReply) {
  ServerProcess server;
  RawClient c = RawClient::tcp(server.port());
  // Reads far outside its tensor: a segmentation fault in the worker.
  const std::string source =
      "def wild(x):\n"
      "    return torch.as_strided(x, [4], [1 << 40]).clone()\n";
  ASSERT_TRUE(
      call_slow(c, {"AI.SCRIPTSTORE", "wild", "CPU", "ENTRY_POINTS", "1", "wild", "SOURCE", source})
          .is_ok());
  put(c, "x", {1, 2, 3});
  RespReply r = c.call({"AI.SCRIPTEXECUTE", "wild", "wild", "INPUTS", "1", "x", "OUTPUTS", "1",
                        "o"},
                       30000);
  ASSERT_TRUE(r.is_error()) << r.str();
  expect_healthy(c);
}

}  // namespace
}  // namespace slipstream::testing
