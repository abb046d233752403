// SS.WAIT / SS.WAITLEN: blocking waits that park requests, not threads.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "support/raw_client.hpp"
#include "support/server_process.hpp"

namespace slipstream::testing {
namespace {

using Clock = std::chrono::steady_clock;

class WaitTest : public ::testing::Test {
 protected:
  // One I/O thread: if a wait held a thread, nothing else could be served.
  static void SetUpTestSuite() { server_ = new ServerProcess({"--threads", "1"}); }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  RawClient client() { return RawClient::tcp(server_->port()); }
  static ServerProcess* server_;
};
ServerProcess* WaitTest::server_ = nullptr;

TEST_F(WaitTest, ReturnsAtOnceWhenKeysExist) {
  RawClient c = client();
  ASSERT_TRUE(c.call({"SET", "w:a", "1"}).is_ok());
  EXPECT_TRUE(c.call({"SS.WAIT", "w:a", "TIMEOUT", "1000"}).is_ok());
}

// BUG (issue 26.D4): a TIMEOUT of 2^63-1 ms overflowed the timer's deadline into the past and the
// wait answered nil at once. Timeouts saturate at about 34 years: the wait is woken by the write.
TEST_F(WaitTest, HugeTimeoutsMeanNoTimeout) {
  RawClient waiter = client();
  RawClient writer = client();
  waiter.send({"SS.WAIT", "w:huge", "TIMEOUT", "9223372036854775807"});
  waiter.send({"SS.WAITLEN", "w:hugelist", "1", "TIMEOUT", "9223372036854775807"});
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // a nil at once would be there
  ASSERT_TRUE(writer.call({"SET", "w:huge", "1"}).is_ok());
  EXPECT_TRUE(waiter.read_reply().is_ok());
  ASSERT_EQ(writer.call({"RPUSH", "w:hugelist", "a"}).integer, 1);
  EXPECT_EQ(waiter.read_reply().str(), ":1");
}

TEST_F(WaitTest, WakesWhenAnotherClientWritesTheLastKey) {
  RawClient waiter = client();
  RawClient writer = client();
  // Woken by the write, not timed out: a timed-out wait replies nil, not +OK. The timeout is long
  // so that a loaded machine cannot reach it before the writes.
  waiter.send({"SS.WAIT", "w:x", "w:y", "TIMEOUT", "25000"});
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(writer.call({"AI.TENSORSET", "w:x", "FLOAT", "1"}).is_ok());
  // Still parked: only one key exists. The single I/O thread keeps serving others.
  EXPECT_EQ(writer.call({"PING"}).str(), "+PONG");
  ASSERT_TRUE(writer.call({"SET", "w:y", "1"}).is_ok());
  EXPECT_TRUE(waiter.read_reply().is_ok());
}

TEST_F(WaitTest, TimesOutWithNil) {
  RawClient c = client();
  auto start = Clock::now();
  EXPECT_EQ(c.call({"SS.WAIT", "w:never", "TIMEOUT", "200"}).str(), "(nil)");
  auto elapsed = Clock::now() - start;
  EXPECT_GE(elapsed, std::chrono::milliseconds(190));
  // At the timeout, give or take what a loaded machine adds; a lost timer would leave the wait
  // parked until the read gives up (30 s).
  EXPECT_LT(elapsed, std::chrono::seconds(10));
  EXPECT_EQ(c.call({"PING"}).str(), "+PONG");  // the connection goes on
}

TEST_F(WaitTest, PipelinedCommandsAfterAWaitRunAfterIt) {
  RawClient c = client();
  RawClient writer = client();
  c.send_raw(RawClient::encode({"SS.WAIT", "w:p", "TIMEOUT", "5000"}) +
             RawClient::encode({"GET", "w:p"}));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(writer.call({"SET", "w:p", "value"}).is_ok());
  EXPECT_TRUE(c.read_reply().is_ok());
  EXPECT_EQ(c.read_reply().str(), "$value");
}

// Polls INFO until it shows `blocked_clients:<count>` (waits park, and closed connections leave,
// on the server's own time: a loaded machine may take more than a moment); returns INFO's text.
std::string wait_for_blocked_clients(RawClient& c, int count) {
  const std::string wanted = "blocked_clients:" + std::to_string(count) + "\r\n";
  std::string text;
  for (int attempt = 0; attempt < 1500; ++attempt) {
    text = c.call({"INFO", "clients"}).text;
    if (text.find(wanted) != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return text;
}

TEST_F(WaitTest, ManyParkedClientsAndDisconnects) {
  std::vector<RawClient> waiters;
  for (int i = 0; i < 64; ++i) {
    waiters.push_back(client());
    waiters.back().send({"SS.WAIT", "w:many", "TIMEOUT", "0"});
  }
  RawClient writer = client();
  std::string info = wait_for_blocked_clients(writer, 64);
  EXPECT_NE(info.find("blocked_clients:64\r\n"), std::string::npos) << info;
  for (int i = 0; i < 32; ++i) waiters[i].close();  // leave while parked
  info = wait_for_blocked_clients(writer, 32);
  EXPECT_NE(info.find("blocked_clients:32\r\n"), std::string::npos) << info;
  ASSERT_TRUE(writer.call({"SET", "w:many", "go"}).is_ok());
  for (int i = 32; i < 64; ++i) EXPECT_TRUE(waiters[i].read_reply().is_ok());
}

TEST_F(WaitTest, WaitForListLength) {
  RawClient c = client();
  RawClient writer = client();
  c.send({"SS.WAITLEN", "w:list", "3", "TIMEOUT", "5000"});
  for (int i = 0; i < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_EQ(writer.call({"RPUSH", "w:list", "item"}).integer, i + 1);
  }
  EXPECT_EQ(c.read_reply().str(), ":3");
  EXPECT_EQ(c.call({"SS.WAITLEN", "w:list", "2", "TIMEOUT", "10"}).str(), ":3");
  EXPECT_EQ(c.call({"SS.WAITLEN", "w:list", "9", "TIMEOUT", "50"}).str(), "(nil)");
  ASSERT_TRUE(writer.call({"SET", "w:str", "x"}).is_ok());
  EXPECT_TRUE(c.call({"SS.WAITLEN", "w:str", "1", "TIMEOUT", "10"}).is_error());
}

TEST_F(WaitTest, MalformedWaits) {
  RawClient c = client();
  EXPECT_TRUE(c.call({"SS.WAIT", "k", "TIMEOUT", "-1"}).is_error());
  EXPECT_TRUE(c.call({"SS.WAIT", "k", "LIMIT", "10"}).is_error());
  EXPECT_TRUE(c.call({"SS.WAIT", "TIMEOUT", "10"}).is_error());
}

}  // namespace
}  // namespace slipstream::testing
