// Client::Impl: the connection, its lock, key-prefix settings and the request/reply exchange that
// every Client method goes through. Shared by client*.cpp.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "client/address.hpp"
#include "client/connection.hpp"
#include "client/request.hpp"
#include "client/server_errors.hpp"
#include "client/shm.hpp"
#include "slipstream/client.hpp"

namespace slipstream {

/// Dtype, shape and payload size of an AI.TENSORGET META BLOB reply, known before the payload.
struct TensorReplyHeader {
  DType dtype;
  std::vector<std::int64_t> shape;
  std::size_t blob_size;
};

/// The error for an unpack whose tensor `key` has shape `actual` where the caller expected
/// `expected`: "tensor 'KEY' has shape {2, 3}, not the expected {3, 2}".
InvalidArgumentError shape_mismatch_error(std::string_view key,
                                          std::span<const std::int64_t> actual,
                                          std::span<const std::int64_t> expected);

/// Where a tensor payload goes: a pointer to blob_size writable bytes, or nullptr to discard it.
using TensorTarget = std::function<std::byte*(const TensorReplyHeader&)>;

// Hidden: Client is exported, and its nested class would otherwise be too.
/// Where a request goes: the shard owning `key`'s slot in cluster mode, or the default node (the
/// address the client was given) when there is no key. Standalone: always the one server.
struct Route {
  Route(std::string_view k) : key(k) {}  // NOLINT(google-explicit-constructor): a key routes
  Route(const std::string& k) : key(k) {}  // NOLINT(google-explicit-constructor)
  Route(const char* k) : key(k) {}         // NOLINT(google-explicit-constructor)
  static Route any() { return Route(); }
  /// Cluster mode: the member with this node id (as CLUSTER SLOTS names it), whatever it serves.
  static Route member(std::string_view node_id) {
    Route route;
    route.node_id = node_id;
    return route;
  }
  std::optional<std::string_view> key;
  std::optional<std::string_view> node_id;

 private:
  Route() = default;
};

// Hidden: Client is exported, and its nested class would otherwise be too.
class __attribute__((visibility("hidden"))) Client::Impl {
 public:
  explicit Impl(ClientOptions options);

  const std::string& address() const noexcept { return address_text_; }
  /// Fixed at construction (ClientOptions::cluster).
  bool clustered() const noexcept { return clustered_; }

  /// Sends `request` to the node for `route` and calls `read(connection)`, which must consume
  /// exactly its replies, all under the I/O lock. The I/O timeout is the command timeout plus
  /// `wait` (kWaitForever: none). Errors that leave the stream out of step close the connection;
  /// the next exchange reconnects. In cluster mode a -MOVED error thrown by `read` refreshes the
  /// slot map and sends the request again (MOVED means it was not executed), a bounded number of
  /// times; a shard that cannot be reached throws ConnectionError naming it and its slots.
  template <typename Read>
  auto exchange(Route route, const client::Request& request, Read&& read,
                std::chrono::milliseconds wait = std::chrono::milliseconds(0)) {
    std::lock_guard lock(io_mutex_);
    if (refresh_pending_) refresh_map();
    for (int redirects = 0;; ++redirects) {
      std::size_t node = node_for(route);
      client::Connection& connection = connected(node);
      connection.set_io_timeout(io_timeout_with(wait));
      try {
        // Views and loans given back since the last request are released in front of it.
        const bool releasing = send_shm_releases(connection);
        connection.send(request);
        if (releasing) connection.read_reply();  // SS.SHM.RELEASE's count
        return read(connection);
      } catch (const ServerError& error) {
        if (redirects < kMaxRedirects && follow_redirect(error.server_text())) continue;
        throw;
      } catch (const Error& error) {
        if (client::breaks_connection(error.code())) connection_lost(node, error);
        throw;
      } catch (...) {
        nodes_[node].connection.reset();
        throw;
      }
    }
  }

  /// A pipeline of `count` commands: command i is appended by `add(request, i)` and routed by
  /// `key_of(i)`. Standalone, it is one request; in cluster mode each node gets its share as one
  /// request, all nodes are sent to before any reply is read, and reply i is read with
  /// `read_one(connection, i)` whichever node it came from. Errors that keep a stream in step are
  /// held until every reply is read, then the one of the lowest command index is thrown (an
  /// unreachable shard's error included: the other nodes' commands are still executed). A MOVED
  /// reply refreshes the map and sends the whole pipeline again, so it must be idempotent as a
  /// whole.
  void exchange_batch(std::size_t count, const std::function<Route(std::size_t)>& key_of,
                      const std::function<void(client::Request&, std::size_t)>& add,
                      const std::function<void(client::Connection&, std::size_t)>& read_one,
                      std::chrono::milliseconds wait = std::chrono::milliseconds(0));

  /// Sends `request` (one command) to every node: the one server standalone, every shard in
  /// cluster mode (how models and scripts are stored and deleted: each shard holds a copy).
  /// Returns the default node's reply; an error reply or unreachable shard is thrown, after
  /// every node was tried.
  Reply broadcast(const client::Request& request, std::string_view context);
  /// As broadcast, but returns every node's reply, the default node's first.
  std::vector<Reply> broadcast_all(const client::Request& request, std::string_view context);

  /// Cluster mode: the node id of the member this client was given (its node's shard) when
  /// `key` lives on another member; nothing standalone, or when the key's member is that one, or
  /// when the given member could not be identified. Where a stream writer keeps its chunks.
  std::optional<std::string> colocation_member(std::string_view key);
  /// Cluster mode: true when the connection to member `node_id` has shared memory attached
  /// (the member this client was given, over a Unix socket): stream segments and views there.
  bool member_shared_memory(std::string_view node_id);

  /// True when `a` and `b` are in the same hash slot (always true standalone): a server-side
  /// multi-key command (RENAME, COPY) may name both.
  bool same_slot(std::string_view a, std::string_view b) const;

  /// From now on no reply is awaited longer than `cap`, whatever the timeouts say: for the
  /// goodbyes of destructors (a program ending must not wait on a server that stopped answering;
  /// the connection closing says goodbye as well).
  void cap_waits(std::chrono::milliseconds cap) noexcept { wait_cap_ = cap; }

  /// One command, one reply; an error reply is thrown with `context`.
  Reply call(Route route, const client::Request& request, std::string_view context,
             std::chrono::milliseconds wait = std::chrono::milliseconds(0));

  /// Reads each of `count` replies with `read_one(connection, index)`. Errors that keep the stream
  /// in step are held until all replies are read, then the first is rethrown.
  static void read_each(client::Connection& connection, std::size_t count,
                        const std::function<void(client::Connection&, std::size_t)>& read_one);

  /// Reads one AI.TENSORGET META BLOB reply. Returns false (with the server's text in `error`)
  /// for an error reply. Throws ProtocolError for a malformed reply.
  static bool read_tensor_reply(client::Connection& connection, const TensorTarget& target,
                                std::string* error);
  /// Reads a tensor reply into a new Tensor; throws for an error reply (context: `key`).
  static Tensor read_tensor(client::Connection& connection, std::string_view key);

  /// Appends `AI.TENSORSET key TYPE dims... BLOB data` to `request` (validating the size).
  static void add_tensor_set(client::Request& request, std::string_view key,
                             const TensorRef& tensor);
  /// Appends `AI.TENSORGET key META BLOB`.
  static void add_tensor_get(client::Request& request, std::string_view key);

  /// Waits until every key exists; `timeout` zero checks once, kWaitForever never gives up.
  bool wait_for_keys(const std::vector<std::string>& keys, std::chrono::milliseconds timeout);
  /// Cluster mode: copies a tensor through the client (AI.TENSORGET, then AI.TENSORSET), for
  /// keys of different slots, which RENAME and COPY cannot span.
  void copy_tensor_across_slots(const std::string& from, const std::string& to);
  bool wait_for_keys_across_slots(const std::vector<std::string>& keys,
                                  std::chrono::milliseconds timeout);
  /// Waits until LLEN(key) >= length. Same timeout rules.
  bool wait_for_length(const std::string& key, std::int64_t length,
                       std::chrono::milliseconds timeout);
  std::int64_t list_length(const std::string& key);

  // Key names with the ensemble prefixes (`for_read`: the data source, else SSKEYOUT).
  std::string tensor_key(std::string_view name, bool for_read) const;
  std::string dataset_key(std::string_view name, bool for_read) const;
  std::string dataset_meta_key(std::string_view name, bool for_read) const {
    return dataset_key(name, for_read) + ".meta";
  }
  std::string list_key(std::string_view name, bool for_read) const;
  /// Model and script keys (prefixed only when use_model_prefix_ is set). In client_models.cpp.
  std::string model_key(std::string_view name, bool for_read) const;

  /// The server's MODEL_CHUNK_SIZE as last asked or set; 0 until then. In client_models.cpp.
  std::atomic<std::int64_t> model_chunk_size_{0};

  void set_data_source(std::string_view source);
  void set_prefix_flag(bool& flag, bool enable) {
    std::lock_guard lock(settings_mutex_);
    flag = enable;
  }
  bool model_prefix() const {
    std::lock_guard lock(settings_mutex_);
    return use_model_prefix_;
  }

  // ---- Shared-memory fast path (client_shm.cpp). The shm_* operations return nothing when the
  // socket must be used instead (fast path off, small tensor, pool full), having counted it.
  bool shm_put(const std::string& key, const TensorRef& tensor);
  std::optional<Tensor> shm_get(const std::string& key);
  std::optional<std::vector<std::int64_t>> shm_unpack(const std::string& key, DType dtype,
                                                      void* out, std::size_t out_bytes,
                                                      std::span<const std::int64_t> expected,
                                                      MemoryOrder order);
  std::optional<TensorView> shm_view(const std::string& key);
  /// SS.SHM.VIEW: the lease of `key`'s bytes with its descriptor (the caller closes it and
  /// gives the lease back); nullopt if the socket must be used.
  // `frames`: a compressed tensor is fetched on the socket as its frame (nullopt here) instead
  // of being decoded by the server into the lease.
  std::optional<client::ShmLease> shm_lease(const std::string& key, bool frames);
  /// Maps a lease read-only as a view (closing its descriptor; given back if mapping fails).
  TensorView map_lease(client::ShmLease& lease);
  /// Appends SS.SHM.COMMIT of loan `loan_id` as tensor `key` (with LEND if `lend_next`).
  static void add_commit(client::Request& request, std::uint64_t loan_id, std::string_view key,
                         DType dtype, std::span<const std::int64_t> shape,
                         bool lend_next = false);
  /// Reads one SS.SHM.VIEW / SS.SHM.LOAN reply (taking the descriptor passed with it).
  client::ShmLeaseReply read_lease(client::Connection& connection);
  client::ShmLoanReply read_loan(client::Connection& connection);
  /// put_tensors / get_tensors through shared memory, standalone: the tensors that qualify go in
  /// two round trips (all loans, then all commits with the rest sent on the socket; one when
  /// every tensor has a loan held ahead, ClientOptions::shared_memory_lend_ahead), or are
  /// leased in one; false when the fast path is not used at all (the caller's socket batch).
  bool shm_put_batch(std::span<const std::string> keys, std::span<const TensorRef> tensors);
  /// Whether shm_put_batch would send any of `tensors` through shared memory.
  bool shm_put_batch_applies(std::span<const TensorRef> tensors) const;
  bool shm_get_batch(std::span<const std::string> keys, std::vector<Tensor>& out);
  /// Copies a lease's bytes into `out` (at least lease.bytes), then closes its descriptor and
  /// gives it back.
  void shm_read(client::ShmLease& lease, std::byte* out);
  /// A shared loan, mapped writable if `map`: one lent ahead with an earlier commit when one of
  /// `bytes` is held, else SS.SHM.LOAN's; nullopt if the pool is full.
  std::optional<TensorLoan> shm_lend(std::size_t bytes, bool map);
  /// Commits a shared loan as `key`, consuming it. Returns false if it had to be sent on the
  /// socket instead (its connection was replaced since it was lent).
  bool shm_commit(const std::string& key, TensorLoan& loan, DType dtype,
                  std::span<const std::int64_t> shape);
  client::ShmLink& shm_link() noexcept { return *shm_; }
  const std::shared_ptr<client::ShmLink>& shm_link_ptr() const noexcept { return shm_; }

  // Guarded by settings_mutex_; written through set_prefix_flag.
  bool use_tensor_prefix_ = true;
  bool use_dataset_prefix_ = true;
  bool use_list_prefix_ = true;
  bool use_model_prefix_ = false;

 private:
  /// One server: the standalone server, or a cluster shard.
  struct Node {
    client::Address address;  ///< how this client reaches it
    std::string name;         ///< host:port as the cluster names it (standalone: the address)
    std::string slots;        ///< its slot ranges, for messages ("5461-10921")
    std::string id;           ///< cluster: its node id from CLUSTER SLOTS (may be empty)
    std::unique_ptr<client::Connection> connection;
    bool reached = false;     ///< connected at least once: reconnects retry with back-off
  };
  static constexpr int kMaxRedirects = 3;

  // All of these require io_mutex_.
  /// Connects to the address given, then (kAuto / kClustered) loads the cluster map.
  void connect_first();
  std::size_t node_for(const Route& route) const;
  client::Connection& connected(std::size_t node);
  std::unique_ptr<client::Connection> open(const client::Address& address,
                                           std::chrono::milliseconds timeout);
  /// Resets the node's connection and throws `error` again, naming the shard in cluster mode.
  [[noreturn]] void connection_lost(std::size_t node, const Error& error);
  /// For a MOVED error text: refreshes the map (or applies the redirect) and returns true.
  bool follow_redirect(std::string_view server_text);
  /// Asks a reachable node for CLUSTER SLOTS and rebuilds the map; false if none answered. Only
  /// between requests: no other connection may have replies outstanding.
  bool refresh_map();
  /// Rebuilds nodes_ and slot_owner_ from a CLUSTER SLOTS reply; false if it is not one.
  bool load_map(const Reply& slots);
  void read_batch(std::size_t node, std::span<const std::size_t> commands,
                  const std::function<void(client::Connection&, std::size_t)>& read_one,
                  std::vector<std::exception_ptr>& errors);

  // Asks a new Unix-socket connection for the fast path (SS.SHM.ATTACH); standalone only.
  // Requires io_mutex_.
  void attach_shared_memory(client::Connection& connection);
  // Cluster mode: asks the connection to the member this client was given for shared memory,
  // for stream segments only (tensors keep the socket: their keys live on every member).
  // Requires io_mutex_.
  void attach_member_shared_memory(client::Connection& connection);
  // Sends SS.SHM.RELEASE for ids given back since the last request; true if it sent one.
  bool send_shm_releases(client::Connection& connection);
  std::chrono::milliseconds io_timeout_with(std::chrono::milliseconds wait) const;
  std::chrono::milliseconds wait_cap_{0};
  std::string prefixed(std::string_view name, bool enabled, bool for_read) const;

  ClientOptions options_;
  client::Address address_;
  std::string address_text_;
  std::optional<std::string> password_;
  bool clustered_ = false;

  std::mutex io_mutex_;
  std::vector<Node> nodes_;                // guarded by io_mutex_; standalone: the one server
  std::vector<std::uint16_t> slot_owner_;  // guarded by io_mutex_; cluster: node of each slot
  std::size_t default_node_ = 0;           // guarded by io_mutex_; the node at address_
  std::string seed_id_;                    // cluster: CLUSTER MYID of the node at address_
  bool refresh_pending_ = false;           // guarded by io_mutex_; a shard was unreachable
  std::atomic<bool> server_waits_{true};            ///< false once the server rejected SS.WAIT
  std::shared_ptr<client::ShmLink> shm_ = std::make_shared<client::ShmLink>();
  bool shm_wanted_ = false;  ///< fast path allowed (kAuto, unix://, not SLIPSTREAM_SHM=off)
  bool member_shm_ = false;  ///< cluster: the default node's connection has SS.SHM.ATTACH
  /// Loans lent ahead with commits (SS.SHM.COMMIT ... LEND), unmapped, the most recently lent
  /// last; at most kLoansAheadHeld (a batch of tensors of one size holds one for each). One not
  /// used while kLoanAheadUnusedFor loans were taken after it was lent is given back.
  static constexpr std::size_t kLoansAheadHeld = 8;
  static constexpr std::uint64_t kLoanAheadUnusedFor = 32;
  struct HeldLoan {
    TensorLoan loan;
    std::uint64_t held_since = 0;  // loans_taken_ when it was lent
  };
  std::mutex ahead_mutex_;
  std::vector<HeldLoan> loans_ahead_;  // guarded by ahead_mutex_
  std::uint64_t loans_taken_ = 0;      // guarded by ahead_mutex_: take_loan_ahead calls
  /// The server understands SS.SHM.COMMIT ... LEND (SS.SHM.FEATURES, asked when attaching).
  std::atomic<bool> lend_ahead_offered_{false};
  bool lend_ahead() const noexcept {
    return options_.shared_memory_lend_ahead && lend_ahead_offered_.load(std::memory_order_relaxed);
  }
  /// The held loan of `bytes` for the current connection, if any (stale ones are dropped).
  std::optional<TensorLoan> take_loan_ahead(std::size_t bytes);
  /// Reads one SS.SHM.COMMIT reply and returns the commit's own answer; with LEND (`lend_next`)
  /// the loan lent ahead, if any, goes to `next`.
  Reply read_commit(client::Connection& c, bool lend_next, std::size_t bytes,
                    std::optional<TensorLoan>& next);
  /// Holds `loan` for the next put of its size, giving back the one held longest past the limit.
  void hold_loan_ahead(TensorLoan loan);
  /// Gives back every loan held ahead (a loan of another size was refused for want of room);
  /// false when none was held.
  bool drop_loans_ahead();

  mutable std::mutex settings_mutex_;
  std::string put_prefix_;                 ///< SSKEYOUT, guarded by settings_mutex_
  std::vector<std::string> get_prefixes_;  ///< SSKEYIN entries
  std::string data_source_;                ///< the SSKEYIN entry reads use
};

}  // namespace slipstream
