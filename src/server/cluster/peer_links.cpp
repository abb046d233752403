// Messages to the other cluster members; see peer_links.hpp.
#include "server/cluster/peer_links.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include <spdlog/spdlog.h>

namespace slipstream::server {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr std::size_t kBatch = 256;
constexpr int kConnectTimeoutMs = 2000;
constexpr int kIoTimeoutMs = 5000;
constexpr milliseconds kFirstBackoff{100};
constexpr milliseconds kMaxBackoff{5000};

void append_command(std::string& out, const std::vector<std::string>& command) {
  out += "*" + std::to_string(command.size()) + "\r\n";
  for (const std::string& arg : command) {
    out += "$" + std::to_string(arg.size()) + "\r\n";
    out += arg;
    out += "\r\n";
  }
}

// A connected, blocking TCP socket with I/O timeouts, or -1 with `error` set.
int connect_to(const ClusterNode& node, std::string& error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(node.port);
  if (int rc = ::getaddrinfo(node.host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    error = std::string("cannot resolve the host: ") + ::gai_strerror(rc);
    return -1;
  }
  int fd = -1;
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) continue;
    int rc = ::connect(fd, a->ai_addr, a->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      rc = ::poll(&p, 1, kConnectTimeoutMs) == 1 ? 0 : -1;
      int so_error = rc == 0 ? 0 : ETIMEDOUT;
      socklen_t length = sizeof so_error;
      if (rc == 0) ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &so_error, &length);
      if (so_error != 0) {
        errno = so_error;
        rc = -1;
      }
    }
    if (rc != 0) {
      error = std::strerror(errno);
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  if (fd < 0) return -1;
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  timeval timeout{kIoTimeoutMs / 1000, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

bool write_all(int fd, std::string_view bytes, std::string& error) {
  while (!bytes.empty()) {
    ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error = n < 0 ? std::strerror(errno) : "connection closed";
      return false;
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// Reads RESP replies from a blocking socket.
class ReplyReader {
 public:
  explicit ReplyReader(int fd) : fd_(fd) {}

  // Reads one whole reply; nullopt (with `error`) when the connection failed. The reply's first
  // line is returned (its type byte first): enough for the simple replies peers answer with.
  std::optional<std::string> next(std::string& error) {
    std::optional<std::string> line = read_line(error);
    if (!line || line->empty()) {
      if (line) error = "malformed reply";
      return std::nullopt;
    }
    if ((*line)[0] == '$') {
      const long length = std::strtol(line->c_str() + 1, nullptr, 10);
      if (length >= 0 && !skip(static_cast<std::size_t>(length) + 2, error)) return std::nullopt;
    } else if ((*line)[0] == '*') {
      const long count = std::strtol(line->c_str() + 1, nullptr, 10);
      for (long i = 0; i < count; ++i) {
        if (!next(error)) return std::nullopt;
      }
    }
    return line;
  }

 private:
  bool fill(std::string& error) {
    char chunk[4096];
    for (;;) {
      ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        error = n < 0 ? std::strerror(errno) : "connection closed";
        return false;
      }
      buffer_.append(chunk, static_cast<std::size_t>(n));
      return true;
    }
  }
  std::optional<std::string> read_line(std::string& error) {
    for (;;) {
      if (auto end = buffer_.find("\r\n"); end != std::string::npos) {
        std::string line = buffer_.substr(0, end);
        buffer_.erase(0, end + 2);
        return line;
      }
      if (!fill(error)) return std::nullopt;
    }
  }
  bool skip(std::size_t bytes, std::string& error) {
    while (buffer_.size() < bytes) {
      if (!fill(error)) return false;
    }
    buffer_.erase(0, bytes);
    return true;
  }

  int fd_;
  std::string buffer_;
};

}  // namespace

PeerLinks::PeerLinks(const Cluster& cluster, std::string password)
    : nodes_(cluster.nodes()), self_(cluster.self_index()), password_(std::move(password)),
      links_(nodes_.size()) {
  worker_ = std::thread([this] { run(); });
}

PeerLinks::~PeerLinks() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  worker_.join();
  for (Link& link : links_) {
    if (link.fd >= 0) ::close(link.fd);
  }
}

void PeerLinks::send(std::size_t node, std::vector<std::string> command) {
  {
    std::lock_guard lock(mutex_);
    if (node >= links_.size() || node == self_) return;
    Link& link = links_[node];
    link.queue.push_back(std::move(command));
    if (link.queue.size() > kMaxQueued) {
      link.queue.pop_front();
      ++link.popped;
      if (dropped_++ % 10000 == 0) {
        spdlog::warn("cluster member {}: more than {} messages queued; dropping the oldest",
                     nodes_[node].endpoint(), kMaxQueued);
      }
    }
  }
  wake_.notify_all();
}

void PeerLinks::set_password(std::string password) {
  std::lock_guard lock(mutex_);
  password_ = std::move(password);
}

PeerLinks::Stats PeerLinks::stats() const {
  std::lock_guard lock(mutex_);
  Stats out;
  for (const Link& link : links_) out.queued += link.queue.size();
  out.delivered = delivered_;
  out.dropped = dropped_;
  return out;
}

void PeerLinks::run() {
  std::unique_lock lock(mutex_);
  for (bool last_pass = false;;) {
    last_pass = stopping_;
    std::optional<Clock::time_point> next_retry;
    for (std::size_t node = 0; node < links_.size(); ++node) {
      Link& link = links_[node];
      if (link.queue.empty()) continue;
      if (!last_pass && link.retry_at > Clock::now()) {
        next_retry = next_retry ? std::min(*next_retry, link.retry_at) : link.retry_at;
        continue;
      }
      const std::size_t taken = std::min(kBatch, link.queue.size());
      std::vector<std::vector<std::string>> batch(link.queue.begin(),
                                                  link.queue.begin() + static_cast<long>(taken));
      const std::uint64_t popped_before = link.popped;
      int fd = link.fd;
      std::string error, password = password_;
      lock.unlock();
      const bool ok = deliver(node, fd, batch, password, error);
      lock.lock();
      link.fd = fd;
      if (!ok) {
        failed(node, link, error);
        if (!last_pass && (!next_retry || link.retry_at < *next_retry)) next_retry = link.retry_at;
        continue;
      }
      delivered(node, link);
      // Commands dropped from the front meanwhile were part of the batch.
      const std::size_t gone = static_cast<std::size_t>(link.popped - popped_before);
      const std::size_t left = taken > gone ? taken - gone : 0;
      link.queue.erase(link.queue.begin(),
                       link.queue.begin() + static_cast<long>(std::min(left, link.queue.size())));
      link.popped += left;
      delivered_ += taken;
    }
    if (last_pass) return;
    const bool more = std::any_of(links_.begin(), links_.end(), [](const Link& l) {
      return !l.queue.empty() && l.retry_at <= Clock::now();
    });
    if (more) continue;
    auto ready = [&] {
      return stopping_ || std::any_of(links_.begin(), links_.end(), [](const Link& l) {
               return !l.queue.empty() && l.retry_at <= Clock::now();
             });
    };
    if (next_retry) {
      wake_.wait_until(lock, *next_retry, ready);
    } else {
      wake_.wait(lock, ready);
    }
  }
}

bool PeerLinks::deliver(std::size_t node, int& fd,
                        const std::vector<std::vector<std::string>>& batch,
                        const std::string& password, std::string& error) {
  std::string request;
  std::size_t replies = batch.size();
  if (fd < 0) {
    fd = connect_to(nodes_[node], error);
    if (fd < 0) {
      error = "cannot connect: " + error;
      return false;
    }
    if (!password.empty()) {
      append_command(request, {"AUTH", password});
      ++replies;
    }
  }
  for (const auto& command : batch) append_command(request, command);
  if (!write_all(fd, request, error)) return false;
  ReplyReader reader(fd);
  bool refused_access = false;
  for (std::size_t i = 0; i < replies; ++i) {
    std::optional<std::string> reply = reader.next(error);
    if (!reply) return false;
    if ((*reply)[0] != '-') continue;
    // Not let in (a password that differs, or none): the messages were not carried out, so
    // they stay queued and are tried again (with back-off) rather than lost.
    if (reply->starts_with("-NOAUTH") || reply->starts_with("-WRONGPASS") ||
        reply->starts_with("-DENIED") || reply->find("protected mode") != std::string::npos) {
      if (!refused_access) error = "refused: " + reply->substr(1);
      refused_access = true;
      continue;
    }
    spdlog::warn("cluster member {} refused a message: {}", nodes_[node].endpoint(),
                 reply->substr(1));
  }
  return !refused_access;
}

void PeerLinks::delivered(std::size_t node, Link& link) {
  if (link.warned) {
    spdlog::info("cluster member {} reached again", nodes_[node].endpoint());
  }
  link.warned = false;
  link.backoff = milliseconds(0);
}

void PeerLinks::failed(std::size_t node, Link& link, const std::string& why) {
  if (link.fd >= 0) ::close(link.fd);
  link.fd = -1;
  link.backoff = std::clamp(link.backoff * 2, kFirstBackoff, kMaxBackoff);
  link.retry_at = Clock::now() + link.backoff;
  if (!link.warned) {
    spdlog::warn("cluster member {} cannot be reached ({}); retrying",
                 nodes_[node].endpoint(), why);
    link.warned = true;
  }
}

}  // namespace slipstream::server
