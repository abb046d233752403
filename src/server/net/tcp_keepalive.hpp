// Redis's tcp-keepalive on an accepted TCP connection: a peer that vanished without closing (its
// host died, a partition) is noticed and dropped, so what it held (a stream group's place, a
// blocked writer's step) is released instead of held forever.
#pragma once

#include <cstdint>

namespace slipstream::server {

/// Linux's largest TCP_KEEPIDLE.
constexpr std::uint32_t kMaxTcpKeepalive = 32767;

/// `seconds` > 0: probes after `seconds` of silence, then every `seconds / 3` (at least 1), three
/// times; and data left unacknowledged for 2 x `seconds` (TCP_USER_TIMEOUT: a peer behind a
/// partition while the server is sending it a step) ends the connection. 0 leaves the socket as
/// it is. Best effort: a socket option the kernel refuses changes nothing else.
void set_tcp_keepalive(int fd, std::uint32_t seconds);

}  // namespace slipstream::server
