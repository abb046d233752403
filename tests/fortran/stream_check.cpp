// Reads the stream written by stream_writer.f90 (2 Fortran writer ranks) with two C++ reader groups
// of 2 and checks every element of every piece against the writer's formula, in C order: a
// Fortran field f(NX, NY) must arrive with global extent {NY, NX} and [j-1][i-1] == f(i, j). Each
// group must see every element of every step exactly once, with the right source rank.
//   "slices": slicedataset along C dimension 0 (Fortran j): cuts whole rows (views).
//   "bins":   binpacking along C dimension 1 (Fortran i): cuts inside rows (gathered pieces).
// Usage: stream_check   (SLIPSTREAM_ADDRESS names the server). Exits 1 on any mismatch.
#include <cstdint>
#include <cstdio>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "slipstream/stream.hpp"

namespace {

constexpr std::uint64_t kNX = 6, kNY = 8;  // the Fortran shape f(NX, NY)
constexpr int kSteps = 4;

struct Component {
  const char* name;
  double offset;  // the formula's constant c
  bool by_rows;   // owned by Fortran rows i (E/x) rather than columns j
};
const Component kComponents[] = {
    {"meshes/rho", 0.0, false}, {"meshes/E/x", 0.5, true}, {"meshes/E/y", 0.25, false}};

double expected(std::int64_t step, std::uint64_t i, std::uint64_t j, double c) {
  return static_cast<double>(step * 1000 + static_cast<std::int64_t>(i + 100 * j)) + c;
}

std::mutex report_mutex;
int failures = 0;

void fail(const std::string& message) {
  std::lock_guard<std::mutex> lock(report_mutex);
  std::fprintf(stderr, "FAILED: %s\n", message.c_str());
  ++failures;
}

// coverage[group][step][component][row * kNX + col]: how often each element was seen.
using Coverage = std::vector<std::vector<std::vector<std::vector<int>>>>;

void read_group(int group, const std::string& group_name, std::uint32_t rank, Coverage& coverage) {
  slipstream::ClientOptions options;
  slipstream::StreamReaderOptions reader_options;
  reader_options.strategy = group == 0 ? "slicedataset" : "binpacking";
  reader_options.strategy_options.split_dimension = group == 0 ? 0 : 1;
  reader_options.next_timeout = std::chrono::milliseconds(60000);
  slipstream::StreamReader reader(options, "fortran.stream", group_name, rank, 2, reader_options);
  for (int seen = 0;; ++seen) {
    slipstream::StreamNext next = reader.next_step();
    if (next.kind == slipstream::StreamNext::Kind::kEnd) {
      if (seen != kSteps) fail(group_name + ": end after " + std::to_string(seen) + " steps");
      return;
    }
    if (next.kind != slipstream::StreamNext::Kind::kStep) {
      fail(group_name + ": no step (timeout or skipped: " + next.reason + ")");
      return;
    }
    slipstream::StreamStep& step = *next.step;
    const std::int64_t number = step.number();
    if (number != seen) fail(group_name + ": step " + std::to_string(number) + " out of order");
    if (number < 0 || number >= kSteps) return;
    bool time_found = false;
    for (const slipstream::StreamAttribute& a : step.attributes()) {
      if (a.step == number && a.path == "/" && a.name == "time") {
        time_found = std::get<double>(a.value) == 0.5 * static_cast<double>(number);
      }
    }
    if (!time_found) fail("step " + std::to_string(number) + ": attribute time missing or wrong");
    for (std::size_t c = 0; c < std::size(kComponents); ++c) {
      const Component& component = kComponents[c];
      const slipstream::StreamComponent* info = step.component(component.name);
      if (info == nullptr || info->dtype != slipstream::DType::kFloat64 ||
          info->global_extent != std::vector<std::uint64_t>{kNY, kNX}) {
        fail(std::string(component.name) + ": missing, not float64 or not of extent {8, 6}");
        continue;
      }
      for (const slipstream::StreamPiece& piece : step.load(component.name)) {
        const auto values = piece.as<double>();
        const auto& offset = piece.piece.offset;
        const auto& extent = piece.piece.extent;
        if (values.size() != extent[0] * extent[1]) {
          fail(std::string(component.name) + ": piece of the wrong size");
          continue;
        }
        for (std::uint64_t a = 0; a < extent[0]; ++a) {
          for (std::uint64_t b = 0; b < extent[1]; ++b) {
            const std::uint64_t row = offset[0] + a, col = offset[1] + b;  // [j-1][i-1]
            const std::uint64_t i = col + 1, j = row + 1;
            const double got = values[a * extent[1] + b];
            const double want = expected(number, i, j, component.offset);
            if (got != want) {
              fail(group_name + " step " + std::to_string(number) + " " + component.name + " f(" +
                   std::to_string(i) + ", " + std::to_string(j) + ") = " + std::to_string(got) +
                   ", expected " + std::to_string(want));
              return;
            }
            const std::uint32_t owner = component.by_rows ? static_cast<std::uint32_t>((i - 1) / 3)
                                                          : static_cast<std::uint32_t>((j - 1) / 4);
            if (piece.piece.source_rank != owner) {
              fail(std::string(component.name) + ": wrong source rank");
              return;
            }
            ++coverage[group][number][c][row * kNX + col];
          }
        }
      }
    }
    step.release();
  }
}

}  // namespace

int main() {
  try {
    const std::vector<std::string> groups = {"slices", "bins"};
    // Every thread writes only the elements of its own pieces, which never overlap within a
    // group (a double count is what the coverage check detects, after all threads joined).
    Coverage coverage(groups.size(),
                      std::vector<std::vector<std::vector<int>>>(
                          kSteps, std::vector<std::vector<int>>(std::size(kComponents),
                                                                std::vector<int>(kNX * kNY, 0))));
    std::vector<std::thread> threads;
    std::vector<std::exception_ptr> errors(4);
    for (int g = 0; g < 2; ++g) {
      for (std::uint32_t r = 0; r < 2; ++r) {
        threads.emplace_back([&, g, r] {
          try {
            read_group(g, groups[g], r, coverage);
          } catch (...) {
            errors[g * 2 + r] = std::current_exception();
          }
        });
      }
    }
    for (auto& t : threads) t.join();
    for (auto& e : errors) {
      if (e) std::rethrow_exception(e);
    }
    for (std::size_t g = 0; g < groups.size(); ++g) {
      for (int s = 0; s < kSteps; ++s) {
        for (std::size_t c = 0; c < std::size(kComponents); ++c) {
          for (std::size_t n = 0; n < kNX * kNY; ++n) {
            if (coverage[g][s][c][n] != 1) {
              fail(groups[g] + " step " + std::to_string(s) + " " + kComponents[c].name +
                   " element " + std::to_string(n) + " seen " +
                   std::to_string(coverage[g][s][c][n]) + " times");
              break;
            }
          }
        }
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "FAILED: %s\n", e.what());
    return 1;
  }
  if (failures > 0) return 1;
  std::printf("stream_check: %d steps of 3 Fortran-order components checked by 2 groups of 2\n",
              kSteps);
  return 0;
}
