/* SmartRedis 0.6 C client API (SmartRedisCClient, put_tensor, run_model ...) over Slipstream.
 *
 * Programs written against SmartRedis's c_client.h compile unchanged with
 * -I<prefix>/include/smartredis and link -lsmartredis (or -lslipstream_smartredis, the same
 * library; docs/smartredis.md).
 * Conventions:
 * - Every function returns an SRError (srexception.h); SRGetLastError() gives the message.
 * - Clients and datasets are `void*` handles made by the constructors below and released by
 *   DeleteCClient / DeallocateDataSet.
 * - Strings are a pointer plus a length (no NUL needed).
 * - Memory the library returns (get_tensor, get_model, get_script, get_datasets_from_list's
 *   array) belongs to the client and stays valid until the client is deleted, as in SmartRedis.
 * - The server address comes from SSDB (first entry of a comma-separated list; SLIPSTREAM_ADDRESS
 *   takes precedence), SR_DB_TYPE=Clustered|Standalone selects the mode unless the constructor
 *   says, and SSKEYOUT / SSKEYIN give the ensemble prefixes.
 * - *_multigpu calls store one copy per GPU as "name.GPU:i" and run the copy of
 *   first_gpu + offset % num_gpus, as SmartRedis does; a server without those GPUs refuses
 *   them with its error (SRDatabaseError).
 * - The handles are not synchronised beyond what the Slipstream client does (one client may be
 *   shared by threads; the memory a call returns is kept per client under a lock). */
#ifndef SMARTREDIS_C_CLIENT_H
#define SMARTREDIS_C_CLIENT_H

#include <stdbool.h>
#include <stddef.h>

#include "sr_enums.h"
#include "srexception.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The C function that raised this thread's last error ("" if none failed); SRGetLastError()
 *  (srexception.h) gives the message. */
const char* SRGetLastErrorLocation(void);

/* ---- Construction -------------------------------------------------------------------------- */

/** A client in the mode of SR_DB_TYPE (automatic if unset); logger_name is kept for messages. */
SRError SimpleCreateClient(const char* logger_name, const size_t logger_name_length,
                           void** new_client);
/** A client configured by a ConfigOptions object (c_configoptions.h): SSDB_{suffix} and the
 *  other variables of its database, or its overrides. */
SRError CreateClient(void* config_options, const char* logger_name, const size_t logger_name_length,
                     void** new_client);
/** A client for a cluster (`cluster` true) or a standalone server. */
SRError SmartRedisCClient(bool cluster, const char* logger_name, const size_t logger_name_length,
                          void** new_client);
/** Disconnects, frees the client and the memory it returned, and sets *c_client to NULL. */
SRError DeleteCClient(void** c_client);

/* ---- Datasets ------------------------------------------------------------------------------ */

SRError put_dataset(void* c_client, void* dataset);
/** A new dataset in *dataset (release it with DeallocateDataSet). SRKeyError if missing. */
SRError get_dataset(void* c_client, const char* name, const size_t name_length, void** dataset);
SRError rename_dataset(void* c_client, const char* old_name, const size_t old_name_length,
                       const char* new_name, const size_t new_name_length);
SRError copy_dataset(void* c_client, const char* src_name, const size_t src_name_length,
                     const char* dest_name, const size_t dest_name_length);
SRError delete_dataset(void* c_client, const char* name, const size_t name_length);

/* ---- Tensors ------------------------------------------------------------------------------- */

/** Stores `data` (n_dims dimensions `dims`, element `type`, laid out as `mem_layout`). */
SRError put_tensor(void* c_client, const char* name, const size_t name_length, void* data,
                   const size_t* dims, const size_t n_dims, SRTensorType type,
                   SRMemoryLayout mem_layout);
/** Fetches a tensor into memory the client keeps (valid until DeleteCClient): *data in
 *  `mem_layout` (for SRMemLayoutNested, nested pointer arrays), *dims (*n_dims entries), *type. */
SRError get_tensor(void* c_client, const char* name, const size_t name_length, void** data,
                   size_t** dims, size_t* n_dims, SRTensorType* type, SRMemoryLayout mem_layout);
/** Fetches a tensor into the caller's buffer of shape `dims`, which must be the stored shape
 *  (SRParameterError naming both otherwise), of the stored `type`. */
SRError unpack_tensor(void* c_client, const char* name, const size_t name_length, void* result,
                      const size_t* dims, const size_t n_dims, SRTensorType type,
                      SRMemoryLayout mem_layout);
SRError rename_tensor(void* c_client, const char* old_name, const size_t old_name_length,
                      const char* new_name, const size_t new_name_length);
/** Deleting a tensor that does not exist is not an error (as in SmartRedis). */
SRError delete_tensor(void* c_client, const char* name, const size_t name_length);
SRError copy_tensor(void* c_client, const char* src_name, const size_t src_name_length,
                    const char* dest_name, const size_t dest_name_length);

/* ---- Models and scripts -------------------------------------------------------------------- */
/* batch_size, min_batch_size, min_batch_timeout: 0 for none. tag may be NULL. inputs and
 * outputs name TensorFlow graph nodes; other backends ignore them (n_inputs may be 0). */

SRError set_model_from_file(void* c_client, const char* name, const size_t name_length,
                            const char* model_file, const size_t model_file_length,
                            const char* backend, const size_t backend_length, const char* device,
                            const size_t device_length, const int batch_size,
                            const int min_batch_size, const int min_batch_timeout, const char* tag,
                            const size_t tag_length, const char** inputs,
                            const size_t* input_lengths, const size_t n_inputs,
                            const char** outputs, const size_t* output_lengths,
                            const size_t n_outputs);
SRError set_model_from_file_multigpu(void* c_client, const char* name, const size_t name_length,
                                     const char* model_file, const size_t model_file_length,
                                     const char* backend, const size_t backend_length,
                                     const int first_gpu, const int num_gpus, const int batch_size,
                                     const int min_batch_size, const int min_batch_timeout,
                                     const char* tag, const size_t tag_length, const char** inputs,
                                     const size_t* input_lengths, const size_t n_inputs,
                                     const char** outputs, const size_t* output_lengths,
                                     const size_t n_outputs);
SRError set_model(void* c_client, const char* name, const size_t name_length, const char* model,
                  const size_t model_length, const char* backend, const size_t backend_length,
                  const char* device, const size_t device_length, const int batch_size,
                  const int min_batch_size, const int min_batch_timeout, const char* tag,
                  const size_t tag_length, const char** inputs, const size_t* input_lengths,
                  const size_t n_inputs, const char** outputs, const size_t* output_lengths,
                  const size_t n_outputs);
SRError set_model_multigpu(void* c_client, const char* name, const size_t name_length,
                           const char* model, const size_t model_length, const char* backend,
                           const size_t backend_length, const int first_gpu, const int num_gpus,
                           const int batch_size, const int min_batch_size,
                           const int min_batch_timeout, const char* tag, const size_t tag_length,
                           const char** inputs, const size_t* input_lengths, const size_t n_inputs,
                           const char** outputs, const size_t* output_lengths,
                           const size_t n_outputs);
/** The stored model bytes (kept by the client until DeleteCClient). */
SRError get_model(void* c_client, const char* name, const size_t name_length, size_t* model_length,
                  const char** model);
SRError set_script_from_file(void* c_client, const char* name, const size_t name_length,
                             const char* device, const size_t device_length,
                             const char* script_file, const size_t script_file_length);
SRError set_script_from_file_multigpu(void* c_client, const char* name, const size_t name_length,
                                      const char* script_file, const size_t script_file_length,
                                      const int first_gpu, const int num_gpus);
SRError set_script(void* c_client, const char* name, const size_t name_length, const char* device,
                   const size_t device_length, const char* script, const size_t script_length);
SRError set_script_multigpu(void* c_client, const char* name, const size_t name_length,
                            const char* script, const size_t script_length, const int first_gpu,
                            const int num_gpus);
/** The stored script source (kept by the client until DeleteCClient). */
SRError get_script(void* c_client, const char* name, const size_t name_length, const char** script,
                   size_t* script_length);
SRError run_script(void* c_client, const char* name, const size_t name_length, const char* function,
                   const size_t function_length, const char** inputs, const size_t* input_lengths,
                   const size_t n_inputs, const char** outputs, const size_t* output_lengths,
                   const size_t n_outputs);
SRError run_script_multigpu(void* c_client, const char* name, const size_t name_length,
                            const char* function, const size_t function_length, const char** inputs,
                            const size_t* input_lengths, const size_t n_inputs,
                            const char** outputs, const size_t* output_lengths,
                            const size_t n_outputs, const int offset, const int first_gpu,
                            const int num_gpus);
SRError run_model(void* c_client, const char* name, const size_t name_length, const char** inputs,
                  const size_t* input_lengths, const size_t n_inputs, const char** outputs,
                  const size_t* output_lengths, const size_t n_outputs);
SRError run_model_multigpu(void* c_client, const char* name, const size_t name_length,
                           const char** inputs, const size_t* input_lengths, const size_t n_inputs,
                           const char** outputs, const size_t* output_lengths,
                           const size_t n_outputs, const int offset, const int first_gpu,
                           const int num_gpus);
SRError delete_model(void* c_client, const char* name, const size_t name_length);
SRError delete_model_multigpu(void* c_client, const char* name, const size_t name_length,
                              const int first_gpu, const int num_gpus);
SRError delete_script(void* c_client, const char* name, const size_t name_length);
SRError delete_script_multigpu(void* c_client, const char* name, const size_t name_length,
                               const int first_gpu, const int num_gpus);

/* ---- Existence and polling ----------------------------------------------------------------- */
/* key_exists and poll_key take raw keys (no prefix); the others apply the prefixes. A poll
 * checks num_tries times, poll_frequency_ms apart. */

SRError key_exists(void* c_client, const char* key, const size_t key_length, bool* exists);
SRError tensor_exists(void* c_client, const char* name, const size_t name_length, bool* exists);
SRError model_exists(void* c_client, const char* name, const size_t name_length, bool* exists);
SRError dataset_exists(void* c_client, const char* name, const size_t name_length, bool* exists);
SRError poll_key(void* c_client, const char* key, const size_t key_length,
                 const int poll_frequency_ms, const int num_tries, bool* exists);
SRError poll_model(void* c_client, const char* name, const size_t name_length,
                   const int poll_frequency_ms, const int num_tries, bool* exists);
SRError poll_tensor(void* c_client, const char* name, const size_t name_length,
                    const int poll_frequency_ms, const int num_tries, bool* exists);
SRError poll_dataset(void* c_client, const char* name, const size_t name_length,
                     const int poll_frequency_ms, const int num_tries, bool* exists);

/* ---- Ensemble prefixes --------------------------------------------------------------------- */

/** Reads use prefix `source_id`, which must be one of SSKEYIN's (SRParameterError otherwise). */
SRError set_data_source(void* c_client, const char* source_id, const size_t source_id_length);
SRError use_tensor_ensemble_prefix(void* c_client, bool use_prefix);
SRError use_dataset_ensemble_prefix(void* c_client, bool use_prefix);
SRError use_model_ensemble_prefix(void* c_client, bool use_prefix);
SRError use_list_ensemble_prefix(void* c_client, bool use_prefix);

/* ---- Aggregation lists --------------------------------------------------------------------- */

/** Appends a reference to a dataset already stored with put_dataset. */
SRError append_to_list(void* c_client, const char* list_name, const size_t list_name_length,
                       const void* dataset);
SRError delete_list(void* c_client, const char* list_name, const size_t list_name_length);
SRError copy_list(void* c_client, const char* src_name, const size_t src_name_length,
                  const char* dest_name, const size_t dest_name_length);
SRError rename_list(void* c_client, const char* src_name, const size_t src_name_length,
                    const char* dest_name, const size_t dest_name_length);
SRError get_list_length(void* c_client, const char* list_name, const size_t list_name_length,
                        int* result_length);
SRError poll_list_length(void* c_client, const char* name, const size_t name_length,
                         int list_length, int poll_frequency_ms, int num_tries, bool* poll_result);
SRError poll_list_length_gte(void* c_client, const char* name, const size_t name_length,
                             int list_length, int poll_frequency_ms, int num_tries,
                             bool* poll_result);
SRError poll_list_length_lte(void* c_client, const char* name, const size_t name_length,
                             int list_length, int poll_frequency_ms, int num_tries,
                             bool* poll_result);
/** *datasets: an array of *num_datasets new datasets (release each with DeallocateDataSet; the
 *  array itself is kept by the client). */
SRError get_datasets_from_list(void* c_client, const char* list_name, const size_t list_name_length,
                               void*** datasets, size_t* num_datasets);
/** As get_datasets_from_list for positions start_index..end_index (inclusive; negative counts
 *  from the end). */
SRError get_dataset_list_range(void* c_client, const char* list_name, const size_t list_name_length,
                               const int start_index, const int end_index, void*** datasets,
                               size_t* num_datasets);

/** A description of the client (its address and prefixes); kept until the next call. */
const char* client_to_string(void* c_client);

#ifdef __cplusplus
}
#endif

#endif /* SMARTREDIS_C_CLIENT_H */
