// The model sandbox's pieces that need no server: the framed channel (src/ml/sandbox/channel.hpp)
// and the confinement of a worker process (confine_worker), checked in a forked child.
#include <errno.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <thread>

#include "ml/sandbox/channel.hpp"
#include "ml/sandbox/worker.hpp"

namespace slipstream::ml::sandbox {
namespace {

struct SocketPair {
  int a = -1, b = -1;
  SocketPair() {
    int fds[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    a = fds[0];
    b = fds[1];
  }
  ~SocketPair() {
    ::close(a);
    ::close(b);
  }
};

TEST(SandboxChannelTest, TensorsAndStringsRoundTrip) {
  SocketPair pair;
  std::vector<float> big(300000);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(i) * 0.5f;
  const std::vector<std::int64_t> big_shape = {600, 500};
  const std::vector<std::int64_t> empty_shape = {0, 3};
  const std::vector<TensorView> tensors = {
      {DType::kFloat32, big_shape, big.data(), big.size() * sizeof(float)},
      {DType::kInt64, empty_shape, nullptr, 0}};
  std::thread writer([&] {
    MessageWriter w(MessageType::kRunScript);
    w.u64(42);
    w.str("entry");
    w.strs(std::vector<std::string>{"k1", "k2"});
    w.tensors(tensors);
    EXPECT_EQ(w.send(pair.a, kNoDeadline), ChannelError::kNone);
  });
  MessageReader reader(pair.b);
  MessageType type{};
  std::uint64_t length = 0;
  ASSERT_EQ(reader.next(kNoDeadline, type, length), ChannelError::kNone);
  EXPECT_EQ(type, MessageType::kRunScript);
  std::uint64_t id = 0;
  std::string function;
  std::vector<std::string> keys;
  std::vector<OwnedTensor> out;
  ASSERT_EQ(reader.u64(id), ChannelError::kNone);
  ASSERT_EQ(reader.str(function), ChannelError::kNone);
  ASSERT_EQ(reader.strs(keys), ChannelError::kNone);
  ASSERT_EQ(reader.tensors(out), ChannelError::kNone);
  writer.join();
  EXPECT_EQ(id, 42u);
  EXPECT_EQ(function, "entry");
  EXPECT_EQ(keys, (std::vector<std::string>{"k1", "k2"}));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].shape, big_shape);
  ASSERT_EQ(out[0].data.size(), big.size() * sizeof(float));
  EXPECT_EQ(std::memcmp(out[0].data.data(), big.data(), out[0].data.size()), 0);
  EXPECT_EQ(out[1].dtype, DType::kInt64);
  EXPECT_EQ(out[1].shape, empty_shape);
}

// A peer (a compromised or buggy worker) that declares sizes its message does not hold must get
// a protocol error before anything is allocated from its word.
TEST(SandboxChannelTest, RefusesLiesAboutSizes) {
  SocketPair pair;
  MessageWriter w(MessageType::kOutputs);
  w.u64(4 + 1 + 4 + 8 + 8);  // metadata length
  w.u32(1);                  // one tensor
  w.u8(static_cast<std::uint8_t>(DType::kFloat32));
  w.u32(1);
  w.i64(std::int64_t{1} << 40);  // 2^40 floats...
  w.u64(std::uint64_t{4} << 40);  // ...said to follow, in a message of a few bytes
  ASSERT_EQ(w.send(pair.a, kNoDeadline), ChannelError::kNone);
  MessageReader reader(pair.b);
  MessageType type{};
  std::uint64_t length = 0;
  ASSERT_EQ(reader.next(kNoDeadline, type, length), ChannelError::kNone);
  std::vector<OwnedTensor> out;
  EXPECT_EQ(reader.tensors(out), ChannelError::kProtocol);
  EXPECT_NE(reader.problem(), "");
}

TEST(SandboxChannelTest, ReadsTimeOutAtTheDeadline) {
  SocketPair pair;
  ::fcntl(pair.b, F_SETFL, ::fcntl(pair.b, F_GETFL) | O_NONBLOCK);
  MessageReader reader(pair.b);
  MessageType type{};
  std::uint64_t length = 0;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(reader.next(start + std::chrono::milliseconds(100), type, length),
            ChannelError::kTimedOut);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(100));
}

// Runs `probe` in a forked child after confine_worker; the child's exit code is the probe's.
int confined_child(const std::function<int()>& probe) {
  SocketPair pair;
  const pid_t pid = ::fork();
  if (pid == 0) {
    try {
      confine_worker(pair.b, ::getppid(), true);
    } catch (...) {
      ::_exit(100);
    }
    ::_exit(probe());
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 200 + WTERMSIG(status);
}

#ifdef SLIPSTREAM_HAVE_SECCOMP
// Issue 26.C2: a thread that was already running when the worker confined itself (libtorch
// starts its pools when their sizes are set, before confinement) is confined too. Without TSYNC
// the filter and no-new-privileges reach only the calling thread, and this thread's open works.
TEST(SandboxConfinementTest, AThreadStartedBeforeConfinementIsConfinedToo) {
  SocketPair pair;
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::atomic<bool> confined{false};
    std::atomic<int> result{1};
    std::thread early([&] {
      while (!confined.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      const bool no_new_privs = ::prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1;
      const int fd = ::open("/etc/hostname", O_RDONLY);
      const bool open_refused = fd < 0 && errno == EPERM;
      if (fd >= 0) ::close(fd);
      result = (no_new_privs ? 0 : 2) + (open_refused ? 0 : 4);
    });
    try {
      confine_worker(pair.b, ::getppid(), true);
    } catch (...) {
      ::_exit(100);
    }
    confined = true;
    early.join();
    ::_exit(result.load());
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << "signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << "2: the early thread may gain privileges; 4: the early thread may open files";
}

TEST(SandboxConfinementTest, ConfinedWorkerCannotOpenFilesStartProgramsOrConnect) {
  EXPECT_EQ(confined_child([] { return ::open("/etc/hostname", O_RDONLY) < 0 && errno == EPERM ? 0 : 1; }), 0);
  EXPECT_EQ(confined_child([] { return ::open("/tmp/x", O_WRONLY | O_CREAT, 0600) < 0 ? 0 : 1; }), 0);
  EXPECT_EQ(confined_child([] { return ::fork() < 0 && errno == EPERM ? 0 : 1; }), 0);
  EXPECT_EQ(confined_child([] { return ::socket(AF_INET, SOCK_STREAM, 0) < 0 ? 0 : 1; }), 0);
  EXPECT_EQ(confined_child([] { return ::kill(1, 0) < 0 && errno == EPERM ? 0 : 1; }), 0);
  EXPECT_EQ(confined_child([] {
              char* argv[] = {const_cast<char*>("/bin/true"), nullptr};
              ::execv("/bin/true", argv);
              return errno == EPERM ? 0 : 1;
            }),
            0);
}
#endif

TEST(SandboxConfinementTest, ConfinedWorkerStillComputesWithThreads) {
  EXPECT_EQ(confined_child([] {
              int sum = 0;
              std::thread t([&] { sum = 42; });
              t.join();
              std::vector<char> memory(64 << 20, 1);  // allocation (mmap) still works
              return sum == 42 && memory.back() == 1 ? 0 : 1;
            }),
            0);
}

}  // namespace
}  // namespace slipstream::ml::sandbox
