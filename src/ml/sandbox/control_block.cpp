// The server's and a model worker's shared control block; see control_block.hpp.
#include "ml/sandbox/control_block.hpp"

#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

namespace slipstream::ml::sandbox {

struct ControlBlock::Shared {
  std::atomic<std::uint32_t> turn;  // even: the server's, odd: the worker's
  std::uint32_t request_where, request_length;
  std::uint32_t reply_where, reply_length;
  char request[kControlAreaBytes];
  char reply[kControlAreaBytes];
};
static_assert(std::atomic<std::uint32_t>::is_always_lock_free);

namespace {

using Clock = std::chrono::steady_clock;

// How long the server spins for a reply before it sleeps: a worker's answer to a small run often
// comes within it, and then costs no wake-up. The worker does not spin for requests: the next
// one comes after a whole round trip of its caller at best, and a spinning worker would take the
// core the server and the caller need meanwhile.
constexpr auto kReplySpin = std::chrono::microseconds(30);
// The longest sleep between looks at the peer's socket (a peer that died never changes the turn).
constexpr auto kSlice = std::chrono::milliseconds(20);

void futex_wait(std::atomic<std::uint32_t>* word, std::uint32_t seen, Clock::duration timeout) {
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(timeout).count();
  timespec relative{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
  ::syscall(SYS_futex, word, FUTEX_WAIT, seen, &relative, nullptr, 0);
}

void futex_wake(std::atomic<std::uint32_t>* word) {
  ::syscall(SYS_futex, word, FUTEX_WAKE, 1, nullptr, nullptr, 0);
}

// True when the peer's end of `socket` is gone.
bool hung_up(int socket) {
  pollfd p{socket, 0, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR | POLLNVAL)) != 0;
}

// Copies a posted message out of the block, checked: its place is one of Posted's, and a frame
// in the block is whole (its header's length matches) and fits the area.
ChannelError take(std::uint32_t where_word, std::uint32_t length, const char* area, Posted& where,
                  std::string& frame) {
  if (where_word > static_cast<std::uint32_t>(Posted::kNothing)) return ChannelError::kProtocol;
  where = static_cast<Posted>(where_word);
  frame.clear();
  if (where != Posted::kInBlock) return ChannelError::kNone;
  constexpr std::size_t kHeader = 16;  // u32 magic, u32 type, u64 body length
  if (length < kHeader || length > kControlAreaBytes) return ChannelError::kProtocol;
  frame.assign(area, length);  // a copy: the peer may change the block meanwhile
  std::uint32_t magic = 0;
  std::uint64_t body = 0;
  std::memcpy(&magic, frame.data(), sizeof magic);
  std::memcpy(&body, frame.data() + 8, sizeof body);
  if (magic != kMagic || body != length - kHeader) return ChannelError::kProtocol;
  return ChannelError::kNone;
}

}  // namespace

std::unique_ptr<ControlBlock> ControlBlock::create(std::string* error) {
  const int fd = ::memfd_create("slipstream-model-control", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) {
    *error = std::string("memfd_create: ") + std::strerror(errno);
    return nullptr;
  }
  void* mapping = MAP_FAILED;
  if (::ftruncate(fd, sizeof(Shared)) == 0 &&
      ::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) == 0) {
    mapping = ::mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  }
  if (mapping == MAP_FAILED) {
    *error = std::string("cannot make the control block: ") + std::strerror(errno);
    ::close(fd);
    return nullptr;
  }
  auto* shared = new (mapping) Shared{};  // the file's pages are zero: turn 0, the server's
  return std::unique_ptr<ControlBlock>(new ControlBlock(fd, shared, true));
}

std::unique_ptr<ControlBlock> ControlBlock::attach(int fd, std::string* error) {
  struct stat about {};
  void* mapping = MAP_FAILED;
  if (::fstat(fd, &about) == 0 && S_ISREG(about.st_mode) &&
      static_cast<std::size_t>(about.st_size) == sizeof(Shared)) {
    mapping = ::mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  }
  const int failure = errno;
  ::close(fd);
  if (mapping == MAP_FAILED) {
    *error = std::string("not a control block: ") + std::strerror(failure);
    return nullptr;
  }
  auto* block = new ControlBlock(-1, static_cast<Shared*>(mapping), false);
  block->turn_ = block->shared_->turn.load(std::memory_order_acquire);
  return std::unique_ptr<ControlBlock>(block);
}

ControlBlock::~ControlBlock() {
  ::munmap(shared_, sizeof(Shared));
  if (fd_ >= 0) ::close(fd_);
}

ChannelError ControlBlock::wait_turn(std::uint32_t expected, int socket, Deadline deadline,
                                     Clock::duration spin) {
  std::atomic<std::uint32_t>* word = &shared_->turn;
  const auto spin_until = Clock::now() + spin;
  while (word->load(std::memory_order_acquire) != expected) {
    const auto now = Clock::now();
    if (now < spin_until) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#elif defined(__aarch64__)
      asm volatile("yield");
#endif
      continue;
    }
    if (now >= deadline) return ChannelError::kTimedOut;
    if (hung_up(socket)) return ChannelError::kClosed;
    const std::uint32_t seen = word->load(std::memory_order_acquire);
    if (seen == expected) break;
    futex_wait(word, seen, std::min<Clock::duration>(kSlice, deadline - now));
  }
  turn_ = expected;
  return ChannelError::kNone;
}

ChannelError ControlBlock::send(MessageWriter& w, int socket, Deadline deadline) {
  const auto post = [&](Posted where, std::string_view frame) {
    if (server_) {
      post_request(where, frame);
    } else {
      post_reply(where, frame);
    }
  };
  if (w.frame_into(frame_, kControlAreaBytes)) {
    post(Posted::kInBlock, frame_);
    return ChannelError::kNone;
  }
  post(Posted::kOnSocket, {});  // first, so the other side reads while this one writes
  return w.send(socket, deadline);
}

ChannelError ControlBlock::receive(MessageReader& reader, int socket, Deadline deadline,
                                   Posted& where) {
  ChannelError e = server_ ? wait_reply(socket, deadline, where, frame_)
                           : wait_request(socket, where, frame_);
  if (e == ChannelError::kNone && where == Posted::kInBlock && !reader.feed(frame_)) {
    e = ChannelError::kProtocol;
  }
  return e;
}

void ControlBlock::post_request(Posted where, std::string_view frame) {
  shared_->request_where = static_cast<std::uint32_t>(where);
  shared_->request_length = static_cast<std::uint32_t>(frame.size());
  if (!frame.empty()) std::memcpy(shared_->request, frame.data(), frame.size());
  turn_ += 1;  // odd: the worker's
  shared_->turn.store(turn_, std::memory_order_release);
  futex_wake(&shared_->turn);
}

ChannelError ControlBlock::wait_reply(int socket, Deadline deadline, Posted& where,
                                      std::string& frame) {
  if (ChannelError e = wait_turn(turn_ + 1, socket, deadline, kReplySpin);
      e != ChannelError::kNone) {
    return e;
  }
  return take(shared_->reply_where, shared_->reply_length, shared_->reply, where, frame);
}

ChannelError ControlBlock::wait_request(int socket, Posted& where, std::string& frame) {
  // The turn after this side's last (odd), however long the server takes to ask.
  if (ChannelError e = wait_turn(turn_ | 1u, socket, kNoDeadline, Clock::duration::zero());
      e != ChannelError::kNone) {
    return e;
  }
  return take(shared_->request_where, shared_->request_length, shared_->request, where, frame);
}

void ControlBlock::post_reply(Posted where, std::string_view frame) {
  shared_->reply_where = static_cast<std::uint32_t>(where);
  shared_->reply_length = static_cast<std::uint32_t>(frame.size());
  if (!frame.empty()) std::memcpy(shared_->reply, frame.data(), frame.size());
  turn_ += 1;  // even: the server's
  shared_->turn.store(turn_, std::memory_order_release);
  futex_wake(&shared_->turn);
}

}  // namespace slipstream::ml::sandbox
