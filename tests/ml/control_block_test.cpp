// The control block the server and a model worker meet in (src/ml/sandbox/control_block.hpp):
// messages handed over through it and through the socket, and what a worker that misbehaves
// costs the server's side: a malformed reply, its deadline, or a prompt "closed", never a hang.
// Both sides run in this process (two threads); the block and the socket are real.
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "ml/sandbox/channel.hpp"
#include "ml/sandbox/control_block.hpp"

namespace slipstream::ml::sandbox {
namespace {

using namespace std::chrono_literals;

// The server's block, the worker's view of it, and the socket between them.
struct Pair {
  int server_fd = -1, worker_fd = -1;
  std::unique_ptr<ControlBlock> server, worker;
  Pair() {
    int fds[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
    server_fd = fds[0];
    worker_fd = fds[1];
    std::string error;
    server = ControlBlock::create(&error);
    EXPECT_NE(server, nullptr) << error;
    worker = ControlBlock::attach(::dup(server->fd()), &error);
    EXPECT_NE(worker, nullptr) << error;
  }
  ~Pair() {
    if (server_fd >= 0) ::close(server_fd);
    if (worker_fd >= 0) ::close(worker_fd);
  }
};

std::string frame_of(MessageType type, const std::string& text) {
  MessageWriter w(type);
  w.str(text);
  std::string frame;
  EXPECT_TRUE(w.frame_into(frame, kControlAreaBytes));
  return frame;
}

TEST(ControlBlockTest, RequestsAndRepliesMeetInTheBlockOrOnTheSocket) {
  Pair p;
  std::thread worker([&] {
    for (int i = 0; i < 200; ++i) {
      Posted where{};
      std::string frame;
      ASSERT_EQ(p.worker->wait_request(p.worker_fd, where, frame), ChannelError::kNone);
      ASSERT_EQ(where, Posted::kInBlock);
      MessageReader reader(p.worker_fd);
      ASSERT_TRUE(reader.feed(frame));
      MessageType type{};
      std::uint64_t length = 0;
      std::string text;
      ASSERT_EQ(reader.next(kNoDeadline, type, length), ChannelError::kNone);
      ASSERT_EQ(reader.str(text), ChannelError::kNone);
      if (i % 2 == 0) {
        p.worker->post_reply(Posted::kInBlock, frame_of(MessageType::kOk, text + "!"));
      } else {  // too large for the block: announced there, sent on the socket
        p.worker->post_reply(Posted::kOnSocket);
        MessageWriter w(MessageType::kOk);
        w.str(std::string(kControlAreaBytes + 10, 'x'));
        ASSERT_EQ(w.send(p.worker_fd, kNoDeadline), ChannelError::kNone);
      }
    }
  });
  MessageReader reader(p.server_fd);
  for (int i = 0; i < 200; ++i) {
    p.server->post_request(Posted::kInBlock, frame_of(MessageType::kRunModel, std::to_string(i)));
    Posted where{};
    std::string frame;
    ASSERT_EQ(p.server->wait_reply(p.server_fd, std::chrono::steady_clock::now() + 30s, where,
                                   frame),
              ChannelError::kNone);
    if (where == Posted::kInBlock) ASSERT_TRUE(reader.feed(frame));
    MessageType type{};
    std::uint64_t length = 0;
    std::string text;
    ASSERT_EQ(reader.next(std::chrono::steady_clock::now() + 30s, type, length),
              ChannelError::kNone);
    ASSERT_EQ(reader.str(text), ChannelError::kNone);
    if (i % 2 == 0) {
      EXPECT_EQ(where, Posted::kInBlock);
      EXPECT_EQ(text, std::to_string(i) + "!");
    } else {
      EXPECT_EQ(where, Posted::kOnSocket);
      EXPECT_EQ(text.size(), kControlAreaBytes + 10);
    }
  }
  worker.join();
}

// Hostile participants: a worker that gives the turn back with a length past its area, or with
// bytes that are not a frame, gets a malformed reply; one that never gives it back costs the call
// its deadline; one that dies (its socket closes) is noticed at once, not at the deadline.
TEST(ControlBlockTest, AMisbehavingWorkerCostsAnErrorItsDeadlineOrClosedNeverAHang) {
  for (const int how : {0, 1}) {
    SCOPED_TRACE(how == 0 ? "length past the area" : "not a frame");
    Pair p;
    p.server->post_request(Posted::kInBlock, frame_of(MessageType::kRunModel, "run"));
    Posted where{};
    std::string frame;
    ASSERT_EQ(p.worker->wait_request(p.worker_fd, where, frame), ChannelError::kNone);
    if (how == 0) {
      // What post_reply would never write: a length past the area, written into the block by
      // hand (its words: turn, request place and length, reply place and length), and the turn.
      void* raw = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, p.server->fd(), 0);
      ASSERT_NE(raw, MAP_FAILED);
      auto* words = static_cast<std::uint32_t*>(raw);
      words[3] = 0;            // in the block
      words[4] = 0xffffffffu;  // bytes
      __atomic_store_n(&words[0], 2u, __ATOMIC_RELEASE);
      ::munmap(raw, 4096);
    } else {
      p.worker->post_reply(Posted::kInBlock, "garbage bytes, not a frame");
    }
    EXPECT_EQ(p.server->wait_reply(p.server_fd, std::chrono::steady_clock::now() + 30s, where,
                                   frame),
              ChannelError::kProtocol);
  }
  {
    Pair p;  // never answers
    p.server->post_request(Posted::kInBlock, frame_of(MessageType::kRunModel, "run"));
    Posted where{};
    std::string frame;
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(p.server->wait_reply(p.server_fd, start + 200ms, where, frame),
              ChannelError::kTimedOut);
    EXPECT_GE(std::chrono::steady_clock::now() - start, 200ms);
  }
  {
    Pair p;  // dies while the server waits (generous bound: only that it is not the deadline)
    p.server->post_request(Posted::kInBlock, frame_of(MessageType::kRunModel, "run"));
    std::thread dies([&] {
      std::this_thread::sleep_for(50ms);
      ::close(std::exchange(p.worker_fd, -1));
    });
    Posted where{};
    std::string frame;
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(p.server->wait_reply(p.server_fd, start + 600s, where, frame),
              ChannelError::kClosed);
    EXPECT_LT(std::chrono::steady_clock::now() - start, 300s);
    dies.join();
  }
}

}  // namespace
}  // namespace slipstream::ml::sandbox
