// The model sandbox against a real server (issue: hardening items 1, 2, 3, 7): models and scripts
// that read files, write into their inputs, crash libtorch's loader, never end, allocate without
// end or flood the log cost an error reply or a bounded log, never the server, its files, its
// secrets or its stored values. The hostile inputs are written by
// tests/hostile/make_hostile_models.py (a CTest fixture) into SLIPSTREAM_HOSTILE_MODELS_DIR.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include "common/sanitizer.hpp"
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

// The whole of /proc/<pid>/<name> ("" when it cannot be read).
std::string proc_file(pid_t pid, const std::string& name) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/" + name, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The model workers of the server `pid`: its children running `slipstream ml-worker`. A child
// whose command line is not yet the worker's is still the server's copy, before its exec.
std::vector<pid_t> model_workers(pid_t pid) {
  std::vector<pid_t> workers;
  std::error_code ec;
  for (const auto& task :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    std::istringstream children(proc_file(pid, "task/" + task.path().filename().string() +
                                                   "/children"));
    for (pid_t child; children >> child;) {
      if (proc_file(child, "cmdline").find("ml-worker") != std::string::npos) {
        workers.push_back(child);
      }
    }
  }
  return workers;
}

// The "Max address space" line of /proc/<pid>/limits.
std::string address_space_limit(pid_t pid) {
  std::istringstream limits(proc_file(pid, "limits"));
  for (std::string line; std::getline(limits, line);) {
    if (line.starts_with("Max address space")) return line;
  }
  return "";
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
// An INFO field of the server as a number (-1 when missing).
std::int64_t info_number(RawClient& c, const std::string& field) {
  const std::string text = c.call({"INFO", "memory"}).text;
  const std::size_t at = text.find(field + ":");
  if (at == std::string::npos) return -1;
  return std::stoll(text.substr(at + field.size() + 1));
}

// Issue 32: on the default path a stored input in shared memory reaches the worker mapped
// copy-on-write and a large output comes back as a file (both counted in INFO); on the forced old
// one (--model-shared-memory no) both are copied. The stored values stay unchanged on both.
class InPlaceRuns : public SandboxTest, public ::testing::WithParamInterface<bool> {};

TEST_P(InPlaceRuns, NeverChangeStoredInputs) {
  const bool share = GetParam();
  ServerProcess server({"--model-shared-memory", share ? "yes" : "no"});
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
    const std::int64_t files_before = info_number(c, "shm_model_outputs_in_files");
    ASSERT_TRUE(c.call({"AI.MODELEXECUTE", "scale", "INPUTS", "1", "x", "OUTPUTS", "1", "y"})
                    .is_ok());
    const bool large = count * sizeof(float) >= 64 * 1024;
    EXPECT_EQ(info_number(c, "shm_model_outputs_in_files") - files_before,
              share && large ? 1 : 0);
    std::vector<float> scaled = values;
    for (float& v : scaled) v = v * 2.0f + 1.0f;  // scale.pt: 2x + 1
    EXPECT_EQ(blob(c, "y"), floats(scaled));
    const std::string x_before = blob(c, "x"), y_before = blob(c, "y");
    ASSERT_TRUE(c.call({"COPY", "y", "y_copy", "REPLACE"}).str() == ":1");
    const std::int64_t mapped_before = info_number(c, "shm_model_inputs_mapped");
    ASSERT_GE(mapped_before, 0);
    for (const std::string input : {"x", "y"}) {
      RespReply r =
          c.call({"AI.MODELEXECUTE", "relu", "INPUTS", "1", input, "OUTPUTS", "1", "out"});
      EXPECT_TRUE(r.is_ok()) << r.str();
      r = c.call({"AI.SCRIPTEXECUTE", "sub", "f", "INPUTS", "1", input, "OUTPUTS", "1", "out"});
      EXPECT_TRUE(r.is_ok()) << r.str();
      r = c.call({"AI.SCRIPTEXECUTE", "sub", "g", "INPUTS", "1", input, "OUTPUTS", "1", "out"});
      EXPECT_TRUE(r.is_ok()) << r.str();
    }
    // y (an output of 64 KiB or more, in shared memory) went mapped to its three runs; x (put
    // over TCP, on the heap) and small tensors were copied.
    EXPECT_EQ(info_number(c, "shm_model_inputs_mapped") - mapped_before, share && large ? 3 : 0);
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

INSTANTIATE_TEST_SUITE_P(SandboxTest, InPlaceRuns, ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? std::string("Mapped") : std::string("Copied");
                         });

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

// A worker runs code its users stored: it must not see the server's password (or anything else
// of its environment), it must go first when memory runs out, and its memory must be bounded.
// Issue 26.C2: the confinement must cover every thread of a worker, also libtorch's pool threads
// if they start before the worker confines itself (the filter is installed with TSYNC, which
// gives every thread the filter and no-new-privileges). Reported with --intra-op-threads 4: six
// threads with Seccomp 0 and NoNewPrivs 0.
TEST_F(SandboxTest, EveryThreadOfAWorkerIsConfined) {
  ServerProcess server({"--intra-op-threads", "4", "--inter-op-threads", "2"});
  RawClient c = RawClient::tcp(server.port());
  ASSERT_TRUE(c.call({"AI.SCRIPTSTORE", "plus", "CPU", "ENTRY_POINTS", "1", "plus", "SOURCE",
                      "def plus(x):\n    return x + 1.0\n"})
                  .is_ok());
  put(c, "x", std::vector<float>(1 << 16, 1.0f));  // large enough to run in parallel
  ASSERT_TRUE(
      c.call({"AI.SCRIPTEXECUTE", "plus", "plus", "INPUTS", "1", "x", "OUTPUTS", "1", "o"})
          .is_ok());
  const std::vector<pid_t> workers = model_workers(server.pid());
  ASSERT_FALSE(workers.empty());
  for (pid_t worker : workers) {
    int threads = 0;
    for (const auto& task :
         std::filesystem::directory_iterator("/proc/" + std::to_string(worker) + "/task")) {
      const std::string status = proc_file(worker, "task/" + task.path().filename().string() +
                                                       "/status");
      if (status.empty()) continue;  // the thread has ended
      ++threads;
      EXPECT_NE(status.find("NoNewPrivs:\t1"), std::string::npos) << "thread " << task.path();
#ifdef SLIPSTREAM_HAVE_SECCOMP
      EXPECT_NE(status.find("Seccomp:\t2"), std::string::npos) << "thread " << task.path();
#endif
    }
    EXPECT_GT(threads, 1) << "the worker should run libtorch's pool threads";
  }
}

TEST_F(SandboxTest, WorkersGetACleanEnvironmentAHigherOomScoreAndAMemoryLimit) {
  const std::string password = "env-secret-7f3a9c";
  ::setenv("SLIPSTREAM_PASSWORD", password.c_str(), 1);
  std::unique_ptr<ServerProcess> server;
  try {
    server = std::make_unique<ServerProcess>();
  } catch (...) {
    ::unsetenv("SLIPSTREAM_PASSWORD");
    throw;
  }
  ::unsetenv("SLIPSTREAM_PASSWORD");
  ASSERT_NE(proc_file(server->pid(), "environ").find(password), std::string::npos)
      << "the test's premise: the server has the password in its environment";
  RawClient c = RawClient::tcp(server->port());
  ASSERT_TRUE(c.call({"AUTH", password}).is_ok());
  // The first store starts a worker. Its environment is read while it starts: once confined it
  // is not dumpable, and only root may read it then.
  c.send({"AI.SCRIPTSTORE", "plus", "CPU", "ENTRY_POINTS", "1", "plus", "SOURCE",
          "def plus(x):\n    return x + 1.0\n"});
  std::string environment;
  pid_t worker = -1;
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (environment.empty() && std::chrono::steady_clock::now() < deadline) {
    for (pid_t pid : model_workers(server->pid())) {
      worker = pid;
      environment = proc_file(pid, "environ");
      if (!environment.empty()) break;
    }
    if (environment.empty()) std::this_thread::sleep_for(1ms);
  }
  ASSERT_TRUE(c.read_reply(30000).is_ok());
  ASSERT_GT(worker, 0) << "no model worker found among the server's children";
  if (environment.empty() && ::geteuid() != 0) {
    ADD_FAILURE() << "the worker was confined before its environment could be read";
  }
  EXPECT_EQ(environment.find(password), std::string::npos) << environment;
  EXPECT_EQ(environment.find("SLIPSTREAM_PASSWORD"), std::string::npos) << environment;
  EXPECT_NE(environment.find("PATH=/usr/bin:/bin"), std::string::npos) << environment;

  const int server_score = std::stoi(proc_file(server->pid(), "oom_score_adj"));
  const int worker_score = std::stoi(proc_file(worker, "oom_score_adj"));
  EXPECT_EQ(worker_score, std::min(1000, server_score + 500));
  if (server_score < 1000) {
    EXPECT_GT(worker_score, server_score);
  }

  // The default limit is the physical memory (none where a GPU's driver is present).
  const std::string limit = address_space_limit(worker);
  const bool gpu = std::filesystem::exists("/dev/nvidiactl") ||
                   std::filesystem::exists("/proc/driver/nvidia/gpus");
  if (!kSanitizerBuild && !gpu) {
    const auto physical = static_cast<unsigned long long>(::sysconf(_SC_PHYS_PAGES)) *
                          static_cast<unsigned long long>(::sysconf(_SC_PAGESIZE));
    EXPECT_EQ(limit.find("unlimited"), std::string::npos) << limit;
    EXPECT_NE(limit.find(std::to_string(physical)), std::string::npos) << limit;
  }
  put(c, "x", {1, 2, 3});
  ASSERT_TRUE(
      c.call({"AI.SCRIPTEXECUTE", "plus", "plus", "INPUTS", "1", "x", "OUTPUTS", "1", "o"})
          .is_ok());
  EXPECT_EQ(blob(c, "o"), floats({2, 3, 4}));
}

TEST_F(SandboxTest, RunsPastTheWorkerMemoryLimitCostAnErrorReply) {
  if (kSanitizerBuild) GTEST_SKIP() << "sanitizers need more address space than this limit";
  // One thread per pool: the address space a worker needs grows with its threads.
  ServerProcess server({"--worker-memory", "2gb", "--intra-op-threads", "1",
                        "--inter-op-threads", "1"});
  RawClient c = RawClient::tcp(server.port());
  // 4 GiB of floats, twice the limit.
  ASSERT_TRUE(call_slow(c, {"AI.SCRIPTSTORE", "huge", "CPU", "ENTRY_POINTS", "1", "huge",
                            "SOURCE",
                            "def huge(x):\n    return torch.ones([1 << 30]) + x.sum()\n"})
                  .is_ok());
  const std::vector<pid_t> workers = model_workers(server.pid());
  ASSERT_FALSE(workers.empty());
  for (pid_t worker : workers) {
    const std::string limit = address_space_limit(worker);
    EXPECT_NE(limit.find("2147483648"), std::string::npos) << worker << ": " << limit;
  }
  ASSERT_EQ(address_space_limit(workers[0]).find("unlimited"), std::string::npos)
      << "no limit: the run below would allocate 4 GiB";
  put(c, "x", {1, 2, 3});
  RespReply r =
      c.call({"AI.SCRIPTEXECUTE", "huge", "huge", "INPUTS", "1", "x", "OUTPUTS", "1", "o"}, 30000);
  ASSERT_TRUE(r.is_error()) << r.str();
  EXPECT_NE(r.text.find("allocate"), std::string::npos) << r.text;
  EXPECT_EQ(c.call({"EXISTS", "o"}).str(), ":0");
  // libtorch loads and runs models under the limit.
  expect_healthy(c);
}

// Starts a server whose stdout and stderr (its log) go to the file `path`.
std::unique_ptr<ServerProcess> start_logging_to(const std::string& path) {
  std::fflush(stdout);
  std::fflush(stderr);
  const int log = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (log < 0) throw std::runtime_error("cannot open " + path);
  const int saved_out = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  const int saved_err = ::fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
  ::dup2(log, STDOUT_FILENO);
  ::dup2(log, STDERR_FILENO);
  const auto restore = [&] {
    ::dup2(saved_out, STDOUT_FILENO);
    ::dup2(saved_err, STDERR_FILENO);
    ::close(saved_out);
    ::close(saved_err);
    ::close(log);
  };
  std::unique_ptr<ServerProcess> server;
  try {
    server = std::make_unique<ServerProcess>();
  } catch (...) {
    restore();
    throw;
  }
  restore();
  return server;
}

// TorchScript's warnings.warn (torch.warn in script source) hands any text to libtorch's warning
// printer, on the worker's stderr: "\n[FORGED] ..." in it used to start lines of the server's
// log, about 0.5 MB a run without limit.
TEST_F(SandboxTest, WhatWorkersWriteReachesTheLogQuotedAndBounded) {
  const std::string dir = make_temp_dir("slipstream-sandbox-log");
  const std::string log_path = dir + "/server.log";
  auto server = start_logging_to(log_path);
  RawClient c = RawClient::tcp(server->port());
  const std::string source =
      "def flood(x):\n"
      "    message = \"\"\n"
      "    for i in range(2000):\n"
      "        message = message + \"\\n[FORGED] 2030-01-01 00:00:00.000 error [1] line \" + "
      "str(i)\n"
      "    torch.warn(message)\n"
      "    torch.warn(message)\n"
      "    return x + 1.0\n";
  ASSERT_TRUE(
      call_slow(c, {"AI.SCRIPTSTORE", "flood", "CPU", "ENTRY_POINTS", "1", "flood", "SOURCE",
                    source})
          .is_ok());
  put(c, "x", {1, 2, 3});
  const auto size_before = std::filesystem::file_size(log_path);
  for (int run = 0; run < 5; ++run) {
    ASSERT_TRUE(
        c.call({"AI.SCRIPTEXECUTE", "flood", "flood", "INPUTS", "1", "x", "OUTPUTS", "1", "o"},
               30000)
            .is_ok());
  }
  EXPECT_EQ(blob(c, "o"), floats({2, 3, 4}));
  server->stop();  // its workers end, and what they wrote is all logged
  const auto added = std::filesystem::file_size(log_path) - size_before;

  std::ifstream log(log_path);
  int forged_lines = 0, unprefixed_lines = 0, quoted_lines = 0, dropped_reports = 0;
  std::size_t longest_line = 0;
  for (std::string line; std::getline(log, line);) {
    longest_line = std::max(longest_line, line.size());
    if (line.starts_with("[FORGED]")) ++forged_lines;
    const std::size_t forged = line.find("[FORGED]");
    if (forged != std::string::npos) {
      const std::size_t prefix = line.find("model worker ");
      if (prefix == std::string::npos || prefix > forged) ++unprefixed_lines;
      ++quoted_lines;
    }
    if (line.find("more lines of its output dropped") != std::string::npos) ++dropped_reports;
  }
  EXPECT_EQ(forged_lines, 0);
  EXPECT_EQ(unprefixed_lines, 0) << "lines with the forged text but not the worker's prefix";
  EXPECT_LE(longest_line, 1300u);  // 1 KiB of text, the log's and the worker's prefixes
  EXPECT_GT(quoted_lines, 0) << "the workers' output is passed on, quoted";
  EXPECT_LE(quoted_lines, 20);
  EXPECT_GE(dropped_reports, 1);
  // 20 lines of at most 1 KiB of text, their prefixes and the count of the others; the runs
  // wrote 2.4 MB.
  EXPECT_LT(added, 32u * 1024) << added << " bytes logged";
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

}  // namespace
}  // namespace slipstream::testing
