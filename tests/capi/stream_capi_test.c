/* The C API's streams against a real server, in plain C99: two writer handles (ranks 0 and 1 of
 * 2) and two reader groups of two readers each, all in one thread (each step is written by both
 * writers, then read by every reader, so nothing waits). Checks every element of every piece of
 * every component against the formula that wrote it, that each group covers every element
 * exactly once with the right source ranks, the attributes of every type and level, and the
 * errors (misuse, bad arguments, wrong types, step and begin timeouts), and the writer options
 * that are observable from outside (reserve_next_step through SS.STREAM.INFO).
 *
 * Components (row-major extents, as the C API takes them) and who writes what:
 *   meshes/E/x      float64 {7, 10}   rank 0: rows 0-2; rank 1: rows 3-6 as two chunks of 5
 *                                     columns. Value at (r, c) in step s: s * 1000 + r * 10 + c
 *                                     + 0.25.
 *   particles/e/id  int64 {12}        rank 0: 0-5; rank 1: 6-11. Value: s * 100000 + i.
 *   meshes/B/z      int32 {2, 3, 4}   rank 1 only, whole. Value: s * 1000 + row-major index.
 * Groups: "slices" (slicedataset along dimension 0: rank 1's chunks of E/x are cut between rows 3
 * and 4) and "bins" (roundrobin with no_empty_readers: B/z, one chunk, is halved along its last
 * dimension, so those pieces are gathered, not views).
 *
 * Usage: stream_capi_test [int64-arrays]   (SLIPSTREAM_ADDRESS names a server, as with_server.sh
 *   sets). With `int64-arrays`, only the int64 array attribute check runs (see CMakeLists.txt).
 * Prints one line per failed check; exits 1 if any failed. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slipstream.h"

#include "capi_checks.h"
#define STEP SLIPSTREAM_STEP_ATTRIBUTE
#define STREAM SLIPSTREAM_STREAM_ATTRIBUTE

enum { kSteps = 3, kWriters = 2, kReaders = 2, kGroups = 2, kComponents = 3 };
static const char* const kStream = "capi.stream";
static const char* const kGroupNames[kGroups] = {"slices", "bins"};
static const char* const kNames[kComponents] = {"meshes/E/x", "particles/e/id", "meshes/B/z"};
static const slipstream_dtype_t kDtypes[kComponents] = {SLIPSTREAM_FLOAT64, SLIPSTREAM_INT64,
                                                        SLIPSTREAM_INT32};
static const size_t kDims[kComponents] = {2, 1, 3};
static const int64_t kGlobal[kComponents][3] = {{7, 10, 0}, {12, 0, 0}, {2, 3, 4}};
static const char* const kAxisLabels[2] = {"y", "x"};
static const double kGridSpacing[2] = {0.5, 0.125};
static const double kGlobalOffset[2] = {-3, 4};

static int64_t step_number(int k) { return 10 * k + 5; } /* increasing, not consecutive */

/* The value of element `index` (row-major, whole component) at (row, col) of component `c`. */
static double value_of(int c, int64_t step, int64_t index) {
  switch (c) {
    case 0:
      return (double)(step * 1000 + (index / 10) * 10 + index % 10) + 0.25;
    case 1:
      return (double)(step * 100000 + index);
    default:
      return (double)(step * 1000 + index);
  }
}

/* The writer rank that wrote element `index` of component `c`. */
static uint32_t owner_of(int c, int64_t index) {
  switch (c) {
    case 0:
      return index / 10 < 3 ? 0u : 1u;
    case 1:
      return index < 6 ? 0u : 1u;
    default:
      return 1u;
  }
}

static int64_t product(const int64_t* extent, size_t ndims) {
  int64_t n = 1;
  size_t d;
  for (d = 0; d < ndims; ++d) n *= extent[d];
  return n;
}

/* Fills `buffer` with the box (offset, extent) of component `c` for `step` and puts it (copied
 * when `copy`, else borrowed). */
static void put_box(slipstream_stream_writer_t* writer, int c, int64_t step, const int64_t* offset,
                    const int64_t* extent, void* buffer, int copy) {
  const size_t ndims = kDims[c];
  const int64_t count = product(extent, ndims);
  int64_t i;
  for (i = 0; i < count; ++i) {
    /* Position of element i within the box, then its index in the whole component. */
    int64_t rest = i, index = 0, stride = 1;
    size_t d;
    for (d = ndims; d-- > 0;) {
      const int64_t position = offset[d] + rest % extent[d];
      rest /= extent[d];
      index += position * stride;
      stride *= kGlobal[c][d];
    }
    if (kDtypes[c] == SLIPSTREAM_FLOAT64) ((double*)buffer)[i] = value_of(c, step, index);
    if (kDtypes[c] == SLIPSTREAM_INT64) ((int64_t*)buffer)[i] = (int64_t)value_of(c, step, index);
    if (kDtypes[c] == SLIPSTREAM_INT32) ((int32_t*)buffer)[i] = (int32_t)value_of(c, step, index);
  }
  EXPECT_OK((copy ? slipstream_stream_put_chunk_copy : slipstream_stream_put_chunk)(
      writer, kNames[c], NTS, kDtypes[c], ndims, kGlobal[c], offset, extent, buffer,
      (size_t)count * slipstream_dtype_size(kDtypes[c])));
}

/* Both writers write step k (the buffers are borrowed until end_step, so they live until then). */
static void write_step(slipstream_stream_writer_t** writers, int k) {
  static double e0[30], e1a[20], e1b[20];
  static int64_t id0[6], id1[6];
  static int32_t bz[24];
  const int64_t step = step_number(k);
  const int64_t e0_offset[2] = {0, 0}, e0_extent[2] = {3, 10};
  const int64_t e1a_offset[2] = {3, 0}, e1b_offset[2] = {3, 5}, e1_extent[2] = {4, 5};
  const int64_t id0_offset[1] = {0}, id1_offset[1] = {6}, id_extent[1] = {6};
  const int64_t bz_offset[3] = {0, 0, 0};
  EXPECT_OK(slipstream_stream_begin_step(writers[0], step));
  EXPECT_OK(slipstream_stream_begin_step(writers[1], step));
  put_box(writers[0], 0, step, e0_offset, e0_extent, e0, 0);
  put_box(writers[1], 0, step, e1a_offset, e1_extent, e1a, 0);
  put_box(writers[1], 0, step, e1b_offset, e1_extent, e1b, 0);
  put_box(writers[0], 1, step, id0_offset, id_extent, id0, 0);
  put_box(writers[1], 1, step, id1_offset, id_extent, id1, 0);
  put_box(writers[1], 2, step, bz_offset, kGlobal[2], bz, 1);
  memset(bz, 0x7f, sizeof bz); /* copied: the buffer may change before end_step */
  EXPECT_OK(slipstream_stream_set_attribute_double(writers[0], STEP, "/", NTS, "time", NTS,
                                                   0.5 * (double)step));
  EXPECT_OK(
      slipstream_stream_set_attribute_int64(writers[0], STEP, "/", NTS, "iteration", NTS, step));
  EXPECT_OK(slipstream_stream_set_attribute_strings(writers[0], STEP, "meshes/E", NTS, "axisLabels",
                                                    NTS, kAxisLabels, NULL, 2));
  EXPECT_OK(slipstream_stream_set_attribute_doubles(writers[0], STEP, "meshes/E", NTS,
                                                    "gridSpacing", NTS, kGridSpacing, 2));
  EXPECT_OK(slipstream_stream_set_attribute_string(writers[1], STEP, "meshes/E/x", NTS, "note", NTS,
                                                   "from rank 1", NTS));
  /* Misuse while the step is open. */
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT, slipstream_stream_begin_step(writers[0], step + 1));
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                slipstream_stream_put_chunk(writers[0], "bad", NTS, SLIPSTREAM_FLOAT64, 1,
                                            id_extent, id0_offset, id_extent, e0, 7));
  EXPECT_OK(slipstream_stream_end_step(writers[0]));
  EXPECT_OK(slipstream_stream_end_step(writers[1]));
}

/* Checks the attributes a reader got with step `step`. */
static void check_attributes(const slipstream_stream_step_t* s, int64_t step) {
  double time = 0, dummy = 0;
  int64_t iteration = 0;
  const char* text = NULL;
  size_t length = 0, count = 0;
  const double *spacing = NULL, *offsets = NULL;
  slipstream_attribute_type_t type = -1;
  EXPECT_OK(slipstream_stream_step_attribute_double(s, STEP, "/", NTS, "time", NTS, &time));
  CHECK(time == 0.5 * (double)step);
  EXPECT_OK(
      slipstream_stream_step_attribute_int64(s, STEP, "/", NTS, "iteration", NTS, &iteration));
  CHECK(iteration == step);
  EXPECT_OK(slipstream_stream_step_attribute_info(s, STEP, "meshes/E", NTS, "axisLabels", NTS,
                                                  &type, &count));
  CHECK(type == SLIPSTREAM_ATTRIBUTE_STRINGS && count == 2);
  EXPECT_OK(slipstream_stream_step_attribute_strings_element(s, STEP, "meshes/E", NTS, "axisLabels",
                                                             NTS, 1, &text, &length));
  CHECK(length == 1 && memcmp(text, "x", 1) == 0);
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                slipstream_stream_step_attribute_strings_element(
                    s, STEP, "meshes/E", NTS, "axisLabels", NTS, 2, &text, NULL));
  EXPECT_OK(slipstream_stream_step_attribute_doubles(s, STEP, "meshes/E", NTS, "gridSpacing", NTS,
                                                     &spacing, &count));
  CHECK(count == 2 && spacing[0] == 0.5 && spacing[1] == 0.125);
  EXPECT_OK(slipstream_stream_step_attribute_string(s, STEP, "meshes/E/x", NTS, "note", NTS, &text,
                                                    &length));
  CHECK(length == 11 && memcmp(text, "from rank 1", 11) == 0);
  /* Stream-level attributes, set before the first step. */
  EXPECT_OK(slipstream_stream_step_attribute_string(s, STREAM, "/", NTS, "software", NTS, &text,
                                                    &length));
  CHECK(length == 14 && memcmp(text, "slipstream-c99", 14) == 0);
  EXPECT_OK(slipstream_stream_step_attribute_doubles(s, STREAM, "meshes/E", NTS, "gridGlobalOffset",
                                                     NTS, &offsets, &count));
  CHECK(count == 2 && offsets[0] == -3 && offsets[1] == 4);
  /* Wrong type, wrong level, missing. */
  EXPECT_STATUS(SLIPSTREAM_WRONG_TYPE, slipstream_stream_step_attribute_double(
                                           s, STEP, "/", NTS, "iteration", NTS, &dummy));
  EXPECT_STATUS(SLIPSTREAM_KEY_NOT_FOUND,
                slipstream_stream_step_attribute_double(s, STREAM, "/", NTS, "time", NTS, &dummy));
  EXPECT_STATUS(SLIPSTREAM_KEY_NOT_FOUND, slipstream_stream_step_attribute_info(
                                              s, STEP, "/", NTS, "missing", NTS, NULL, NULL));
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                slipstream_stream_step_attribute_double(s, 7, "/", NTS, "time", NTS, &dummy));
}

/* Checks every element of every piece reader `r` of a group got of step `step`, counting in
 * covered[c][index] how often each element was seen. */
static void check_step(slipstream_stream_step_t* s, int64_t step, int r,
                       int covered[kComponents][120]) {
  size_t count = 0, readers = 0, index = 0, c_index = 0;
  int c;
  EXPECT_OK(slipstream_stream_step_component_count(s, &count));
  CHECK(count == kComponents);
  EXPECT_OK(slipstream_stream_step_readers(s, &readers, &index));
  CHECK(readers == kReaders && index == (size_t)r);
  EXPECT_STATUS(SLIPSTREAM_KEY_NOT_FOUND,
                slipstream_stream_step_find_component(s, "meshes/none", NTS, &c_index));
  EXPECT_STATUS(
      SLIPSTREAM_INVALID_ARGUMENT,
      slipstream_stream_step_component(s, kComponents, NULL, NULL, NULL, NULL, NULL, NULL));
  for (c = 0; c < kComponents; ++c) {
    const char* name = NULL;
    size_t name_length = 0, ndims = 0, pieces = 0, p, d;
    slipstream_dtype_t dtype = -1;
    const int64_t* global = NULL;
    EXPECT_OK(slipstream_stream_step_find_component(s, kNames[c], NTS, &c_index));
    EXPECT_OK(slipstream_stream_step_component(s, c_index, &name, &name_length, &dtype, &ndims,
                                               &global, &pieces));
    CHECK(name_length == strlen(kNames[c]) && memcmp(name, kNames[c], name_length) == 0);
    CHECK(dtype == kDtypes[c] && ndims == kDims[c]);
    if (ndims != kDims[c]) continue;
    for (d = 0; d < ndims; ++d) CHECK(global[d] == kGlobal[c][d]);
    EXPECT_OK(slipstream_stream_step_load(s, c_index));
    for (p = 0; p < pieces; ++p) {
      const int64_t *offset = NULL, *extent = NULL;
      uint32_t source = 99;
      const void* data = NULL;
      size_t bytes = 0;
      int64_t n, elements;
      EXPECT_OK(slipstream_stream_step_piece(s, c_index, p, &offset, &extent, &source));
      EXPECT_OK(slipstream_stream_step_piece_data(s, c_index, p, kDtypes[c], ndims, &data, &bytes));
      if (p == 0) {
        EXPECT_STATUS(
            SLIPSTREAM_INVALID_ARGUMENT,
            slipstream_stream_step_piece_data(s, c_index, p, SLIPSTREAM_UINT8, 0, &data, NULL));
        EXPECT_STATUS(
            SLIPSTREAM_INVALID_ARGUMENT,
            slipstream_stream_step_piece_data(s, c_index, p, kDtypes[c], ndims + 1, &data, NULL));
      }
      elements = product(extent, ndims);
      CHECK(bytes == (size_t)elements * slipstream_dtype_size(dtype));
      for (n = 0; n < elements && bytes == (size_t)elements * slipstream_dtype_size(dtype); ++n) {
        int64_t rest = n, index_in_component = 0, stride = 1;
        double got = 0;
        for (d = ndims; d-- > 0;) {
          index_in_component += (offset[d] + rest % extent[d]) * stride;
          rest /= extent[d];
          stride *= global[d];
        }
        if (dtype == SLIPSTREAM_FLOAT64) got = ((const double*)data)[n];
        if (dtype == SLIPSTREAM_INT64) got = (double)((const int64_t*)data)[n];
        if (dtype == SLIPSTREAM_INT32) got = (double)((const int32_t*)data)[n];
        if (got != value_of(c, step, index_in_component)) {
          fprintf(stderr, "step %lld %s element %lld: %g, expected %g\n", (long long)step,
                  kNames[c], (long long)index_in_component, got,
                  value_of(c, step, index_in_component));
          report(__FILE__, __LINE__, "element value");
          return;
        }
        CHECK(owner_of(c, index_in_component) == source);
        ++covered[c][index_in_component];
      }
    }
    EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                  slipstream_stream_step_piece(s, c_index, pieces, NULL, NULL, NULL));
  }
  check_attributes(s, step);
}

/* Every reader of both groups reads step k; each group must cover every element once. */
static void read_step(slipstream_stream_reader_t* readers[kGroups][kReaders], int k) {
  int g, r, c;
  for (g = 0; g < kGroups; ++g) {
    int covered[kComponents][120];
    memset(covered, 0, sizeof covered);
    for (r = 0; r < kReaders; ++r) {
      slipstream_stream_next_kind_t kind = -1;
      int64_t number = -1;
      slipstream_stream_step_t* s = NULL;
      EXPECT_OK(slipstream_stream_next_step(readers[g][r], &kind, &number, &s));
      CHECK(kind == SLIPSTREAM_STREAM_STEP && s != NULL && number == step_number(k));
      if (s == NULL) continue;
      check_step(s, step_number(k), r, covered);
      if (k == 0 && g == 0 && r == 0) {
        /* After release: loaded pieces stay readable; nothing more can be loaded. The step
         * handle was loaded in check_step, so reload the data pointer and read it again. */
        const void* data = NULL;
        size_t bytes = 0;
        EXPECT_OK(slipstream_stream_step_release(s));
        EXPECT_OK(slipstream_stream_step_release(s));
        EXPECT_OK(slipstream_stream_step_piece_data(s, 0, 0, SLIPSTREAM_FLOAT64, 0, &data, &bytes));
        CHECK(data != NULL && ((const double*)data)[0] == value_of(0, step_number(k), 0));
      }
      EXPECT_OK(slipstream_stream_step_destroy(&s));
      CHECK(s == NULL);
    }
    for (c = 0; c < kComponents; ++c) {
      const int64_t total = product(kGlobal[c], kDims[c]);
      int64_t i;
      for (i = 0; i < total; ++i) {
        if (covered[c][i] != 1) {
          fprintf(stderr, "group %s step %lld %s element %lld seen %d times\n", kGroupNames[g],
                  (long long)step_number(k), kNames[c], (long long)i, covered[c][i]);
          report(__FILE__, __LINE__, "coverage");
          break;
        }
      }
    }
  }
}

/* A step released before it loaded is refused further loads but keeps its metadata, also
 * once its reader is gone. */
static void check_load_after_release(void) {
  slipstream_stream_writer_t* writer = NULL;
  slipstream_stream_reader_t* reader = NULL;
  slipstream_stream_next_kind_t kind = -1;
  slipstream_stream_step_t* s = NULL;
  const int64_t global[1] = {4}, offset[1] = {0};
  const int32_t values[4] = {1, 2, 3, 4};
  const void* data = NULL;
  size_t count = 0, pieces = 0;
  EXPECT_OK(slipstream_stream_writer_create(NULL, "capi.stream.release", NTS, 0, 1, NULL, &writer));
  EXPECT_OK(slipstream_stream_reader_create(NULL, "capi.stream.release", NTS, "g", NTS, 0, 1, NULL,
                                            &reader));
  EXPECT_OK(slipstream_stream_begin_step(writer, 3));
  EXPECT_OK(slipstream_stream_put_chunk(writer, "v", NTS, SLIPSTREAM_INT32, 1, global, offset,
                                        global, values, sizeof values));
  EXPECT_OK(slipstream_stream_end_step(writer));
  EXPECT_OK(slipstream_stream_next_step(reader, &kind, NULL, &s));
  CHECK(kind == SLIPSTREAM_STREAM_STEP && s != NULL);
  if (s != NULL) {
    EXPECT_OK(slipstream_stream_step_release(s));
    EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT, slipstream_stream_step_load(s, 0));
    EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                  slipstream_stream_step_piece_data(s, 0, 0, SLIPSTREAM_INT32, 1, &data, NULL));
    EXPECT_OK(slipstream_stream_reader_destroy(&reader));
    EXPECT_OK(slipstream_stream_step_component_count(s, &count));
    EXPECT_OK(slipstream_stream_step_component(s, 0, NULL, NULL, NULL, NULL, NULL, &pieces));
    CHECK(count == 1 && pieces == 1);
    EXPECT_OK(slipstream_stream_step_destroy(&s));
  }
  EXPECT_OK(slipstream_stream_reader_destroy(&reader));
  EXPECT_OK(slipstream_stream_writer_destroy(&writer));
}

/* Compression operators from C: a lossless one round-trips exactly, zfp stays within its
 * accuracy, "*" covers the rest, and bad operators or parameters are INVALID_ARGUMENT. */
static void check_operators(void) {
  enum { kCount = 4096 };
  slipstream_stream_writer_t* writer = NULL;
  slipstream_stream_reader_t* reader = NULL;
  slipstream_stream_next_kind_t kind = -1;
  slipstream_stream_step_t* s = NULL;
  const int64_t global[1] = {kCount}, offset[1] = {0};
  static int64_t ids[kCount];
  static double field[kCount];
  const void* data = NULL;
  size_t bytes = 0;
  int i;
  for (i = 0; i < kCount; ++i) {
    ids[i] = (int64_t)i * 7 % 1000;
    field[i] = (double)(i % 64) * 0.01 + (double)(i / 64);
  }
  EXPECT_OK(slipstream_stream_writer_create(NULL, "capi.stream.operators", NTS, 0, 1, NULL,
                                            &writer));
  EXPECT_OK(slipstream_stream_reader_create(NULL, "capi.stream.operators", NTS, "g", NTS, 0, 1,
                                            NULL, &reader));
  if (writer == NULL || reader == NULL) return;
  EXPECT_OK(slipstream_stream_set_operator(writer, "particles/e/id", NTS, "blosc", NTS,
                                           "clevel=5, doshuffle=BLOSC_SHUFFLE,compressor=zstd", NTS));
  EXPECT_OK(slipstream_stream_set_operator(writer, "*", NTS, "zfp", NTS, "accuracy=1e-3", NTS));
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                slipstream_stream_set_operator(writer, "meshes/x", NTS, "lzma", NTS, NULL, 0));
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                slipstream_stream_set_operator(writer, "meshes/x", NTS, "zstd", NTS, "level", NTS));
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                slipstream_stream_set_operator(writer, "meshes/x", NTS, "zfp", NTS, "accuracy=0",
                                               NTS));
  EXPECT_OK(slipstream_stream_begin_step(writer, 0));
  EXPECT_OK(slipstream_stream_put_chunk(writer, "particles/e/id", NTS, SLIPSTREAM_INT64, 1, global,
                                        offset, global, ids, sizeof ids));
  EXPECT_OK(slipstream_stream_put_chunk(writer, "meshes/rho", NTS, SLIPSTREAM_FLOAT64, 1, global,
                                        offset, global, field, sizeof field));
  EXPECT_OK(slipstream_stream_end_step(writer));
  EXPECT_OK(slipstream_stream_next_step(reader, &kind, NULL, &s));
  CHECK(kind == SLIPSTREAM_STREAM_STEP && s != NULL);
  if (s != NULL) {
    EXPECT_OK(slipstream_stream_step_piece_data(s, 0, 0, SLIPSTREAM_INT64, 1, &data, &bytes));
    CHECK(bytes == sizeof ids && data != NULL && memcmp(data, ids, sizeof ids) == 0);
    EXPECT_OK(slipstream_stream_step_piece_data(s, 1, 0, SLIPSTREAM_FLOAT64, 1, &data, &bytes));
    CHECK(bytes == sizeof field && data != NULL);
    if (data != NULL && bytes == sizeof field) {
      double worst = 0;
      for (i = 0; i < kCount; ++i) {
        const double error = ((const double*)data)[i] - field[i];
        if (error > worst) worst = error;
        if (-error > worst) worst = -error;
      }
      CHECK(worst <= 1e-3 && worst > 0);
    }
    EXPECT_OK(slipstream_stream_step_destroy(&s));
  }
  EXPECT_OK(slipstream_stream_writer_close(writer));
  EXPECT_OK(slipstream_stream_reader_destroy(&reader));
  EXPECT_OK(slipstream_stream_writer_destroy(&writer));
}

/* A step one writer does not end within the step timeout is skipped, with the reason. The timeout
 * runs from the first begin_step: it must outlast the next two calls even on a loaded machine and
 * under valgrind (capi_stream_memcheck), or the step is aborted before writer 0 ends it. */
static void check_step_timeout(void) {
  slipstream_stream_writer_options_t options;
  slipstream_stream_writer_t *w0 = NULL, *w1 = NULL;
  slipstream_stream_reader_t* reader = NULL;
  slipstream_stream_next_kind_t kind = -1;
  slipstream_stream_step_t* s = NULL;
  int64_t number = -1;
  const char* reason = NULL;
  size_t length = 0;
  EXPECT_OK(slipstream_stream_writer_options_init(&options));
  options.step_timeout_ms = 2000;
  EXPECT_OK(slipstream_stream_writer_create(NULL, "capi.stream.timeout", NTS, 0, 2, &options, &w0));
  EXPECT_OK(slipstream_stream_writer_create(NULL, "capi.stream.timeout", NTS, 1, 2, &options, &w1));
  EXPECT_OK(slipstream_stream_reader_create(NULL, "capi.stream.timeout", NTS, "g", NTS, 0, 1, NULL,
                                            &reader));
  EXPECT_OK(slipstream_stream_begin_step(w0, 0));
  EXPECT_OK(slipstream_stream_begin_step(w1, 0));
  EXPECT_OK(slipstream_stream_end_step(w0));
  EXPECT_OK(slipstream_stream_next_step(reader, &kind, &number, &s));
  CHECK(kind == SLIPSTREAM_STREAM_SKIPPED && number == 0 && s == NULL);
  EXPECT_OK(slipstream_stream_reader_skip_reason(reader, &reason, &length));
  CHECK(length > 0 && strstr(reason, "timed out") != NULL);
  EXPECT_OK(slipstream_stream_reader_destroy(&reader));
  EXPECT_OK(slipstream_stream_writer_destroy(&w1));
  EXPECT_OK(slipstream_stream_writer_destroy(&w0));
}

/* begin_timeout_ms and next_timeout_ms: TIMEOUT_ERROR from begin_step, the TIMEOUT kind from
 * next_step, and both handles go on working. */
static void check_timeouts(void) {
  slipstream_stream_writer_options_t options;
  slipstream_stream_reader_options_t reader_options;
  slipstream_stream_writer_t* writer = NULL;
  slipstream_stream_reader_t* reader = NULL;
  slipstream_stream_next_kind_t kind = -1;
  slipstream_stream_step_t* s = NULL;
  int64_t number = 7;
  EXPECT_OK(slipstream_stream_writer_options_init(&options));
  options.queue_limit = 1;
  options.expected_groups = 1;
  options.begin_timeout_ms = 30;
  EXPECT_OK(
      slipstream_stream_writer_create(NULL, "capi.stream.wait", NTS, 0, 1, &options, &writer));
  EXPECT_OK(slipstream_stream_begin_step(writer, 0));
  EXPECT_OK(slipstream_stream_end_step(writer));
  /* No group yet and one expected: the step is kept, so the next begin waits and times out. */
  EXPECT_STATUS(SLIPSTREAM_TIMEOUT_ERROR, slipstream_stream_begin_step(writer, 1));
  EXPECT_OK(slipstream_stream_reader_options_init(&reader_options));
  reader_options.start = SLIPSTREAM_STREAM_NEWEST;
  reader_options.next_timeout_ms = 30;
  EXPECT_OK(slipstream_stream_reader_create(NULL, "capi.stream.wait", NTS, "late", NTS, 0, 1,
                                            &reader_options, &reader));
  EXPECT_OK(slipstream_stream_next_step(reader, &kind, &number, &s));
  CHECK(kind == SLIPSTREAM_STREAM_TIMEOUT && number == -1 && s == NULL);
  EXPECT_OK(slipstream_stream_reader_destroy(&reader));
  EXPECT_OK(slipstream_stream_writer_close(writer));
  EXPECT_OK(slipstream_stream_writer_close(writer)); /* twice: a no-op */
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT, slipstream_stream_begin_step(writer, 2));
  EXPECT_OK(slipstream_stream_writer_destroy(&writer));
}

/* An int64 array attribute, written and read back (run alone: `stream_capi_test int64-arrays`). */
static void check_int64_array_attribute(void) {
  const int64_t values[3] = {-3, 0, 4000000000};
  slipstream_stream_writer_t* writer = NULL;
  slipstream_stream_reader_t* reader = NULL;
  slipstream_stream_next_kind_t kind = -1;
  slipstream_stream_step_t* s = NULL;
  const int64_t* got = NULL;
  size_t count = 0;
  EXPECT_OK(slipstream_stream_writer_create(NULL, "capi.stream.ints", NTS, 0, 1, NULL, &writer));
  EXPECT_OK(slipstream_stream_reader_create(NULL, "capi.stream.ints", NTS, "g", NTS, 0, 1, NULL,
                                            &reader));
  EXPECT_OK(slipstream_stream_begin_step(writer, 0));
  EXPECT_OK(slipstream_stream_set_attribute_int64s(writer, STEP, "meshes/E", NTS, "offsets", NTS,
                                                   values, 3));
  EXPECT_OK(slipstream_stream_end_step(writer));
  EXPECT_OK(slipstream_stream_next_step(reader, &kind, NULL, &s));
  CHECK(kind == SLIPSTREAM_STREAM_STEP && s != NULL);
  if (s != NULL) {
    EXPECT_OK(slipstream_stream_step_attribute_int64s(s, STEP, "meshes/E", NTS, "offsets", NTS,
                                                      &got, &count));
    CHECK(count == 3 && got[0] == -3 && got[1] == 0 && got[2] == 4000000000);
    EXPECT_OK(slipstream_stream_step_destroy(&s));
  }
  EXPECT_OK(slipstream_stream_reader_destroy(&reader));
  EXPECT_OK(slipstream_stream_writer_destroy(&writer));
}

/* A writer whose partner closes mid-step: the step is aborted, end_step says so
 * (SLIPSTREAM_STEP_ABORTED, with the reason), and the stream goes on with the next step. */
static void check_aborted_step(void) {
  const char* const name = "capi.stream.aborted";
  const int64_t global[1] = {2}, offset[1] = {0}, extent[1] = {1};
  const int32_t one[1] = {7};
  slipstream_stream_writer_t* survivor = NULL;
  slipstream_stream_writer_t* leaving = NULL;
  slipstream_stream_reader_t* reader = NULL;
  slipstream_stream_reader_options_t reader_options;
  slipstream_stream_next_kind_t kind = -1;
  slipstream_stream_step_t* s = NULL;
  int64_t number = -1;
  EXPECT_OK(slipstream_stream_writer_create(NULL, name, NTS, 0, 2, NULL, &survivor));
  EXPECT_OK(slipstream_stream_writer_create(NULL, name, NTS, 1, 2, NULL, &leaving));
  EXPECT_OK(slipstream_stream_reader_options_init(&reader_options));
  reader_options.next_timeout_ms = 20000;
  EXPECT_OK(slipstream_stream_reader_create(NULL, name, NTS, "g", NTS, 0, 1, &reader_options,
                                            &reader));
  if (survivor == NULL || leaving == NULL || reader == NULL) return;
  EXPECT_OK(slipstream_stream_begin_step(survivor, 0));
  EXPECT_OK(slipstream_stream_begin_step(leaving, 0));
  EXPECT_OK(slipstream_stream_writer_close(leaving)); /* mid-step: step 0 is aborted */
  EXPECT_OK(slipstream_stream_put_chunk(survivor, "meshes/n", NTS, SLIPSTREAM_INT32, 1, global,
                                        offset, extent, one, sizeof one));
  EXPECT_STATUS(SLIPSTREAM_STEP_ABORTED, slipstream_stream_end_step(survivor));
  CHECK(strstr(slipstream_last_error(), "writer 1 closed the stream during step 0") != NULL);
  CHECK(strcmp(slipstream_status_name(SLIPSTREAM_STEP_ABORTED), "step aborted") == 0);
  EXPECT_OK(slipstream_stream_begin_step(survivor, 1));
  EXPECT_OK(slipstream_stream_put_chunk(survivor, "meshes/n", NTS, SLIPSTREAM_INT32, 1, global,
                                        offset, extent, one, sizeof one));
  EXPECT_OK(slipstream_stream_end_step(survivor));
  EXPECT_OK(slipstream_stream_next_step(reader, &kind, NULL, &s));
  CHECK(kind == SLIPSTREAM_STREAM_SKIPPED);
  EXPECT_OK(slipstream_stream_next_step(reader, &kind, NULL, &s));
  CHECK(kind == SLIPSTREAM_STREAM_STEP && s != NULL);
  if (s != NULL) {
    EXPECT_OK(slipstream_stream_step_number(s, &number));
    CHECK(number == 1);
    EXPECT_OK(slipstream_stream_step_destroy(&s));
  }
  EXPECT_OK(slipstream_stream_reader_destroy(&reader));
  EXPECT_OK(slipstream_stream_writer_destroy(&leaving));
  EXPECT_OK(slipstream_stream_writer_destroy(&survivor));
}

/* Bad arguments that never reach the server. */
static void check_bad_arguments(void) {
  slipstream_stream_writer_options_t options;
  slipstream_stream_reader_options_t reader_options;
  slipstream_stream_writer_t* writer = NULL;
  slipstream_stream_reader_t* reader = NULL;
  slipstream_stream_step_t* s = NULL;
  slipstream_stream_next_kind_t kind = 0;
  const int64_t one[1] = {1}, zero[1] = {0}, negative[1] = {-1};
  double value = 0;
  EXPECT_OK(slipstream_stream_writer_options_init(&options));
  CHECK(options.queue_limit == 2 && options.expected_groups == 0 && options.hostname == NULL);
  CHECK(options.first_step_precious == 0);
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                slipstream_stream_writer_create(NULL, "capi.stream.bad", NTS, 2, 2, NULL, &writer));
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                slipstream_stream_writer_create(NULL, "", NTS, 0, 1, NULL, &writer));
  options.queue_limit = 0;
  EXPECT_STATUS(
      SLIPSTREAM_INVALID_ARGUMENT,
      slipstream_stream_writer_create(NULL, "capi.stream.bad", NTS, 0, 1, &options, &writer));
  options.queue_limit = 2;
  options.step_timeout_ms = -1;
  EXPECT_STATUS(
      SLIPSTREAM_INVALID_ARGUMENT,
      slipstream_stream_writer_create(NULL, "capi.stream.bad", NTS, 0, 1, &options, &writer));
  CHECK(writer == NULL);
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT, slipstream_stream_begin_step(NULL, 0));
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT, slipstream_stream_end_step(NULL));

  EXPECT_OK(slipstream_stream_writer_create(NULL, "capi.stream.bad", NTS, 0, 1, NULL, &writer));
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT, slipstream_stream_end_step(writer));
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                slipstream_stream_put_chunk(writer, "c", NTS, SLIPSTREAM_FLOAT64, 1, one, zero, one,
                                            &value, sizeof value));
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                slipstream_stream_set_attribute_double(writer, STEP, "/", NTS, "t", NTS, 1.0));
  EXPECT_OK(slipstream_stream_begin_step(writer, 0));
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                slipstream_stream_put_chunk(writer, "c", NTS, SLIPSTREAM_FLOAT64, 0, one, zero, one,
                                            &value, sizeof value));
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                slipstream_stream_put_chunk(writer, "c", NTS, SLIPSTREAM_FLOAT64, 1, one, negative,
                                            one, &value, sizeof value));
  EXPECT_STATUS(
      SLIPSTREAM_INVALID_ARGUMENT,
      slipstream_stream_put_chunk(writer, "c", NTS, 42, 1, one, zero, one, &value, sizeof value));
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                slipstream_stream_put_chunk(writer, "c", NTS, SLIPSTREAM_FLOAT64, 1, one, zero, one,
                                            NULL, sizeof value));
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT, slipstream_stream_set_attribute_doubles(
                                                 writer, STEP, "/", NTS, "empty", NTS, &value, 0));
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                slipstream_stream_set_attribute_double(writer, 2, "/", NTS, "t", NTS, 1.0));
  /* A chunk outside the global extent: the server refuses it when the step ends. */
  EXPECT_OK(slipstream_stream_put_chunk(writer, "c", NTS, SLIPSTREAM_FLOAT64, 1, one, one, one,
                                        &value, sizeof value));
  {
    slipstream_status_t status = slipstream_stream_end_step(writer);
    CHECK(status != SLIPSTREAM_OK && slipstream_last_error()[0] != '\0');
  }
  EXPECT_OK(slipstream_stream_writer_destroy(&writer));
  CHECK(writer == NULL);
  EXPECT_OK(slipstream_stream_writer_destroy(&writer));
  EXPECT_OK(slipstream_stream_writer_destroy(NULL));

  EXPECT_OK(slipstream_stream_reader_options_init(&reader_options));
  CHECK(reader_options.policy == SLIPSTREAM_STREAM_BLOCK && reader_options.strategy == NULL);
  CHECK(reader_options.step_distribution == SLIPSTREAM_STREAM_DISTRIBUTE_ALL);
  reader_options.step_distribution = 3;
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                slipstream_stream_reader_create(NULL, "capi.stream.bad", NTS, "g", NTS, 0, 1,
                                                &reader_options, &reader));
  CHECK(strstr(slipstream_last_error(), "step_distribution") != NULL);
  reader_options.step_distribution = SLIPSTREAM_STREAM_DISTRIBUTE_ON_DEMAND;
  reader_options.policy = 5;
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                slipstream_stream_reader_create(NULL, "capi.stream.bad", NTS, "g", NTS, 0, 1,
                                                &reader_options, &reader));
  reader_options.policy = SLIPSTREAM_STREAM_DISCARD;
  reader_options.strategy = "no_such_strategy";
  reader_options.strategy_length = NTS;
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                slipstream_stream_reader_create(NULL, "capi.stream.bad", NTS, "g", NTS, 0, 1,
                                                &reader_options, &reader));
  EXPECT_STATUS(
      SLIPSTREAM_INVALID_ARGUMENT,
      slipstream_stream_reader_create(NULL, "capi.stream.bad", NTS, "g", NTS, 1, 1, NULL, &reader));
  CHECK(reader == NULL);
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT, slipstream_stream_next_step(NULL, &kind, NULL, &s));
  EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT, slipstream_stream_step_number(NULL, NULL));
  EXPECT_OK(slipstream_stream_reader_destroy(NULL));
  EXPECT_OK(slipstream_stream_step_destroy(NULL));
  EXPECT_OK(slipstream_stream_step_destroy(&s));
}

/* Field `wanted` of SS.STREAM.INFO for `stream` (an integer), or -1 when it is missing. */
static int64_t stream_info_field(slipstream_client_t* client, const char* stream,
                                 const char* wanted) {
  const char* args[2] = {"SS.STREAM.INFO", stream};
  const size_t lengths[2] = {strlen(args[0]), strlen(stream)};
  slipstream_reply_t* reply = NULL;
  size_t count = 0, i;
  int64_t value = -1;
  EXPECT_OK(slipstream_command(client, args, lengths, 2, &reply));
  EXPECT_OK(slipstream_reply_element_count(reply, &count));
  for (i = 0; i + 1 < count; i += 2) {
    const slipstream_reply_t* name = NULL;
    const slipstream_reply_t* field = NULL;
    const char* text = NULL;
    size_t length = 0;
    EXPECT_OK(slipstream_reply_element(reply, i, &name));
    if (slipstream_reply_string(name, &text, &length) != SLIPSTREAM_OK) continue;
    if (length != strlen(wanted) || memcmp(text, wanted, length) != 0) continue;
    EXPECT_OK(slipstream_reply_element(reply, i + 1, &field));
    EXPECT_OK(slipstream_reply_integer(field, &value));
    break;
  }
  EXPECT_OK(slipstream_reply_destroy(&reply));
  return value;
}

/* The writer options the C struct gained after its first fields: shared_memory_min_bytes (taken,
 * negative refused) and reserve_next_step. With reservation on, end_step also holds the next
 * step (SS.STREAM.INFO's steps_held counts it); off, only the written steps are held. Either
 * way the reader gets every step. */
static void check_writer_options(void) {
  static const char* const names[2] = {"capi.stream.reserve.off", "capi.stream.reserve.on"};
  slipstream_stream_writer_options_t options;
  slipstream_client_t* client = NULL;
  int reserve;
  EXPECT_OK(slipstream_stream_writer_options_init(&options));
  CHECK(options.shared_memory_min_bytes == 64 * 1024 && options.reserve_next_step == 1);
  {
    slipstream_stream_writer_t* writer = NULL;
    options.shared_memory_min_bytes = -1;
    EXPECT_STATUS(SLIPSTREAM_INVALID_ARGUMENT,
                  slipstream_stream_writer_create(NULL, "capi.stream.bad.shm", NTS, 0, 1, &options,
                                                  &writer));
    CHECK(writer == NULL && strstr(slipstream_last_error(), "shared_memory_min_bytes") != NULL);
  }
  EXPECT_OK(slipstream_client_create(NULL, 0, &client));
  if (client == NULL) return;
  for (reserve = 0; reserve <= 1; ++reserve) {
    slipstream_stream_writer_t* writer = NULL;
    slipstream_stream_reader_t* reader = NULL;
    const int64_t global[1] = {8}, offset[1] = {0};
    int64_t values[8];
    int64_t step;
    size_t i;
    EXPECT_OK(slipstream_stream_writer_options_init(&options));
    options.queue_limit = 4;
    options.expected_groups = 1;
    options.shared_memory_min_bytes = 1;
    options.reserve_next_step = reserve;
    EXPECT_OK(slipstream_stream_writer_create(NULL, names[reserve], NTS, 0, 1, &options, &writer));
    EXPECT_OK(slipstream_stream_reader_create(NULL, names[reserve], NTS, "g", NTS, 0, 1, NULL,
                                              &reader));
    if (writer == NULL || reader == NULL) {
      slipstream_stream_reader_destroy(&reader);
      slipstream_stream_writer_destroy(&writer);
      break;
    }
    CHECK(stream_info_field(client, names[reserve], "queue_limit") == 4);
    for (step = 0; step < 2; ++step) {
      for (i = 0; i < 8; ++i) values[i] = 10 * step + (int64_t)i;
      EXPECT_OK(slipstream_stream_begin_step(writer, step));
      EXPECT_OK(slipstream_stream_put_chunk(writer, "v", NTS, SLIPSTREAM_INT64, 1, global, offset,
                                            global, values, sizeof values));
      EXPECT_OK(slipstream_stream_end_step(writer));
      CHECK(stream_info_field(client, names[reserve], "steps_held") == step + 1 + reserve);
    }
    EXPECT_OK(slipstream_stream_writer_close(writer));
    for (step = 0; step < 2; ++step) {
      slipstream_stream_next_kind_t kind = -1;
      slipstream_stream_step_t* s = NULL;
      const void* data = NULL;
      int64_t number = -1;
      EXPECT_OK(slipstream_stream_next_step(reader, &kind, &number, &s));
      CHECK(kind == SLIPSTREAM_STREAM_STEP && number == step && s != NULL);
      if (s == NULL) break;
      EXPECT_OK(slipstream_stream_step_piece_data(s, 0, 0, SLIPSTREAM_INT64, 1, &data, NULL));
      CHECK(data != NULL && ((const int64_t*)data)[7] == 10 * step + 7);
      EXPECT_OK(slipstream_stream_step_destroy(&s));
    }
    {
      slipstream_stream_next_kind_t kind = -1;
      slipstream_stream_step_t* s = NULL;
      EXPECT_OK(slipstream_stream_next_step(reader, &kind, NULL, &s));
      CHECK(kind == SLIPSTREAM_STREAM_END && s == NULL);
    }
    EXPECT_OK(slipstream_stream_reader_destroy(&reader));
    EXPECT_OK(slipstream_stream_writer_destroy(&writer));
  }
  EXPECT_OK(slipstream_client_destroy(&client));
}

int main(int argc, char** argv) {
  slipstream_stream_writer_t* writers[kWriters] = {NULL, NULL};
  slipstream_stream_reader_t* readers[kGroups][kReaders] = {{NULL, NULL}, {NULL, NULL}};
  slipstream_stream_writer_options_t options;
  slipstream_stream_reader_options_t reader_options[kGroups];
  slipstream_stream_next_kind_t kind = -1;
  slipstream_stream_step_t* s = NULL;
  int g, r, w, k;

  if (argc > 1 && strcmp(argv[1], "int64-arrays") == 0) {
    check_int64_array_attribute();
    return failures > 0 ? 1 : 0;
  }
  EXPECT_OK(slipstream_stream_writer_options_init(&options));
  options.expected_groups = kGroups; /* keep the steps until both groups have joined */
  for (w = 0; w < kWriters; ++w) {
    options.hostname = w == 0 ? "node-a" : "node-b";
    options.hostname_length = NTS;
    EXPECT_OK(slipstream_stream_writer_create(NULL, kStream, NTS, (uint32_t)w, kWriters, &options,
                                              &writers[w]));
  }
  if (writers[0] == NULL || writers[1] == NULL) return 1;
  /* Stream-level attributes with no step open are sent at once. */
  EXPECT_OK(slipstream_stream_set_attribute_string(writers[0], STREAM, "/", NTS, "software", NTS,
                                                   "slipstream-c99", NTS));
  EXPECT_OK(slipstream_stream_set_attribute_doubles(writers[0], STREAM, "meshes/E", NTS,
                                                    "gridGlobalOffset", NTS, kGlobalOffset, 2));

  for (g = 0; g < kGroups; ++g) {
    EXPECT_OK(slipstream_stream_reader_options_init(&reader_options[g]));
    reader_options[g].strategy = g == 0 ? "slicedataset" : "ROUNDROBIN";
    reader_options[g].strategy_length = NTS;
    reader_options[g].no_empty_readers = g == 1;
    reader_options[g].next_timeout_ms = 20000; /* a bug must fail the test, not hang it */
    for (r = 0; r < kReaders; ++r) {
      EXPECT_OK(slipstream_stream_reader_create(NULL, kStream, NTS, kGroupNames[g], NTS,
                                                (uint32_t)r, kReaders, &reader_options[g],
                                                &readers[g][r]));
      if (readers[g][r] == NULL) return 1;
    }
  }

  for (k = 0; k < kSteps; ++k) {
    write_step(writers, k);
    read_step(readers, k);
  }
  for (w = 0; w < kWriters; ++w) EXPECT_OK(slipstream_stream_writer_close(writers[w]));
  for (g = 0; g < kGroups; ++g) {
    for (r = 0; r < kReaders; ++r) {
      int64_t number = 0;
      EXPECT_OK(slipstream_stream_next_step(readers[g][r], &kind, &number, &s));
      CHECK(kind == SLIPSTREAM_STREAM_END && number == -1 && s == NULL);
      EXPECT_OK(slipstream_stream_reader_destroy(&readers[g][r]));
      CHECK(readers[g][r] == NULL);
    }
  }
  for (w = 0; w < kWriters; ++w) EXPECT_OK(slipstream_stream_writer_destroy(&writers[w]));

  check_load_after_release();
  check_operators();
  check_step_timeout();
  check_timeouts();
  check_bad_arguments();
  check_aborted_step();
  check_writer_options();

  if (failures > 0) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("stream_capi_test: all checks passed\n");
  return 0;
}
