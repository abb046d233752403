// The slipstream server: owns the keyspace, the command table, blocking waits, statistics and
// the network front end (Asio, kept out of this header so command files compile fast).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <map>
#include <memory>
#include <optional>
#include <mutex>
#include <string>
#include <vector>

#include "ml/backend.hpp"
#include "ml/executor.hpp"
#include "server/cluster/cluster.hpp"
#include "server/cluster/peer_links.hpp"
#include "server/commands/command_table.hpp"
#include "server/config.hpp"
#include "server/net/client_limits.hpp"
#include "server/store/keyspace.hpp"
#include "server/shm/shm.hpp"
#include "server/store/waits.hpp"
#include "server/stream/chunk_store.hpp"
#include "server/train/trainer_reports.hpp"
#include "server/stream/stream_registry.hpp"

namespace asio {
class execution_context;
class io_context;
}  // namespace asio

namespace slipstream::server {

/// Counters for INFO stats. All relaxed atomics: figures, not synchronisation.
struct Stats {
  std::atomic<std::uint64_t> connections_received{0};
  std::atomic<std::uint64_t> rejected_connections{0};
  std::atomic<std::uint64_t> commands_processed{0};
  std::atomic<std::uint64_t> keyspace_hits{0};
  std::atomic<std::uint64_t> keyspace_misses{0};
  std::atomic<std::uint64_t> net_input_bytes{0};
  std::atomic<std::uint64_t> net_output_bytes{0};
  std::atomic<std::uint64_t> protocol_errors{0};
  std::atomic<std::uint64_t> error_replies{0};
};

class Server {
 public:
  explicit Server(ServerOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  /// Loads the snapshot (if any), listens, and serves until shutdown. Returns the process exit
  /// code: 0, or 1 when a save requested for the shutdown failed (see set_exit_code). Throws
  /// std::runtime_error when start-up fails (missing --dir, corrupt snapshot, port in use, ...).
  int run();
  /// Makes run() return `code`: a shutdown went ahead although its requested save failed.
  void set_exit_code(int code) noexcept { exit_code_.store(code); }
  /// Thread-safe. Stops serving; with `save`, writes a snapshot first. Returns false (and does
  /// not stop) if the requested save failed, with the reason in `error`.
  bool request_shutdown(bool save, std::string* error = nullptr);

  /// Installs the ML backend (before run()); without one, model and script commands fail with
  /// a clear error.
  void set_backend(std::shared_ptr<ml::Backend> backend) { backend_ = std::move(backend); }
  ml::Backend* backend() const noexcept { return backend_.get(); }
  ml::Executor& executor() noexcept { return *executor_; }
  /// A separate thread for loading models and compiling scripts, so a store never waits behind
  /// executions (or a batch being gathered) and a slow load never delays runs.
  ml::Executor& loader() noexcept { return *loader_; }
  /// AI.CONFIG MODEL_CHUNK_SIZE: AI.MODELGET splits larger blobs into chunks of this size.
  std::size_t model_chunk_size() const noexcept { return model_chunk_size_.load(); }
  void set_model_chunk_size(std::size_t bytes) noexcept { model_chunk_size_.store(bytes); }

  Keyspace& keyspace() noexcept { return keyspace_; }
  WaitRegistry& waits() noexcept { return waits_; }
  /// The SS.STREAM.* streams.
  StreamRegistry& streams() noexcept { return streams_; }
  /// Colocated chunks other members' streams keep here (SS.CHUNKS.*).
  ChunkStore& chunk_store() noexcept { return chunk_store_; }
  /// What online trainers report (SS.TRAIN.*).
  TrainerReports& trainer_reports() noexcept { return trainer_reports_; }
  /// Cluster mode: messages to the other members (null standalone).
  const PeerLinks* peers() const noexcept { return peers_.get(); }
  const CommandTable& commands() const noexcept { return commands_; }
  /// The cluster map in cluster mode (--cluster-nodes), else null.
  const Cluster* cluster() const noexcept { return cluster_.get(); }
  Stats& stats() noexcept { return stats_; }
  SharedMemory& shared_memory() noexcept { return shared_memory_; }
  /// Per-client memory limits and the budget for arguments being received (CONFIG SET-able).
  ClientLimits& client_limits() noexcept { return client_limits_; }

  // ---- Settings (CONFIG GET/SET). Thread-safe.
  std::string password() const;
  void set_password(std::string password);
  std::size_t max_bulk_len() const noexcept { return max_bulk_len_.load(); }
  void set_max_bulk_len(std::size_t bytes) noexcept { max_bulk_len_.store(bytes); }
  std::size_t max_clients() const noexcept { return max_clients_.load(); }
  void set_max_clients(std::size_t n) noexcept { max_clients_.store(n); }
  /// Applied to each TCP connection as it is accepted (see ServerOptions::tcp_keepalive_s).
  std::uint32_t tcp_keepalive() const noexcept { return tcp_keepalive_s_.load(); }
  void set_tcp_keepalive(std::uint32_t seconds) noexcept { tcp_keepalive_s_.store(seconds); }
  /// The snapshot directory: fixed at start-up (CONFIG SET dir is refused, as in Redis 7, so a
  /// client cannot make SAVE write somewhere else).
  std::string dir() const { return options_.dir; }
  /// Protected mode (see ServerOptions::protected_mode); checked once per accepted connection.
  bool protected_mode() const noexcept { return protected_mode_.load(); }
  void set_protected_mode(bool on) noexcept { protected_mode_.store(on); }
  std::string log_level() const;
  /// Returns false for an unknown level name.
  bool set_log_level(const std::string& level);
  /// Redis settings this server accepts and answers on CONFIG GET without acting on them (Lua,
  /// slow log, encodings ...: see CONFIG in commands_server.cpp). nullopt: never set here.
  std::optional<std::string> stored_setting(std::string_view name) const;
  void store_setting(std::string_view name, std::string value);
  const ServerOptions& options() const noexcept { return options_; }
  unsigned io_threads() const noexcept { return io_threads_; }
  /// While serving: the index of the I/O thread whose context is `context`, and the context of
  /// I/O thread `index` (< io_threads()).
  unsigned io_thread_index(const asio::execution_context& context) const;
  asio::io_context& io_thread_context(unsigned index);

  // ---- Persistence.
  /// Writes a snapshot to dir/db_filename. Returns false with `error` set on failure.
  bool save(std::string* error);
  std::time_t last_save_time() const noexcept { return last_save_time_.load(); }
  bool last_save_ok() const noexcept { return last_save_ok_.load(); }
  std::uint64_t changes_since_save() const noexcept { return dirty_.load(); }
  void mark_dirty(std::uint64_t n = 1) noexcept { dirty_.fetch_add(n, std::memory_order_relaxed); }

  // ---- Clients.
  std::uint64_t next_client_id() noexcept { return next_client_id_.fetch_add(1); }
  void register_client(const std::shared_ptr<Session>& session);
  void unregister_client(std::uint64_t id);
  std::size_t connected_clients() const;
  /// The clients connected now (the ones still alive among those registered).
  std::vector<std::shared_ptr<Session>> live_clients() const;
  /// Requests parked in SS.WAIT / SS.WAITLEN and on streams (INFO's blocked_clients).
  std::size_t blocked_clients() const { return waits_.parked() + streams_.totals().parked; }
  /// Every connected client's CLIENT LIST line.
  std::vector<std::string> describe_clients() const;

  std::chrono::steady_clock::time_point start_time() const noexcept { return start_time_; }
  const std::string& run_id() const noexcept { return run_id_; }
  /// The TCP port actually bound (differs from options().port when that was 0).
  int bound_port() const noexcept { return bound_port_.load(); }

 private:
  struct Network;  // Asio acceptors, I/O threads; defined in server.cpp

  ServerOptions options_;
  // Restores the runtimes of models and scripts loaded from a snapshot.
  void compile_loaded_models();

  SharedMemory shared_memory_;
  ClientLimits client_limits_;
  Keyspace keyspace_;
  WaitRegistry waits_;
  ChunkStore chunk_store_;
  TrainerReports trainer_reports_;
  // Shared with the stream registry's remote sink, which may run until the registry is gone.
  std::shared_ptr<PeerLinks> peers_;
  StreamRegistry streams_;
  CommandTable commands_;
  std::unique_ptr<const Cluster> cluster_;
  Stats stats_;
  unsigned io_threads_ = 1;

  mutable std::mutex settings_mutex_;
  std::string password_;   // guarded by settings_mutex_
  std::string log_level_;  // guarded by settings_mutex_
  std::map<std::string, std::string, std::less<>> stored_settings_;  // guarded by settings_mutex_
  std::atomic<std::size_t> max_bulk_len_;
  std::atomic<std::size_t> max_clients_;
  std::atomic<std::uint32_t> tcp_keepalive_s_;
  std::atomic<bool> protected_mode_;

  std::mutex save_mutex_;  // one snapshot at a time
  std::atomic<std::time_t> last_save_time_{0};
  std::atomic<bool> last_save_ok_{true};
  std::atomic<std::uint64_t> dirty_{0};
  // run()'s exit code: 1 once a save requested for shutdown (SIGTERM, SHUTDOWN FORCE) failed, so
  // a supervisor or job script sees that the data was not saved.
  std::atomic<int> exit_code_{0};

  mutable std::mutex clients_mutex_;
  std::map<std::uint64_t, std::weak_ptr<Session>> clients_;  // guarded by clients_mutex_
  std::atomic<std::uint64_t> next_client_id_{1};

  std::chrono::steady_clock::time_point start_time_;
  std::string run_id_;
  std::atomic<int> bound_port_{0};
  std::unique_ptr<Network> network_;
  std::shared_ptr<ml::Backend> backend_;
  std::unique_ptr<ml::Executor> executor_;
  std::unique_ptr<ml::Executor> loader_;
  std::atomic<std::size_t> model_chunk_size_{511u << 20};  // RedisAI's default
};

/// The version this server reports in INFO and HELLO.
inline constexpr const char* kSlipstreamVersion = "0.1.0";
/// The Redis version clients are told they speak to (the command set this server follows).
inline constexpr const char* kRedisCompatVersion = "7.0.0";

}  // namespace slipstream::server
