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
  std::size_t max_bulk_len = 512ull << 20;
  std::size_t max_clients = 10000;
  std::string dir = ".";              ///< where snapshots are written and loaded
  std::string db_filename = "dump.slip";
  std::string log_level = "info";
  unsigned executor_threads = 2;      ///< threads running models and scripts (not I/O)
  int intra_op_threads = 0;           ///< threads inside one model run (0: backend default)
  int inter_op_threads = 0;           ///< backend inter-op pool (0: backend default)
  std::string cluster_nodes;          ///< "host:port,..." of every shard; empty: not clustered
  int cluster_node_index = -1;        ///< this shard's entry; -1: the one matching port/bind
};

}  // namespace slipstream::server
