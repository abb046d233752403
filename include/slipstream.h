/* The Slipstream C API: a C99 interface to the native client (libslipstream_c over libslipstream).
 *
 * Conventions (they hold for every function below unless its comment says otherwise):
 *
 * Status: every function returns a slipstream_status_t. SLIPSTREAM_OK (0) is success; the other
 *   values are the codes of slipstream::ErrorCode (include/slipstream/error.hpp) with the same
 *   numbers, plus SLIPSTREAM_CLIENT_OUT_OF_MEMORY and SLIPSTREAM_INTERNAL_ERROR, which only the C
 *   API returns. No C++ exception ever crosses this interface. The only functions that do not
 *   return a status are the pure helpers slipstream_last_error, slipstream_status_name,
 *   slipstream_dtype_size and slipstream_free.
 * Last error: when a function fails, slipstream_last_error() gives a message saying what was
 *   wrong (key, address, expected vs. actual). The message is kept per thread; every call clears
 *   it on entry (except slipstream_tensor_destroy), so the pointer is valid until the next call
 *   to this API on the same thread.
 * Outputs: on failure, output arguments are left as they were, except where a comment says
 *   otherwise (BUFFER_TOO_SMALL reports the size needed; an unpack may have partly written the
 *   buffer).
 * Strings: every string argument is a pointer plus a length in bytes, so names and values may
 *   hold any bytes (no NUL terminator is needed). A length of SLIPSTREAM_NTS means "NUL-terminated:
 *   use strlen". A NULL pointer is allowed only with length 0 (or SLIPSTREAM_NTS) and is the empty
 *   string. A list of strings is an array of pointers plus an array of lengths; the lengths array
 *   may be NULL, meaning every string is NUL-terminated.
 * Ownership: the caller keeps ownership of every buffer it passes (they are borrowed for the
 *   call only). Handles and strings the library returns are owned by the caller and released with
 *   the matching *_destroy function or slipstream_free; the comment of each function says which.
 *   Returned strings are allocated with malloc, NUL-terminated for convenience (the terminator is
 *   not counted in the length), and must be released with slipstream_free. Borrowed results (a
 *   tensor inside a dataset, a client's address) are marked "borrowed" and say how long they live.
 * Shapes: int64_t arrays of `rank` dimensions, each > 0. Rank 0 is a scalar.
 * Memory order: SLIPSTREAM_C_ORDER (row-major) or SLIPSTREAM_FORTRAN_ORDER (column-major) says
 *   how the caller's buffer is laid out. The logical shape is the same in every language: a
 *   Fortran array a(nx, ny), passed with shape {nx, ny} and SLIPSTREAM_FORTRAN_ORDER, is read by C,
 *   C++ or Python as shape {nx, ny} with [i][j] == a(i+1, j+1). Tensors are stored row-major;
 *   a Fortran-order buffer is transposed on the way in and out.
 * Flags: boolean results are `int` (0 or 1); boolean arguments are `int` (0 false, else true).
 * Thread-safety: that of the C++ client (slipstream::Client): a client handle may be used by any
 *   number of threads, whose calls are serialised on its one connection. Dataset and tensor handles
 *   are not synchronised: do not modify one while another thread uses it.
 * Blocking: every client call blocks until the reply has arrived or a timeout expires.
 * Key prefixes: tensor, dataset and list names get the ensemble prefixes (SSKEYOUT on writes,
 *   the data source from SSKEYIN on reads) exactly as in the C++ client; see
 *   slipstream_use_tensor_ensemble_prefix and friends.
 */
#ifndef SLIPSTREAM_H_
#define SLIPSTREAM_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define SLIPSTREAM_C_API __attribute__((visibility("default")))
#else
#define SLIPSTREAM_C_API
#endif

/** Length meaning "the string is NUL-terminated". */
#define SLIPSTREAM_NTS ((size_t)-1)

/* ---- Status codes, element types, memory orders --------------------------------------------- */

typedef enum slipstream_status {
  SLIPSTREAM_OK = 0,
  SLIPSTREAM_CONNECTION_ERROR = 1, /**< cannot connect, or the connection broke mid-request */
  SLIPSTREAM_TIMEOUT_ERROR = 2,    /**< connect, command or model-run timeout expired */
  SLIPSTREAM_PROTOCOL_ERROR = 3,   /**< the server sent something that is not the expected reply */
  SLIPSTREAM_SERVER_ERROR = 4,     /**< the server replied with another error */
  SLIPSTREAM_KEY_NOT_FOUND = 5,    /**< the tensor, dataset, list, model, field or key is missing */
  SLIPSTREAM_WRONG_TYPE = 6,       /**< the key holds another kind of value */
  SLIPSTREAM_INVALID_ARGUMENT = 7, /**< a bad argument (shape, dtype, NULL handle, address ...) */
  SLIPSTREAM_BUFFER_TOO_SMALL = 8, /**< the caller's buffer cannot hold the result */
  SLIPSTREAM_OUT_OF_MEMORY = 9,    /**< the server is over its memory limit */
  SLIPSTREAM_AUTH_ERROR = 10,      /**< wrong password, or a password is required */
  SLIPSTREAM_BACKEND_ERROR = 11,   /**< the in-process model backend failed */
  SLIPSTREAM_STEP_ABORTED = 12,    /**< slipstream_stream_end_step: the step was aborted instead */
  SLIPSTREAM_CLIENT_OUT_OF_MEMORY = 100, /**< this process could not allocate memory */
  SLIPSTREAM_INTERNAL_ERROR = 101        /**< an unexpected failure inside the library (a bug) */
} slipstream_status_t;

/** Element types; the values match slipstream::DType. */
enum slipstream_dtype {
  SLIPSTREAM_FLOAT32 = 0,
  SLIPSTREAM_FLOAT64 = 1,
  SLIPSTREAM_INT8 = 2,
  SLIPSTREAM_INT16 = 3,
  SLIPSTREAM_INT32 = 4,
  SLIPSTREAM_INT64 = 5,
  SLIPSTREAM_UINT8 = 6,
  SLIPSTREAM_UINT16 = 7,
  SLIPSTREAM_BOOL = 8, /**< one byte per element, 0 or 1 */
  SLIPSTREAM_UINT32 = 9, /**< Slipstream's own (RedisAI has none); models cannot take it */
  SLIPSTREAM_UINT64 = 10
};
/** An element type: one of the SLIPSTREAM_* values above. An integer, not the enum, so that any
 *  value a caller passes is well defined (an unknown one is SLIPSTREAM_INVALID_ARGUMENT). */
typedef int32_t slipstream_dtype_t;

/** Layout of a caller's buffer; see "Memory order" above. */
enum slipstream_memory_order {
  SLIPSTREAM_C_ORDER = 0,
  SLIPSTREAM_FORTRAN_ORDER = 1
};
/** A memory order: one of the values above (an integer, as slipstream_dtype_t). */
typedef int32_t slipstream_memory_order_t;

/** Types of dataset metadata fields; the values are SmartRedis's type bytes. */
typedef enum slipstream_meta_type {
  SLIPSTREAM_META_DOUBLE = 1,
  SLIPSTREAM_META_FLOAT = 2,
  SLIPSTREAM_META_INT32 = 3,
  SLIPSTREAM_META_INT64 = 4,
  SLIPSTREAM_META_UINT32 = 5,
  SLIPSTREAM_META_UINT64 = 6,
  SLIPSTREAM_META_STRING = 7
} slipstream_meta_type_t;

/** Kinds of a generic command's reply; the values match slipstream::Reply::Kind. */
typedef enum slipstream_reply_kind {
  SLIPSTREAM_REPLY_NIL = 0,
  SLIPSTREAM_REPLY_STRING = 1,
  SLIPSTREAM_REPLY_STATUS = 2,
  SLIPSTREAM_REPLY_ERROR = 3,
  SLIPSTREAM_REPLY_INTEGER = 4,
  SLIPSTREAM_REPLY_ARRAY = 5,
  SLIPSTREAM_REPLY_DOUBLE = 6,
  SLIPSTREAM_REPLY_BOOL = 7,
  SLIPSTREAM_REPLY_BIG_NUMBER = 8,
  SLIPSTREAM_REPLY_MAP = 9,
  SLIPSTREAM_REPLY_SET = 10,
  SLIPSTREAM_REPLY_PUSH = 11
} slipstream_reply_kind_t;

/* ---- Opaque handles -------------------------------------------------------------------------- */

/** A connection to a server (slipstream::Client). */
typedef struct slipstream_client slipstream_client_t;
/** A dataset: named tensors plus metadata (slipstream::DataSet). */
typedef struct slipstream_dataset slipstream_dataset_t;
/** A tensor that owns its row-major bytes (slipstream::Tensor). */
typedef struct slipstream_tensor slipstream_tensor_t;
/** The reply of a generic command (slipstream::Reply). */
typedef struct slipstream_reply slipstream_reply_t;
/** A writable region to fill and store as a tensor without a copy (slipstream::TensorLoan). */
typedef struct slipstream_loan slipstream_loan_t;
/** A read-only view of a stored tensor's bytes (slipstream::TensorView). */
typedef struct slipstream_view slipstream_view_t;

/* ---- Errors and helpers ---------------------------------------------------------------------- */

/** The message of this thread's last failed call, or "" if the last call succeeded. Never NULL;
 *  valid until the next call to this API on this thread. */
SLIPSTREAM_C_API const char* slipstream_last_error(void);
/** A short stable name for a status ("ok", "key not found", ...). Never NULL; static storage. */
SLIPSTREAM_C_API const char* slipstream_status_name(slipstream_status_t status);
/** Bytes per element of a dtype; 0 for a value that is not a dtype. */
SLIPSTREAM_C_API size_t slipstream_dtype_size(slipstream_dtype_t dtype);
/** Releases a string or array the library allocated. NULL is allowed. */
SLIPSTREAM_C_API void slipstream_free(void* pointer);

/* ---- Clients --------------------------------------------------------------------------------- */

/** How a client connects; initialise with slipstream_client_options_init, then set fields. */
typedef struct slipstream_client_options {
  /** `tcp://host:port`, `unix:///path` or `host:port`. NULL: SLIPSTREAM_ADDRESS, then SSDB. */
  const char* address;
  size_t address_length;
  /** Sent with AUTH after connecting. NULL: SLIPSTREAM_PASSWORD if set, else no AUTH. */
  const char* password;
  size_t password_length;
  /** Longest wait to connect, in ms; <= 0: the default (5000). */
  int64_t connect_timeout_ms;
  /** Longest wait with no bytes moving, in ms; 0: forever; < 0: the default (60000). */
  int64_t command_timeout_ms;
  /** Ensemble write prefix. NULL: SSKEYOUT. */
  const char* key_prefix_out;
  size_t key_prefix_out_length;
  /** Comma-separated ensemble read prefixes; the first is the data source. NULL: SSKEYIN. */
  const char* key_prefixes_in;
  size_t key_prefixes_in_length;
} slipstream_client_options_t;

/** Sets every field of `options` to its default (NULL strings, default timeouts). */
SLIPSTREAM_C_API slipstream_status_t
slipstream_client_options_init(slipstream_client_options_t* options);

/** Connects to `address` (NULL or empty: SLIPSTREAM_ADDRESS, then SSDB) with the default options
 *  and stores a new client in *client (destroy it with slipstream_client_destroy). Fails with
 *  INVALID_ARGUMENT (bad address), CONNECTION_ERROR, TIMEOUT_ERROR or AUTH_ERROR. */
SLIPSTREAM_C_API slipstream_status_t slipstream_client_create(const char* address,
                                                              size_t address_length,
                                                              slipstream_client_t** client);
/** Connects with explicit options (NULL: all defaults). Errors as slipstream_client_create. */
SLIPSTREAM_C_API slipstream_status_t slipstream_client_create_with_options(
    const slipstream_client_options_t* options, slipstream_client_t** client);
/** Closes the connection, frees *client and sets it to NULL. NULL or *client == NULL is a no-op.
 *  Always returns SLIPSTREAM_OK. */
SLIPSTREAM_C_API slipstream_status_t slipstream_client_destroy(slipstream_client_t** client);
/** The normalised address connected to (borrowed: valid while the client lives). */
SLIPSTREAM_C_API slipstream_status_t slipstream_client_address(const slipstream_client_t* client,
                                                               const char** address,
                                                               size_t* length);

/* ---- Tensors --------------------------------------------------------------------------------- */

/** Stores a tensor, replacing any value under the name. `data` holds product(shape) elements of
 *  `dtype` laid out in `order`. */
SLIPSTREAM_C_API slipstream_status_t slipstream_put_tensor(slipstream_client_t* client,
                                                           const char* name, size_t name_length,
                                                           const void* data, const int64_t* shape,
                                                           size_t rank, slipstream_dtype_t dtype,
                                                           slipstream_memory_order_t order);

/** As slipstream_put_tensor, compressed on this client by the operator `type` ("zstd", "blosc",
 *  "bzip2", or "zfp" for FLOAT and DOUBLE) with `parameters` as "name=value,name=value" (NULL or
 *  empty: the operator's defaults; the names as for streams: level, clevel, doshuffle,
 *  compressor, blockSize100k, accuracy, precision, rate). The server stores the compressed bytes;
 *  every reader gets the elements (docs/clients.md, "Compressed tensors"). `type` NULL: stored
 *  raw, as slipstream_put_tensor. INVALID_ARGUMENT for an unknown operator or parameter, or one
 *  that does not fit the dtype. */
SLIPSTREAM_C_API slipstream_status_t slipstream_put_tensor_compressed(
    slipstream_client_t* client, const char* name, size_t name_length, const void* data,
    const int64_t* shape, size_t rank, slipstream_dtype_t dtype, slipstream_memory_order_t order,
    const char* type, size_t type_length, const char* parameters, size_t parameters_length);

/** Fetches a tensor into the caller's buffer of `buffer_bytes` bytes, laid out in `order`.
 *  `dtype` must be the stored dtype (else INVALID_ARGUMENT naming both). If `expected_rank` > 0,
 *  `expected_shape` must equal the stored shape (else INVALID_ARGUMENT). A buffer smaller than
 *  the tensor gives BUFFER_TOO_SMALL; a larger one is allowed and its tail left untouched.
 *  KEY_NOT_FOUND if there is no such tensor. */
SLIPSTREAM_C_API slipstream_status_t slipstream_unpack_tensor(
    slipstream_client_t* client, const char* name, size_t name_length, void* buffer,
    size_t buffer_bytes, const int64_t* expected_shape, size_t expected_rank,
    slipstream_dtype_t dtype, slipstream_memory_order_t order);

/** Fetches a tensor into a new library-owned tensor, stored in *tensor (destroy it with
 *  slipstream_tensor_destroy). KEY_NOT_FOUND if there is none. */
SLIPSTREAM_C_API slipstream_status_t slipstream_get_tensor(slipstream_client_t* client,
                                                           const char* name, size_t name_length,
                                                           slipstream_tensor_t** tensor);

/** Deletes a tensor; *existed (may be NULL) says whether it existed. */
SLIPSTREAM_C_API slipstream_status_t slipstream_delete_tensor(slipstream_client_t* client,
                                                              const char* name, size_t name_length,
                                                              int* existed);
/** *exists = whether a key of that (read-prefixed) name exists. */
SLIPSTREAM_C_API slipstream_status_t slipstream_tensor_exists(slipstream_client_t* client,
                                                              const char* name, size_t name_length,
                                                              int* exists);
/** Renames a tensor (the new name gets the write prefix). KEY_NOT_FOUND if it does not exist. */
SLIPSTREAM_C_API slipstream_status_t slipstream_rename_tensor(slipstream_client_t* client,
                                                              const char* old_name,
                                                              size_t old_name_length,
                                                              const char* new_name,
                                                              size_t new_name_length);
/** Copies a tensor server-side. KEY_NOT_FOUND if the source does not exist. */
SLIPSTREAM_C_API slipstream_status_t slipstream_copy_tensor(slipstream_client_t* client,
                                                            const char* source,
                                                            size_t source_length,
                                                            const char* destination,
                                                            size_t destination_length);
/** Waits up to poll_ms * tries ms for the tensor to exist; *exists says whether it does. */
SLIPSTREAM_C_API slipstream_status_t slipstream_poll_tensor(slipstream_client_t* client,
                                                            const char* name, size_t name_length,
                                                            int poll_ms, int tries, int* exists);

/** A borrowed tensor for slipstream_put_tensors and slipstream_run_model_on. */
typedef struct slipstream_tensor_ref {
  const char* name;
  size_t name_length;
  const void* data;
  const int64_t* shape;
  size_t rank;
  slipstream_dtype_t dtype;
  slipstream_memory_order_t order;
} slipstream_tensor_ref_t;

/** Stores `count` tensors in one round trip. All are sent; if some fail, the first error is
 *  returned after every reply has been read (the others are stored). */
SLIPSTREAM_C_API slipstream_status_t slipstream_put_tensors(slipstream_client_t* client,
                                                            const slipstream_tensor_ref_t* tensors,
                                                            size_t count);
/** Fetches `count` tensors in one round trip into tensors[0..count) (destroy each). On failure
 *  no handle is stored. */
SLIPSTREAM_C_API slipstream_status_t slipstream_get_tensors(slipstream_client_t* client,
                                                            const char* const* names,
                                                            const size_t* name_lengths,
                                                            size_t count,
                                                            slipstream_tensor_t** tensors);

/* ---- Library-owned tensors ------------------------------------------------------------------- */

/** Frees *tensor and sets it to NULL. NULL or *tensor == NULL is a no-op. Do not destroy a
 *  tensor borrowed from a dataset. Unlike every other call it leaves the last error as it was,
 *  so that cleaning up after a failure keeps its message. */
SLIPSTREAM_C_API slipstream_status_t slipstream_tensor_destroy(slipstream_tensor_t** tensor);
SLIPSTREAM_C_API slipstream_status_t slipstream_tensor_dtype(const slipstream_tensor_t* tensor,
                                                             slipstream_dtype_t* dtype);
/** The shape (borrowed: valid while the tensor lives) and its rank. */
SLIPSTREAM_C_API slipstream_status_t slipstream_tensor_shape(const slipstream_tensor_t* tensor,
                                                             const int64_t** shape, size_t* rank);
/** The row-major elements (borrowed: valid while the tensor lives) and their size in bytes. */
SLIPSTREAM_C_API slipstream_status_t slipstream_tensor_data(const slipstream_tensor_t* tensor,
                                                            const void** data, size_t* bytes);
/** Copies the elements into a caller buffer in `order`. INVALID_ARGUMENT if `dtype` is not the
 *  tensor's, BUFFER_TOO_SMALL if `buffer_bytes` is smaller than the tensor. */
SLIPSTREAM_C_API slipstream_status_t slipstream_tensor_copy_to(const slipstream_tensor_t* tensor,
                                                               void* buffer, size_t buffer_bytes,
                                                               slipstream_dtype_t dtype,
                                                               slipstream_memory_order_t order);
/** slipstream_tensor_copy_to that also checks the shape: with expected_rank > 0,
 *  INVALID_ARGUMENT (giving both shapes) unless the tensor's shape equals expected_shape. For
 *  results unpacked into arrays of a known shape (slipstream_run_model_on's, say). */
SLIPSTREAM_C_API slipstream_status_t slipstream_tensor_copy_to_shape(
    const slipstream_tensor_t* tensor, void* buffer, size_t buffer_bytes,
    const int64_t* expected_shape, size_t expected_rank, slipstream_dtype_t dtype,
    slipstream_memory_order_t order);

/* ---- Shared memory: loans, views, statistics ------------------------------------------------- */
/* A client connected through the server's Unix socket (`unix:///path`, the server with shared
 * memory on) moves tensor bytes through shared memory; these calls expose it (docs/clients.md,
 * "Shared memory"). Without the fast path (TCP, the server's pool full, SLIPSTREAM_SHM=off) a
 * loan is private memory sent on the socket at the put and a view holds a private copy received
 * on the socket, so code using them works everywhere; slipstream_client_stats says which path was
 * taken. Loans and views are row-major (C order): there is no memory-order argument. */

/** A region of `bytes` (> 0) bytes to fill with a tensor's row-major elements and then store with
 *  slipstream_put_tensor_loan, without a copy; stored in *loan (release an uncommitted loan with
 *  slipstream_loan_destroy). INVALID_ARGUMENT for 0 bytes, OUT_OF_MEMORY when the server is over
 *  its memory limit. A loan is not synchronised (fill it from one thread at a time) and may
 *  outlive its client, but can then only be destroyed. */
SLIPSTREAM_C_API slipstream_status_t slipstream_loan(slipstream_client_t* client, size_t bytes,
                                                     slipstream_loan_t** loan);
/** Gives an uncommitted loan back, frees *loan and sets it to NULL. NULL or *loan == NULL is a
 *  no-op. The region's pointer is invalid afterwards. */
SLIPSTREAM_C_API slipstream_status_t slipstream_loan_destroy(slipstream_loan_t** loan);
/** The writable region (borrowed: valid until the loan is committed or destroyed) and its size in
 *  bytes (`bytes` may be NULL). */
SLIPSTREAM_C_API slipstream_status_t slipstream_loan_data(const slipstream_loan_t* loan,
                                                          void** data, size_t* bytes);
/** *shared = 1 when the region is the server's shared memory (the put will not copy it), 0 when
 *  it is private memory (no fast path, or the server's pool was full). */
SLIPSTREAM_C_API slipstream_status_t slipstream_loan_shared(const slipstream_loan_t* loan,
                                                            int* shared);
/** Stores the filled loan as tensor `name` of `dtype` and `shape`, replacing any value, and
 *  CONSUMES the loan whatever the result: *loan is freed and set to NULL, and the region's
 *  pointer is invalid, on success and on every error (except a NULL `loan` or *loan, which are
 *  INVALID_ARGUMENT with nothing consumed). A shared loan is sealed by the server (nobody, this
 *  process included, can change it afterwards) and becomes the stored tensor without a copy; a
 *  private one is sent on the socket. INVALID_ARGUMENT when the loan's size is not
 *  product(shape) * dtype size, for a bad shape, dtype or name; errors as slipstream_put_tensor. */
SLIPSTREAM_C_API slipstream_status_t slipstream_put_tensor_loan(
    slipstream_client_t* client, const char* name, size_t name_length, slipstream_loan_t** loan,
    const int64_t* shape, size_t rank, slipstream_dtype_t dtype);

/** A read-only view of a stored tensor, stored in *view (destroy it with
 *  slipstream_view_destroy): with the fast path, the server's copy itself mapped read-only (no
 *  byte copied); otherwise a private copy received on the socket. The bytes stay exactly as they
 *  were when viewed until the view is destroyed, even if the key is overwritten or deleted
 *  meanwhile. KEY_NOT_FOUND, WRONG_TYPE. A view may be read by any number of threads and
 *  outlives its client. */
SLIPSTREAM_C_API slipstream_status_t slipstream_view_tensor(slipstream_client_t* client,
                                                            const char* name, size_t name_length,
                                                            slipstream_view_t** view);
/** Gives the view's bytes back (the server may then free them), frees *view and sets it to NULL.
 *  NULL or *view == NULL is a no-op. Pointers from the view are invalid afterwards. */
SLIPSTREAM_C_API slipstream_status_t slipstream_view_destroy(slipstream_view_t** view);
SLIPSTREAM_C_API slipstream_status_t slipstream_view_dtype(const slipstream_view_t* view,
                                                           slipstream_dtype_t* dtype);
/** The shape (borrowed: valid while the view lives) and its rank. */
SLIPSTREAM_C_API slipstream_status_t slipstream_view_shape(const slipstream_view_t* view,
                                                           const int64_t** shape, size_t* rank);
/** The row-major elements (borrowed, READ-ONLY: a write through shared memory faults; valid
 *  while the view lives) and their size in bytes (`bytes` may be NULL). `dtype` must be the
 *  view's dtype and, if `expected_rank` > 0, the view must have that rank (INVALID_ARGUMENT
 *  naming both otherwise), so that the bytes are read as what they are. */
SLIPSTREAM_C_API slipstream_status_t slipstream_view_data(const slipstream_view_t* view,
                                                          slipstream_dtype_t dtype,
                                                          size_t expected_rank, const void** data,
                                                          size_t* bytes);
/** *shared = 1 when the view maps the server's shared memory (no copy was made), else 0. */
SLIPSTREAM_C_API slipstream_status_t slipstream_view_shared(const slipstream_view_t* view,
                                                            int* shared);

/** Which path a client's tensor operations took (slipstream::ClientStats): counts since the
 *  client was created. */
typedef struct slipstream_client_stats {
  int shared_memory;      /**< 1 if the current connection has the fast path */
  uint64_t shm_puts;      /**< puts through shared memory (one copy, or none for a loan) */
  uint64_t shm_loan_puts; /**< of shm_puts: loans committed without a copy */
  uint64_t shm_gets;      /**< get / unpack through shared memory (one copy) */
  uint64_t shm_views;     /**< views through shared memory (no copy) */
  uint64_t socket_puts;   /**< tensors sent on the socket (private loans included) */
  uint64_t socket_gets;   /**< tensors received on the socket (views included) */
  uint64_t fallbacks;     /**< wanted shared memory but used the socket (the pool was full) */
} slipstream_client_stats_t;

/** Fills *stats with the client's counts. */
SLIPSTREAM_C_API slipstream_status_t slipstream_client_stats(const slipstream_client_t* client,
                                                             slipstream_client_stats_t* stats);

/* ---- Raw keys -------------------------------------------------------------------------------- */
/* These never get ensemble prefixes. */

SLIPSTREAM_C_API slipstream_status_t slipstream_key_exists(slipstream_client_t* client,
                                                           const char* key, size_t key_length,
                                                           int* exists);
SLIPSTREAM_C_API slipstream_status_t slipstream_poll_key(slipstream_client_t* client,
                                                         const char* key, size_t key_length,
                                                         int poll_ms, int tries, int* exists);
/** Waits until every key exists. timeout_ms 0 checks once, < 0 waits forever. *all_exist says
 *  whether they all exist (0 if the timeout expired first). */
SLIPSTREAM_C_API slipstream_status_t slipstream_wait_for_keys(slipstream_client_t* client,
                                                              const char* const* keys,
                                                              const size_t* key_lengths,
                                                              size_t count, int64_t timeout_ms,
                                                              int* all_exist);
/** SET of a plain byte string. */
SLIPSTREAM_C_API slipstream_status_t slipstream_put_bytes(slipstream_client_t* client,
                                                          const char* key, size_t key_length,
                                                          const char* bytes, size_t length);
/** GET of a plain byte string into *bytes (free with slipstream_free). KEY_NOT_FOUND if missing. */
SLIPSTREAM_C_API slipstream_status_t slipstream_get_bytes(slipstream_client_t* client,
                                                          const char* key, size_t key_length,
                                                          char** bytes, size_t* length);
SLIPSTREAM_C_API slipstream_status_t slipstream_delete_bytes(slipstream_client_t* client,
                                                             const char* key, size_t key_length,
                                                             int* existed);

/* ---- Datasets -------------------------------------------------------------------------------- */

/** A new empty dataset (destroy it with slipstream_dataset_destroy). INVALID_ARGUMENT if the
 *  name is empty. */
SLIPSTREAM_C_API slipstream_status_t slipstream_dataset_create(const char* name, size_t name_length,
                                                               slipstream_dataset_t** dataset);
/** Frees *dataset and sets it to NULL. NULL or *dataset == NULL is a no-op. */
SLIPSTREAM_C_API slipstream_status_t slipstream_dataset_destroy(slipstream_dataset_t** dataset);
/** The dataset's name (borrowed: valid while the dataset lives). */
SLIPSTREAM_C_API slipstream_status_t slipstream_dataset_name(const slipstream_dataset_t* dataset,
                                                             const char** name, size_t* length);

/** Adds a copy of a tensor laid out in `order`. INVALID_ARGUMENT if the name is empty or used. */
SLIPSTREAM_C_API slipstream_status_t slipstream_dataset_add_tensor(
    slipstream_dataset_t* dataset, const char* name, size_t name_length, const void* data,
    const int64_t* shape, size_t rank, slipstream_dtype_t dtype, slipstream_memory_order_t order);
/** The named tensor (borrowed: valid until the dataset is modified or destroyed; do not destroy
 *  it). KEY_NOT_FOUND if there is none. */
SLIPSTREAM_C_API slipstream_status_t
slipstream_dataset_get_tensor(const slipstream_dataset_t* dataset, const char* name,
                              size_t name_length, const slipstream_tensor_t** tensor);
/** Copies a tensor into a caller buffer; errors as slipstream_unpack_tensor (KEY_NOT_FOUND,
 *  INVALID_ARGUMENT for another dtype or, with expected_rank > 0, another shape,
 *  BUFFER_TOO_SMALL). */
SLIPSTREAM_C_API slipstream_status_t slipstream_dataset_unpack_tensor(
    const slipstream_dataset_t* dataset, const char* name, size_t name_length, void* buffer,
    size_t buffer_bytes, const int64_t* expected_shape, size_t expected_rank,
    slipstream_dtype_t dtype, slipstream_memory_order_t order);
SLIPSTREAM_C_API slipstream_status_t slipstream_dataset_has_tensor(
    const slipstream_dataset_t* dataset, const char* name, size_t name_length, int* has);
/** Number of tensors, and the name of tensor `index` (in the order added; free the name with
 *  slipstream_free). INVALID_ARGUMENT if the index is out of range. */
SLIPSTREAM_C_API slipstream_status_t
slipstream_dataset_tensor_count(const slipstream_dataset_t* dataset, size_t* count);
SLIPSTREAM_C_API slipstream_status_t slipstream_dataset_tensor_name(
    const slipstream_dataset_t* dataset, size_t index, char** name, size_t* length);

/** Appends a value to a scalar metadata field, creating it. `value` points to one value of
 *  `type` (double, float, int32_t, int64_t, uint32_t or uint64_t). INVALID_ARGUMENT if the field
 *  holds another type, `type` is SLIPSTREAM_META_STRING, or the name is empty or reserved. */
SLIPSTREAM_C_API slipstream_status_t slipstream_dataset_add_meta_scalar(
    slipstream_dataset_t* dataset, const char* field, size_t field_length, const void* value,
    slipstream_meta_type_t type);
/** Appends a string to a string metadata field. Errors as add_meta_scalar. */
SLIPSTREAM_C_API slipstream_status_t
slipstream_dataset_add_meta_string(slipstream_dataset_t* dataset, const char* field,
                                   size_t field_length, const char* value, size_t value_length);
/** Copies all values of a scalar field into `values` (room for `capacity` values of `type`) and
 *  sets *count to their number. If capacity < the number, returns BUFFER_TOO_SMALL with *count
 *  set and `values` untouched. KEY_NOT_FOUND if the field does not exist, INVALID_ARGUMENT if it
 *  holds another type. */
SLIPSTREAM_C_API slipstream_status_t slipstream_dataset_get_meta_scalars(
    const slipstream_dataset_t* dataset, const char* field, size_t field_length,
    slipstream_meta_type_t type, void* values, size_t capacity, size_t* count);
/** Number of values of a string field, and value `index` (free it with slipstream_free).
 *  KEY_NOT_FOUND / INVALID_ARGUMENT as above, INVALID_ARGUMENT for an index out of range. */
SLIPSTREAM_C_API slipstream_status_t slipstream_dataset_get_meta_string_count(
    const slipstream_dataset_t* dataset, const char* field, size_t field_length, size_t* count);
SLIPSTREAM_C_API slipstream_status_t
slipstream_dataset_get_meta_string(const slipstream_dataset_t* dataset, const char* field,
                                   size_t field_length, size_t index, char** value, size_t* length);
/** Number of user metadata fields and the name of field `index` (in the order added; free it
 *  with slipstream_free). */
SLIPSTREAM_C_API slipstream_status_t
slipstream_dataset_field_count(const slipstream_dataset_t* dataset, size_t* count);
SLIPSTREAM_C_API slipstream_status_t slipstream_dataset_field_name(
    const slipstream_dataset_t* dataset, size_t index, char** name, size_t* length);
SLIPSTREAM_C_API slipstream_status_t slipstream_dataset_has_field(
    const slipstream_dataset_t* dataset, const char* field, size_t field_length, int* has);
/** The type of a field. KEY_NOT_FOUND if it does not exist. */
SLIPSTREAM_C_API slipstream_status_t
slipstream_dataset_field_type(const slipstream_dataset_t* dataset, const char* field,
                              size_t field_length, slipstream_meta_type_t* type);
/** Removes a user field; a missing field is not an error. */
SLIPSTREAM_C_API slipstream_status_t slipstream_dataset_clear_field(slipstream_dataset_t* dataset,
                                                                    const char* field,
                                                                    size_t field_length);

/** Stores a dataset the way SmartRedis does. INVALID_ARGUMENT if it has no tensors and no
 *  fields. */
SLIPSTREAM_C_API slipstream_status_t slipstream_put_dataset(slipstream_client_t* client,
                                                            const slipstream_dataset_t* dataset);
/** Fetches a dataset and its tensors into a new handle in *dataset (destroy it). KEY_NOT_FOUND
 *  if it does not exist. */
SLIPSTREAM_C_API slipstream_status_t slipstream_get_dataset(slipstream_client_t* client,
                                                            const char* name, size_t name_length,
                                                            slipstream_dataset_t** dataset);
/** Deletes the dataset and its tensors. KEY_NOT_FOUND if it does not exist. */
SLIPSTREAM_C_API slipstream_status_t slipstream_delete_dataset(slipstream_client_t* client,
                                                               const char* name,
                                                               size_t name_length);
/** *exists = whether the dataset is completely stored. */
SLIPSTREAM_C_API slipstream_status_t slipstream_dataset_exists(slipstream_client_t* client,
                                                               const char* name, size_t name_length,
                                                               int* exists);
SLIPSTREAM_C_API slipstream_status_t slipstream_poll_dataset(slipstream_client_t* client,
                                                             const char* name, size_t name_length,
                                                             int poll_ms, int tries, int* exists);
SLIPSTREAM_C_API slipstream_status_t slipstream_copy_dataset(slipstream_client_t* client,
                                                             const char* source,
                                                             size_t source_length,
                                                             const char* destination,
                                                             size_t destination_length);
SLIPSTREAM_C_API slipstream_status_t slipstream_rename_dataset(slipstream_client_t* client,
                                                               const char* old_name,
                                                               size_t old_name_length,
                                                               const char* new_name,
                                                               size_t new_name_length);

/* ---- Aggregation lists ----------------------------------------------------------------------- */

/** Appends a reference to the dataset (not the dataset itself) to a list. */
SLIPSTREAM_C_API slipstream_status_t slipstream_append_to_list(slipstream_client_t* client,
                                                               const char* list_name,
                                                               size_t list_name_length,
                                                               const slipstream_dataset_t* dataset);
SLIPSTREAM_C_API slipstream_status_t slipstream_delete_list(slipstream_client_t* client,
                                                            const char* list_name,
                                                            size_t list_name_length);
/** KEY_NOT_FOUND if the source is empty or does not exist. */
SLIPSTREAM_C_API slipstream_status_t slipstream_copy_list(slipstream_client_t* client,
                                                          const char* source, size_t source_length,
                                                          const char* destination,
                                                          size_t destination_length);
SLIPSTREAM_C_API slipstream_status_t slipstream_rename_list(slipstream_client_t* client,
                                                            const char* old_name,
                                                            size_t old_name_length,
                                                            const char* new_name,
                                                            size_t new_name_length);
/** *length = number of entries (0 if the list does not exist). */
SLIPSTREAM_C_API slipstream_status_t slipstream_get_list_length(slipstream_client_t* client,
                                                                const char* list_name,
                                                                size_t list_name_length,
                                                                int64_t* length);
/** Waits up to poll_ms * tries ms until the length is ==, >= or <= `length`; *reached says
 *  whether it was. INVALID_ARGUMENT if `length` is negative. */
SLIPSTREAM_C_API slipstream_status_t slipstream_poll_list_length(slipstream_client_t* client,
                                                                 const char* list_name,
                                                                 size_t list_name_length,
                                                                 int64_t length, int poll_ms,
                                                                 int tries, int* reached);
SLIPSTREAM_C_API slipstream_status_t slipstream_poll_list_length_gte(slipstream_client_t* client,
                                                                     const char* list_name,
                                                                     size_t list_name_length,
                                                                     int64_t length, int poll_ms,
                                                                     int tries, int* reached);
SLIPSTREAM_C_API slipstream_status_t slipstream_poll_list_length_lte(slipstream_client_t* client,
                                                                     const char* list_name,
                                                                     size_t list_name_length,
                                                                     int64_t length, int poll_ms,
                                                                     int tries, int* reached);
/** Every dataset the list references, in list order: *datasets is a new array of *count handles
 *  (NULL when the count is 0). Release it with slipstream_dataset_array_destroy, or take
 *  ownership of each handle (destroy each later) and free the array with slipstream_free. */
SLIPSTREAM_C_API slipstream_status_t slipstream_get_datasets_from_list(
    slipstream_client_t* client, const char* list_name, size_t list_name_length,
    slipstream_dataset_t*** datasets, size_t* count);
/** The datasets at positions [start, end] (inclusive; negative counts from the end). Results as
 *  slipstream_get_datasets_from_list. */
SLIPSTREAM_C_API slipstream_status_t slipstream_get_dataset_list_range(
    slipstream_client_t* client, const char* list_name, size_t list_name_length, int64_t start,
    int64_t end, slipstream_dataset_t*** datasets, size_t* count);
/** Destroys every dataset of an array returned above, frees the array and sets *datasets to
 *  NULL. NULL is a no-op. */
SLIPSTREAM_C_API slipstream_status_t
slipstream_dataset_array_destroy(slipstream_dataset_t*** datasets, size_t count);

/* ---- Models and scripts ---------------------------------------------------------------------- */
/* Model and script names get ensemble prefixes only after slipstream_use_model_ensemble_prefix.
 * A missing model, script or input tensor gives KEY_NOT_FOUND; a model the backend rejects, or
 * inputs it rejects, give SERVER_ERROR with the backend's message. timeout_ms > 0 bounds how long
 * a run may wait to start (TIMEOUT_ERROR, the connection stays open); 0 means no limit. */

/** Options of a stored model (AI.MODELSTORE); NULL wherever accepted means all defaults. */
typedef struct slipstream_model_options {
  int64_t batch_size;           /**< BATCHSIZE; 0: no batching */
  int64_t min_batch_size;       /**< MINBATCHSIZE; 0: none */
  int64_t min_batch_timeout_ms; /**< MINBATCHTIMEOUT; 0: none */
  const char* tag;              /**< TAG; NULL: none */
  size_t tag_length;
  const char* const* inputs; /**< INPUTS names (NULL lengths: NUL-terminated) */
  const size_t* input_lengths;
  size_t input_count;
  const char* const* outputs; /**< OUTPUTS names */
  const size_t* output_lengths;
  size_t output_count;
  int64_t keep_versions; /**< KEEP: earlier versions kept loaded for pinned runs (0-64); 0: none */
} slipstream_model_options_t;

/** Sets every field of `options` to its default (zeros and NULLs). */
SLIPSTREAM_C_API slipstream_status_t
slipstream_model_options_init(slipstream_model_options_t* options);

/** Stores a model (for backend "TORCH", a TorchScript archive) of `model_length` bytes. `backend`
 *  NULL: "TORCH"; `device` NULL: "CPU" ("GPU", "GPU:n"). Blocks until the server has loaded it. */
SLIPSTREAM_C_API slipstream_status_t slipstream_set_model(
    slipstream_client_t* client, const char* name, size_t name_length, const void* model,
    size_t model_length, const char* backend, size_t backend_length, const char* device,
    size_t device_length, const slipstream_model_options_t* options);
/** slipstream_set_model with the bytes of the file at `path`; INVALID_ARGUMENT if unreadable. */
SLIPSTREAM_C_API slipstream_status_t slipstream_set_model_from_file(
    slipstream_client_t* client, const char* name, size_t name_length, const char* path,
    size_t path_length, const char* backend, size_t backend_length, const char* device,
    size_t device_length, const slipstream_model_options_t* options);
/** The stored model bytes in *model (free with slipstream_free). KEY_NOT_FOUND if missing. */
SLIPSTREAM_C_API slipstream_status_t slipstream_get_model(slipstream_client_t* client,
                                                          const char* name, size_t name_length,
                                                          char** model, size_t* length);
SLIPSTREAM_C_API slipstream_status_t slipstream_delete_model(slipstream_client_t* client,
                                                             const char* name, size_t name_length,
                                                             int* existed);
SLIPSTREAM_C_API slipstream_status_t slipstream_model_exists(slipstream_client_t* client,
                                                             const char* name, size_t name_length,
                                                             int* exists);
/** Runs a stored model on the tensors named `inputs`, storing its results under `outputs`. */
SLIPSTREAM_C_API slipstream_status_t slipstream_run_model(
    slipstream_client_t* client, const char* name, size_t name_length, const char* const* inputs,
    const size_t* input_lengths, size_t input_count, const char* const* outputs,
    const size_t* output_lengths, size_t output_count, int64_t timeout_ms);
/** slipstream_run_model running version `version` of the model (0: the newest; an earlier one
 *  while the model keeps it, see keep_versions), storing the version that ran in *ran (NULL:
 *  not wanted). SERVER_ERROR naming the versions held when the model does not hold `version`. */
SLIPSTREAM_C_API slipstream_status_t slipstream_run_model_version(
    slipstream_client_t* client, const char* name, size_t name_length, const char* const* inputs,
    const size_t* input_lengths, size_t input_count, const char* const* outputs,
    const size_t* output_lengths, size_t output_count, int64_t timeout_ms, uint64_t version,
    uint64_t* ran);
/** In one round trip: stores `inputs`, runs the model and fetches the outputs into
 *  results[0..output_count) (destroy each). Inputs and outputs all use the write prefix. On
 *  failure no handle is stored. */
SLIPSTREAM_C_API slipstream_status_t
slipstream_run_model_on(slipstream_client_t* client, const char* name, size_t name_length,
                        const slipstream_tensor_ref_t* inputs, size_t input_count,
                        const char* const* outputs, const size_t* output_lengths,
                        size_t output_count, int64_t timeout_ms, slipstream_tensor_t** results);
/** slipstream_run_model_on with `version` and `ran` as for slipstream_run_model_version. */
SLIPSTREAM_C_API slipstream_status_t slipstream_run_model_on_version(
    slipstream_client_t* client, const char* name, size_t name_length,
    const slipstream_tensor_ref_t* inputs, size_t input_count, const char* const* outputs,
    const size_t* output_lengths, size_t output_count, int64_t timeout_ms, uint64_t version,
    uint64_t* ran, slipstream_tensor_t** results);
/** The chunk size models are split into (*bytes), and setting it server-wide. */
SLIPSTREAM_C_API slipstream_status_t slipstream_get_model_chunk_size(slipstream_client_t* client,
                                                                     int64_t* bytes);
SLIPSTREAM_C_API slipstream_status_t slipstream_set_model_chunk_size(slipstream_client_t* client,
                                                                     int64_t bytes);

/** Compiles and stores a TorchScript script. With entry_count 0 it is stored for
 *  slipstream_run_script; with entry points, for slipstream_run_script_with_keys. SERVER_ERROR
 *  with the compiler's message if it does not compile. `device` NULL: "CPU". */
SLIPSTREAM_C_API slipstream_status_t slipstream_set_script(
    slipstream_client_t* client, const char* name, size_t name_length, const char* device,
    size_t device_length, const char* source, size_t source_length, const char* const* entry_points,
    const size_t* entry_point_lengths, size_t entry_count);
SLIPSTREAM_C_API slipstream_status_t slipstream_set_script_from_file(
    slipstream_client_t* client, const char* name, size_t name_length, const char* device,
    size_t device_length, const char* path, size_t path_length, const char* const* entry_points,
    const size_t* entry_point_lengths, size_t entry_count);
/** The source of a stored script in *source (free with slipstream_free). */
SLIPSTREAM_C_API slipstream_status_t slipstream_get_script(slipstream_client_t* client,
                                                           const char* name, size_t name_length,
                                                           char** source, size_t* length);
/** Calls `function` with the input tensors as arguments; stores the results under `outputs`. */
SLIPSTREAM_C_API slipstream_status_t
slipstream_run_script(slipstream_client_t* client, const char* name, size_t name_length,
                      const char* function, size_t function_length, const char* const* inputs,
                      const size_t* input_lengths, size_t input_count, const char* const* outputs,
                      const size_t* output_lengths, size_t output_count, int64_t timeout_ms);
/** Calls an entry point as function(tensors, keys, args) (AI.SCRIPTEXECUTE): `keys` are raw
 *  strings, `args` plain strings. */
SLIPSTREAM_C_API slipstream_status_t slipstream_run_script_with_keys(
    slipstream_client_t* client, const char* name, size_t name_length, const char* function,
    size_t function_length, const char* const* keys, const size_t* key_lengths, size_t key_count,
    const char* const* inputs, const size_t* input_lengths, size_t input_count,
    const char* const* args, const size_t* arg_lengths, size_t arg_count,
    const char* const* outputs, const size_t* output_lengths, size_t output_count,
    int64_t timeout_ms);
SLIPSTREAM_C_API slipstream_status_t slipstream_delete_script(slipstream_client_t* client,
                                                              const char* name, size_t name_length,
                                                              int* existed);

/** Run statistics of a model or script (AI.INFO); see slipstream::ModelInfo. The strings are
 *  allocated by slipstream_model_info and released by slipstream_model_info_clear. */
typedef struct slipstream_model_info {
  char* key;
  size_t key_length;
  char* type; /**< "MODEL" or "SCRIPT" */
  size_t type_length;
  char* backend;
  size_t backend_length;
  char* device;
  size_t device_length;
  char* tag;
  size_t tag_length;
  int64_t calls;
  int64_t samples;
  int64_t errors;
  int64_t duration_us;
  int64_t version;
  int64_t runs;
  int64_t batches;
  double mean_batch_size;
  int64_t queue_wait_us;
  int64_t run_time_us;
} slipstream_model_info_t;

/** Fills *info (its previous strings are not freed: clear it first if it was filled). */
SLIPSTREAM_C_API slipstream_status_t slipstream_model_info(slipstream_client_t* client,
                                                           const char* name, size_t name_length,
                                                           slipstream_model_info_t* info);
/** Frees the strings of *info and zeroes it. NULL is a no-op. */
SLIPSTREAM_C_API slipstream_status_t slipstream_model_info_clear(slipstream_model_info_t* info);
SLIPSTREAM_C_API slipstream_status_t slipstream_reset_model_stats(slipstream_client_t* client,
                                                                  const char* name,
                                                                  size_t name_length);

/* ---- Ensemble prefixes ----------------------------------------------------------------------- */

/** Selects which SSKEYIN prefix reads use. INVALID_ARGUMENT if it is not one of them. */
SLIPSTREAM_C_API slipstream_status_t slipstream_set_data_source(slipstream_client_t* client,
                                                                const char* source,
                                                                size_t source_length);
SLIPSTREAM_C_API slipstream_status_t
slipstream_use_tensor_ensemble_prefix(slipstream_client_t* client, int enable);
SLIPSTREAM_C_API slipstream_status_t
slipstream_use_dataset_ensemble_prefix(slipstream_client_t* client, int enable);
SLIPSTREAM_C_API slipstream_status_t
slipstream_use_list_ensemble_prefix(slipstream_client_t* client, int enable);
SLIPSTREAM_C_API slipstream_status_t
slipstream_use_model_ensemble_prefix(slipstream_client_t* client, int enable);
SLIPSTREAM_C_API slipstream_status_t
slipstream_model_ensemble_prefix_enabled(const slipstream_client_t* client, int* enabled);

/* ---- Server info and generic commands -------------------------------------------------------- */

/** The text of INFO [section] in *text (free with slipstream_free). `section` NULL or empty: all
 *  default sections. */
SLIPSTREAM_C_API slipstream_status_t slipstream_info(slipstream_client_t* client,
                                                     const char* section, size_t section_length,
                                                     char** text, size_t* length);
/** Sends one command as given (no prefixes) and stores its reply in *reply (destroy it). An error
 *  reply is returned as a status (SERVER_ERROR or a more specific code) with the server's text in
 *  slipstream_last_error; errors nested in an array reply are SLIPSTREAM_REPLY_ERROR elements. */
SLIPSTREAM_C_API slipstream_status_t slipstream_command(slipstream_client_t* client,
                                                        const char* const* args,
                                                        const size_t* arg_lengths, size_t argc,
                                                        slipstream_reply_t** reply);
/** Frees *reply and sets it to NULL. NULL or *reply == NULL is a no-op. Do not destroy an
 *  element borrowed from a reply. */
SLIPSTREAM_C_API slipstream_status_t slipstream_reply_destroy(slipstream_reply_t** reply);
SLIPSTREAM_C_API slipstream_status_t slipstream_reply_kind(const slipstream_reply_t* reply,
                                                           slipstream_reply_kind_t* kind);
/** The string of a STRING, STATUS, ERROR, DOUBLE or BIG_NUMBER reply (borrowed: valid while the
 *  reply lives); INVALID_ARGUMENT for other kinds. */
SLIPSTREAM_C_API slipstream_status_t slipstream_reply_string(const slipstream_reply_t* reply,
                                                             const char** string, size_t* length);
/** The value of an INTEGER or BOOL reply; INVALID_ARGUMENT for other kinds. */
SLIPSTREAM_C_API slipstream_status_t slipstream_reply_integer(const slipstream_reply_t* reply,
                                                              int64_t* value);
/** Number of elements of an ARRAY, MAP (keys and values alternate), SET or PUSH reply (0 for
 *  other kinds), and element `index` (borrowed: valid while the outer reply lives). */
SLIPSTREAM_C_API slipstream_status_t slipstream_reply_element_count(const slipstream_reply_t* reply,
                                                                    size_t* count);
SLIPSTREAM_C_API slipstream_status_t slipstream_reply_element(const slipstream_reply_t* reply,
                                                              size_t index,
                                                              const slipstream_reply_t** element);

/* ---- Streams --------------------------------------------------------------------------------- */
/* N writer ranks (a simulation) publish openPMD-shaped steps; groups of M readers each take a
 * share of every step's chunks (docs/streams.md: data model, strategies, queue policies, faults).
 * These functions wrap the C++ slipstream::StreamWriter and slipstream::StreamReader; the
 * conventions at the top of this header hold, with these additions:
 *
 * Connections: every writer and reader handle opens its own connection from a
 *   slipstream_client_options_t (NULL: all defaults, the address from SLIPSTREAM_ADDRESS, then
 *   SSDB); the server binds the rank to it, so a writer whose process dies is a writer failure
 *   and a reader whose process dies leaves its group.
 * Extents: global extents, offsets and extents are int64_t arrays of `ndims` entries in row-major
 *   (C) order: the last dimension varies fastest in the chunk's bytes. Offsets count from 0;
 *   extents are >= 0. A column-major (Fortran) array a(n1, ..., nk) is the row-major array of
 *   extent {nk, ..., n1} with the same bytes: give its dimensions reversed, and no copy is made
 *   (the Fortran module does this for its users). Unlike tensors, chunks are never transposed.
 * Deferred writes: slipstream_stream_put_chunk and slipstream_stream_set_attribute_* send nothing;
 *   slipstream_stream_end_step sends the whole step in one round trip. A chunk's `data` is
 *   borrowed until slipstream_stream_end_step returns (keep it alive and unchanged until then);
 *   names, extents and attribute values are copied during the call.
 * Attribute levels: SLIPSTREAM_STEP_ATTRIBUTE sets or reads an attribute of the step begun (or
 *   held); SLIPSTREAM_STREAM_ATTRIBUTE one of the whole stream. `path` is "/" for the step or
 *   stream itself, else a record or component path ("meshes/E", "meshes/E/x").
 * Thread-safety: a writer, a reader and the steps it hands out are used by one thread at a time
 *   (a step shares its reader's connection). Different handles may be used by different threads.
 * Blocking: begin_step waits while the queue is full (begin_timeout_ms bounds it); next_step
 *   waits for a step (next_timeout_ms bounds it); the other calls that talk to the server wait
 *   for its reply. */

/** A writer rank of a stream (slipstream::StreamWriter). */
typedef struct slipstream_stream_writer slipstream_stream_writer_t;
/** A reader of a reader group (slipstream::StreamReader). */
typedef struct slipstream_stream_reader slipstream_stream_reader_t;
/** A step handed to a reader, with the pieces it has loaded (slipstream::StreamStep). */
typedef struct slipstream_stream_step slipstream_stream_step_t;

/** The level of an attribute; see "Attribute levels" above. */
enum slipstream_attribute_level { SLIPSTREAM_STEP_ATTRIBUTE = 0, SLIPSTREAM_STREAM_ATTRIBUTE = 1 };
/** An attribute level: one of the values above (an integer, as slipstream_dtype_t). */
typedef int32_t slipstream_attribute_level_t;

/** Types of attribute values; the values match the alternatives of slipstream::AttributeValue. */
enum slipstream_attribute_type {
  SLIPSTREAM_ATTRIBUTE_STRING = 0,
  SLIPSTREAM_ATTRIBUTE_INT64 = 1,
  SLIPSTREAM_ATTRIBUTE_DOUBLE = 2,
  SLIPSTREAM_ATTRIBUTE_STRINGS = 3, /**< an array of strings */
  SLIPSTREAM_ATTRIBUTE_INT64S = 4,  /**< an array of int64_t */
  SLIPSTREAM_ATTRIBUTE_DOUBLES = 5  /**< an array of double */
};
typedef int32_t slipstream_attribute_type_t;

/** Reader group policies (docs/streams.md, "Queue limit and policies"). */
enum slipstream_stream_policy {
  SLIPSTREAM_STREAM_BLOCK = 0,  /**< the group sees every step; writers wait for it */
  SLIPSTREAM_STREAM_DISCARD = 1 /**< writers never wait; steps it falls behind on are skipped */
};
/** Where a group that joins after steps exist starts. */
enum slipstream_stream_start {
  SLIPSTREAM_STREAM_OLDEST = 0, /**< at the oldest step still held */
  SLIPSTREAM_STREAM_NEWEST = 1  /**< at the next step a writer begins */
};
/** How a group shares its steps among its readers (docs/streams.md, "Step distribution"). */
enum slipstream_stream_distribution {
  SLIPSTREAM_STREAM_DISTRIBUTE_ALL = 0,         /**< every reader gets a share of every step */
  SLIPSTREAM_STREAM_DISTRIBUTE_ROUND_ROBIN = 1, /**< each step whole to one reader, in turn */
  SLIPSTREAM_STREAM_DISTRIBUTE_ON_DEMAND = 2    /**< each step whole to the reader asking first */
};

/** What slipstream_stream_next_step found. */
enum slipstream_stream_next_kind {
  SLIPSTREAM_STREAM_STEP = 0,    /**< a step: *step is a new step handle */
  SLIPSTREAM_STREAM_SKIPPED = 1, /**< a step was skipped for this reader (see the reason) */
  SLIPSTREAM_STREAM_END = 2,     /**< every writer has closed and every step has been read */
  SLIPSTREAM_STREAM_TIMEOUT = 3  /**< next_timeout_ms passed with no step */
};
typedef int32_t slipstream_stream_next_kind_t;

/** How a writer attaches to a stream; initialise with slipstream_stream_writer_options_init.
 *  Every writer of a stream must give the same queue limit, expected groups, failure mode, step
 *  timeout and first_step_precious. */
typedef struct slipstream_stream_writer_options {
  /** Steps held at once (reserved at begin_step, so 1 means one step in memory). Default 2. */
  int64_t queue_limit;
  /** Groups the writers wait for before complete steps no group wants may be dropped. Default 0. */
  int64_t expected_groups;
  /** Non-zero: a writer that dies or times out ends the stream; 0 (default): the others go on. */
  int end_on_writer_failure;
  /** A step not ended by every writer within this many ms is aborted; 0 (default): no limit. */
  int64_t step_timeout_ms;
  /** Longest wait of begin_step for a slot, in ms; 0 (default) waits as long as it takes. */
  int64_t begin_timeout_ms;
  /** This writer's host, for the readers' hostname_ strategies. NULL or empty: this machine's. */
  const char* hostname;
  size_t hostname_length;
  /** Over a Unix socket with shared memory, chunks of at least this many bytes are copied into
   *  shared-memory segments that readers on the node map without a further copy; smaller chunks,
   *  and every chunk over TCP, go on the socket. Default 65536 (64 KiB); negative is refused. */
  int64_t shared_memory_min_bytes;
  /** Non-zero (default): end_step also reserves this writer's next step when a slot is free at
   *  that moment, so its begin_step costs no round trip. 0: every begin_step is a round trip. */
  int reserve_next_step;
  /** Non-zero: the first step that completes is kept for the stream's life and handed first to
   *  every group that joins later (ADIOS2 SST's FirstTimestepPrecious); it holds one step's
   *  memory until the stream is forgotten or deleted. 0 (default): not kept. Every writer must
   *  give the same. */
  int first_step_precious;
} slipstream_stream_writer_options_t;

/** Sets every field of `options` to its default (see the fields). Always use it: a zeroed struct
 *  is not the defaults (queue_limit 0 is refused, reserve_next_step 0 turns reservation off). */
SLIPSTREAM_C_API slipstream_status_t
slipstream_stream_writer_options_init(slipstream_stream_writer_options_t* options);

/** Connects and attaches as writer `rank` of `writers` (rank < writers) to `stream`, creating the
 *  stream if this is the first writer or reader; stores a new handle in *writer (destroy it with
 *  slipstream_stream_writer_destroy). `options` NULL: the defaults. Fails with INVALID_ARGUMENT
 *  (empty stream name, rank out of range, negative option), the connection errors of
 *  slipstream_client_create, or SERVER_ERROR when the stream exists with other options or the
 *  rank is taken. */
SLIPSTREAM_C_API slipstream_status_t slipstream_stream_writer_create(
    const slipstream_client_options_t* client_options, const char* stream, size_t stream_length,
    uint32_t rank, uint32_t writers, const slipstream_stream_writer_options_t* options,
    slipstream_stream_writer_t** writer);
/** Closes the stream for this writer if slipstream_stream_writer_close was not called (errors
 *  are not reported: call close first to see them), disconnects, frees *writer and sets it to
 *  NULL. NULL or *writer == NULL is a no-op. Always returns SLIPSTREAM_OK. */
SLIPSTREAM_C_API slipstream_status_t
slipstream_stream_writer_destroy(slipstream_stream_writer_t** writer);

/** Sets the compression operator of `component` ("*": every component without one of its own)
 *  for the chunks put from now on (docs/streams.md, "Operators"): `type` "zstd", "blosc", "bzip2"
 *  or "zfp" and `parameters` as "name=value" pairs separated by commas, ADIOS2's names:
 *  "level=3"; "clevel=5,doshuffle=BLOSC_SHUFFLE,compressor=lz4"; "blockSize100k=9";
 *  "accuracy=1e-4" (or precision, rate; float32 and float64 only). `parameters` may be NULL or
 *  empty; `type` NULL or empty removes the component's operator. The writer encodes each chunk,
 *  the server stores the encoded bytes, readers get decoded elements. INVALID_ARGUMENT, naming the
 *  component, for an unknown operator or parameter or a value out of range (and, at put, for a
 *  component's own zfp on integer chunks). Needs the shared library: libslipstream_c.a refuses
 *  every operator. */
SLIPSTREAM_C_API slipstream_status_t slipstream_stream_set_operator(
    slipstream_stream_writer_t* writer, const char* component, size_t component_length,
    const char* type, size_t type_length, const char* parameters, size_t parameters_length);

/** Begins `step` (numbers increase per writer; every writer of a step gives the same number).
 *  Blocks while the queue is full of steps a blocking group has not released; TIMEOUT_ERROR
 *  after begin_timeout_ms. INVALID_ARGUMENT if a step is open or the writer has closed;
 *  SERVER_ERROR if the number does not increase. */
SLIPSTREAM_C_API slipstream_status_t
slipstream_stream_begin_step(slipstream_stream_writer_t* writer, int64_t step);
/** Adds a chunk of `component` (an openPMD path such as "meshes/E/x") to the step begun: the box
 *  at `offset` with `extent` elements per dimension, within the component's `global_extent`, all
 *  three of `ndims` (>= 1) entries in row-major order (see "Extents"). `data` holds the chunk's
 *  product(extent) elements of `dtype`, row-major, `bytes` bytes; it is BORROWED until
 *  slipstream_stream_end_step returns. INVALID_ARGUMENT if no step is open, ndims is 0, an
 *  extent or offset is negative, or `bytes` is not product(extent) * dtype size. The server
 *  checks the box against the global extent when the step ends. */
SLIPSTREAM_C_API slipstream_status_t slipstream_stream_put_chunk(
    slipstream_stream_writer_t* writer, const char* component, size_t component_length,
    slipstream_dtype_t dtype, size_t ndims, const int64_t* global_extent, const int64_t* offset,
    const int64_t* extent, const void* data, size_t bytes);

/** slipstream_stream_put_chunk, but `data` is copied (the copy is kept until end_step): the
 *  buffer may be reused as soon as this returns. For temporary buffers; the borrowing form saves
 *  the copy. */
SLIPSTREAM_C_API slipstream_status_t slipstream_stream_put_chunk_copy(
    slipstream_stream_writer_t* writer, const char* component, size_t component_length,
    slipstream_dtype_t dtype, size_t ndims, const int64_t* global_extent, const int64_t* offset,
    const int64_t* extent, const void* data, size_t bytes);

/** Sets an attribute at `level` (see "Attribute levels"): a step attribute needs a step begun
 *  (else INVALID_ARGUMENT); a stream attribute is sent with the next end_step, or at once when
 *  no step is open. The value is copied. Arrays need at least one value (else INVALID_ARGUMENT);
 *  a list of strings is given as in "Strings" above. */
SLIPSTREAM_C_API slipstream_status_t slipstream_stream_set_attribute_string(
    slipstream_stream_writer_t* writer, slipstream_attribute_level_t level, const char* path,
    size_t path_length, const char* name, size_t name_length, const char* value,
    size_t value_length);
SLIPSTREAM_C_API slipstream_status_t slipstream_stream_set_attribute_int64(
    slipstream_stream_writer_t* writer, slipstream_attribute_level_t level, const char* path,
    size_t path_length, const char* name, size_t name_length, int64_t value);
SLIPSTREAM_C_API slipstream_status_t slipstream_stream_set_attribute_double(
    slipstream_stream_writer_t* writer, slipstream_attribute_level_t level, const char* path,
    size_t path_length, const char* name, size_t name_length, double value);
SLIPSTREAM_C_API slipstream_status_t slipstream_stream_set_attribute_strings(
    slipstream_stream_writer_t* writer, slipstream_attribute_level_t level, const char* path,
    size_t path_length, const char* name, size_t name_length, const char* const* values,
    const size_t* value_lengths, size_t count);
SLIPSTREAM_C_API slipstream_status_t slipstream_stream_set_attribute_int64s(
    slipstream_stream_writer_t* writer, slipstream_attribute_level_t level, const char* path,
    size_t path_length, const char* name, size_t name_length, const int64_t* values, size_t count);
SLIPSTREAM_C_API slipstream_status_t slipstream_stream_set_attribute_doubles(
    slipstream_stream_writer_t* writer, slipstream_attribute_level_t level, const char* path,
    size_t path_length, const char* name, size_t name_length, const double* values, size_t count);

/** Sends the step's chunks and attributes in one round trip and ends the step for this writer;
 *  the chunks' buffers are free again when it returns (on success or failure). The step becomes
 *  visible to readers when every writer has ended it. Returns the first error the server
 *  reported for the step (a chunk outside the global extent, OUT_OF_MEMORY, ...);
 *  INVALID_ARGUMENT if no step is open. SLIPSTREAM_STEP_ABORTED when the step was aborted
 *  instead (another writer failed or closed mid-step, or the step timed out): the stream goes on,
 *  readers are told the step was skipped, slipstream_last_error() says why, and this writer may
 *  begin its next step. A writer whose step was aborted before it began it gets through
 *  begin_step, put_chunk and set_attribute as usual, nothing being sent, and this status here. */
SLIPSTREAM_C_API slipstream_status_t slipstream_stream_end_step(slipstream_stream_writer_t* writer);
/** This writer is done. Once every writer has closed, readers get SLIPSTREAM_STREAM_END after
 *  the queued steps. Closing twice is a no-op. */
SLIPSTREAM_C_API slipstream_status_t
slipstream_stream_writer_close(slipstream_stream_writer_t* writer);

/** How a reader joins a group; initialise with slipstream_stream_reader_options_init. Every
 *  reader of a group must give the same policy, start, strategy and step distribution. */
typedef struct slipstream_stream_reader_options {
  /** SLIPSTREAM_STREAM_BLOCK (default) or SLIPSTREAM_STREAM_DISCARD. */
  int32_t policy;
  /** SLIPSTREAM_STREAM_OLDEST (default) or SLIPSTREAM_STREAM_NEWEST. */
  int32_t start;
  /** The chunk distribution strategy (docs/streams.md), case-insensitive. NULL or empty: the
   *  default, "hostname_binpacking_slicedataset". */
  const char* strategy;
  size_t strategy_length;
  /** The dimension (row-major numbering, from 0) along which slicedataset and binpacking cut.
   *  Default 0. */
  int64_t split_dimension;
  /** Non-zero: give every reader that got nothing a share of another's (see the docs). */
  int no_empty_readers;
  /** Longest wait of next_step, in ms; 0 (default) waits as long as it takes. */
  int64_t next_timeout_ms;
  /** This reader's host. NULL or empty: this machine's hostname. */
  const char* hostname;
  size_t hostname_length;
  /** SLIPSTREAM_STREAM_DISTRIBUTE_ALL (default: every reader gets its share of every step),
   *  _ROUND_ROBIN (each step whole to one reader, in turn by rank) or _ON_DEMAND (each step
   *  whole to the reader that asks first). A step handed whole has this reader alone in its
   *  reader table, so the strategy gives it every chunk. */
  int32_t step_distribution;
} slipstream_stream_reader_options_t;

/** Sets every field of `options` to its default (see the fields). */
SLIPSTREAM_C_API slipstream_status_t
slipstream_stream_reader_options_init(slipstream_stream_reader_options_t* options);

/** Connects and joins `group` of `size` readers as `rank` (rank < size) on `stream` (created,
 *  waiting for its writers, if none has attached yet); stores a new handle in *reader (destroy
 *  it with slipstream_stream_reader_destroy). `options` NULL: the defaults. INVALID_ARGUMENT for
 *  an empty name, a rank out of range, an unknown policy, start, strategy or step distribution;
 *  SERVER_ERROR if the group exists with other settings or the rank is taken; connection errors as
 *  slipstream_client_create. A group is handed steps once all its readers have joined. */
SLIPSTREAM_C_API slipstream_status_t slipstream_stream_reader_create(
    const slipstream_client_options_t* client_options, const char* stream, size_t stream_length,
    const char* group, size_t group_length, uint32_t rank, uint32_t size,
    const slipstream_stream_reader_options_t* options, slipstream_stream_reader_t** reader);
/** Leaves the group (a step still held is given back, not reread), disconnects, frees *reader
 *  and sets it to NULL. Step handles it gave out stay valid (their loaded pieces too) but can no
 *  longer load. NULL or *reader == NULL is a no-op. Always returns SLIPSTREAM_OK. */
SLIPSTREAM_C_API slipstream_status_t
slipstream_stream_reader_destroy(slipstream_stream_reader_t** reader);

/** Waits for this reader's next step, first releasing the step it holds, if any (that step's
 *  handle stays valid, with the pieces it loaded, but can no longer load). Sets *kind; for
 *  SLIPSTREAM_STREAM_STEP stores a new handle in *step (destroy it with
 *  slipstream_stream_step_destroy) and its number in *step_number; for SLIPSTREAM_STREAM_SKIPPED
 *  sets *step_number to the skipped step (the reason: slipstream_stream_reader_skip_reason);
 *  otherwise *step_number is -1. *step is NULL unless a step was handed out. `step_number` may
 *  be NULL. */
SLIPSTREAM_C_API slipstream_status_t
slipstream_stream_next_step(slipstream_stream_reader_t* reader, slipstream_stream_next_kind_t* kind,
                            int64_t* step_number, slipstream_stream_step_t** step);
/** Why the last step reported as SLIPSTREAM_STREAM_SKIPPED was skipped (borrowed: valid until the
 *  next call of slipstream_stream_next_step on this reader or its destruction); "" if none. */
SLIPSTREAM_C_API slipstream_status_t slipstream_stream_reader_skip_reason(
    const slipstream_stream_reader_t* reader, const char** reason, size_t* length);

/** Frees the step, its loaded pieces and *step, and sets *step to NULL. A step still held is
 *  given back no later than the reader's next request (next_step, or leaving when the reader is
 *  destroyed), errors unreported; slipstream_stream_step_release gives it back at once and
 *  reports them. NULL or *step == NULL is a no-op. Always returns SLIPSTREAM_OK. */
SLIPSTREAM_C_API slipstream_status_t
slipstream_stream_step_destroy(slipstream_stream_step_t** step);
/** Done with the step: the writers may reuse its slot once every reader has released it. What
 *  the handle holds (components, attributes, loaded pieces) stays readable until it is destroyed;
 *  loading more is an INVALID_ARGUMENT. Releasing twice is a no-op. */
SLIPSTREAM_C_API slipstream_status_t slipstream_stream_step_release(slipstream_stream_step_t* step);
SLIPSTREAM_C_API slipstream_status_t
slipstream_stream_step_number(const slipstream_stream_step_t* step, int64_t* number);
/** The readers of the group for this step (survivors only, if some left) and this reader's index
 *  among them, which is its rank for the strategy. */
SLIPSTREAM_C_API slipstream_status_t slipstream_stream_step_readers(
    const slipstream_stream_step_t* step, size_t* reader_count, size_t* index);

/** The step's record components, numbered 0..count-1 in the writers' order. */
SLIPSTREAM_C_API slipstream_status_t
slipstream_stream_step_component_count(const slipstream_stream_step_t* step, size_t* count);
/** The number of the component called `name`; KEY_NOT_FOUND if the step has none. */
SLIPSTREAM_C_API slipstream_status_t slipstream_stream_step_find_component(
    const slipstream_stream_step_t* step, const char* name, size_t name_length, size_t* component);
/** Component `component`'s name (borrowed: valid while the step handle lives), dtype, number of
 *  dimensions and global extent (borrowed, row-major, `ndims` entries), and the number of pieces
 *  this reader's share has (0 is possible). Any output pointer may be NULL. INVALID_ARGUMENT if
 *  `component` is out of range. */
SLIPSTREAM_C_API slipstream_status_t slipstream_stream_step_component(
    const slipstream_stream_step_t* step, size_t component, const char** name, size_t* name_length,
    slipstream_dtype_t* dtype, size_t* ndims, const int64_t** global_extent, size_t* piece_count);
/** Piece `piece` of this reader's share of `component`: its offset and extent (borrowed,
 *  row-major, ndims entries each) and the writer rank it comes from. Needs no load. Any output
 *  pointer may be NULL. */
SLIPSTREAM_C_API slipstream_status_t
slipstream_stream_step_piece(const slipstream_stream_step_t* step, size_t component, size_t piece,
                             const int64_t** offset, const int64_t** extent, uint32_t* source_rank);
/** Fetches the bytes of all this reader's pieces of `component` in one round trip and keeps them
 *  in the step handle; a component loaded before is not fetched again. INVALID_ARGUMENT once the
 *  step is released (or its reader destroyed) and it was not loaded before. Optional: the first
 *  slipstream_stream_step_piece_data of a component loads it. */
SLIPSTREAM_C_API slipstream_status_t slipstream_stream_step_load(slipstream_stream_step_t* step,
                                                                 size_t component);
/** The bytes of piece `piece` of `component` (loading the component first if needed): its
 *  product(extent) elements of the component's dtype, row-major, `*bytes` bytes (borrowed: valid
 *  while the step handle lives, even after release). *data is NULL for an empty piece. `dtype`
 *  must be the component's dtype and, if `expected_ndims` > 0, it must be the component's number
 *  of dimensions (INVALID_ARGUMENT naming both otherwise), so that the bytes are read as what
 *  they are. */
SLIPSTREAM_C_API slipstream_status_t slipstream_stream_step_piece_data(
    slipstream_stream_step_t* step, size_t component, size_t piece, slipstream_dtype_t dtype,
    size_t expected_ndims, const void** data, size_t* bytes);

/** Attributes of the step (SLIPSTREAM_STEP_ATTRIBUTE) or the stream (SLIPSTREAM_STREAM_ATTRIBUTE)
 *  as the reader received them with the step, looked up by `path` and `name`. KEY_NOT_FOUND if
 *  there is no such attribute; WRONG_TYPE (naming the type it has) if the getter does not match
 *  its type. _info gives the type and the number of values (1 for a scalar); either output may
 *  be NULL. Strings and arrays are borrowed: valid while the step handle lives. */
SLIPSTREAM_C_API slipstream_status_t slipstream_stream_step_attribute_info(
    const slipstream_stream_step_t* step, slipstream_attribute_level_t level, const char* path,
    size_t path_length, const char* name, size_t name_length, slipstream_attribute_type_t* type,
    size_t* count);
SLIPSTREAM_C_API slipstream_status_t slipstream_stream_step_attribute_string(
    const slipstream_stream_step_t* step, slipstream_attribute_level_t level, const char* path,
    size_t path_length, const char* name, size_t name_length, const char** value, size_t* length);
SLIPSTREAM_C_API slipstream_status_t slipstream_stream_step_attribute_int64(
    const slipstream_stream_step_t* step, slipstream_attribute_level_t level, const char* path,
    size_t path_length, const char* name, size_t name_length, int64_t* value);
SLIPSTREAM_C_API slipstream_status_t slipstream_stream_step_attribute_double(
    const slipstream_stream_step_t* step, slipstream_attribute_level_t level, const char* path,
    size_t path_length, const char* name, size_t name_length, double* value);
/** Element `index` of a string array (INVALID_ARGUMENT if out of range). */
SLIPSTREAM_C_API slipstream_status_t slipstream_stream_step_attribute_strings_element(
    const slipstream_stream_step_t* step, slipstream_attribute_level_t level, const char* path,
    size_t path_length, const char* name, size_t name_length, size_t index, const char** value,
    size_t* length);
SLIPSTREAM_C_API slipstream_status_t slipstream_stream_step_attribute_int64s(
    const slipstream_stream_step_t* step, slipstream_attribute_level_t level, const char* path,
    size_t path_length, const char* name, size_t name_length, const int64_t** values,
    size_t* count);
SLIPSTREAM_C_API slipstream_status_t slipstream_stream_step_attribute_doubles(
    const slipstream_stream_step_t* step, slipstream_attribute_level_t level, const char* path,
    size_t path_length, const char* name, size_t name_length, const double** values, size_t* count);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SLIPSTREAM_H_ */
