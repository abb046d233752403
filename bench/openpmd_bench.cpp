// openpmd_bench: what the openPMD-api layer costs. (1) Streams: one writer thread and one reader
// thread move the same steps through the native StreamWriter/StreamReader and through the
// openPMD layer (openPMD::Series on "<name>.sst"), over the Unix socket with shared memory; the
// figure is steps delivered per second (median of rounds), and the layer's ratio to native. The
// writer fills a float64 component of the step's size, the reader sums every element. Both
// paths of writing (a copy from the writer's buffer: put_chunk / storeChunk; or filling shared
// memory in place: loan_chunk / the span form of storeChunk) are measured. An openPMD loadChunk
// fills the caller's buffer, which costs one copy that the native reader's view of the shared
// memory does not: the native reader that copies its view into its own buffer is measured too,
// as the anchor for that copy. (2) Files: the HDF5 backend writing and reading the same
// iterations as h5py does (python3 -c, timed inside; h5py writes the same openPMD attributes as
// the layer, so both write the same file), bandwidth and ratio.
//
// Run: openpmd_bench [--sizes 1,16] [--steps 20] [--rounds 5] [--file-iterations 8]
//                    [--reader-cpu 1] [--only layer|attributes|native]
// The server runs on CPU 1 (taskset), this process on CPU 0, where the machine has two CPUs; the
// reader thread beside the writer unless --reader-cpu says otherwise. --only runs one variant
// (copy in, copy out) and prints the user and system CPU its writer and reader threads used.
#include <sched.h>
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>
#include <iostream>
#include <memory>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "bench_support.hpp"
#include "openPMD/openPMD.hpp"
#include "slipstream/stream.hpp"

namespace {

using slipstream::bench::Clock;
using slipstream::bench::format_number;
using slipstream::bench::median;

struct Settings {
  std::vector<int> sizes_mib{1, 16};
  int steps = 20;
  int rounds = 5;
  int file_iterations = 8;
  std::string slipstream_binary = SLIPSTREAM_BINARY;
  /// The CPU the reader thread runs on; -1: the writer's (CPU 0, beside it).
  int reader_cpu = -1;
  /// Only this many steps of this variant ("native", "attributes", "layer"; empty: the tables),
  /// copy in and copy out, for profiling one path (e.g. under strace -c or perf).
  std::string only;
};

enum class Writer { kNativePut, kNativeLoan, kOpenPmdStore, kOpenPmdSpan };
// The attributes openPMD requires of every iteration, mesh and component, as the layer sends them:
// with them the native writer does what the layer does, less the layer itself.
bool native_with_attributes = false;

void set_standard_attributes(slipstream::StreamWriter& w, std::int64_t step) {
  w.set_attribute("/", "time", static_cast<double>(step), "");
  w.set_attribute("/", "dt", 1.0, "");
  w.set_attribute("/", "timeUnitSI", 1.0, "");
  w.set_attribute("meshes/E", "geometry", std::string("cartesian"));
  w.set_attribute("meshes/E", "dataOrder", std::string("C"));
  w.set_attribute("meshes/E", "axisLabels", std::vector<std::string>{"x"});
  w.set_attribute("meshes/E", "gridSpacing", std::vector<double>{1.0});
  w.set_attribute("meshes/E", "gridGlobalOffset", std::vector<double>{0.0});
  w.set_attribute("meshes/E", "gridUnitSI", 1.0);
  w.set_attribute("meshes/E", "unitDimension", std::vector<double>(7, 0.0), "ARR_DBL_7");
  w.set_attribute("meshes/E", "timeOffset", 0.0, "FLOAT");
  w.set_attribute("meshes/E/x", "unitSI", 1.0);
  w.set_attribute("meshes/E/x", "position", std::vector<double>{0.0});
}
enum class Reader { kNativeView, kNativeCopy, kOpenPmdLoad };

std::atomic<int> stream_counter{0};

double fill_value(std::int64_t step) { return static_cast<double>(step) + 0.5; }

// Writes `steps` steps of `elements` doubles to `name` with `writer`.
void write_steps(const std::string& address, const std::string& name, Writer writer,
                 std::uint64_t elements, int steps) {
  std::vector<double> buffer(elements);
  const std::uint64_t global[] = {elements}, offset[] = {0};
  if (writer == Writer::kNativePut || writer == Writer::kNativeLoan) {
    slipstream::ClientOptions options;
    options.address = address;
    slipstream::StreamWriterOptions writer_options;
    writer_options.expected_groups = 1;
    slipstream::StreamWriter w(options, name, 0, 1, writer_options);
    for (std::int64_t step = 0; step < steps; ++step) {
      w.begin_step(step);
      if (native_with_attributes) set_standard_attributes(w, step);
      if (writer == Writer::kNativePut) {
        std::fill(buffer.begin(), buffer.end(), fill_value(step));
        w.put_chunk<double>("meshes/E/x", global, offset, global, buffer);
      } else {
        std::span<double> region = w.loan_chunk<double>("meshes/E/x", global, offset, global);
        std::fill(region.begin(), region.end(), fill_value(step));
      }
      w.end_step();
    }
    w.close();
    return;
  }
  openPMD::Series series(name + ".sst", openPMD::Access::CREATE,
                         R"({"slipstream": {"address": ")" + address + R"("}})");
  for (std::int64_t step = 0; step < steps; ++step) {
    openPMD::Iteration iteration = series.writeIterations()[static_cast<std::uint64_t>(step)];
    openPMD::MeshRecordComponent e = iteration.meshes["E"]["x"];
    e.resetDataset(openPMD::Dataset(openPMD::Datatype::DOUBLE, {elements}));
    if (writer == Writer::kOpenPmdStore) {
      std::fill(buffer.begin(), buffer.end(), fill_value(step));
      e.storeChunkRaw(buffer.data(), {0}, {elements});
    } else {
      auto span = e.storeChunk<double>({0}, {elements}).currentBuffer();
      std::fill(span.begin(), span.end(), fill_value(step));
    }
    iteration.close();
  }
  series.close();
}

// Reads every step of `name` with `reader`; returns how many, and checks every sum.
int read_steps(const std::string& address, const std::string& name, Reader reader,
               std::uint64_t elements) {
  int seen = 0;
  auto check = [&](const double* data, std::int64_t step) {
    const double sum = std::accumulate(data, data + elements, 0.0);
    if (sum != fill_value(step) * static_cast<double>(elements)) {
      throw std::runtime_error("step " + std::to_string(step) + ": wrong sum");
    }
    ++seen;
  };
  if (reader == Reader::kOpenPmdLoad) {
    openPMD::Series series(name + ".sst", openPMD::Access::READ_LINEAR,
                           R"({"slipstream": {"address": ")" + address + R"("}})");
    // One buffer for every step (openPMD's loadChunk into the caller's shared_ptr), as the
    // native reader that copies out keeps one: a new 1 MiB buffer a step would add the kernel's
    // page faults to the layer's figure.
    std::shared_ptr<double> data(new double[elements], std::default_delete<double[]>());
    for (openPMD::IndexedIteration iteration : series.readIterations()) {
      iteration.meshes["E"]["x"].loadChunk(data, {0}, {elements});
      iteration.close();
      check(data.get(), static_cast<std::int64_t>(iteration.iterationIndex));
    }
    return seen;
  }
  slipstream::ClientOptions options;
  options.address = address;
  slipstream::StreamReaderOptions reader_options;
  reader_options.strategy = "roundrobin";
  slipstream::StreamReader r(options, name, "bench", 0, 1, reader_options);
  std::vector<double> copy(elements);
  for (;;) {
    slipstream::StreamNext next = r.next_step();
    if (next.kind == slipstream::StreamNext::Kind::kEnd) break;
    if (next.kind != slipstream::StreamNext::Kind::kStep) throw std::runtime_error("no step");
    std::vector<slipstream::StreamPiece> pieces = next.step->load("meshes/E/x");
    const double* data = pieces.at(0).as<double>().data();
    if (reader == Reader::kNativeCopy) {
      std::memcpy(copy.data(), data, elements * sizeof(double));
      next.step->release();
      check(copy.data(), next.step->number());
    } else {
      check(data, next.step->number());
      next.step->release();
    }
  }
  return seen;
}

int reader_cpu = -1;  // Settings::reader_cpu

// Pins the calling thread to `cpu`.
void pin_to_cpu(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  sched_setaffinity(0, sizeof(set), &set);
}

// CPU seconds the calling thread has used: user and system.
struct CpuSeconds {
  double user = 0, system = 0;
  CpuSeconds operator-(const CpuSeconds& o) const { return {user - o.user, system - o.system}; }
};
CpuSeconds thread_cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6;
  };
  return {seconds(usage.ru_utime), seconds(usage.ru_stime)};
}
// The CPU seconds of the writer and of the reader thread in the last steps_per_second run.
CpuSeconds writer_cpu_seconds, reader_cpu_seconds;

double steps_per_second(const std::string& address, Writer writer, Reader reader,
                        std::uint64_t elements, int steps) {
  const std::string name = "openpmd_bench_" + std::to_string(stream_counter++);
  std::atomic<bool> reader_failed{false};
  std::string reader_error;
  const auto start = Clock::now();
  int seen = 0;
  std::thread reading([&] {
    if (reader_cpu >= 0) pin_to_cpu(reader_cpu);
    const CpuSeconds cpu = thread_cpu_seconds();
    try {
      seen = read_steps(address, name, reader, elements);
    } catch (const std::exception& e) {
      reader_error = e.what();
      reader_failed = true;
    }
    reader_cpu_seconds = thread_cpu_seconds() - cpu;
  });
  const CpuSeconds cpu = thread_cpu_seconds();
  write_steps(address, name, writer, elements, steps);
  writer_cpu_seconds = thread_cpu_seconds() - cpu;
  reading.join();
  if (reader_failed) throw std::runtime_error("reader: " + reader_error);
  if (seen != steps) throw std::runtime_error("the reader saw " + std::to_string(seen) + " steps");
  return steps / std::chrono::duration<double>(Clock::now() - start).count();
}

// (seconds to write, seconds to read) of `iterations` iterations of `elements` doubles through
// the openPMD layer's HDF5 backend.
std::pair<double, double> layer_file_seconds(const std::string& path, std::uint64_t elements,
                                             int iterations) {
  std::vector<double> data(elements, 1.25);
  auto start = Clock::now();
  {
    openPMD::Series series(path, openPMD::Access::CREATE);
    for (int i = 0; i < iterations; ++i) {
      openPMD::Iteration it = series.writeIterations()[static_cast<std::uint64_t>(i)];
      openPMD::MeshRecordComponent e = it.meshes["E"]["x"];
      e.resetDataset(openPMD::Dataset(openPMD::Datatype::DOUBLE, {elements}));
      e.storeChunkRaw(data.data(), {0}, {elements});
      it.close();
    }
  }
  const double write = std::chrono::duration<double>(Clock::now() - start).count();
  start = Clock::now();
  double sum = 0;
  {
    openPMD::Series series(path, openPMD::Access::READ_ONLY);
    for (auto& [index, it] : series.iterations) {
      auto values = it.meshes["E"]["x"].loadChunk<double>();
      it.close();
      sum += values.get()[elements - 1];
    }
  }
  const double read = std::chrono::duration<double>(Clock::now() - start).count();
  if (sum != 1.25 * iterations) throw std::runtime_error("the file read back wrong");
  return {write, read};
}

// The same with h5py: the seconds python3 prints.
std::pair<double, double> h5py_file_seconds(const std::string& path, std::uint64_t elements,
                                            int iterations) {
  const std::string script =
      "import time, sys, h5py, numpy as np\n"
      "n, k, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]\n"
      "data = np.full(n, 1.25)\n"
      "t = time.perf_counter()\n"
      "with h5py.File(path, 'w') as f:\n"
      "    root = {'openPMD': '1.1.0', 'openPMDextension': np.uint32(0), 'basePath': '/data/%T/',\n"
      "            'iterationEncoding': 'groupBased', 'iterationFormat': '/data/%T/',\n"
      "            'meshesPath': 'meshes/', 'software': 'h5py', 'softwareVersion': '3',\n"
      "            'date': '2026-01-01 00:00:00 +0000'}\n"
      "    for name, value in root.items(): f.attrs[name] = value\n"
      "    for i in range(k):\n"
      "        it = f.create_group(f'data/{i}')\n"
      "        it.attrs.update({'time': 0.0, 'dt': 1.0, 'timeUnitSI': 1.0})\n"
      "        e = it.create_group('meshes/E')\n"
      "        e.attrs.update({'geometry': 'cartesian', 'dataOrder': 'C', 'axisLabels': [b'x'],\n"
      "                        'gridSpacing': [1.0], 'gridGlobalOffset': [0.0], 'gridUnitSI': 1.0,\n"
      "                        'unitDimension': np.zeros(7), 'timeOffset': np.float32(0)})\n"
      "        x = e.create_dataset('x', data=data)\n"
      "        x.attrs.update({'unitSI': 1.0, 'position': [0.0]})\n"
      "w = time.perf_counter() - t\n"
      "t = time.perf_counter()\n"
      "s = 0.0\n"
      "with h5py.File(path, 'r') as f:\n"
      "    for i in range(k):\n"
      "        s += f[f'data/{i}/meshes/E/x'][()][-1]\n"
      "r = time.perf_counter() - t\n"
      "assert s == 1.25 * k\n"
      "print(w, r)\n";
  const std::string command = "/usr/bin/python3 -c \"$BENCH_SCRIPT\" " + std::to_string(elements) +
                              " " + std::to_string(iterations) + " " + path;
  setenv("BENCH_SCRIPT", script.c_str(), 1);
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) throw std::runtime_error("cannot run python3");
  double write = 0, read = 0;
  const int got = std::fscanf(pipe, "%lf %lf", &write, &read);
  if (pclose(pipe) != 0 || got != 2) throw std::runtime_error("the h5py script failed");
  return {write, read};
}


}  // namespace

int main(int argc, char** argv) {
  Settings settings;
  CLI::App app{"openPMD layer overhead against the native stream API, and HDF5 files against h5py"};
  app.add_option("--sizes", settings.sizes_mib, "step sizes in MiB")->delimiter(',');
  app.add_option("--steps", settings.steps, "steps per measurement");
  app.add_option("--rounds", settings.rounds, "measurements per figure (median)");
  app.add_option("--file-iterations", settings.file_iterations, "iterations per file");
  app.add_option("--slipstream", settings.slipstream_binary, "the slipstream program");
  app.add_option("--reader-cpu", settings.reader_cpu,
                 "the CPU of the reader thread (default: the writer's, CPU 0)");
  app.add_option("--only", settings.only,
                 "run one variant (native, attributes or layer; copy in, copy out) and exit");
  CLI11_PARSE(app, argc, argv);
  reader_cpu = settings.reader_cpu;

  const bool two_cpus = std::thread::hardware_concurrency() >= 2;
  slipstream::bench::ServerChild server(
      "slipstream",
      [&](const slipstream::bench::Listen& listen) {
        std::vector<std::string> args;
        if (two_cpus) args = {"taskset", "-c", "1"};
        for (const std::string& a :
             {settings.slipstream_binary, std::string("server"), std::string("--port"),
              std::string("0"), std::string("--unixsocket"), listen.socket, std::string("--dir"),
              listen.dir, std::string("--loglevel"), std::string("warn")}) {
          args.push_back(a);
        }
        return args;
      },
      [](const slipstream::bench::Listen& listen) {
        return slipstream::bench::unix_socket_accepts(listen.socket);
      });
  if (two_cpus) pin_to_cpu(0);
  const std::string address = "unix://" + server.socket();
  if (!settings.only.empty()) {
    const std::uint64_t elements =
        (static_cast<std::uint64_t>(settings.sizes_mib.front()) << 20) / sizeof(double);
    native_with_attributes = settings.only == "attributes";
    const double rate =
        settings.only == "layer"
            ? steps_per_second(address, Writer::kOpenPmdStore, Reader::kOpenPmdLoad, elements,
                               settings.steps)
            : steps_per_second(address, Writer::kNativePut, Reader::kNativeCopy, elements,
                               settings.steps);
    auto per_step = [&](const CpuSeconds& cpu) {
      return format_number(cpu.user * 1e6 / settings.steps) + " us user + " +
             format_number(cpu.system * 1e6 / settings.steps) + " us system";
    };
    std::cout << settings.only << ": " << format_number(rate) << " steps/s; CPU per step: writer "
              << per_step(writer_cpu_seconds) << ", reader " << per_step(reader_cpu_seconds)
              << "\n";
    return 0;
  }

  std::cout << "openpmd_bench: " << slipstream::bench::command_line(argc, argv) << "\n"
            << slipstream::bench::cpu_model() << "; load average before: "
            << slipstream::bench::load_average() << "\n\n"
            << "Streams (1 writer thread, 1 reader thread, Unix socket with shared memory), steps/s,"
            << " median of " << settings.rounds << " rounds of " << settings.steps << " steps:\n"
            << "| size | writer / reader | native | native + openPMD's attributes | openPMD layer |"
               " layer / native | layer / native + attributes |\n"
            << "|---|---|---|---|---|---|---|\n";
  struct Pair {
    const char* label;
    Writer native_writer;
    Reader native_reader;
    Writer layer_writer;
  };
  const Pair pairs[] = {
      {"copy in (put_chunk / storeChunk), view out", Writer::kNativePut, Reader::kNativeView,
       Writer::kOpenPmdStore},
      {"copy in, copy out (native copies its view)", Writer::kNativePut, Reader::kNativeCopy,
       Writer::kOpenPmdStore},
      {"in place (loan_chunk / span), view out", Writer::kNativeLoan, Reader::kNativeView,
       Writer::kOpenPmdSpan},
      {"in place, copy out", Writer::kNativeLoan, Reader::kNativeCopy, Writer::kOpenPmdSpan},
  };
  for (int mib : settings.sizes_mib) {
    const std::uint64_t elements = (static_cast<std::uint64_t>(mib) << 20) / sizeof(double);
    for (const Pair& pair : pairs) {
      std::vector<double> native, attributed, layer, ratio, attributed_ratio;
      for (int round = 0; round < settings.rounds; ++round) {
        native_with_attributes = false;
        native.push_back(steps_per_second(address, pair.native_writer, pair.native_reader,
                                          elements, settings.steps));
        native_with_attributes = true;
        attributed.push_back(steps_per_second(address, pair.native_writer, pair.native_reader,
                                              elements, settings.steps));
        layer.push_back(steps_per_second(address, pair.layer_writer, Reader::kOpenPmdLoad,
                                         elements, settings.steps));
        ratio.push_back(layer.back() / native.back());
        attributed_ratio.push_back(layer.back() / attributed.back());
      }
      std::cout << "| " << mib << " MiB | " << pair.label << " | " << format_number(median(native))
                << " | " << format_number(median(attributed)) << " | "
                << format_number(median(layer)) << " | " << format_number(median(ratio)) << " | "
                << format_number(median(attributed_ratio)) << " |\n";
    }
  }

  std::cout << "\nHDF5 files (" << settings.file_iterations
            << " iterations of one float64 dataset), MB/s, median of " << settings.rounds
            << " rounds:\n"
            << "| size | operation | h5py | openPMD layer | layer / h5py |\n|---|---|---|---|---|\n";
  slipstream::bench::TempDir files("openpmd-bench");
  for (int mib : settings.sizes_mib) {
    const std::uint64_t elements = (static_cast<std::uint64_t>(mib) << 20) / sizeof(double);
    const double megabytes = static_cast<double>(mib) * 1.048576 * settings.file_iterations;
    std::vector<double> hw, hr, lw, lr, wr, rr;
    for (int round = 0; round < settings.rounds; ++round) {
      auto [h_write, h_read] = h5py_file_seconds(files.path() + "/h5py.h5", elements,
                                                 settings.file_iterations);
      auto [l_write, l_read] = layer_file_seconds(files.path() + "/layer.h5", elements,
                                                  settings.file_iterations);
      hw.push_back(megabytes / h_write);
      hr.push_back(megabytes / h_read);
      lw.push_back(megabytes / l_write);
      lr.push_back(megabytes / l_read);
      wr.push_back(h_write / l_write);
      rr.push_back(h_read / l_read);
    }
    std::cout << "| " << mib << " MiB | write | " << format_number(median(hw)) << " | "
              << format_number(median(lw)) << " | " << format_number(median(wr)) << " |\n"
              << "| " << mib << " MiB | read | " << format_number(median(hr)) << " | "
              << format_number(median(lr)) << " | " << format_number(median(rr)) << " |\n";
  }
  std::cout << "\nload average after: " << slipstream::bench::load_average() << "\n";
  return 0;
}
