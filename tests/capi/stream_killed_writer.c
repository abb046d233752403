/* The victim of tests/python/test_stream_killed_writers.py in C: writer 1 of 2 of a stream writes
 * its half of step 0, whose end_step reserves step 1 (the default), begins step 1 (which sends
 * nothing: the step is already reserved), prints "inside 1" and sleeps until the test SIGKILLs
 * it. Chunks of 1 byte or more go through shared memory over a Unix socket.
 * Usage: stream_killed_writer ADDRESS STREAM. Exits 1 on any error. */
#define _POSIX_C_SOURCE 200112L /* sleep() under -std=c99 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "capi_call.h"
#include "slipstream.h"

int main(int argc, char** argv) {
  slipstream_client_options_t client;
  slipstream_stream_writer_options_t options;
  slipstream_stream_writer_t* writer = NULL;
  const int64_t global[1] = {8}, offset[1] = {4}, extent[1] = {4};
  const double rho[4] = {1.0, 1.0, 1.0, 1.0}; /* meshes/rho(4:8) of step 0 */
  int second;

  if (argc != 3) {
    fprintf(stderr, "usage: %s ADDRESS STREAM\n", argv[0]);
    return EXIT_FAILURE;
  }
  CALL(slipstream_client_options_init(&client));
  client.address = argv[1];
  client.address_length = SLIPSTREAM_NTS;
  CALL(slipstream_stream_writer_options_init(&options));
  options.shared_memory_min_bytes = 1;
  CALL(slipstream_stream_writer_create(&client, argv[2], SLIPSTREAM_NTS, 1, 2, &options, &writer));
  CALL(slipstream_stream_begin_step(writer, 0));
  CALL(slipstream_stream_put_chunk(writer, "meshes/rho", SLIPSTREAM_NTS, SLIPSTREAM_FLOAT64, 1,
                                   global, offset, extent, rho, sizeof rho));
  CALL(slipstream_stream_end_step(writer)); /* reserves step 1 */
  CALL(slipstream_stream_begin_step(writer, 1));
  printf("inside 1\n");
  fflush(stdout);
  for (second = 0; second < 600; ++second) sleep(1); /* killed here, before any chunk of step 1 */
  fprintf(stderr, "stream_killed_writer: not killed within 600 s\n");
  return EXIT_FAILURE;
}
