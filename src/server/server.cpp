// Server start-up, listeners, I/O threads, shutdown and persistence; see server.hpp.
#include "server/server.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <asio.hpp>
#include <filesystem>
#include <limits>
#include <optional>
#include <random>
#include <thread>

#include "server/net/connection.hpp"
#include "server/net/peer_check.hpp"
#include "server/net/tcp_keepalive.hpp"
#include "server/persist/snapshot.hpp"
#include "server/stream/stream.hpp"

namespace slipstream::server {
namespace {

// The CPUs this process may run on (its affinity mask: taskset, a batch system's cpuset), not
// the machine's: a server bound to 2 cores of a 64-core node runs 2 I/O threads, not 64 that
// would take turns on those 2.
unsigned usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0) {
    int count = CPU_COUNT(&set);
    if (count > 0) return static_cast<unsigned>(count);
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

std::string random_run_id() {
  std::random_device device;
  std::mt19937_64 gen(device());
  const char* hex = "0123456789abcdef";
  std::string id(40, '0');
  for (char& c : id) c = hex[gen() % 16];
  return id;
}

std::string endpoint_text(const asio::ip::tcp::endpoint& endpoint) {
  return endpoint.address().to_string() + ":" + std::to_string(endpoint.port());
}

// Throws unless `dir` is an existing, writable directory and `db_filename` a plain name in it.
// A server started on a mistyped --dir would otherwise serve for hours and then fail its first
// save, at SIGTERM, when nobody is watching.
void check_snapshot_location(const std::string& dir, const std::string& db_filename) {
  if (db_filename.empty() || db_filename == "." || db_filename == ".." ||
      db_filename.find('/') != std::string::npos) {
    throw std::runtime_error("--dbfilename '" + db_filename +
                             "' must be a file name, not a path (--dir sets the directory)");
  }
  std::error_code ec;
  const auto status = std::filesystem::status(dir, ec);
  if (!std::filesystem::exists(status)) {
    throw std::runtime_error("--dir '" + dir +
                             "' does not exist: snapshots are written there; create it first "
                             "(mkdir -m 700) or name an existing directory");
  }
  if (!std::filesystem::is_directory(status)) {
    throw std::runtime_error("--dir '" + dir + "' is not a directory");
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    throw std::runtime_error("--dir '" + dir + "' is not writable by this user: " +
                             std::generic_category().message(errno));
  }
}

// --bind takes an address or a host name ("localhost"). A name is resolved and its first IPv4
// address preferred: clients and examples say 127.0.0.1, and the server has one TCP listener.
asio::ip::address resolve_bind_address(asio::io_context& context, const std::string& bind) {
  asio::error_code ec;
  asio::ip::address address = asio::ip::make_address(bind, ec);
  if (!ec) return address;
  asio::ip::tcp::resolver resolver(context);
  auto results = resolver.resolve(bind, "0", ec);
  if (ec || results.empty()) {
    throw std::runtime_error("invalid --bind address '" + bind +
                             "': " + (ec ? ec.message() : std::string("the name has no address")));
  }
  address = results.begin()->endpoint().address();
  for (const auto& result : results) {
    if (result.endpoint().address().is_v4()) return result.endpoint().address();
  }
  return address;
}

// Protected-mode refusals are logged at most once a second, the ones in between counted in the
// next line: another local user could otherwise fill the disk with log lines. Not thread-safe.
struct RefusalLog {
  std::chrono::steady_clock::time_point last;
  std::uint64_t unlogged = 0;
};

// Protected mode's check of a new connection (see net/peer_check.hpp): once per connection, one
// netlink round trip for loopback TCP, one getsockopt for the Unix socket. Logs refusals.
bool admitted_by_protected_mode(Connection::Socket& socket, RefusalLog& log) {
  const PeerIdentity peer = identify_peer(socket.native_handle());
  const std::optional<std::string> refusal = protected_mode_refusal(peer, ::geteuid());
  if (!refusal) return true;
  const auto now = std::chrono::steady_clock::now();
  if (now - log.last < std::chrono::seconds(1)) {
    ++log.unlogged;
    return false;
  }
  spdlog::warn(
      "protected mode (no password set): refused the connection from {} (uid {}): {}{}",
      peer.address, peer.uid ? std::to_string(*peer.uid) : std::string("unknown"), *refusal,
      log.unlogged ? fmt::format("; {} more refused since the last report", log.unlogged) : "");
  log.last = now;
  log.unlogged = 0;
  return false;
}

}  // namespace

namespace {

// What a stream asks other members to do, as SS.CHUNKS.* messages.
void send_remote_work(PeerLinks& peers, const std::string& stream, const RemoteWork& work) {
  constexpr std::size_t kIdsPerMessage = 1024;
  for (const auto& [node, ids] : work.frees) {
    for (std::size_t first = 0; first < ids.size(); first += kIdsPerMessage) {
      std::vector<std::string> command{"SS.CHUNKS.FREE"};
      for (std::size_t i = first; i < std::min(ids.size(), first + kIdsPerMessage); ++i) {
        command.push_back(std::to_string(ids[i]));
      }
      peers.send(node, std::move(command));
    }
  }
  for (const RemoteWork::Drop& drop : work.drops) {
    std::vector<std::string> command{"SS.CHUNKS.DROP", stream, std::to_string(drop.rank)};
    for (std::int64_t step : drop.steps) command.push_back(std::to_string(step));
    peers.send(drop.node, std::move(command));
  }
}

}  // namespace

struct Server::Network {
  std::vector<std::unique_ptr<asio::io_context>> contexts;
  std::vector<asio::executor_work_guard<asio::io_context::executor_type>> guards;
  std::optional<asio::ip::tcp::acceptor> tcp;
  std::optional<asio::local::stream_protocol::acceptor> local;
  std::optional<asio::signal_set> signals;
  std::size_t next_context = 0;
  std::atomic<bool> stopping{false};
  RefusalLog refusals;  // used by the acceptors, which all run on contexts[0]

  asio::io_context& pick() { return *contexts[next_context++ % contexts.size()]; }
};

unsigned Server::io_thread_index(const asio::execution_context& context) const {
  for (std::size_t i = 0; i < network_->contexts.size(); ++i) {
    if (network_->contexts[i].get() == &context) return static_cast<unsigned>(i);
  }
  return 0;
}

asio::io_context& Server::io_thread_context(unsigned index) {
  return *network_->contexts.at(index);
}

Server::Server(ServerOptions options)
    : options_(std::move(options)),
      shared_memory_(options_.shm_size),
      client_limits_(options_.client_query_buffer_limit,
                     {options_.client_output_hard_limit, options_.client_output_soft_limit,
                      options_.client_output_soft_seconds},
                     options_.max_pending_input),
      password_(options_.password),
      log_level_(options_.log_level),
      max_bulk_len_(options_.max_bulk_len),
      max_clients_(options_.max_clients),
      tcp_keepalive_s_(options_.tcp_keepalive_s),
      protected_mode_(options_.protected_mode),
      start_time_(std::chrono::steady_clock::now()),
      run_id_(random_run_id()) {
  io_threads_ = options_.threads != 0 ? options_.threads : usable_cpus();
  executor_ = std::make_unique<ml::Executor>(
      options_.executor_threads, std::chrono::milliseconds(options_.run_timeout_ms));
  loader_ = std::make_unique<ml::Executor>(1);
  // A run's outputs are refused from their sizes when they would not fit in --maxmemory, before
  // the worker's bytes are received (the store checks again when it stores them).
  executor_->set_output_budget([this]() -> std::uint64_t {
    const std::size_t limit = keyspace_.max_memory();
    if (limit == 0) return std::numeric_limits<std::uint64_t>::max();
    const std::size_t used = keyspace_.used_memory();
    return used >= limit ? 0 : limit - used;
  });
  streams_.set_keyspace(&keyspace_);
  if (!options_.cluster_nodes.empty()) {
    cluster_ = std::make_unique<const Cluster>(options_.cluster_nodes, options_.cluster_node_index,
                                               options_.port, options_.bind);
    peers_ = std::make_shared<PeerLinks>(*cluster_, options_.password);
    streams_.set_remote_sink(
        [peers = peers_](const std::string& stream, RemoteWork& work) {
          send_remote_work(*peers, stream, work);
        });
  }
  keyspace_.set_max_memory(options_.max_memory);
  keyspace_.set_write_listener([this](std::string_view key) { waits_.notify(key); });
}

Server::~Server() {
  if (backend_) backend_->shutdown();
}

std::string Server::password() const {
  std::lock_guard lock(settings_mutex_);
  return password_;
}
void Server::set_password(std::string password) {
  if (peers_) peers_->set_password(password);
  std::lock_guard lock(settings_mutex_);
  password_ = std::move(password);
}
std::string Server::log_level() const {
  std::lock_guard lock(settings_mutex_);
  return log_level_;
}
std::optional<std::string> Server::stored_setting(std::string_view name) const {
  std::lock_guard lock(settings_mutex_);
  auto it = stored_settings_.find(name);
  if (it == stored_settings_.end()) return std::nullopt;
  return it->second;
}

void Server::store_setting(std::string_view name, std::string value) {
  std::lock_guard lock(settings_mutex_);
  stored_settings_.insert_or_assign(std::string(name), std::move(value));
}

bool Server::set_log_level(const std::string& level) {
  auto parsed = spdlog::level::from_str(level);
  if (parsed == spdlog::level::off && level != "off") return false;
  spdlog::set_level(parsed);
  std::lock_guard lock(settings_mutex_);
  log_level_ = level;
  return true;
}

void Server::register_client(const std::shared_ptr<Session>& session) {
  std::lock_guard lock(clients_mutex_);
  clients_.emplace(session->id(), session);
}

void Server::unregister_client(std::uint64_t id) {
  std::lock_guard lock(clients_mutex_);
  clients_.erase(id);
}

std::size_t Server::connected_clients() const {
  std::lock_guard lock(clients_mutex_);
  return clients_.size();
}

std::vector<std::shared_ptr<Session>> Server::live_clients() const {
  std::vector<std::shared_ptr<Session>> sessions;
  std::lock_guard lock(clients_mutex_);
  for (const auto& [id, weak] : clients_) {
    if (auto session = weak.lock()) sessions.push_back(std::move(session));
  }
  return sessions;
}

std::vector<std::string> Server::describe_clients() const {
  std::vector<std::string> lines;
  for (const auto& session : live_clients()) lines.push_back(session->describe());
  return lines;
}

bool Server::save(std::string* error) {
  std::lock_guard lock(save_mutex_);
  std::filesystem::path path = std::filesystem::path(dir()) / options_.db_filename;
  const std::uint64_t dirty_before = dirty_.load();
  try {
    auto begin = std::chrono::steady_clock::now();
    SnapshotStats stats = save_snapshot(keyspace_, path);
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::steady_clock::now() - begin)
                  .count();
    spdlog::info("snapshot saved to {}: {} keys, {} bytes in {} ms", path.string(), stats.keys,
                 stats.bytes, ms);
    last_save_time_.store(std::time(nullptr));
    last_save_ok_.store(true);
    dirty_.fetch_sub(dirty_before);
    return true;
  } catch (const std::exception& e) {
    spdlog::error("snapshot failed: {}", e.what());
    last_save_ok_.store(false);
    if (error) *error = e.what();
    return false;
  }
}

bool Server::request_shutdown(bool save_first, std::string* error) {
  if (save_first && !save(error)) return false;
  if (!network_ || network_->stopping.exchange(true)) return true;
  Network* network = network_.get();
  asio::post(*network->contexts[0], [network] {
    asio::error_code ignored;
    if (network->tcp) network->tcp->close(ignored);
    if (network->local) network->local->close(ignored);
    if (network->signals) network->signals->cancel(ignored);
    network->guards.clear();
    for (auto& context : network->contexts) context->stop();
  });
  return true;
}

void Server::compile_loaded_models() {
  std::vector<std::pair<std::string, ValuePtr>> pending;
  keyspace_.for_each([&](const std::string& key, const ValuePtr& value) {
    if (value->type() == ValueType::kModel || value->type() == ValueType::kScript) {
      pending.emplace_back(key, value);
    }
  });
  std::size_t done = 0;
  for (const auto& [key, value] : pending) {
    std::string error = backend_ ? "" : "no ML backend in this server";
    auto device = ml::parse_device(value->type() == ValueType::kModel ? value->model().device
                                                                     : value->script().device);
    if (backend_ && !device) error = "invalid device";
    if (backend_ && device) {
      ml::Status usable = backend_->check_device(*device);
      if (!usable.ok) error = usable.message;
    }
    std::shared_ptr<Value> restored = value->clone();
    if (restored->type() == ValueType::kModel) {
      ModelEntry& model = restored->model();
      if (error.empty()) {
        model.runtime =
            backend_->load_model(model.blob.view(), model_format(model), *device, &error);
      }
      model.load_error = error;
    } else {
      ScriptEntry& script = restored->script();
      if (error.empty()) script.runtime = backend_->load_script(script.source, *device, &error);
      script.load_error = error;
    }
    if (!error.empty()) {
      spdlog::warn("'{}' restored from the snapshot but cannot run: {}", key, error);
    }
    keyspace_.set(key, std::move(restored));
    if (++done % 16 == 0 || done == pending.size()) {
      spdlog::info("compiled {}/{} models and scripts from the snapshot", done, pending.size());
    }
  }
}

int Server::run() {
  // 1. Data first: refuse to serve from a corrupt snapshot rather than silently start empty.
  check_snapshot_location(dir(), options_.db_filename);
  std::filesystem::path snapshot = std::filesystem::path(dir()) / options_.db_filename;
  if (std::size_t removed = remove_stale_temp_files(snapshot)) {
    spdlog::info("removed {} temporary files left by interrupted saves of {}", removed,
                 snapshot.string());
  }
  if (std::filesystem::exists(snapshot)) {
    auto begin = std::chrono::steady_clock::now();
    SnapshotStats stats = load_snapshot(keyspace_, snapshot);  // throws SnapshotError
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::steady_clock::now() - begin)
                  .count();
    spdlog::info("loaded snapshot {}: {} keys in {} ms", snapshot.string(), stats.keys, ms);
    last_save_time_.store(std::time(nullptr));
    compile_loaded_models();
  }

  // 2. Listeners.
  network_ = std::make_unique<Network>();
  Network& net = *network_;
  for (unsigned i = 0; i < io_threads_; ++i) {
    net.contexts.push_back(std::make_unique<asio::io_context>(1));
    net.guards.push_back(asio::make_work_guard(*net.contexts.back()));
  }
  asio::io_context& main_context = *net.contexts[0];
  // Signals: SIGTERM/SIGINT save a snapshot and stop, as SHUTDOWN does. Caught from before the
  // listeners open, so that a signal sent as soon as a client can connect still saves.
  net.signals.emplace(main_context, SIGINT, SIGTERM);
  net.signals->async_wait([this](const asio::error_code& ec, int signal) {
    if (ec) return;
    spdlog::info("received signal {}, saving and shutting down", signal);
    std::string error;
    if (!request_shutdown(true, &error)) {
      spdlog::error("could not save before shutdown ({}); exiting without saving, status 1",
                    error);
      set_exit_code(1);
      request_shutdown(false);
    }
  });

  if (options_.port != 0 || options_.unix_socket.empty()) {
    asio::error_code ec;
    const asio::ip::address address = resolve_bind_address(main_context, options_.bind);
    asio::ip::tcp::endpoint endpoint(address, static_cast<unsigned short>(options_.port));
    net.tcp.emplace(main_context);
    net.tcp->open(endpoint.protocol());
    net.tcp->set_option(asio::socket_base::reuse_address(true));
    net.tcp->bind(endpoint, ec);
    if (ec) {
      throw std::runtime_error("cannot listen on " + endpoint_text(endpoint) + ": " +
                               ec.message());
    }
    net.tcp->listen(asio::socket_base::max_listen_connections);
    bound_port_.store(net.tcp->local_endpoint().port());
    spdlog::info("listening on tcp://{}", endpoint_text(net.tcp->local_endpoint()));
  }
  if (cluster_) {
    const ClusterNode& self = cluster_->self();
    spdlog::info("cluster mode: member {} of {} ({}), slots {}-{}", cluster_->self_index(),
                 cluster_->nodes().size(), self.endpoint(), self.first_slot, self.last_slot);
  }
  if (!options_.unix_socket.empty()) {
    std::error_code fs_ec;
    std::filesystem::remove(options_.unix_socket, fs_ec);
    net.local.emplace(main_context);
    asio::local::stream_protocol::endpoint endpoint(options_.unix_socket);
    asio::error_code ec;
    net.local->open(endpoint.protocol());
    net.local->bind(endpoint, ec);
    if (ec) {
      throw std::runtime_error("cannot listen on unix://" + options_.unix_socket + ": " +
                               ec.message());
    }
    // Before listen(): until then nobody can connect, so there is no moment with a wider mode.
    if (::chmod(options_.unix_socket.c_str(), options_.unix_socket_perm) != 0) {
      throw std::runtime_error("cannot set the mode of unix://" + options_.unix_socket + ": " +
                               std::generic_category().message(errno));
    }
    net.local->listen(asio::socket_base::max_listen_connections);
    spdlog::info("listening on unix://{}", options_.unix_socket);
  }

  auto admit = [this, &net](Connection::Socket socket, std::string peer, std::string local,
                            bool is_unix) {
    stats_.connections_received.fetch_add(1, std::memory_order_relaxed);
    if (protected_mode() && password().empty() &&
        !admitted_by_protected_mode(socket, net.refusals)) {
      stats_.rejected_connections.fetch_add(1, std::memory_order_relaxed);
      asio::error_code ignored;
      asio::write(socket, asio::buffer(protected_mode_denied_reply()), ignored);
      socket.close(ignored);
      return;
    }
    if (connected_clients() >= max_clients()) {
      stats_.rejected_connections.fetch_add(1, std::memory_order_relaxed);
      asio::error_code ignored;
      asio::write(socket, asio::buffer(std::string_view("-ERR max number of clients reached\r\n")),
                  ignored);
      socket.close(ignored);
      return;
    }
    auto executor = socket.get_executor();
    auto connection = std::make_shared<Connection>(*this, std::move(socket), std::move(peer),
                                                   std::move(local), is_unix);
    register_client(connection);
    asio::post(executor, [connection] { connection->start(); });  // on its own I/O thread
  };

  std::function<void()> accept_tcp = [&] {
    net.tcp->async_accept(net.pick(), [&](const asio::error_code& ec,
                                          asio::ip::tcp::socket socket) {
      if (ec == asio::error::operation_aborted || net.stopping) return;
      if (!ec) {
        asio::error_code e1, e2;
        server::set_tcp_keepalive(socket.native_handle(), tcp_keepalive());
        std::string peer = endpoint_text(socket.remote_endpoint(e1));
        std::string local = endpoint_text(socket.local_endpoint(e2));
        admit(Connection::Socket(std::move(socket)), std::move(peer), std::move(local), false);
      } else {
        spdlog::warn("accept failed: {}", ec.message());
      }
      accept_tcp();
    });
  };
  std::function<void()> accept_local = [&] {
    net.local->async_accept(net.pick(), [&](const asio::error_code& ec,
                                            asio::local::stream_protocol::socket socket) {
      if (ec == asio::error::operation_aborted || net.stopping) return;
      if (!ec) {
        admit(Connection::Socket(std::move(socket)), options_.unix_socket + ":0",
              options_.unix_socket, true);
      } else {
        spdlog::warn("accept failed: {}", ec.message());
      }
      accept_local();
    });
  };
  if (net.tcp) accept_tcp();
  if (net.local) accept_local();

  spdlog::info("slipstream {} ready: {} I/O thread{}, pid {}", kSlipstreamVersion, io_threads_,
               io_threads_ == 1 ? "" : "s",
               ::getpid());
  std::vector<std::thread> threads;
  for (unsigned i = 1; i < io_threads_; ++i) {
    threads.emplace_back([&net, i] { net.contexts[i]->run(); });
  }
  main_context.run();
  for (auto& thread : threads) thread.join();
  // No I/O thread runs now: close the clients still connected (a parked request holds its own).
  for (const auto& session : live_clients()) session->stop_at_shutdown();
  // Runs still going (a script that never ends) are stopped here, so that the executor threads
  // can be joined and the process exits within a bounded time.
  if (backend_) backend_->shutdown();
  if (!options_.unix_socket.empty()) {
    std::error_code ignored;
    std::filesystem::remove(options_.unix_socket, ignored);
  }
  spdlog::info("slipstream stopped");
  return exit_code_.load();
}

}  // namespace slipstream::server
