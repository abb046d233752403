/* The shared-memory calls of the C API (loans, views, statistics) against a real server, in plain
 * C99: bytes round-trip exactly, the statistics show which path was taken, a view keeps its bytes
 * after its key is overwritten or deleted, loans and views outlive their client, and bad input
 * (zero bytes, a shape that does not match the loan, NULL or consumed handles) is an error.
 *
 * Usage: shm_capi_test shared   (SLIPSTREAM_ADDRESS is the server's Unix socket, shared memory on)
 *        shm_capi_test socket   (no fast path, e.g. over TCP: loans and views use the socket)
 * Prints one line per failed check; exits 1 if any failed. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slipstream.h"

#include "capi_checks.h"

/* 1 when the run expects the shared-memory path, 0 for the socket. */
static int expect_shared = 0;

static slipstream_client_stats_t stats_of(slipstream_client_t* client) {
  slipstream_client_stats_t stats;
  memset(&stats, 0, sizeof stats);
  EXPECT_OK(slipstream_client_stats(client, &stats));
  return stats;
}

/* Fills `bytes` bytes with a pattern that differs for every `seed`. */
static void fill_pattern(unsigned char* data, size_t bytes, unsigned seed) {
  size_t i;
  for (i = 0; i < bytes; ++i) data[i] = (unsigned char)((i * 131u + seed * 7u + (i >> 8)) & 0xffu);
}

/* A loan committed as a float64 tensor of shape {3, 4} and a uint8 tensor of 1 MiB (large enough
 * for get and unpack to use shared memory too), each read back by get, unpack and view. */
static void test_round_trips(slipstream_client_t* client) {
  const int64_t shape[2] = {3, 4};
  const int64_t big_shape[3] = {64, 128, 128};
  const size_t big_bytes = 64 * 128 * 128;
  double expected[12];
  unsigned char* big_expected = malloc(big_bytes);
  unsigned char* unpacked = malloc(big_bytes);
  slipstream_loan_t* loan = NULL;
  slipstream_tensor_t* tensor = NULL;
  slipstream_client_stats_t before, after;
  void* data = NULL;
  size_t bytes = 0;
  int shared = -1;
  size_t i;
  CHECK(big_expected != NULL && unpacked != NULL);
  if (big_expected == NULL || unpacked == NULL) return;

  before = stats_of(client);
  CHECK(before.shared_memory == expect_shared);
  EXPECT_OK(slipstream_loan(client, sizeof expected, &loan));
  CHECK(loan != NULL);
  EXPECT_OK(slipstream_loan_data(loan, &data, &bytes));
  CHECK(data != NULL && bytes == sizeof expected);
  EXPECT_OK(slipstream_loan_shared(loan, &shared));
  CHECK(shared == expect_shared);
  for (i = 0; i < 12; ++i) expected[i] = 1.5 * (double)i - 4.25;
  memcpy(data, expected, sizeof expected);
  EXPECT_OK(slipstream_put_tensor_loan(client, "shm.small", NTS, &loan, shape, 2,
                                       SLIPSTREAM_FLOAT64));
  CHECK(loan == NULL);
  after = stats_of(client);
  if (expect_shared) {
    CHECK(after.shm_loan_puts == before.shm_loan_puts + 1);
    CHECK(after.shm_puts == before.shm_puts + 1);
    CHECK(after.socket_puts == before.socket_puts);
  } else {
    CHECK(after.shm_loan_puts == 0 && after.shm_puts == 0);
    CHECK(after.socket_puts == before.socket_puts + 1);
  }
  CHECK(after.fallbacks == 0);

  EXPECT_OK(slipstream_get_tensor(client, "shm.small", NTS, &tensor));
  if (tensor != NULL) {
    const void* stored = NULL;
    const int64_t* dims = NULL;
    size_t rank = 0;
    slipstream_dtype_t dtype = -1;
    EXPECT_OK(slipstream_tensor_data(tensor, &stored, &bytes));
    CHECK(bytes == sizeof expected && memcmp(stored, expected, sizeof expected) == 0);
    EXPECT_OK(slipstream_tensor_shape(tensor, &dims, &rank));
    CHECK(rank == 2 && dims[0] == 3 && dims[1] == 4);
    EXPECT_OK(slipstream_tensor_dtype(tensor, &dtype));
    CHECK(dtype == SLIPSTREAM_FLOAT64);
  }
  EXPECT_OK(slipstream_tensor_destroy(&tensor));

  /* 1 MiB: get and unpack of this size also take shared memory when it is on. */
  fill_pattern(big_expected, big_bytes, 5);
  before = stats_of(client);
  EXPECT_OK(slipstream_loan(client, big_bytes, &loan));
  EXPECT_OK(slipstream_loan_data(loan, &data, NULL));
  if (data != NULL) memcpy(data, big_expected, big_bytes);
  EXPECT_OK(slipstream_put_tensor_loan(client, "shm.big", NTS, &loan, big_shape, 3,
                                       SLIPSTREAM_UINT8));
  memset(unpacked, 0, big_bytes);
  EXPECT_OK(slipstream_unpack_tensor(client, "shm.big", NTS, unpacked, big_bytes, big_shape, 3,
                                     SLIPSTREAM_UINT8, SLIPSTREAM_C_ORDER));
  CHECK(memcmp(unpacked, big_expected, big_bytes) == 0);
  after = stats_of(client);
  CHECK(after.shm_loan_puts == before.shm_loan_puts + (uint64_t)expect_shared);
  CHECK(after.shm_gets == before.shm_gets + (uint64_t)expect_shared);
  CHECK(after.socket_gets == before.socket_gets + (uint64_t)!expect_shared);
  free(big_expected);
  free(unpacked);
}

/* Views: the bytes, shape and dtype; the same bytes after the key is overwritten and deleted. */
static void test_views(slipstream_client_t* client) {
  const int64_t shape[3] = {2, 3, 4};
  int32_t values[24], zeros[24];
  slipstream_view_t* view = NULL;
  slipstream_client_stats_t before, after;
  const void* data = NULL;
  const int64_t* dims = NULL;
  size_t rank = 0, bytes = 0, i;
  slipstream_dtype_t dtype = -1;
  int shared = -1, existed = 0;
  for (i = 0; i < 24; ++i) {
    values[i] = (int32_t)(i * 1000003u) - 7;
    zeros[i] = 0;
  }
  EXPECT_OK(slipstream_put_tensor(client, "shm.view", NTS, values, shape, 3, SLIPSTREAM_INT32,
                                  SLIPSTREAM_C_ORDER));
  before = stats_of(client);
  EXPECT_OK(slipstream_view_tensor(client, "shm.view", NTS, &view));
  CHECK(view != NULL);
  after = stats_of(client);
  CHECK(after.shm_views == before.shm_views + (uint64_t)expect_shared);
  CHECK(after.socket_gets == before.socket_gets + (uint64_t)!expect_shared);
  EXPECT_OK(slipstream_view_shared(view, &shared));
  CHECK(shared == expect_shared);
  EXPECT_OK(slipstream_view_dtype(view, &dtype));
  CHECK(dtype == SLIPSTREAM_INT32);
  EXPECT_OK(slipstream_view_shape(view, &dims, &rank));
  CHECK(rank == 3 && dims[0] == 2 && dims[1] == 3 && dims[2] == 4);
  EXPECT_OK(slipstream_view_data(view, SLIPSTREAM_INT32, 3, &data, &bytes));
  CHECK(bytes == sizeof values && data != NULL && memcmp(data, values, sizeof values) == 0);
  EXPECT_OK(slipstream_view_data(view, SLIPSTREAM_INT32, 0, &data, NULL));

  /* The wrong dtype or rank is refused and leaves the outputs alone. */
  {
    const void* untouched = &bytes;
    EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                  slipstream_view_data(view, SLIPSTREAM_FLOAT32, 3, &untouched, NULL));
    CHECK(strstr(slipstream_last_error(), "INT32") != NULL);
    EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                  slipstream_view_data(view, SLIPSTREAM_INT32, 2, &untouched, NULL));
    EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                  slipstream_view_data(view, 99, 3, &untouched, NULL));
    CHECK(untouched == (const void*)&bytes);
  }

  /* Overwritten, then deleted: the view still reads the bytes it saw. */
  EXPECT_OK(slipstream_put_tensor(client, "shm.view", NTS, zeros, shape, 3, SLIPSTREAM_INT32,
                                  SLIPSTREAM_C_ORDER));
  CHECK(memcmp(data, values, sizeof values) == 0);
  EXPECT_OK(slipstream_delete_tensor(client, "shm.view", NTS, &existed));
  CHECK(existed == 1);
  CHECK(memcmp(data, values, sizeof values) == 0);
  EXPECT_OK(slipstream_view_destroy(&view));
  CHECK(view == NULL);
  EXPECT_OK(slipstream_view_destroy(&view));
  EXPECT_OK(slipstream_view_destroy(NULL));

  /* A missing key or a key of another type. */
  view = NULL;
  EXPECT_STATUS(SLIPSTREAM_KEY_NOT_FOUND, slipstream_view_tensor(client, "shm.view", NTS, &view));
  CHECK(view == NULL);
  EXPECT_OK(slipstream_put_bytes(client, "shm.bytes", NTS, "abc", 3));
  EXPECT_STATUS(SLIPSTREAM_WRONG_TYPE, slipstream_view_tensor(client, "shm.bytes", NTS, &view));
  CHECK(view == NULL);
}

/* A loan of 40 bytes committed as "shm.bad" through `committer` with arguments that are
 * refused: INVALID_ARGUMENT, and the loan consumed all the same. */
static void expect_refused_commit(slipstream_client_t* client, slipstream_client_t* committer,
                                  const int64_t* shape, size_t rank, slipstream_dtype_t dtype) {
  slipstream_loan_t* loan = NULL;
  EXPECT_OK(slipstream_loan(client, 40, &loan));
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                slipstream_put_tensor_loan(committer, "shm.bad", NTS, &loan, shape, rank, dtype));
  CHECK(loan == NULL);
}

/* Bad input: every one an error status with a message, never a crash. */
static void test_errors(slipstream_client_t* client) {
  const int64_t shape[1] = {5};
  const int64_t negative[2] = {-2, -4};
  slipstream_loan_t* loan = NULL;
  slipstream_view_t* view = NULL;
  slipstream_client_stats_t stats;
  void* data = NULL;
  const void* view_data = NULL;
  const int64_t* dims = NULL;
  size_t rank = 0;
  slipstream_dtype_t dtype = 0;
  int flag = 0, exists = 1;

  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT, slipstream_loan(client, 0, &loan));
  CHECK(strstr(slipstream_last_error(), "byte") != NULL);
  CHECK(loan == NULL);
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT, slipstream_loan(NULL, 8, &loan));
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT, slipstream_loan(client, 8, NULL));

  /* A shape that needs another size: refused, and the loan is consumed all the same. */
  EXPECT_OK(slipstream_loan(client, 32, &loan));
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                slipstream_put_tensor_loan(client, "shm.bad", NTS, &loan, shape, 1,
                                           SLIPSTREAM_FLOAT64));
  CHECK(strstr(slipstream_last_error(), "32") != NULL);
  CHECK(loan == NULL);
  EXPECT_OK(slipstream_tensor_exists(client, "shm.bad", NTS, &exists));
  CHECK(exists == 0);
  /* The consumed (NULL) handle: refused without a crash. */
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                slipstream_put_tensor_loan(client, "shm.bad", NTS, &loan, shape, 1,
                                           SLIPSTREAM_FLOAT64));
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                slipstream_put_tensor_loan(client, "shm.bad", NTS, NULL, shape, 1,
                                           SLIPSTREAM_FLOAT64));
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT, slipstream_loan_data(loan, &data, NULL));
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT, slipstream_loan_shared(loan, &flag));
  EXPECT_OK(slipstream_loan_destroy(&loan));
  EXPECT_OK(slipstream_loan_destroy(NULL));

  /* Bad dtype, negative dimensions, a NULL shape, a NULL client: all consume the loan. */
  expect_refused_commit(client, client, shape, 1, 42);
  expect_refused_commit(client, client, negative, 2, SLIPSTREAM_FLOAT64);
  expect_refused_commit(client, client, NULL, 1, SLIPSTREAM_FLOAT64);
  expect_refused_commit(client, NULL, shape, 1, SLIPSTREAM_FLOAT64);
  EXPECT_OK(slipstream_tensor_exists(client, "shm.bad", NTS, &exists));
  CHECK(exists == 0);

  /* A loan given back without a commit. */
  EXPECT_OK(slipstream_loan(client, 4096, &loan));
  EXPECT_OK(slipstream_loan_destroy(&loan));
  CHECK(loan == NULL);

  /* NULL view handles and outputs. */
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT, slipstream_view_tensor(NULL, "x", NTS, &view));
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT, slipstream_view_tensor(client, "x", NTS, NULL));
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT, slipstream_view_dtype(view, &dtype));
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT, slipstream_view_shape(view, &dims, &rank));
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                slipstream_view_data(view, SLIPSTREAM_FLOAT32, 0, &view_data, NULL));
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT, slipstream_view_shared(view, &flag));

  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT, slipstream_client_stats(NULL, &stats));
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT, slipstream_client_stats(client, NULL));
}

/* A loan and a view stay usable after their client is destroyed: the view is read, the loan can
 * only be destroyed. */
static void test_outliving_the_client(void) {
  const int64_t shape[1] = {4};
  const float values[4] = {1.0f, -2.5f, 3.25f, 1e30f};
  slipstream_client_t* other = NULL;
  slipstream_loan_t* loan = NULL;
  slipstream_view_t* view = NULL;
  const void* data = NULL;
  void* region = NULL;
  EXPECT_OK(slipstream_client_create(NULL, 0, &other));
  if (other == NULL) return;
  EXPECT_OK(slipstream_put_tensor(other, "shm.outlive", NTS, values, shape, 1, SLIPSTREAM_FLOAT32,
                                  SLIPSTREAM_C_ORDER));
  EXPECT_OK(slipstream_view_tensor(other, "shm.outlive", NTS, &view));
  EXPECT_OK(slipstream_loan(other, 256, &loan));
  EXPECT_OK(slipstream_client_destroy(&other));
  EXPECT_OK(slipstream_view_data(view, SLIPSTREAM_FLOAT32, 1, &data, NULL));
  CHECK(data != NULL && memcmp(data, values, sizeof values) == 0);
  EXPECT_OK(slipstream_loan_data(loan, &region, NULL));
  if (region != NULL) memset(region, 7, 256);
  EXPECT_OK(slipstream_view_destroy(&view));
  EXPECT_OK(slipstream_loan_destroy(&loan));
}

int main(int argc, char** argv) {
  slipstream_client_t* client = NULL;
  if (argc != 2 || (strcmp(argv[1], "shared") != 0 && strcmp(argv[1], "socket") != 0)) {
    fprintf(stderr, "usage: shm_capi_test shared|socket\n");
    return 2;
  }
  expect_shared = strcmp(argv[1], "shared") == 0;
  EXPECT_OK(slipstream_client_create(NULL, 0, &client));
  if (client == NULL) return 1;
  test_round_trips(client);
  test_views(client);
  test_errors(client);
  test_outliving_the_client();
  EXPECT_OK(slipstream_client_destroy(&client));
  printf("shm_capi_test %s: %s\n", argv[1], failures == 0 ? "all checks passed" : "FAILED");
  return failures == 0 ? 0 : 1;
}
