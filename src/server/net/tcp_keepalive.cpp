#include "server/net/tcp_keepalive.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>

namespace slipstream::server {

void set_tcp_keepalive(int fd, std::uint32_t seconds) {
  if (seconds == 0) return;
  const int idle = static_cast<int>(std::min(seconds, kMaxTcpKeepalive));
  const int on = 1, interval = std::max(1, idle / 3), probes = 3;
  const unsigned int user_timeout_ms = 2u * static_cast<unsigned int>(idle) * 1000u;
  ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof probes);
  ::setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout_ms, sizeof user_timeout_ms);
}

}  // namespace slipstream::server
