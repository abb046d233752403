// Server settings: from the command line at start-up, some changeable with CONFIG SET.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>

namespace slipstream::server {

struct ServerOptions {
  int port = 6780;                    ///< TCP port; 0 disables TCP
  std::string bind = "127.0.0.1";     ///< address to listen on
  std::string unix_socket;            ///< Unix socket path; empty disables it
  unsigned unix_socket_perm = 0700;   ///< permissions of the Unix socket file
  unsigned threads = 0;               ///< I/O threads; 0 = number of cores
  std::size_t max_memory = 0;         ///< bytes; 0 = unlimited
  /// Bytes the shared-memory fast path may hold (loans, tensors stored through it, views of
  /// copies); 0 disables it.
  std::size_t shm_size = 4ull << 30;
  std::string password;               ///< empty = no AUTH required
  /// Without a password, serve only the server's own user (and root), over loopback TCP or the
  /// Unix socket; others get -DENIED. See docs/security.md.
  bool protected_mode = true;
  std::size_t max_bulk_len = 512ull << 20;
  /// Bytes the arguments of requests being received may hold, all clients together; a bulk that
  /// does not fit is refused with -OOM (0: a quarter of the physical memory).
  std::size_t max_pending_input = 0;
  /// Most bytes the arguments of one request may hold (Redis's client-query-buffer-limit).
  std::size_t client_query_buffer_limit = 1ull << 30;
  /// client-output-buffer-limit for normal clients: replies waiting for a client may reach
  /// `hard` bytes, or stay at `soft` bytes or more for `soft_seconds`, before it is dropped (0:
  /// no limit; back-pressure already bounds what a pipelining client makes the server hold).
  std::size_t client_output_hard_limit = 0;
  std::size_t client_output_soft_limit = 0;
  std::uint64_t client_output_soft_seconds = 0;
  std::size_t max_clients = 10000;
  /// Redis's tcp-keepalive: seconds a TCP client may stay silent before the kernel probes it
  /// (then every third of that, three times), and the most a reply may stay unacknowledged
  /// (twice that): a peer behind a partition or a dead host is dropped within twice this time.
  /// 0: the kernel's defaults (hours).
  std::uint32_t tcp_keepalive_s = 300;
  std::string dir = ".";              ///< where snapshots are written and loaded
  std::string db_filename = "dump.slip";
  std::string log_level = "info";
  unsigned executor_threads = 2;      ///< threads running models and scripts (not I/O)
  /// Wall-clock limit of one model or script run, in milliseconds (0: none). A run past it is
  /// stopped (its worker process is killed) and the caller gets an error.
  std::uint64_t run_timeout_ms = 60000;
  int intra_op_threads = 0;           ///< threads inside one model run (0: backend default)
  int inter_op_threads = 0;           ///< backend inter-op pool (0: backend default)
  std::string cluster_nodes;          ///< "host:port,..." of every shard; empty: not clustered
  int cluster_node_index = -1;        ///< this shard's entry; -1: the one matching port/bind
};

}  // namespace slipstream::server
