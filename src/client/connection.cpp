// Socket connection and RESP reply reading (see connection.hpp).
#include "client/connection.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstring>

#include "client/request.hpp"
#include "slipstream/error.hpp"

namespace slipstream::client {
namespace {

constexpr std::size_t kBufferSize = 64 * 1024;
/// Payload remainders at least this long are received straight into the destination.
constexpr std::size_t kDirectReadThreshold = 16 * 1024;
constexpr int kMaxReplyDepth = 64;

std::string errno_text(int error) { return std::strerror(error); }

int poll_timeout_ms(std::chrono::milliseconds timeout) {
  if (timeout.count() <= 0) return -1;
  return static_cast<int>(std::min<std::int64_t>(timeout.count(), INT_MAX));
}

// Connects `fd` to `addr`, waiting at most `timeout`. Returns 0 or an errno value.
int connect_with_timeout(int fd, const sockaddr* addr, socklen_t length,
                         std::chrono::milliseconds timeout) {
  int flags = ::fcntl(fd, F_GETFL, 0);
  ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  int result = ::connect(fd, addr, length);
  int error = result == 0 ? 0 : errno;
  if (error == EINPROGRESS) {
    pollfd p{fd, POLLOUT, 0};
    int ready;
    do {
      ready = ::poll(&p, 1, poll_timeout_ms(timeout));
    } while (ready < 0 && errno == EINTR);
    if (ready == 0) {
      error = ETIMEDOUT;
    } else {
      socklen_t size = sizeof error;
      ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size);
    }
  }
  ::fcntl(fd, F_SETFL, flags);
  return error;
}

[[noreturn]] void connect_failed(const Address& address, int error, std::chrono::milliseconds t) {
  if (error == ETIMEDOUT) {
    throw TimeoutError("timed out after " + std::to_string(t.count()) + " ms connecting to " +
                       address.to_string());
  }
  throw ConnectionError("cannot connect to " + address.to_string() + ": " + errno_text(error));
}

int open_unix(const Address& address, std::chrono::milliseconds timeout) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (address.path.size() >= sizeof addr.sun_path) {
    throw InvalidArgumentError("Unix socket path too long (" + std::to_string(address.path.size()) +
                               " bytes, at most " + std::to_string(sizeof addr.sun_path - 1) +
                               "): " + address.path);
  }
  std::memcpy(addr.sun_path, address.path.c_str(), address.path.size() + 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw ConnectionError("socket() failed: " + errno_text(errno));
  int error = connect_with_timeout(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr, timeout);
  if (error != 0) {
    ::close(fd);
    connect_failed(address, error, timeout);
  }
  return fd;
}

int open_tcp(const Address& address, std::chrono::milliseconds timeout) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  std::string port = std::to_string(address.port);
  int rc = ::getaddrinfo(address.host.c_str(), port.c_str(), &hints, &found);
  if (rc != 0) {
    throw ConnectionError("cannot resolve host of " + address.to_string() + ": " +
                          ::gai_strerror(rc));
  }
  int error = ECONNREFUSED;
  for (addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
    int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      error = errno;
      continue;
    }
    error = connect_with_timeout(fd, ai->ai_addr, ai->ai_addrlen, timeout);
    if (error == 0) {
      ::freeaddrinfo(found);
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      return fd;
    }
    ::close(fd);
  }
  ::freeaddrinfo(found);
  connect_failed(address, error, timeout);
}

}  // namespace

std::unique_ptr<Connection> Connection::open(const Address& address,
                                             std::chrono::milliseconds timeout) {
  int fd = address.kind == Address::Kind::kUnix ? open_unix(address, timeout)
                                                : open_tcp(address, timeout);
  return std::make_unique<Connection>(fd, address.to_string());
}

Connection::Connection(int fd, std::string peer)
    : fd_(fd), peer_(std::move(peer)), buffer_(new char[kBufferSize]) {}

Connection::~Connection() {
  for (int fd : received_fds_) ::close(fd);
  ::close(fd_);
}

ssize_t Connection::receive(void* out, std::size_t size) {
  iovec part{out, size};
  alignas(cmsghdr) char control[CMSG_SPACE(253 * sizeof(int))];  // SCM_MAX_FD descriptors
  msghdr message{};
  message.msg_iov = &part;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof control;
  ssize_t got = ::recvmsg(fd_, &message, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  if (got >= 0) {
    for (cmsghdr* header = CMSG_FIRSTHDR(&message); header != nullptr;
         header = CMSG_NXTHDR(&message, header)) {
      if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) continue;
      std::size_t count = (header->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      const unsigned char* data = CMSG_DATA(header);
      for (std::size_t i = 0; i < count; ++i) {
        int fd;
        std::memcpy(&fd, data + i * sizeof(int), sizeof fd);
        received_fds_.push_back(fd);
      }
    }
    if (message.msg_flags & MSG_CTRUNC) protocol_error("passed file descriptors were truncated");
  }
  return got;
}

int Connection::take_fd() {
  if (received_fds_.empty()) protocol_error("a reply announced a file descriptor that never came");
  int fd = received_fds_.front();
  received_fds_.pop_front();
  return fd;
}

void Connection::protocol_error(const std::string& what) const {
  throw ProtocolError("protocol error from " + peer_ + ": " + what);
}

void Connection::wait(short events) {
  pollfd p{fd_, events, 0};
  int ready;
  do {
    ready = ::poll(&p, 1, poll_timeout_ms(io_timeout_));
  } while (ready < 0 && errno == EINTR);
  if (ready == 0) {
    throw TimeoutError("timed out after " + std::to_string(io_timeout_.count()) + " ms " +
                       (events == POLLIN ? "waiting for a reply from " : "sending to ") + peer_);
  }
  if (ready < 0) throw ConnectionError("poll() failed on " + peer_ + ": " + errno_text(errno));
}

void Connection::send(const Request& request) { send(request.iovecs()); }

void Connection::send(std::vector<iovec> parts) {
  awaiting_reply_ = true;
  std::size_t first = 0;
  while (first < parts.size()) {
    if (parts[first].iov_len == 0) {
      ++first;
      continue;
    }
    msghdr message{};
    message.msg_iov = parts.data() + first;
    message.msg_iovlen = std::min<std::size_t>(parts.size() - first, IOV_MAX);
    ssize_t sent = ::sendmsg(fd_, &message, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        wait(POLLOUT);
        continue;
      }
      throw ConnectionError("connection to " + peer_ +
                            " failed while sending: " + errno_text(errno));
    }
    auto left = static_cast<std::size_t>(sent);
    while (left > 0 && first < parts.size()) {
      if (left >= parts[first].iov_len) {
        left -= parts[first].iov_len;
        ++first;
      } else {
        parts[first].iov_base = static_cast<char*>(parts[first].iov_base) + left;
        parts[first].iov_len -= left;
        left = 0;
      }
    }
  }
}

void Connection::fill() {
  if (begin_ == end_) {
    begin_ = end_ = 0;
  } else if (end_ == kBufferSize) {
    std::memmove(buffer_.get(), buffer_.get() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  if (awaiting_reply_) {
    awaiting_reply_ = false;
    wait(POLLIN);
  }
  for (;;) {
    ssize_t got = receive(buffer_.get() + end_, kBufferSize - end_);
    if (got > 0) {
      end_ += static_cast<std::size_t>(got);
      return;
    }
    if (got == 0) throw ConnectionError("connection to " + peer_ + " closed by the server");
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      wait(POLLIN);
      continue;
    }
    throw ConnectionError("connection to " + peer_ +
                          " failed while receiving: " + errno_text(errno));
  }
}

void Connection::read_exact(void* out, std::size_t size) {
  auto* dst = static_cast<char*>(out);
  std::size_t buffered = std::min(size, end_ - begin_);
  if (buffered > 0) {
    if (dst != nullptr) std::memcpy(dst, buffer_.get() + begin_, buffered);
    begin_ += buffered;
    if (dst != nullptr) dst += buffered;
    size -= buffered;
  }
  while (size > 0) {
    if (dst != nullptr && size >= kDirectReadThreshold) {
      ssize_t got = receive(dst, size);
      if (got > 0) {
        dst += got;
        size -= static_cast<std::size_t>(got);
        continue;
      }
      if (got == 0) throw ConnectionError("connection to " + peer_ + " closed by the server");
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) {
        throw ConnectionError("connection to " + peer_ +
                              " failed while receiving: " + errno_text(errno));
      }
      wait(POLLIN);
      continue;
    }
    fill();
    std::size_t take = std::min(size, end_ - begin_);
    if (dst != nullptr) {
      std::memcpy(dst, buffer_.get() + begin_, take);
      dst += take;
    }
    begin_ += take;
    size -= take;
  }
}

char Connection::read_line(std::string& text) {
  for (;;) {
    const char* start = buffer_.get() + begin_;
    const void* newline = std::memchr(start, '\n', end_ - begin_);
    if (newline != nullptr) {
      auto length = static_cast<std::size_t>(static_cast<const char*>(newline) - start);
      if (length < 2 || start[length - 1] != '\r') protocol_error("reply line not ended by CRLF");
      char type = start[0];
      text.assign(start + 1, length - 2);
      begin_ += length + 1;
      return type;
    }
    if (begin_ == 0 && end_ == kBufferSize) protocol_error("reply line longer than 64 KiB");
    fill();
  }
}

std::int64_t Connection::parse_integer(const std::string& text) const {
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    protocol_error("expected an integer, got '" + text.substr(0, 64) + "'");
  }
  return value;
}

void Connection::read_bulk_body(void* out, std::size_t size) {
  read_exact(out, size);
  char crlf[2];
  read_exact(crlf, 2);
  if (crlf[0] != '\r' || crlf[1] != '\n') protocol_error("bulk string not ended by CRLF");
}

void Connection::skip_bulk_body(std::size_t size) { read_bulk_body(nullptr, size); }

Reply Connection::read_reply() { return read_reply(0); }

Reply Connection::read_reply(int depth) {
  if (depth > kMaxReplyDepth) protocol_error("reply nested too deeply");
  std::string text;
  char type = read_line(text);
  Reply reply;
  switch (type) {
    case '+':
      reply.kind = Reply::Kind::kStatus;
      reply.string = std::move(text);
      return reply;
    case '-':
      reply.kind = Reply::Kind::kError;
      reply.string = std::move(text);
      return reply;
    case ':':
      reply.kind = Reply::Kind::kInteger;
      reply.integer = parse_integer(text);
      return reply;
    case ',':
      reply.kind = Reply::Kind::kDouble;
      reply.string = std::move(text);
      return reply;
    case '(':
      reply.kind = Reply::Kind::kBigNumber;
      reply.string = std::move(text);
      return reply;
    case '#':
      reply.kind = Reply::Kind::kBool;
      reply.integer = text == "t" ? 1 : 0;
      return reply;
    case '_':
      return reply;
    case '$':
    case '=':
    case '!': {
      std::int64_t size = parse_integer(text);
      if (size < 0) return reply;  // $-1: nil
      reply.kind = type == '!' ? Reply::Kind::kError : Reply::Kind::kString;
      reply.string.resize(static_cast<std::size_t>(size));
      read_bulk_body(reply.string.data(), reply.string.size());
      if (type == '=' && reply.string.size() >= 4) reply.string.erase(0, 4);  // "txt:" prefix
      return reply;
    }
    case '*':
    case '~':
    case '>':
    case '%': {
      std::int64_t count = parse_integer(text);
      if (count < 0) return reply;  // *-1: nil
      if (type == '%') count *= 2;
      reply.kind = type == '*'   ? Reply::Kind::kArray
                   : type == '~' ? Reply::Kind::kSet
                   : type == '>' ? Reply::Kind::kPush
                                 : Reply::Kind::kMap;
      reply.elements.reserve(static_cast<std::size_t>(std::min<std::int64_t>(count, 1024)));
      for (std::int64_t i = 0; i < count; ++i) reply.elements.push_back(read_reply(depth + 1));
      return reply;
    }
    default:
      protocol_error(std::string("unknown reply type byte '") + type + "'");
  }
}

bool Connection::closed_by_peer() const {
  if (begin_ != end_) return false;  // unread bytes: let the reply reader judge them
  pollfd p{fd_, POLLIN | POLLRDHUP, 0};
  if (::poll(&p, 1, 0) <= 0) return false;
  if (p.revents & (POLLERR | POLLHUP | POLLRDHUP | POLLNVAL)) return true;
  char byte;
  return ::recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

}  // namespace slipstream::client
