// Writing replies that pass file descriptors (SCM_RIGHTS) on a Unix-socket connection: the
// shared-memory fast path hands a client the memfd of a loan or of a tensor it views.
//
// Why the descriptors ride with the first byte of the batch: a stream socket delivers ancillary
// data with the byte it was sent with, and the client reads bytes in order, so a descriptor sent
// no later than the first byte of its reply has arrived by the time the client parses that reply;
// the client queues descriptors as they come and takes them in reply order. At most kMaxFds go in
// one sendmsg (the kernel's SCM_MAX_FD); a batch with more is sent in several calls, each ending
// before the reply of the first descriptor it could not carry.
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

struct Connection::FdWrite {
  std::vector<iovec> parts;
  std::size_t first = 0;     // parts[first] is the next to send (possibly partly sent)
  std::size_t position = 0;  // bytes of the batch sent so far
  std::size_t next_fd = 0;   // passed_fds()[next_fd] is the next descriptor to send
  std::size_t total = 0;
};

void Connection::write_with_fds(const std::vector<asio::const_buffer>& buffers,
                                std::size_t total) {
  auto write = std::make_shared<FdWrite>();
  for (const auto& b : buffers) write->parts.push_back({const_cast<void*>(b.data()), b.size()});
  write->total = total;
  continue_fd_write(std::move(write));
}

void Connection::continue_fd_write(std::shared_ptr<FdWrite> w) {
  if (closed_) return;
  const auto& fds = in_flight_.passed_fds();
  while (w->position < w->total || w->next_fd < fds.size()) {
    // Descriptors to attach: the next ones, up to kMaxFds; then the bytes may run up to (not
    // including) the reply of the first descriptor left for a later call.
    std::size_t fd_end = std::min(fds.size(), w->next_fd + kMaxFds);
    std::size_t limit = w->total - w->position;
    if (fd_end < fds.size()) limit = std::min(limit, fds[fd_end].offset - w->position);
    std::vector<iovec> iov;
    std::size_t offered = 0;
    for (std::size_t i = w->first; i < w->parts.size() && offered < limit && iov.size() < IOV_MAX;
         ++i) {
      iovec part = w->parts[i];
      part.iov_len = std::min(part.iov_len, limit - offered);
      if (part.iov_len == 0) continue;
      iov.push_back(part);
      offered += part.iov_len;
    }
    char dummy = 0;
    if (iov.empty()) iov.push_back({&dummy, 0});  // descriptors need at least an empty iovec
    msghdr message{};
    message.msg_iov = iov.data();
    message.msg_iovlen = iov.size();
    std::vector<char> control;
    const std::size_t count = fd_end - w->next_fd;
    if (count > 0) {
      control.assign(CMSG_SPACE(count * sizeof(int)), 0);
      message.msg_control = control.data();
      message.msg_controllen = control.size();
      cmsghdr* header = CMSG_FIRSTHDR(&message);
      header->cmsg_level = SOL_SOCKET;
      header->cmsg_type = SCM_RIGHTS;
      header->cmsg_len = CMSG_LEN(count * sizeof(int));
      auto* out = reinterpret_cast<int*>(CMSG_DATA(header));
      for (std::size_t i = 0; i < count; ++i) out[i] = fds[w->next_fd + i].fd;
    }
    ssize_t sent = ::sendmsg(socket_.native_handle(), &message, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        auto self = shared_from_this();
        socket_.async_wait(asio::socket_base::wait_write,
                           [this, self, w](const asio::error_code& ec) {
                             if (ec) {
                               writing_ = false;
                               in_flight_.clear();
                               return close();
                             }
                             continue_fd_write(w);
                           });
        return;
      }
      writing_ = false;
      in_flight_.clear();
      return close();
    }
    w->next_fd = fd_end;  // sent with the first byte of this call
    auto left = static_cast<std::size_t>(sent);
    w->position += left;
    while (left > 0 && w->first < w->parts.size()) {
      iovec& part = w->parts[w->first];
      std::size_t take = std::min(left, part.iov_len);
      part.iov_base = static_cast<char*>(part.iov_base) + take;
      part.iov_len -= take;
      left -= take;
      if (part.iov_len == 0) ++w->first;
    }
    while (w->first < w->parts.size() && w->parts[w->first].iov_len == 0) ++w->first;
  }
  finish_write(w->total);
}

}  // namespace slipstream::server
