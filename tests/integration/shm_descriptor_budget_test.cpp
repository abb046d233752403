// Descriptors in flight per shared-memory client (docs/security.md, "Memory bounds per client"):
// clients that ask for views and never read their replies hold at most their budget of memfds in
// unread messages, are dropped by client-output-buffer-limit, and cannot cut a client that reads
// off the shared-memory path.
#include <sys/resource.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include "support/raw_client.hpp"
#include "support/server_process.hpp"

namespace slipstream::testing {
namespace {

// The server's soft RLIMIT_NOFILE in the test: its budget is then 256 / 8 = 32 per connection,
// and four clients pipelining kViews views each would pass 256 descriptors in flight.
constexpr rlim_t kServerFileLimit = 256;
constexpr std::size_t kBudget = kServerFileLimit / 8;
constexpr int kFlooders = 4;
constexpr int kViews = 500;

/// INFO stats' count of clients dropped by client-output-buffer-limit.
long long output_limit_drops(RawClient& c) {
  const std::string text = c.call({"INFO", "stats"}).text;
  const std::string field = "client_output_buffer_limit_disconnections:";
  const auto at = text.find(field);
  if (at == std::string::npos) return -1;
  return std::stoll(text.substr(at + field.size()));
}

RawClient attached(const ServerProcess& server) {
  RawClient c = RawClient::unix_socket(server.unix_socket());
  EXPECT_TRUE(c.call({"SS.SHM.ATTACH"}).is_ok());
  return c;
}

// BUG (finding C1): Linux counts descriptors in unread SCM_RIGHTS messages against the sending
// user and refuses more (ETOOMANYREFS) past its RLIMIT_NOFILE; four clients that pipelined views
// without reading reached it, and every other shared-memory client was then disconnected (each
// failed send closed its connection). Now each connection has a budget of descriptors in flight,
// replies past it are held until the client reads, a client that never reads is dropped by its
// output limit, and a refused send holds that connection instead of closing it.
TEST(ShmDescriptorBudget, ClientsThatDoNotReadViewsCannotCutOffOthers) {
  ServerProcess server;
  rlimit limit{};
  ASSERT_EQ(::prlimit(server.pid(), RLIMIT_NOFILE, nullptr, &limit), 0);
  limit.rlim_cur = std::min(limit.rlim_max, kServerFileLimit);
  ASSERT_EQ(::prlimit(server.pid(), RLIMIT_NOFILE, &limit, nullptr), 0);

  RawClient admin = RawClient::tcp(server.port());
  ASSERT_TRUE(admin.call({"CONFIG", "SET", "client-output-buffer-limit", "normal 0 8kb 1"})
                  .is_ok());
  ASSERT_TRUE(admin.call({"AI.TENSORSET", "t", "FLOAT", "4", "VALUES", "1", "2", "3", "4"})
                  .is_ok());

  std::vector<RawClient> flooders;
  std::string pipeline;
  for (int i = 0; i < kViews; ++i) pipeline += RawClient::encode({"SS.SHM.VIEW", "t"});
  for (int i = 0; i < kFlooders; ++i) {
    flooders.push_back(attached(server));
    flooders.back().send_raw(pipeline);  // and never read, for now
  }

  // A client that reads its replies keeps getting its views and their descriptors.
  RawClient good = attached(server);
  for (int i = 0; i < 200; ++i) {
    const RespReply view = good.call({"SS.SHM.VIEW", "t"});
    ASSERT_EQ(view.kind, RespReply::Kind::kArray) << "view " << i << ": " << view.str();
    ASSERT_EQ(view.elements.size(), 4u);
    const int fd = good.take_fd();
    ASSERT_GE(fd, 0) << "view " << i << " came without its descriptor";
    ::close(fd);
    EXPECT_EQ(good.call({"SS.SHM.RELEASE", std::to_string(view.elements[0].integer)}).integer, 1);
  }

  // The flooders held at most their budget in flight, then were dropped (replies backed up past
  // the soft output limit for over a second): reading them finds fewer replies than asked for.
  // (Up to 30 s: a loaded machine or a sanitizer build may take seconds.)
  for (int i = 0; i < 3000 && output_limit_drops(admin) < kFlooders; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(output_limit_drops(admin), kFlooders);
  for (RawClient& flooder : flooders) {
    int replies = 0;
    try {
      while (replies < kViews) {
        flooder.read_reply();
        ++replies;
      }
    } catch (const std::runtime_error&) {
    }
    std::size_t descriptors = 0;
    for (int fd = flooder.take_fd(); fd >= 0; fd = flooder.take_fd()) {
      ::close(fd);
      ++descriptors;
    }
    EXPECT_LT(replies, kViews) << "a client that did not read was neither held nor dropped";
    EXPECT_LE(descriptors, kBudget) << "more descriptors than the budget were in flight";
  }

  // The good client is still connected and on the shared-memory path.
  const RespReply last = good.call({"SS.SHM.VIEW", "t"});
  ASSERT_EQ(last.kind, RespReply::Kind::kArray) << last.str();
  EXPECT_GE(good.take_fd(), 0);
  EXPECT_EQ(admin.call({"PING"}).text, "PONG");
}

}  // namespace
}  // namespace slipstream::testing
