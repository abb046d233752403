/* The C API of in-process models (slipstream_local.h), plain C99: load from a file and from bytes,
 * runs into caller buffers in C and Fortran order checked element by element, and the errors
 * (bad file, bytes and device, wrong input and output counts, too small or mismatched buffers,
 * NULL handles). Usage: local_model_capi_test MODELS_DIR (the models of
 * tests/integration/models/make_models.py: mlp.pt and two_outputs.pt). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slipstream_local.h"
/* After slipstream_local.h, which includes slipstream.h. */
#include "capi_checks.h"

static char mlp_path[4096], two_outputs_path[4096], mlp_onnx_path[4096];

/* make_models.py's Mlp: relu(x W1^T + b1) W2^T + b2 with its fixed weights, in float. */
static float mlp_expected(const float* x) {
  float y = 0.5f;
  int i, j;
  for (j = 0; j < 8; ++j) {
    float h = 0.01f * (float)j - 0.02f;
    for (i = 0; i < 4; ++i) h += (0.1f * (float)(i + 1) - 0.05f * (float)j) * x[i];
    if (h > 0) y += (0.2f - 0.03f * (float)j) * h;
  }
  return y;
}

static slipstream_tensor_ref_t input_ref(const void* data, const int64_t* shape, size_t rank,
                                         slipstream_dtype_t dtype,
                                         slipstream_memory_order_t order) {
  slipstream_tensor_ref_t ref;
  ref.name = "x";
  ref.name_length = NTS;
  ref.data = data;
  ref.shape = shape;
  ref.rank = rank;
  ref.dtype = dtype;
  ref.order = order;
  return ref;
}

static slipstream_local_output_t output_buffer(void* data, size_t capacity, const int64_t* shape,
                                               size_t rank, slipstream_dtype_t dtype,
                                               slipstream_memory_order_t order) {
  slipstream_local_output_t out;
  out.dtype = dtype;
  out.data = data;
  out.capacity = capacity;
  out.shape = shape;
  out.rank = rank;
  out.order = order;
  return out;
}

/* The EKE-shaped MLP: [3, 4] -> [3, 1], loaded from a file and from the same bytes. */
static void test_mlp(void) {
  const float x[12] = {0.5f, -1.0f, 2.0f, 0.25f, 1.0f, 1.0f, 1.0f, 1.0f, -2.0f, 0.0f, 3.0f, -0.5f};
  const int64_t shape[2] = {3, 4}, out_shape[2] = {3, 1};
  float y[3] = {0, 0, 0};
  slipstream_local_model_t* model = NULL;
  slipstream_tensor_ref_t input = input_ref(x, shape, 2, SLIPSTREAM_FLOAT32, SLIPSTREAM_C_ORDER);
  slipstream_local_output_t output =
      output_buffer(y, sizeof y, out_shape, 2, SLIPSTREAM_FLOAT32, SLIPSTREAM_C_ORDER);
  char* device = NULL;
  size_t length = 0;
  int row;

  EXPECT_OK(slipstream_local_model_load_file(mlp_path, NTS, "cpu", NTS, &model));
  CHECK(model != NULL);
  EXPECT_OK(slipstream_local_model_device(model, &device, &length));
  CHECK(device != NULL && strcmp(device, "CPU") == 0 && length == 3);
  slipstream_free(device);
  EXPECT_OK(slipstream_local_model_run(model, &input, 1, &output, 1));
  CHECK(slipstream_last_error()[0] == '\0');
  for (row = 0; row < 3; ++row) CHECK(fabsf(y[row] - mlp_expected(x + 4 * row)) < 1e-5f);
  EXPECT_OK(slipstream_local_model_destroy(&model));
  CHECK(model == NULL);

  /* The same model from bytes (a file read into memory), on the default device. */
  {
    FILE* file = fopen(mlp_path, "rb");
    long size;
    char* bytes;
    CHECK(file != NULL);
    if (file == NULL) return;
    fseek(file, 0, SEEK_END);
    size = ftell(file);
    fseek(file, 0, SEEK_SET);
    bytes = (char*)malloc((size_t)size);
    CHECK(bytes != NULL && fread(bytes, 1, (size_t)size, file) == (size_t)size);
    fclose(file);
    memset(y, 0, sizeof y);
    EXPECT_OK(slipstream_local_model_load_bytes(bytes, (size_t)size, NULL, 0, &model));
    free(bytes);
    /* An empty expected shape accepts the output's. */
    output.rank = 0;
    output.shape = NULL;
    EXPECT_OK(slipstream_local_model_run(model, &input, 1, &output, 1));
    for (row = 0; row < 3; ++row) CHECK(fabsf(y[row] - mlp_expected(x + 4 * row)) < 1e-5f);
    EXPECT_OK(slipstream_local_model_destroy(&model));
  }
}

/* The same MLP exported to ONNX: LocalModel tells the format from the file. */
static void test_onnx(void) {
  const float x[12] = {0.5f, 1.0f, -2.0f, -1.0f, 1.0f, 0.0f, 2.0f, 1.0f, 3.0f, 0.25f, 1.0f, -0.5f};
  const int64_t shape[2] = {3, 4}, out_shape[2] = {3, 1};
  float y[3] = {0, 0, 0};
  slipstream_local_model_t* model = NULL;
  slipstream_tensor_ref_t input = input_ref(x, shape, 2, SLIPSTREAM_FLOAT32, SLIPSTREAM_C_ORDER);
  slipstream_local_output_t output =
      output_buffer(y, sizeof y, out_shape, 2, SLIPSTREAM_FLOAT32, SLIPSTREAM_C_ORDER);
  int row;
  EXPECT_OK(slipstream_local_model_load_file(mlp_onnx_path, NTS, "CPU", NTS, &model));
  EXPECT_OK(slipstream_local_model_run(model, &input, 1, &output, 1));
  for (row = 0; row < 3; ++row) CHECK(fabsf(y[row] - mlp_expected(x + 4 * row)) < 1e-5f);
  EXPECT_OK(slipstream_local_model_destroy(&model));
}

/* forward(a, b) = (a + b, a * b) on [2, 3] doubles: a in Fortran order, b in C order, the sum
 * written in C order and the product in Fortran order. Logical element [i][j] is a_f[i + 2 j]
 * and b_c[3 i + j]. */
static void test_orders(void) {
  double a_f[6], b_c[6], sum_c[6], product_f[6];
  const int64_t shape[2] = {2, 3};
  slipstream_tensor_ref_t inputs[2];
  slipstream_local_output_t outputs[2];
  slipstream_local_model_t* model = NULL;
  int i, j;
  for (i = 0; i < 6; ++i) {
    a_f[i] = 1.5 + i;
    b_c[i] = 10.0 * (i + 1);
  }
  inputs[0] = input_ref(a_f, shape, 2, SLIPSTREAM_FLOAT64, SLIPSTREAM_FORTRAN_ORDER);
  inputs[1] = input_ref(b_c, shape, 2, SLIPSTREAM_FLOAT64, SLIPSTREAM_C_ORDER);
  outputs[0] = output_buffer(sum_c, sizeof sum_c, shape, 2, SLIPSTREAM_FLOAT64,
                             SLIPSTREAM_C_ORDER);
  outputs[1] = output_buffer(product_f, sizeof product_f, shape, 2, SLIPSTREAM_FLOAT64,
                             SLIPSTREAM_FORTRAN_ORDER);
  EXPECT_OK(slipstream_local_model_load_file(two_outputs_path, NTS, "CPU", 3, &model));
  EXPECT_OK(slipstream_local_model_run(model, inputs, 2, outputs, 2));
  for (i = 0; i < 2; ++i) {
    for (j = 0; j < 3; ++j) {
      const double a = a_f[i + 2 * j], b = b_c[3 * i + j];
      CHECK(sum_c[3 * i + j] == a + b);
      CHECK(product_f[i + 2 * j] == a * b);
    }
  }
  slipstream_local_model_destroy(&model);
}

/* Every failure has its status and a message, and leaves the output buffers untouched. */
static void test_errors(void) {
  const float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  const int64_t shape[2] = {2, 4}, out_shape[2] = {2, 1}, wrong_shape[2] = {1, 2};
  float y[2] = {-7.0f, -7.0f};
  double y64[2] = {-7.0, -7.0};
  slipstream_local_model_t* model = NULL;
  slipstream_tensor_ref_t inputs[2];
  slipstream_local_output_t output, outputs[2];
  char* device = NULL;
  inputs[0] = input_ref(x, shape, 2, SLIPSTREAM_FLOAT32, SLIPSTREAM_C_ORDER);
  inputs[1] = inputs[0];
  output = output_buffer(y, sizeof y, out_shape, 2, SLIPSTREAM_FLOAT32, SLIPSTREAM_C_ORDER);

  /* Loading. */
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                slipstream_local_model_load_file("no/such/model.pt", NTS, NULL, 0, &model));
  CHECK(strstr(slipstream_last_error(), "no/such/model.pt") != NULL);
  CHECK(model == NULL);
  EXPECT_STATUS(SLIPSTREAM_BACKEND_ERROR,
                slipstream_local_model_load_bytes("not a model", 11, NULL, 0, &model));
  CHECK(strstr(slipstream_last_error(), "neither a TorchScript archive") != NULL);
  CHECK(model == NULL);
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                slipstream_local_model_load_file(mlp_path, NTS, "TPU", NTS, &model));
  CHECK(strstr(slipstream_last_error(), "unknown device 'TPU'") != NULL);
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                slipstream_local_model_load_file(mlp_path, NTS, NULL, 0, NULL));
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                slipstream_local_model_load_file(NULL, 0, NULL, 0, &model));
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                slipstream_local_model_load_bytes(NULL, 5, NULL, 0, &model));
  CHECK(model == NULL);

  /* NULL handles. */
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                slipstream_local_model_run(NULL, inputs, 1, &output, 1));
  CHECK(strstr(slipstream_last_error(), "local model handle is NULL") != NULL);
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT, slipstream_local_model_device(NULL, &device, NULL));
  EXPECT_OK(slipstream_local_model_destroy(NULL));
  EXPECT_OK(slipstream_local_model_destroy(&model));

  EXPECT_OK(slipstream_local_model_load_file(mlp_path, NTS, NULL, 0, &model));
  if (model == NULL) return;
  /* Two inputs to a one-input forward: libtorch's message. */
  EXPECT_STATUS(SLIPSTREAM_BACKEND_ERROR, slipstream_local_model_run(model, inputs, 2, &output, 1));
  CHECK(strstr(slipstream_last_error(), "forward") != NULL);
  EXPECT_STATUS(SLIPSTREAM_BACKEND_ERROR, slipstream_local_model_run(model, NULL, 0, &output, 1));
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                slipstream_local_model_run(model, NULL, 1, &output, 1));
  /* Two buffers for one output. */
  outputs[0] = output;
  outputs[1] = output;
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                slipstream_local_model_run(model, inputs, 1, outputs, 2));
  CHECK(strstr(slipstream_last_error(), "1 output(s) but 2 output buffer(s)") != NULL);
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT, slipstream_local_model_run(model, inputs, 1, NULL, 1));
  /* Too small: one float of the two. */
  output.capacity = sizeof(float);
  EXPECT_STATUS(SLIPSTREAM_BUFFER_TOO_SMALL,
                slipstream_local_model_run(model, inputs, 1, &output, 1));
  CHECK(strstr(slipstream_last_error(), "needs 8 bytes but its buffer has 4") != NULL);
  output.capacity = sizeof y;
  /* Another expected shape, another dtype, a bad order, a NULL buffer. */
  output.shape = wrong_shape;
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                slipstream_local_model_run(model, inputs, 1, &output, 1));
  CHECK(strstr(slipstream_last_error(), "expects [1, 2]") != NULL);
  output.shape = out_shape;
  outputs[0] = output_buffer(y64, sizeof y64, out_shape, 2, SLIPSTREAM_FLOAT64,
                             SLIPSTREAM_C_ORDER);
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                slipstream_local_model_run(model, inputs, 1, outputs, 1));
  output.order = 7;
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                slipstream_local_model_run(model, inputs, 1, &output, 1));
  output.order = SLIPSTREAM_C_ORDER;
  output.data = NULL;
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                slipstream_local_model_run(model, inputs, 1, &output, 1));
  output.data = y;
  /* An input whose bytes do not match its dtype. */
  inputs[0].dtype = 42;
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                slipstream_local_model_run(model, inputs, 1, &output, 1));
  inputs[0].dtype = SLIPSTREAM_FLOAT32;
  CHECK(y[0] == -7.0f && y[1] == -7.0f && y64[0] == -7.0 && y64[1] == -7.0);
  /* And the model still runs. */
  EXPECT_OK(slipstream_local_model_run(model, inputs, 1, &output, 1));
  CHECK(fabsf(y[0] - mlp_expected(x)) < 1e-5f && fabsf(y[1] - mlp_expected(x + 4)) < 1e-5f);
  slipstream_local_model_destroy(&model);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s MODELS_DIR\n", argv[0]);
    return 2;
  }
  snprintf(mlp_path, sizeof mlp_path, "%s/mlp.pt", argv[1]);
  snprintf(mlp_onnx_path, sizeof mlp_onnx_path, "%s/mlp.onnx", argv[1]);
  snprintf(two_outputs_path, sizeof two_outputs_path, "%s/two_outputs.pt", argv[1]);
  test_mlp();
  test_onnx();
  test_orders();
  test_errors();
  if (failures != 0) {
    fprintf(stderr, "local_model_capi_test: %d checks FAILED\n", failures);
    return 1;
  }
  printf("local_model_capi_test: all checks passed\n");
  return 0;
}
