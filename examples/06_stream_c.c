/* Example 06 (C API): a stream from 2 writers to a group of 2 readers, as example 05 does in C++.
 * Each writer publishes its half of a 2-D field `meshes/T` (8 x 5, row-major) every step; each
 * reader takes one slab of rows (`slicedataset`) and checks every element it got. In a simulation
 * each writer rank and each reader is its own process; here all four handles live in one thread,
 * taking turns (both writers end a step, then both readers read it), so the example needs no
 * threads.
 * Usage: 06_stream_c [ADDRESS]   (default: SLIPSTREAM_ADDRESS, then SSDB). Exits non-zero on any
 * error or mismatch, so it also runs as a test. */
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

enum { kRows = 8, kCols = 5, kSteps = 3 };

static double temperature(int64_t step, int64_t row, int64_t col) {
  return 300.0 + (double)step + 0.1 * (double)(row * kCols + col);
}

int main(int argc, char** argv) {
  slipstream_client_options_t client;
  slipstream_stream_writer_options_t writer_options;
  slipstream_stream_reader_options_t reader_options;
  slipstream_stream_writer_t* writers[2] = {NULL, NULL};
  slipstream_stream_reader_t* readers[2] = {NULL, NULL};
  const int64_t global[2] = {kRows, kCols};
  double rows[2][4 * kCols]; /* each writer's 4 rows */
  int64_t step;
  int rank, ok = 1;

  CALL(slipstream_client_options_init(&client));
  client.address = argc > 1 ? argv[1] : NULL;
  client.address_length = SLIPSTREAM_NTS;
  /* The writers keep their steps until one reader group has joined. */
  CALL(slipstream_stream_writer_options_init(&writer_options));
  writer_options.expected_groups = 1;
  for (rank = 0; rank < 2; ++rank) {
    CALL(slipstream_stream_writer_create(&client, "example06.field", SLIPSTREAM_NTS, (uint32_t)rank,
                                         2, &writer_options, &writers[rank]));
  }
  CALL(slipstream_stream_reader_options_init(&reader_options));
  reader_options.strategy = "slicedataset";
  reader_options.strategy_length = SLIPSTREAM_NTS;
  for (rank = 0; rank < 2; ++rank) {
    CALL(slipstream_stream_reader_create(&client, "example06.field", SLIPSTREAM_NTS, "analysis",
                                         SLIPSTREAM_NTS, (uint32_t)rank, 2, &reader_options,
                                         &readers[rank]));
  }

  for (step = 0; step < kSteps; ++step) {
    /* Writers: rank r owns rows 4r .. 4r+3, borrowed by put_chunk until end_step. */
    for (rank = 0; rank < 2; ++rank) {
      const int64_t offset[2] = {4 * rank, 0}, extent[2] = {4, kCols};
      int64_t r, c;
      for (r = 0; r < 4; ++r) {
        for (c = 0; c < kCols; ++c) rows[rank][r * kCols + c] = temperature(step, offset[0] + r, c);
      }
      CALL(slipstream_stream_begin_step(writers[rank], step));
      CALL(slipstream_stream_put_chunk(writers[rank], "meshes/T", SLIPSTREAM_NTS,
                                       SLIPSTREAM_FLOAT64, 2, global, offset, extent, rows[rank],
                                       sizeof rows[rank]));
      if (rank == 0) {
        CALL(slipstream_stream_set_attribute_double(writers[0], SLIPSTREAM_STEP_ATTRIBUTE, "/",
                                                    SLIPSTREAM_NTS, "time", SLIPSTREAM_NTS,
                                                    0.1 * (double)step));
      }
      CALL(slipstream_stream_end_step(writers[rank])); /* visible once both have ended it */
    }
    /* Readers: each checks its pieces (offset, extent, row-major bytes). */
    for (rank = 0; rank < 2; ++rank) {
      slipstream_stream_next_kind_t kind;
      int64_t number;
      slipstream_stream_step_t* s = NULL;
      size_t component, pieces, p;
      double time = 0;
      int64_t elements = 0;
      CALL(slipstream_stream_next_step(readers[rank], &kind, &number, &s));
      if (kind != SLIPSTREAM_STREAM_STEP) {
        fprintf(stderr, "reader %d: expected step %lld\n", rank, (long long)step);
        return EXIT_FAILURE;
      }
      CALL(slipstream_stream_step_attribute_double(s, SLIPSTREAM_STEP_ATTRIBUTE, "/",
                                                   SLIPSTREAM_NTS, "time", SLIPSTREAM_NTS, &time));
      CALL(slipstream_stream_step_find_component(s, "meshes/T", SLIPSTREAM_NTS, &component));
      CALL(slipstream_stream_step_component(s, component, NULL, NULL, NULL, NULL, NULL, &pieces));
      for (p = 0; p < pieces; ++p) {
        const int64_t *offset, *extent;
        const void* data;
        size_t bytes;
        int64_t r, c;
        CALL(slipstream_stream_step_piece(s, component, p, &offset, &extent, NULL));
        CALL(slipstream_stream_step_piece_data(s, component, p, SLIPSTREAM_FLOAT64, 2, &data,
                                               &bytes));
        for (r = 0; r < extent[0]; ++r) {
          for (c = 0; c < extent[1]; ++c) {
            const double got = ((const double*)data)[r * extent[1] + c];
            ok &= got == temperature(number, offset[0] + r, offset[1] + c);
            ++elements;
          }
        }
      }
      printf("  reader %d, step %lld (time %.1f): %lld elements in %zu piece(s)\n", rank,
             (long long)number, time, (long long)elements, pieces);
      CALL(slipstream_stream_step_release(s)); /* the writers may reuse the slot */
      CALL(slipstream_stream_step_destroy(&s));
    }
  }

  for (rank = 0; rank < 2; ++rank) CALL(slipstream_stream_writer_close(writers[rank]));
  for (rank = 0; rank < 2; ++rank) {
    slipstream_stream_next_kind_t kind;
    slipstream_stream_step_t* s = NULL;
    CALL(slipstream_stream_next_step(readers[rank], &kind, NULL, &s));
    ok &= kind == SLIPSTREAM_STREAM_END; /* every writer closed, every step read */
    CALL(slipstream_stream_reader_destroy(&readers[rank]));
    CALL(slipstream_stream_writer_destroy(&writers[rank]));
  }
  printf("%s\n", ok ? "every element matched" : "MISMATCH");
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
