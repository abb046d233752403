// stream_bench: N=2 writers stream steps to a group of M=2 readers on one node, through Slipstream
// streams and through MPI point-to-point (OpenMPI) of the same bytes, in one run; then the writers'
// step time (compute + publish) with and without a live reader group.
//
// One MPI job of 4 ranks: 0 and 1 write, 2 and 3 read. Rank 0 also starts the slipstream server
// (a child process, Unix socket). Run it plainly and it starts itself under mpirun:
//   stream_bench [--sizes 1,16,64] [--steps 8] [--rounds 5] [--queue 2]
//
// Per step each writer fills its chunk (rows x 4096 doubles, the step number in every element) and
// publishes it; each reader takes one writer's chunk (MPI: a receive from its writer; streams:
// strategy blocksofsourceranks) and sums every element, so both paths deliver the same bytes into
// the same use. Streams are measured twice: put_chunk (the writer fills its own buffer, which is
// copied into shared memory) and loan_chunk (the writer fills the shared memory itself). Bandwidth is the bytes delivered to readers per second over `steps` steps; the
// figure is the median of `rounds` rounds.
#include <mpi.h>
#include <sys/resource.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_support.hpp"
#include "slipstream/stream.hpp"

namespace {

using slipstream::bench::Clock;
using slipstream::bench::format_number;
using slipstream::bench::Listen;
using slipstream::bench::median;
using slipstream::bench::ServerChild;

constexpr int kWriters = 2;
constexpr int kReaders = 2;
constexpr std::uint64_t kColumns = 4096;  // doubles per row: 32 KiB rows

struct Settings {
  std::vector<int> sizes_mib{1, 16, 64};
  int steps = 8;
  int rounds = 5;
  int compute_ms = 50;        // the writers' compute per step in the step-cost test
  int cost_steps = 30;        // steps per measurement of the step cost
  int cost_size_mib = 16;
  int queue_limit = 2;        // the streams' queue limit (steps held at once) in the bandwidth test
  std::string slipstream_binary = SLIPSTREAM_BINARY;
};

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double load_average() {
  std::ifstream in("/proc/loadavg");
  double one = 0;
  in >> one;
  return one;
}

// Fills a writer's chunk for `step`: every element written, as a simulation would.
void fill(std::vector<double>& chunk, int step) {
  std::fill(chunk.begin(), chunk.end(), static_cast<double>(step));
}

// A reader's use of its share: every element read (and checked, cheaply, at the end).
double sum(const double* values, std::size_t count) {
  double total = 0;
  for (std::size_t i = 0; i < count; ++i) total += values[i];
  return total;
}

void check_sum(double total, std::size_t count, std::int64_t step) {
  if (total != static_cast<double>(step) * static_cast<double>(count)) {
    throw std::runtime_error("a reader got wrong bytes for step " + std::to_string(step));
  }
}

// Context switches of this process so far (voluntary and not), all its threads.
double context_switches() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_nvcsw + usage.ru_nivcsw);
}

// What one round cost: its wall time between two barriers (rank 0's figure); this rank's CPU
// time and context switches from the first barrier to its arrival at the second, and (on rank 0,
// `server` > 0) the server's CPU time over the same span.
struct RoundCost {
  double seconds = 0, cpu = 0, switches = 0, server_cpu = 0;
};

template <typename Body>
RoundCost timed_round(pid_t server, const Body& body) {
  MPI_Barrier(MPI_COMM_WORLD);
  auto start = Clock::now();
  const double cpu = slipstream::bench::process_cpu_seconds(0), switches = context_switches();
  const double server_cpu = server > 0 ? slipstream::bench::process_cpu_seconds(server) : 0.0;
  body();
  RoundCost cost;
  cost.cpu = slipstream::bench::process_cpu_seconds(0) - cpu;
  cost.switches = context_switches() - switches;
  if (server > 0) cost.server_cpu = slipstream::bench::process_cpu_seconds(server) - server_cpu;
  MPI_Barrier(MPI_COMM_WORLD);
  cost.seconds = seconds_since(start);
  return cost;
}

slipstream::ClientOptions client_options(const std::string& socket) {
  slipstream::ClientOptions options;
  options.address = "unix://" + socket;
  options.command_timeout = std::chrono::milliseconds(120000);
  return options;
}

// One rank's part in moving `rows` rows per writer per step: MPI point-to-point (writer w sends
// its chunk to reader w), or a stream (writer w publishes its rows of `meshes/E/x`; reader r of
// the group takes writer r's chunk with blocksofsourceranks), the writers filling their own
// buffer (put_chunk) or the shared memory itself (loan_chunk). round(k) moves k steps.
class Party {
 public:
  // kPutTwoTrips: put_chunk with begin_step a round trip of its own (no reservation of the
  // next step at end_step, as before streams reserved it).
  enum class Path { kMpi, kPut, kLoan, kPutTwoTrips };

  Party(Path path, int rank, const std::string& socket, std::size_t rows, const std::string& name,
        std::size_t queue_limit)
      : path_(path), rank_(rank), rows_(rows), count_(rows * kColumns), chunk_(count_),
        global_{kWriters * rows, kColumns}, offset_{rank * rows, 0}, extent_{rows, kColumns} {
    if (path_ == Path::kMpi) return;
    if (rank < kWriters) {
      slipstream::StreamWriterOptions options;
      options.expected_groups = 1;
      options.queue_limit = queue_limit;
      options.reserve_next_step = path_ != Path::kPutTwoTrips;
      writer_.emplace(client_options(socket), name, rank, kWriters, options);
    } else {
      slipstream::StreamReaderOptions options;
      options.strategy = "blocksofsourceranks";
      reader_.emplace(client_options(socket), name, "bench", rank - kWriters, kReaders, options);
    }
  }

  // Per measured step, milliseconds in each phase. Writers: begin_step, filling the chunk (with
  // loan_chunk: the loan and filling it), put_chunk (MPI: MPI_Send), end_step. Readers:
  // next_step (MPI: MPI_Recv), loading and reading the share.
  std::vector<std::array<double, 4>> phases;
  bool measuring = false;
  // The median of each phase over the measured steps.
  std::array<double, 4> phase_medians() const {
    std::array<double, 4> out{};
    for (std::size_t p = 0; p < out.size(); ++p) {
      std::vector<double> values;
      for (const auto& step : phases) values.push_back(step[p]);
      out[p] = values.empty() ? 0.0 : median(values);
    }
    return out;
  }

  void round(int steps) {
    for (int k = 0; k < steps; ++k, ++step_) {
      if (path_ == Path::kMpi) {
        mpi_step();
      } else if (writer_) {
        write_step();
      } else {
        read_step();
      }
    }
  }

  // Writers close; readers check that the end of the stream comes next.
  void finish() {
    if (writer_) writer_->close();
    if (reader_ && reader_->next_step().kind != slipstream::StreamNext::Kind::kEnd) {
      throw std::runtime_error("reader: expected the end of the stream");
    }
  }

 private:
  static double ms(Clock::time_point from, Clock::time_point to) {
    return std::chrono::duration<double, std::milli>(to - from).count();
  }
  void record(Clock::time_point t0, Clock::time_point t1, Clock::time_point t2,
              Clock::time_point t3, Clock::time_point t4) {
    if (measuring) phases.push_back({ms(t0, t1), ms(t1, t2), ms(t2, t3), ms(t3, t4)});
  }
  void mpi_step() {
    const auto t0 = Clock::now();
    if (rank_ < kWriters) {
      fill(chunk_, step_);
      const auto t1 = Clock::now();
      MPI_Send(chunk_.data(), static_cast<int>(count_), MPI_DOUBLE, kWriters + rank_, step_,
               MPI_COMM_WORLD);
      const auto t2 = Clock::now();
      record(t0, t0, t1, t2, t2);
    } else {
      MPI_Recv(chunk_.data(), static_cast<int>(count_), MPI_DOUBLE, rank_ - kWriters, step_,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      const auto t1 = Clock::now();
      check_sum(sum(chunk_.data(), count_), count_, step_);
      const auto t2 = Clock::now();
      record(t0, t1, t2, t2, t2);
    }
  }
  void write_step() {
    const auto t0 = Clock::now();
    writer_->begin_step(step_);
    const auto t1 = Clock::now();
    auto t2 = t1;
    if (path_ == Path::kLoan) {  // filled in place: the segment the readers map
      auto into = writer_->loan_chunk<double>("meshes/E/x", global_, offset_, extent_);
      std::fill(into.begin(), into.end(), static_cast<double>(step_));
      t2 = Clock::now();
    } else {
      fill(chunk_, step_);
      t2 = Clock::now();
      writer_->put_chunk<double>("meshes/E/x", global_, offset_, extent_, chunk_);
    }
    const auto t3 = Clock::now();
    writer_->end_step();
    record(t0, t1, t2, t3, Clock::now());
  }
  void read_step() {
    const auto t0 = Clock::now();
    slipstream::StreamNext next = reader_->next_step();
    if (next.kind != slipstream::StreamNext::Kind::kStep) {
      throw std::runtime_error("reader: no step " + std::to_string(step_));
    }
    const auto t1 = Clock::now();
    std::size_t got = 0;
    for (const auto& piece : next.step->load("meshes/E/x")) {
      auto values = piece.as<double>();
      check_sum(sum(values.data(), values.size()), values.size(), next.step->number());
      got += values.size();
    }
    if (got != count_) throw std::runtime_error("reader: wrong share size");
    const auto t2 = Clock::now();
    record(t0, t1, t2, t2, t2);
    // Dropped, not released: next_step() gives it back in its own round trip.
  }

  Path path_;
  int rank_;
  std::size_t rows_, count_;
  std::vector<double> chunk_;
  std::vector<std::uint64_t> global_, offset_, extent_;
  std::optional<slipstream::StreamWriter> writer_;
  std::optional<slipstream::StreamReader> reader_;
  int step_ = 0;
};

// Bandwidth of each path (MPI, put_chunk, loan_chunk) for `size_mib` per writer per step: rounds
// of `steps` steps, the paths interleaved round by round so that the machine's other load falls
// on all of them alike, after one unmeasured round each; the median round of each path.
struct Bandwidths {
  std::vector<double> bytes_per_second;  // by path
  // By path: medians of the phases of writer 0 (rank 0) and reader 0 (rank kWriters); valid on
  // rank 0.
  std::vector<std::array<double, 4>> writer_phases, reader_phases;
  // By path, medians over the rounds of the CPU time per step in microseconds of both writers,
  // both readers and the server, and of the context switches per step of the 4 ranks; on rank 0.
  std::vector<std::array<double, 4>> cpu_per_step;
};

Bandwidths bandwidths(int rank, const std::string& socket, pid_t server, int size_mib, int steps,
                      const Settings& settings) {
  const std::size_t rows = (static_cast<std::size_t>(size_mib) << 20) / (kColumns * sizeof(double));
  const std::string suffix = std::to_string(size_mib);
  const std::size_t queue = static_cast<std::size_t>(settings.queue_limit);
  Party parties[] = {Party(Party::Path::kMpi, rank, socket, rows, "", queue),
                     Party(Party::Path::kPut, rank, socket, rows, "bench.put." + suffix, queue),
                     Party(Party::Path::kLoan, rank, socket, rows, "bench.loan." + suffix, queue),
                     Party(Party::Path::kPutTwoTrips, rank, socket, rows,
                           "bench.put2." + suffix, queue)};
  std::vector<std::vector<double>> seconds(std::size(parties));
  // By path, then by figure (writers' CPU, readers', server's, ranks' switches), one per round.
  std::vector<std::array<std::vector<double>, 4>> costs(std::size(parties));
  for (int round = 0; round <= settings.rounds; ++round) {  // round 0 warms up
    for (std::size_t p = 0; p < std::size(parties); ++p) {
      parties[p].measuring = round > 0;
      RoundCost cost = timed_round(rank == 0 ? server : 0, [&] { parties[p].round(steps); });
      double mine[2] = {cost.cpu, cost.switches}, all[2 * kWriters + 2 * kReaders] = {};
      MPI_Gather(mine, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
      if (round == 0 || rank != 0) continue;
      seconds[p].push_back(cost.seconds);
      std::array<double, 4> per_step{};  // writers, readers, server (us), switches
      for (int r = 0; r < kWriters + kReaders; ++r) {
        per_step[r < kWriters ? 0 : 1] += all[2 * r] * 1e6 / steps;
        per_step[3] += all[2 * r + 1] / steps;
      }
      per_step[2] = cost.server_cpu * 1e6 / steps;
      for (std::size_t f = 0; f < per_step.size(); ++f) costs[p][f].push_back(per_step[f]);
    }
  }
  for (Party& party : parties) party.finish();
  const double bytes = static_cast<double>(steps) * kReaders * static_cast<double>(rows) *
                       kColumns * sizeof(double);
  Bandwidths out;
  for (const auto& s : seconds) out.bytes_per_second.push_back(rank == 0 ? bytes / median(s) : 0);
  for (const auto& path : costs) {
    std::array<double, 4> medians{};
    for (std::size_t f = 0; f < medians.size(); ++f) medians[f] = median(path[f]);
    out.cpu_per_step.push_back(medians);
  }
  for (Party& party : parties) {
    std::array<double, 4> phases = party.phase_medians();
    if (rank == kWriters) {
      MPI_Send(phases.data(), 4, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD);
    } else if (rank == 0) {
      out.writer_phases.push_back(phases);
      MPI_Recv(phases.data(), 4, MPI_DOUBLE, kWriters, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      out.reader_phases.push_back(phases);
    }
  }
  return out;
}

// A writer's compute: a 5-point stencil sweep over its field, repeated to take about
// `compute_ms` (calibrated once by rank 0 and broadcast, so every run does the same work).
void compute(std::vector<double>& field, std::vector<double>& scratch, int sweeps) {
  const std::size_t rows = field.size() / kColumns;
  for (int s = 0; s < sweeps; ++s) {
    for (std::size_t r = 1; r + 1 < rows; ++r) {
      const double* up = &field[(r - 1) * kColumns];
      const double* here = &field[r * kColumns];
      const double* down = &field[(r + 1) * kColumns];
      double* out = &scratch[r * kColumns];
      for (std::size_t c = 1; c + 1 < kColumns; ++c) {
        out[c] = 0.2 * (here[c] + up[c] + down[c] + here[c - 1] + here[c + 1]);
      }
    }
    field.swap(scratch);
  }
}

// The writers' step cost with no reader group and with a live one; see step_cost().
enum class Readers { kNone, kTake, kRead };
constexpr Readers kReaderModes[] = {Readers::kNone, Readers::kTake, Readers::kRead};

const char* mode_name(Readers mode) {
  switch (mode) {
    case Readers::kNone: return "no reader group";
    case Readers::kTake: return "live group, takes its share (views, no read)";
    case Readers::kRead: return "live group, reads every element";
  }
  return "?";
}

// One measurement of the writers' step (compute + begin + put + end) over `cost_steps` steps
// with readers in `mode` (a group of 2, block policy: it sees every step). Returns this rank's
// step times in ms (empty on reader ranks).
std::vector<double> step_times(int rank, const std::string& socket, const Settings& settings,
                               int sweeps, Readers mode, const std::string& name) {
  const std::size_t rows = (static_cast<std::size_t>(settings.cost_size_mib) << 20) /
                           (kColumns * sizeof(double));
  const std::size_t count = rows * kColumns;
  const std::vector<std::uint64_t> global{kWriters * rows, kColumns};
  std::vector<double> step_ms;
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank < kWriters) {
    slipstream::StreamWriterOptions options;
    options.expected_groups = mode == Readers::kNone ? 0 : 1;
    slipstream::StreamWriter writer(client_options(socket), name, rank, kWriters, options);
    MPI_Barrier(MPI_COMM_WORLD);  // the readers have joined (or there are none)
    std::vector<double> field(count, 1.0), scratch(count, 0.0);
    const std::vector<std::uint64_t> offset{rank * rows, 0}, extent{rows, kColumns};
    for (int step = 0; step < settings.cost_steps; ++step) {
      auto start = Clock::now();
      compute(field, scratch, sweeps);
      writer.begin_step(step);
      writer.put_chunk<double>("meshes/E/x", global, offset, extent, field);
      writer.end_step();
      step_ms.push_back(seconds_since(start) * 1000);
    }
    writer.close();
  } else if (mode != Readers::kNone) {
    slipstream::StreamReaderOptions options;
    options.strategy = "blocksofsourceranks";
    slipstream::StreamReader reader(client_options(socket), name, "live", rank - kWriters,
                                    kReaders, options);
    MPI_Barrier(MPI_COMM_WORLD);
    for (;;) {
      slipstream::StreamNext next = reader.next_step();
      if (next.kind != slipstream::StreamNext::Kind::kStep) break;
      for (const auto& piece : next.step->load("meshes/E/x")) {
        if (mode == Readers::kRead) {
          auto values = piece.as<double>();
          volatile double total = sum(values.data(), values.size());
          (void)total;
        }
      }
    }
  } else {
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return step_ms;
}

// Median writer step per reader mode, both writers' steps together, the first 5 steps of each
// measurement left out (fresh buffers fault their pages in). The modes are interleaved, `rounds`
// times, so that the machine's other load falls on all of them alike. Figures on rank 0.
std::vector<double> step_cost(int rank, const std::string& socket, const Settings& settings,
                              int sweeps) {
  std::vector<std::vector<double>> kept(std::size(kReaderModes));
  for (int round = 0; round < settings.rounds; ++round) {
    for (std::size_t m = 0; m < std::size(kReaderModes); ++m) {
      std::vector<double> mine =
          step_times(rank, socket, settings, sweeps, kReaderModes[m],
                     "bench.cost." + std::to_string(round) + "." + std::to_string(m));
      mine.resize(static_cast<std::size_t>(settings.cost_steps), 0.0);  // readers: zeros
      std::vector<double> gathered(mine.size() * (kWriters + kReaders));
      MPI_Gather(mine.data(), settings.cost_steps, MPI_DOUBLE, gathered.data(),
                 settings.cost_steps, MPI_DOUBLE, 0, MPI_COMM_WORLD);
      for (int w = 0; w < kWriters; ++w) {
        for (int st = 5; st < settings.cost_steps; ++st) {
          kept[m].push_back(gathered[static_cast<std::size_t>(w * settings.cost_steps + st)]);
        }
      }
    }
  }
  std::vector<double> out;
  for (const auto& times : kept) out.push_back(median(times));
  return out;
}

// Sweeps of compute() that take about `ms` on this rank.
int calibrate_sweeps(int ms, std::size_t rows) {
  std::vector<double> field(rows * kColumns, 1.0), scratch(rows * kColumns, 0.0);
  auto start = Clock::now();
  compute(field, scratch, 1);
  double one = seconds_since(start) * 1000;
  return std::max(1, static_cast<int>(std::lround(ms / std::max(one, 0.01))));
}

int run(int rank, const Settings& settings, int argc, char** argv) {
  // Rank 0 starts the server and tells the others its socket.
  std::unique_ptr<ServerChild> server;
  std::string socket;
  if (rank == 0) {
    const std::size_t largest =
        static_cast<std::size_t>(*std::max_element(settings.sizes_mib.begin(),
                                                   settings.sizes_mib.end())) << 20;
    server = std::make_unique<ServerChild>(
        "slipstream",
        [&](const Listen& listen) {
          return std::vector<std::string>{settings.slipstream_binary, "server", "--port", "0",
                                          "--unixsocket", listen.socket, "--dir", listen.dir,
                                          "--loglevel", "warn", "--max-bulk-len",
                                          std::to_string(2 * largest)};
        },
        [](const Listen& listen) { return slipstream::bench::unix_socket_accepts(listen.socket); });
    socket = server->socket();
  }
  int length = static_cast<int>(socket.size());
  MPI_Bcast(&length, 1, MPI_INT, 0, MPI_COMM_WORLD);
  socket.resize(static_cast<std::size_t>(length));
  MPI_Bcast(socket.data(), length, MPI_CHAR, 0, MPI_COMM_WORLD);

  if (rank == 0) {
    std::printf("# stream_bench: %d writers -> a group of %d readers, one node\n", kWriters,
                kReaders);
    std::printf("# command: %s\n", slipstream::bench::command_line(argc, argv).c_str());
    std::printf("# CPU: %s, %ld cores online\n", slipstream::bench::cpu_model().c_str(),
                ::sysconf(_SC_NPROCESSORS_ONLN));
    std::printf("# median of %d rounds per path, the paths interleaved round by round; bandwidth ="
                " bytes delivered to readers per second\n\n", settings.rounds);
    std::printf("| per writer per step | steps per round | MPI point-to-point |"
                " stream, put_chunk | / MPI | stream, loan_chunk | / MPI |"
                " put_chunk, begin a round trip | / MPI | load avg |\n"
                "|---|---|---|---|---|---|---|---|---|---|\n");
    std::fflush(stdout);
  }
  std::vector<std::pair<int, Bandwidths>> results;
  for (int size_mib : settings.sizes_mib) {
    // At least 128 MiB per writer per round, so that small steps are timed over enough of them.
    const int steps = std::max(settings.steps, 128 / size_mib);
    Bandwidths figures = bandwidths(rank, socket, server ? server->pid() : 0, size_mib, steps,
                                    settings);
    const double mpi = figures.bytes_per_second[0], stream = figures.bytes_per_second[1],
                 loaned = figures.bytes_per_second[2], two_trips = figures.bytes_per_second[3];
    if (rank == 0) {
      std::printf("| %d MiB | %d | %s GB/s | %s GB/s | %.2fx | %s GB/s | %.2fx | %s GB/s | %.2fx |"
                  " %.2f |\n",
                  size_mib, steps, format_number(mpi / 1e9).c_str(),
                  format_number(stream / 1e9).c_str(), stream / mpi,
                  format_number(loaned / 1e9).c_str(), loaned / mpi,
                  format_number(two_trips / 1e9).c_str(), two_trips / mpi, load_average());
      std::fflush(stdout);
    }
    results.emplace_back(size_mib, std::move(figures));
  }
  if (rank == 0) {
    std::printf("\nWhere a step's time goes: medians over the measured steps, in ms, of writer 0's "
                "phases (MPI: fill, MPI_Send) and reader 0's (MPI: MPI_Recv, sum):\n\n"
                "| per writer per step | path | begin_step | fill | put_chunk / MPI_Send | end_step "
                "| writer total | next_step / MPI_Recv | load + sum |\n"
                "|---|---|---|---|---|---|---|---|---|\n");
    const char* paths[] = {"MPI", "stream, put_chunk", "stream, loan_chunk",
                           "put_chunk, begin a round trip"};
    for (const auto& [size_mib, figures] : results) {
      for (std::size_t p = 0; p < figures.writer_phases.size(); ++p) {
        const auto& w = figures.writer_phases[p];
        const auto& r = figures.reader_phases[p];
        std::printf("| %d MiB | %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |\n", size_mib,
                    paths[p], w[0], w[1], w[2], w[3], w[0] + w[1] + w[2] + w[3], r[0], r[1]);
      }
    }
    std::printf("\nCPU per step: medians over the rounds, in microseconds of CPU time (all threads)"
                " from a round's first barrier to each rank's arrival at its last; the server's"
                " over rank 0's span (MPI: the server idles); context switches of the 4 ranks:\n\n"
                "| per writer per step | path | writers | readers | server | total | total per"
                " MiB delivered | context switches |\n|---|---|---|---|---|---|---|---|\n");
    for (const auto& [size_mib, figures] : results) {
      for (std::size_t p = 0; p < figures.cpu_per_step.size(); ++p) {
        const auto& c = figures.cpu_per_step[p];
        const double total = c[0] + c[1] + c[2];
        std::printf("| %d MiB | %s | %.0f | %.0f | %.0f | %.0f | %.0f | %.1f |\n", size_mib,
                    paths[p], c[0], c[1], c[2], total, total / (kReaders * size_mib), c[3]);
      }
    }
    std::fflush(stdout);
  }

  if (settings.cost_steps <= 5) {  // the step-cost test is off (its first 5 steps are not kept)
    MPI_Barrier(MPI_COMM_WORLD);
    return 0;
  }
  int sweeps = 0;
  if (rank == 0) {
    sweeps = calibrate_sweeps(settings.compute_ms, (static_cast<std::size_t>(settings.cost_size_mib)
                                                    << 20) / (kColumns * sizeof(double)));
  }
  MPI_Bcast(&sweeps, 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<double> cost = step_cost(rank, socket, settings, sweeps);
  if (rank == 0) {
    std::printf("\nWriter step: compute (%d stencil sweeps over %d MiB, ~%d ms) then begin + put +"
                " end of the same %d MiB; a group of %d readers, block policy; median of both"
                " writers' steps over %d interleaved rounds of %d steps:\n\n",
                sweeps, settings.cost_size_mib, settings.compute_ms, settings.cost_size_mib,
                kReaders, settings.rounds, settings.cost_steps - 5);
    std::printf("| readers | writer step | vs no reader group | load avg |\n|---|---|---|---|\n");
    for (std::size_t m = 0; m < cost.size(); ++m) {
      std::printf("| %s | %s ms | %+.1f%% | %.2f |\n", mode_name(kReaderModes[m]),
                  format_number(cost[m]).c_str(), 100.0 * (cost[m] / cost[0] - 1.0),
                  load_average());
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return 0;
}

// Not under mpirun: start this program again as 4 ranks of an MPI job.
int relaunch(int argc, char** argv) {
  std::vector<std::string> args = {"mpirun", "--oversubscribe", "--bind-to", "none", "-np",
                                   std::to_string(kWriters + kReaders)};
  if (::geteuid() == 0) args.push_back("--allow-run-as-root");
  char self[4096];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0) {
    std::perror("stream_bench: /proc/self/exe");
    return 1;
  }
  self[n] = '\0';
  args.push_back(self);
  for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
  std::vector<char*> raw;
  for (auto& a : args) raw.push_back(a.data());
  raw.push_back(nullptr);
  ::execvp("mpirun", raw.data());
  std::perror("stream_bench: mpirun");
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  Settings settings;
  CLI::App app{"Stream bandwidth against MPI point-to-point, and the writers' step cost"};
  app.add_option("--sizes", settings.sizes_mib, "MiB per writer per step")->delimiter(',');
  app.add_option("--steps", settings.steps, "steps per round (at least 128 MiB per writer)");
  app.add_option("--rounds", settings.rounds, "rounds (the median is reported)");
  app.add_option("--queue", settings.queue_limit, "streams' queue limit in the bandwidth test")
      ->check(CLI::Range(1, 64));
  app.add_option("--compute-ms", settings.compute_ms, "writers' compute per step, step-cost test");
  app.add_option("--cost-steps", settings.cost_steps,
                 "steps of the step-cost test (5 or fewer: the test is skipped)");
  app.add_option("--slipstream", settings.slipstream_binary, "slipstream executable");
  CLI11_PARSE(app, argc, argv);
  if (std::getenv("OMPI_COMM_WORLD_SIZE") == nullptr) return relaunch(argc, argv);

  ::signal(SIGPIPE, SIG_IGN);
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int status = 0;
  if (size != kWriters + kReaders) {
    if (rank == 0) std::fprintf(stderr, "stream_bench: run as %d MPI ranks\n", kWriters + kReaders);
    status = 2;
  } else {
    try {
      status = run(rank, settings, argc, argv);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "stream_bench (rank %d): %s\n", rank, e.what());
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
  MPI_Finalize();
  return status;
}
