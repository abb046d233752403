/* CALL(call) for the C test programs that stop at the first error (the victims the Python tests
 * kill): on a status other than SLIPSTREAM_OK, print the call, the status and the library's last
 * error, and exit(EXIT_FAILURE). */
#ifndef SLIPSTREAM_TESTS_CAPI_CALL_H
#define SLIPSTREAM_TESTS_CAPI_CALL_H

#include <stdio.h>
#include <stdlib.h>

#include "slipstream.h"

#define CALL(call)                                                                    \
  do {                                                                                \
    slipstream_status_t status_ = (call);                                             \
    if (status_ != SLIPSTREAM_OK) {                                                   \
      fprintf(stderr, "%s failed (%s): %s\n", #call, slipstream_status_name(status_), \
              slipstream_last_error());                                               \
      exit(EXIT_FAILURE);                                                             \
    }                                                                                 \
  } while (0)

#endif
