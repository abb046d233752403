/* Checks shared by the C API tests (plain C99): CHECK and EXPECT_STATUS record a failure with
 * its location and the library's last error, and count it in `failures`; a test's main returns
 * non-zero when it is positive. Include once per test program, after slipstream.h. */
#ifndef SLIPSTREAM_TESTS_CAPI_CHECKS_H
#define SLIPSTREAM_TESTS_CAPI_CHECKS_H

#include <stdio.h>

#include "slipstream.h"

static int failures = 0;

/* Records a failed check with its location and the library's last error. */
static void report(const char* file, int line, const char* what) {
  fprintf(stderr, "%s:%d: FAILED: %s (last error: %s)\n", file, line, what,
          slipstream_last_error());
  ++failures;
}

#define CHECK(cond)                                 \
  do {                                              \
    if (!(cond)) report(__FILE__, __LINE__, #cond); \
  } while (0)
/* A call must return `expected`; on an error status the message must not be empty. */
#define EXPECT_STATUS(expected, call)                                                              \
  do {                                                                                             \
    slipstream_status_t status_ = (call);                                                          \
    if (status_ != (expected)) {                                                                   \
      fprintf(stderr, "%s:%d: %s returned %d (%s), expected %d (%s)\n", __FILE__, __LINE__, #call, \
              (int)status_, slipstream_status_name(status_), (int)(expected),                      \
              slipstream_status_name(expected));                                                   \
      report(__FILE__, __LINE__, "status");                                                        \
    } else if ((expected) != SLIPSTREAM_OK && slipstream_last_error()[0] == '\0') {                \
      report(__FILE__, __LINE__, "an error without a message: " #call);                            \
    }                                                                                              \
  } while (0)
#define EXPECT_OK(call) EXPECT_STATUS(SLIPSTREAM_OK, call)
#define NTS SLIPSTREAM_NTS

#endif
