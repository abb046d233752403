/* In-process TorchScript models for C: slipstream::LocalModel (include/slipstream/local_model.hpp)
 * behind a C99 interface, in libslipstream_local_c (over libslipstream_local, which links
 * libtorch, and libslipstream_c). The model runs in the caller's process on the caller's
 * buffers: no server, no copies of C-order inputs.
 *
 * Conventions: those of slipstream.h (status codes, slipstream_last_error() per thread, pointer
 * plus length strings with SLIPSTREAM_NTS, memory orders, caller-owned buffers). Errors:
 * INVALID_ARGUMENT for a NULL handle, a bad device string, an unreadable file, inputs or output
 * buffers that do not fit the model (count, dtype, shape); BUFFER_TOO_SMALL for an output buffer
 * smaller than the output (the message gives the bytes needed); BACKEND_ERROR when libtorch
 * refuses the model or fails running it (the message quotes libtorch's).
 * Thread-safety: slipstream_local_model_run may be called from any number of threads at once on
 * one model; destroying a model while a run is in progress is not allowed.
 */
#ifndef SLIPSTREAM_LOCAL_H_
#define SLIPSTREAM_LOCAL_H_

#include "slipstream.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A TorchScript model loaded into this process (slipstream::LocalModel). */
typedef struct slipstream_local_model slipstream_local_model_t;

/** A caller's buffer that receives one output of slipstream_local_model_run. */
typedef struct slipstream_local_output {
  /** Must equal the output's dtype. */
  slipstream_dtype_t dtype;
  void* data;
  /** Capacity of `data` in bytes: at least the output's size (a larger buffer keeps its tail). */
  size_t capacity;
  /** The shape the caller expects: with rank > 0 the output's shape must equal it; rank 0
   *  accepts any shape (`shape` may then be NULL). */
  const int64_t* shape;
  size_t rank;
  /** Order the output is written in: SLIPSTREAM_FORTRAN_ORDER writes the transpose, so that
   *  a(i+1, j+1) of a Fortran array is element [i][j] of the row-major output. */
  slipstream_memory_order_t order;
} slipstream_local_output_t;

/** Loads the TorchScript archive at `path` (as torch.jit.save writes it) onto `device` ("CPU",
 *  "GPU" or "GPU:n", case-insensitive; NULL or empty: "CPU") and stores a new model in *model
 *  (destroy it with slipstream_local_model_destroy). INVALID_ARGUMENT for an unreadable file or
 *  a bad or unusable device, BACKEND_ERROR if libtorch cannot load it. */
SLIPSTREAM_C_API slipstream_status_t slipstream_local_model_load_file(
    const char* path, size_t path_length, const char* device, size_t device_length,
    slipstream_local_model_t** model);
/** As slipstream_local_model_load_file, from a TorchScript archive held in memory (`bytes` is
 *  only read during the call). */
SLIPSTREAM_C_API slipstream_status_t slipstream_local_model_load_bytes(
    const void* bytes, size_t length, const char* device, size_t device_length,
    slipstream_local_model_t** model);

/** Runs the model's forward method on inputs[0..input_count) (in the order of forward's
 *  parameters; names are ignored) and writes output i into outputs[i]. `output_count` must
 *  equal the number of model outputs (a tuple or list result counts its elements). Inputs are
 *  borrowed for the call; C-order inputs on the CPU are read in place, Fortran-order ones
 *  through a transposed copy. Every output is checked against its buffer before any is written:
 *  on failure no buffer has been touched. */
SLIPSTREAM_C_API slipstream_status_t slipstream_local_model_run(
    const slipstream_local_model_t* model, const slipstream_tensor_ref_t* inputs,
    size_t input_count, const slipstream_local_output_t* outputs, size_t output_count);

/** The device the model runs on ("CPU", "GPU:0", ...) in *device (free with slipstream_free),
 *  its length in *length (NULL: not wanted). */
SLIPSTREAM_C_API slipstream_status_t slipstream_local_model_device(
    const slipstream_local_model_t* model, char** device, size_t* length);

/** Frees *model and sets it to NULL. NULL or *model == NULL is a no-op. Always returns
 *  SLIPSTREAM_OK. */
SLIPSTREAM_C_API slipstream_status_t slipstream_local_model_destroy(
    slipstream_local_model_t** model);

#ifdef __cplusplus
}
#endif

#endif /* SLIPSTREAM_LOCAL_H_ */
