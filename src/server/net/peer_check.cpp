// Peer identification for protected mode: SO_PEERCRED for Unix sockets, the kernel's socket table
// (NETLINK_SOCK_DIAG, inet_diag) for loopback TCP; see peer_check.hpp.
#include "server/net/peer_check.hpp"

#include <arpa/inet.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <system_error>

namespace slipstream::server {
namespace {

std::string os_error(int error) { return std::generic_category().message(error); }

// An owned file descriptor (only the netlink socket below needs one).
class ScopedFd {
 public:
  explicit ScopedFd(int fd) noexcept : fd_(fd) {}
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;
  ~ScopedFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const noexcept { return fd_; }

 private:
  int fd_;
};

bool is_v4_mapped(const in6_addr& address) { return IN6_IS_ADDR_V4MAPPED(&address); }

bool is_loopback(const sockaddr_storage& address) {
  if (address.ss_family == AF_INET) {
    const auto& v4 = reinterpret_cast<const sockaddr_in&>(address);
    return (ntohl(v4.sin_addr.s_addr) >> 24) == 127;
  }
  if (address.ss_family == AF_INET6) {
    const in6_addr& v6 = reinterpret_cast<const sockaddr_in6&>(address).sin6_addr;
    if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
    return is_v4_mapped(v6) && v6.s6_addr[12] == 127;  // ::ffff:127.x.y.z (dual-stack listener)
  }
  return false;
}

std::string address_text(const sockaddr_storage& address) {
  std::array<char, INET6_ADDRSTRLEN> text{};
  if (address.ss_family == AF_INET) {
    const auto& v4 = reinterpret_cast<const sockaddr_in&>(address);
    ::inet_ntop(AF_INET, &v4.sin_addr, text.data(), text.size());
    return std::string(text.data()) + ":" + std::to_string(ntohs(v4.sin_port));
  }
  const auto& v6 = reinterpret_cast<const sockaddr_in6&>(address);
  ::inet_ntop(AF_INET6, &v6.sin6_addr, text.data(), text.size());
  return "[" + std::string(text.data()) + "]:" + std::to_string(ntohs(v6.sin6_port));
}

// Copies an address and port into inet_diag's form (network byte order, 16 bytes for either
// family: IPv4 uses the first word).
void to_diag(const sockaddr_storage& address, __be16* port, __be32* words) {
  if (address.ss_family == AF_INET) {
    const auto& v4 = reinterpret_cast<const sockaddr_in&>(address);
    *port = v4.sin_port;
    std::memcpy(words, &v4.sin_addr, sizeof v4.sin_addr);
  } else {
    const auto& v6 = reinterpret_cast<const sockaddr_in6&>(address);
    *port = v6.sin6_port;
    std::memcpy(words, &v6.sin6_addr, sizeof v6.sin6_addr);
  }
}

// Asks the kernel who owns the TCP socket at the far end of our connection: that socket's local
// address is our peer and its remote address is us. The request names the exact 4-tuple (no
// dump, no filter), so the kernel answers with one socket or ENOENT. A dual-stack listener sees
// IPv4 peers as ::ffff:a.b.c.d: sent as AF_INET6, the kernel then looks them up as IPv4.
std::optional<uid_t> lookup_tcp_owner(const sockaddr_storage& peer, const sockaddr_storage& local,
                                      std::string* error) {
  ScopedFd netlink(::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG));
  if (netlink.get() < 0) {
    *error = "cannot open a NETLINK_SOCK_DIAG socket: " + os_error(errno);
    return std::nullopt;
  }
  // The kernel answers inside sendto(); the timeout only guards the accept loop against the
  // unexpected.
  timeval timeout{.tv_sec = 1, .tv_usec = 0};
  ::setsockopt(netlink.get(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);

  struct {
    nlmsghdr header;
    inet_diag_req_v2 body;
  } request{};
  request.header.nlmsg_len = sizeof request;
  request.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  request.header.nlmsg_flags = NLM_F_REQUEST;
  request.header.nlmsg_seq = 1;
  request.body.sdiag_family = static_cast<__u8>(peer.ss_family);
  request.body.sdiag_protocol = IPPROTO_TCP;
  request.body.idiag_states = ~0u;
  to_diag(peer, &request.body.id.idiag_sport, request.body.id.idiag_src);
  to_diag(local, &request.body.id.idiag_dport, request.body.id.idiag_dst);
  request.body.id.idiag_cookie[0] = INET_DIAG_NOCOOKIE;
  request.body.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;

  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (::sendto(netlink.get(), &request, sizeof request, 0, reinterpret_cast<sockaddr*>(&kernel),
               sizeof kernel) != static_cast<ssize_t>(sizeof request)) {
    *error = "sock_diag request failed: " + os_error(errno);
    return std::nullopt;
  }
  alignas(nlmsghdr) std::array<char, 8192> reply;
  ssize_t got;
  do {
    got = ::recv(netlink.get(), reply.data(), reply.size(), 0);
  } while (got < 0 && errno == EINTR);
  if (got < 0) {
    *error = "no sock_diag answer: " + os_error(errno);
    return std::nullopt;
  }
  int remaining = static_cast<int>(got);
  for (auto* message = reinterpret_cast<nlmsghdr*>(reply.data()); NLMSG_OK(message, remaining);
       message = NLMSG_NEXT(message, remaining)) {
    if (message->nlmsg_type == NLMSG_ERROR) {
      const auto* failure = static_cast<const nlmsgerr*>(NLMSG_DATA(message));
      *error = "socket table lookup failed: " + os_error(-failure->error);
      return std::nullopt;
    }
    if (message->nlmsg_type == SOCK_DIAG_BY_FAMILY &&
        message->nlmsg_len >= NLMSG_LENGTH(sizeof(inet_diag_msg))) {
      return static_cast<const inet_diag_msg*>(NLMSG_DATA(message))->idiag_uid;
    }
  }
  *error = "sock_diag answer without a socket";
  return std::nullopt;
}

}  // namespace

PeerIdentity identify_peer(int fd) {
  PeerIdentity identity;
  sockaddr_storage peer{}, local{};
  socklen_t peer_size = sizeof peer, local_size = sizeof local;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_size) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_size) != 0) {
    identity.address = "?";
    identity.unknown_uid = "cannot read the socket's addresses: " + os_error(errno);
    return identity;
  }
  if (local.ss_family == AF_UNIX) {
    identity.loopback = true;
    ucred credentials{};
    socklen_t size = sizeof credentials;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &size) != 0) {
      identity.address = "unix";
      identity.unknown_uid = "SO_PEERCRED failed: " + os_error(errno);
      return identity;
    }
    identity.address = "unix:pid=" + std::to_string(credentials.pid);
    identity.uid = credentials.uid;
    return identity;
  }
  identity.address = address_text(peer);
  identity.loopback = is_loopback(peer);
  if (!identity.loopback) {
    identity.unknown_uid = "not looked up (not a loopback peer)";
    return identity;
  }
  identity.uid = lookup_tcp_owner(peer, local, &identity.unknown_uid);
  return identity;
}

std::optional<std::string> protected_mode_refusal(const PeerIdentity& peer, uid_t owner) {
  if (!peer.loopback) return "the peer is not on the loopback interface";
  if (!peer.uid) return "cannot tell which user the peer is (" + peer.unknown_uid + ")";
  if (*peer.uid != owner && *peer.uid != 0) {
    return "the peer runs as uid " + std::to_string(*peer.uid) + ", not as the server's uid " +
           std::to_string(owner);
  }
  return std::nullopt;
}

std::string_view protected_mode_denied_reply() {
  return "-DENIED slipstream is running in protected mode because protected mode is enabled and "
         "no password is set. In this mode connections are only accepted from the user running "
         "the server, over the loopback interface or the Unix socket. To let others connect, do "
         "one of the following: 1) set a password (--requirepass-file, SLIPSTREAM_PASSWORD, or "
         "'CONFIG SET requirepass' from an accepted connection) and give it to them; 2) restart "
         "the server with '--protected-mode no', or send 'CONFIG SET protected-mode no' from an "
         "accepted connection, but MAKE SURE nobody who must not read or change the data can "
         "reach the server if you do so.\r\n";
}

}  // namespace slipstream::server
