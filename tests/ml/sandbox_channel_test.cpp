// The model sandbox's pieces that need no server: the framed channel (src/ml/sandbox/channel.hpp)
// and the confinement of a worker process (confine_worker), checked in a forked child.
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
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

#include "common/sealed_file.hpp"
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

// Reads one message from `fd` whose tensor list must be refused as malformed, with a reason.
void expect_malformed_tensors(int fd, FileUse use = FileUse::kRefuse) {
  MessageReader reader(fd);
  reader.accept_files(use);
  MessageType type{};
  std::uint64_t length = 0;
  ASSERT_EQ(reader.next(kNoDeadline, type, length), ChannelError::kNone);
  std::vector<OwnedTensor> out;
  EXPECT_EQ(reader.tensors(out), ChannelError::kProtocol);
  EXPECT_NE(reader.problem(), "");
}

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
  w.u64(4 + 1 + 4 + 8 + 8 + 1);  // metadata length
  w.u32(1);                      // one tensor
  w.u8(static_cast<std::uint8_t>(DType::kFloat32));
  w.u32(1);
  w.i64(std::int64_t{1} << 40);  // 2^40 floats...
  w.u64(std::uint64_t{4} << 40);  // ...said to follow, in a message of a few bytes
  w.u8(static_cast<std::uint8_t>(TensorPlace::kInline));
  ASSERT_EQ(w.send(pair.a, kNoDeadline), ChannelError::kNone);
  expect_malformed_tensors(pair.b);
}

// A sealed memory file holding `values` after `offset` bytes of 0xAB, as the server's
// shared-memory segments are (no one may write it any more).
int sealed_file(const std::vector<float>& values, std::size_t offset) {
  const int file = ::memfd_create("tensor", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  EXPECT_GE(file, 0);
  std::vector<char> bytes(offset, static_cast<char>(0xAB));
  bytes.insert(bytes.end(), reinterpret_cast<const char*>(values.data()),
               reinterpret_cast<const char*>(values.data() + values.size()));
  EXPECT_EQ(::write(file, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  EXPECT_EQ(::fcntl(file, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL),
            0);
  return file;
}

// Descriptors this process has open.
std::size_t open_descriptors() {
  std::size_t count = 0;
  for (int fd = 0; fd < 4096; ++fd) count += ::fcntl(fd, F_GETFD) >= 0 ? 1 : 0;
  return count;
}

// Issue 32: an input in a sealed memory file reaches the worker as that file mapped copy-on-
// write: the message holds none of its bytes, the worker reads them all, and writing into its
// copy (an in-place operator) leaves the file as it was. Small tensors, and every tensor when
// sharing is off, still travel inline.
TEST(SandboxChannelTest, TensorsInSealedFilesArriveMappedNotCopied) {
  SocketPair pair;
  std::vector<float> values(100000);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
  constexpr std::size_t kOffset = 5000;  // not a page boundary
  const int file = sealed_file(values, kOffset);
  const std::vector<std::int64_t> shape = {1000, 100};
  const std::vector<float> small(16, 2.0f);
  const std::vector<std::int64_t> small_shape = {16};
  TensorView shared{DType::kFloat32, shape, values.data(), values.size() * sizeof(float)};
  shared.file = file;
  shared.file_offset = kOffset;
  TensorView little{DType::kFloat32, small_shape, small.data(), small.size() * sizeof(float)};
  little.file = file;  // below kShareFromBytes: inline all the same
  const std::vector<TensorView> tensors = {shared, little};
  const std::size_t before = open_descriptors();
  for (const bool share : {true, false}) {
    SCOPED_TRACE(share ? "shared" : "copied");
    MessageWriter w(MessageType::kRunModel);
    w.tensors(tensors, share);
    std::thread writer([&] { EXPECT_EQ(w.send(pair.a, kNoDeadline), ChannelError::kNone); });
    MessageReader reader(pair.b);
    reader.accept_files(FileUse::kMapPrivate);
    MessageType type{};
    std::uint64_t length = 0;
    ASSERT_EQ(reader.next(kNoDeadline, type, length), ChannelError::kNone);
    if (share) {
      EXPECT_LT(length, 1024u);  // metadata and the small tensor only
    } else {
      EXPECT_GT(length, values.size() * sizeof(float));
    }
    std::vector<OwnedTensor> out;
    ASSERT_EQ(reader.tensors(out), ChannelError::kNone) << reader.problem();
    writer.join();
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].shape, shape);
    ASSERT_EQ(out[0].data.size(), values.size() * sizeof(float));
    EXPECT_EQ(std::memcmp(out[0].data.data(), values.data(), out[0].data.size()), 0);
    EXPECT_EQ(std::memcmp(out[1].data.data(), small.data(), out[1].data.size()), 0);
    // The receiver's copy is its own: writing it changes nothing in the sealed file.
    std::memset(out[0].data.data(), 0, out[0].data.size());
    float first = -1;
    ASSERT_EQ(::pread(file, &first, sizeof first, kOffset + sizeof(float)),
              static_cast<ssize_t>(sizeof first));
    EXPECT_EQ(first, 1.0f);
  }
  // The passed descriptor was closed once mapped; the mappings went with the tensors.
  EXPECT_EQ(open_descriptors(), before);
  ::close(file);
}

// The server's side takes no descriptors: a kInFile tensor from a worker is malformed, and
// whatever a worker passes is closed as it arrives. A descriptor whose file does not hold the
// bytes its tensor claims is refused too, before anything is mapped.
TEST(SandboxChannelTest, RefusesDescriptorsWhereNoneMayComeAndFilesTooShort) {
  std::vector<float> values(20000, 1.0f);
  const int file = sealed_file(values, 0);
  const std::vector<std::int64_t> shape = {20000};
  const std::vector<std::int64_t> too_long = {40000};
  for (const bool accept : {false, true}) {
    SCOPED_TRACE(accept ? "accepting, file too short" : "not accepting");
    SocketPair pair;
    const std::size_t before = open_descriptors();
    TensorView view{DType::kFloat32, accept ? too_long : shape, values.data(),
                    (accept ? 40000u : 20000u) * sizeof(float)};
    view.file = file;
    MessageWriter w(MessageType::kOutputs);
    w.tensors(std::span<const TensorView>(&view, 1), true);
    ASSERT_EQ(w.send(pair.a, kNoDeadline), ChannelError::kNone);
    expect_malformed_tensors(pair.b, accept ? FileUse::kMapPrivate : FileUse::kRefuse);
    EXPECT_EQ(open_descriptors(), before);  // nothing of the peer's is left open
  }
  ::close(file);
}

// Issue 32: a worker's large output comes back as a memory file of its own, which the reading
// side seals against every change before mapping it: the bytes arrive, the file is sealed, and
// the message carries none of them. A file its sender still maps writable cannot be sealed, and
// one holding more than its tensor is refused: both are malformed replies.
TEST(SandboxChannelTest, OutputsComeBackAsFilesSealedByTheReader) {
  std::vector<float> values(50000);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) * 0.25f;
  OwnedTensor output;
  output.dtype = DType::kFloat32;
  output.shape = {50000};
  output.data = Buffer::copy_of({reinterpret_cast<const char*>(values.data()),
                                 values.size() * sizeof(float)});
  SocketPair pair;
  {
    MessageWriter w(MessageType::kOutputs);
    w.tensors(std::span<const OwnedTensor>(&output, 1), true);
    EXPECT_EQ(w.shared_tensors(), 1u);
    ASSERT_EQ(w.send(pair.a, kNoDeadline), ChannelError::kNone);
  }  // the writer's file is closed: the one in flight is the reader's
  MessageReader reader(pair.b);
  reader.accept_files(FileUse::kSealAndMap);
  MessageType type{};
  std::uint64_t length = 0;
  ASSERT_EQ(reader.next(kNoDeadline, type, length), ChannelError::kNone);
  EXPECT_LT(length, 1024u);
  std::vector<OwnedTensor> out;
  ASSERT_EQ(reader.tensors(out), ChannelError::kNone) << reader.problem();
  ASSERT_EQ(out.size(), 1u);
  const auto* file = dynamic_cast<const SealedFile*>(out[0].data.storage());
  ASSERT_NE(file, nullptr);
  EXPECT_EQ(::fcntl(file->fd(), F_GET_SEALS) & F_SEAL_WRITE, F_SEAL_WRITE);
  ASSERT_EQ(out[0].data.size(), values.size() * sizeof(float));
  EXPECT_EQ(std::memcmp(out[0].data.data(), values.data(), out[0].data.size()), 0);

  // A sender keeping a writable shared mapping of its file (so it could change the bytes after
  // they are stored), and one passing a file larger than the tensor.
  for (const bool mapped : {true, false}) {
    SCOPED_TRACE(mapped ? "still mapped writable" : "file too large");
    SocketPair hostile;
    const std::size_t bytes = 20000 * sizeof(float);
    const int own = ::memfd_create("hostile", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    ASSERT_GE(own, 0);
    ASSERT_EQ(::ftruncate(own, static_cast<off_t>(mapped ? bytes : 2 * bytes)), 0);
    void* writable = mapped ? ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, own, 0)
                            : nullptr;
    ASSERT_NE(writable, MAP_FAILED);
    const std::vector<std::int64_t> shape = {20000};
    std::vector<float> unused(20000);
    TensorView view{DType::kFloat32, shape, unused.data(), bytes};
    view.file = own;  // what a hostile worker could send: its own file, by descriptor
    MessageWriter w(MessageType::kOutputs);
    w.tensors(std::span<const TensorView>(&view, 1), true);
    ASSERT_EQ(w.send(hostile.a, kNoDeadline), ChannelError::kNone);
    expect_malformed_tensors(hostile.b, FileUse::kSealAndMap);
    if (mapped) ::munmap(writable, bytes);
    ::close(own);
  }
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
