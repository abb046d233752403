// Server start-up, listeners, I/O threads, shutdown and persistence; see server.hpp.
#include "server/server.hpp"

#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <asio.hpp>
#include <filesystem>
#include <optional>
#include <random>
#include <thread>

#include "server/net/connection.hpp"
#include "server/persist/snapshot.hpp"

namespace slipstream::server {
namespace {

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

}  // namespace

struct Server::Network {
  std::vector<std::unique_ptr<asio::io_context>> contexts;
  std::vector<asio::executor_work_guard<asio::io_context::executor_type>> guards;
  std::optional<asio::ip::tcp::acceptor> tcp;
  std::optional<asio::local::stream_protocol::acceptor> local;
  std::optional<asio::signal_set> signals;
  std::size_t next_context = 0;
  std::atomic<bool> stopping{false};

  asio::io_context& pick() { return *contexts[next_context++ % contexts.size()]; }
};

Server::Server(ServerOptions options)
    : options_(std::move(options)),
      shared_memory_(options_.shm_size),
      password_(options_.password),
      dir_(options_.dir),
      log_level_(options_.log_level),
      max_bulk_len_(options_.max_bulk_len),
      max_clients_(options_.max_clients),
      start_time_(std::chrono::steady_clock::now()),
      run_id_(random_run_id()) {
  io_threads_ = options_.threads != 0 ? options_.threads
                                      : std::max(1u, std::thread::hardware_concurrency());
  executor_ = std::make_unique<ml::Executor>(options_.executor_threads);
  loader_ = std::make_unique<ml::Executor>(1);
  if (!options_.cluster_nodes.empty()) {
    cluster_ = std::make_unique<const Cluster>(options_.cluster_nodes, options_.cluster_node_index,
                                               options_.port, options_.bind);
  }
  keyspace_.set_max_memory(options_.max_memory);
  keyspace_.set_write_listener([this](std::string_view key) { waits_.notify(key); });
}

Server::~Server() = default;

std::string Server::password() const {
  std::lock_guard lock(settings_mutex_);
  return password_;
}
void Server::set_password(std::string password) {
  std::lock_guard lock(settings_mutex_);
  password_ = std::move(password);
}
std::string Server::dir() const {
  std::lock_guard lock(settings_mutex_);
  return dir_;
}
void Server::set_dir(std::string dir) {
  std::lock_guard lock(settings_mutex_);
  dir_ = std::move(dir);
}
std::string Server::log_level() const {
  std::lock_guard lock(settings_mutex_);
  return log_level_;
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

std::vector<std::string> Server::describe_clients() const {
  std::vector<std::shared_ptr<Session>> sessions;
  {
    std::lock_guard lock(clients_mutex_);
    for (const auto& [id, weak] : clients_) {
      if (auto session = weak.lock()) sessions.push_back(std::move(session));
    }
  }
  std::vector<std::string> lines;
  for (const auto& session : sessions) lines.push_back(session->describe());
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
      if (error.empty()) model.runtime = backend_->load_model(model.blob.view(), *device, &error);
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
  std::filesystem::path snapshot = std::filesystem::path(dir()) / options_.db_filename;
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
  if (options_.port != 0 || options_.unix_socket.empty()) {
    asio::error_code ec;
    auto address = asio::ip::make_address(options_.bind, ec);
    if (ec) throw std::runtime_error("invalid --bind address '" + options_.bind + "'");
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
    ::chmod(options_.unix_socket.c_str(), options_.unix_socket_perm);
    net.local->listen(asio::socket_base::max_listen_connections);
    spdlog::info("listening on unix://{}", options_.unix_socket);
  }

  auto admit = [this](Connection::Socket socket, std::string peer, std::string local,
                      bool is_unix) {
    stats_.connections_received.fetch_add(1, std::memory_order_relaxed);
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

  // 3. Signals: SIGTERM/SIGINT save a snapshot and stop, as SHUTDOWN does.
  net.signals.emplace(main_context, SIGINT, SIGTERM);
  net.signals->async_wait([this](const asio::error_code& ec, int signal) {
    if (ec) return;
    spdlog::info("received signal {}, saving and shutting down", signal);
    std::string error;
    if (!request_shutdown(true, &error)) {
      spdlog::error("could not save before shutdown ({}); exiting without saving", error);
      request_shutdown(false);
    }
  });

  spdlog::info("slipstream {} ready: {} I/O threads, pid {}", kSlipstreamVersion, io_threads_,
               ::getpid());
  std::vector<std::thread> threads;
  for (unsigned i = 1; i < io_threads_; ++i) {
    threads.emplace_back([&net, i] { net.contexts[i]->run(); });
  }
  main_context.run();
  for (auto& thread : threads) thread.join();
  if (!options_.unix_socket.empty()) {
    std::error_code ignored;
    std::filesystem::remove(options_.unix_socket, ignored);
  }
  spdlog::info("slipstream stopped");
  return 0;
}

}  // namespace slipstream::server
