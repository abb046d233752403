// Test support: a minimal blocking RESP client that sends raw bytes and parses one reply at a
// time, so tests can check exact wire behaviour (pipelining, malformed input, reply shapes).
#pragma once

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <string_view>
#include <vector>

namespace slipstream::testing {

struct RespReply {
  enum class Kind { kSimple, kError, kInteger, kBulk, kNull, kArray, kNullArray, kMap, kDouble };
  Kind kind = Kind::kNull;
  std::string text;  // simple, error, bulk, double
  long long integer = 0;
  std::vector<RespReply> elements;  // array (map: key, value, key, value ...)

  bool is_error() const { return kind == Kind::kError; }
  bool is_ok() const { return kind == Kind::kSimple && text == "OK"; }
  /// Compact text for assertions: +OK, -ERR x, :1, $abc, (nil), [a, b].
  std::string str() const {
    switch (kind) {
      case Kind::kSimple: return "+" + text;
      case Kind::kError: return "-" + text;
      case Kind::kInteger: return ":" + std::to_string(integer);
      case Kind::kBulk: return "$" + text;
      case Kind::kDouble: return "," + text;
      case Kind::kNull: return "(nil)";
      case Kind::kNullArray: return "(nil-array)";
      case Kind::kArray:
      case Kind::kMap: {
        std::string out = kind == Kind::kMap ? "{" : "[";
        for (std::size_t i = 0; i < elements.size(); ++i) {
          if (i) out += ", ";
          out += elements[i].str();
        }
        return out + (kind == Kind::kMap ? "}" : "]");
      }
    }
    return "?";
  }
};

class RawClient {
 public:
  static RawClient tcp(int port) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      ::close(fd);
      throw std::runtime_error("connect to port " + std::to_string(port) + " failed");
    }
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return RawClient(fd);
  }
  static RawClient unix_socket(const std::string& path) {
    int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      ::close(fd);
      throw std::runtime_error("connect to " + path + " failed");
    }
    return RawClient(fd);
  }

  RawClient(RawClient&& other) noexcept
      : fd_(std::exchange(other.fd_, -1)), buf_(std::move(other.buf_)), fds_(std::move(other.fds_)) {}
  ~RawClient() { close(); }

  /// Encodes args as a RESP multibulk request.
  static std::string encode(const std::vector<std::string>& args) {
    std::string out = "*" + std::to_string(args.size()) + "\r\n";
    for (const auto& a : args) {
      out.push_back('$');
      out.append(std::to_string(a.size()));
      out.append("\r\n");
      out.append(a);
      out.append("\r\n");
    }
    return out;
  }

  void send_raw(std::string_view bytes) {
    while (!bytes.empty()) {
      ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) throw std::runtime_error("send failed");
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
  }
  void send(const std::vector<std::string>& args) { send_raw(encode(args)); }

  /// How long a reply is waited for unless a test says otherwise: a guard against a hang, not a
  /// speed check. Sanitizer builds on a busy 2-core machine take several seconds for some
  /// replies (a model load: ModelTest and ClusterTest timed out at 5 s in CI's ASan and TSan
  /// stages).
  static constexpr int kReplyTimeoutMs = 30000;

  RespReply call(const std::vector<std::string>& args, int timeout_ms = kReplyTimeoutMs) {
    send(args);
    return read_reply(timeout_ms);
  }

  /// Reads one reply; throws on timeout or when the server closes the connection.
  RespReply read_reply(int timeout_ms = kReplyTimeoutMs) {
    std::string line = read_line(timeout_ms);
    RespReply r;
    char type = line[0];
    std::string rest = line.substr(1);
    switch (type) {
      case '+': r.kind = RespReply::Kind::kSimple; r.text = rest; break;
      case '-': r.kind = RespReply::Kind::kError; r.text = rest; break;
      case ':': r.kind = RespReply::Kind::kInteger; r.integer = std::stoll(rest); break;
      case ',': r.kind = RespReply::Kind::kDouble; r.text = rest; break;
      case '_': r.kind = RespReply::Kind::kNull; break;
      case '$':
      case '=': {
        long long n = std::stoll(rest);
        if (n < 0) {
          r.kind = RespReply::Kind::kNull;
          break;
        }
        r.kind = RespReply::Kind::kBulk;
        r.text = read_exact(static_cast<std::size_t>(n) + 2, timeout_ms);
        r.text.resize(static_cast<std::size_t>(n));
        if (type == '=') r.text = r.text.substr(4);
        break;
      }
      case '*':
      case '~':
      case '%': {
        long long n = std::stoll(rest);
        if (n < 0) {
          r.kind = RespReply::Kind::kNullArray;
          break;
        }
        r.kind = type == '%' ? RespReply::Kind::kMap : RespReply::Kind::kArray;
        std::size_t count = static_cast<std::size_t>(n) * (type == '%' ? 2 : 1);
        for (std::size_t i = 0; i < count; ++i) r.elements.push_back(read_reply(timeout_ms));
        break;
      }
      default: throw std::runtime_error("bad reply type byte: " + line);
    }
    return r;
  }

  /// True when the server has closed the connection (reads EOF within timeout_ms). The default,
  /// like kReplyTimeoutMs, guards against a connection never closed; a close seen later than a
  /// fixed moment is not the failure (a loaded machine may take seconds to get to it).
  bool closed_by_server(int timeout_ms = kReplyTimeoutMs) {
    if (!buf_.empty()) return false;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) <= 0) return false;
    char c;
    return ::recv(fd_, &c, 1, MSG_PEEK) == 0;
  }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    for (int passed : fds_) ::close(passed);
    fds_.clear();
  }
  int fd() const { return fd_; }
  /// The next descriptor the server passed (in the order received), or -1; the caller owns it.
  int take_fd() {
    if (fds_.empty()) return -1;
    int passed = fds_.front();
    fds_.erase(fds_.begin());
    return passed;
  }

 private:
  explicit RawClient(int fd) : fd_(fd) {}

  void fill(int timeout_ms) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) <= 0) throw std::runtime_error("timed out waiting for reply");
    char tmp[65536];
    // recvmsg, so that descriptors passed with the bytes (SCM_RIGHTS, Unix sockets) are kept.
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 64)];
    iovec io{tmp, sizeof tmp};
    msghdr message{};
    message.msg_iov = &io;
    message.msg_iovlen = 1;
    message.msg_control = control;
    message.msg_controllen = sizeof control;
    ssize_t n = ::recvmsg(fd_, &message, MSG_CMSG_CLOEXEC);
    if (n <= 0) throw std::runtime_error("connection closed by server");
    for (cmsghdr* c = CMSG_FIRSTHDR(&message); c != nullptr; c = CMSG_NXTHDR(&message, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
      const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (std::size_t i = 0; i < count; ++i) {
        int passed;
        std::memcpy(&passed, CMSG_DATA(c) + i * sizeof(int), sizeof passed);
        fds_.push_back(passed);
      }
    }
    buf_.append(tmp, static_cast<std::size_t>(n));
  }
  std::string read_line(int timeout_ms) {
    while (true) {
      auto pos = buf_.find("\r\n");
      if (pos != std::string::npos) {
        std::string line = buf_.substr(0, pos);
        buf_.erase(0, pos + 2);
        return line;
      }
      fill(timeout_ms);
    }
  }
  std::string read_exact(std::size_t n, int timeout_ms) {
    while (buf_.size() < n) fill(timeout_ms);
    std::string out = buf_.substr(0, n);
    buf_.erase(0, n);
    return out;
  }

  int fd_ = -1;
  std::string buf_;
  std::vector<int> fds_;  // passed descriptors not yet taken
};

}  // namespace slipstream::testing
