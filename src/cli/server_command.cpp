// `slipstream server`: parses the server's options and runs it until shutdown.
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>

#include "cli/commands.hpp"
#include "cli/daemon.hpp"
#include "common/sanitizer.hpp"
#include "ml/backend.hpp"
#include "ml/sandbox/sandbox_backend.hpp"
#include "server/server.hpp"
#include "server/net/tcp_keepalive.hpp"

namespace slipstream::cli {
namespace {

std::string read_secret_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read --requirepass-file '" + path + "'");
  // A password others can read is no password: say so, but start (the file may be on a file
  // system without modes, or its directory may be private).
  struct stat status {};
  if (::stat(path.c_str(), &status) == 0 && (status.st_mode & 077) != 0) {
    spdlog::warn("--requirepass-file '{}' is readable by {} (mode {:04o}): run chmod 600 on it",
                 path, (status.st_mode & 007) != 0 ? "other users" : "its group",
                 status.st_mode & 07777);
  }
  std::string secret;
  std::getline(in, secret);
  // A file saved with Windows line endings must not make '\r' part of the password.
  while (!secret.empty() && (secret.back() == '\r' || secret.back() == '\n')) secret.pop_back();
  if (secret.empty()) throw std::runtime_error("--requirepass-file '" + path + "' is empty");
  return secret;
}

// "700" and "0700" are both octal, as chmod and Redis's unixsocketperm read them.
unsigned parse_octal_mode(const std::string& text) {
  bool valid = !text.empty() && text.size() <= 4;
  unsigned mode = 0;
  for (char c : text) {
    valid = valid && c >= '0' && c <= '7';
    mode = mode * 8 + static_cast<unsigned>(c - '0');  // unsigned: wraps harmlessly if invalid
  }
  if (!valid || mode > 0777) {
    throw CLI::ValidationError("--unixsocketperm",
                               "'" + text + "' is not an octal file mode from 0 to 0777");
  }
  return mode;
}

bool parse_yes_no(const std::string& option, const std::string& text) {
  if (text == "yes") return true;
  if (text == "no") return false;
  throw CLI::ValidationError(option, "'" + text + "' must be yes or no");
}

// A byte count with Redis's optional units (64mb, 1gb), as CONFIG SET takes it too.
std::size_t parse_size_option(const std::string& option, const std::string& text) {
  auto bytes = server::parse_memory_size(text);
  if (!bytes) {
    throw CLI::ValidationError(option,
                               "'" + text + "' is not a byte count (e.g. 1073741824 or 1gb)");
  }
  return *bytes;
}

// A model worker needs this much address space for libtorch alone (about 600 MB) and its runs.
constexpr std::uint64_t kMinWorkerMemory = std::uint64_t{1} << 30;

// True when this machine has an NVIDIA GPU (its driver's device files): CUDA reserves far more
// address space than memory, so the default limit would make every GPU model fail.
bool has_nvidia_gpu() {
  struct stat info {};
  return ::stat("/dev/nvidiactl", &info) == 0 || ::stat("/proc/driver/nvidia/gpus", &info) == 0;
}

// --worker-memory: "unlimited", 0 (the machine's physical memory; no limit in sanitizer builds or
// on a machine with a GPU) or a size of at least 1gb. Returns the address-space limit for each
// worker, nullopt for none.
std::optional<std::uint64_t> parse_worker_memory(const std::string& text) {
  if (text == "unlimited") return std::nullopt;
  const std::uint64_t bytes = parse_size_option("--worker-memory", text);
  if (bytes == 0) {
    if (kSanitizerBuild || has_nvidia_gpu()) return std::nullopt;
    return static_cast<std::uint64_t>(::sysconf(_SC_PHYS_PAGES)) *
           static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  }
  if (bytes < kMinWorkerMemory) {
    throw CLI::ValidationError("--worker-memory",
                               "'" + text + "' is too small: a model worker needs at least 1gb "
                               "(or 0: the physical memory, or unlimited)");
  }
  return bytes;
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
  cmd->add_option_function<std::string>(
         "--unixsocketperm",
         [options](const std::string& text) { options->unix_socket_perm = parse_octal_mode(text); },
         "Permissions of the Unix socket, octal (e.g. 700 or 0770)")
      ->default_str("0700");
  cmd->add_option_function<std::string>(
         "--protected-mode",
         [options](const std::string& text) {
           options->protected_mode = parse_yes_no("--protected-mode", text);
         },
         "yes: without a password, serve only this user (and root) over loopback TCP or the Unix "
         "socket; no: anyone who can connect")
      ->default_str("yes");
  cmd->add_option("--threads", options->threads, "I/O threads (0: one per CPU this process may run on)")
      ->capture_default_str();
  cmd->add_option_function<std::string>(
         "--maxmemory",
         [options](const std::string& text) {
           options->max_memory = parse_size_option("--maxmemory", text);
         },
         "Refuse writes (-OOM) beyond this many bytes of data, in Redis's units (4gb, 512mb; 0: "
         "no limit)")
      ->default_str(std::to_string(options->max_memory));
  cmd->add_option_function<std::string>(
         "--shm-size",
         [options](const std::string& text) {
           options->shm_size = parse_size_option("--shm-size", text);
         },
         "Bytes of shared memory for local clients' fast path, in Redis's units (0: off)")
      ->default_str(std::to_string(options->shm_size));
  auto no_shm = std::make_shared<bool>(false);
  cmd->add_flag("--no-shm", *no_shm, "Disable the shared-memory fast path (as --shm-size 0)");
  cmd->add_option("--requirepass", options->password,
                  "Password clients must AUTH with (visible in ps: prefer "
                  "--requirepass-file or SLIPSTREAM_PASSWORD)");
  cmd->add_option("--requirepass-file", *password_file,
                  "Read the password from the first line of this file");
  cmd->add_option_function<std::string>(
         "--max-bulk-len",
         [options](const std::string& text) {
           options->max_bulk_len = parse_size_option("--max-bulk-len", text);
           if (options->max_bulk_len < (std::size_t{1} << 20)) {  // as CONFIG SET refuses
             throw CLI::ValidationError("--max-bulk-len", "must be at least 1mb (1048576)");
           }
         },
         "Largest single argument (at least 1mb); longer ones are refused unread")
      ->default_str(std::to_string(options->max_bulk_len));
  cmd->add_option_function<std::string>(
         "--max-pending-input",
         [options](const std::string& text) {
           options->max_pending_input = parse_size_option("--max-pending-input", text);
         },
         "Bytes the arguments being received may hold, all clients together (e.g. 8gb); a bulk "
         "that does not fit is refused with -OOM (0: a quarter of the physical memory)")
      ->default_str("0");
  cmd->add_option_function<std::string>(
         "--client-query-buffer-limit",
         [options](const std::string& text) {
           options->client_query_buffer_limit =
               parse_size_option("--client-query-buffer-limit", text);
         },
         "Most bytes the arguments of one request may hold; a client sending more is "
         "disconnected")
      ->default_str("1gb");
  cmd->add_option_function<std::string>(
         "--client-output-buffer-limit",
         [options](const std::string& text) {
           std::string error;
           auto limit = server::parse_output_buffer_limit(text, &error);
           if (!limit) throw CLI::ValidationError("--client-output-buffer-limit", error);
           options->client_output_hard_limit = limit->hard;
           options->client_output_soft_limit = limit->soft;
           options->client_output_soft_seconds = limit->soft_seconds;
         },
         "'HARD SOFT SECONDS' (e.g. '256mb 64mb 60'): a client whose unsent replies reach HARD "
         "bytes, or stay at SOFT bytes or more for SECONDS, is dropped (0: no limit)")
      ->default_str("0 0 0");
  cmd->add_option("--maxclients", options->max_clients, "Most simultaneous clients")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{1}, std::numeric_limits<std::size_t>::max()));
  cmd->add_option("--tcp-keepalive", options->tcp_keepalive_s,
                  "Seconds of silence before a TCP client is probed; one that stays unreachable "
                  "(a dead host, a partition) is dropped within twice this (0: kernel defaults)")
      ->capture_default_str()
      ->check(CLI::Range(std::uint32_t{0}, server::kMaxTcpKeepalive));
  cmd->add_option("--dir", options->dir, "Directory for snapshots (loaded at start-up)")
      ->capture_default_str();
  cmd->add_option("--dbfilename", options->db_filename, "Snapshot file name")
      ->capture_default_str();
  cmd->add_option("--executor-threads", options->executor_threads,
                  "Threads that run models and scripts (separate from I/O threads)")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1024u));
  cmd->add_option("--run-timeout", options->run_timeout_ms,
                  "Wall-clock limit of one model or script run in milliseconds; a run past it is "
                  "stopped and its caller gets an error (0: no limit)")
      ->capture_default_str();
  auto worker_memory = std::make_shared<std::optional<std::uint64_t>>(parse_worker_memory("0"));
  cmd->add_option_function<std::string>(
         "--worker-memory",
         [worker_memory](const std::string& text) { *worker_memory = parse_worker_memory(text); },
         "Address space of each model worker process, in Redis's units (at least 1gb); a run "
         "that needs more gets an error. 0: the physical memory (no limit on a machine with an "
         "NVIDIA GPU: CUDA reserves far more address space than memory); unlimited: no limit")
      ->default_str("0");
  auto share_memory = std::make_shared<bool>(true);
  cmd->add_option_function<std::string>(
         "--model-shared-memory",
         [share_memory](const std::string& text) {
           *share_memory = parse_yes_no("--model-shared-memory", text);
         },
         "yes: the server and its model workers meet in a shared control block, a model's "
         "inputs of 64 KiB or more held in shared memory reach its worker mapped copy-on-write, "
         "and its outputs of 64 KiB or more come back as shared-memory files; no: everything "
         "goes through the worker's socket")
      ->default_str("yes");
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
  auto daemon = std::make_shared<DaemonOptions>();
  cmd->add_flag("--daemonize", daemon->enabled,
                "Run in the background; return once the server answers PING (status 0), or "
                "print why it did not start (status 1)");
  cmd->add_option("--pidfile", daemon->pid_file,
                  "With --daemonize: write the server's pid here once it is ready");
  cmd->add_option("--logfile", daemon->log_file,
                  "With --daemonize: append the server's output here (default: DIR/slipstream.log)");
  cmd->add_option("--ready-timeout", daemon->ready_timeout,
                  "With --daemonize: seconds the server may take to start (loading its snapshot "
                  "included); past them it is stopped")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 86400.0));

  return [options, password_file, no_shm, daemon, worker_memory, share_memory]() -> int {
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
      if (options->protected_mode) {
        spdlog::warn(
            "listening on {} without a password: protected mode refuses every client but this "
            "user's own on this host; set a password to serve others",
            options->bind);
      } else {
        spdlog::warn(
            "listening on {} without a password and with --protected-mode no: anyone who can "
            "reach it has full access",
            options->bind);
      }
    }
    // Before the server starts any thread: the background process continues from here.
    if (daemon->enabled) {
      if (auto parent_status = daemonize(*daemon, *options)) return *parent_status;
    }
    server::Server server(*options);
    // Models and scripts are loaded and run in worker processes started from this same
    // executable (`slipstream ml-worker`): one per executor thread plus one for loading.
    ml::SandboxOptions sandbox;
    sandbox.worker_command = {"/proc/self/exe", "ml-worker"};
    if (options->intra_op_threads > 0) {
      sandbox.worker_command.insert(sandbox.worker_command.end(),
                                    {"--intra-op-threads",
                                     std::to_string(options->intra_op_threads)});
    }
    if (options->inter_op_threads > 0) {
      sandbox.worker_command.insert(sandbox.worker_command.end(),
                                    {"--inter-op-threads",
                                     std::to_string(options->inter_op_threads)});
    }
    sandbox.workers = options->executor_threads + 1;
    sandbox.address_space_limit = *worker_memory;
    // Without the shared-memory pool inputs are never in segments, and outputs are kept on the
    // heap: files would only be copied out again.
    sandbox.share_memory = *share_memory && options->shm_size > 0;
    // What workers write to their stderr arrives quoted and bounded (sandbox_backend.hpp).
    sandbox.log = [](const std::string& line) { spdlog::warn("{}", line); };
    server.set_backend(ml::make_sandboxed_backend(std::move(sandbox)));
    if (!daemon->enabled) return server.run();
    int status = 1;
    try {
      status = server.run();
    } catch (...) {
      remove_pid_file(*daemon);
      throw;
    }
    remove_pid_file(*daemon);
    return status;
  };
}

}  // namespace slipstream::cli
