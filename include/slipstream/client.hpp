// slipstream::Client: the native C++ client (tensors, datasets, aggregation lists, models and
// scripts, ensemble key prefixes, blocking waits, batched calls) over RESP on TCP or a Unix socket.
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

/// Whether the server is one of several cluster shards (see ClientOptions::cluster).
enum class ClusterMode {
  kAuto,        ///< `SR_DB_TYPE` (`Clustered` / `Standalone`, as SmartRedis) if set, else ask
  kStandalone,  ///< one server: every request goes to the address given
  kClustered,   ///< a Slipstream or Redis cluster: requests are routed by the slots of their keys
};

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
  /// Cluster or single server. kAuto asks the server with CLUSTER SLOTS once when connecting (a
  /// server without cluster mode, Redis included, answers with an error: standalone); no request
  /// after that costs an extra round trip in either mode.
  ClusterMode cluster = ClusterMode::kAuto;
  /// Reconnecting to a server or shard that was reachable before (it restarted, or its
  /// connection broke): at most this many attempts, `reconnect_backoff` apart and then twice as
  /// long each time, all within `reconnect_timeout` (each attempt also within connect_timeout).
  /// Defaults: 3 attempts, 50 ms, 1 s, so a shard that is down fails its call in ~150 ms.
  int reconnect_attempts = 3;
  std::chrono::milliseconds reconnect_backoff{50};
  std::chrono::milliseconds reconnect_timeout{1000};
  /// The shared-memory fast path: kAuto uses it over `unix://` addresses when the server offers
  /// it (SS.SHM.ATTACH); kOff never does. `SLIPSTREAM_SHM=off` in the environment also turns it
  /// off.
  SharedMemoryMode shared_memory = SharedMemoryMode::kAuto;
  /// Puts (put_tensor from a buffer) and unpacks smaller than this use the socket even when the
  /// fast path is on: below it the extra round trip of a loan costs more than the copy it saves.
  /// Loans, views and get_tensor always use shared memory when it is on.
  std::size_t shared_memory_min_bytes = 256 * 1024;
  /// Puts from a caller's buffer (put_tensor, put_tensors) smaller than this use the socket even
  /// when the fast path is on: a put into shared memory pays the kernel's work per 4 KiB page,
  /// which on the machine measured (docs/performance.md) costs more than the socket copy at
  /// 1 MiB and less from 16 MiB up. Where the kernel gives shared memory huge pages
  /// (shmem_enabled "always" or "within_size"), shared memory wins from 1 MiB: set it lower
  /// there. Loans (put_tensor of a TensorLoan) are not affected.
  std::size_t shared_memory_put_min_bytes = std::size_t{16} << 20;
  /// Each put through shared memory asks the server to lend, with its commit, the loan for the
  /// next put of the same size (SS.SHM.COMMIT ... LEND), so that a simulation putting the same
  /// fields step after step pays one round trip per put (or per put_tensors / put_dataset batch)
  /// instead of two. The client holds such loans between puts (at most 8; past that the one held
  /// longest is given back, as is one unused while 32 later loans were taken, and all are when a
  /// loan is refused for want of room), and the server lends them only from files it made ahead,
  /// within a quarter of --shm-size and outside the last quarter of --maxmemory; a server that
  /// does not offer it (SS.SHM.FEATURES) is not asked. false: every put asks for its loan
  /// (SS.SHM.LOAN), none is held.
  bool shared_memory_lend_ahead = true;
};

/// How a model is stored (the options of AI.MODELSTORE); every field is optional.
/// Which version of a model a run uses, and which one ran (run_model, run_model_on). A model's
/// version counts its stores under its key (1, 2, ...; AI.INFO reports it).
struct ModelVersion {
  /// In: the version to run; 0 runs the newest. An earlier version can run only while the model
  /// keeps it (ModelOptions::keep_versions); otherwise the run fails with ServerError naming the
  /// versions held.
  std::uint64_t pin = 0;
  /// Out: the version that ran.
  std::uint64_t ran = 0;
};

struct ModelOptions {
  /// BATCHSIZE: when > 0 the server may gather concurrent executions of the model into one run of
  /// at most this many rows (dimension 0 of the inputs) and split the results back. 0: no batching.
  std::int64_t batch_size = 0;
  /// MINBATCHSIZE: a batch waits until it has at least this many rows (0: it runs with whatever
  /// is queued). Needs batch_size > 0 and must not exceed it.
  std::int64_t min_batch_size = 0;
  /// MINBATCHTIMEOUT: the longest wait for min_batch_size rows, after which the batch runs with
  /// what it has (0: no limit). Needs min_batch_size > 0.
  std::chrono::milliseconds min_batch_timeout{0};
  /// TAG: arbitrary bytes kept with the model (e.g. a version string); empty: none.
  std::string tag;
  /// KEEP (slipstream): how many of the versions before this one stay loaded so that callers
  /// can pin them (ModelVersion::pin), at most 64; 0: none. Not kept across a server restart.
  std::int64_t keep_versions = 0;
  /// INPUTS / OUTPUTS: names of the model's tensors. TorchScript models do not need them; when
  /// given they are stored and reported by AI.MODELGET META.
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
};

/// Run statistics of a stored model or script (AI.INFO). Times are in microseconds and add up
/// over every run since the model was stored or its statistics were reset. In cluster mode every
/// shard runs its own copy: the counters and times are the sums over the shards, `version` the
/// highest.
struct ModelInfo {
  std::string key;      ///< the key as stored (with any prefix)
  std::string type;     ///< "MODEL" or "SCRIPT"
  std::string backend;  ///< "TORCH"
  std::string device;   ///< as given when stored ("CPU", "GPU:0", ...)
  std::string tag;
  std::int64_t calls = 0;    ///< executions requested (one per caller)
  std::int64_t samples = 0;  ///< rows (dimension 0) processed; -1 for a script
  std::int64_t errors = 0;   ///< executions that failed
  std::int64_t duration_us = 0;  ///< RedisAI's "duration": total run time
  std::int64_t version = 0;  ///< 1 for the first store, +1 for each replacement
  std::int64_t runs = 0;     ///< backend runs (a batch serving several callers counts once)
  std::int64_t batches = 0;  ///< runs that served more than one caller
  double mean_batch_size = 0;    ///< callers per batch, over those runs (0 if none)
  std::int64_t queue_wait_us = 0;  ///< time executions spent queued before running
  std::int64_t run_time_us = 0;    ///< time spent in the backend
};

/// Wait time meaning "no limit" for wait_for_keys.
inline constexpr std::chrono::milliseconds kWaitForever = std::chrono::milliseconds::max();

/// A connection to one Slipstream (or Redis-compatible) server, or to every shard of a cluster
/// (ClientOptions::cluster; see docs/deployment.md): in cluster mode each request goes to the
/// shard owning its keys' hash slot, batches are split by shard, models and scripts stored
/// through command() go to every shard, and a shard that cannot be reached fails only the calls
/// that need it, with a ConnectionError naming it and its slots.
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
/// (`SSKEYOUT.` on writes, `<data source>.` on reads); model and script names only after
/// use_model_ensemble_prefix(true); the raw-key methods (key_exists, poll_key, wait_for_keys,
/// put_bytes, get_bytes, command) do not.
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
  /// As put_tensor, compressed by `compression` on this client's core before it is sent (over
  /// the socket, never shared memory). The server stores the compressed bytes; every reader gets
  /// the elements: this client (get_tensor, unpack_tensor, get_tensors) fetches the compressed
  /// bytes and decodes them itself, and the server decodes them for others (RedisAI and
  /// SmartRedis clients, shared-memory views, model and script inputs). zfp is lossy within its
  /// bound, the others exact (docs/clients.md, "Compressed tensors"). Throws InvalidArgumentError
  /// for an unknown operator or parameter, or one that does not fit the tensor (zfp on integers).
  void put_tensor(std::string_view name, DType dtype, const void* data, std::size_t bytes,
                  std::span<const std::int64_t> shape, MemoryOrder order,
                  const CompressionOperator& compression);

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

  // ---- Models and scripts --------------------------------------------------------------------
  //
  // Key names: models and scripts get the ensemble prefixes only after
  // use_model_ensemble_prefix(true) (the write prefix when storing, the data source otherwise),
  // as SmartRedis does. Tensor names given to run_model / run_script follow the tensor prefix
  // setting: inputs get the data source prefix, outputs the write prefix.
  //
  // Errors: a missing model or script, and a missing input tensor, throw KeyNotFoundError (its
  // message quotes the server); a key of another kind throws WrongTypeError; anything the server or
  // its backend refuses (a bad model blob, inputs the model rejects, an unknown script function)
  // throws ServerError whose server_text() is the server's reply, quoting libtorch's message.

  /// Stores a model (AI.MODELSTORE), replacing any model under the name; executions already
  /// running finish on the old version. `model` is the serialised model (for TORCH, a TorchScript
  /// archive as written by torch.jit.save); it is borrowed for the call and sent from the caller's
  /// memory without a copy, split into chunks of model_chunk_size() bytes. Blocks until the server
  /// has loaded the model. `device` is "CPU", "GPU" or "GPU:n". Throws InvalidArgumentError for
  /// empty bytes or inconsistent options (checked before sending), ServerError if the server
  /// cannot load the model (the message quotes the backend's) or cannot use the device.
  void set_model(std::string_view name, std::string_view model, std::string_view backend = "TORCH",
                 std::string_view device = "CPU", const ModelOptions& options = {});
  /// set_model with the bytes of the file at `path`. Throws InvalidArgumentError if the file
  /// cannot be read.
  void set_model_from_file(std::string_view name, const std::string& path,
                           std::string_view backend = "TORCH", std::string_view device = "CPU",
                           const ModelOptions& options = {});
  /// The serialised model exactly as stored (AI.MODELGET BLOB; chunks are joined). Throws
  /// KeyNotFoundError if there is no model under the name.
  std::string get_model(std::string_view name);
  /// Deletes a model (AI.MODELDEL). Returns false if there was no model under the name.
  bool delete_model(std::string_view name);
  /// True if a key of that name exists (EXISTS; a model or anything else).
  bool model_exists(std::string_view name);

  /// Runs a stored model (AI.MODELEXECUTE) on the tensors named `inputs`, storing its results
  /// under the names `outputs` (all of them or, on failure, none). Blocks until the run is done.
  /// `timeout` > 0 is sent as TIMEOUT: if the run has not started within it (e.g. queued behind
  /// other runs) the server drops it and this throws TimeoutError; unlike a connection timeout,
  /// the connection stays open. Zero: no limit. Throws KeyNotFoundError (model or input missing),
  /// ServerError (the model rejected the inputs; the text quotes the backend's message).
  /// `version`, when given: the version to run (pin) and, after the call, the one that ran.
  void run_model(std::string_view name, const std::vector<std::string>& inputs,
                 const std::vector<std::string>& outputs,
                 std::chrono::milliseconds timeout = std::chrono::milliseconds(0),
                 ModelVersion* version = nullptr);
  /// The call a simulation makes every step, in one round trip: stores `inputs` (AI.TENSORSET of
  /// each, named by TensorRef::name), runs the model on them and fetches the tensors named
  /// `outputs`, returned in that order. The inputs are borrowed for the call and sent without a
  /// copy (as put_tensors). Inputs and outputs are this client's own scratch tensors: all of them
  /// are stored under the write prefix (SSKEYOUT) when tensor prefixing is on, and left on the
  /// server afterwards. Throws as put_tensors and run_model; if any step fails, the first error
  /// is thrown and no result is returned (output keys may then hold an earlier step's values).
  /// `version` as for run_model.
  std::vector<Tensor> run_model_on(
      std::string_view name, std::span<const TensorRef> inputs,
      const std::vector<std::string>& outputs,
      std::chrono::milliseconds timeout = std::chrono::milliseconds(0),
      ModelVersion* version = nullptr);

  /// The chunk size set_model splits blobs into: the server's MODEL_CHUNK_SIZE (AI.CONFIG GET),
  /// asked once per Client and cached (a server that cannot answer counts as RedisAI's default,
  /// 511 MiB). Any chunk size works with any server; it only bounds the size of one argument.
  std::int64_t model_chunk_size();
  /// Sets the server's MODEL_CHUNK_SIZE (AI.CONFIG MODEL_CHUNK_SIZE, which applies to every
  /// client) and this client's cached value. Throws InvalidArgumentError if `bytes` < 1.
  void set_model_chunk_size(std::int64_t bytes);

  /// Compiles and stores a TorchScript script. With no `entry_points` it is sent as AI.SCRIPTSET
  /// (the form SmartRedis sends; run it with the 4-argument run_script), otherwise as
  /// AI.SCRIPTSTORE with those entry points, each of which must be a function
  /// f(tensors: List[Tensor], keys: List[str], args: List[str]) (run it with the 6-argument
  /// run_script). Replaces any script under the name. Throws ServerError with the compiler's
  /// message if the source does not compile or an entry point is missing.
  void set_script(std::string_view name, std::string_view device, std::string_view source,
                  const std::vector<std::string>& entry_points = {});
  /// set_script with the text of the file at `path`. Throws InvalidArgumentError if the file
  /// cannot be read.
  void set_script_from_file(std::string_view name, std::string_view device, const std::string& path,
                            const std::vector<std::string>& entry_points = {});
  /// The source of a stored script (AI.SCRIPTGET SOURCE). Throws KeyNotFoundError if missing.
  std::string get_script(std::string_view name);
  /// Calls `function` of a script with the input tensors as positional arguments and stores its
  /// results under `outputs` (AI.SCRIPTRUN, all or none). Timeout and errors as run_model; an
  /// unknown function throws ServerError.
  void run_script(std::string_view name, std::string_view function,
                  const std::vector<std::string>& inputs, const std::vector<std::string>& outputs,
                  std::chrono::milliseconds timeout = std::chrono::milliseconds(0));
  /// Calls an entry point as function(tensors, keys, args) (AI.SCRIPTEXECUTE): `inputs` are
  /// tensor names (prefixed as in run_model), `keys` are passed as raw strings (no prefix) and
  /// `args` as strings. Stores the results under `outputs`, all or none. Timeout and errors as
  /// run_model.
  void run_script(std::string_view name, std::string_view function,
                  const std::vector<std::string>& keys, const std::vector<std::string>& inputs,
                  const std::vector<std::string>& args, const std::vector<std::string>& outputs,
                  std::chrono::milliseconds timeout = std::chrono::milliseconds(0));
  /// Deletes a script (AI.SCRIPTDEL). Returns false if there was no script under the name.
  bool delete_script(std::string_view name);

  /// Run statistics of a model or script (AI.INFO; in cluster mode summed over the shards).
  /// Throws KeyNotFoundError if there is neither under the name.
  ModelInfo model_info(std::string_view name);
  /// Zeroes the run statistics of a model or script (AI.INFO RESETSTAT); the version is kept.
  /// Throws KeyNotFoundError if there is neither under the name.
  void reset_model_stats(std::string_view name);

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

  /// The connection machinery, opaque outside the library (stream writers and readers own one
  /// each: the server binds their ranks to their connections).
  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace slipstream
