// ReadSocket's set-up and its I/O thread's watch list (read_socket.hpp).
#include "server/net/read_socket.hpp"

#include <unistd.h>

#include <algorithm>

namespace slipstream::server {

ReadSocket::ReadSocket(Base&& socket) : Base(std::move(socket)) {
  asio::error_code ignored;
  non_blocking(true, ignored);  // reads call recv themselves
#ifdef SLIPSTREAM_READ_SOCKET_REACTOR_OP
  reactor_ = &asio::use_service<asio::detail::reactor>(impl_.get_service().context());
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  if (::getsockname(native_handle(), reinterpret_cast<sockaddr*>(&address), &length) == 0 &&
      (address.ss_family == AF_INET || address.ss_family == AF_INET6)) {
    const int on = 1;
    // Without TCP_INQ (Linux before 4.18) a TCP read is never taken as draining the socket.
    mode_ = ::setsockopt(native_handle(), IPPROTO_TCP, TCP_INQ, &on, sizeof(on)) == 0
                ? Mode::kTcpInq
                : Mode::kNeverDrained;
  }
#endif
}

void ReadSocket::move_to(asio::io_context& target, asio::error_code& ec) {
#ifdef SLIPSTREAM_READ_SOCKET_REACTOR_OP
  if (watch_ != nullptr) watch_->forget(*this);
  watch_ = nullptr;
#endif
  const protocol_type protocol = local_endpoint(ec).protocol();
  if (ec) return;
  const native_handle_type fd = release(ec);  // deregistered from the old reactor
  if (ec) return;
  Base moved(target);
  moved.assign(protocol, fd, ec);  // registered with the new one
  if (ec) {
    ::close(fd);
    return;
  }
  Base::operator=(std::move(moved));
  non_blocking(true, ec);
#ifdef SLIPSTREAM_READ_SOCKET_REACTOR_OP
  reactor_ = &asio::use_service<asio::detail::reactor>(target);
#endif
}

ReadSocket::~ReadSocket() {
#ifdef SLIPSTREAM_READ_SOCKET_REACTOR_OP
  if (watch_ != nullptr) watch_->forget(*this);
#endif
}

#ifdef SLIPSTREAM_READ_SOCKET_REACTOR_OP

asio::execution_context::id ReadWatch::id;

namespace {

constexpr std::size_t kOpBlock = 256;  // holds the server's read operations

struct OpBlock {
  void* free = nullptr;
  ~OpBlock() { ::operator delete(free); }
};
thread_local OpBlock op_block;

}  // namespace

void* ReadSocket::take_op_memory(std::size_t size) {
  if (size > kOpBlock) return ::operator new(size);
  if (void* memory = std::exchange(op_block.free, nullptr)) return memory;
  return ::operator new(kOpBlock);
}

void ReadSocket::give_op_memory(void* memory, std::size_t size) noexcept {
  if (size <= kOpBlock && op_block.free == nullptr) {
    op_block.free = memory;
    return;
  }
  ::operator delete(memory);
}

void ReadSocket::watch() {
  if (watch_ == nullptr) watch_ = &asio::use_service<ReadWatch>(impl_.get_service().context());
  watch_->watch(*this);
}

void ReadWatch::watch(ReadSocket& socket) {
  std::lock_guard lock(mutex_);
  if (socket.watched_) return;
  socket.watched_ = true;
  sockets_.push_back(&socket);
  if (armed_) return;
  armed_ = true;
  if (!timer_) timer_ = std::make_unique<asio::steady_timer>(socket.get_executor());
  timer_->expires_after(ReadSocket::kLookInterval);
  timer_->async_wait([this](const asio::error_code& ec) {
    if (!ec) look();
  });
}

void ReadWatch::forget(ReadSocket& socket) {
  std::lock_guard lock(mutex_);
  if (!socket.watched_) return;
  socket.watched_ = false;
  sockets_.erase(std::find(sockets_.begin(), sockets_.end(), &socket));
}

void ReadWatch::look() {
  std::lock_guard lock(mutex_);
  armed_ = false;
  for (ReadSocket* socket : sockets_) {
    socket->watched_ = false;
    if (!socket->pending_ || !socket->end_may_be_unseen_) continue;  // read since: known
    char byte;
    ssize_t n;
    do {
      n = ::recv(socket->native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    } while (n < 0 && errno == EINTR);
    // Bytes: their event is on its way. Nothing: no end is hidden, later ones are events.
    socket->end_may_be_unseen_ = false;
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
      asio::error_code ignored;
      socket->cancel(ignored);  // its read completes as aborted: the connection closes
    }
  }
  sockets_.clear();
}

void ReadWatch::shutdown() {
  std::lock_guard lock(mutex_);
  for (ReadSocket* socket : sockets_) socket->watched_ = false;
  sockets_.clear();
  timer_.reset();
}

#endif

}  // namespace slipstream::server
