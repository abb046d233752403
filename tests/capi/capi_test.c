/* The C API against a real server, written in plain C99 so that it also proves the header
 * compiles as C. Covers every area of include/slipstream.h and its error paths.
 *
 * Usage: capi_test MODELS_DIR          (SLIPSTREAM_ADDRESS names a server, as with_server.sh sets)
 *        capi_test --auth PASSWORD     (the server requires PASSWORD: checks the auth errors)
 * MODELS_DIR holds scale.pt from tests/integration/models/make_models.py (x * 2 + 1).
 * Prints one line per failed check; exits 1 if any failed. */
#define _POSIX_C_SOURCE 200112L /* setenv, unsetenv */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slipstream.h"

#include "capi_checks.h"

/* ---- Helpers: values of every dtype from one formula ------------------------------------ */

static const slipstream_dtype_t kAllDtypes[] = {
    SLIPSTREAM_FLOAT32, SLIPSTREAM_FLOAT64, SLIPSTREAM_INT8,   SLIPSTREAM_INT16, SLIPSTREAM_INT32,
    SLIPSTREAM_INT64,   SLIPSTREAM_UINT8,   SLIPSTREAM_UINT16, SLIPSTREAM_BOOL};
#define DTYPE_COUNT (sizeof(kAllDtypes) / sizeof(kAllDtypes[0]))

/* Element `index` (row-major) of a test tensor: small integers every dtype can hold. */
static double test_value(slipstream_dtype_t dtype, size_t index) {
  if (dtype == SLIPSTREAM_BOOL) return (double)(index % 3 == 0);
  return (double)((index * 7 + 3) % 101);
}

static void store(void* buffer, slipstream_dtype_t dtype, size_t index, double value) {
  switch (dtype) {
    case SLIPSTREAM_FLOAT32:
      ((float*)buffer)[index] = (float)value;
      break;
    case SLIPSTREAM_FLOAT64:
      ((double*)buffer)[index] = value;
      break;
    case SLIPSTREAM_INT8:
      ((int8_t*)buffer)[index] = (int8_t)value;
      break;
    case SLIPSTREAM_INT16:
      ((int16_t*)buffer)[index] = (int16_t)value;
      break;
    case SLIPSTREAM_INT32:
      ((int32_t*)buffer)[index] = (int32_t)value;
      break;
    case SLIPSTREAM_INT64:
      ((int64_t*)buffer)[index] = (int64_t)value;
      break;
    case SLIPSTREAM_UINT8:
      ((uint8_t*)buffer)[index] = (uint8_t)value;
      break;
    case SLIPSTREAM_UINT16:
      ((uint16_t*)buffer)[index] = (uint16_t)value;
      break;
    case SLIPSTREAM_BOOL:
      ((uint8_t*)buffer)[index] = (uint8_t)(value != 0);
      break;
  }
}

static double load(const void* buffer, slipstream_dtype_t dtype, size_t index) {
  switch (dtype) {
    case SLIPSTREAM_FLOAT32:
      return ((const float*)buffer)[index];
    case SLIPSTREAM_FLOAT64:
      return ((const double*)buffer)[index];
    case SLIPSTREAM_INT8:
      return ((const int8_t*)buffer)[index];
    case SLIPSTREAM_INT16:
      return ((const int16_t*)buffer)[index];
    case SLIPSTREAM_INT32:
      return ((const int32_t*)buffer)[index];
    case SLIPSTREAM_INT64:
      return (double)((const int64_t*)buffer)[index];
    case SLIPSTREAM_UINT8:
      return ((const uint8_t*)buffer)[index];
    case SLIPSTREAM_UINT16:
      return ((const uint16_t*)buffer)[index];
    case SLIPSTREAM_BOOL:
      return ((const uint8_t*)buffer)[index];
  }
  return -1;
}

/* ---- Connections and their errors ---------------------------------------------------------- */

static slipstream_client_t* connect_or_die(void) {
  slipstream_client_t* client = NULL;
  slipstream_status_t status = slipstream_client_create(NULL, 0, &client);
  if (status != SLIPSTREAM_OK) {
    fprintf(stderr, "cannot connect (%s): %s\n", slipstream_status_name(status),
            slipstream_last_error());
    exit(1);
  }
  return client;
}

static void test_connection_errors(void) {
  slipstream_client_t* client = NULL;
  /* Nothing listens on port 1: a connection error naming the address. */
  EXPECT_STATUS(SLIPSTREAM_CONNECTION_ERROR,
                slipstream_client_create("tcp://127.0.0.1:1", NTS, &client));
  CHECK(client == NULL);
  CHECK(strstr(slipstream_last_error(), "127.0.0.1") != NULL);
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT, slipstream_client_create("bogus://x", NTS, &client));
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT, slipstream_client_create(NULL, 0, NULL));
  /* No address anywhere: the message says what to give, in words a C caller can act on. */
  {
    const char* saved = getenv("SLIPSTREAM_ADDRESS");
    char address[512] = "";
    if (saved != NULL) strncpy(address, saved, sizeof address - 1);
    unsetenv("SLIPSTREAM_ADDRESS");
    unsetenv("SSDB");
    EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT, slipstream_client_create(NULL, 0, &client));
    CHECK(strstr(slipstream_last_error(), "no server address") != NULL);
    CHECK(strstr(slipstream_last_error(), "SLIPSTREAM_ADDRESS or SSDB") != NULL);
    CHECK(strstr(slipstream_last_error(), "ClientOptions") == NULL);
    if (saved != NULL) setenv("SLIPSTREAM_ADDRESS", address, 1);
  }
  /* A NULL client handle is an argument error, not a crash. */
  int exists = 0;
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT, slipstream_tensor_exists(NULL, "x", NTS, &exists));
  CHECK(strstr(slipstream_last_error(), "client") != NULL);
  /* The message is cleared by the next successful call. */
  EXPECT_OK(slipstream_client_destroy(&client));
  CHECK(slipstream_last_error()[0] == '\0');
  CHECK(strcmp(slipstream_status_name(SLIPSTREAM_KEY_NOT_FOUND), "key not found") == 0);
  CHECK(slipstream_dtype_size(SLIPSTREAM_INT16) == 2);
  CHECK(slipstream_dtype_size((slipstream_dtype_t)42) == 0);
}

static void test_options(void) {
  slipstream_client_options_t options;
  EXPECT_OK(slipstream_client_options_init(&options));
  options.key_prefix_out = "member0";
  options.key_prefix_out_length = NTS;
  options.key_prefixes_in = "member0,member1";
  options.key_prefixes_in_length = NTS;
  options.command_timeout_ms = 10000;
  slipstream_client_t* client = NULL;
  EXPECT_OK(slipstream_client_create_with_options(&options, &client));
  if (client == NULL) return;
  const char* address = NULL;
  size_t address_length = 0;
  EXPECT_OK(slipstream_client_address(client, &address, &address_length));
  CHECK(address != NULL && address_length > 0 && strlen(address) == address_length);

  /* With prefixes, a tensor is stored as member0.t and read from member0 (the data source). */
  const float value = 1.5f;
  const int64_t shape[] = {1};
  EXPECT_OK(slipstream_put_tensor(client, "t", NTS, &value, shape, 1, SLIPSTREAM_FLOAT32,
                                  SLIPSTREAM_C_ORDER));
  int exists = 0;
  EXPECT_OK(slipstream_key_exists(client, "member0.t", NTS, &exists));
  CHECK(exists == 1);
  EXPECT_OK(slipstream_tensor_exists(client, "t", NTS, &exists));
  CHECK(exists == 1);
  EXPECT_OK(slipstream_set_data_source(client, "member1", NTS));
  EXPECT_OK(slipstream_tensor_exists(client, "t", NTS, &exists));
  CHECK(exists == 0);
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT, slipstream_set_data_source(client, "nobody", NTS));
  EXPECT_OK(slipstream_use_tensor_ensemble_prefix(client, 0));
  EXPECT_OK(slipstream_tensor_exists(client, "member0.t", NTS, &exists));
  CHECK(exists == 1);
  EXPECT_OK(slipstream_use_dataset_ensemble_prefix(client, 0));
  EXPECT_OK(slipstream_use_list_ensemble_prefix(client, 0));
  int enabled = 1;
  EXPECT_OK(slipstream_model_ensemble_prefix_enabled(client, &enabled));
  CHECK(enabled == 0);
  EXPECT_OK(slipstream_use_model_ensemble_prefix(client, 1));
  EXPECT_OK(slipstream_model_ensemble_prefix_enabled(client, &enabled));
  CHECK(enabled == 1);
  EXPECT_OK(slipstream_delete_tensor(client, "member0.t", NTS, NULL));
  EXPECT_OK(slipstream_client_destroy(&client));
  CHECK(client == NULL);
}

/* ---- Tensors --------------------------------------------------------------------------------- */

/* Every dtype, in C and Fortran order, through put / unpack / get. */
static void test_tensor_dtypes(slipstream_client_t* client) {
  const int64_t shape[] = {3, 4, 2};
  const size_t count = 24;
  for (size_t d = 0; d < DTYPE_COUNT; ++d) {
    const slipstream_dtype_t dtype = kAllDtypes[d];
    const size_t bytes = count * slipstream_dtype_size(dtype);
    unsigned char* row_major = malloc(bytes);
    unsigned char* column_major = malloc(bytes);
    unsigned char* out = malloc(bytes);
    /* row_major[i][j][k] = value(i*8 + j*2 + k); column_major holds the same logical array. */
    for (size_t i = 0; i < 3; ++i) {
      for (size_t j = 0; j < 4; ++j) {
        for (size_t k = 0; k < 2; ++k) {
          const double v = test_value(dtype, i * 8 + j * 2 + k);
          store(row_major, dtype, i * 8 + j * 2 + k, v);
          store(column_major, dtype, i + 3 * j + 12 * k, v);
        }
      }
    }
    EXPECT_OK(slipstream_put_tensor(client, "capi.c", NTS, row_major, shape, 3, dtype,
                                    SLIPSTREAM_C_ORDER));
    EXPECT_OK(slipstream_put_tensor(client, "capi.f", NTS, column_major, shape, 3, dtype,
                                    SLIPSTREAM_FORTRAN_ORDER));
    /* Both are the same logical tensor: read either in either order. */
    EXPECT_OK(slipstream_unpack_tensor(client, "capi.f", NTS, out, bytes, shape, 3, dtype,
                                       SLIPSTREAM_C_ORDER));
    CHECK(memcmp(out, row_major, bytes) == 0);
    EXPECT_OK(slipstream_unpack_tensor(client, "capi.c", NTS, out, bytes, NULL, 0, dtype,
                                       SLIPSTREAM_FORTRAN_ORDER));
    CHECK(memcmp(out, column_major, bytes) == 0);
    /* Compressed (lossless): stored compressed, read back exactly in either order. */
    EXPECT_OK(slipstream_put_tensor_compressed(client, "capi.zstd", NTS, column_major, shape, 3,
                                               dtype, SLIPSTREAM_FORTRAN_ORDER, "zstd", NTS,
                                               "level=9", NTS));
    EXPECT_OK(slipstream_put_tensor_compressed(client, "capi.blosc", NTS, row_major, shape, 3,
                                               dtype, SLIPSTREAM_C_ORDER, "blosc", NTS,
                                               "clevel = 5, compressor = lz4", NTS));
    memset(out, 0, bytes);
    EXPECT_OK(slipstream_unpack_tensor(client, "capi.zstd", NTS, out, bytes, shape, 3, dtype,
                                       SLIPSTREAM_C_ORDER));
    CHECK(memcmp(out, row_major, bytes) == 0);
    memset(out, 0, bytes);
    EXPECT_OK(slipstream_unpack_tensor(client, "capi.blosc", NTS, out, bytes, shape, 3, dtype,
                                       SLIPSTREAM_FORTRAN_ORDER));
    CHECK(memcmp(out, column_major, bytes) == 0);

    slipstream_tensor_t* tensor = NULL;
    EXPECT_OK(slipstream_get_tensor(client, "capi.f", NTS, &tensor));
    if (tensor != NULL) {
      slipstream_dtype_t got_dtype;
      const int64_t* got_shape = NULL;
      size_t rank = 0, got_bytes = 0;
      const void* data = NULL;
      EXPECT_OK(slipstream_tensor_dtype(tensor, &got_dtype));
      EXPECT_OK(slipstream_tensor_shape(tensor, &got_shape, &rank));
      EXPECT_OK(slipstream_tensor_data(tensor, &data, &got_bytes));
      CHECK(got_dtype == dtype);
      CHECK(rank == 3 && got_shape[0] == 3 && got_shape[1] == 4 && got_shape[2] == 2);
      CHECK(got_bytes == bytes && memcmp(data, row_major, bytes) == 0);
      CHECK(load(data, dtype, 1 * 8 + 2 * 2 + 1) == test_value(dtype, 13));
      EXPECT_OK(slipstream_tensor_copy_to(tensor, out, bytes, dtype, SLIPSTREAM_FORTRAN_ORDER));
      CHECK(memcmp(out, column_major, bytes) == 0);
      EXPECT_STATUS(SLIPSTREAM_BUFFER_TOO_SMALL,
                    slipstream_tensor_copy_to(tensor, out, bytes - 1, dtype, SLIPSTREAM_C_ORDER));
      EXPECT_OK(slipstream_tensor_destroy(&tensor));
      CHECK(tensor == NULL);
    }
    free(row_major);
    free(column_major);
    free(out);
  }
  /* A scalar (rank 0). */
  const int64_t answer = 42;
  int64_t back = 0;
  EXPECT_OK(slipstream_put_tensor(client, "capi.scalar", NTS, &answer, NULL, 0, SLIPSTREAM_INT64,
                                  SLIPSTREAM_C_ORDER));
  EXPECT_OK(slipstream_unpack_tensor(client, "capi.scalar", NTS, &back, sizeof back, NULL, 0,
                                     SLIPSTREAM_INT64, SLIPSTREAM_C_ORDER));
  CHECK(back == 42);
  /* zfp within its accuracy; operators that do not fit, or badly written, are refused. */
  double field[64], decoded[64];
  const int64_t field_shape[] = {8, 8};
  for (size_t i = 0; i < 64; ++i) field[i] = (double)(i % 8) * 0.37 - (double)(i / 8) * 0.11;
  EXPECT_OK(slipstream_put_tensor_compressed(client, "capi.zfp", NTS, field, field_shape, 2,
                                             SLIPSTREAM_FLOAT64, SLIPSTREAM_C_ORDER, "zfp", NTS,
                                             "accuracy=1e-6", NTS));
  EXPECT_OK(slipstream_unpack_tensor(client, "capi.zfp", NTS, decoded, sizeof decoded,
                                     field_shape, 2, SLIPSTREAM_FLOAT64, SLIPSTREAM_C_ORDER));
  for (size_t i = 0; i < 64; ++i) {
    const double error = decoded[i] > field[i] ? decoded[i] - field[i] : field[i] - decoded[i];
    CHECK(error <= 1e-6);
  }
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                slipstream_put_tensor_compressed(client, "capi.bad", NTS, &answer, NULL, 0,
                                                 SLIPSTREAM_INT64, SLIPSTREAM_C_ORDER, "zfp", NTS,
                                                 "rate=8", NTS));
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                slipstream_put_tensor_compressed(client, "capi.bad", NTS, field, field_shape, 2,
                                                 SLIPSTREAM_FLOAT64, SLIPSTREAM_C_ORDER, "zstd",
                                                 NTS, "level", NTS));
  CHECK(strstr(slipstream_last_error(), "not name=value") != NULL);
}

static void test_tensor_errors(slipstream_client_t* client) {
  const int64_t shape[] = {2, 3};
  const float values[6] = {1, 2, 3, 4, 5, 6};
  float out[6];
  double wide[6];
  EXPECT_OK(slipstream_put_tensor(client, "capi.err", NTS, values, shape, 2, SLIPSTREAM_FLOAT32,
                                  SLIPSTREAM_C_ORDER));
  /* Missing key. */
  EXPECT_STATUS(SLIPSTREAM_KEY_NOT_FOUND,
                slipstream_unpack_tensor(client, "capi.missing", NTS, out, sizeof out, NULL, 0,
                                         SLIPSTREAM_FLOAT32, SLIPSTREAM_C_ORDER));
  CHECK(strstr(slipstream_last_error(), "capi.missing") != NULL);
  slipstream_tensor_t* tensor = NULL;
  EXPECT_STATUS(SLIPSTREAM_KEY_NOT_FOUND,
                slipstream_get_tensor(client, "capi.missing", NTS, &tensor));
  CHECK(tensor == NULL);
  /* Wrong dtype requested: the message names both types. */
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                slipstream_unpack_tensor(client, "capi.err", NTS, wide, sizeof wide, NULL, 0,
                                         SLIPSTREAM_FLOAT64, SLIPSTREAM_C_ORDER));
  CHECK(strstr(slipstream_last_error(), "FLOAT") != NULL);
  /* Buffer too small. */
  EXPECT_STATUS(SLIPSTREAM_BUFFER_TOO_SMALL,
                slipstream_unpack_tensor(client, "capi.err", NTS, out, sizeof out - 1, NULL, 0,
                                         SLIPSTREAM_FLOAT32, SLIPSTREAM_C_ORDER));
  /* Wrong expected shape. */
  const int64_t other_shape[] = {3, 2};
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                slipstream_unpack_tensor(client, "capi.err", NTS, out, sizeof out, other_shape, 2,
                                         SLIPSTREAM_FLOAT32, SLIPSTREAM_C_ORDER));
  /* Bad arguments caught before anything is sent. */
  const int64_t bad_shape[] = {2, 0};
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                slipstream_put_tensor(client, "capi.bad", NTS, values, bad_shape, 2,
                                      SLIPSTREAM_FLOAT32, SLIPSTREAM_C_ORDER));
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                slipstream_put_tensor(client, "capi.bad", NTS, values, shape, 2,
                                      (slipstream_dtype_t)99, SLIPSTREAM_C_ORDER));
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                slipstream_put_tensor(client, "capi.bad", NTS, values, shape, 2, SLIPSTREAM_FLOAT32,
                                      (slipstream_memory_order_t)7));
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                slipstream_put_tensor(client, NULL, 5, values, shape, 2, SLIPSTREAM_FLOAT32,
                                      SLIPSTREAM_C_ORDER));
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                slipstream_put_tensor(client, "capi.bad", NTS, NULL, shape, 2, SLIPSTREAM_FLOAT32,
                                      SLIPSTREAM_C_ORDER));
  /* A key of another kind. */
  EXPECT_OK(slipstream_put_bytes(client, "capi.plain", NTS, "text", 4));
  EXPECT_STATUS(SLIPSTREAM_WRONG_TYPE, slipstream_get_tensor(client, "capi.plain", NTS, &tensor));
}

static void test_tensor_management(slipstream_client_t* client) {
  const int32_t values[4] = {1, 2, 3, 4};
  const int64_t shape[] = {4};
  int32_t out[4];
  int flag = -1;
  EXPECT_OK(slipstream_put_tensor(client, "capi.m", NTS, values, shape, 1, SLIPSTREAM_INT32,
                                  SLIPSTREAM_C_ORDER));
  EXPECT_OK(slipstream_copy_tensor(client, "capi.m", NTS, "capi.m2", NTS));
  EXPECT_OK(slipstream_rename_tensor(client, "capi.m2", NTS, "capi.m3", NTS));
  EXPECT_OK(slipstream_tensor_exists(client, "capi.m2", NTS, &flag));
  CHECK(flag == 0);
  EXPECT_OK(slipstream_unpack_tensor(client, "capi.m3", NTS, out, sizeof out, shape, 1,
                                     SLIPSTREAM_INT32, SLIPSTREAM_C_ORDER));
  CHECK(memcmp(out, values, sizeof out) == 0);
  EXPECT_OK(slipstream_poll_tensor(client, "capi.m3", NTS, 10, 3, &flag));
  CHECK(flag == 1);
  EXPECT_OK(slipstream_poll_tensor(client, "capi.never", NTS, 10, 2, &flag));
  CHECK(flag == 0);
  EXPECT_OK(slipstream_delete_tensor(client, "capi.m3", NTS, &flag));
  CHECK(flag == 1);
  EXPECT_OK(slipstream_delete_tensor(client, "capi.m3", NTS, &flag));
  CHECK(flag == 0);
  EXPECT_STATUS(SLIPSTREAM_KEY_NOT_FOUND,
                slipstream_rename_tensor(client, "capi.m3", NTS, "capi.m4", NTS));
  EXPECT_STATUS(SLIPSTREAM_KEY_NOT_FOUND,
                slipstream_copy_tensor(client, "capi.m3", NTS, "capi.m4", NTS));

  /* Batches: binary-safe names with explicit lengths (an embedded NUL). */
  const double a[2] = {0.5, 1.5};
  const int64_t a_shape[] = {2};
  const slipstream_tensor_ref_t refs[2] = {
      {"capi.b1", 7, values, shape, 1, SLIPSTREAM_INT32, SLIPSTREAM_C_ORDER},
      {"capi.b\0two", 10, a, a_shape, 1, SLIPSTREAM_FLOAT64, SLIPSTREAM_C_ORDER}};
  EXPECT_OK(slipstream_put_tensors(client, refs, 2));
  const char* names[2] = {"capi.b1", "capi.b\0two"};
  const size_t lengths[2] = {7, 10};
  slipstream_tensor_t* got[2] = {NULL, NULL};
  EXPECT_OK(slipstream_get_tensors(client, names, lengths, 2, got));
  if (got[0] != NULL && got[1] != NULL) {
    const void* data = NULL;
    EXPECT_OK(slipstream_tensor_data(got[1], &data, NULL));
    CHECK(((const double*)data)[1] == 1.5);
  }
  EXPECT_OK(slipstream_tensor_destroy(&got[0]));
  EXPECT_OK(slipstream_tensor_destroy(&got[1]));
  const char* with_missing[2] = {"capi.b1", "capi.nothing"};
  got[0] = NULL;
  EXPECT_STATUS(SLIPSTREAM_KEY_NOT_FOUND,
                slipstream_get_tensors(client, with_missing, NULL, 2, got));
  CHECK(got[0] == NULL);
}

/* ---- Raw keys and waits ------------------------------------------------------------------------
 */

static void test_raw_keys(slipstream_client_t* client) {
  const char binary[5] = {'a', '\0', 'b', '\n', 'c'};
  char* back = NULL;
  size_t length = 0;
  int flag = -1;
  EXPECT_OK(slipstream_put_bytes(client, "capi.raw", NTS, binary, sizeof binary));
  EXPECT_OK(slipstream_get_bytes(client, "capi.raw", NTS, &back, &length));
  CHECK(back != NULL && length == 5 && memcmp(back, binary, 5) == 0 && back[5] == '\0');
  slipstream_free(back);
  back = NULL;
  EXPECT_STATUS(SLIPSTREAM_KEY_NOT_FOUND,
                slipstream_get_bytes(client, "capi.noraw", NTS, &back, &length));
  CHECK(back == NULL);
  EXPECT_OK(slipstream_key_exists(client, "capi.raw", NTS, &flag));
  CHECK(flag == 1);
  EXPECT_OK(slipstream_poll_key(client, "capi.raw", NTS, 5, 2, &flag));
  CHECK(flag == 1);
  const char* keys[2] = {"capi.raw", "capi.raw2"};
  EXPECT_OK(slipstream_wait_for_keys(client, keys, NULL, 2, 0, &flag));
  CHECK(flag == 0);
  EXPECT_OK(slipstream_put_bytes(client, "capi.raw2", NTS, "", 0));
  EXPECT_OK(slipstream_wait_for_keys(client, keys, NULL, 2, 1000, &flag));
  CHECK(flag == 1);
  EXPECT_OK(slipstream_delete_bytes(client, "capi.raw2", NTS, &flag));
  CHECK(flag == 1);
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                slipstream_wait_for_keys(client, NULL, NULL, 2, 0, &flag));
}

/* ---- Datasets and lists ------------------------------------------------------------------------
 */

static slipstream_dataset_t* make_dataset(const char* name, int64_t step) {
  slipstream_dataset_t* dataset = NULL;
  EXPECT_OK(slipstream_dataset_create(name, NTS, &dataset));
  if (dataset == NULL) return NULL;
  /* A 2 x 3 field given in Fortran order: a(i+1, j+1) = 10 i + j. */
  float field[6];
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) field[i + 2 * j] = (float)(10 * i + j);
  }
  const int64_t shape[] = {2, 3};
  EXPECT_OK(slipstream_dataset_add_tensor(dataset, "field", NTS, field, shape, 2,
                                          SLIPSTREAM_FLOAT32, SLIPSTREAM_FORTRAN_ORDER));
  const int16_t ids[3] = {7, 8, 9};
  const int64_t ids_shape[] = {3};
  EXPECT_OK(slipstream_dataset_add_tensor(dataset, "ids", NTS, ids, ids_shape, 1, SLIPSTREAM_INT16,
                                          SLIPSTREAM_C_ORDER));
  const double time = 0.125;
  const float ratio = 0.5f;
  const int32_t small = -3;
  const uint32_t usmall = 3;
  const uint64_t ubig = 18446744073709551615ULL;
  EXPECT_OK(
      slipstream_dataset_add_meta_scalar(dataset, "time", NTS, &time, SLIPSTREAM_META_DOUBLE));
  EXPECT_OK(slipstream_dataset_add_meta_scalar(dataset, "step", NTS, &step, SLIPSTREAM_META_INT64));
  EXPECT_OK(slipstream_dataset_add_meta_scalar(dataset, "step", NTS, &step, SLIPSTREAM_META_INT64));
  EXPECT_OK(
      slipstream_dataset_add_meta_scalar(dataset, "ratio", NTS, &ratio, SLIPSTREAM_META_FLOAT));
  EXPECT_OK(
      slipstream_dataset_add_meta_scalar(dataset, "small", NTS, &small, SLIPSTREAM_META_INT32));
  EXPECT_OK(
      slipstream_dataset_add_meta_scalar(dataset, "usmall", NTS, &usmall, SLIPSTREAM_META_UINT32));
  EXPECT_OK(
      slipstream_dataset_add_meta_scalar(dataset, "ubig", NTS, &ubig, SLIPSTREAM_META_UINT64));
  EXPECT_OK(slipstream_dataset_add_meta_string(dataset, "model", NTS, "ocean", NTS));
  EXPECT_OK(slipstream_dataset_add_meta_string(dataset, "model", NTS, "bin\0ary", 7));
  return dataset;
}

static void check_dataset(const slipstream_dataset_t* dataset, int64_t step) {
  const char* name = NULL;
  size_t count = 0, length = 0;
  EXPECT_OK(slipstream_dataset_name(dataset, &name, &length));
  EXPECT_OK(slipstream_dataset_tensor_count(dataset, &count));
  CHECK(count == 2);
  char* text = NULL;
  EXPECT_OK(slipstream_dataset_tensor_name(dataset, 1, &text, &length));
  CHECK(text != NULL && strcmp(text, "ids") == 0 && length == 3);
  slipstream_free(text);
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                slipstream_dataset_tensor_name(dataset, 2, &text, &length));
  int has = 0;
  EXPECT_OK(slipstream_dataset_has_tensor(dataset, "field", NTS, &has));
  CHECK(has == 1);

  /* The field reads back in C order as [i][j] == a(i+1, j+1) = 10 i + j. */
  float field[6];
  const int64_t shape[] = {2, 3};
  EXPECT_OK(slipstream_dataset_unpack_tensor(dataset, "field", NTS, field, sizeof field, shape, 2,
                                             SLIPSTREAM_FLOAT32, SLIPSTREAM_C_ORDER));
  CHECK(field[0 * 3 + 2] == 2.0f && field[1 * 3 + 1] == 11.0f);
  const slipstream_tensor_t* borrowed = NULL;
  EXPECT_OK(slipstream_dataset_get_tensor(dataset, "ids", NTS, &borrowed));
  if (borrowed != NULL) {
    const void* data = NULL;
    EXPECT_OK(slipstream_tensor_data(borrowed, &data, NULL));
    CHECK(((const int16_t*)data)[2] == 9);
  }
  EXPECT_STATUS(SLIPSTREAM_KEY_NOT_FOUND,
                slipstream_dataset_get_tensor(dataset, "nothing", NTS, &borrowed));
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                slipstream_dataset_unpack_tensor(dataset, "ids", NTS, field, sizeof field, NULL, 0,
                                                 SLIPSTREAM_INT32, SLIPSTREAM_C_ORDER));
  EXPECT_STATUS(SLIPSTREAM_BUFFER_TOO_SMALL,
                slipstream_dataset_unpack_tensor(dataset, "field", NTS, field, 5, NULL, 0,
                                                 SLIPSTREAM_FLOAT32, SLIPSTREAM_C_ORDER));

  int64_t steps[4] = {0, 0, 0, 0};
  EXPECT_OK(slipstream_dataset_get_meta_scalars(dataset, "step", NTS, SLIPSTREAM_META_INT64, steps,
                                                4, &count));
  CHECK(count == 2 && steps[0] == step && steps[1] == step);
  EXPECT_STATUS(SLIPSTREAM_BUFFER_TOO_SMALL,
                slipstream_dataset_get_meta_scalars(dataset, "step", NTS, SLIPSTREAM_META_INT64,
                                                    steps, 1, &count));
  CHECK(count == 2);
  double time = 0;
  EXPECT_OK(slipstream_dataset_get_meta_scalars(dataset, "time", NTS, SLIPSTREAM_META_DOUBLE, &time,
                                                1, &count));
  CHECK(time == 0.125);
  uint64_t ubig = 0;
  EXPECT_OK(slipstream_dataset_get_meta_scalars(dataset, "ubig", NTS, SLIPSTREAM_META_UINT64, &ubig,
                                                1, &count));
  CHECK(ubig == 18446744073709551615ULL);
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                slipstream_dataset_get_meta_scalars(dataset, "time", NTS, SLIPSTREAM_META_FLOAT,
                                                    &time, 1, &count));
  EXPECT_STATUS(SLIPSTREAM_KEY_NOT_FOUND,
                slipstream_dataset_get_meta_scalars(dataset, "nofield", NTS, SLIPSTREAM_META_DOUBLE,
                                                    &time, 1, &count));
  EXPECT_OK(slipstream_dataset_get_meta_string_count(dataset, "model", NTS, &count));
  CHECK(count == 2);
  EXPECT_OK(slipstream_dataset_get_meta_string(dataset, "model", NTS, 1, &text, &length));
  CHECK(text != NULL && length == 7 && memcmp(text, "bin\0ary", 7) == 0);
  slipstream_free(text);
  slipstream_meta_type_t type;
  EXPECT_OK(slipstream_dataset_field_type(dataset, "ratio", NTS, &type));
  CHECK(type == SLIPSTREAM_META_FLOAT);
  EXPECT_OK(slipstream_dataset_field_count(dataset, &count));
  CHECK(count == 7);
  EXPECT_OK(slipstream_dataset_field_name(dataset, 0, &text, NULL));
  CHECK(text != NULL && strcmp(text, "time") == 0);
  slipstream_free(text);
}

static void test_datasets(slipstream_client_t* client) {
  slipstream_dataset_t* dataset = make_dataset("capi.ds", 42);
  if (dataset == NULL) return;
  check_dataset(dataset, 42);
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                slipstream_dataset_add_meta_string(dataset, "time", NTS, "x", NTS));
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                slipstream_dataset_add_meta_scalar(dataset, "x", NTS, "x", SLIPSTREAM_META_STRING));
  EXPECT_OK(slipstream_put_dataset(client, dataset));

  int flag = 0;
  EXPECT_OK(slipstream_dataset_exists(client, "capi.ds", NTS, &flag));
  CHECK(flag == 1);
  EXPECT_OK(slipstream_poll_dataset(client, "capi.ds", NTS, 5, 2, &flag));
  CHECK(flag == 1);
  slipstream_dataset_t* back = NULL;
  EXPECT_OK(slipstream_get_dataset(client, "capi.ds", NTS, &back));
  if (back != NULL) check_dataset(back, 42);
  EXPECT_OK(slipstream_dataset_destroy(&back));
  CHECK(back == NULL);

  EXPECT_OK(slipstream_copy_dataset(client, "capi.ds", NTS, "capi.ds2", NTS));
  EXPECT_OK(slipstream_rename_dataset(client, "capi.ds2", NTS, "capi.ds3", NTS));
  EXPECT_OK(slipstream_dataset_exists(client, "capi.ds2", NTS, &flag));
  CHECK(flag == 0);
  EXPECT_OK(slipstream_get_dataset(client, "capi.ds3", NTS, &back));
  if (back != NULL) check_dataset(back, 42);
  EXPECT_OK(slipstream_dataset_destroy(&back));
  EXPECT_OK(slipstream_delete_dataset(client, "capi.ds3", NTS));
  EXPECT_STATUS(SLIPSTREAM_KEY_NOT_FOUND, slipstream_get_dataset(client, "capi.ds3", NTS, &back));
  EXPECT_STATUS(SLIPSTREAM_KEY_NOT_FOUND, slipstream_delete_dataset(client, "capi.ds3", NTS));
  EXPECT_OK(slipstream_dataset_clear_field(dataset, "time", NTS));
  EXPECT_OK(slipstream_dataset_has_field(dataset, "time", NTS, &flag));
  CHECK(flag == 0);
  EXPECT_OK(slipstream_dataset_destroy(&dataset));
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT, slipstream_dataset_create("", 0, &dataset));
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT, slipstream_put_dataset(client, NULL));
}

static void test_lists(slipstream_client_t* client) {
  int64_t length = -1;
  int reached = 0;
  for (int64_t step = 0; step < 3; ++step) {
    char name[32];
    snprintf(name, sizeof name, "capi.step%d", (int)step);
    slipstream_dataset_t* dataset = make_dataset(name, step);
    if (dataset == NULL) return;
    EXPECT_OK(slipstream_put_dataset(client, dataset));
    EXPECT_OK(slipstream_append_to_list(client, "capi.list", NTS, dataset));
    EXPECT_OK(slipstream_dataset_destroy(&dataset));
  }
  EXPECT_OK(slipstream_get_list_length(client, "capi.list", NTS, &length));
  CHECK(length == 3);
  EXPECT_OK(slipstream_poll_list_length(client, "capi.list", NTS, 3, 5, 2, &reached));
  CHECK(reached == 1);
  EXPECT_OK(slipstream_poll_list_length_gte(client, "capi.list", NTS, 2, 5, 2, &reached));
  CHECK(reached == 1);
  EXPECT_OK(slipstream_poll_list_length_lte(client, "capi.list", NTS, 1, 5, 2, &reached));
  CHECK(reached == 0);
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                slipstream_poll_list_length(client, "capi.list", NTS, -1, 5, 2, &reached));

  slipstream_dataset_t** datasets = NULL;
  size_t count = 0;
  EXPECT_OK(slipstream_get_datasets_from_list(client, "capi.list", NTS, &datasets, &count));
  CHECK(count == 3);
  for (size_t i = 0; i < count && datasets != NULL; ++i) check_dataset(datasets[i], (int64_t)i);
  EXPECT_OK(slipstream_dataset_array_destroy(&datasets, count));
  CHECK(datasets == NULL);
  EXPECT_OK(slipstream_get_dataset_list_range(client, "capi.list", NTS, -2, -1, &datasets, &count));
  CHECK(count == 2);
  if (datasets != NULL && count == 2) check_dataset(datasets[0], 1);
  EXPECT_OK(slipstream_dataset_array_destroy(&datasets, count));

  EXPECT_OK(slipstream_copy_list(client, "capi.list", NTS, "capi.list2", NTS));
  EXPECT_OK(slipstream_rename_list(client, "capi.list2", NTS, "capi.list3", NTS));
  EXPECT_OK(slipstream_get_list_length(client, "capi.list3", NTS, &length));
  CHECK(length == 3);
  EXPECT_OK(slipstream_delete_list(client, "capi.list3", NTS));
  EXPECT_OK(slipstream_get_list_length(client, "capi.list3", NTS, &length));
  CHECK(length == 0);
  EXPECT_STATUS(SLIPSTREAM_KEY_NOT_FOUND,
                slipstream_copy_list(client, "capi.list3", NTS, "capi.list4", NTS));
  EXPECT_OK(slipstream_get_datasets_from_list(client, "capi.nolist", NTS, &datasets, &count));
  CHECK(count == 0 && datasets == NULL);
}

/* ---- Models and scripts ------------------------------------------------------------------------
 */

static const char kScript[] =
    "def add_two(a, b):\n"
    "    return a + b\n"
    "\n"
    "def scale(tensors: List[Tensor], keys: List[str], args: List[str]):\n"
    "    return tensors[0] * float(args[0]), tensors[1] + float(len(keys))\n";

static void test_models(slipstream_client_t* client, const char* models_dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/scale.pt", models_dir);
  const float x[6] = {0, 1, 2, 3, 4, 5};
  const int64_t shape[] = {2, 3};
  float y[6];
  int flag = 0;

  slipstream_model_options_t options;
  EXPECT_OK(slipstream_model_options_init(&options));
  options.tag = "v1";
  options.tag_length = NTS;
  EXPECT_OK(slipstream_set_model_from_file(client, "capi.scale", NTS, path, NTS, NULL, 0, NULL, 0,
                                           &options));
  EXPECT_OK(slipstream_model_exists(client, "capi.scale", NTS, &flag));
  CHECK(flag == 1);
  EXPECT_OK(slipstream_put_tensor(client, "capi.x", NTS, x, shape, 2, SLIPSTREAM_FLOAT32,
                                  SLIPSTREAM_C_ORDER));
  const char* inputs[] = {"capi.x"};
  const char* outputs[] = {"capi.y"};
  EXPECT_OK(slipstream_run_model(client, "capi.scale", NTS, inputs, NULL, 1, outputs, NULL, 1, 0));
  EXPECT_OK(slipstream_unpack_tensor(client, "capi.y", NTS, y, sizeof y, shape, 2,
                                     SLIPSTREAM_FLOAT32, SLIPSTREAM_C_ORDER));
  for (int i = 0; i < 6; ++i) CHECK(y[i] == x[i] * 2 + 1);

  /* The same model exported to ONNX, stored with backend ONNX. */
  {
    char onnx_path[4096];
    float z[6];
    snprintf(onnx_path, sizeof onnx_path, "%s/scale.onnx", models_dir);
    EXPECT_OK(slipstream_set_model_from_file(client, "capi.scale_onnx", NTS, onnx_path, NTS,
                                             "ONNX", NTS, "CPU", NTS, NULL));
    const char* onnx_outputs[] = {"capi.z"};
    EXPECT_OK(slipstream_run_model(client, "capi.scale_onnx", NTS, inputs, NULL, 1, onnx_outputs,
                                   NULL, 1, 0));
    EXPECT_OK(slipstream_unpack_tensor(client, "capi.z", NTS, z, sizeof z, shape, 2,
                                       SLIPSTREAM_FLOAT32, SLIPSTREAM_C_ORDER));
    for (int i = 0; i < 6; ++i) CHECK(z[i] == x[i] * 2 + 1);
  }

  /* One round trip: put, run, get. */
  const slipstream_tensor_ref_t in = {"capi.x2",         NTS, x, shape, 2, SLIPSTREAM_FLOAT32,
                                      SLIPSTREAM_C_ORDER};
  const char* outputs2[] = {"capi.y2"};
  slipstream_tensor_t* result = NULL;
  EXPECT_OK(
      slipstream_run_model_on(client, "capi.scale", NTS, &in, 1, outputs2, NULL, 1, 5000, &result));
  if (result != NULL) {
    EXPECT_OK(
        slipstream_tensor_copy_to(result, y, sizeof y, SLIPSTREAM_FLOAT32, SLIPSTREAM_C_ORDER));
    CHECK(y[5] == 11.0f);
  }
  EXPECT_OK(slipstream_tensor_destroy(&result));

  slipstream_model_info_t info;
  EXPECT_OK(slipstream_model_info(client, "capi.scale", NTS, &info));
  CHECK(strcmp(info.type, "MODEL") == 0 && strcmp(info.tag, "v1") == 0 && info.calls == 2);
  EXPECT_OK(slipstream_model_info_clear(&info));
  EXPECT_OK(slipstream_reset_model_stats(client, "capi.scale", NTS));

  char* blob = NULL;
  size_t length = 0;
  EXPECT_OK(slipstream_get_model(client, "capi.scale", NTS, &blob, &length));
  CHECK(blob != NULL && length > 100);
  /* The same bytes stored again under another name work the same way. */
  EXPECT_OK(slipstream_set_model(client, "capi.scale2", NTS, blob, length, "TORCH", NTS, "CPU", NTS,
                                 NULL));
  /* Version 2 of capi.scale2 keeps version 1: a run can pin it and says which version ran. */
  slipstream_model_options_t keep;
  EXPECT_OK(slipstream_model_options_init(&keep));
  keep.keep_versions = 1;
  EXPECT_OK(slipstream_set_model(client, "capi.scale2", NTS, blob, length, NULL, 0, NULL, 0, &keep));
  uint64_t ran = 0;
  EXPECT_OK(slipstream_run_model_version(client, "capi.scale2", NTS, inputs, NULL, 1, outputs, NULL,
                                         1, 0, 1, &ran));
  CHECK(ran == 1);
  EXPECT_OK(slipstream_run_model_version(client, "capi.scale2", NTS, inputs, NULL, 1, outputs, NULL,
                                         1, 0, 0, &ran));
  CHECK(ran == 2);
  EXPECT_STATUS(SLIPSTREAM_SERVER_ERROR,
                slipstream_run_model_version(client, "capi.scale2", NTS, inputs, NULL, 1, outputs,
                                             NULL, 1, 0, 7, &ran));
  ran = 0;
  EXPECT_OK(slipstream_run_model_on_version(client, "capi.scale2", NTS, &in, 1, outputs2, NULL, 1,
                                            0, 1, &ran, &result));
  CHECK(ran == 1 && result != NULL);
  EXPECT_OK(slipstream_tensor_destroy(&result));
  slipstream_free(blob);
  int64_t chunk = 0;
  EXPECT_OK(slipstream_get_model_chunk_size(client, &chunk));
  CHECK(chunk > 0);

  /* Errors: a missing model, a missing input, a bad blob, a bad timeout. */
  EXPECT_STATUS(SLIPSTREAM_KEY_NOT_FOUND, slipstream_run_model(client, "capi.nomodel", NTS, inputs,
                                                               NULL, 1, outputs, NULL, 1, 0));
  const char* missing[] = {"capi.nox"};
  EXPECT_STATUS(SLIPSTREAM_KEY_NOT_FOUND, slipstream_run_model(client, "capi.scale", NTS, missing,
                                                               NULL, 1, outputs, NULL, 1, 0));
  EXPECT_STATUS(
      SLIPSTREAM_SERVER_ERROR,
      slipstream_set_model(client, "capi.bad", NTS, "not a model", 11, NULL, 0, NULL, 0, NULL));
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT, slipstream_run_model(client, "capi.scale", NTS, inputs,
                                                                  NULL, 1, outputs, NULL, 1, -5));
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                slipstream_set_model_from_file(client, "capi.nofile", NTS, "/no/such/file.pt", NTS,
                                               NULL, 0, NULL, 0, NULL));
  EXPECT_STATUS(SLIPSTREAM_KEY_NOT_FOUND,
                slipstream_get_model(client, "capi.nomodel", NTS, &blob, &length));
  EXPECT_OK(slipstream_delete_model(client, "capi.scale", NTS, &flag));
  CHECK(flag == 1);
  EXPECT_OK(slipstream_delete_model(client, "capi.scale", NTS, &flag));
  CHECK(flag == 0);
  EXPECT_OK(slipstream_delete_model(client, "capi.scale2", NTS, NULL));

  /* Scripts in both forms. */
  const float a[3] = {1, 2, 3}, b[3] = {10, 20, 30};
  const int64_t vshape[] = {3};
  float out[3];
  EXPECT_OK(slipstream_put_tensor(client, "capi.a", NTS, a, vshape, 1, SLIPSTREAM_FLOAT32,
                                  SLIPSTREAM_C_ORDER));
  EXPECT_OK(slipstream_put_tensor(client, "capi.b", NTS, b, vshape, 1, SLIPSTREAM_FLOAT32,
                                  SLIPSTREAM_C_ORDER));
  EXPECT_OK(
      slipstream_set_script(client, "capi.script", NTS, NULL, 0, kScript, NTS, NULL, NULL, 0));
  char* source = NULL;
  EXPECT_OK(slipstream_get_script(client, "capi.script", NTS, &source, &length));
  CHECK(source != NULL && strcmp(source, kScript) == 0);
  slipstream_free(source);
  const char* ab[] = {"capi.a", "capi.b"};
  const char* sum[] = {"capi.sum"};
  EXPECT_OK(slipstream_run_script(client, "capi.script", NTS, "add_two", NTS, ab, NULL, 2, sum,
                                  NULL, 1, 0));
  EXPECT_OK(slipstream_unpack_tensor(client, "capi.sum", NTS, out, sizeof out, NULL, 0,
                                     SLIPSTREAM_FLOAT32, SLIPSTREAM_C_ORDER));
  CHECK(out[0] == 11 && out[2] == 33);
  EXPECT_STATUS(SLIPSTREAM_SERVER_ERROR,
                slipstream_run_script(client, "capi.script", NTS, "nothing", NTS, ab, NULL, 2, sum,
                                      NULL, 1, 0));
  CHECK(strstr(slipstream_last_error(), "nothing") != NULL);

  const char* entry[] = {"scale"};
  EXPECT_OK(
      slipstream_set_script(client, "capi.script2", NTS, "CPU", NTS, kScript, NTS, entry, NULL, 1));
  const char* keys[] = {"k1", "k2"};
  const char* args[] = {"2.5"};
  const char* results[] = {"capi.scaled", "capi.shifted"};
  EXPECT_OK(slipstream_run_script_with_keys(client, "capi.script2", NTS, "scale", NTS, keys, NULL,
                                            2, ab, NULL, 2, args, NULL, 1, results, NULL, 2, 0));
  EXPECT_OK(slipstream_unpack_tensor(client, "capi.scaled", NTS, out, sizeof out, NULL, 0,
                                     SLIPSTREAM_FLOAT32, SLIPSTREAM_C_ORDER));
  CHECK(out[1] == 5.0f);
  EXPECT_OK(slipstream_unpack_tensor(client, "capi.shifted", NTS, out, sizeof out, NULL, 0,
                                     SLIPSTREAM_FLOAT32, SLIPSTREAM_C_ORDER));
  CHECK(out[1] == 22.0f);
  EXPECT_STATUS(SLIPSTREAM_SERVER_ERROR,
                slipstream_set_script(client, "capi.broken", NTS, NULL, 0,
                                      "def f(a):\n  return a +\n", NTS, NULL, NULL, 0));

  /* A script from a file. */
  char script_path[4096];
  snprintf(script_path, sizeof script_path, "%s/capi_script.py", models_dir);
  FILE* file = fopen(script_path, "w");
  CHECK(file != NULL);
  if (file != NULL) {
    fputs(kScript, file);
    fclose(file);
    EXPECT_OK(slipstream_set_script_from_file(client, "capi.script3", NTS, NULL, 0, script_path,
                                              NTS, NULL, NULL, 0));
    remove(script_path);
  }
  EXPECT_OK(slipstream_delete_script(client, "capi.script", NTS, &flag));
  CHECK(flag == 1);
  EXPECT_OK(slipstream_delete_script(client, "capi.script2", NTS, NULL));
  EXPECT_OK(slipstream_delete_script(client, "capi.script3", NTS, NULL));
  EXPECT_STATUS(SLIPSTREAM_KEY_NOT_FOUND,
                slipstream_get_script(client, "capi.script", NTS, &source, &length));
}

/* ---- Server info and generic commands ----------------------------------------------------------
 */

static void test_info_and_commands(slipstream_client_t* client) {
  char* text = NULL;
  size_t length = 0;
  EXPECT_OK(slipstream_info(client, "server", NTS, &text, &length));
  CHECK(text != NULL && strstr(text, "# Server") != NULL);
  slipstream_free(text);
  EXPECT_OK(slipstream_info(client, NULL, 0, &text, &length));
  CHECK(text != NULL && length > 0);
  slipstream_free(text);

  const char* ping[] = {"PING"};
  slipstream_reply_t* reply = NULL;
  EXPECT_OK(slipstream_command(client, ping, NULL, 1, &reply));
  slipstream_reply_kind_t kind;
  const char* string = NULL;
  EXPECT_OK(slipstream_reply_kind(reply, &kind));
  CHECK(kind == SLIPSTREAM_REPLY_STATUS);
  EXPECT_OK(slipstream_reply_string(reply, &string, &length));
  CHECK(length == 4 && memcmp(string, "PONG", 4) == 0);
  int64_t integer = 0;
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT, slipstream_reply_integer(reply, &integer));
  EXPECT_OK(slipstream_reply_destroy(&reply));

  const char* rpush[] = {"RPUSH", "capi.cmdlist", "x", "y"};
  EXPECT_OK(slipstream_command(client, rpush, NULL, 4, &reply));
  EXPECT_OK(slipstream_reply_integer(reply, &integer));
  CHECK(integer == 2);
  EXPECT_OK(slipstream_reply_destroy(&reply));
  const char* lrange[] = {"LRANGE", "capi.cmdlist", "0", "-1"};
  EXPECT_OK(slipstream_command(client, lrange, NULL, 4, &reply));
  size_t count = 0;
  const slipstream_reply_t* element = NULL;
  EXPECT_OK(slipstream_reply_element_count(reply, &count));
  CHECK(count == 2);
  EXPECT_OK(slipstream_reply_element(reply, 1, &element));
  EXPECT_OK(slipstream_reply_string(element, &string, &length));
  CHECK(length == 1 && string[0] == 'y');
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT, slipstream_reply_element(reply, 2, &element));
  EXPECT_OK(slipstream_reply_destroy(&reply));
  CHECK(reply == NULL);

  const char* bogus[] = {"NO.SUCH.COMMAND"};
  EXPECT_STATUS(SLIPSTREAM_SERVER_ERROR, slipstream_command(client, bogus, NULL, 1, &reply));
  CHECK(reply == NULL);
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT, slipstream_command(client, NULL, NULL, 0, &reply));
}

/* ---- Authentication (server started with --requirepass) ---------------------------------------
 */

static int test_auth(const char* password) {
  slipstream_client_options_t options;
  slipstream_client_t* client = NULL;
  EXPECT_OK(slipstream_client_options_init(&options));
  options.password = "wrong-password";
  options.password_length = NTS;
  EXPECT_STATUS(SLIPSTREAM_AUTH_ERROR, slipstream_client_create_with_options(&options, &client));
  CHECK(client == NULL);

  /* No password at all: connecting works, the first command is refused. */
  EXPECT_OK(slipstream_client_create(NULL, 0, &client));
  int exists = 0;
  EXPECT_STATUS(SLIPSTREAM_AUTH_ERROR, slipstream_tensor_exists(client, "x", NTS, &exists));
  EXPECT_OK(slipstream_client_destroy(&client));

  options.password = password;
  EXPECT_OK(slipstream_client_create_with_options(&options, &client));
  EXPECT_OK(slipstream_tensor_exists(client, "x", NTS, &exists));
  CHECK(exists == 0);
  EXPECT_OK(slipstream_client_destroy(&client));
  printf("capi_test --auth: %s\n", failures == 0 ? "all checks passed" : "FAILED");
  return failures == 0 ? 0 : 1;
}

int main(int argc, char** argv) {
  if (argc == 3 && strcmp(argv[1], "--auth") == 0) return test_auth(argv[2]);
  if (argc != 2) {
    fprintf(stderr, "usage: capi_test MODELS_DIR | capi_test --auth PASSWORD\n");
    return 2;
  }
  test_connection_errors();
  test_options();
  slipstream_client_t* client = connect_or_die();
  test_tensor_dtypes(client);
  test_tensor_errors(client);
  test_tensor_management(client);
  test_raw_keys(client);
  test_datasets(client);
  test_lists(client);
  test_models(client, argv[1]);
  test_info_and_commands(client);
  EXPECT_OK(slipstream_client_destroy(&client));
  printf("capi_test: %s (%d failed)\n", failures == 0 ? "all checks passed" : "FAILED", failures);
  return failures == 0 ? 0 : 1;
}
