// `slipstream server`: parses the server's options and runs it until shutdown.
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <fstream>
#include <memory>

#include "cli/commands.hpp"
#include "ml/backend.hpp"
#include "server/server.hpp"

namespace slipstream::cli {
namespace {

std::string read_secret_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read --requirepass-file '" + path + "'");
  std::string secret;
  std::getline(in, secret);
  if (secret.empty()) throw std::runtime_error("--requirepass-file '" + path + "' is empty");
  return secret;
}

}  // namespace

std::function<int()> add_server_command(CLI::App& app) {
  auto options = std::make_shared<server::ServerOptions>();
  auto password_file = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("server", "Run a slipstream server (RESP + RedisAI tensors)");
  cmd->add_option("--port", options->port, "TCP port (0: no TCP listener)")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  cmd->add_option("--bind", options->bind, "Address to listen on")->capture_default_str();
  cmd->add_option("--unixsocket", options->unix_socket, "Also listen on this Unix socket path");
  cmd->add_option("--unixsocketperm", options->unix_socket_perm,
                  "Permissions of the Unix socket (octal, e.g. 0700)")
      ->capture_default_str();
  cmd->add_option("--threads", options->threads, "I/O threads (0: one per core)")
      ->capture_default_str();
  cmd->add_option("--maxmemory", options->max_memory,
                  "Refuse writes (-OOM) beyond this many bytes of data (0: no limit)")
      ->capture_default_str();
  cmd->add_option("--shm-size", options->shm_size,
                  "Bytes of shared memory for local clients' fast path (0: off)")
      ->capture_default_str();
  auto no_shm = std::make_shared<bool>(false);
  cmd->add_flag("--no-shm", *no_shm, "Disable the shared-memory fast path (as --shm-size 0)");
  cmd->add_option("--requirepass", options->password,
                  "Password clients must AUTH with (visible in ps: prefer "
                  "--requirepass-file or SLIPSTREAM_PASSWORD)");
  cmd->add_option("--requirepass-file", *password_file,
                  "Read the password from the first line of this file");
  cmd->add_option("--max-bulk-len", options->max_bulk_len,
                  "Largest single argument in bytes; longer ones are refused unread")
      ->capture_default_str();
  cmd->add_option("--maxclients", options->max_clients, "Most simultaneous clients")
      ->capture_default_str();
  cmd->add_option("--dir", options->dir, "Directory for snapshots (loaded at start-up)")
      ->capture_default_str();
  cmd->add_option("--dbfilename", options->db_filename, "Snapshot file name")
      ->capture_default_str();
  cmd->add_option("--executor-threads", options->executor_threads,
                  "Threads that run models and scripts (separate from I/O threads)")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1024u));
  cmd->add_option("--intra-op-threads", options->intra_op_threads,
                  "Threads inside one model run (0: libtorch's default)")
      ->capture_default_str();
  cmd->add_option("--inter-op-threads", options->inter_op_threads,
                  "libtorch inter-op thread pool (0: libtorch's default)")
      ->capture_default_str();
  cmd->add_option("--cluster-nodes", options->cluster_nodes,
                  "Cluster mode: host:port of every shard, comma-separated, the same list (same "
                  "order) on every member; member k serves slots [k*16384/n, (k+1)*16384/n)");
  cmd->add_option("--cluster-node-index", options->cluster_node_index,
                  "This shard's position in --cluster-nodes (default: the entry matching "
                  "--bind:--port, else the only entry with --port)")
      ->check(CLI::Range(0, 16383));
  cmd->add_option("--loglevel", options->log_level, "trace, debug, info, warn, error")
      ->capture_default_str()
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}));

  return [options, password_file, no_shm]() -> int {
    if (*no_shm) options->shm_size = 0;
    spdlog::set_level(spdlog::level::from_str(options->log_level));
    spdlog::set_pattern("%Y-%m-%d %H:%M:%S.%e %^%l%$ [%t] %v");
    if (options->cluster_node_index >= 0 && options->cluster_nodes.empty()) {
      throw std::runtime_error("--cluster-node-index needs --cluster-nodes");
    }
    if (!password_file->empty()) options->password = read_secret_file(*password_file);
    if (options->password.empty()) {
      if (const char* env = std::getenv("SLIPSTREAM_PASSWORD")) options->password = env;
    }
    if (options->bind != "127.0.0.1" && options->bind != "::1" && options->bind != "localhost" &&
        options->password.empty()) {
      spdlog::warn("listening on {} without a password: anyone who can reach it has full access",
                   options->bind);
    }
    server::Server server(*options);
    server.set_backend(ml::make_torch_backend(
        {.intra_op_threads = options->intra_op_threads,
         .inter_op_threads = options->inter_op_threads}));
    return server.run();
  };
}

}  // namespace slipstream::cli
