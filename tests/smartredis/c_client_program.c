/* A C program written against SmartRedis 0.6's documented C API (c_client.h, c_dataset.h,
 * c_logcontext.h; logger.h, srobject.h and logcontext.h are included from C as SmartRedis's C
 * programs do), built against include/smartredis and libslipstream_smartredis and run against a
 * real Slipstream server (run_c_fortran.sh: SSDB=host:port, SSKEYOUT=member_a,
 * SSKEYIN=member_a,member_b). Checks every value read back, the SRError codes of bad calls and
 * that SRGetLastError() explains them. Usage: smartredis_c_program MODELS_DIR */
#define _POSIX_C_SOURCE 200112L /* setenv, unsetenv */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c_client.h"
#include "c_configoptions.h"
#include "c_dataset.h"
#include "c_logcontext.h"
#include "c_logger.h"
#include "logcontext.h"
#include "logger.h"
#include "sr_enums.h"
#include "srexception.h"
#include "srobject.h"

static int failures = 0;

#define CHECK(cond)                                                                      \
  do {                                                                                   \
    if (!(cond)) {                                                                       \
      fprintf(stderr, "%s:%d: FAILED: %s (last error: %s)\n", __FILE__, __LINE__, #cond, \
              SRGetLastError());                                                         \
      ++failures;                                                                        \
    }                                                                                    \
  } while (0)
/* A call must return `expected`; an error must come with a message. */
#define EXPECT(expected, call)                                                                 \
  do {                                                                                         \
    SRError code_ = (call);                                                                    \
    if (code_ != (expected)) {                                                                 \
      fprintf(stderr, "%s:%d: %s returned %d, expected %d (last error: %s)\n", __FILE__,       \
              __LINE__, #call, (int)code_, (int)(expected), SRGetLastError());                 \
      ++failures;                                                                              \
    } else if ((expected) != SRNoError && SRGetLastError()[0] == '\0') {                       \
      fprintf(stderr, "%s:%d: %s failed without a message\n", __FILE__, __LINE__, #call);      \
      ++failures;                                                                              \
    }                                                                                          \
  } while (0)
#define EXPECT_OK(call) EXPECT(SRNoError, call)
#define LEN(s) strlen(s)

/* Contiguous, nested and Fortran-order tensors; rename, copy, delete; errors. */
static void test_tensors(void* client) {
  size_t dims[3] = {2, 3, 4};
  float values[2][3][4];
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) values[i][j][k] = (float)(100 * i + 10 * j + k);
  EXPECT_OK(put_tensor(client, "t3d", LEN("t3d"), values, dims, 3, SRTensorTypeFloat,
                       SRMemLayoutContiguous));

  float back[2][3][4];
  memset(back, 0, sizeof back);
  EXPECT_OK(unpack_tensor(client, "t3d", LEN("t3d"), back, dims, 3, SRTensorTypeFloat,
                          SRMemLayoutContiguous));
  CHECK(memcmp(back, values, sizeof back) == 0);

  /* get_tensor in nested layout: float*** indexed as values[i][j][k]. */
  void* data = NULL;
  size_t* got_dims = NULL;
  size_t n_dims = 0;
  SRTensorType type = SRTensorTypeInvalid;
  EXPECT_OK(get_tensor(client, "t3d", LEN("t3d"), &data, &got_dims, &n_dims, &type,
                       SRMemLayoutNested));
  CHECK(n_dims == 3 && type == SRTensorTypeFloat);
  if (n_dims == 3 && data != NULL) {
    CHECK(got_dims[0] == 2 && got_dims[1] == 3 && got_dims[2] == 4);
    float*** nested = (float***)data;
    int same = 1;
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j)
        for (int k = 0; k < 4; ++k) same &= nested[i][j][k] == values[i][j][k];
    CHECK(same);
  }

  /* unpack into nested arrays the program allocated itself. */
  float rows[6][4];
  float* level1[6];
  float** level0[2];
  for (int r = 0; r < 6; ++r) level1[r] = rows[r];
  for (int i = 0; i < 2; ++i) level0[i] = &level1[3 * i];
  memset(rows, 0, sizeof rows);
  EXPECT_OK(unpack_tensor(client, "t3d", LEN("t3d"), level0, dims, 3, SRTensorTypeFloat,
                          SRMemLayoutNested));
  CHECK(rows[4][2] == values[1][1][2] && rows[5][3] == values[1][2][3]);

  /* A column-major 3 x 2 matrix is read back row-major as [i][j] == m(i, j). */
  double column_major[6] = {1, 2, 3, 4, 5, 6}; /* m(i, j) = column_major[i + 3 j] */
  size_t dims2[2] = {3, 2};
  EXPECT_OK(put_tensor(client, "fortran", LEN("fortran"), column_major, dims2, 2,
                       SRTensorTypeDouble, SRMemLayoutFortranContiguous));
  double row_major[3][2];
  EXPECT_OK(unpack_tensor(client, "fortran", LEN("fortran"), row_major, dims2, 2,
                          SRTensorTypeDouble, SRMemLayoutContiguous));
  CHECK(row_major[0][1] == 4 && row_major[2][0] == 3 && row_major[2][1] == 6);

  bool exists = false;
  EXPECT_OK(tensor_exists(client, "t3d", LEN("t3d"), &exists));
  CHECK(exists);
  /* SSKEYOUT prefixes the key: the raw key is "member_a.t3d". */
  EXPECT_OK(key_exists(client, "member_a.t3d", LEN("member_a.t3d"), &exists));
  CHECK(exists);
  EXPECT_OK(poll_tensor(client, "t3d", LEN("t3d"), 10, 3, &exists));
  CHECK(exists);
  EXPECT_OK(poll_key(client, "no.such.key", LEN("no.such.key"), 5, 2, &exists));
  CHECK(!exists);

  EXPECT_OK(copy_tensor(client, "t3d", LEN("t3d"), "t3d_copy", LEN("t3d_copy")));
  EXPECT_OK(rename_tensor(client, "t3d_copy", LEN("t3d_copy"), "t3d_moved", LEN("t3d_moved")));
  EXPECT_OK(tensor_exists(client, "t3d_copy", LEN("t3d_copy"), &exists));
  CHECK(!exists);
  EXPECT_OK(unpack_tensor(client, "t3d_moved", LEN("t3d_moved"), back, dims, 3,
                          SRTensorTypeFloat, SRMemLayoutContiguous));
  CHECK(memcmp(back, values, sizeof back) == 0);
  EXPECT_OK(delete_tensor(client, "t3d_moved", LEN("t3d_moved")));
  EXPECT_OK(delete_tensor(client, "t3d_moved", LEN("t3d_moved"))); /* not an error */

  /* Errors: a missing tensor, another shape, another type, bad layouts and arguments. */
  EXPECT(SRKeyError, unpack_tensor(client, "missing", LEN("missing"), back, dims, 3,
                                   SRTensorTypeFloat, SRMemLayoutContiguous));
  CHECK(strcmp(SRGetLastErrorLocation(), "unpack_tensor") == 0);
  size_t wrong_dims[3] = {4, 3, 2};
  EXPECT(SRParameterError, unpack_tensor(client, "t3d", LEN("t3d"), back, wrong_dims, 3,
                                         SRTensorTypeFloat, SRMemLayoutContiguous));
  CHECK(strstr(SRGetLastError(), "2") != NULL && strstr(SRGetLastError(), "4") != NULL);
  EXPECT(SRParameterError, unpack_tensor(client, "t3d", LEN("t3d"), back, dims, 3,
                                         SRTensorTypeInt32, SRMemLayoutContiguous));
  EXPECT(SRParameterError, put_tensor(client, "x", 1, values, dims, 3, SRTensorTypeFloat,
                                      SRMemLayoutFortranNested));
  EXPECT(SRParameterError, put_tensor(client, "x", 1, values, dims, 3, (SRTensorType)42,
                                      SRMemLayoutContiguous));
  size_t zero_dims[1] = {0};
  EXPECT(SRParameterError, put_tensor(client, "x", 1, values, zero_dims, 1, SRTensorTypeFloat,
                                      SRMemLayoutContiguous));
  EXPECT(SRParameterError, put_tensor(NULL, "x", 1, values, dims, 3, SRTensorTypeFloat,
                                      SRMemLayoutContiguous));
  EXPECT_OK(tensor_exists(client, "t3d", LEN("t3d"), &exists));
  CHECK(strcmp(SRGetLastError(), "") == 0); /* a call that succeeds clears the last error */
}

/* A dataset with tensors and metadata, through the server and back. */
static void test_datasets(void* client) {
  void* dataset = NULL;
  EXPECT_OK(CDataSet("ds", LEN("ds"), &dataset));
  int32_t ints[2][3] = {{1, 2, 3}, {4, 5, 6}};
  size_t dims[2] = {2, 3};
  EXPECT_OK(add_tensor(dataset, "ints", LEN("ints"), ints, dims, 2, SRTensorTypeInt32,
                       SRMemLayoutContiguous));
  for (int i = 0; i < 3; ++i) {
    double value = 0.5 * i;
    EXPECT_OK(add_meta_scalar(dataset, "time", LEN("time"), &value, SRMetadataTypeDouble));
  }
  EXPECT_OK(add_meta_string(dataset, "label", LEN("label"), "run-7", LEN("run-7")));
  EXPECT(SRParameterError, add_tensor(dataset, "ints", LEN("ints"), ints, dims, 2,
                                      SRTensorTypeInt32, SRMemLayoutContiguous));
  EXPECT(SRParameterError, put_tensor(dataset, "x", 1, ints, dims, 2, SRTensorTypeInt32,
                                      SRMemLayoutContiguous)); /* a dataset is not a client */
  EXPECT(SRParameterError, put_dataset(client, client));
  EXPECT_OK(put_dataset(client, dataset));

  bool exists = false;
  EXPECT_OK(dataset_exists(client, "ds", LEN("ds"), &exists));
  CHECK(exists);
  EXPECT_OK(poll_dataset(client, "ds", LEN("ds"), 10, 2, &exists));
  CHECK(exists);

  void* fetched = NULL;
  EXPECT_OK(get_dataset(client, "ds", LEN("ds"), &fetched));
  if (fetched != NULL) {
    int32_t back[2][3];
    EXPECT_OK(unpack_dataset_tensor(fetched, "ints", LEN("ints"), back, dims, 2,
                                    SRTensorTypeInt32, SRMemLayoutContiguous));
    CHECK(memcmp(back, ints, sizeof back) == 0);
    size_t length = 0;
    SRMetaDataType type = SRMetadataTypeInvalid;
    void* scalars = NULL;
    EXPECT_OK(get_meta_scalars(fetched, "time", LEN("time"), &length, &type, &scalars));
    CHECK(length == 3 && type == SRMetadataTypeDouble);
    if (length == 3) CHECK(((double*)scalars)[2] == 1.0);
    char** strings = NULL;
    size_t n_strings = 0;
    size_t* lengths = NULL;
    EXPECT_OK(get_meta_strings(fetched, "label", LEN("label"), &strings, &n_strings, &lengths));
    CHECK(n_strings == 1 && lengths[0] == 5 && strncmp(strings[0], "run-7", 5) == 0);
    EXPECT_OK(get_tensor_names(fetched, &strings, &n_strings, &lengths));
    CHECK(n_strings == 1 && strncmp(strings[0], "ints", lengths[0]) == 0);
    EXPECT_OK(get_metadata_field_names(fetched, &strings, &n_strings, &lengths));
    CHECK(n_strings == 2);
    SRTensorType ttype = SRTensorTypeInvalid;
    EXPECT_OK(get_tensor_type(fetched, "ints", LEN("ints"), &ttype));
    CHECK(ttype == SRTensorTypeInt32);
    size_t* tdims = NULL;
    size_t ndims = 0;
    EXPECT_OK(get_tensor_dims(fetched, "ints", LEN("ints"), &tdims, &ndims));
    CHECK(ndims == 2 && tdims[0] == 2 && tdims[1] == 3);
    SRMetaDataType mtype = SRMetadataTypeInvalid;
    EXPECT_OK(get_metadata_field_type(fetched, "label", LEN("label"), &mtype));
    CHECK(mtype == SRMetadataTypeString);
    void* tensor_data = NULL;
    SRTensorType got_type = SRTensorTypeInvalid;
    EXPECT_OK(get_dataset_tensor(fetched, "ints", LEN("ints"), &tensor_data, &tdims, &ndims,
                                 &got_type, SRMemLayoutContiguous));
    CHECK(got_type == SRTensorTypeInt32 && ((int32_t*)tensor_data)[5] == 6);
    EXPECT(SRKeyError, get_meta_scalars(fetched, "none", LEN("none"), &length, &type, &scalars));
    EXPECT(SRTypeError, get_meta_scalars(fetched, "label", LEN("label"), &length, &type,
                                         &scalars));
    CHECK(strstr(dataset_to_string(fetched), "ds") != NULL);
    EXPECT_OK(DeallocateDataSet(&fetched));
    CHECK(fetched == NULL);
  }

  /* Aggregation lists of datasets. */
  void* second = NULL;
  EXPECT_OK(CDataSet("ds2", LEN("ds2"), &second));
  EXPECT_OK(add_tensor(second, "ints", LEN("ints"), ints, dims, 2, SRTensorTypeInt32,
                       SRMemLayoutContiguous));
  EXPECT_OK(put_dataset(client, second));
  EXPECT_OK(append_to_list(client, "runs", LEN("runs"), dataset));
  EXPECT_OK(append_to_list(client, "runs", LEN("runs"), second));
  int list_length = 0;
  EXPECT_OK(get_list_length(client, "runs", LEN("runs"), &list_length));
  CHECK(list_length == 2);
  bool reached = false;
  EXPECT_OK(poll_list_length_gte(client, "runs", LEN("runs"), 2, 10, 2, &reached));
  CHECK(reached);
  EXPECT_OK(poll_list_length(client, "runs", LEN("runs"), 3, 5, 2, &reached));
  CHECK(!reached);
  void** datasets = NULL;
  size_t count = 0;
  EXPECT_OK(get_datasets_from_list(client, "runs", LEN("runs"), &datasets, &count));
  CHECK(count == 2);
  for (size_t i = 0; i < count; ++i) EXPECT_OK(DeallocateDataSet(&datasets[i]));
  EXPECT_OK(get_dataset_list_range(client, "runs", LEN("runs"), -1, -1, &datasets, &count));
  CHECK(count == 1);
  for (size_t i = 0; i < count; ++i) EXPECT_OK(DeallocateDataSet(&datasets[i]));
  EXPECT_OK(copy_list(client, "runs", LEN("runs"), "runs2", LEN("runs2")));
  EXPECT_OK(rename_list(client, "runs2", LEN("runs2"), "runs3", LEN("runs3")));
  EXPECT_OK(get_list_length(client, "runs3", LEN("runs3"), &list_length));
  CHECK(list_length == 2);
  EXPECT_OK(delete_list(client, "runs3", LEN("runs3")));
  EXPECT_OK(delete_list(client, "runs", LEN("runs")));

  EXPECT_OK(copy_dataset(client, "ds", LEN("ds"), "ds_copy", LEN("ds_copy")));
  EXPECT_OK(rename_dataset(client, "ds_copy", LEN("ds_copy"), "ds_moved", LEN("ds_moved")));
  EXPECT_OK(delete_dataset(client, "ds_moved", LEN("ds_moved")));
  EXPECT(SRKeyError, get_dataset(client, "ds_moved", LEN("ds_moved"), &fetched));
  EXPECT_OK(DeallocateDataSet(&second));
  EXPECT_OK(DeallocateDataSet(&dataset));
}

/* Models and scripts, and the multi-GPU forms. */
static void test_models(void* client, const char* models_dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/scale.pt", models_dir);
  EXPECT_OK(set_model_from_file(client, "scale", LEN("scale"), path, LEN(path), "TORCH",
                                LEN("TORCH"), "CPU", LEN("CPU"), 0, 0, 0, NULL, 0, NULL, NULL, 0,
                                NULL, NULL, 0));
  bool exists = false;
  EXPECT_OK(model_exists(client, "scale", LEN("scale"), &exists));
  CHECK(exists);
  EXPECT_OK(poll_model(client, "scale", LEN("scale"), 10, 2, &exists));
  CHECK(exists);

  float input[2][3] = {{0, 1, 2}, {3, 4, 5}};
  size_t dims[2] = {2, 3};
  EXPECT_OK(put_tensor(client, "model_in", LEN("model_in"), input, dims, 2, SRTensorTypeFloat,
                       SRMemLayoutContiguous));
  const char* inputs[] = {"model_in"};
  const char* outputs[] = {"model_out"};
  size_t input_lengths[] = {LEN("model_in")};
  size_t output_lengths[] = {LEN("model_out")};
  EXPECT_OK(run_model(client, "scale", LEN("scale"), inputs, input_lengths, 1, outputs,
                      output_lengths, 1));
  float output[2][3];
  EXPECT_OK(unpack_tensor(client, "model_out", LEN("model_out"), output, dims, 2,
                          SRTensorTypeFloat, SRMemLayoutContiguous));
  CHECK(output[0][0] == 1.0f && output[1][2] == 11.0f); /* 2 x + 1 */

  /* The same model from its bytes, read back with get_model. */
  FILE* file = fopen(path, "rb");
  CHECK(file != NULL);
  if (file != NULL) {
    static char bytes[1 << 20];
    size_t size = fread(bytes, 1, sizeof bytes, file);
    fclose(file);
    EXPECT_OK(set_model(client, "scale2", LEN("scale2"), bytes, size, "TORCH", LEN("TORCH"), "CPU",
                        LEN("CPU"), 4, 1, 10, "v1", 2, NULL, NULL, 0, NULL, NULL, 0));
    const char* model = NULL;
    size_t model_length = 0;
    EXPECT_OK(get_model(client, "scale2", LEN("scale2"), &model_length, &model));
    CHECK(model_length == size && model != NULL && memcmp(model, bytes, size) == 0);
    EXPECT_OK(delete_model(client, "scale2", LEN("scale2")));
  }
  EXPECT(SRKeyError, run_model(client, "no_model", LEN("no_model"), inputs, input_lengths, 1,
                               outputs, output_lengths, 1));

  /* Batching arguments the server would ignore are refused before anything is sent, as
   * SmartRedis does (SRRuntimeError); a negative one is a bad argument. A minimum batch size
   * without a timeout only warns (stderr). */
  EXPECT(SRRuntimeError, set_model_from_file(client, "batched", LEN("batched"), path, LEN(path),
                                             "TORCH", LEN("TORCH"), "CPU", LEN("CPU"), 0, 0, 5,
                                             NULL, 0, NULL, NULL, 0, NULL, NULL, 0));
  CHECK(strstr(SRGetLastError(), "batch_size must be non-zero") != NULL);
  EXPECT(SRRuntimeError, set_model_from_file(client, "batched", LEN("batched"), path, LEN(path),
                                             "TORCH", LEN("TORCH"), "CPU", LEN("CPU"), 0, 2, 0,
                                             NULL, 0, NULL, NULL, 0, NULL, NULL, 0));
  EXPECT(SRRuntimeError, set_model_from_file(client, "batched", LEN("batched"), path, LEN(path),
                                             "TORCH", LEN("TORCH"), "CPU", LEN("CPU"), 4, 0, 5,
                                             NULL, 0, NULL, NULL, 0, NULL, NULL, 0));
  CHECK(strstr(SRGetLastError(), "min_batch_size must be non-zero") != NULL);
  EXPECT(SRParameterError, set_model_from_file(client, "batched", LEN("batched"), path, LEN(path),
                                               "TORCH", LEN("TORCH"), "CPU", LEN("CPU"), -1, 0, 0,
                                               NULL, 0, NULL, NULL, 0, NULL, NULL, 0));
  EXPECT(SRRuntimeError,
         set_model_from_file_multigpu(client, "batched", LEN("batched"), path, LEN(path), "TORCH",
                                      5, 0, 1, 0, 0, 5, NULL, 0, NULL, NULL, 0, NULL, NULL, 0));
  bool batched_exists = true;
  EXPECT_OK(model_exists(client, "batched", LEN("batched"), &batched_exists));
  CHECK(!batched_exists);
  EXPECT_OK(set_model_from_file(client, "batched", LEN("batched"), path, LEN(path), "TORCH",
                                LEN("TORCH"), "CPU", LEN("CPU"), 4, 2, 0, NULL, 0, NULL, NULL, 0,
                                NULL, NULL, 0));
  EXPECT_OK(delete_model(client, "batched", LEN("batched")));

  const char* source = "def times_two(x):\n    return 2 * x\n";
  EXPECT_OK(set_script(client, "script", LEN("script"), "CPU", LEN("CPU"), source, LEN(source)));
  const char* stored = NULL;
  size_t stored_length = 0;
  EXPECT_OK(get_script(client, "script", LEN("script"), &stored, &stored_length));
  CHECK(stored_length == LEN(source) && strncmp(stored, source, stored_length) == 0);
  const char* script_outputs[] = {"script_out"};
  size_t script_output_lengths[] = {LEN("script_out")};
  EXPECT_OK(run_script(client, "script", LEN("script"), "times_two", LEN("times_two"), inputs,
                       input_lengths, 1, script_outputs, script_output_lengths, 1));
  EXPECT_OK(unpack_tensor(client, "script_out", LEN("script_out"), output, dims, 2,
                          SRTensorTypeFloat, SRMemLayoutContiguous));
  CHECK(output[1][2] == 10.0f);
  EXPECT_OK(delete_script(client, "script", LEN("script")));
  EXPECT_OK(delete_model(client, "scale", LEN("scale")));

  /* Multi-GPU forms: bad GPU numbers are parameter errors; a server without GPUs refuses the
   * per-GPU copies with a message. */
  EXPECT(SRParameterError, set_model_from_file_multigpu(client, "gpu", 3, path, LEN(path),
                                                        "TORCH", 5, 0, 0, 0, 0, 0, NULL, 0, NULL,
                                                        NULL, 0, NULL, NULL, 0));
  EXPECT(SRParameterError, run_model_multigpu(client, "gpu", 3, inputs, input_lengths, 1, outputs,
                                              output_lengths, 1, 0, -1, 1));
  SRError code = set_model_from_file_multigpu(client, "gpu", 3, path, LEN(path), "TORCH", 5, 0, 2,
                                              0, 0, 0, NULL, 0, NULL, NULL, 0, NULL, NULL, 0);
  if (code == SRNoError) { /* a server with two GPUs */
    EXPECT_OK(run_model_multigpu(client, "gpu", 3, inputs, input_lengths, 1, outputs,
                                 output_lengths, 1, 5, 0, 2));
    EXPECT_OK(delete_model_multigpu(client, "gpu", 3, 0, 2));
  } else {
    CHECK(SRGetLastError()[0] != '\0');
    printf("set_model_from_file_multigpu on this server: %d, %s\n", (int)code, SRGetLastError());
  }
}

/* A client configured by a ConfigOptions object for the database "OTHER" (SSDB_OTHER ...). */
static void test_configoptions(const char* ssdb) {
  void* options = NULL;
  EXPECT_OK(create_configoptions_from_environment("OTHER", LEN("OTHER"), &options));
  bool configured = true;
  EXPECT_OK(is_configured(options, "SSDB", LEN("SSDB"), &configured));
  CHECK(!configured); /* SSDB_OTHER is not set */
  void* client = NULL;
  EXPECT(SRRuntimeError, CreateClient(options, "other", LEN("other"), &client));
  CHECK(strstr(SRGetLastError(), "SSDB_OTHER") != NULL);
  EXPECT_OK(override_string_option(options, "SSDB", LEN("SSDB"), ssdb, LEN(ssdb)));
  EXPECT_OK(override_integer_option(options, "SR_CMD_TIMEOUT", LEN("SR_CMD_TIMEOUT"), 20000));
  char* value = NULL;
  size_t value_length = 0;
  EXPECT_OK(get_string_option(options, "SSDB", LEN("SSDB"), &value, &value_length));
  CHECK(value_length == LEN(ssdb) && strncmp(value, ssdb, value_length) == 0);
  int64_t timeout = 0;
  EXPECT_OK(get_integer_option(options, "SR_CMD_TIMEOUT", LEN("SR_CMD_TIMEOUT"), &timeout));
  CHECK(timeout == 20000);
  EXPECT(SRKeyError, get_integer_option(options, "SR_CONN_TIMEOUT", LEN("SR_CONN_TIMEOUT"),
                                        &timeout));
  EXPECT_OK(CreateClient(options, "other", LEN("other"), &client));
  if (client != NULL) {
    double x[2] = {1.5, -2.5}, y[2] = {0, 0};
    size_t dims[1] = {2};
    EXPECT_OK(put_tensor(client, "via_options", LEN("via_options"), x, dims, 1,
                         SRTensorTypeDouble, SRMemLayoutContiguous));
    EXPECT_OK(unpack_tensor(client, "via_options", LEN("via_options"), y, dims, 1,
                            SRTensorTypeDouble, SRMemLayoutContiguous));
    CHECK(y[0] == 1.5 && y[1] == -2.5);
    EXPECT_OK(DeleteCClient(&client));
  }
  EXPECT(SRParameterError, CreateClient(NULL, "x", 1, &client));
}

/* Ensemble prefixes: reads from another member, and unprefixed keys. */
static void test_prefixes(void* client) {
  int32_t value[1] = {7};
  size_t dims[1] = {1};
  EXPECT_OK(put_tensor(client, "mine", LEN("mine"), value, dims, 1, SRTensorTypeInt32,
                       SRMemLayoutContiguous));
  bool exists = false;
  EXPECT_OK(set_data_source(client, "member_b", LEN("member_b")));
  EXPECT_OK(tensor_exists(client, "mine", LEN("mine"), &exists));
  CHECK(!exists); /* looked up as member_b.mine */
  EXPECT_OK(set_data_source(client, "member_a", LEN("member_a")));
  EXPECT_OK(tensor_exists(client, "mine", LEN("mine"), &exists));
  CHECK(exists);
  EXPECT(SRParameterError, set_data_source(client, "member_z", LEN("member_z")));
  EXPECT_OK(use_tensor_ensemble_prefix(client, false));
  EXPECT_OK(put_tensor(client, "plain", LEN("plain"), value, dims, 1, SRTensorTypeInt32,
                       SRMemLayoutContiguous));
  EXPECT_OK(key_exists(client, "plain", LEN("plain"), &exists));
  CHECK(exists);
  EXPECT_OK(use_tensor_ensemble_prefix(client, true));
  EXPECT_OK(use_dataset_ensemble_prefix(client, true));
  EXPECT_OK(use_model_ensemble_prefix(client, false));
  EXPECT_OK(use_list_ensemble_prefix(client, true));
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s MODELS_DIR\n", argv[0]);
    return 2;
  }
  void* client = NULL;
  EXPECT_OK(SmartRedisCClient(false, "c_program", LEN("c_program"), &client));
  if (client == NULL) return 1;
  CHECK(strstr(client_to_string(client), "c_program") != NULL);
  void* simple = NULL;
  EXPECT_OK(SimpleCreateClient("simple", LEN("simple"), &simple));

  /* Without SSDB there is no server to connect to, and the message says so. */
  char ssdb[512];
  snprintf(ssdb, sizeof ssdb, "%s", getenv("SSDB") != NULL ? getenv("SSDB") : "");
  unsetenv("SSDB");
  void* unconnected = NULL;
  EXPECT(SRRuntimeError, SimpleCreateClient("none", LEN("none"), &unconnected));
  CHECK(strstr(SRGetLastError(), "SSDB") != NULL && unconnected == NULL);
  setenv("SSDB", ssdb, 1);
  test_configoptions(ssdb);

  test_tensors(client);
  test_datasets(client);
  test_models(client, argv[1]);
  test_prefixes(simple);

  /* Log lines with a client's name, a logging context's and a context string, to SR_LOG_FILE
   * at DEBUG. */
  void* logcontext = NULL;
  EXPECT_OK(SmartRedisCLogContext("c_logcontext", LEN("c_logcontext"), &logcontext));
  CHECK(logcontext != NULL);
  log_data(client, LLInfo, "c program done", LEN("c program done"));
  log_warning_string("c_context", LEN("c_context"), LLInfo, "a warning", LEN("a warning"));
  log_data(client, LLDeveloper, "too detailed", LEN("too detailed"));
  log_data(logcontext, LLDebug, "context data", LEN("context data"));
  log_error(logcontext, LLInfo, "context error", LEN("context error"));
  EXPECT(SRParameterError, DeallocateLogContext(&client)); /* not a logging context */
  EXPECT(SRParameterError, SmartRedisCLogContext("x", 1, NULL));
  EXPECT_OK(DeallocateLogContext(&logcontext));
  CHECK(logcontext == NULL);
  EXPECT_OK(DeallocateLogContext(&logcontext)); /* NULL: nothing to free */
  const char* log_path = getenv("SR_LOG_FILE");
  CHECK(log_path != NULL);
  if (log_path != NULL) {
    FILE* log = fopen(log_path, "r");
    CHECK(log != NULL);
    if (log != NULL) {
      static char text[1 << 16];
      size_t size = fread(text, 1, sizeof text - 1, log);
      text[size] = '\0';
      fclose(log);
      CHECK(strstr(text, "c_program@") != NULL && strstr(text, ":c program done") != NULL);
      CHECK(strstr(text, "c_context@") != NULL && strstr(text, "WARNING: a warning") != NULL);
      CHECK(strstr(text, "too detailed") == NULL);
      CHECK(strstr(text, "c_logcontext@") != NULL &&
            strstr(text, ":New LogContext created") != NULL);
      CHECK(strstr(text, ":context data") != NULL && strstr(text, ":ERROR: context error") != NULL);
    }
  }

  EXPECT_OK(DeleteCClient(&simple));
  EXPECT_OK(DeleteCClient(&client));
  CHECK(client == NULL);
  if (failures > 0) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("SmartRedis C program: all checks passed\n");
  return 0;
}
