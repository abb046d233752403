// Wire-level behaviour of a real server: pipelining, inline commands, malformed input and
// resynchronisation, argument limits, RESP3, case-insensitive names.
#include <gtest/gtest.h>

#include "support/raw_client.hpp"
#include "support/server_process.hpp"

namespace slipstream::testing {
namespace {

class ProtocolTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { server_ = new ServerProcess({"--max-bulk-len", "1048576"}); }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  RawClient client() { return RawClient::tcp(server_->port()); }
  static ServerProcess* server_;
};
ServerProcess* ProtocolTest::server_ = nullptr;

TEST_F(ProtocolTest, PipelinedRequestsAreAnsweredInOrder) {
  RawClient c = client();
  std::string batch;
  for (int i = 0; i < 500; ++i) {
    batch += RawClient::encode({"SET", "pipe:" + std::to_string(i), std::to_string(i)});
  }
  for (int i = 0; i < 500; ++i) batch += RawClient::encode({"GET", "pipe:" + std::to_string(i)});
  c.send_raw(batch);
  for (int i = 0; i < 500; ++i) EXPECT_TRUE(c.read_reply().is_ok());
  for (int i = 0; i < 500; ++i) EXPECT_EQ(c.read_reply().str(), "$" + std::to_string(i));
}

TEST_F(ProtocolTest, RequestSplitAcrossManyWritesIsReassembled) {
  RawClient c = client();
  std::string request = RawClient::encode({"SET", "split", std::string(100000, 'x')});
  for (std::size_t i = 0; i < request.size(); i += 7777) {
    c.send_raw(std::string_view(request).substr(i, 7777));
    usleep(100);
  }
  EXPECT_TRUE(c.read_reply().is_ok());
  EXPECT_EQ(c.call({"STRLEN", "split"}).str(), ":100000");
}

TEST_F(ProtocolTest, InlineCommandsWithQuotes) {
  RawClient c = client();
  c.send_raw("PING\r\n");
  EXPECT_EQ(c.read_reply().str(), "+PONG");
  c.send_raw("SET inline \"a b\\x41\\n\"\r\n");
  EXPECT_TRUE(c.read_reply().is_ok());
  EXPECT_EQ(c.call({"GET", "inline"}).str(), "$a bA\n");
  c.send_raw("\r\n\r\nECHO 'it''s'\r\n");  // empty lines are ignored
  EXPECT_TRUE(c.read_reply().is_error());  // closing quote not followed by a space
  c.send_raw("ECHO \"unbalanced\r\n");
  EXPECT_EQ(c.read_reply().str(), "-ERR Protocol error: unbalanced quotes in request");
  c.send_raw("PING again\r\n");  // the connection survived
  EXPECT_EQ(c.read_reply().str(), "$again");
}

TEST_F(ProtocolTest, CommandNamesAreCaseInsensitive) {
  RawClient c = client();
  EXPECT_TRUE(c.call({"sEt", "case", "1"}).is_ok());
  EXPECT_EQ(c.call({"get", "case"}).str(), "$1");
  EXPECT_TRUE(c.call({"ai.tensorset", "case:t", "float", "1", "VALUES", "2"}).is_ok());
}

TEST_F(ProtocolTest, UnknownCommandAndWrongArity) {
  RawClient c = client();
  EXPECT_EQ(c.call({"NOSUCH", "a", "b"}).str(),
            "-ERR unknown command 'NOSUCH', with args beginning with: 'a' 'b' ");
  EXPECT_EQ(c.call({"GET"}).str(), "-ERR wrong number of arguments for 'get' command");
  EXPECT_EQ(c.call({"AI.TENSORSET", "k", "FLOAT"}).str(),
            "-ERR wrong number of arguments for 'AI.TENSORSET' command");
  EXPECT_EQ(c.call({"PING"}).str(), "+PONG");
}

TEST_F(ProtocolTest, OversizedBulkIsRefusedAndTheStreamResynchronises) {
  RawClient c = client();
  ASSERT_TRUE(c.call({"SET", "big", "before"}).is_ok());
  // 2 MiB argument against --max-bulk-len 1 MiB: refused, the key keeps its value, and the
  // connection goes on with the next request.
  std::string request = RawClient::encode({"SET", "big", std::string(2 << 20, 'z')});
  request += RawClient::encode({"GET", "big"});
  c.send_raw(request);
  RespReply refused = c.read_reply();
  ASSERT_TRUE(refused.is_error());
  EXPECT_NE(refused.text.find("exceeds the maximum"), std::string::npos) << refused.text;
  EXPECT_EQ(c.read_reply().str(), "$before");
}

TEST_F(ProtocolTest, MalformedMultibulkLengthClosesTheConnection) {
  RawClient c = client();
  c.send_raw("*abc\r\n");
  EXPECT_EQ(c.read_reply().str(), "-ERR Protocol error: invalid multibulk length");
  EXPECT_TRUE(c.closed_by_server());
}

TEST_F(ProtocolTest, MissingDollarClosesTheConnection) {
  RawClient c = client();
  c.send_raw("*1\r\n+PING\r\n");
  EXPECT_EQ(c.read_reply().str(), "-ERR Protocol error: expected '$', got '+'");
  EXPECT_TRUE(c.closed_by_server());
}

TEST_F(ProtocolTest, InvalidBulkLengthClosesTheConnection) {
  RawClient c = client();
  c.send_raw("*1\r\n$-5\r\n");
  EXPECT_EQ(c.read_reply().str(), "-ERR Protocol error: invalid bulk length");
  EXPECT_TRUE(c.closed_by_server());
}

TEST_F(ProtocolTest, DisconnectMidPayloadLeavesNothingBehind) {
  {
    RawClient c = client();
    std::string request = RawClient::encode({"SET", "half", std::string(500000, 'h')});
    c.send_raw(std::string_view(request).substr(0, request.size() / 2));
    usleep(50000);
  }  // closed mid-payload
  RawClient c = client();
  EXPECT_EQ(c.call({"EXISTS", "half"}).str(), ":0");
  {
    RawClient t = client();
    std::string header = "*6\r\n$12\r\nAI.TENSORSET\r\n$5\r\nhalf2\r\n$5\r\nFLOAT\r\n$6\r\n100000"
                         "\r\n$4\r\nBLOB\r\n$400000\r\n";
    t.send_raw(header + std::string(1000, 'a'));
    usleep(50000);
  }
  EXPECT_EQ(c.call({"EXISTS", "half2"}).str(), ":0");
  EXPECT_EQ(c.call({"PING"}).str(), "+PONG");
}

TEST_F(ProtocolTest, Resp3AfterHello3) {
  RawClient c = client();
  RespReply hello = c.call({"HELLO", "3"});
  ASSERT_EQ(hello.kind, RespReply::Kind::kMap) << hello.str();
  EXPECT_EQ(hello.elements[0].text, "server");
  EXPECT_EQ(hello.elements[5].integer, 3);
  EXPECT_EQ(c.call({"GET", "resp3:missing"}).str(), "(nil)");
  ASSERT_EQ(c.call({"HSET", "resp3:h", "f", "v"}).str(), ":1");
  EXPECT_EQ(c.call({"HGETALL", "resp3:h"}).str(), "{$f, $v}");
  RespReply hello2 = c.call({"HELLO", "2"});
  EXPECT_EQ(hello2.kind, RespReply::Kind::kArray);
  EXPECT_EQ(hello2.elements.size(), 14u);
  EXPECT_EQ(c.call({"HELLO", "4"}).str(), "-NOPROTO unsupported protocol version");
}

TEST_F(ProtocolTest, UnixSocketServesTheSameKeyspace) {
  RawClient tcp = client();
  RawClient local = RawClient::unix_socket(server_->unix_socket());
  ASSERT_TRUE(tcp.call({"SET", "shared", "yes"}).is_ok());
  EXPECT_EQ(local.call({"GET", "shared"}).str(), "$yes");
}

TEST_F(ProtocolTest, CommandTableIsIntrospectable) {
  RawClient c = client();
  RespReply count = c.call({"COMMAND", "COUNT"});
  ASSERT_EQ(count.kind, RespReply::Kind::kInteger);
  RespReply all = c.call({"COMMAND"});
  EXPECT_EQ(static_cast<long long>(all.elements.size()), count.integer);
  RespReply info = c.call({"COMMAND", "INFO", "get", "nosuch"});
  ASSERT_EQ(info.elements.size(), 2u);
  EXPECT_EQ(info.elements[0].elements[0].str(), "$get");
  EXPECT_EQ(info.elements[0].elements[1].str(), ":2");
  EXPECT_EQ(info.elements[0].elements.size(), 10u);
  EXPECT_EQ(info.elements[1].kind, RespReply::Kind::kNullArray);
}

TEST_F(ProtocolTest, ClientNameAndList) {
  RawClient c = client();
  EXPECT_EQ(c.call({"CLIENT", "GETNAME"}).str(), "(nil)");
  EXPECT_TRUE(c.call({"CLIENT", "SETNAME", "sim-rank-0"}).is_ok());
  EXPECT_EQ(c.call({"CLIENT", "GETNAME"}).str(), "$sim-rank-0");
  RespReply list = c.call({"CLIENT", "LIST"});
  EXPECT_NE(list.text.find("name=sim-rank-0"), std::string::npos) << list.text;
  EXPECT_TRUE(c.call({"CLIENT", "SETNAME", "has space"}).is_error());
  EXPECT_EQ(c.call({"CLIENT", "ID"}).kind, RespReply::Kind::kInteger);
}

TEST_F(ProtocolTest, InfoSections) {
  RawClient c = client();
  RespReply all = c.call({"INFO", "EVERYTHING"});
  for (const char* section : {"# Server", "# Clients", "# Memory", "# Persistence", "# Stats",
                              "# Keyspace", "rdb_last_save_time:", "used_memory:"}) {
    EXPECT_NE(all.text.find(section), std::string::npos) << section;
  }
  RespReply memory = c.call({"INFO", "memory"});
  EXPECT_NE(memory.text.find("# Memory"), std::string::npos);
  EXPECT_EQ(memory.text.find("# Server"), std::string::npos);
}

TEST_F(ProtocolTest, QuitClosesAfterReplying) {
  RawClient c = client();
  EXPECT_TRUE(c.call({"QUIT"}).is_ok());
  EXPECT_TRUE(c.closed_by_server());
}

// The server reads a request's bytes and the end of stream behind them with one recv, then waits
// for the socket's next event (src/server/net/read_socket.hpp): an end that came with the bytes
// must still be seen. A client that half-closes after its requests and waits for the server to
// close (nc -N) is closed once its replies are written; clients that leave mid-request or right
// after a request are dropped.
int connected_clients(RawClient& c) {
  const std::string info = c.call({"INFO", "clients"}).str();
  const std::size_t at = info.find("connected_clients:");
  return at == std::string::npos ? -1 : std::stoi(info.substr(at + 18));
}

TEST_F(ProtocolTest, HalfClosedClientsAreClosedOnceAnswered) {
  for (int i = 0; i < 20; ++i) {
    const bool local = i % 2 == 0;
    RawClient c = local ? RawClient::unix_socket(server_->unix_socket()) : client();
    EXPECT_EQ(c.call({"PING"}).str(), "+PONG");  // the server now waits for the next request
    // The end of stream right behind the requests: both are there when the server wakes up.
    c.send_raw(RawClient::encode({"PING"}) + RawClient::encode({"EXISTS", "nothing"}));
    ::shutdown(c.fd(), SHUT_WR);
    EXPECT_EQ(c.read_reply().str(), "+PONG") << (local ? "unix" : "tcp");
    EXPECT_EQ(c.read_reply().str(), ":0");
    EXPECT_TRUE(c.closed_by_server()) << (local ? "unix" : "tcp");
  }
}

// Waits up to 30 s for the server to count `expected` clients (closes are handled on the
// server's own time, which a loaded machine stretches); returns the last count.
int wait_for_clients(RawClient& watcher, int expected) {
  int now = connected_clients(watcher);
  for (int attempt = 0; attempt < 1500 && now != expected; ++attempt) {
    usleep(20000);
    now = connected_clients(watcher);
  }
  return now;
}

TEST_F(ProtocolTest, ClientsThatLeaveMidRequestOrRightAfterOneAreDropped) {
  RawClient watcher = client();
  // Only the watcher once the clients of earlier tests (and the start-up check) are gone.
  ASSERT_EQ(wait_for_clients(watcher, 1), 1);
  for (int i = 0; i < 20; ++i) {
    const bool local = i % 2 == 0;
    RawClient c = local ? RawClient::unix_socket(server_->unix_socket()) : client();
    std::string request = RawClient::encode({"SET", "left", "value"});
    if (i % 4 < 2) request.resize(request.size() / 2);  // mid-request
    c.send_raw(request);
    c.close();
  }
  EXPECT_EQ(wait_for_clients(watcher, 1), 1);
}

}  // namespace
}  // namespace slipstream::testing
