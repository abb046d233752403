// codec_bench: the compression operators (src/codec) on the PIC app's own data, one thread: each
// operator's compression ratio, encode and decode throughput per core (MB/s of raw data), and for
// zfp the largest error, absolute and against the data's range. The data are what slipstream-pic
// produces after it has run into the nonlinear phase of the two-stream instability: the electric
// field and the charge density on the grid, the particles' positions and velocities, and the
// phase-space perturbation the trainer learns from (as float32, as the samples carry it).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench_support.hpp"
#include "codec/codec.hpp"
#include "phase_space.hpp"
#include "pic.hpp"
#include "pic_data.hpp"

namespace {

using slipstream::DType;
namespace codec = slipstream::codec;
using Clock = std::chrono::steady_clock;

struct Data {
  std::string name;
  DType dtype;
  std::vector<std::uint64_t> extent;
  std::vector<std::byte> bytes;
};

template <typename T>
Data data_of(const std::string& name, std::span<const T> values, std::vector<std::uint64_t> extent) {
  Data data{name, sizeof(T) == 4 ? DType::kFloat32 : DType::kFloat64, std::move(extent), {}};
  data.bytes.resize(values.size_bytes());
  std::memcpy(data.bytes.data(), values.data(), values.size_bytes());
  return data;
}

struct Range {
  double low = 0, high = 0;
};

template <typename T>
Range range_of(const std::vector<std::byte>& bytes) {
  Range r{INFINITY, -INFINITY};
  for (std::size_t i = 0; i < bytes.size() / sizeof(T); ++i) {
    T v;
    std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
    r.low = std::min(r.low, static_cast<double>(v));
    r.high = std::max(r.high, static_cast<double>(v));
  }
  return r;
}

// Median seconds of `rounds` runs of `work`, each repeated until it took at least 50 ms.
template <typename Work>
double seconds_per_call(int rounds, Work work) {
  std::vector<double> samples;
  for (int r = 0; r < rounds; ++r) {
    int calls = 0;
    const auto start = Clock::now();
    do {
      work();
      ++calls;
    } while (Clock::now() - start < std::chrono::milliseconds(50));
    samples.push_back(std::chrono::duration<double>(Clock::now() - start).count() / calls);
  }
  return slipstream::bench::median(samples);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("Compression operators on the PIC app's fields and particles (one thread)");
  std::size_t cells = 8192, particles_per_cell = 128, steps = 300;
  int rounds = 5;
  app.add_option("--cells", cells, "grid cells of the PIC run");
  app.add_option("--particles-per-cell", particles_per_cell, "macro-particles per cell");
  app.add_option("--steps", steps, "PIC steps before the data are taken (into the nonlinear phase)");
  app.add_option("--rounds", rounds, "timings per figure (median)");
  CLI11_PARSE(app, argc, argv);

  const slipstream::pic::PicParameters parameters =
      slipstream::bench::two_stream_parameters(cells, particles_per_cell);
  slipstream::pic::SerialCommunicator serial;
  slipstream::pic::Pic pic(parameters, serial);
  for (std::size_t s = 0; s < steps; ++s) pic.step();
  const auto& d = pic.diagnostics();
  std::printf("PIC: %zu cells, %zu particles, %zu steps (t = %.1f), field energy %.3g, mode "
              "amplitude %.3g\n", cells, parameters.particles(), steps, pic.time(), d.field_energy,
              d.mode_amplitude);

  slipstream::pic::PhaseSpaceBins bins;
  bins.x_bins = std::min<std::size_t>(cells, 256);
  bins.v_bins = 256;
  const std::vector<double> df = slipstream::pic::phase_space_perturbation(pic, bins, serial);
  std::vector<float> df32(df.begin(), df.end());
  std::vector<Data> data;
  data.push_back(data_of<double>("E field", pic.electric_field(), {cells}));
  data.push_back(data_of<double>("charge density", pic.charge_density(), {cells}));
  data.push_back(data_of<double>("positions", pic.positions(), {pic.positions().size()}));
  data.push_back(data_of<double>("velocities", pic.velocities(), {pic.velocities().size()}));
  data.push_back(data_of<float>("phase space (float32)", std::span<const float>(df32),
                                {bins.x_bins, bins.v_bins}));

  struct Case {
    const char* type;
    std::vector<std::pair<std::string, std::string>> params;
    bool relative = false;  // zfp accuracy as a fraction of the data's range
  };
  const std::vector<Case> cases = {
      {"zstd", {{"level", "1"}}},
      {"zstd", {{"level", "3"}}},
      {"zstd", {{"level", "9"}}},
      {"blosc", {{"compressor", "lz4"}}},
      {"blosc", {{"compressor", "zstd"}}},
      {"blosc", {{"compressor", "zstd"}, {"doshuffle", "BLOSC_BITSHUFFLE"}}},
      {"bzip2", {}},
      {"zfp", {{"accuracy", "1e-4"}}, true},
      {"zfp", {{"accuracy", "1e-6"}}, true},
      {"zfp", {{"precision", "24"}}},
      {"zfp", {{"rate", "16"}}},
  };
  std::printf("\n`build/bench/codec_bench --cells %zu --particles-per-cell %zu --steps %zu "
              "--rounds %d`; load average %s\n\n", cells, particles_per_cell, steps, rounds,
              slipstream::bench::read_file("/proc/loadavg").substr(0, 14).c_str());
  std::printf("| data | size | operator | ratio | encode MB/s | decode MB/s | max error | "
              "error / range |\n|---|---|---|---|---|---|---|---|\n");
  for (const Data& item : data) {
    const Range range = item.dtype == DType::kFloat32 ? range_of<float>(item.bytes)
                                                      : range_of<double>(item.bytes);
    const double span = range.high - range.low;
    for (const Case& c : cases) {
      auto params = c.params;
      if (c.relative) {
        char text[32];
        std::snprintf(text, sizeof text, "%.6g", std::stod(params[0].second) * span);
        params[0].second = text;
      }
      const codec::Operator op = codec::make_operator(c.type, params);
      std::vector<std::byte> frame = codec::encode(op, item.dtype, item.extent, item.bytes, item.name);
      std::vector<std::byte> out(item.bytes.size());
      codec::decode(frame, item.dtype, item.extent, out, item.name);
      const double encode_s = seconds_per_call(rounds, [&] {
        frame = codec::encode(op, item.dtype, item.extent, item.bytes, item.name);
      });
      const double decode_s = seconds_per_call(rounds, [&] {
        codec::decode(frame, item.dtype, item.extent, out, item.name);
      });
      const double error = codec::max_abs_difference(item.dtype, item.bytes, out);
      const double mb = static_cast<double>(item.bytes.size()) / 1e6;
      std::string label = codec::describe(op);
      if (c.relative) label += " (" + c.params[0].second + " of the range)";
      char error_text[32] = "0 (exact)", relative_text[32] = "";
      if (!op.lossless()) {
        std::snprintf(error_text, sizeof error_text, "%.3g", error);
        std::snprintf(relative_text, sizeof relative_text, "%.3g", span > 0 ? error / span : 0.0);
      } else if (error != 0) {
        std::snprintf(error_text, sizeof error_text, "%.3g (NOT EXACT)", error);
      }
      std::printf("| %s | %.2f MB | %s | %.2f | %.0f | %.0f | %s | %s |\n", item.name.c_str(), mb,
                  label.c_str(),
                  static_cast<double>(item.bytes.size()) / static_cast<double>(frame.size()),
                  mb / encode_s, mb / decode_s, error_text, relative_text);
    }
  }
  return 0;
}
