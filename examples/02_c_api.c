/* Example 02 (C API): put a 2-D tensor, read it back, run a TorchScript model on it (scale.pt
 * computes x * 2 + 1) and read the result; then round-trip a dataset with metadata.
 * Usage: 02_c_api MODEL_FILE [ADDRESS]   (default address: SLIPSTREAM_ADDRESS, then SSDB).
 * Exits non-zero on any error or mismatch, so it also runs as a test. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "slipstream.h"

/* Every call returns a status; on failure print the message and leave. */
#define CALL(call)                                                                    \
  do {                                                                                \
    slipstream_status_t status_ = (call);                                             \
    if (status_ != SLIPSTREAM_OK) {                                                   \
      fprintf(stderr, "%s failed (%s): %s\n", #call, slipstream_status_name(status_), \
              slipstream_last_error());                                               \
      exit(EXIT_FAILURE);                                                             \
    }                                                                                 \
  } while (0)

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: 02_c_api MODEL_FILE [ADDRESS]\n");
    return 2;
  }
  slipstream_client_t* client = NULL;
  CALL(slipstream_client_create(argc > 2 ? argv[2] : NULL, SLIPSTREAM_NTS, &client));
  const char* address = NULL;
  size_t address_length = 0;
  CALL(slipstream_client_address(client, &address, &address_length));
  printf("connected to %s\n", address);
  int ok = 1;

  /* A 4 x 3 float field, row-major: element [i][j] = 10 i + j. */
  const int64_t shape[2] = {4, 3};
  float field[12], back[12], result[12];
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 3; ++j) field[i * 3 + j] = 10.0f * i + j;
  }
  CALL(slipstream_put_tensor(client, "example.field", SLIPSTREAM_NTS, field, shape, 2,
                             SLIPSTREAM_FLOAT32, SLIPSTREAM_C_ORDER));
  CALL(slipstream_unpack_tensor(client, "example.field", SLIPSTREAM_NTS, back, sizeof back, shape,
                                2, SLIPSTREAM_FLOAT32, SLIPSTREAM_C_ORDER));
  for (int n = 0; n < 12; ++n) ok &= back[n] == field[n];
  printf("put and unpacked 'example.field' FLOAT {4, 3}: %s\n", ok ? "ok" : "MISMATCH");

  /* Store the model, run it on the tensor, read the result. */
  CALL(slipstream_set_model_from_file(client, "example.scale", SLIPSTREAM_NTS, argv[1],
                                      SLIPSTREAM_NTS, "TORCH", SLIPSTREAM_NTS, "CPU",
                                      SLIPSTREAM_NTS, NULL));
  const char* inputs[] = {"example.field"};
  const char* outputs[] = {"example.scaled"};
  CALL(slipstream_run_model(client, "example.scale", SLIPSTREAM_NTS, inputs, NULL, 1, outputs, NULL,
                            1, 0));
  CALL(slipstream_unpack_tensor(client, "example.scaled", SLIPSTREAM_NTS, result, sizeof result,
                                shape, 2, SLIPSTREAM_FLOAT32, SLIPSTREAM_C_ORDER));
  int model_ok = 1;
  for (int n = 0; n < 12; ++n) model_ok &= result[n] == field[n] * 2 + 1;
  printf("ran model 'example.scale' (x * 2 + 1): %s\n", model_ok ? "ok" : "MISMATCH");
  ok &= model_ok;

  /* Errors are values: a missing key gives SLIPSTREAM_KEY_NOT_FOUND and a message. */
  slipstream_status_t status =
      slipstream_unpack_tensor(client, "example.missing", SLIPSTREAM_NTS, back, sizeof back, NULL,
                               0, SLIPSTREAM_FLOAT32, SLIPSTREAM_C_ORDER);
  printf("unpack of a missing key: %s (%s)\n", slipstream_status_name(status),
         slipstream_last_error());
  ok &= status == SLIPSTREAM_KEY_NOT_FOUND;

  /* A dataset: a tensor plus metadata, stored the way SmartRedis stores it. */
  slipstream_dataset_t* step = NULL;
  CALL(slipstream_dataset_create("example.step", SLIPSTREAM_NTS, &step));
  CALL(slipstream_dataset_add_tensor(step, "field", SLIPSTREAM_NTS, field, shape, 2,
                                     SLIPSTREAM_FLOAT32, SLIPSTREAM_C_ORDER));
  const double time = 0.125;
  CALL(slipstream_dataset_add_meta_scalar(step, "time", SLIPSTREAM_NTS, &time,
                                          SLIPSTREAM_META_DOUBLE));
  CALL(slipstream_dataset_add_meta_string(step, "model", SLIPSTREAM_NTS, "ocean-1deg",
                                          SLIPSTREAM_NTS));
  CALL(slipstream_put_dataset(client, step));
  CALL(slipstream_dataset_destroy(&step));
  slipstream_dataset_t* got = NULL;
  CALL(slipstream_get_dataset(client, "example.step", SLIPSTREAM_NTS, &got));
  double got_time = 0;
  size_t count = 0;
  CALL(slipstream_dataset_get_meta_scalars(got, "time", SLIPSTREAM_NTS, SLIPSTREAM_META_DOUBLE,
                                           &got_time, 1, &count));
  CALL(slipstream_dataset_destroy(&got));
  printf("dataset 'example.step' metadata 'time': %s\n",
         count == 1 && got_time == 0.125 ? "ok" : "MISMATCH");
  ok &= count == 1 && got_time == 0.125;

  CALL(slipstream_delete_model(client, "example.scale", SLIPSTREAM_NTS, NULL));
  CALL(slipstream_delete_tensor(client, "example.field", SLIPSTREAM_NTS, NULL));
  CALL(slipstream_delete_tensor(client, "example.scaled", SLIPSTREAM_NTS, NULL));
  CALL(slipstream_delete_dataset(client, "example.step", SLIPSTREAM_NTS));
  CALL(slipstream_client_destroy(&client));
  printf("%s\n", ok ? "all checks passed" : "SOME CHECKS FAILED");
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
