// include/slipstream.h compiled as C++ (capi_test.c compiles it as C99), plus the calls that need
// no server: status names, dtype sizes, argument errors and the per-thread last-error message.
#include <cstdio>
#include <cstring>
#include <thread>

#include "slipstream.h"

namespace {

int failures = 0;

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "FAILED: %s (last error: %s)\n", what, slipstream_last_error());
    ++failures;
  }
}

}  // namespace

int main() {
  static_assert(SLIPSTREAM_OK == 0 && SLIPSTREAM_BUFFER_TOO_SMALL == 8);
  check(std::strcmp(slipstream_status_name(SLIPSTREAM_AUTH_ERROR), "authentication") == 0,
        "status name of AUTH_ERROR");
  check(std::strcmp(slipstream_status_name(static_cast<slipstream_status_t>(77)),
                    "unknown status") == 0,
        "status name of an unknown code");
  check(slipstream_dtype_size(SLIPSTREAM_FLOAT64) == 8, "dtype size of FLOAT64");

  slipstream_dataset_t* dataset = nullptr;
  check(slipstream_dataset_create("d", SLIPSTREAM_NTS, &dataset) == SLIPSTREAM_OK, "create");
  const float values[3] = {1, 2, 3};
  const int64_t bad_shape[] = {3};
  check(slipstream_dataset_add_tensor(dataset, "t", SLIPSTREAM_NTS, values, bad_shape, 1,
                                      SLIPSTREAM_FLOAT32, SLIPSTREAM_C_ORDER) == SLIPSTREAM_OK,
        "add_tensor reads product(shape) elements");
  check(slipstream_dataset_add_tensor(dataset, "t", SLIPSTREAM_NTS, values, bad_shape, 1,
                                      SLIPSTREAM_FLOAT32,
                                      SLIPSTREAM_C_ORDER) == SLIPSTREAM_INVALID_ARGUMENT,
        "a duplicate tensor name is refused");
  // The message belongs to this thread: another thread sees its own (empty) state.
  std::string other;
  std::thread([&] { other = slipstream_last_error(); }).join();
  check(other.empty(), "last error is per thread");
  check(std::strstr(slipstream_last_error(), "t") != nullptr, "message names the tensor");
  check(slipstream_dataset_destroy(&dataset) == SLIPSTREAM_OK && dataset == nullptr, "destroy");
  check(slipstream_dataset_destroy(nullptr) == SLIPSTREAM_OK, "destroy(NULL)");
  std::printf("header_cxx_test: %s\n", failures == 0 ? "all checks passed" : "FAILED");
  return failures == 0 ? 0 : 1;
}
