// Client::Impl: the connection, its lock, key-prefix settings and the request/reply exchange that
// every Client method goes through. Shared by client*.cpp.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
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

/// Where a tensor payload goes: a pointer to blob_size writable bytes, or nullptr to discard it.
using TensorTarget = std::function<std::byte*(const TensorReplyHeader&)>;

// Hidden: Client is exported, and its nested class would otherwise be too.
class __attribute__((visibility("hidden"))) Client::Impl {
 public:
  explicit Impl(ClientOptions options);

  const std::string& address() const noexcept { return address_text_; }

  /// Sends `request` and calls `read(connection)`, which must consume exactly its replies, all
  /// under the connection lock. The I/O timeout is the command timeout plus `wait` (kWaitForever:
  /// none). Errors that leave the stream out of step close the connection; the next exchange
  /// reconnects.
  template <typename Read>
  auto exchange(const client::Request& request, Read&& read,
                std::chrono::milliseconds wait = std::chrono::milliseconds(0)) {
    std::lock_guard lock(io_mutex_);
    client::Connection& connection = connected();
    connection.set_io_timeout(io_timeout_with(wait));
    try {
      const bool releasing = send_shm_releases(connection);
      connection.send(request);
      if (releasing) connection.read_reply();  // SS.SHM.RELEASE's count
      return read(connection);
    } catch (const Error& error) {
      if (client::breaks_connection(error.code())) connection_.reset();
      throw;
    } catch (...) {
      connection_.reset();
      throw;
    }
  }

  /// One command, one reply; an error reply is thrown with `context`.
  Reply call(const client::Request& request, std::string_view context,
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
  /// A shared loan (SS.SHM.LOAN), mapped writable if `map`; nullopt if the pool is full.
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
  client::Connection& connected();  // requires io_mutex_
  // Asks a new Unix-socket connection for the fast path (SS.SHM.ATTACH). Requires io_mutex_.
  void attach_shared_memory(client::Connection& connection);
  // Sends SS.SHM.RELEASE for ids given back since the last request; true if it sent one.
  bool send_shm_releases(client::Connection& connection);
  std::chrono::milliseconds io_timeout_with(std::chrono::milliseconds wait) const;
  std::string prefixed(std::string_view name, bool enabled, bool for_read) const;

  ClientOptions options_;
  client::Address address_;
  std::string address_text_;
  std::optional<std::string> password_;

  std::mutex io_mutex_;
  std::unique_ptr<client::Connection> connection_;  // guarded by io_mutex_
  std::atomic<bool> server_waits_{true};            ///< false once the server rejected SS.WAIT
  std::shared_ptr<client::ShmLink> shm_ = std::make_shared<client::ShmLink>();
  bool shm_wanted_ = false;  ///< fast path allowed (kAuto, unix://, not SLIPSTREAM_SHM=off)

  mutable std::mutex settings_mutex_;
  std::string put_prefix_;                 ///< SSKEYOUT, guarded by settings_mutex_
  std::vector<std::string> get_prefixes_;  ///< SSKEYIN entries
  std::string data_source_;                ///< the SSKEYIN entry reads use
};

}  // namespace slipstream
