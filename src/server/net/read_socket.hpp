// A client's socket whose reads remember that the socket was drained.
//
// Asio (1.22) starts every read with a speculative recv and, for a stream socket, takes the
// socket as drained only when a recv returns nothing. A request-reply client sends one request
// and waits, so after the server has read a request and replied, the speculative recv of the
// next read returns EAGAIN: one system call per request for nothing (Redis reads only when
// epoll says so). read_some_async() reads with an operation of its own in asio's epoll reactor
// that reports a drained socket as done-and-exhausted: the reactor then queues the next read
// until epoll reports the socket readable, without a recv. Every arrival after a recv is a new
// edge-triggered event, which sets the reactor to try a recv again, so no bytes wait unseen.
//
// When is a socket drained after a recv that returned bytes?
// - TCP: the kernel says so. With TCP_INQ, recvmsg reports the bytes left in the receive queue,
//   and counts a received FIN as one: drained means nothing left, not even an end of stream.
// - Unix: a recv that returned less than asked emptied the receive queue, but an end of stream
//   (or a reset) that arrived before that recv is reported only by the next recv, and its event
//   has been consumed. So after a short read the next read calls recv first (as asio would)
//   unless the caller has replied since: a reply sent to a closed peer fails (EPIPE), and a peer
//   that only shut down its sending side sends a new event when it closes. A request-reply
//   client thus costs one recv per request; a read after which nothing was replied (a partial
//   request, a parked one) costs two, as before. A peer that shut down its sending side and
//   waits for the server to close (`nc -N`) would wait for ever, so the read is also put on a
//   watch list that each I/O thread looks through every kLookInterval: one recv(MSG_PEEK) per
//   socket, and a socket found at its end has its read cancelled (the connection closes).
//
// Where asio is not the version this was written against, or not on epoll, reads go through
// async_read_some (one system call more per request, nothing else changes).
#pragma once

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <asio.hpp>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#if defined(ASIO_HAS_EPOLL) && !defined(ASIO_HAS_IO_URING_AS_DEFAULT) && \
    ASIO_VERSION >= 102200 && ASIO_VERSION < 102300
#define SLIPSTREAM_READ_SOCKET_REACTOR_OP 1
#endif

namespace slipstream::server {

class ReadWatch;

class ReadSocket : public asio::generic::stream_protocol::socket {
 public:
  using Base = asio::generic::stream_protocol::socket;
  static constexpr std::chrono::milliseconds kLookInterval{100};

  explicit ReadSocket(Base&& socket);
  ~ReadSocket();
  ReadSocket(const ReadSocket&) = delete;
  ReadSocket& operator=(const ReadSocket&) = delete;

  /// Moves the socket to `target`'s reactor: its handlers run on that I/O thread from now on.
  /// Only between reads (no read pending) and with no other operation in progress; call on the
  /// socket's current I/O thread. On failure `ec` is set and the socket is unusable: the caller
  /// closes its connection.
  void move_to(asio::io_context& target, asio::error_code& ec);

  /// Reads what the socket holds, up to buffer.size() bytes, then calls handler(ec, n) on the
  /// socket's executor, like async_read_some. `replied`: the caller has sent or queued a reply
  /// since the last read completed (see above). The socket must outlive the read's completion.
  template <typename Handler>
  void read_some_async(asio::mutable_buffer buffer, bool replied, Handler&& handler) {
#ifdef SLIPSTREAM_READ_SOCKET_REACTOR_OP
    if (probe_next_ || (end_may_be_unseen_ && !replied)) {
      // The reactor may take the socket as drained while an end of stream or unread bytes
      // wait: look first.
      probe_next_ = end_may_be_unseen_ = false;
      std::size_t n = 0;
      asio::error_code ec;
      const Outcome outcome = receive(native_handle(), buffer, mode_, ec, n);
      if (outcome != Outcome::kNothing) {
        // The reactor still takes the socket as drained: bytes left behind need another look,
        // as does an end of stream behind bytes that drained a Unix socket.
        probe_next_ = outcome == Outcome::kData;
        end_may_be_unseen_ = may_hide_end(outcome);
        asio::post(get_executor(), [handler = std::forward<Handler>(handler), ec, n]() mutable {
          handler(ec, n);
        });
        return;
      }
    } else if (end_may_be_unseen_) {
      watch();  // replied: the reply's send or the peer's close finds an end, or the watch does
    }
    auto& impl = impl_.get_implementation();
    auto* op = new RecvOp<std::decay_t<Handler>>(*this, buffer, std::forward<Handler>(handler));
    pending_ = true;
    reactor_->start_op(asio::detail::reactor::read_op, impl.socket_, impl.reactor_data_, op,
                     /*is_continuation=*/true, /*allow_speculative=*/true);
#else
    (void)replied;
    async_read_some(buffer, std::forward<Handler>(handler));
#endif
  }

 private:
#ifdef SLIPSTREAM_READ_SOCKET_REACTOR_OP
  enum class Mode { kUnix, kTcpInq, kNeverDrained };
  enum class Outcome { kNothing, kData, kDrained, kEnd };

  friend class ReadWatch;

  // Bytes that drained a Unix socket may have an end of stream behind them (see above).
  bool may_hide_end(Outcome outcome) const noexcept {
    return outcome == Outcome::kDrained && mode_ == Mode::kUnix;
  }

  // Puts this socket's pending read on its I/O thread's watch list (read_socket.cpp).
  void watch();

  // One non-blocking recv: kNothing (EAGAIN), kData (bytes; more may wait), kDrained (bytes,
  // and the receive queue held no more), kEnd (end of stream or an error, in ec).
  static Outcome receive(int fd, asio::mutable_buffer buffer, Mode mode, asio::error_code& ec,
                         std::size_t& n) {
    for (;;) {
      ssize_t got;
      int left = -1;  // bytes still queued, where the kernel says
      if (mode == Mode::kTcpInq) {
        alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
        iovec part{buffer.data(), buffer.size()};
        msghdr message{};
        message.msg_iov = &part;
        message.msg_iovlen = 1;
        message.msg_control = control;
        message.msg_controllen = sizeof(control);
        got = ::recvmsg(fd, &message, MSG_DONTWAIT);
        for (cmsghdr* c = CMSG_FIRSTHDR(&message); got > 0 && c != nullptr;
             c = CMSG_NXTHDR(&message, c)) {
          if (c->cmsg_level == SOL_TCP && c->cmsg_type == TCP_CM_INQ) {
            std::memcpy(&left, CMSG_DATA(c), sizeof(left));
          }
        }
      } else {
        got = ::recv(fd, buffer.data(), buffer.size(), MSG_DONTWAIT);
      }
      if (got > 0) {
        n = static_cast<std::size_t>(got);
        switch (mode) {
          case Mode::kUnix: return n < buffer.size() ? Outcome::kDrained : Outcome::kData;
          case Mode::kTcpInq: return left == 0 ? Outcome::kDrained : Outcome::kData;
          case Mode::kNeverDrained: return Outcome::kData;
        }
      }
      if (got == 0) {
        if (buffer.size() == 0) return Outcome::kData;
        ec = asio::error::eof;
        return Outcome::kEnd;
      }
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return Outcome::kNothing;
      ec = asio::error_code(errno, asio::error::get_system_category());
      return Outcome::kEnd;
    }
  }

  // Memory of read operations: one read per socket at a time, each created and freed on its
  // I/O thread, so a block kept per thread serves them without malloc (read_socket.cpp).
  static void* take_op_memory(std::size_t size);
  static void give_op_memory(void* memory, std::size_t size) noexcept;

  template <typename Handler>
  class RecvOp : public asio::detail::reactor_op {
   public:
    static void* operator new(std::size_t size) { return take_op_memory(size); }
    static void operator delete(void* memory, std::size_t size) noexcept {
      give_op_memory(memory, size);
    }

    RecvOp(ReadSocket& socket, asio::mutable_buffer buffer, Handler handler)
        : reactor_op(asio::error_code(), &RecvOp::perform_recv, &RecvOp::complete_recv),
          socket_(socket),
          buffer_(buffer),
          handler_(std::move(handler)) {}

   private:
    // Runs under the reactor's lock for the descriptor: in start_op (unless the last read took
    // the socket as drained) and on each readiness event until it is done.
    static status perform_recv(reactor_op* base) {
      auto* op = static_cast<RecvOp*>(base);
      ReadSocket& s = op->socket_;  // alive: closing it cancels this operation before it goes
      op->outcome_ = receive(s.native_handle(), op->buffer_, s.mode_, op->ec_,
                             op->bytes_transferred_);
      switch (op->outcome_) {
        case Outcome::kNothing: return not_done;
        case Outcome::kData: return done;
        case Outcome::kDrained:
        case Outcome::kEnd: return done_and_exhausted;
      }
      return done;
    }

    // owner is null when a shutting-down io_context destroys the pending operation: the socket
    // may be gone, and the handler is not called.
    static void complete_recv(void* owner, asio::detail::operation* base, const asio::error_code&,
                              std::size_t) {
      std::unique_ptr<RecvOp> op(static_cast<RecvOp*>(base));
      Handler handler(std::move(op->handler_));
      const asio::error_code ec = op->ec_;
      const std::size_t n = op->bytes_transferred_;
      if (owner == nullptr) return;
      op->socket_.pending_ = false;
      op->socket_.end_may_be_unseen_ = op->socket_.may_hide_end(op->outcome_);
      op.reset();
      handler(ec, n);
    }

    ReadSocket& socket_;
    asio::mutable_buffer buffer_;
    Handler handler_;
    Outcome outcome_ = Outcome::kNothing;
  };

  Mode mode_ = Mode::kUnix;
  bool end_may_be_unseen_ = false;  // the last read drained a Unix socket with bytes
  bool probe_next_ = false;         // the last read was a look that may have left bytes
  bool pending_ = false;            // a RecvOp of this socket is in the reactor
  bool watched_ = false;            // on watch_'s list (guarded by its mutex)
  ReadWatch* watch_ = nullptr;      // this socket's I/O context's, once it was needed
  asio::detail::reactor* reactor_;  // this socket's I/O context's
#endif
};

#ifdef SLIPSTREAM_READ_SOCKET_REACTOR_OP
// The watch list of one io_context (an asio service, so one per context): sockets whose pending
// read may wait on an end of stream that arrived unseen, looked at every kLookInterval.
class ReadWatch : public asio::execution_context::service {
 public:
  static asio::execution_context::id id;
  explicit ReadWatch(asio::execution_context& context) : service(context) {}

  void watch(ReadSocket& socket);  // on the socket's I/O thread
  void forget(ReadSocket& socket);  // from any thread, before the socket is destroyed
  /// Looks at every socket on the list now (what the timer does every kLookInterval).
  void look();

 private:
  void shutdown() override;

  std::mutex mutex_;
  std::vector<ReadSocket*> sockets_;
  std::unique_ptr<asio::steady_timer> timer_;
  bool armed_ = false;
};
#endif

}  // namespace slipstream::server
