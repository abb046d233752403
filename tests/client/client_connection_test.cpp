// Client connection behaviour against a real server: addresses and the environment, connection
// and authentication errors, timeouts and reconnection, the command escape hatch, server-side
// waits, and one Client shared by eight threads.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <thread>
#include <vector>

#include "client_fixture.hpp"

namespace slipstream::testing {
namespace {

using namespace std::chrono_literals;

class ConnectionTest : public ClientTest {};
SLIPSTREAM_INSTANTIATE_TRANSPORTS(ConnectionTest);

/// Sets an environment variable for the scope of a test.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(ClientAddress, MalformedAddressesAreInvalidArguments) {
  for (const char* bad : {"localhost", "tcp://host", "tcp://:123", "http://x:1", "host:99999",
                          "host:abc", "unix://"}) {
    ClientOptions options;
    options.address = bad;
    try {
      Client client(options);
      FAIL() << bad;
    } catch (const InvalidArgumentError& e) {
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
}

TEST(ClientAddress, ConnectionRefusedNamesTheAddress) {
  int port = free_loopback_port();
  std::string address = "tcp://127.0.0.1:" + std::to_string(port);
  try {
    Client client(address);
    FAIL() << "connected to a closed port";
  } catch (const ConnectionError& e) {
    EXPECT_EQ(e.code(), ErrorCode::kConnection);
    EXPECT_NE(std::string(e.what()).find(address), std::string::npos) << e.what();
  }
  EXPECT_THROW(Client("unix:///nonexistent/dir/slipstream.sock"), ConnectionError);
}

TEST(ClientAddress, EnvironmentFallbacks) {
  ServerProcess& server = shared_server();
  {
    ScopedEnv address("SLIPSTREAM_ADDRESS", server.unix_address().c_str());
    ScopedEnv ssdb("SSDB", "127.0.0.1:1");
    Client client;
    EXPECT_EQ(client.address(), server.unix_address());
  }
  {
    ScopedEnv address("SLIPSTREAM_ADDRESS", nullptr);
    std::string list = "127.0.0.1:" + std::to_string(server.port()) + ",127.0.0.1:1";
    ScopedEnv ssdb("SSDB", list.c_str());
    Client client;  // the first entry, host:port without a scheme
    EXPECT_EQ(client.address(), server.tcp_address());
    EXPECT_TRUE(client.command({"PING"}).is_status("PONG"));
  }
  {
    ScopedEnv address("SLIPSTREAM_ADDRESS", nullptr);
    ScopedEnv ssdb("SSDB", nullptr);
    EXPECT_THROW(Client(), InvalidArgumentError);
  }
}

TEST(ClientAuth, PasswordRequiredAndChecked) {
  ServerProcess server({"--requirepass", "s3cret"});
  ClientOptions options;
  options.address = server.tcp_address();
  options.password = "wrong";
  try {
    Client client(options);
    FAIL() << "wrong password accepted";
  } catch (const AuthError& e) {
    EXPECT_EQ(e.code(), ErrorCode::kAuth);
    EXPECT_FALSE(e.server_text().empty());
  }
  {
    ScopedEnv password("SLIPSTREAM_PASSWORD", nullptr);
    Client anonymous(server.tcp_address());
    EXPECT_THROW(anonymous.key_exists("k"), AuthError);
  }
  options.password = "s3cret";
  Client client(options);
  client.put_bytes("k", "v");
  EXPECT_EQ(client.get_bytes("k"), "v");
  {
    ScopedEnv password("SLIPSTREAM_PASSWORD", "s3cret");
    Client from_env(server.unix_address());
    EXPECT_TRUE(from_env.key_exists("k"));
  }
}

TEST(ClientTimeout, TimeoutClosesAndNextCallReconnects) {
  ClientOptions options;
  options.address = shared_server().tcp_address();
  options.command_timeout = 200ms;
  Client client(options);
  auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(client.command({"SS.WAIT", unique("never"), "TIMEOUT", "0"}), TimeoutError);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  EXPECT_TRUE(client.command({"PING"}).is_status("PONG"));
}

TEST_P(ConnectionTest, CommandEscapeHatch) {
  Reply ok = client().command({"SET", unique("k"), std::string_view("binary\r\n\0value", 14)});
  EXPECT_TRUE(ok.is_status("OK"));
  client().command({"RPUSH", unique("l"), "a", "b"});
  Reply range = client().command({"LRANGE", unique("l"), "0", "-1"});
  ASSERT_TRUE(range.is_array());
  ASSERT_EQ(range.elements.size(), 2u);
  EXPECT_EQ(range.elements[1].string, "b");
  EXPECT_TRUE(client().command({"GET", unique("none")}).is_nil());
  EXPECT_EQ(client().command({"LLEN", unique("l")}).integer, 2);
  EXPECT_THROW(client().command({"NOSUCHCOMMAND"}), ServerError);
  EXPECT_THROW(client().command({"LLEN", unique("k")}), WrongTypeError);
  EXPECT_THROW(client().command({}), InvalidArgumentError);

  auto replies = client().commands({{"PING"}, {"NOSUCHCOMMAND"}, {"EXISTS", unique("l")}});
  ASSERT_EQ(replies.size(), 3u);
  EXPECT_TRUE(replies[0].is_status("PONG"));
  EXPECT_TRUE(replies[1].is_error());
  EXPECT_EQ(replies[2].integer, 1);
}

TEST_P(ConnectionTest, BytesHelpers) {
  std::string big(100000, 'x');
  client().put_bytes(unique("b"), big);
  EXPECT_EQ(client().get_bytes(unique("b")), big);
  EXPECT_TRUE(client().delete_bytes(unique("b")));
  EXPECT_THROW(client().get_bytes(unique("b")), KeyNotFoundError);
}

TEST_P(ConnectionTest, PollWakesWhenAnotherClientPuts) {
  const std::vector<float> values{1, 2};
  const std::vector<std::int64_t> shape{2};
  // Timed from before the writer starts, so a slow thread start cannot shorten the wait seen.
  auto start = std::chrono::steady_clock::now();
  std::thread writer([&] {
    Client other(shared_server().tcp_address());
    std::this_thread::sleep_for(100ms);
    other.put_tensor<float>(unique("late"), values, shape);
  });
  EXPECT_TRUE(client().poll_tensor(unique("late"), 1000, 10));
  auto waited = std::chrono::steady_clock::now() - start;
  writer.join();
  EXPECT_GE(waited, 80ms);
  EXPECT_LT(waited, 5s);
  EXPECT_TRUE(client().poll_key(unique("late"), 10, 1));
}

TEST_P(ConnectionTest, WaitsTimeOut) {
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(client().poll_tensor(unique("never"), 50, 3));
  EXPECT_GE(std::chrono::steady_clock::now() - start, 140ms);
  EXPECT_FALSE(client().poll_key(unique("never"), 50, 0));
  const std::vector<std::string> keys{unique("a"), unique("b")};
  client().put_bytes(keys[0], "1");
  EXPECT_FALSE(client().wait_for_keys(keys, 0ms));
  EXPECT_FALSE(client().wait_for_keys(keys, 100ms));
  client().put_bytes(keys[1], "1");
  EXPECT_TRUE(client().wait_for_keys(keys, 0ms));
  EXPECT_TRUE(client().wait_for_keys(keys, kWaitForever));
}

// Eight threads put and get through one Client: every exchange must get its own reply.
TEST_P(ConnectionTest, EightThreadsShareOneClient) {
  constexpr int kThreads = 8;
  constexpr int kRounds = 200;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      try {
        for (int r = 0; r < kRounds; ++r) {
          std::vector<std::int32_t> values(64 + t * 100 + r, t * 100000 + r);
          const std::vector<std::int64_t> shape{static_cast<std::int64_t>(values.size())};
          std::string name = unique(numbered("t", t, r % 5));
          client().put_tensor<std::int32_t>(name, values, shape);
          std::vector<std::int32_t> out(values.size());
          client().unpack_tensor<std::int32_t>(name, out, shape);
          Tensor got = client().get_tensor(name);
          if (out != values || got.size() != values.size() ||
              got.data<std::int32_t>()[0] != values[0]) {
            ++failures;
          }
        }
      } catch (const std::exception& e) {
        ADD_FAILURE() << "thread " << t << ": " << e.what();
        ++failures;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace slipstream::testing
