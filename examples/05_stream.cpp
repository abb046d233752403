// Example 05: a stream from 2 writers to a group of 2 readers. Each writer (a simulation rank)
// publishes its half of a 2-D field `meshes/T` every step; each reader takes its share with the
// `slicedataset` strategy (one slab of rows per reader) and sums it. The two readers' sums add up
// to the sum of the whole field, step by step (a reader that joins after a step was handed out
// leaves that step to the other, so the total holds whatever the start order).
// Usage: 05_stream [ADDRESS]   (default: SLIPSTREAM_ADDRESS, then SSDB). Exits non-zero on any
// mismatch, so it also runs as a test.
#include <cstdio>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "slipstream/stream.hpp"

namespace {

constexpr std::uint64_t kRows = 8, kCols = 5;
constexpr int kSteps = 3;
const std::string kStream = "example05.field";

double temperature(int step, std::uint64_t row, std::uint64_t col) {
  return 300.0 + step + 0.1 * static_cast<double>(row * kCols + col);
}

// Writer `rank` of 2 owns rows [4 * rank, 4 * rank + 4).
void simulate(const slipstream::ClientOptions& options, std::uint32_t rank) {
  // The writers keep their steps until one reader group has joined, whichever starts first.
  slipstream::StreamWriterOptions writer_options;
  writer_options.expected_groups = 1;
  slipstream::StreamWriter writer(options, kStream, rank, 2, writer_options);
  const std::vector<std::uint64_t> global{kRows, kCols}, offset{4 * rank, 0}, extent{4, kCols};
  std::vector<double> mine(4 * kCols);
  for (int step = 0; step < kSteps; ++step) {
    writer.begin_step(step);  // waits while the readers are two steps behind
    for (std::uint64_t r = 0; r < 4; ++r) {
      for (std::uint64_t c = 0; c < kCols; ++c) mine[r * kCols + c] = temperature(step, offset[0] + r, c);
    }
    writer.put_chunk<double>("meshes/T", global, offset, extent, mine);  // borrowed until end_step
    if (rank == 0) writer.set_attribute("/", "time", 0.1 * step);
    writer.end_step();  // visible to readers once both writers have ended the step
  }
  writer.close();
}

// Reader `rank` of 2: sums its slab of every step into sums[step].
void analyse(const slipstream::ClientOptions& options, std::uint32_t rank,
             std::vector<double>& sums) {
  slipstream::StreamReaderOptions reader_options;
  reader_options.strategy = "slicedataset";
  slipstream::StreamReader reader(options, kStream, "analysis", rank, 2, reader_options);
  for (;;) {
    slipstream::StreamNext next = reader.next_step();
    if (next.kind != slipstream::StreamNext::Kind::kStep) break;  // end of the stream
    slipstream::StreamStep& step = *next.step;
    double sum = 0;
    for (const slipstream::StreamPiece& piece : step.load("meshes/T")) {
      const auto* values = reinterpret_cast<const double*>(piece.bytes.data());
      for (std::size_t i = 0; i < piece.bytes.size() / sizeof(double); ++i) sum += values[i];
    }
    sums[static_cast<std::size_t>(step.number())] += sum;
    std::printf("  reader %u (of %zu this step), step %lld: sum %.1f\n", rank,
                step.readers().size(), static_cast<long long>(step.number()), sum);
    step.release();  // the writers may reuse the slot once both readers have released it
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    slipstream::ClientOptions options;
    if (argc > 1) options.address = argv[1];
    std::vector<double> sums0(kSteps), sums1(kSteps);
    std::thread reader0(analyse, std::cref(options), 0, std::ref(sums0));
    std::thread reader1(analyse, std::cref(options), 1, std::ref(sums1));
    std::thread writer0(simulate, std::cref(options), 0), writer1(simulate, std::cref(options), 1);
    for (std::thread* t : {&writer0, &writer1, &reader0, &reader1}) t->join();
    bool ok = true;
    for (int step = 0; step < kSteps; ++step) {
      double expected = 0;
      for (std::uint64_t r = 0; r < kRows; ++r) {
        for (std::uint64_t c = 0; c < kCols; ++c) expected += temperature(step, r, c);
      }
      const double got = sums0[step] + sums1[step];
      const bool match = got > expected - 1e-6 && got < expected + 1e-6;
      std::printf("step %d: readers' sums %.1f, field %.1f %s\n", step, got, expected,
                  match ? "ok" : "MISMATCH");
      ok = ok && match;
    }
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
