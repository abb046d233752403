// slipstream::Client: the native C++ client (tensors, datasets, aggregation lists, ensemble key
// prefixes, blocking waits, batched calls) over RESP on TCP or a Unix socket.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "slipstream/dataset.hpp"
#include "slipstream/error.hpp"
#include "slipstream/export.hpp"
#include "slipstream/reply.hpp"
#include "slipstream/shared_memory.hpp"
#include "slipstream/tensor.hpp"
#include "slipstream/tensor_data.hpp"

namespace slipstream {

/// How a Client connects. Every field has a default; unset strings are taken from the environment.
struct ClientOptions {
  /// `tcp://host:port`, `unix:///path/to/socket` or `host:port`. Empty: `SLIPSTREAM_ADDRESS`, else
  /// the first entry of `SSDB` (a comma-separated list, as SmartSim sets it).
  std::string address;
  /// Sent with AUTH after connecting. Unset: `SLIPSTREAM_PASSWORD` if set, else no AUTH.
  std::optional<std::string> password;
  /// Longest wait for a connection to be established.
  std::chrono::milliseconds connect_timeout{5000};
  /// Longest time a request may wait with no bytes moving in either direction; zero waits forever.
  /// Blocking waits (poll_*, wait_for_keys) add their own wait time to it.
  std::chrono::milliseconds command_timeout{60000};
  /// Ensemble prefix for writes. Unset: `SSKEYOUT`.
  std::optional<std::string> key_prefix_out;
  /// Comma-separated ensemble prefixes for reads; the first is the data source. Unset: `SSKEYIN`.
  std::optional<std::string> key_prefixes_in;
  /// The shared-memory fast path: kAuto uses it over `unix://` addresses when the server offers
  /// it (SS.SHM.ATTACH); kOff never does. `SLIPSTREAM_SHM=off` in the environment also turns it
  /// off.
  SharedMemoryMode shared_memory = SharedMemoryMode::kAuto;
  /// Puts (put_tensor from a buffer) and unpacks smaller than this use the socket even when the
  /// fast path is on: below it the extra round trip of a loan costs more than the copy it saves.
  /// Loans, views and get_tensor always use shared memory when it is on.
  std::size_t shared_memory_min_bytes = 256 * 1024;
};

/// Wait time meaning "no limit" for wait_for_keys.
inline constexpr std::chrono::milliseconds kWaitForever = std::chrono::milliseconds::max();

/// A connection to one Slipstream (or Redis-compatible) server.
///
/// Thread-safety: a Client may be shared by any number of threads. Each call holds an internal
/// mutex for its whole request/reply exchange (a batch is one exchange), so calls from different
/// threads are serialised on the one connection; use one Client per thread for parallel transfers.
/// Prefix settings (set_data_source, use_*_ensemble_prefix) are also safe to change concurrently,
/// but a call that races with the change may use either setting.
///
/// A moved-from Client may only be destroyed or assigned to.
///
/// Blocking: every call blocks until the reply has arrived, a timeout expires or the connection
/// fails. After a timeout or a broken connection the connection is closed and the next call opens
/// a new one (and authenticates again); the failed call is never retried, since it may have been
/// applied.
///
/// Errors: every method throws a subclass of slipstream::Error (see error.hpp); the names below
/// list the specific ones. Any call may also throw ConnectionError, TimeoutError, ProtocolError,
/// AuthError, OutOfMemoryError (writes) and ServerError.
///
/// Key names: tensor, dataset and list names get the ensemble prefixes as SmartRedis applies them
/// (`SSKEYOUT.` on writes, `<data source>.` on reads); the raw-key methods (key_exists, poll_key,
/// wait_for_keys, put_bytes, get_bytes, command) do not.
class SLIPSTREAM_API Client {
 public:
  /// Connects using the options (see ClientOptions for the environment fallbacks) and sends AUTH
  /// if a password is set. Throws InvalidArgumentError for a missing or malformed address,
  /// ConnectionError if the server cannot be reached (the message names the address),
  /// TimeoutError if connecting takes longer than connect_timeout, AuthError for a bad password.
  explicit Client(ClientOptions options = {});
  /// Same as Client(ClientOptions{.address = address}).
  explicit Client(std::string_view address);
  Client(Client&&) noexcept;
  Client& operator=(Client&&) noexcept;
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;
  ~Client();

  /// The address connected to, in its normalised `tcp://` or `unix://` form.
  const std::string& address() const noexcept;

  // ---- Tensors -------------------------------------------------------------------------------

  /// Stores a tensor (AI.TENSORSET), replacing any value under the name. `bytes` must equal
  /// element_count(shape) * dtype_size(dtype); `data` is borrowed for the call and sent without
  /// an intermediate copy in C order (a Fortran-order buffer is transposed into a temporary first).
  /// Throws InvalidArgumentError for a bad name, shape or size.
  void put_tensor(std::string_view name, DType dtype, const void* data, std::size_t bytes,
                  std::span<const std::int64_t> shape, MemoryOrder order = MemoryOrder::kC);
  template <typename T>
  void put_tensor(std::string_view name, std::span<const T> data,
                  std::span<const std::int64_t> shape, MemoryOrder order = MemoryOrder::kC) {
    put_tensor(name, dtype_of<T>, data.data(), data.size_bytes(), shape, order);
  }

  /// Fetches a tensor (AI.TENSORGET META BLOB) into a new row-major Tensor that owns its bytes.
  /// Throws KeyNotFoundError if it does not exist, WrongTypeError if the key is not a tensor.
  Tensor get_tensor(std::string_view name);

  /// Fetches a tensor into the caller's buffer, laid out in `order`; in C order the payload is read
  /// from the socket straight into `out`. If `expected_shape` is not empty it must equal the stored
  /// shape. Returns the stored shape. Throws KeyNotFoundError, InvalidArgumentError (dtype or
  /// shape differs from the expected one), BufferTooSmallError (`out_bytes` smaller than the
  /// tensor; a larger buffer is allowed and its tail left untouched). On any error `out` may have
  /// been partly written.
  std::vector<std::int64_t> unpack_tensor(std::string_view name, DType dtype, void* out,
                                          std::size_t out_bytes,
                                          std::span<const std::int64_t> expected_shape = {},
                                          MemoryOrder order = MemoryOrder::kC);
  template <typename T>
  std::vector<std::int64_t> unpack_tensor(std::string_view name, std::span<T> out,
                                          std::span<const std::int64_t> expected_shape = {},
                                          MemoryOrder order = MemoryOrder::kC) {
    return unpack_tensor(name, dtype_of<T>, out.data(), out.size_bytes(), expected_shape, order);
  }

  /// Deletes a tensor. Returns false if it did not exist.
  bool delete_tensor(std::string_view name);
  /// True if a key of that (read-prefixed) name exists.
  bool tensor_exists(std::string_view name);
  /// Renames a tensor (RENAME; the new name gets the write prefix). Throws KeyNotFoundError if it
  /// does not exist.
  void rename_tensor(std::string_view old_name, std::string_view new_name);
  /// Copies a tensor server-side (COPY ... REPLACE). Throws KeyNotFoundError if it does not exist.
  void copy_tensor(std::string_view source, std::string_view destination);
  /// Waits until the tensor exists, for at most `poll_ms * tries` milliseconds, without polling
  /// traffic when the server supports SS.WAIT. Returns whether it exists. tries <= 0: false at
  /// once.
  bool poll_tensor(std::string_view name, int poll_ms, int tries);

  /// Puts several tensors in one round trip. All are sent; if some fail the first error is thrown
  /// after every reply has been read (the others are stored).
  void put_tensors(std::span<const TensorRef> tensors);
  /// Gets several tensors in one round trip, in the order of `names`. Throws the first error (e.g.
  /// KeyNotFoundError) after every reply has been read.
  std::vector<Tensor> get_tensors(std::span<const std::string> names);

  // ---- Shared memory (local fast path; see shared_memory.hpp) ------------------------------

  /// A region of `bytes` bytes to fill with a tensor and then store with the put_tensor overload
  /// below, without a copy. Shared memory lent by the server when the fast path is on, private
  /// memory otherwise (and when the server's pool is full: counted in stats().fallbacks).
  /// Throws InvalidArgumentError for zero bytes, OutOfMemoryError when the server is over
  /// --maxmemory.
  TensorLoan loan(std::size_t bytes);
  /// Stores the filled loan as a tensor (consuming it): a shared loan is sealed by the server so
  /// that nobody, this process included, can change it afterwards, and becomes the stored tensor
  /// without a copy; a private one is sent on the socket. `loan.size()` must equal
  /// element_count(shape) * dtype_size(dtype). Throws InvalidArgumentError for a bad name, shape
  /// or size or an invalid loan, and as put_tensor. The loan is consumed even when it throws.
  void put_tensor(std::string_view name, TensorLoan&& loan, DType dtype,
                  std::span<const std::int64_t> shape);
  /// A read-only view of a stored tensor: its bytes in shared memory, without a copy, when the
  /// fast path is on; otherwise (or when the pool is full) a private copy received on the socket.
  /// Throws KeyNotFoundError, WrongTypeError.
  TensorView view_tensor(std::string_view name);
  /// Which path the tensor operations of this Client took.
  ClientStats stats() const;

  // ---- Raw keys ------------------------------------------------------------------------------

  /// EXISTS on the raw key (no prefix).
  bool key_exists(std::string_view key);
  /// Waits for a raw key like poll_tensor.
  bool poll_key(std::string_view key, int poll_ms, int tries);
  /// Waits until every key exists (server-side SS.WAIT). Returns false if `timeout` expires first.
  /// A zero timeout checks once; kWaitForever never gives up.
  bool wait_for_keys(std::span<const std::string> keys, std::chrono::milliseconds timeout);
  /// SET / GET / UNLINK of a plain byte string under a raw key. get_bytes throws KeyNotFoundError
  /// if the key does not exist.
  void put_bytes(std::string_view key, std::string_view bytes);
  std::string get_bytes(std::string_view key);
  bool delete_bytes(std::string_view key);

  // ---- Datasets ------------------------------------------------------------------------------

  /// Stores a dataset exactly as SmartRedis does, in one round trip: DEL `{name}.meta`, HMSET of
  /// its fields, AI.TENSORSET of each tensor at `{name}.<tensor>`, then HSET `.COMPLETE` 1.
  /// Throws InvalidArgumentError if it has no tensors and no fields.
  void put_dataset(const DataSet& dataset);
  /// Fetches a dataset and all its tensors (two round trips). Throws KeyNotFoundError if it does
  /// not exist.
  DataSet get_dataset(std::string_view name);
  /// Deletes the metadata hash and every tensor. Throws KeyNotFoundError if it does not exist.
  void delete_dataset(std::string_view name);
  /// True once the dataset is completely stored (its `.COMPLETE` field exists).
  bool dataset_exists(std::string_view name);
  /// Waits up to `poll_ms * tries` ms for dataset_exists. tries <= 0: false at once.
  bool poll_dataset(std::string_view name, int poll_ms, int tries);
  /// Copies a dataset to a new name (read prefix on the source, write prefix on the copy).
  /// Throws KeyNotFoundError if the source does not exist.
  void copy_dataset(std::string_view source, std::string_view destination);
  /// copy_dataset, then delete_dataset of the source.
  void rename_dataset(std::string_view old_name, std::string_view new_name);

  // ---- Aggregation lists ---------------------------------------------------------------------

  /// Appends a reference to the dataset (its key `{name}`, with the write prefix) to a list. Does
  /// not store the dataset itself.
  void append_to_list(std::string_view list_name, const DataSet& dataset);
  /// Deletes the list (not the datasets it references).
  void delete_list(std::string_view list_name);
  /// Replaces `destination` with a copy of `source`'s entries. Throws KeyNotFoundError if the
  /// source is empty or does not exist.
  void copy_list(std::string_view source, std::string_view destination);
  /// copy_list, then delete_list of the source.
  void rename_list(std::string_view old_name, std::string_view new_name);
  /// Number of entries (0 if the list does not exist).
  std::int64_t get_list_length(std::string_view list_name);
  /// Waits up to `poll_ms * tries` ms until the length is ==, >= or <= `length`. Returns whether
  /// it was reached. Throws InvalidArgumentError if `length` is negative.
  bool poll_list_length(std::string_view list_name, std::int64_t length, int poll_ms, int tries);
  bool poll_list_length_gte(std::string_view list_name, std::int64_t length, int poll_ms,
                            int tries);
  bool poll_list_length_lte(std::string_view list_name, std::int64_t length, int poll_ms,
                            int tries);
  /// Every dataset the list references, in list order.
  std::vector<DataSet> get_datasets_from_list(std::string_view list_name);
  /// The datasets at list positions [start, end] (inclusive; negative counts from the end, as
  /// LRANGE).
  std::vector<DataSet> get_dataset_list_range(std::string_view list_name, std::int64_t start,
                                              std::int64_t end);

  // ---- Ensemble prefixes ---------------------------------------------------------------------

  /// Selects which SSKEYIN prefix reads use. Throws InvalidArgumentError if `source` is not one.
  void set_data_source(std::string_view source);
  /// Whether tensor / dataset / list / model names get the ensemble prefixes (defaults as
  /// SmartRedis: true, true, true, false).
  void use_tensor_ensemble_prefix(bool enable);
  void use_dataset_ensemble_prefix(bool enable);
  void use_list_ensemble_prefix(bool enable);
  void use_model_ensemble_prefix(bool enable);
  bool model_ensemble_prefix_enabled() const;

  // ---- Escape hatch --------------------------------------------------------------------------

  /// Sends one command as given (no prefixes) and returns its reply. An error reply is thrown as
  /// ServerError (or a subclass); errors nested inside an array reply are returned as kError
  /// elements. Throws InvalidArgumentError for an empty command.
  Reply command(const std::vector<std::string_view>& args);
  /// Sends several commands in one round trip and returns every reply, error replies included
  /// (as kError), in order.
  std::vector<Reply> commands(const std::vector<std::vector<std::string_view>>& batch);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace slipstream
