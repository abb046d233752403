/* SmartRedis 0.6 C dataset API (CDataSet, add_tensor, add_meta_scalar ...) over Slipstream's
 * datasets; conventions as in c_client.h. Memory a getter returns belongs to the dataset and
 * stays valid until DeallocateDataSet. A dataset handle is not synchronised. */
#ifndef SMARTREDIS_C_DATASET_H
#define SMARTREDIS_C_DATASET_H

#include <stddef.h>

#include "sr_enums.h"
#include "srexception.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A new empty dataset (SRParameterError if the name is empty). */
SRError CDataSet(const char* name, const size_t name_length, void** new_dataset);
/** Frees the dataset and sets *dataset to NULL. */
SRError DeallocateDataSet(void** dataset);
/** The name of DeallocateDataSet in SmartRedis releases before 0.4. */
SRError DeallocateeDataSet(void** dataset);

/** Adds a copy of a tensor (SRParameterError if the name is already used). */
SRError add_tensor(void* dataset, const char* name, const size_t name_length, void* data,
                   const size_t* dims, const size_t n_dims, const SRTensorType type,
                   const SRMemoryLayout mem_layout);
/** Appends one value of `type` (not SRMetadataTypeString) to a field, creating it. */
SRError add_meta_scalar(void* dataset, const char* name, const size_t name_length, const void* data,
                        const SRMetaDataType type);
SRError add_meta_string(void* dataset, const char* name, const size_t name_length, const char* data,
                        const size_t data_length);
/** The tensor in memory the dataset keeps, as get_tensor in c_client.h. */
SRError get_dataset_tensor(void* dataset, const char* name, const size_t name_length, void** data,
                           size_t** dims, size_t* n_dims, SRTensorType* type,
                           const SRMemoryLayout mem_layout);
/** Copies a tensor into the caller's buffer, as unpack_tensor in c_client.h. */
SRError unpack_dataset_tensor(void* dataset, const char* name, const size_t name_length, void* data,
                              const size_t* dims, const size_t n_dims, const SRTensorType type,
                              const SRMemoryLayout mem_layout);
/** All values of a scalar field: *length values of *type at *scalar_data (kept by the dataset).
 *  SRKeyError if there is no such field. */
SRError get_meta_scalars(void* dataset, const char* name, const size_t name_length, size_t* length,
                         SRMetaDataType* type, void** scalar_data);
/** All values of a string field (kept by the dataset). */
SRError get_meta_strings(void* dataset, const char* name, const size_t name_length, char*** data,
                         size_t* n_strings, size_t** lengths);
SRError get_tensor_names(void* dataset, char*** data, size_t* n_strings, size_t** lengths);
SRError get_tensor_type(void* dataset, const char* name, size_t name_len, SRTensorType* ttype);
/** The tensor's dimensions. *dims NULL: they go to memory the dataset keeps; otherwise *dims is
 *  the caller's array of *ndims entries, and SRBadAllocError (with *ndims set to the rank) says
 *  it is too small. On return *ndims is the rank. */
SRError get_tensor_dims(void* dataset, const char* name, size_t name_len, size_t** dims,
                        size_t* ndims);
SRError get_metadata_field_names(void* dataset, char*** data, size_t* n_strings, size_t** lengths);
SRError get_metadata_field_type(void* dataset, const char* name, size_t name_len,
                                SRMetaDataType* mdtype);
/** A description of the dataset (kept by the dataset until the next call). */
const char* dataset_to_string(void* dataset);

#ifdef __cplusplus
}
#endif

#endif /* SMARTREDIS_C_DATASET_H */
