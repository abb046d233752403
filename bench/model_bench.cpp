// Benchmark: the EKE-shaped MLP (4 features in, 1 value out per cell) served by `slipstream server`
// over its Unix socket, against the same TorchScript file run in-process with LocalModel, in one
// run. Prints Markdown tables: latency and throughput per batch of cells, and 8 concurrent callers
// of 64 cells each with server-side batching on (BATCHSIZE 512) and off.
//
// The server path is the call a simulation makes every step: Client::run_model_on, which sends the
// inputs, runs the model and fetches the outputs in one round trip. `run_model` alone (inputs
// already stored, outputs left on the server) is shown beside it. The in-process path is
// LocalModel::run into the caller's output buffer. Each repetition runs every cell once, in turn
// (interleaved, so drifts in machine load hit all alike); figures are medians over repetitions. A
// benchmark, not a test: it never fails on a figure.
//
// Two anchors run in the same repetitions: a bare round trip of one byte over a Unix socketpair
// between this process and a forked child (the floor any server call pays, twice over for a
// sandboxed run: client to server, server to its model worker), and a PING to the server (one
// round trip plus command parsing and dispatch, no model).
//
// The same model exported to ONNX (torch.onnx.export, opset 17) and stored with backend ONNX
// (lowered to TorchScript when stored) runs in the same repetitions, on the server and in
// process: its table gives ONNX's latency beside TorchScript's and their ratio, and the time a
// store of each takes (median of 5 stores of the model's bytes).
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench_support.hpp"
#include "slipstream/client.hpp"
#include "slipstream/local_model.hpp"

#ifndef SLIPSTREAM_BINARY
#error "SLIPSTREAM_BINARY must name the slipstream executable"
#endif

namespace {

using slipstream::Client;
using slipstream::bench::Clock;
using slipstream::bench::cpu_model;
using slipstream::bench::format_number;
using slipstream::bench::Listen;
using slipstream::bench::load_average;
using slipstream::bench::percentile;
using slipstream::bench::read_file;
using slipstream::bench::ServerChild;
using slipstream::bench::TempDir;

// The same model as tests/client/client_model_test.cpp: Linear(4, 8) + ReLU + Linear(8, 1).
constexpr const char* kMakeModel = R"PY(
import sys, torch
class Eke(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = torch.nn.Linear(4, 8)
        self.output = torch.nn.Linear(8, 1)
    def forward(self, x):
        return self.output(torch.relu(self.hidden(x)))
m = Eke()
with torch.no_grad():
    for o in range(8):
        m.hidden.bias[o] = ((o % 3) - 1) * 0.125
        for i in range(4):
            m.hidden.weight[o, i] = (((o * 4 + i) % 7) - 3) * 0.25
        m.output.weight[0, o] = ((o % 5) - 2) * 0.5
    m.output.bias[0] = 0.375
torch.jit.save(torch.jit.script(m), sys.argv[1])
torch.onnx.export(m, torch.zeros(1, 4), sys.argv[2], opset_version=17, input_names=["x"],
                  output_names=["y"], dynamic_axes={"x": {0: "cells"}, "y": {0: "cells"}})
)PY";

/// Writes the EKE model with Debian's python3-torch (/usr/bin/python3, whatever python3 is first
/// on PATH), as TorchScript and as ONNX, and returns the TorchScript file's path (the ONNX one
/// is beside it: eke.onnx).
std::string make_model(const TempDir& dir) {
  const std::string script = dir.path() + "/make_model.py", model = dir.path() + "/eke.pt";
  std::ofstream(script) << kMakeModel;
  const std::string command = "/usr/bin/python3 " + script + " " + model + " " + dir.path() +
                              "/eke.onnx > " + dir.path() + "/python.log 2>&1";
  if (std::system(command.c_str()) != 0) {
    throw std::runtime_error(
        "/usr/bin/python3 could not write the model (python3-torch "
        "installed?): " +
        read_file(dir.path() + "/python.log"));
  }
  return model;
}

/// `slipstream server` on a Unix socket only (port 0), with `extra` arguments appended; ready once
/// a Client connects.
std::unique_ptr<ServerChild> start_server(const std::string& binary,
                                          const std::vector<std::string>& extra) {
  return std::make_unique<ServerChild>(
      "slipstream server",
      [&](const Listen& listen) {
        std::vector<std::string> args = {binary,         "server",      "--port", "0",
                                         "--unixsocket", listen.socket, "--dir",  listen.dir,
                                         "--loglevel",   "warn"};
        args.insert(args.end(), extra.begin(), extra.end());
        return args;
      },
      [](const Listen& listen) {
        try {
          Client probe("unix://" + listen.socket);
          return true;
        } catch (const slipstream::Error&) {
          return false;
        }
      });
}

struct Settings {
  double seconds = 0.8;  // measured time of one run of one cell
  int repetitions = 5;
  int min_calls = 3;
};

/// Figures of one run, or the median of several.
struct Figures {
  double calls_per_second = 0;
  double p50_us = 0;
};

/// Runs `call(thread)` back to back on `threads` threads for settings.seconds (and at least
/// min_calls times per thread). `call` must be safe to run concurrently with other threads'.
Figures measure(int threads, const Settings& settings, const std::function<void(int)>& call) {
  slipstream::bench::ConcurrentRun run =
      slipstream::bench::run_concurrently(threads, settings.seconds, settings.min_calls, call);
  return {static_cast<double>(run.latencies.size()) / run.seconds,
          percentile(slipstream::bench::count_in<std::micro>(run.latencies), 0.5)};
}

Figures median_of(const std::vector<Figures>& runs) {
  std::vector<double> rates, p50s;
  for (const auto& run : runs) {
    rates.push_back(run.calls_per_second);
    p50s.push_back(run.p50_us);
  }
  return {percentile(rates, 0.5), percentile(p50s, 0.5)};
}

/// One caller's inputs and output buffer for a batch of `cells`.
struct Batch {
  std::int64_t cells;
  std::vector<float> x, y;
  std::vector<std::int64_t> x_shape, y_shape;
  explicit Batch(std::int64_t n, int seed)
      : cells(n),
        x(static_cast<std::size_t>(n) * 4),
        y(static_cast<std::size_t>(n)),
        x_shape{n, 4},
        y_shape{n, 1} {
    for (std::size_t k = 0; k < x.size(); ++k) {
      x[k] = static_cast<float>(static_cast<int>((k * 37 + seed * 101) % 41) - 20) / 8.0f;
    }
  }
};

enum Method { kLocal, kServerOn, kServerRun, kOnnxLocal, kOnnxServerOn, kMethods };

/// A forked child that echoes every byte it reads on one end of a socketpair, until it is closed.
class EchoChild {
 public:
  EchoChild() {
    int ends[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0) {
      throw std::runtime_error("socketpair failed");
    }
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {  // only async-signal-safe calls from here: the parent has threads
      ::close(ends[0]);
      char byte[64];
      while (true) {
        const ssize_t n = ::read(ends[1], byte, sizeof byte);
        if (n <= 0 || ::write(ends[1], byte, static_cast<std::size_t>(n)) != n) ::_exit(0);
      }
    }
    ::close(ends[1]);
    fd_ = ends[0];
  }
  ~EchoChild() {
    ::close(fd_);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
  EchoChild(const EchoChild&) = delete;
  EchoChild& operator=(const EchoChild&) = delete;

  /// One byte there and back.
  void round_trip() const {
    char byte = 1;
    if (::write(fd_, &byte, 1) != 1 || ::read(fd_, &byte, 1) != 1) {
      throw std::runtime_error("the echo child is gone");
    }
  }

 private:
  pid_t pid_ = -1;
  int fd_ = -1;
};

enum Anchor { kSocketPair, kPing, kAnchors };

// A field of /proc/<pid>/status in KiB ("RssAnon", "RssShmem", "VmRSS"); 0 when unreadable.
std::int64_t status_kib(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with(field + ":")) return std::atoll(line.c_str() + field.size() + 1);
  }
  return 0;
}

// The children of `parent` (a server's model workers), from each process's PPid.
std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> children;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const auto pid = static_cast<pid_t>(std::atoi(name.c_str()));
    if (status_kib(pid, "PPid") == parent) children.push_back(pid);
  }
  return children;
}

// Peaks of memory while something runs, sampled every millisecond by a thread of its own.
class MemorySampler {
 public:
  MemorySampler(pid_t server) : server_(server), thread_([this] { loop(); }) {}
  ~MemorySampler() {
    stop_ = true;
    thread_.join();
  }
  MemorySampler(const MemorySampler&) = delete;
  MemorySampler& operator=(const MemorySampler&) = delete;
  // Peaks in KiB: the workers' private (anonymous) pages, their shared-memory pages, the
  // server's whole RSS.
  std::int64_t worker_anon = 0, worker_shmem = 0, server_rss = 0;

 private:
  void loop() {
    while (!stop_) {
      server_rss = std::max(server_rss, status_kib(server_, "VmRSS"));
      for (pid_t worker : children_of(server_)) {
        worker_anon = std::max(worker_anon, status_kib(worker, "RssAnon"));
        worker_shmem = std::max(worker_shmem, status_kib(worker, "RssShmem"));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  pid_t server_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// Issue 32, on two servers side by side: one whose model workers meet it in a control block and
// get inputs mapped and give outputs back as files (the default), one that copies everything
// through the worker's socket (--model-shared-memory no). First small runs, then a large input
// stored in shared memory, summed by a script in the sandboxed worker
// (input only) and doubled (an output as large), on a server whose workers get inputs mapped and
// give outputs back as files (the default) and one that copies both through the socket
// (--model-shared-memory no), runs interleaved. Prints latency medians and the memory peaks of
// the sum sampled during the runs, against the same peaks sampled while idle.
void shared_memory_tables(const std::string& binary, const std::vector<std::string>& server_args,
                          std::int64_t mib, const std::string& model, const Settings& settings) {
  const int repetitions = settings.repetitions;
  const std::int64_t values = mib * (1 << 20) / 4;
  std::vector<float> input(static_cast<std::size_t>(values));
  for (std::size_t i = 0; i < input.size(); ++i) input[i] = static_cast<float>(i % 7);
  const std::vector<std::int64_t> shape = {values};
  const char* source =
      "def total(x):\n    return x.sum().reshape(1)\n\n"
      "def twice(x):\n    return x * 2.0\n";
  struct Side {
    const char* name;
    std::unique_ptr<ServerChild> server;
    std::unique_ptr<Client> client;
    std::vector<double> sum_ms, twice_ms;
    std::int64_t idle_anon = 0, idle_rss = 0;
    std::int64_t anon = 0, shmem = 0, rss = 0;
  };
  Side sides[2] = {{"in shared memory (default)"}, {"copied (--model-shared-memory no)"}};
  for (int k = 0; k < 2; ++k) {
    std::vector<std::string> args = server_args;
    args.insert(args.end(), {"--model-shared-memory", k == 0 ? "yes" : "no",
                             "--executor-threads", "1"});
    sides[k].server = start_server(binary, args);
    sides[k].client = std::make_unique<Client>("unix://" + sides[k].server->socket());
    sides[k].client->set_script("large", "CPU", source);
    sides[k].client->put_tensor<float>("big", input, shape);  // through shared memory (>= 16 MiB)
    sides[k].client->run_script("large", "total", {"big"}, {"big_sum"});  // workers started
    sides[k].client->set_model("eke", model);
  }
  // Small runs (AI.MODELEXECUTE of stored inputs, outputs left on the server): the call as the
  // caller sees it, and from the model's statistics (AI.INFO) the time in the backend (the hop
  // to the worker and back, and the run) and in the executor's queue, per call.
  const std::vector<std::int64_t> small_cells = {1, 64};
  struct SmallRun {
    std::vector<double> p50, backend, queue;
  };
  SmallRun small[2][2];  // [side][cells]
  for (Side& side : sides) {
    for (std::int64_t cells : small_cells) {
      Batch b(cells, 1);
      side.client->put_tensor<float>("x" + std::to_string(cells), b.x, b.x_shape);
    }
  }
  for (int r = 0; r < repetitions; ++r) {
    for (std::size_t c = 0; c < small_cells.size(); ++c) {
      for (int k = 0; k < 2; ++k) {
        Client& client = *sides[k].client;
        const std::string x = "x" + std::to_string(small_cells[c]);
        const std::string y = "y" + std::to_string(small_cells[c]);
        const slipstream::ModelInfo before = client.model_info("eke");
        const Figures f = measure(1, settings, [&](int) { client.run_model("eke", {x}, {y}); });
        const slipstream::ModelInfo after = client.model_info("eke");
        const double calls = static_cast<double>(std::max<std::int64_t>(1, after.calls - before.calls));
        small[k][c].p50.push_back(f.p50_us);
        small[k][c].backend.push_back(static_cast<double>(after.run_time_us - before.run_time_us) /
                                      calls);
        small[k][c].queue.push_back(
            static_cast<double>(after.queue_wait_us - before.queue_wait_us) / calls);
      }
    }
  }
  std::printf("\nSmall runs, model tensors between server and worker in shared memory against "
              "copied (run_model of stored inputs, %d repetitions interleaved, medians; backend = "
              "the server's time from handing the run to the worker to its outputs, queue = the "
              "executor's queue, per call, from AI.INFO):\n\n",
              repetitions);
  std::printf("| cells | tensors | run_model p50 us | backend us per call | queue us per call |\n");
  std::printf("|---:|---|---:|---:|---:|\n");
  for (std::size_t c = 0; c < small_cells.size(); ++c) {
    for (int k = 0; k < 2; ++k) {
      std::printf("| %lld | %s | %s | %s | %s |\n", static_cast<long long>(small_cells[c]),
                  sides[k].name, format_number(percentile(small[k][c].p50, 0.5)).c_str(),
                  format_number(percentile(small[k][c].backend, 0.5)).c_str(),
                  format_number(percentile(small[k][c].queue, 0.5)).c_str());
    }
  }
  for (Side& side : sides) {  // idle peaks over 200 ms
    MemorySampler idle(side.server->pid());
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    side.idle_anon = idle.worker_anon;
    side.idle_rss = idle.server_rss;
  }
  const auto timed = [](const std::function<void()>& call) {
    const auto start = Clock::now();
    call();
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  };
  for (int r = 0; r < std::max(repetitions, 3) * 2; ++r) {
    for (Side& side : sides) {
      {
        MemorySampler busy(side.server->pid());
        side.sum_ms.push_back(
            timed([&] { side.client->run_script("large", "total", {"big"}, {"big_sum"}); }));
        std::this_thread::sleep_for(std::chrono::milliseconds(3));  // a last sample
        side.anon = std::max(side.anon, busy.worker_anon);
        side.shmem = std::max(side.shmem, busy.worker_shmem);
        side.rss = std::max(side.rss, busy.server_rss);
      }
      side.twice_ms.push_back(
          timed([&] { side.client->run_script("large", "twice", {"big"}, {"big_twice"}); }));
    }
  }
  std::printf("\nA %lld MiB input in shared memory, run_script in the worker (%zu runs each, "
              "interleaved): sum (a 4-byte output) and x * 2 (a %lld MiB output); memory peaks "
              "of the sum runs, sampled every ms, in MiB:\n\n",
              static_cast<long long>(mib), sides[0].sum_ms.size(), static_cast<long long>(mib));
  std::printf("| tensors between server and worker | sum p50 ms | x * 2 p50 ms | worker private "
              "(anon) peak, idle -> running | worker shared-memory pages peak | server RSS "
              "peak, idle -> running |\n");
  std::printf("|---|---:|---:|---|---:|---|\n");
  for (const Side& side : sides) {
    std::printf("| %s | %s | %s | %.1f -> %.1f | %.1f | %.1f -> %.1f |\n", side.name,
                format_number(percentile(side.sum_ms, 0.5)).c_str(),
                format_number(percentile(side.twice_ms, 0.5)).c_str(), side.idle_anon / 1024.0,
                side.anon / 1024.0, side.shmem / 1024.0, side.idle_rss / 1024.0,
                side.rss / 1024.0);
  }
  std::printf("\nRatios of p50 (copied / shared memory): sum %.2fx, x * 2 %.2fx\n",
              percentile(sides[1].sum_ms, 0.5) / percentile(sides[0].sum_ms, 0.5),
              percentile(sides[1].twice_ms, 0.5) / percentile(sides[0].twice_ms, 0.5));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"EKE MLP: slipstream server (Unix socket) against in-process LocalModel"};
  Settings settings;
  bool quick = false;
  std::vector<std::int64_t> batches = {1, 64, 4096, 65536};
  int callers = 8;
  std::int64_t caller_cells = 64;
  std::int64_t batch_size = 512;
  std::string binary = SLIPSTREAM_BINARY;
  std::vector<std::string> server_args;
  app.add_option("--seconds", settings.seconds, "Measured seconds per run of one cell")
      ->check(CLI::PositiveNumber);
  app.add_option("--repetitions", settings.repetitions, "Interleaved runs; figures are medians")
      ->check(CLI::PositiveNumber);
  app.add_option("--cells", batches, "Batch sizes (cells per call) of the latency table");
  app.add_option("--callers", callers, "Concurrent callers of the batching table")
      ->check(CLI::PositiveNumber);
  app.add_option("--caller-cells", caller_cells, "Cells per call of each concurrent caller")
      ->check(CLI::PositiveNumber);
  app.add_option("--batchsize", batch_size, "BATCHSIZE of the batching model")
      ->check(CLI::PositiveNumber);
  std::int64_t large_mib = 64;
  app.add_option("--large-input-mib", large_mib,
                 "MiB of the large-tensor table (shared memory against copies between the "
                 "server and its model workers; 0: skipped)")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--quick", quick, "A very short run (1 repetition of 0.05 s): checks, not figures");
  app.add_option("--slipstream", binary, "slipstream executable");
  app.add_option("--server-arg", server_args,
                 "Extra server argument (repeatable), e.g. --server-arg=--executor-threads=4");
  CLI11_PARSE(app, argc, argv);
  if (quick) {
    settings.seconds = 0.05;
    settings.repetitions = 1;
    settings.min_calls = 1;
  }
  ::signal(SIGPIPE, SIG_IGN);

  try {
    TempDir dir("slipstream-model-bench");
    const std::string model_path = make_model(dir);
    const std::string model = read_file(model_path);
    const std::unique_ptr<ServerChild> server = start_server(binary, server_args);
    const std::string address = "unix://" + server->socket();
    const auto local = slipstream::LocalModel::from_file(model_path, "CPU");
    const std::string onnx_path = dir.path() + "/eke.onnx";
    const std::string onnx_model = read_file(onnx_path);
    const auto local_onnx = slipstream::LocalModel::from_file(onnx_path, "CPU");

    Client client(address);
    // Store times: 5 stores of each form of the model, medians.
    std::vector<double> store_ms[2];
    for (int k = 0; k < 5; ++k) {
      for (int onnx = 0; onnx < 2; ++onnx) {
        const auto start = Clock::now();
        client.set_model("eke_store", onnx ? onnx_model : model, onnx ? "ONNX" : "TORCH");
        store_ms[onnx].push_back(
            std::chrono::duration<double, std::milli>(Clock::now() - start).count());
      }
    }
    client.set_model("eke", model);
    client.set_model("eke_onnx", onnx_model, "ONNX");
    slipstream::ModelOptions batching;
    batching.batch_size = batch_size;
    client.set_model("eke_batched", model, "TORCH", "CPU", batching);

    // ---- Latency and throughput per batch of cells, one caller ----
    std::vector<Batch> inputs;
    for (std::int64_t cells : batches) {
      inputs.emplace_back(cells, static_cast<int>(cells));
      Batch& b = inputs.back();
      client.put_tensor<float>("x" + std::to_string(cells), b.x, b.x_shape);
    }
    auto run_cell = [&](std::size_t i, Method method) {
      Batch& b = inputs[i];
      const std::string x_name = "x" + std::to_string(b.cells),
                        y_name = "y" + std::to_string(b.cells);
      std::vector<slipstream::TensorRef> refs{
          slipstream::TensorRef::of<float>(x_name, b.x, b.x_shape)};
      switch (method) {
        case kLocal: {
          std::vector<slipstream::MutableTensorRef> out{
              slipstream::MutableTensorRef::of<float>(b.y, b.y_shape)};
          return measure(1, settings, [&](int) { local.run(refs, out); });
        }
        case kOnnxLocal: {
          std::vector<slipstream::MutableTensorRef> out{
              slipstream::MutableTensorRef::of<float>(b.y, b.y_shape)};
          return measure(1, settings, [&](int) { local_onnx.run(refs, out); });
        }
        case kServerOn:
        case kOnnxServerOn:
          return measure(1, settings, [&](int) {
            auto y = client.run_model_on(method == kOnnxServerOn ? "eke_onnx" : "eke", refs,
                                         {y_name});
            std::copy_n(y[0].data<float>().data(), b.y.size(), b.y.data());
          });
        default:
          return measure(1, settings, [&](int) { client.run_model("eke", {x_name}, {y_name}); });
      }
    };

    // ---- Concurrent callers, batching on and off, and in-process for reference ----
    std::vector<std::unique_ptr<Client>> caller_clients;
    std::vector<Batch> caller_inputs;
    for (int c = 0; c < callers; ++c) {
      caller_clients.push_back(std::make_unique<Client>(address));
      caller_inputs.emplace_back(caller_cells, 1000 + c);
    }
    enum Concurrent { kUnbatched, kBatched, kLocalThreads, kConcurrent };
    auto run_concurrent = [&](Concurrent which) {
      return measure(callers, settings, [&](int c) {
        Batch& b = caller_inputs[c];
        const std::string x_name = "cx" + std::to_string(c), y_name = "cy" + std::to_string(c);
        std::vector<slipstream::TensorRef> refs{
            slipstream::TensorRef::of<float>(x_name, b.x, b.x_shape)};
        if (which == kLocalThreads) {
          std::vector<slipstream::MutableTensorRef> out{
              slipstream::MutableTensorRef::of<float>(b.y, b.y_shape)};
          local.run(refs, out);
          return;
        }
        auto y = caller_clients[c]->run_model_on(which == kBatched ? "eke_batched" : "eke", refs,
                                                 {y_name});
        std::copy_n(y[0].data<float>().data(), b.y.size(), b.y.data());
      });
    };

    const EchoChild echo;
    auto run_anchor = [&](Anchor anchor) {
      if (anchor == kSocketPair) return measure(1, settings, [&](int) { echo.round_trip(); });
      return measure(1, settings, [&](int) { client.command({"PING"}); });
    };

    const std::string load_at_start = load_average();
    const auto started = Clock::now();
    std::vector<std::vector<Figures>> anchor_runs(kAnchors);
    std::vector<std::vector<std::vector<Figures>>> cell_runs(
        batches.size(), std::vector<std::vector<Figures>>(kMethods));
    std::vector<std::vector<Figures>> concurrent_runs(kConcurrent);
    std::vector<double> mean_batch;
    Settings warm_up = settings;
    warm_up.seconds = std::min(settings.seconds, 0.05);
    warm_up.min_calls = 1;
    for (int rep = -1; rep < settings.repetitions; ++rep) {  // rep -1: unmeasured warm-up
      const Settings saved = settings;
      if (rep < 0) settings = warm_up;
      for (int a = 0; a < kAnchors; ++a) {
        Figures f = run_anchor(static_cast<Anchor>(a));
        if (rep >= 0) anchor_runs[a].push_back(f);
      }
      for (std::size_t i = 0; i < batches.size(); ++i) {
        for (int m = 0; m < kMethods; ++m) {
          Figures f = run_cell(i, static_cast<Method>(m));
          if (rep >= 0) cell_runs[i][m].push_back(f);
        }
      }
      for (int k = 0; k < kConcurrent; ++k) {
        if (k == kBatched) client.reset_model_stats("eke_batched");
        Figures f = run_concurrent(static_cast<Concurrent>(k));
        if (k == kBatched && rep >= 0) {
          mean_batch.push_back(client.model_info("eke_batched").mean_batch_size);
        }
        if (rep >= 0) concurrent_runs[k].push_back(f);
      }
      settings = saved;
    }
    const double total_seconds = std::chrono::duration<double>(Clock::now() - started).count();
    const std::string load_at_end = load_average();

    // ---- Report ----
    std::string extra;
    for (const auto& arg : server_args) extra += " " + arg;
    std::printf("Machine: %s, %u hardware threads. Server: %s over its Unix socket%s%s.\n",
                cpu_model().c_str(), std::thread::hardware_concurrency(), binary.c_str(),
                extra.empty() ? "" : ", with", extra.c_str());
    std::printf(
        "%d repetitions of %.2f s per cell, medians; %.0f s in all. Load average %s at start, %s "
        "at end.\n\n",
        settings.repetitions, settings.seconds, total_seconds, load_at_start.c_str(),
        load_at_end.c_str());
    std::printf("One caller (latency p50 in us; throughput in cells/s):\n\n");
    std::printf(
        "| cells | in-process p50 | server run_model_on p50 | server run_model p50 | "
        "run_model_on - in-process | in-process cells/s | run_model_on cells/s | "
        "ratio (server/in-process, cells/s) |\n");
    std::printf("|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (std::size_t i = 0; i < batches.size(); ++i) {
      Figures local_f = median_of(cell_runs[i][kLocal]);
      Figures on = median_of(cell_runs[i][kServerOn]);
      Figures run = median_of(cell_runs[i][kServerRun]);
      const double cells = static_cast<double>(batches[i]);
      std::printf("| %lld | %s | %s | %s | %s | %s | %s | %.2fx |\n",
                  static_cast<long long>(batches[i]), format_number(local_f.p50_us).c_str(),
                  format_number(on.p50_us).c_str(), format_number(run.p50_us).c_str(),
                  format_number(on.p50_us - local_f.p50_us).c_str(),
                  format_number(local_f.calls_per_second * cells).c_str(),
                  format_number(on.calls_per_second * cells).c_str(),
                  on.calls_per_second / local_f.calls_per_second);
    }
    std::printf(
        "\nThe same model stored as ONNX (lowered to TorchScript when stored) against "
        "TorchScript (latency p50 in us):\n\n");
    std::printf(
        "| cells | TorchScript, server | ONNX, server | ratio (ONNX/TorchScript) | "
        "TorchScript, in-process | ONNX, in-process | ratio |\n");
    std::printf("|---:|---:|---:|---:|---:|---:|---:|\n");
    for (std::size_t i = 0; i < batches.size(); ++i) {
      Figures ts = median_of(cell_runs[i][kServerOn]), ox = median_of(cell_runs[i][kOnnxServerOn]);
      Figures ts_local = median_of(cell_runs[i][kLocal]);
      Figures ox_local = median_of(cell_runs[i][kOnnxLocal]);
      std::printf("| %lld | %s | %s | %.2fx | %s | %s | %.2fx |\n",
                  static_cast<long long>(batches[i]), format_number(ts.p50_us).c_str(),
                  format_number(ox.p50_us).c_str(), ox.p50_us / ts.p50_us,
                  format_number(ts_local.p50_us).c_str(), format_number(ox_local.p50_us).c_str(),
                  ox_local.p50_us / ts_local.p50_us);
    }
    std::printf("\nStore time (AI.MODELSTORE of the model's bytes, median of 5): TorchScript %s "
                "ms (%zu bytes), ONNX %s ms (%zu bytes).\n",
                format_number(percentile(store_ms[0], 0.5)).c_str(), model.size(),
                format_number(percentile(store_ms[1], 0.5)).c_str(), onnx_model.size());
    std::printf("\nAnchors (round trip p50 in us):\n\n");
    std::printf("| round trip | p50 |\n|---|---:|\n");
    std::printf("| 1 byte over a Unix socketpair, to a forked child and back | %s |\n",
                format_number(median_of(anchor_runs[kSocketPair]).p50_us).c_str());
    std::printf("| PING to the server | %s |\n",
                format_number(median_of(anchor_runs[kPing]).p50_us).c_str());
    const double cells = static_cast<double>(caller_cells);
    Figures unbatched = median_of(concurrent_runs[kUnbatched]);
    Figures batched = median_of(concurrent_runs[kBatched]);
    Figures local_threads = median_of(concurrent_runs[kLocalThreads]);
    std::printf(
        "\n%d concurrent callers of %lld cells each (run_model_on; each caller its own "
        "Client):\n\n",
        callers, static_cast<long long>(caller_cells));
    std::printf(
        "| path | calls/s | cells/s | p50 us | mean batch (callers/run) | "
        "ratio to unbatched |\n");
    std::printf("|---|---:|---:|---:|---:|---:|\n");
    std::printf("| server, no batching | %s | %s | %s | 1 | 1.00x |\n",
                format_number(unbatched.calls_per_second).c_str(),
                format_number(unbatched.calls_per_second * cells).c_str(),
                format_number(unbatched.p50_us).c_str());
    std::printf("| server, BATCHSIZE %lld | %s | %s | %s | %s | %.2fx |\n",
                static_cast<long long>(batch_size), format_number(batched.calls_per_second).c_str(),
                format_number(batched.calls_per_second * cells).c_str(),
                format_number(batched.p50_us).c_str(),
                format_number(percentile(mean_batch, 0.5)).c_str(),
                batched.calls_per_second / unbatched.calls_per_second);
    std::printf("| in-process LocalModel, %d threads | %s | %s | %s | - | %.2fx |\n", callers,
                format_number(local_threads.calls_per_second).c_str(),
                format_number(local_threads.calls_per_second * cells).c_str(),
                format_number(local_threads.p50_us).c_str(),
                local_threads.calls_per_second / unbatched.calls_per_second);
    if (large_mib > 0) shared_memory_tables(binary, server_args, large_mib, model, settings);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "model_bench: %s\n", error.what());
    return 1;
  }
  return 0;
}
