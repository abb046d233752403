// Authentication, --maxmemory, --maxclients and password sources against real servers.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "support/raw_client.hpp"
#include "support/server_process.hpp"

namespace slipstream::testing {
namespace {

TEST(AuthTest, NothingButAuthHelloQuitBeforeAuthenticating) {
  ServerProcess server({"--requirepass", "s3cret"});
  RawClient c = RawClient::tcp(server.port());
  EXPECT_EQ(c.call({"PING"}).str(), "-NOAUTH Authentication required.");
  EXPECT_EQ(c.call({"SET", "k", "v"}).str(), "-NOAUTH Authentication required.");
  EXPECT_EQ(c.call({"AI.TENSORSET", "t", "FLOAT", "1"}).str(), "-NOAUTH Authentication required.");
  EXPECT_EQ(c.call({"AUTH", "wrong"}).str(),
            "-WRONGPASS invalid username-password pair or user is disabled.");
  EXPECT_TRUE(c.call({"HELLO", "2"}).is_error());
  EXPECT_TRUE(c.call({"AUTH", "s3cret"}).is_ok());
  EXPECT_EQ(c.call({"PING"}).str(), "+PONG");
  EXPECT_EQ(c.call({"EXISTS", "k", "t"}).str(), ":0");  // nothing was stored before AUTH

  RawClient d = RawClient::tcp(server.port());
  RespReply hello = d.call({"HELLO", "2", "AUTH", "default", "s3cret"});
  EXPECT_EQ(hello.kind, RespReply::Kind::kArray) << hello.str();
  EXPECT_EQ(d.call({"PING"}).str(), "+PONG");
  RawClient e = RawClient::tcp(server.port());
  EXPECT_TRUE(e.call({"QUIT"}).is_ok());
}

TEST(AuthTest, PasswordFromFileAndEnvironment) {
  char path[] = "/tmp/slipstream-pass-XXXXXX";
  int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ::close(fd);
  std::ofstream(path) << "from-file\n";
  {
    ServerProcess server({"--requirepass-file", path});
    RawClient c = RawClient::tcp(server.port());
    EXPECT_TRUE(c.call({"AUTH", "from-file"}).is_ok());
  }
  std::remove(path);
  ::setenv("SLIPSTREAM_PASSWORD", "from-env", 1);
  {
    ServerProcess server;
    RawClient c = RawClient::tcp(server.port());
    EXPECT_EQ(c.call({"GET", "x"}).str(), "-NOAUTH Authentication required.");
    EXPECT_TRUE(c.call({"AUTH", "default", "from-env"}).is_ok());
  }
  ::unsetenv("SLIPSTREAM_PASSWORD");
}

TEST(AuthTest, AuthWithoutConfiguredPasswordIsAnError) {
  ServerProcess server;
  RawClient c = RawClient::tcp(server.port());
  EXPECT_TRUE(c.call({"AUTH", "x"}).is_error());
  EXPECT_EQ(c.call({"PING"}).str(), "+PONG");
}

TEST(MemoryLimitTest, OverMaxmemoryIsOomAndNothingHalfStored) {
  ServerProcess server({"--maxmemory", std::to_string(4 << 20)});
  RawClient c = RawClient::tcp(server.port());
  std::string mib(1 << 20, 'm');
  ASSERT_TRUE(c.call({"AI.TENSORSET", "t0", "UINT8", std::to_string(mib.size()), "BLOB", mib})
                  .is_ok());
  int stored = 1;
  RespReply last;
  for (int i = 1; i < 10; ++i) {
    last = c.call({"AI.TENSORSET", "t" + std::to_string(i), "UINT8", std::to_string(mib.size()),
                   "BLOB", mib});
    if (last.is_error()) break;
    ++stored;
  }
  EXPECT_EQ(last.str(), "-OOM command not allowed when used memory > 'maxmemory'.");
  EXPECT_LT(stored, 5);
  EXPECT_EQ(c.call({"DBSIZE"}).integer, stored);  // the refused tensor is not there at all
  EXPECT_EQ(c.call({"EXISTS", "t" + std::to_string(stored)}).str(), ":0");
  // Reads and deletes still work, and free room for new writes.
  EXPECT_EQ(c.call({"AI.TENSORGET", "t0", "BLOB"}).text.size(), mib.size());
  EXPECT_EQ(c.call({"DEL", "t0", "t1"}).integer, 2);
  EXPECT_TRUE(c.call({"SET", "small", "ok"}).is_ok());
  EXPECT_TRUE(c.call({"CONFIG", "SET", "maxmemory", "0"}).is_ok());
  EXPECT_TRUE(c.call({"AI.TENSORSET", "t9", "UINT8", std::to_string(mib.size()), "BLOB", mib})
                  .is_ok());
}

// Connects once the server has let go of earlier connections (its readiness probes included):
// a closed connection is counted until the server has read its end-of-file, which a loaded
// machine may take a while to get to (up to 30 s here).
RawClient connect_admitted(int port) {
  for (int attempt = 0; attempt < 1500; ++attempt) {
    RawClient c = RawClient::tcp(port);
    try {
      if (c.call({"PING"}).str() == "+PONG") return c;
    } catch (const std::exception&) {
    }
    usleep(20000);
  }
  throw std::runtime_error("never admitted");
}

TEST(ClientLimitTest, MaxclientsRefusesWithAnError) {
  ServerProcess server({"--maxclients", "2"});
  RawClient a = connect_admitted(server.port());
  RawClient b = connect_admitted(server.port());
  RawClient c = RawClient::tcp(server.port());
  EXPECT_EQ(c.read_reply().str(), "-ERR max number of clients reached");
  EXPECT_TRUE(c.closed_by_server());
  a.close();
  RawClient d = connect_admitted(server.port());  // a's place is freed once its close is seen
  EXPECT_EQ(d.call({"PING"}).str(), "+PONG");
}

TEST(ConfigTest, GetSetSubset) {
  ServerProcess server;
  RawClient c = RawClient::tcp(server.port());
  EXPECT_EQ(c.call({"CONFIG", "GET", "no-such-parameter"}).str(), "[]");
  EXPECT_EQ(c.call({"CONFIG", "GET", "maxclients"}).str(), "[$maxclients, $10000]");
  EXPECT_TRUE(c.call({"CONFIG", "SET", "no-such-parameter", "1"}).is_error());
  EXPECT_TRUE(c.call({"CONFIG", "SET", "maxmemory", "-5"}).is_error());
  EXPECT_TRUE(c.call({"CONFIG", "SET", "maxmemory", "1000000"}).is_ok());
  EXPECT_EQ(c.call({"CONFIG", "GET", "maxmemory"}).str(), "[$maxmemory, $1000000]");
  EXPECT_TRUE(c.call({"CONFIG", "SET", "port", "1"}).is_error());  // read-only
}

// BUG (issue 26.D9): `--maxmemory 4gb`, as docs/launcher.md writes it, was refused (bytes only),
// and `CONFIG SET proto-max-bulk-len 0` was accepted, after which every ordinary request was
// refused. Sizes take Redis's units; a bulk limit below 1mb is refused, as Redis refuses it.
TEST(ConfigTest, SizesTakeRedisUnitsAndTheBulkLimitCannotBreakTheProtocol) {
  ServerProcess server({"--maxmemory", "4gb", "--max-bulk-len", "2mb"});
  RawClient c = RawClient::tcp(server.port());
  EXPECT_EQ(c.call({"CONFIG", "GET", "maxmemory"}).str(), "[$maxmemory, $4294967296]");
  EXPECT_EQ(c.call({"CONFIG", "GET", "proto-max-bulk-len"}).str(),
            "[$proto-max-bulk-len, $2097152]");
  EXPECT_TRUE(c.call({"CONFIG", "SET", "maxmemory", "64mb"}).is_ok());
  EXPECT_EQ(c.call({"CONFIG", "GET", "maxmemory"}).str(), "[$maxmemory, $67108864]");
  for (const char* bad : {"0", "1", "1048575", "-1", "lots"}) {
    EXPECT_TRUE(c.call({"CONFIG", "SET", "proto-max-bulk-len", bad}).is_error()) << bad;
  }
  EXPECT_EQ(c.call({"CONFIG", "GET", "proto-max-bulk-len"}).str(),
            "[$proto-max-bulk-len, $2097152]");
  EXPECT_TRUE(c.call({"CONFIG", "SET", "proto-max-bulk-len", "1mb"}).is_ok());
  EXPECT_TRUE(c.call({"SET", "k", std::string(4096, 'x')}).is_ok());  // still usable
}

// Redis settings that clients set (SmartRedis's config_set sends lua-time-limit) are accepted,
// checked, stored and answered, though they change nothing here; unknown names stay refused,
// and a bad pair changes nothing.
TEST(ConfigTest, HarmlessRedisSettingsAreStoredAndAnswered) {
  ServerProcess server;
  RawClient c = RawClient::tcp(server.port());
  EXPECT_EQ(c.call({"CONFIG", "GET", "lua-time-limit"}).str(), "[$lua-time-limit, $5000]");
  EXPECT_TRUE(c.call({"CONFIG", "SET", "lua-time-limit", "1000", "ignore-warnings",
                      "ARM64-COW-BUG"}).is_ok());
  EXPECT_EQ(c.call({"CONFIG", "GET", "lua-time-limit"}).str(), "[$lua-time-limit, $1000]");
  EXPECT_EQ(c.call({"CONFIG", "GET", "ignore-warnings"}).str(),
            "[$ignore-warnings, $ARM64-COW-BUG]");
  EXPECT_TRUE(c.call({"CONFIG", "SET", "lua-time-limit", "soon"}).is_error());
  EXPECT_TRUE(c.call({"CONFIG", "SET", "activerehashing", "maybe"}).is_error());
  EXPECT_TRUE(c.call({"CONFIG", "SET", "activerehashing", "NO"}).is_ok());
  EXPECT_EQ(c.call({"CONFIG", "GET", "activerehashing"}).str(), "[$activerehashing, $no]");
  EXPECT_TRUE(c.call({"CONFIG", "SET", "hz", "20", "lua-time-limt", "1"}).is_error());
  EXPECT_EQ(c.call({"CONFIG", "GET", "hz"}).str(), "[$hz, $10]");  // the bad pair changed nothing
}

}  // namespace
}  // namespace slipstream::testing
