// Readiness after start-up: `slipstream wait-ready` and `slipstream server --daemonize`, run as
// a job script would run them, against real servers.
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "support/raw_client.hpp"
#include "support/server_process.hpp"

namespace slipstream::testing {
namespace {

namespace fs = std::filesystem;

struct CommandResult {
  int status = -1;     // exit status
  std::string output;  // stdout and stderr together
};

// Runs `slipstream ARGS` through the shell (arguments are test-made paths and numbers).
CommandResult run_slipstream(const std::string& args, const std::string& env = "") {
  const std::string command = env + " " + SLIPSTREAM_BINARY + " " + args + " 2>&1";
  CommandResult result;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  while (std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe))
    result.output.append(buffer, n);
  const int status = ::pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

TEST(WaitReady, ReturnsOnceTheServerAnswers) {
  ServerProcess server;
  CommandResult r = run_slipstream("wait-ready " + server.tcp_address() + " --timeout 30");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("ready: " + server.tcp_address()), std::string::npos) << r.output;
}

TEST(WaitReady, WaitsForEveryAddressOfAnSsdbList) {
  ServerProcess a;
  ServerProcess b;
  CommandResult r =
      run_slipstream("wait-ready --timeout 30",
                     "env -u SLIPSTREAM_ADDRESS SSDB=127.0.0.1:" + std::to_string(a.port()) + "," +
                         b.unix_address());
  EXPECT_EQ(r.status, 0) << r.output;
}

TEST(WaitReady, WaitsForAServerThatStartsLater) {
  const int port = free_loopback_port();
  CommandResult r;
  std::thread waiter([&] {
    r = run_slipstream("wait-ready 127.0.0.1:" + std::to_string(port) + " --timeout 60");
  });
  ServerProcess server({}, {}, port);
  waiter.join();
  EXPECT_EQ(r.status, 0) << r.output;
}

TEST(WaitReady, FailsAtTheTimeoutNamingTheAddressAndTheReason) {
  const std::string address = "127.0.0.1:" + std::to_string(free_loopback_port());
  CommandResult r = run_slipstream("wait-ready " + address + " --timeout 0.5");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find(address + " did not answer PING within 0.5 s"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("Connection refused"), std::string::npos) << r.output;
}

TEST(WaitReady, WithoutAnAddressSaysWhereItLooked) {
  CommandResult r = run_slipstream("wait-ready", "env -u SLIPSTREAM_ADDRESS -u SSDB");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("neither SLIPSTREAM_ADDRESS nor SSDB"), std::string::npos) << r.output;
}

class Daemonize : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = make_temp_dir("slipstream-daemon"); }
  void TearDown() override {
    // A daemon the test left running (a failed expectation) is stopped through its pid file.
    std::ifstream in(dir_ + "/server.pid");
    long pid = 0;
    if (in >> pid && pid > 0) ::kill(static_cast<pid_t>(pid), SIGKILL);
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  std::string dir_;
};

TEST_F(Daemonize, ReturnsWhenReadyAndWritesThePidFile) {
  const int port = free_loopback_port();
  const std::string pid_file = dir_ + "/server.pid";
  CommandResult r = run_slipstream("server --daemonize --port " + std::to_string(port) + " --dir " +
                                   dir_ + " --pidfile " + pid_file);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("ready on tcp://127.0.0.1:" + std::to_string(port)), std::string::npos)
      << r.output;
  // Ready means ready: the first request right after the command returned is served, by the
  // process named in the pid file.
  RawClient client = RawClient::tcp(port);
  EXPECT_EQ(client.call({"PING"}).str(), "+PONG");
  std::ifstream in(pid_file);
  long pid = 0;
  ASSERT_TRUE(in >> pid) << "no pid in " << pid_file;
  EXPECT_NE(client.call({"INFO", "server"}).text.find("process_id:" + std::to_string(pid) + "\r\n"),
            std::string::npos);
  EXPECT_TRUE(fs::exists(dir_ + "/slipstream.log"));
  // Stopped, it removes its pid file (after saving).
  ASSERT_EQ(::kill(static_cast<pid_t>(pid), SIGTERM), 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (fs::exists(pid_file) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_FALSE(fs::exists(pid_file));
}

// The port is taken by another server: that server answers PING, but it is not the one started,
// so the command must report the failure with the reason from the new server's log.
TEST_F(Daemonize, ReportsWhyTheServerDidNotStart) {
  ServerProcess other;
  CommandResult r = run_slipstream("server --daemonize --port " + std::to_string(other.port()) +
                                   " --dir " + dir_ + " --pidfile " + dir_ + "/server.pid");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("exited with status 1 during start-up"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Address already in use"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir_ + "/server.pid"));
}

// The server started, but its pid file cannot be written: the command fails and the server it
// started is stopped, not left running where nobody can find it.
TEST_F(Daemonize, AnUnwritablePidFileStopsTheServer) {
  const int port = free_loopback_port();
  CommandResult r = run_slipstream("server --daemonize --port " + std::to_string(port) + " --dir " +
                                   dir_ + " --pidfile " + dir_ + "/missing/server.pid");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("cannot write the pid file"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("stopped the server"), std::string::npos) << r.output;
  CommandResult after = run_slipstream("wait-ready tcp://127.0.0.1:" + std::to_string(port) +
                                       " --timeout 0.5");
  EXPECT_NE(after.status, 0) << "a server still answers: " << after.output;
}

TEST_F(Daemonize, NeedsAnAddressToCheck) {
  CommandResult r = run_slipstream("server --daemonize --port 0 --dir " + dir_);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("--daemonize needs --port or --unixsocket"), std::string::npos)
      << r.output;
}

// By default the server runs one I/O thread per CPU it may run on (its affinity mask, as set by
// taskset or a job's cpuset), not one per CPU of the machine.
TEST(IoThreads, FollowTheAffinityMask) {
  cpu_set_t all;
  ASSERT_EQ(::sched_getaffinity(0, sizeof all, &all), 0);
  int first = 0;
  while (!CPU_ISSET(first, &all)) ++first;
  auto io_threads = [](const ServerProcess& server) {
    RawClient client = RawClient::tcp(server.port());
    const std::string info = client.call({"INFO", "server"}).text;
    const auto at = info.find("io_threads_active:");
    return at == std::string::npos ? -1 : std::atoi(info.c_str() + at + 18);
  };
  {
    ServerProcess server;
    EXPECT_EQ(io_threads(server), CPU_COUNT(&all));
  }
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(::sched_setaffinity(0, sizeof one, &one), 0);  // the server inherits it
  {
    ServerProcess server;
    ::sched_setaffinity(0, sizeof all, &all);
    EXPECT_EQ(io_threads(server), 1);
    ServerProcess explicit_threads({"--threads", "3"});
    EXPECT_EQ(io_threads(explicit_threads), 3);
  }
  ::sched_setaffinity(0, sizeof all, &all);
}

}  // namespace
}  // namespace slipstream::testing
