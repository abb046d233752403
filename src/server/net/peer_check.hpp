// Protected mode's access check: who is at the other end of an accepted connection, and whether
// a server without a password may serve them.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>

namespace slipstream::server {

/// The other end of an accepted connection, as the kernel reports it.
struct PeerIdentity {
  std::string address;       ///< "ip:port" for TCP, "unix:pid=N" for a Unix socket
  bool loopback = false;     ///< a Unix socket, or TCP from 127.0.0.0/8, ::1 or ::ffff:127.x
  std::optional<uid_t> uid;  ///< the owner of the peer's socket; empty when not known
  std::string unknown_uid;   ///< why `uid` is empty (lookup failed, or not looked up)
};

/// Identifies the peer of the connected socket `fd` (AF_INET, AF_INET6 or AF_UNIX).
///
/// A Unix peer's uid comes from SO_PEERCRED. A TCP peer on a loopback address lives on this host,
/// so its socket is in the kernel's socket table: the uid comes from a NETLINK_SOCK_DIAG
/// (inet_diag) lookup of that exact 4-tuple. A TCP peer on any other address is not looked up:
/// its uid is meaningless here. Never throws; a failed lookup leaves `uid` empty with the reason
/// in `unknown_uid`. Blocks for one netlink round trip (a few microseconds); thread-safe.
PeerIdentity identify_peer(int fd);

/// Protected mode's rule, for a server running as `owner` with no password set: a peer may
/// connect only over loopback or the Unix socket, and only from a socket owned by `owner` or by
/// root (who can read the server's memory anyway). An unknown uid is refused (fail closed).
/// Returns why `peer` is refused, or std::nullopt when it is admitted.
std::optional<std::string> protected_mode_refusal(const PeerIdentity& peer, uid_t owner);

/// The one line a refused connection receives before it is closed (Redis's -DENIED reply,
/// adapted), CRLF included.
std::string_view protected_mode_denied_reply();

}  // namespace slipstream::server
