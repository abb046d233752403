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
//
// Why descriptors in flight are bounded per connection: Linux counts every descriptor sitting in
// an unread SCM_RIGHTS message against the sending user, and once that count passes the sender's
// RLIMIT_NOFILE every sendmsg with descriptors fails (ETOOMANYREFS), for every connection of the
// server. A few clients that ask for views and never read would then cut every other
// shared-memory client off. So each connection may have at most descriptors_budget() descriptors
// that its client has not read yet; past that its replies are held (the bytes before the next
// descriptor still go) until it reads, and a client that never reads is dropped by
// client-output-buffer-limit like any client that does not read its replies. A descriptor is
// received once the client has read the byte it rode with; SIOCOUTQ on a Unix stream socket gives
// the memory of the messages the peer has not finished reading, at least their unread bytes, so
// the descriptors sent before that many last bytes are surely received (an overestimate of what
// is in flight, never an underestimate). If the kernel refuses descriptors all the same (other
// processes of the same user hold some), the connection waits and retries: it is not closed.
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <linux/sockios.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <system_error>

#include "server/net/connection.hpp"
#include "server/server.hpp"

namespace slipstream::server {
namespace {
constexpr std::size_t kMaxFds = 253;
// Descriptors one connection may have in flight, at most (see descriptors_budget()).
constexpr std::size_t kMaxDescriptorsInFlight = 64;
// Held replies are retried after this long, doubling up to kMaxDescriptorPoll.
constexpr std::chrono::milliseconds kFirstDescriptorPoll{1};
constexpr std::chrono::milliseconds kMaxDescriptorPoll{50};

// The descriptors one connection may have in flight: kMaxDescriptorsInFlight, and no more than an
// eighth of the soft RLIMIT_NOFILE that the kernel holds the server's descriptors in flight to, so
// that at least eight clients that do not read cannot reach it together. Read on every use: the
// limit may change while the server runs. At least 1, so that every reply can go.
std::size_t descriptors_budget() {
  std::size_t budget = kMaxDescriptorsInFlight;
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    budget = std::min<std::size_t>(budget, limit.rlim_cur / 8);
  }
  return std::max<std::size_t>(budget, 1);
}
}  // namespace

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
    if (fd_end > w.next_fd) {
      const std::size_t allowed = descriptors_allowed();
      fd_end = std::min(fd_end, w.next_fd + allowed);
      // Over the budget: the bytes before the next descriptor's reply go; then the rest waits.
      if (fd_end == w.next_fd && fds[w.next_fd].offset <= w.position) {
        if (!descriptors_held_) {
          descriptors_held_ = true;
          spdlog::debug("client id={} addr={}: replies held, {} descriptors passed are unread "
                        "(at most {} may be)",
                        id(), peer_, descriptors_in_flight_, descriptors_budget());
        }
        return wait_to_send(false);
      }
    }
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
      if (errno == EAGAIN || errno == EWOULDBLOCK) return wait_to_send(true);
      if (errno == ETOOMANYREFS && count > 0) {
        // The user's descriptors in flight are at the kernel's limit: this connection waits for
        // clients to read theirs rather than being closed (the limit is not its doing alone).
        if (!descriptors_held_) {
          descriptors_held_ = true;
          spdlog::warn("client id={} addr={}: replies held, the kernel refuses more descriptors "
                       "in flight for this server's user (ETOOMANYREFS; RLIMIT_NOFILE)",
                       id(), peer_);
        }
        return wait_to_send(false);
      }
      fail_write(std::error_code(errno, std::generic_category()));
      return SendResult::kClosed;
    }
    w.next_fd = fd_end;  // sent with the first byte of this call
    if (count > 0) {
      descriptors_held_ = false;
      descriptor_poll_ = kFirstDescriptorPoll;
      if (sent > 0) {  // descriptors sent with no byte are dropped by the kernel
        descriptor_batches_.emplace_back(bytes_sent_, count);
        descriptors_in_flight_ += count;
      }
    }
    bytes_sent_ += static_cast<std::uint64_t>(sent);
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

Connection::SendResult Connection::wait_to_send(bool for_writable) {
  auto on_ready = [this, self = shared_from_this()](const asio::error_code& ec) {
    if (closed_) return;
    if (ec) return fail_write(ec);
    if (send_now() != SendResult::kDone) return;
    end_write();
    process();
  };
  if (for_writable) {
    socket_.async_wait(asio::socket_base::wait_write, std::move(on_ready));
    return SendResult::kWaiting;
  }
  if (!descriptor_timer_) {
    descriptor_timer_ = std::make_unique<asio::steady_timer>(socket_.get_executor());
  }
  descriptor_timer_->expires_after(descriptor_poll_);
  descriptor_poll_ = std::min(descriptor_poll_ * 2, kMaxDescriptorPoll);
  descriptor_timer_->async_wait(std::move(on_ready));
  return SendResult::kWaiting;
}

std::size_t Connection::descriptors_allowed() {
  if (descriptors_in_flight_ > 0) {
    int unread = 0;
    if (::ioctl(socket_.native_handle(), SIOCOUTQ, &unread) == 0) {
      const std::uint64_t outstanding =
          std::min<std::uint64_t>(static_cast<std::uint64_t>(std::max(unread, 0)), bytes_sent_);
      const std::uint64_t read_up_to = bytes_sent_ - outstanding;  // at least this much was read
      while (!descriptor_batches_.empty() &&
             (outstanding == 0 || descriptor_batches_.front().first < read_up_to)) {
        descriptors_in_flight_ -= descriptor_batches_.front().second;
        descriptor_batches_.pop_front();
      }
    }
  }
  const std::size_t budget = descriptors_budget();
  return budget > descriptors_in_flight_ ? budget - descriptors_in_flight_ : 0;
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

void Connection::fail_write(std::error_code error) {
  // A client that went away is routine; anything else is worth a line saying which client.
  const bool routine = error == std::errc::broken_pipe || error == std::errc::connection_reset ||
                       error == asio::error::operation_aborted;
  if (routine) {
    spdlog::debug("client id={} addr={} closed: sending its replies failed: {}", id(), peer_,
                  error.message());
  } else {
    spdlog::warn("client id={} addr={} closed: sending its replies failed: {}", id(), peer_,
                 error.message());
  }
  end_write();  // counts what was sent before the failure
  close();
}

}  // namespace slipstream::server
