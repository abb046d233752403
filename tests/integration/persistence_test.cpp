// Snapshots through a real server: SAVE, SHUTDOWN, SIGTERM, restart with the data, and refusal
// to start from a corrupt snapshot.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "support/raw_client.hpp"
#include "support/server_process.hpp"

namespace slipstream::testing {
namespace {

class PersistenceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/slipstream-data-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void fill(RawClient& c) {
    ASSERT_TRUE(c.call({"SET", "s", std::string("bin\0\r\nary", 9)}).is_ok());
    ASSERT_TRUE(c.call({"AI.TENSORSET", "t", "DOUBLE", "2", "VALUES", "1.5", "-2"}).is_ok());
    ASSERT_EQ(c.call({"HSET", "h", "a", "1", "b", "2"}).integer, 2);
    ASSERT_EQ(c.call({"RPUSH", "l", "x", "y", "z"}).integer, 3);
  }
  void check(RawClient& c) {
    EXPECT_EQ(c.call({"GET", "s"}).text, std::string("bin\0\r\nary", 9));
    EXPECT_EQ(c.call({"AI.TENSORGET", "t", "META", "VALUES"}).str(),
              "[$dtype, $DOUBLE, $shape, [:2], $values, [$1.5, $-2]]");
    EXPECT_EQ(c.call({"HGETALL", "h"}).str(), "[$a, $1, $b, $2]");
    EXPECT_EQ(c.call({"LRANGE", "l", "0", "-1"}).str(), "[$x, $y, $z]");
    EXPECT_EQ(c.call({"DBSIZE"}).integer, 4);
  }
  std::string dir_;
};

TEST_F(PersistenceTest, SaveThenRestartRestoresEveryType) {
  {
    ServerProcess server({}, dir_);
    RawClient c = RawClient::tcp(server.port());
    fill(c);
    std::string before = c.call({"INFO", "persistence"}).text;
    EXPECT_NE(before.find("rdb_last_save_time:0"), std::string::npos);
    EXPECT_TRUE(c.call({"SAVE"}).is_ok());
    std::string after = c.call({"INFO", "persistence"}).text;
    EXPECT_EQ(after.find("rdb_last_save_time:0\r"), std::string::npos) << after;
    EXPECT_GT(c.call({"LASTSAVE"}).integer, 0);
    ASSERT_TRUE(c.call({"SET", "unsaved", "x"}).is_ok());
    server.stop(SIGKILL);  // a crash: only what SAVE wrote survives
  }
  ServerProcess server({}, dir_);
  RawClient c = RawClient::tcp(server.port());
  check(c);
  EXPECT_EQ(c.call({"EXISTS", "unsaved"}).integer, 0);
}

TEST_F(PersistenceTest, ShutdownSavesAndNosaveDoesNot) {
  {
    ServerProcess server({}, dir_);
    RawClient c = RawClient::tcp(server.port());
    fill(c);
    c.send({"SHUTDOWN"});
    // Guards against a hang, not speed checks: shutting down takes seconds on a loaded machine.
    EXPECT_TRUE(c.closed_by_server());
    EXPECT_TRUE(server.wait_exit(std::chrono::seconds(30)));
  }
  {
    ServerProcess server({}, dir_);
    RawClient c = RawClient::tcp(server.port());
    check(c);
    ASSERT_TRUE(c.call({"SET", "extra", "1"}).is_ok());
    c.send({"SHUTDOWN", "NOSAVE"});
    EXPECT_TRUE(server.wait_exit(std::chrono::seconds(30)));
  }
  ServerProcess server({}, dir_);
  RawClient c = RawClient::tcp(server.port());
  EXPECT_EQ(c.call({"EXISTS", "extra"}).integer, 0);
  check(c);
}

TEST_F(PersistenceTest, SigtermSaves) {
  {
    ServerProcess server({}, dir_);
    RawClient c = RawClient::tcp(server.port());
    fill(c);
    int status = server.stop(SIGTERM);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  ServerProcess server({}, dir_);
  RawClient c = RawClient::tcp(server.port());
  check(c);
}

TEST_F(PersistenceTest, CorruptSnapshotIsRefusedAtStartUp) {
  {
    ServerProcess server({}, dir_);
    RawClient c = RawClient::tcp(server.port());
    fill(c);
    ASSERT_TRUE(c.call({"SAVE"}).is_ok());
    c.send({"SHUTDOWN", "NOSAVE"});
    ASSERT_TRUE(server.wait_exit(std::chrono::seconds(30)));
  }
  std::string path = dir_ + "/dump.slip";
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(30);
    f.put('\x7f');
  }
  std::string log = dir_ + "/start.log";
  std::string command = std::string(SLIPSTREAM_BINARY) + " server --port " +
                        std::to_string(free_loopback_port()) + " --dir " + dir_ + " > " + log +
                        " 2>&1";
  int status = std::system(command.c_str());
  EXPECT_NE(WEXITSTATUS(status), 0);
  std::ifstream in(log);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("corrupt"), std::string::npos) << text;
  EXPECT_TRUE(std::filesystem::exists(path));  // the file is left for inspection, not replaced
}

}  // namespace
}  // namespace slipstream::testing
