// stream_peer: one writer or reader of a stream as a process of its own, for the tests that kill
// processes (stream_kill_test.cpp). It reports what it does on stdout, one line per event, so a
// driver can wait for a point and then SIGKILL it:
//   writer: attached | began N | stalled N | holding N | ended N | aborted N | closed
//   reader: joined | step N readers R0,R1,.. index I | chunk N C OFFSET EXTENT SOURCE |
//           piece N C OFFSET EXTENT SOURCE | holding N | released N | skipped N REASON | end |
//           timeout
//   both:   bad ... (a value or attribute that differs from peer_layout.hpp) | error WHAT
// C is the component's index in kComponents; offsets and extents are comma-separated.
//
// A writer with --stall K begins step K, puts one chunk, reports "stalled K" and sleeps until it
// is killed (put_chunk sends nothing before end_step, so the server sees a begun step, or only a
// reserved one). With --stall-begin K it stalls right after begin_step(K), having put nothing.
// With --hold K --hold-file F it puts its chunks of step K, reports "holding K" and waits until
// file F exists before it ends the step. A step whose end_step returns false (the server aborted
// it) is reported "aborted N" instead of "ended N". A reader
// with --stall K loads its share of step K, reports it and "holding K", and sleeps holding it.
//
// Exit status: 0 done, 1 a value was wrong, 2 next_step timed out, 3 an error was thrown,
// 4 bad arguments.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "peer_layout.hpp"
#include "slipstream/stream.hpp"

namespace {

using slipstream::testing::stream_procs::component_index;
using slipstream::testing::stream_procs::element_value;
using slipstream::testing::stream_procs::kComponents;
using slipstream::testing::stream_procs::kMesh;
using slipstream::testing::stream_procs::kParticles;
using slipstream::testing::stream_procs::Layout;

constexpr const char* kUsage =
    "usage: stream_peer --role writer|reader --address A --stream S --rank R --count N\n"
    "  writers: [--steps S] [--stall K] [--stall-begin K] [--hold K --hold-file F] [--queue L]\n"
    "           [--expect-groups G] [--end-on-failure] [--step-delay-ms MS]\n"
    "  readers: --group G [--strategy NAME] [--stall K] [--next-timeout-ms MS]\n"
    "  both:    [--run V] [--writers N] [--rows-per-chunk R] [--columns C] [--particles P]\n";

struct Arguments {
  std::map<std::string, std::string> values;
  bool has(const std::string& key) const { return values.count(key) > 0; }
  std::string text(const std::string& key, const std::string& fallback = {}) const {
    auto it = values.find(key);
    return it == values.end() ? fallback : it->second;
  }
  long long number(const std::string& key, long long fallback) const {
    auto it = values.find(key);
    return it == values.end() ? fallback : std::stoll(it->second);
  }
};

Arguments parse(int argc, char** argv) {
  Arguments out;
  for (int i = 1; i < argc; ++i) {
    std::string key = argv[i];
    if (key.rfind("--", 0) != 0) throw std::invalid_argument("unexpected argument " + key);
    key = key.substr(2);
    if (key == "end-on-failure") {
      out.values[key] = "1";
    } else if (i + 1 < argc) {
      out.values[key] = argv[++i];
    } else {
      throw std::invalid_argument("--" + key + " needs a value");
    }
  }
  for (const char* required : {"role", "address", "stream", "rank", "count"}) {
    if (!out.has(required))
      throw std::invalid_argument(std::string("--") + required + " is missing");
  }
  return out;
}

std::string join(const std::vector<std::uint64_t>& values) {
  std::string out;
  for (std::uint64_t v : values) out += (out.empty() ? "" : ",") + std::to_string(v);
  return out;
}

[[noreturn]] void sleep_until_killed() {
  for (;;) ::pause();
}

// Waits until `path` exists; throws after a minute (the driver failed to make it).
void wait_for_file(const std::string& path) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (::access(path.c_str(), F_OK) != 0) {
    if (std::chrono::steady_clock::now() > give_up) {
      throw std::runtime_error("no file " + path + " after a minute");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

Layout layout_from(const Arguments& args) {
  Layout layout;
  layout.writers = static_cast<std::uint32_t>(args.number("writers", 4));
  layout.rows_per_chunk = static_cast<std::uint64_t>(args.number("rows-per-chunk", 2));
  layout.columns = static_cast<std::uint64_t>(args.number("columns", 8));
  layout.particles = static_cast<std::uint64_t>(args.number("particles", 5));
  return layout;
}

int run_writer(const Arguments& args, const slipstream::ClientOptions& client) {
  const auto rank = static_cast<std::uint32_t>(args.number("rank", 0));
  Layout layout = layout_from(args);
  layout.writers = static_cast<std::uint32_t>(args.number("count", 1));
  const int run = static_cast<int>(args.number("run", 1));
  const long long steps = args.number("steps", 4);
  const long long stall = args.number("stall", -1);
  const long long stall_begin = args.number("stall-begin", -1);
  const long long hold = args.number("hold", -1);
  slipstream::StreamWriterOptions options;
  options.queue_limit = static_cast<std::size_t>(args.number("queue", 2));
  options.expected_groups = static_cast<std::uint32_t>(args.number("expect-groups", 0));
  options.end_on_writer_failure = args.has("end-on-failure");
  options.hostname = "host";
  slipstream::StreamWriter writer(client, args.text("stream"), rank, layout.writers, options);
  std::printf("attached\n");
  if (rank == 0) writer.set_stream_attribute("/", "run", std::int64_t{run});

  const std::vector<std::uint64_t> mesh_extent = layout.mesh_extent();
  const std::vector<std::uint64_t> particle_extent = layout.particle_extent();
  const auto delay = std::chrono::milliseconds(args.number("step-delay-ms", 0));
  for (long long step = 0; step < steps; ++step) {
    std::this_thread::sleep_for(delay);  // a slow rank
    writer.begin_step(step);
    std::printf("began %lld\n", step);
    if (step == stall_begin) {
      std::printf("stalled %lld\n", step);
      sleep_until_killed();
    }
    // The buffers live until end_step (put_chunk borrows them).
    std::vector<std::vector<double>> rows(2);
    for (std::uint64_t half = 0; half < 2; ++half) {
      const std::uint64_t first_row = (2 * rank + half) * layout.rows_per_chunk;
      for (std::uint64_t i = 0; i < layout.rows_per_chunk * layout.columns; ++i) {
        rows[half].push_back(element_value(run, step, 0, first_row * layout.columns + i));
      }
      const std::vector<std::uint64_t> offset = {first_row, 0};
      const std::vector<std::uint64_t> extent = {layout.rows_per_chunk, layout.columns};
      writer.put_chunk<double>(kMesh, mesh_extent, offset, extent, rows[half]);
      if (step == stall) {
        std::printf("stalled %lld\n", step);
        sleep_until_killed();
      }
    }
    std::vector<double> particles;
    for (std::uint64_t i = 0; i < layout.particles; ++i) {
      particles.push_back(element_value(run, step, 1, rank * layout.particles + i));
    }
    const std::vector<std::uint64_t> offset = {rank * layout.particles};
    const std::vector<std::uint64_t> extent = {layout.particles};
    writer.put_chunk<double>(kParticles, particle_extent, offset, extent, particles);
    if (rank == 0) {
      writer.set_attribute("/", "time", 0.5 * static_cast<double>(step));
      writer.set_attribute("/", "dt", 0.5);
      writer.set_attribute("meshes/E", "unitDimension", std::vector<double>{1, 1, -3, -1, 0, 0, 0});
    }
    if (step == hold) {
      std::printf("holding %lld\n", step);
      wait_for_file(args.text("hold-file"));
    }
    std::printf("%s %lld\n", writer.end_step() ? "ended" : "aborted", step);
  }
  writer.close();
  std::printf("closed\n");
  return 0;
}

// Checks every element of `piece` of component `component` against element_value and its source
// rank against the layout; reports and counts what differs.
int check_piece(const slipstream::StreamPiece& piece, const slipstream::StreamComponent& component,
                int index, const Layout& layout, int run, std::int64_t step) {
  const std::vector<std::uint64_t>& offset = piece.piece.offset;
  const std::vector<std::uint64_t>& extent = piece.piece.extent;
  const std::vector<std::uint64_t>& global = component.global_extent;
  const std::span<const double> values = piece.as<double>();
  if (values.size() != piece.piece.element_count()) {
    std::printf("bad %lld %d size %zu for extent %s\n", static_cast<long long>(step), index,
                values.size(), join(extent).c_str());
    return 1;
  }
  int wrong = 0;
  std::vector<std::uint64_t> at(extent.size(), 0);  // position within the piece
  for (std::size_t n = 0; n < values.size(); ++n) {
    std::uint64_t linear = 0;
    for (std::size_t d = 0; d < global.size(); ++d) linear = linear * global[d] + offset[d] + at[d];
    const double expected = element_value(run, step, index, linear);
    if (values[n] != expected || layout.owner(index, linear) != piece.piece.source_rank) {
      if (wrong++ < 3) {
        std::printf("bad %lld %d element %llu: %.17g from writer %u, expected %.17g from %u\n",
                    static_cast<long long>(step), index, static_cast<unsigned long long>(linear),
                    values[n], piece.piece.source_rank, expected, layout.owner(index, linear));
      }
    }
    for (std::size_t d = extent.size(); d-- > 0;) {  // row-major increment
      if (++at[d] < extent[d]) break;
      at[d] = 0;
    }
  }
  return wrong;
}

// The step's own and the stream's attributes that the writers set: time and the run.
int check_attributes(const slipstream::StreamStep& step, int run) {
  bool time = false, run_matches = false;
  for (const slipstream::StreamAttribute& a : step.attributes()) {
    if (a.step == step.number() && a.path == "/" && a.name == "time") {
      time = std::get<double>(a.value) == 0.5 * static_cast<double>(step.number());
    }
    if (a.step == -1 && a.name == "run") run_matches = std::get<std::int64_t>(a.value) == run;
  }
  if (time && run_matches) return 0;
  std::printf("bad %lld attributes: time %s, run %s\n", static_cast<long long>(step.number()),
              time ? "right" : "wrong or missing", run_matches ? "right" : "wrong or missing");
  return 1;
}

int run_reader(const Arguments& args, const slipstream::ClientOptions& client) {
  const auto rank = static_cast<std::uint32_t>(args.number("rank", 0));
  const auto size = static_cast<std::uint32_t>(args.number("count", 1));
  const Layout layout = layout_from(args);
  const int run = static_cast<int>(args.number("run", 1));
  const long long stall = args.number("stall", -1);
  slipstream::StreamReaderOptions options;
  options.strategy = args.text("strategy", "roundrobin");
  options.next_timeout = std::chrono::milliseconds(args.number("next-timeout-ms", 60000));
  options.hostname = "host";
  slipstream::StreamReader reader(client, args.text("stream"), args.text("group"), rank, size,
                                  options);
  std::printf("joined\n");
  int wrong = 0;
  for (;;) {
    slipstream::StreamNext next = reader.next_step();
    if (next.kind == slipstream::StreamNext::Kind::kTimeout) {
      std::printf("timeout\n");
      return 2;
    }
    if (next.kind == slipstream::StreamNext::Kind::kEnd) {
      std::printf("end\n");
      break;
    }
    if (next.kind == slipstream::StreamNext::Kind::kSkipped) {
      std::printf("skipped %lld %s\n", static_cast<long long>(next.skipped_step),
                  next.reason.c_str());
      continue;
    }
    slipstream::StreamStep& step = *next.step;
    const long long number = step.number();
    std::string readers;
    for (std::uint32_t r : step.readers())
      readers += (readers.empty() ? "" : ",") + std::to_string(r);
    std::printf("step %lld readers %s index %u\n", number, readers.c_str(), step.index());
    wrong += check_attributes(step, run);
    for (const slipstream::StreamComponent& component : step.components()) {
      const int index = component_index(component.name);
      if (index < 0) {
        std::printf("bad %lld unknown component %s\n", number, component.name.c_str());
        ++wrong;
        continue;
      }
      for (const slipstream::stream::Chunk& chunk : component.chunks) {
        std::printf("chunk %lld %d %s %s %u\n", number, index, join(chunk.offset).c_str(),
                    join(chunk.extent).c_str(), chunk.source_rank);
      }
      for (const slipstream::StreamPiece& piece : step.load(component.name)) {
        wrong += check_piece(piece, component, index, layout, run, number);
        std::printf("piece %lld %d %s %s %u\n", number, index, join(piece.piece.offset).c_str(),
                    join(piece.piece.extent).c_str(), piece.piece.source_rank);
      }
    }
    if (number == stall) {
      std::printf("holding %lld\n", number);
      sleep_until_killed();
    }
    step.release();
    std::printf("released %lld\n", number);
  }
  return wrong == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // every report reaches the driver at once
  Arguments args;
  try {
    args = parse(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "stream_peer: %s\n%s", e.what(), kUsage);
    return 4;
  }
  try {
    slipstream::ClientOptions client;
    client.address = args.text("address");
    const std::string role = args.text("role");
    if (role == "writer") return run_writer(args, client);
    if (role == "reader") return run_reader(args, client);
    std::fprintf(stderr, "stream_peer: --role must be writer or reader, got %s\n%s", role.c_str(),
                 kUsage);
    return 4;
  } catch (const std::exception& e) {
    std::printf("error %s\n", e.what());
    return 3;
  }
}
