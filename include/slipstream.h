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
 *   it on entry, so the pointer is valid until the next call to this API on the same thread.
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
  SLIPSTREAM_BOOL = 8 /**< one byte per element, 0 or 1 */
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
 *  tensor borrowed from a dataset. */
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
/** In one round trip: stores `inputs`, runs the model and fetches the outputs into
 *  results[0..output_count) (destroy each). Inputs and outputs all use the write prefix. On
 *  failure no handle is stored. */
SLIPSTREAM_C_API slipstream_status_t
slipstream_run_model_on(slipstream_client_t* client, const char* name, size_t name_length,
                        const slipstream_tensor_ref_t* inputs, size_t input_count,
                        const char* const* outputs, const size_t* output_lengths,
                        size_t output_count, int64_t timeout_ms, slipstream_tensor_t** results);
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

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SLIPSTREAM_H_ */
