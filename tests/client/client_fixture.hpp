// Shared set-up for the client integration tests: one server process per test program, a Client
// per test over TCP or the Unix socket, and key names unique to the running test.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>

#include "slipstream/client.hpp"
#include "support/server_process.hpp"

namespace slipstream::testing {

enum class Transport { kTcp, kUnix };

inline std::string transport_name(const ::testing::TestParamInfo<Transport>& info) {
  return info.param == Transport::kTcp ? "Tcp" : "Unix";
}

/// The server shared by every test of the program (started on first use).
inline ServerProcess& shared_server() {
  static ServerProcess server;
  return server;
}

/// An integer field of the server's INFO (all sections), or -1 when INFO has none of that name.
inline std::int64_t info_field(Client& client, const std::string& field) {
  Reply reply = client.command({"INFO", "everything"});
  const std::string& text = reply.string;
  auto at = text.find("\n" + field + ":");
  if (at == std::string::npos) return -1;
  at += field.size() + 2;
  return std::stoll(text.substr(at, text.find('\r', at) - at));
}

/// A name unique to the running test, so tests never see each other's keys.
inline std::string unique(const std::string& base) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = std::string(info->test_suite_name()) + "." + info->name();
  for (char& c : name) {
    if (c == '/') c = '_';
  }
  return name + "." + base;
}

/// `base` followed by the decimal numbers, dot-separated: numbered("d", 3) == "d3",
/// numbered("t", 1, 2) == "t1.2".
template <typename... Numbers>
std::string numbered(std::string base, Numbers... numbers) {
  bool first = true;
  auto add = [&](auto n) {
    if (!first) base += '.';
    first = false;
    base += std::to_string(n);
  };
  (add(numbers), ...);
  return base;
}

/// A fixture whose client is connected over the transport of the test parameter.
class ClientTest : public ::testing::TestWithParam<Transport> {
 protected:
  void SetUp() override {
    ServerProcess& server = shared_server();
    client_ = std::make_unique<Client>(GetParam() == Transport::kTcp ? server.tcp_address()
                                                                     : server.unix_address());
  }
  Client& client() { return *client_; }

 private:
  std::unique_ptr<Client> client_;
};

#define SLIPSTREAM_INSTANTIATE_TRANSPORTS(Suite)                                       \
  INSTANTIATE_TEST_SUITE_P(Transports, Suite,                                          \
                           ::testing::Values(::slipstream::testing::Transport::kTcp,   \
                                             ::slipstream::testing::Transport::kUnix), \
                           ::slipstream::testing::transport_name)

}  // namespace slipstream::testing
