// Client::Impl's connections and request routing: the standalone server or the shards of a
// cluster (map from CLUSTER SLOTS, one connection per shard, MOVED followed, pipelines split by
// shard, broadcasts), reconnection with bounded retries and back-off, and errors that name the
// shard that failed.
#include <algorithm>
#include <cstdlib>
#include <thread>

#include "client/client_impl.hpp"
#include "common/slot.hpp"

namespace slipstream {

using client::Request;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::uint16_t kNoOwner = 0xffff;

ClusterMode mode_from_environment(ClusterMode mode) {
  if (mode != ClusterMode::kAuto) return mode;
  const char* type = std::getenv("SR_DB_TYPE");
  if (type == nullptr) return ClusterMode::kAuto;
  std::string_view text(type);
  if (text == "Clustered") return ClusterMode::kClustered;
  if (text == "Standalone") return ClusterMode::kStandalone;
  throw InvalidArgumentError("SR_DB_TYPE is '" + std::string(text) +
                             "'; expected Clustered or Standalone");
}

milliseconds since(Clock::time_point start) {
  return std::chrono::duration_cast<milliseconds>(Clock::now() - start);
}

}  // namespace

// ---- Connecting ---------------------------------------------------------------------------------

std::unique_ptr<client::Connection> Client::Impl::open(const client::Address& address,
                                                       milliseconds timeout) {
  auto connection = client::Connection::open(address, timeout);
  if (password_) {
    connection->set_io_timeout(options_.command_timeout);
    Request auth;
    auth.command({"AUTH", *password_});
    connection->send(auth);
    Reply reply = connection->read_reply();
    if (reply.is_error()) {
      throw AuthError("authentication to " + address.to_string() + " failed: " + reply.string,
                      reply.string);
    }
  }
  return connection;
}

void Client::Impl::connect_first() {
  Node seed;
  seed.address = address_;
  seed.name = address_text_;
  seed.connection = open(address_, options_.connect_timeout);
  seed.reached = true;
  nodes_.clear();
  nodes_.push_back(std::move(seed));
  default_node_ = 0;
  ClusterMode mode = mode_from_environment(options_.cluster);
  if (mode == ClusterMode::kStandalone) {
    attach_shared_memory(*nodes_[0].connection);
    return;
  }

  client::Connection& c = *nodes_[0].connection;
  c.set_io_timeout(options_.command_timeout);
  Request request;
  request.command({"CLUSTER", "SLOTS"});
  request.command({"CLUSTER", "MYID"});
  c.send(request);
  Reply slots = c.read_reply();
  Reply myid = c.read_reply();
  if (myid.is_string()) seed_id_ = myid.string;
  if (!slots.is_error() && load_map(slots)) {
    clustered_ = true;
    if (nodes_[default_node_].connection) {
      attach_member_shared_memory(*nodes_[default_node_].connection);
    }
    return;
  }
  if (mode == ClusterMode::kClustered) {
    throw InvalidArgumentError("cluster mode was asked for, but " + address_text_ +
                               " is not a cluster member (CLUSTER SLOTS: " +
                               (slots.is_error() ? slots.string : "no slot ranges") + ")");
  }
  attach_shared_memory(c);  // standalone: the fast path is for one local server
}

client::Connection& Client::Impl::connected(std::size_t node) {
  Node& n = nodes_[node];
  // A server that restarted left this connection closed while idle: reconnect, nothing was sent.
  if (n.connection && n.connection->closed_by_peer()) n.connection.reset();
  if (n.connection) return *n.connection;

  const bool retry = n.reached;
  const int attempts = retry ? std::max(1, options_.reconnect_attempts) : 1;
  const auto start = Clock::now();
  const auto deadline = start + options_.reconnect_timeout;
  milliseconds backoff = std::max(options_.reconnect_backoff, milliseconds(0));
  for (int attempt = 1;; ++attempt) {
    milliseconds timeout = options_.connect_timeout;
    if (retry) {
      auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
      timeout = std::clamp(left, milliseconds(1), options_.connect_timeout);
    }
    try {
      n.connection = open(n.address, timeout);
      n.reached = true;
      if (!clustered_) {
        attach_shared_memory(*n.connection);
      } else if (node == default_node_) {
        attach_member_shared_memory(*n.connection);
      }
      return *n.connection;
    } catch (const Error& error) {
      bool transient =
          error.code() == ErrorCode::kConnection || error.code() == ErrorCode::kTimeout;
      if (transient && attempt < attempts && Clock::now() + backoff < deadline) {
        std::this_thread::sleep_for(backoff);
        backoff *= 2;
        continue;
      }
      if (!clustered_ || !transient) throw;
      std::string message = "shard " + n.name + " (slots " + n.slots +
                            ") is unreachable: " + error.what() + " (" + std::to_string(attempt) +
                            (attempt == 1 ? " attempt in " : " attempts in ") +
                            std::to_string(since(start).count()) + " ms)";
      // Another shard may own these slots now: reload the map before the next request (not
      // now: a pipeline may have replies outstanding on other connections).
      refresh_pending_ = true;
      if (error.code() == ErrorCode::kTimeout) throw TimeoutError(message);
      throw ConnectionError(message);
    }
  }
}

void Client::Impl::connection_lost(std::size_t node, const Error& error) {
  nodes_[node].connection.reset();
  if (!clustered_) throw;
  std::string message =
      "shard " + nodes_[node].name + " (slots " + nodes_[node].slots + "): " + error.what();
  if (error.code() == ErrorCode::kTimeout) throw TimeoutError(message);
  if (error.code() == ErrorCode::kProtocol) throw ProtocolError(message);
  throw ConnectionError(message);
}

// ---- The slot map -------------------------------------------------------------------------------

std::size_t Client::Impl::node_for(const Route& route) const {
  if (clustered_ && route.node_id) {
    for (std::size_t k = 0; k < nodes_.size(); ++k) {
      if (nodes_[k].id == *route.node_id) return k;
    }
    throw ConnectionError("cluster member " + std::string(*route.node_id) +
                          " is not in the slot map of the cluster at " + address_text_);
  }
  if (!clustered_ || !route.key) return default_node_;
  int slot = key_slot(*route.key);
  std::uint16_t owner = slot_owner_[static_cast<std::size_t>(slot)];
  if (owner == kNoOwner) {
    throw ConnectionError("slot " + std::to_string(slot) + " (key '" + std::string(*route.key) +
                          "') is not served by any shard of the cluster at " + address_text_);
  }
  return owner;
}

// CLUSTER SLOTS: [[start, end, [host, port, id, ...], replicas...], ...]. Nodes are only ever
// added (matched by host:port), so node indices held by a caller stay valid across a refresh.
bool Client::Impl::load_map(const Reply& reply) {
  if (!reply.is_array() || reply.elements.empty()) return false;
  std::vector<std::uint16_t> owner(kSlotCount, kNoOwner);
  std::vector<std::string> slots(nodes_.size());
  std::vector<Node> added;
  std::optional<std::size_t> seed_node;
  auto find = [&](const std::string& name) -> std::optional<std::size_t> {
    for (std::size_t k = 0; k < nodes_.size(); ++k) {
      if (nodes_[k].name == name) return k;
    }
    for (std::size_t k = 0; k < added.size(); ++k) {
      if (added[k].name == name) return nodes_.size() + k;
    }
    return std::nullopt;
  };
  for (const Reply& range : reply.elements) {
    if (!range.is_array() || range.elements.size() < 3) return false;
    const Reply& start = range.elements[0];
    const Reply& end = range.elements[1];
    const Reply& master = range.elements[2];
    if (!start.is_integer() || !end.is_integer() || start.integer < 0 ||
        end.integer >= kSlotCount || start.integer > end.integer || !master.is_array() ||
        master.elements.size() < 2 || !master.elements[1].is_integer()) {
      return false;
    }
    std::string host = master.elements[0].string;
    if (host.empty() || host == "?") host = address_.host;  // Redis: "" means "where you asked"
    auto port = static_cast<std::uint16_t>(master.elements[1].integer);
    std::string name = (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" +
                       std::to_string(port);
    std::optional<std::size_t> index = find(name);
    if (!index) {
      Node node;
      node.address.kind = client::Address::Kind::kTcp;
      node.address.host = host;
      node.address.port = port;
      node.name = name;
      index = nodes_.size() + added.size();
      added.push_back(std::move(node));
      slots.emplace_back();
    }
    if (master.elements.size() > 2 && master.elements[2].is_string()) {
      const std::string& id = master.elements[2].string;
      (*index < nodes_.size() ? nodes_[*index] : added[*index - nodes_.size()]).id = id;
      if (id == seed_id_ && !seed_id_.empty()) seed_node = *index;
    }
    std::string& text = slots[*index];
    if (!text.empty()) text += ",";
    text += std::to_string(start.integer) + "-" + std::to_string(end.integer);
    std::fill(owner.begin() + start.integer, owner.begin() + end.integer + 1,
              static_cast<std::uint16_t>(*index));
  }
  for (auto& node : added) nodes_.push_back(std::move(node));
  for (std::size_t k = 0; k < nodes_.size(); ++k) nodes_[k].slots = slots[k];
  if (!seed_node && address_.kind == client::Address::Kind::kTcp) {
    seed_node = find(address_.host + ":" + std::to_string(address_.port));
  }
  // Unidentified (no CLUSTER MYID, and named differently in the map), the seed stays the default
  // node for keyless requests under its own name: it is a member all the same.
  if (seed_node && *seed_node != default_node_) {
    // The seed connection (and a Unix socket address, which CLUSTER SLOTS cannot name) now
    // serves the shard it belongs to.
    Node& from = nodes_[default_node_];
    Node& to = nodes_[*seed_node];
    if (!to.connection && from.connection) to.connection = std::move(from.connection);
    to.reached = to.reached || from.reached;
    if (address_.kind == client::Address::Kind::kUnix) to.address = address_;
    default_node_ = *seed_node;
  }
  slot_owner_ = std::move(owner);
  return true;
}

bool Client::Impl::refresh_map() {
  refresh_pending_ = false;
  std::vector<std::size_t> order{default_node_};
  for (std::size_t k = 0; k < nodes_.size(); ++k) {
    if (k != default_node_) order.push_back(k);
  }
  for (std::size_t k : order) {
    Node& n = nodes_[k];
    try {
      if (n.connection && n.connection->closed_by_peer()) n.connection.reset();
      if (!n.connection) {
        n.connection =
            open(n.address, std::min(options_.connect_timeout, options_.reconnect_timeout));
        n.reached = true;
      }
      n.connection->set_io_timeout(options_.command_timeout);
      Request request;
      request.command({"CLUSTER", "SLOTS"});
      n.connection->send(request);
      Reply reply = n.connection->read_reply();
      if (!reply.is_error() && load_map(reply)) return true;
    } catch (const Error&) {
      nodes_[k].connection.reset();  // try the next node
    }
  }
  return false;
}

bool Client::Impl::follow_redirect(std::string_view text) {
  if (!clustered_ || !text.starts_with("MOVED ")) return false;
  // MOVED <slot> <host>:<port>
  text.remove_prefix(6);
  auto space = text.find(' ');
  if (space == std::string_view::npos) return false;
  int slot = std::atoi(std::string(text.substr(0, space)).c_str());
  std::string target(text.substr(space + 1));
  if (slot < 0 || slot >= kSlotCount) return false;
  refresh_map();
  std::uint16_t owner = slot_owner_[static_cast<std::size_t>(slot)];
  if (owner != kNoOwner && nodes_[owner].name == target) return true;
  // The map disagrees with the redirect (or could not be read): trust the redirect for this slot.
  auto colon = target.rfind(':');
  if (colon == std::string::npos) return false;
  std::size_t index = nodes_.size();
  for (std::size_t k = 0; k < nodes_.size(); ++k) {
    if (nodes_[k].name == target) index = k;
  }
  if (index == nodes_.size()) {
    Node node;
    node.address.kind = client::Address::Kind::kTcp;
    node.address.host = target.substr(0, colon);
    node.address.port = static_cast<std::uint16_t>(std::atoi(target.c_str() + colon + 1));
    node.name = target;
    node.slots = std::to_string(slot);
    nodes_.push_back(std::move(node));
  }
  slot_owner_[static_cast<std::size_t>(slot)] = static_cast<std::uint16_t>(index);
  return true;
}

std::optional<std::string> Client::Impl::colocation_member(std::string_view key) {
  std::lock_guard lock(io_mutex_);
  if (!clustered_ || node_for(key) == default_node_ || nodes_[default_node_].id.empty()) {
    return std::nullopt;
  }
  return nodes_[default_node_].id;
}

bool Client::Impl::member_shared_memory(std::string_view node_id) {
  std::lock_guard lock(io_mutex_);
  return clustered_ && member_shm_ && nodes_[default_node_].id == node_id;
}

bool Client::Impl::same_slot(std::string_view a, std::string_view b) const {
  return !clustered_ || key_slot(a) == key_slot(b);
}

// ---- Pipelines and broadcasts -------------------------------------------------------------------

void Client::Impl::read_batch(std::size_t node, std::span<const std::size_t> commands,
                              const std::function<void(client::Connection&, std::size_t)>& read_one,
                              std::vector<std::exception_ptr>& errors) {
  client::Connection& connection = *nodes_[node].connection;
  for (std::size_t k = 0; k < commands.size(); ++k) {
    try {
      read_one(connection, commands[k]);
    } catch (const Error& error) {
      if (!client::breaks_connection(error.code())) {
        errors[commands[k]] = std::current_exception();
        continue;
      }
      std::exception_ptr lost;
      try {
        connection_lost(node, error);
      } catch (...) {
        lost = std::current_exception();
      }
      for (std::size_t rest = k; rest < commands.size(); ++rest) errors[commands[rest]] = lost;
      return;
    } catch (...) {
      nodes_[node].connection.reset();
      for (std::size_t rest = k; rest < commands.size(); ++rest) {
        errors[commands[rest]] = std::current_exception();
      }
      return;
    }
  }
}

void Client::Impl::exchange_batch(
    std::size_t count, const std::function<Route(std::size_t)>& key_of,
    const std::function<void(Request&, std::size_t)>& add,
    const std::function<void(client::Connection&, std::size_t)>& read_one, milliseconds wait) {
  if (count == 0) return;
  std::lock_guard lock(io_mutex_);
  if (refresh_pending_) refresh_map();
  if (!clustered_) {
    Request request;
    for (std::size_t i = 0; i < count; ++i) add(request, i);
    client::Connection& connection = connected(default_node_);
    connection.set_io_timeout(io_timeout_with(wait));
    try {
      connection.send(request);
      read_each(connection, count, read_one);
    } catch (const Error& error) {
      if (client::breaks_connection(error.code())) connection_lost(default_node_, error);
      throw;
    } catch (...) {
      nodes_[default_node_].connection.reset();
      throw;
    }
    return;
  }
  for (int redirects = 0;; ++redirects) {
    std::vector<std::vector<std::size_t>> groups(nodes_.size());
    for (std::size_t i = 0; i < count; ++i) groups[node_for(key_of(i))].push_back(i);
    std::vector<std::exception_ptr> errors(count);
    std::vector<bool> sent(groups.size(), false);
    // Send every node its share before reading any reply: the shards work in parallel.
    for (std::size_t node = 0; node < groups.size(); ++node) {
      if (groups[node].empty()) continue;
      std::exception_ptr failed;
      try {
        Request request;
        for (std::size_t i : groups[node]) add(request, i);
        client::Connection& connection = connected(node);
        connection.set_io_timeout(io_timeout_with(wait));
        try {
          connection.send(request);
          sent[node] = true;
        } catch (const Error& error) {
          if (!client::breaks_connection(error.code())) throw;
          connection_lost(node, error);
        }
      } catch (...) {
        failed = std::current_exception();
      }
      if (failed) {
        for (std::size_t i : groups[node]) errors[i] = failed;
      }
    }
    for (std::size_t node = 0; node < groups.size(); ++node) {
      if (sent[node]) read_batch(node, groups[node], read_one, errors);
    }
    std::exception_ptr first;
    std::string moved;
    for (const auto& error : errors) {
      if (!error) continue;
      if (!first) first = error;
      try {
        std::rethrow_exception(error);
      } catch (const ServerError& e) {
        if (moved.empty() && e.server_text().starts_with("MOVED ")) moved = e.server_text();
      } catch (...) {
      }
    }
    if (!moved.empty() && redirects < kMaxRedirects && follow_redirect(moved)) continue;
    if (first) std::rethrow_exception(first);
    return;
  }
}

Reply Client::Impl::broadcast(const Request& request, std::string_view context) {
  return std::move(broadcast_all(request, context).front());
}

std::vector<Reply> Client::Impl::broadcast_all(const Request& request, std::string_view context) {
  std::lock_guard lock(io_mutex_);
  if (refresh_pending_) refresh_map();
  std::vector<std::size_t> targets{default_node_};
  for (std::size_t k = 0; k < nodes_.size(); ++k) {
    if (k != default_node_ && !nodes_[k].slots.empty()) targets.push_back(k);
  }
  std::vector<Reply> replies;
  std::exception_ptr first;
  for (std::size_t node : targets) {
    try {
      client::Connection& connection = connected(node);
      connection.set_io_timeout(io_timeout_with(milliseconds(0)));
      Reply reply;
      try {
        connection.send(request);
        reply = connection.read_reply();
      } catch (const Error& error) {
        if (client::breaks_connection(error.code())) connection_lost(node, error);
        throw;
      }
      if (reply.is_error()) {
        client::throw_server_error(
            reply.string,
            clustered_ ? std::string(context) + " on shard " + nodes_[node].name : context);
      }
      replies.push_back(std::move(reply));  // targets start with the default node
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
  return replies;
}

}  // namespace slipstream
