// link_bench: one side of a stream over a slow link, with and without compression operators
// (issue 31). The writer streams the PIC app's own data (taken after it has run into the nonlinear
// phase of the two-stream instability) step after step; the reader, usually on another host,
// loads every component of every step (decoded) and reports the steps per second it received.
// bench/link_bench.py runs both across hosts made of network namespaces with a shaped link and
// prints the table; this program prints one JSON line per run.
//
//   link_bench writer --address A --stream S --data fields|particles --variants none,zfp,zstd
//   link_bench reader --address A --stream S --variants none,zfp,zstd
// Both run every variant `--rounds` times, in the same order, each on a stream of its own
// (S.variant.round); the writer computes the PIC data once.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "phase_space.hpp"
#include "pic.hpp"
#include "pic_data.hpp"
#include "slipstream/stream.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Component {
  std::string name;
  std::vector<double> values;
};

// What the PIC app publishes after `pic_steps` steps: the fields on the grid, or the electrons'
// positions and velocities.
std::vector<Component> pic_data(const std::string& data, std::size_t cells,
                                std::size_t particles_per_cell, std::size_t pic_steps) {
  const slipstream::pic::PicParameters parameters =
      slipstream::bench::two_stream_parameters(cells, particles_per_cell);
  slipstream::pic::SerialCommunicator serial;
  slipstream::pic::Pic pic(parameters, serial);
  for (std::size_t s = 0; s < pic_steps; ++s) pic.step();
  auto copy = [](auto span) { return std::vector<double>(span.begin(), span.end()); };
  if (data == "fields") {
    return {{"meshes/E/x", copy(pic.electric_field())},
            {"meshes/rho", copy(pic.charge_density())}};
  }
  return {{"particles/electrons/position/x", copy(pic.positions())},
          {"particles/electrons/momentum/x", copy(pic.velocities())}};
}

// The operator of `kind` for `values`: zfp at `fraction` of the component's range.
std::optional<slipstream::StreamOperator> operator_for(const std::string& kind, double fraction,
                                                       const std::vector<double>& values) {
  if (kind == "none") return std::nullopt;
  if (kind == "zstd") return slipstream::StreamOperator{"zstd", {{"level", "3"}}};
  if (kind == "blosc") {
    return slipstream::StreamOperator{
        "blosc", {{"clevel", "5"}, {"doshuffle", "BLOSC_SHUFFLE"}, {"compressor", "lz4"}}};
  }
  const auto [low, high] = std::minmax_element(values.begin(), values.end());
  char accuracy[32];
  std::snprintf(accuracy, sizeof accuracy, "%.6g", fraction * (*high - *low));
  return slipstream::StreamOperator{"zfp", {{"accuracy", accuracy}}};
}

std::string stream_of(const std::string& stream, const std::string& variant, int round) {
  return stream + "." + variant + "." + std::to_string(round);
}

int write(const std::string& address, const std::string& stream, const std::string& data,
          const std::vector<std::string>& variants, int rounds, double fraction, std::size_t steps,
          std::size_t cells, std::size_t particles_per_cell, std::size_t pic_steps) {
  const std::vector<Component> components = pic_data(data, cells, particles_per_cell, pic_steps);
  slipstream::ClientOptions client;
  client.address = address;
  std::size_t raw = 0;
  for (const Component& c : components) raw += c.values.size() * sizeof(double);
  for (int round = 0; round < rounds; ++round) {
    for (const std::string& variant : variants) {
      slipstream::StreamWriterOptions options;
      options.expected_groups = 1;
      options.queue_limit = 2;
      slipstream::StreamWriter writer(client, stream_of(stream, variant, round), 0, 1, options);
      for (const Component& c : components) {
        writer.set_operator(c.name, operator_for(variant, fraction, c.values));
      }
      const auto start = Clock::now();
      for (std::size_t s = 0; s < steps; ++s) {
        writer.begin_step(static_cast<std::int64_t>(s));
        for (const Component& c : components) {
          const std::vector<std::uint64_t> extent{c.values.size()}, offset{0};
          writer.put_chunk<double>(c.name, extent, offset, extent, c.values);
        }
        writer.end_step();
      }
      writer.close();
      const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
      std::printf("{\"role\": \"writer\", \"variant\": \"%s\", \"round\": %d, \"steps\": %zu, "
                  "\"raw_bytes_per_step\": %zu, \"seconds\": %.6f}\n", variant.c_str(), round,
                  steps, raw, seconds);
      std::fflush(stdout);
    }
  }
  return 0;
}

int read_one(const std::string& address, const std::string& stream, const std::string& variant,
             int round) {
  slipstream::ClientOptions client;
  client.address = address;
  slipstream::StreamReaderOptions options;
  options.next_timeout = std::chrono::milliseconds(120000);
  slipstream::StreamReader reader(client, stream_of(stream, variant, round), "bench", 0, 1, options);
  std::vector<double> buffer;
  std::size_t steps = 0;
  Clock::time_point first, last;
  for (;;) {
    slipstream::StreamNext next = reader.next_step();
    if (next.kind == slipstream::StreamNext::Kind::kEnd) break;
    if (next.kind != slipstream::StreamNext::Kind::kStep) {
      std::fprintf(stderr, "link_bench reader: step skipped or timed out\n");
      return 1;
    }
    for (const slipstream::StreamComponent& c : next.step->components()) {
      buffer.resize(c.global_extent.at(0));
      const std::vector<std::uint64_t> offset{0};
      next.step->load_box(c.name, offset, c.global_extent, buffer.data());
    }
    next.step->release();
    last = Clock::now();
    if (steps++ == 0) first = last;
  }
  // Steps per second after the first (which includes the writer's start).
  const double seconds = std::chrono::duration<double>(last - first).count();
  const double rate = steps > 1 ? static_cast<double>(steps - 1) / seconds : 0.0;
  std::printf("{\"role\": \"reader\", \"variant\": \"%s\", \"round\": %d, \"steps\": %zu, "
              "\"steps_per_second\": %.4f}\n", variant.c_str(), round, steps, rate);
  std::fflush(stdout);
  return 0;
}

int read(const std::string& address, const std::string& stream,
         const std::vector<std::string>& variants, int rounds) {
  for (int round = 0; round < rounds; ++round) {
    for (const std::string& variant : variants) {
      if (read_one(address, stream, variant, round) != 0) return 1;
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("One side of a stream over a slow link, with and without compression operators");
  app.require_subcommand(1);
  std::string address, stream = "link_bench", data = "fields";
  std::vector<std::string> variants{"none", "zfp"};
  int rounds = 3;
  double fraction = 1e-4;
  std::size_t steps = 20, cells = 131072, particles_per_cell = 8, pic_steps = 300;
  auto* writer = app.add_subcommand("writer", "stream the PIC data");
  auto* reader = app.add_subcommand("reader", "read every component of every step");
  for (CLI::App* sub : {writer, reader}) {
    sub->add_option("--address", address, "the server")->required();
    sub->add_option("--stream", stream, "the streams' prefix")->capture_default_str();
    sub->add_option("--variants", variants, "operators, in order: none, zfp, zstd, blosc")
        ->delimiter(',')
        ->check(CLI::IsMember({"none", "zfp", "zstd", "blosc"}));
    sub->add_option("--rounds", rounds, "runs of every variant")->capture_default_str();
  }
  writer->add_option("--data", data, "fields or particles")
      ->check(CLI::IsMember({"fields", "particles"}));
  writer->add_option("--accuracy-fraction", fraction, "zfp's accuracy as a fraction of each "
                     "component's range")->capture_default_str();
  writer->add_option("--steps", steps, "steps streamed per run")->capture_default_str();
  writer->add_option("--cells", cells, "PIC grid cells")->capture_default_str();
  writer->add_option("--particles-per-cell", particles_per_cell, "PIC particles per cell")
      ->capture_default_str();
  writer->add_option("--pic-steps", pic_steps, "PIC steps before the data are taken")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  try {
    if (writer->parsed()) {
      return write(address, stream, data, variants, rounds, fraction, steps, cells,
                   particles_per_cell, pic_steps);
    }
    return read(address, stream, variants, rounds);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "link_bench: %s\n", e.what());
    return 1;
  }
}
