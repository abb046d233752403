// Writing replies: the server's own sendmsg loop, for every reply batch.
//
// Why not asio::async_write: it posts its completion even when the first send took everything,
// which costs the I/O thread one more reactor poll (a zero-timeout epoll_wait) per request, and
// its completion condition caps each send at 64 KiB, which splits a 1 MiB reply into 17 sendmsg
// calls where the socket buffer would take 200 KiB or more at once. Here a batch is sent at once
// with MSG_DONTWAIT; only what the socket buffer cannot take waits for writability. Asio cannot
// send ancillary data either, and the shared-memory fast path hands a client the memfd of a loan
// or of a tensor it views (SCM_RIGHTS).
//
// Why the descriptors ride with the first byte of the batch: a stream socket delivers ancillary
// data with the byte it was sent with, and the client reads bytes in order, so a descriptor sent
// no later than the first byte of its reply has arrived by the time the client parses that reply;
// the client queues descriptors as they come and takes them in reply order. At most kMaxFds go in
// one sendmsg (the kernel's SCM_MAX_FD); a batch with more is sent in several calls, each ending
// before the reply of the first descriptor it could not carry, or, when that reply has begun (one
// reply with more than kMaxFds), after one byte of it.
#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include "server/net/connection.hpp"
#include "server/server.hpp"

namespace slipstream::server {
namespace {
constexpr std::size_t kMaxFds = 253;
}

void Connection::flush() {
  while (!closed_ && !writing_) {
    if (output_.empty()) {
      if (close_after_write_) close();
      return;
    }
    std::swap(output_, in_flight_);
    output_.set_protocol(in_flight_.protocol());
    write_.reset();
    for (const auto& piece : in_flight_.pieces()) {
      if (piece.size == 0) continue;
      write_.parts.push_back({const_cast<char*>(piece.data), piece.size});
      write_.total += piece.size;
    }
    writing_ = true;
    replied_since_read_ = true;
    if (send_now() != SendResult::kDone) return;  // finishes in its handler, or closed
    end_write();
  }
}

Connection::SendResult Connection::send_now() {
  PendingWrite& w = write_;
  const auto& fds = in_flight_.passed_fds();
  while (w.position < w.total || w.next_fd < fds.size()) {
    // Descriptors to attach: the next ones, up to kMaxFds; then the bytes may run up to (not
    // including) the reply of the first descriptor left for a later call.
    // A reply with more than kMaxFds descriptors has them sent with several of its bytes, one
    // batch each: a call whose next batch belongs to a reply already begun sends one byte (each
    // batch must ride with a byte of its reply, which the client reads before parsing it;
    // descriptors sent with no byte at all are dropped by the kernel).
    std::size_t fd_end = std::min(fds.size(), w.next_fd + kMaxFds);
    std::size_t limit = w.total - w.position;
    if (fd_end < fds.size()) {
      const std::size_t next_reply = fds[fd_end].offset;
      limit = std::min(limit, next_reply > w.position ? next_reply - w.position : std::size_t{1});
    }
    iovec* iov = w.parts.data() + w.first;
    std::size_t iov_count = std::min<std::size_t>(w.parts.size() - w.first, IOV_MAX);
    // Trim the iovecs to `limit` bytes (only when descriptors remain for a later call).
    std::vector<iovec> trimmed;
    if (limit < w.total - w.position) {
      std::size_t offered = 0;
      for (std::size_t i = 0; i < iov_count && offered < limit; ++i) {
        iovec part = iov[i];
        part.iov_len = std::min(part.iov_len, limit - offered);
        trimmed.push_back(part);
        offered += part.iov_len;
      }
      iov = trimmed.data();
      iov_count = trimmed.size();
    }
    char dummy = 0;
    iovec empty{&dummy, 0};
    if (iov_count == 0) iov = &empty, iov_count = 1;  // descriptors need at least an empty iovec
    msghdr message{};
    message.msg_iov = iov;
    message.msg_iovlen = iov_count;
    std::vector<char> control;
    const std::size_t count = fd_end - w.next_fd;
    if (count > 0) {
      control.assign(CMSG_SPACE(count * sizeof(int)), 0);
      message.msg_control = control.data();
      message.msg_controllen = control.size();
      cmsghdr* header = CMSG_FIRSTHDR(&message);
      header->cmsg_level = SOL_SOCKET;
      header->cmsg_type = SCM_RIGHTS;
      header->cmsg_len = CMSG_LEN(count * sizeof(int));
      auto* out = reinterpret_cast<int*>(CMSG_DATA(header));
      for (std::size_t i = 0; i < count; ++i) out[i] = fds[w.next_fd + i].fd;
    }
    ssize_t sent = ::sendmsg(socket_.native_handle(), &message, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        auto self = shared_from_this();
        socket_.async_wait(asio::socket_base::wait_write,
                           [this, self](const asio::error_code& ec) {
                             if (closed_) return;
                             if (ec) return fail_write();
                             if (send_now() != SendResult::kDone) return;
                             end_write();
                             process();
                           });
        return SendResult::kWaiting;
      }
      fail_write();
      return SendResult::kClosed;
    }
    w.next_fd = fd_end;  // sent with the first byte of this call
    auto left = static_cast<std::size_t>(sent);
    w.position += left;
    while (left > 0 && w.first < w.parts.size()) {
      iovec& part = w.parts[w.first];
      std::size_t take = std::min(left, part.iov_len);
      part.iov_base = static_cast<char*>(part.iov_base) + take;
      part.iov_len -= take;
      left -= take;
      if (part.iov_len == 0) ++w.first;
    }
  }
  return SendResult::kDone;
}

void Connection::end_write() {
  writing_ = false;
  in_flight_.clear();
  server_.stats().net_output_bytes.fetch_add(write_.position, std::memory_order_relaxed);
  if (write_.next_fd > 0) {
    server_.shared_memory().counters()->total_descriptors_passed.fetch_add(
        write_.next_fd, std::memory_order_relaxed);
  }
  write_.reset();
}

void Connection::fail_write() {
  end_write();  // counts what was sent before the failure
  close();
}

}  // namespace slipstream::server
