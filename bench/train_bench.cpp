// Benchmark: online training from a live stream against its two peers, in one run.
//
// 1. Throughput. The trainer (the library behind `slipstream train`, one rank) learns y = sin(x)
//    from a stream that a writer fills as fast as it can, against training the same model on the
//    same samples held in memory (offline: random batches of the same size, the same number of
//    optimiser steps, TrainableModel directly). Samples trained per second, and their ratio.
// 2. Time to a target loss. A "simulation" makes one step every --step-ms (sleeping, as a solver
//    would compute) and the time runs from its start until a model whose error on held-out points
//    is at most --target is available to it:
//      online:  the trainer learns while the simulation runs (a discard group: the simulation
//               never waits for it) and publishes every --publish-every optimiser steps; the
//               simulation calls the published model each step (run_model_on) and checks its
//               error;
//      files:   the simulation writes every step to a file; once it has finished, a trainer reads
//               the files and trains (random batches, the same model and options) until the error
//               is at most the target, checking every --publish-every optimiser steps.
// Each is repeated --repetitions times, interleaved (online and offline alternate which goes first);
// figures are medians. A benchmark, not a test:
// it never fails on a figure. Needs /usr/bin/python3 with torch to write the model files.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench_support.hpp"
#include "ml/trainable_model.hpp"
#include "slipstream/client.hpp"
#include "slipstream/stream.hpp"
#include "slipstream/collective.hpp"
#include "train/trainer.hpp"

#ifndef SLIPSTREAM_BINARY
#error "SLIPSTREAM_BINARY must name the slipstream executable"
#endif

namespace {

using slipstream::bench::Clock;
using slipstream::bench::format_number;
using slipstream::bench::Listen;
using slipstream::bench::ServerChild;
using slipstream::bench::TempDir;

constexpr const char* kMakeModels = R"PY(
import sys, torch
from typing import Dict, List, Tuple
class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.net = torch.nn.Sequential(torch.nn.Linear(1, 64), torch.nn.Tanh(),
                                       torch.nn.Linear(64, 64), torch.nn.Tanh(),
                                       torch.nn.Linear(64, 1))
    def forward(self, x):
        return self.net(x)
class Samples(torch.nn.Module):
    def forward(self, records: Dict[str, List[torch.Tensor]]) -> Tuple[torch.Tensor, torch.Tensor]:
        xy = torch.cat(records["samples/xy"])
        return xy[:, :1], xy[:, 1:]
torch.jit.save(torch.jit.script(Mlp()), sys.argv[1] + "/model.pt")
torch.jit.save(torch.jit.script(Samples()), sys.argv[1] + "/samples.pt")
)PY";

struct Settings {
  int steps = 60;            // stream steps
  int points = 256;          // samples per step
  int batch = 64;
  int epochs = 1;
  double learning_rate = 0.005;
  int repetitions = 3;
  double step_ms = 50;       // the simulation's compute time per step (part 2)
  double target = 0.002;     // held-out mean squared error to reach (part 2)
  int publish_every = 20;
};

// The samples of step `step`: (x, sin(x)) rows, x uniform in [-pi, pi].
std::vector<float> step_rows(int step, int points) {
  std::mt19937 rng(1000 + step);
  std::uniform_real_distribution<float> x(-3.14159f, 3.14159f);
  std::vector<float> rows(2 * static_cast<std::size_t>(points));
  for (int i = 0; i < points; ++i) {
    rows[2 * i] = x(rng);
    rows[2 * i + 1] = std::sin(rows[2 * i]);
  }
  return rows;
}

struct HeldOut {
  std::vector<float> x, y;
  std::vector<std::int64_t> shape;
  HeldOut() {
    for (int i = 0; i < 101; ++i) {
      x.push_back(-3.0f + 0.06f * static_cast<float>(i));
      y.push_back(std::sin(x.back()));
    }
    shape = {101, 1};
  }
  double error_of(const float* predicted) const {
    double sum = 0;
    for (std::size_t i = 0; i < x.size(); ++i) sum += std::pow(predicted[i] - y[i], 2);
    return sum / static_cast<double>(x.size());
  }
};

void write_stream(const std::string& address, const std::string& stream, const Settings& s,
                  double step_ms, const std::function<void(int)>& after_step = {}) {
  slipstream::ClientOptions client;
  client.address = address;
  slipstream::StreamWriterOptions options;
  options.expected_groups = 1;
  slipstream::StreamWriter writer(client, stream, 0, 1, options);
  const std::vector<std::uint64_t> global{static_cast<std::uint64_t>(s.points), 2};
  const std::vector<std::uint64_t> origin{0, 0};
  for (int step = 0; step < s.steps; ++step) {
    if (step_ms > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(step_ms));
    const std::vector<float> rows = step_rows(step, s.points);
    writer.begin_step(step);
    writer.put_chunk<float>("samples/xy", global, origin, global, rows);  // borrowed until end
    writer.end_step();
    if (after_step) after_step(step);
  }
  writer.close();
}

slipstream::train::TrainConfig trainer_config(const std::string& dir, const std::string& address,
                                              const std::string& stream, const Settings& s,
                                              std::int64_t publish_every) {
  slipstream::train::TrainConfig c;
  c.stream.address = address;
  c.stream.name = stream;
  c.stream.wait_seconds = 60;
  c.model.file = dir + "/model.pt";
  c.model.samples = dir + "/samples.pt";
  c.model.publish_as = stream + "-model";
  c.train.options.learning_rate = s.learning_rate;
  c.train.batch_size = s.batch;
  c.train.epochs_per_step = s.epochs;
  c.replay.max_samples = static_cast<std::size_t>(s.steps) * static_cast<std::size_t>(s.points);
  c.replay.policy = slipstream::train::ReplayPolicy::kFifo;  // holds every sample, like offline
  c.publish.every = publish_every;
  c.metrics.print_every_seconds = 0;
  return c;
}

// An offline trainer over samples in memory: random batches, as the online trainer draws them.
class OfflineTrainer {
 public:
  OfflineTrainer(const std::string& model, const Settings& s, std::vector<float> rows)
      : model_(slipstream::ml::TrainableModel::load(model, options(s))), rows_(std::move(rows)),
        batch_(static_cast<std::size_t>(s.batch)), x_(batch_), y_(batch_) {}
  static slipstream::ml::TrainOptions options(const Settings& s) {
    slipstream::ml::TrainOptions o;
    o.learning_rate = s.learning_rate;
    return o;
  }
  void step() {
    std::uniform_int_distribution<std::size_t> pick(0, rows_.size() / 2 - 1);
    for (std::size_t i = 0; i < batch_; ++i) {
      const std::size_t r = pick(rng_);
      x_[i] = rows_[2 * r];
      y_[i] = rows_[2 * r + 1];
    }
    const slipstream::ml::TensorView x{slipstream::DType::kFloat32, shape_, x_.data(),
                                       x_.size() * sizeof(float)};
    const slipstream::ml::TensorView y{slipstream::DType::kFloat32, shape_, y_.data(),
                                       y_.size() * sizeof(float)};
    model_->accumulate({&x, 1}, y, static_cast<double>(batch_));
    gradients_.resize(model_->parameter_count());
    model_->gradients(gradients_);  // as the trainer scales the summed gradients by the batch
    for (float& v : gradients_) v /= static_cast<float>(batch_);
    model_->set_gradients(gradients_);
    model_->step();
  }
  double held_out_error(const HeldOut& h) {
    const slipstream::ml::TensorView x{slipstream::DType::kFloat32, h.shape, h.x.data(),
                                       h.x.size() * sizeof(float)};
    auto out = model_->predict({&x, 1});
    return h.error_of(reinterpret_cast<const float*>(out.at(0).data.data()));
  }

 private:
  std::unique_ptr<slipstream::ml::TrainableModel> model_;
  std::vector<float> rows_;
  std::size_t batch_;
  std::vector<float> x_, y_, gradients_;
  std::vector<std::int64_t> shape_{static_cast<std::int64_t>(batch_), 1};
  std::mt19937_64 rng_{7};
};

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

struct Throughput {
  double online = 0, online_training = 0, offline = 0, publish_seconds = 0;
  std::int64_t steps = 0;
};

Throughput measure_throughput(const std::string& dir, const std::string& address,
                              const std::string& model, const Settings& s, int run) {
  Throughput t;
  // The online trainer makes epochs_per_step passes over what it holds at each step: the offline
  // one makes the same number of optimiser steps.
  for (int step = 1; step <= s.steps; ++step) {
    t.steps += std::max<std::int64_t>(1, std::llround(static_cast<double>(s.epochs) * step *
                                                      s.points / s.batch));
  }
  auto online = [&] {
    const std::string stream = "throughput-" + std::to_string(run);
    auto collective = slipstream::train::single_process();
    slipstream::train::Trainer trainer(trainer_config(dir, address, stream, s, 0), *collective);
    std::thread writer([&] { write_stream(address, stream, s, 0); });
    const auto start = Clock::now();
    slipstream::train::TrainerStatus status = trainer.run();
    const double seconds = seconds_since(start);
    writer.join();
    if (status.optimizer_steps != t.steps) {
      throw std::runtime_error("the online trainer made " +
                               std::to_string(status.optimizer_steps) + " optimiser steps, not " +
                               std::to_string(t.steps));
    }
    t.online = static_cast<double>(status.samples_trained) / seconds;
    t.publish_seconds = status.final_publish_seconds;
    t.online_training =
        static_cast<double>(status.samples_trained) / (seconds - status.final_publish_seconds);
  };
  auto offline = [&] {
    std::vector<float> rows;
    for (int step = 0; step < s.steps; ++step) {
      std::vector<float> r = step_rows(step, s.points);
      rows.insert(rows.end(), r.begin(), r.end());
    }
    OfflineTrainer trainer(model, s, std::move(rows));
    const auto start = Clock::now();
    for (std::int64_t i = 0; i < t.steps; ++i) trainer.step();
    t.offline = static_cast<double>(t.steps * s.batch) / seconds_since(start);
  };
  // Alternate which goes first, so that drifts in the machine's load hit both alike.
  if (run % 2 == 0) {
    online();
    offline();
  } else {
    offline();
    online();
  }
  return t;
}

// Online: seconds from the simulation's start until a step's call of the published model has an
// error at most the target (nullopt: never within the run).
std::optional<double> online_time_to_target(const std::string& dir, const std::string& address,
                                            const Settings& s, int run) {
  const std::string stream = "target-online-" + std::to_string(run);
  auto collective = slipstream::train::single_process();
  Settings trained = s;
  slipstream::train::TrainConfig config =
      trainer_config(dir, address, stream, trained, s.publish_every);
  config.train.steps_after_end = 0;
  config.stream.discard = true;  // the simulation never waits for the trainer
  slipstream::train::Trainer trainer(config, *collective);
  std::thread training([&] { trainer.run(); });
  slipstream::ClientOptions options;
  options.address = address;
  slipstream::Client client(options);
  const HeldOut held;
  const slipstream::TensorRef input =
      slipstream::TensorRef::of<float>("probe", held.x, held.shape);
  std::optional<double> reached;
  const auto start = Clock::now();
  write_stream(address, stream, s, s.step_ms, [&](int) {
    if (reached || !client.model_exists(stream + "-model")) return;
    auto out = client.run_model_on(stream + "-model", {&input, 1}, {"predicted"});
    if (held.error_of(out.at(0).data<float>().data()) <= s.target) reached = seconds_since(start);
  });
  training.join();
  return reached;
}

// Files, then training: the simulation writes each step to a file; training starts after it.
std::optional<double> files_time_to_target(const std::string& dir, const std::string& model,
                                           const Settings& s, int run, double& simulation_seconds) {
  const std::string files = dir + "/files-" + std::to_string(run);
  std::system(("mkdir -p " + files).c_str());
  const auto start = Clock::now();
  for (int step = 0; step < s.steps; ++step) {
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(s.step_ms));
    const std::vector<float> rows = step_rows(step, s.points);
    std::ofstream(files + "/step-" + std::to_string(step) + ".bin", std::ios::binary)
        .write(reinterpret_cast<const char*>(rows.data()),
               static_cast<std::streamsize>(rows.size() * sizeof(float)));
  }
  simulation_seconds = seconds_since(start);
  std::vector<float> rows;
  for (int step = 0; step < s.steps; ++step) {
    std::ifstream in(files + "/step-" + std::to_string(step) + ".bin", std::ios::binary);
    std::vector<float> r(2 * static_cast<std::size_t>(s.points));
    in.read(reinterpret_cast<char*>(r.data()), static_cast<std::streamsize>(r.size() * sizeof(float)));
    rows.insert(rows.end(), r.begin(), r.end());
  }
  OfflineTrainer trainer(model, s, std::move(rows));
  const HeldOut held;
  const std::int64_t limit = 200000;  // optimiser steps before giving up
  for (std::int64_t i = 1; i <= limit; ++i) {
    trainer.step();
    if (i % s.publish_every == 0 && trainer.held_out_error(held) <= s.target) {
      return seconds_since(start);
    }
  }
  return std::nullopt;
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return one + " " + five + " " + fifteen;
}

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  CLI::App app{"Online training from a stream against training from memory and from files"};
  app.add_option("--steps", s.steps, "Stream steps");
  app.add_option("--points", s.points, "Samples per step");
  app.add_option("--batch", s.batch, "Batch size");
  app.add_option("--repetitions", s.repetitions, "Runs of each measurement (medians reported)");
  app.add_option("--step-ms", s.step_ms, "The simulation's compute time per step (part 2)");
  app.add_option("--target", s.target, "Held-out mean squared error to reach (part 2)");
  app.add_option("--publish-every", s.publish_every, "Optimiser steps between publishes");
  std::string part = "all";
  app.add_option("--part", part, "throughput, target or all")
      ->check(CLI::IsMember({"throughput", "target", "all"}));
  CLI11_PARSE(app, argc, argv);
  try {
    TempDir dir("train-bench");
    const std::string script = dir.path() + "/make_models.py";
    std::ofstream(script) << kMakeModels;
    if (std::system(("/usr/bin/python3 " + script + " " + dir.path() + " > " + dir.path() +
                     "/python.log 2>&1")
                        .c_str()) != 0) {
      throw std::runtime_error("/usr/bin/python3 could not write the models (python3-torch?): " +
                               slipstream::bench::read_file(dir.path() + "/python.log"));
    }
    const std::string model = slipstream::bench::read_file(dir.path() + "/model.pt");
    ServerChild server(
        "slipstream server",
        [](const Listen& listen) {
          return std::vector<std::string>{SLIPSTREAM_BINARY, "server", "--port", "0",
                                          "--unixsocket", listen.socket, "--dir", listen.dir,
                                          "--loglevel", "warn"};
        },
        [](const Listen& listen) { return slipstream::bench::unix_socket_accepts(listen.socket); });
    const std::string address = "unix://" + server.socket();

    std::printf("# train_bench: %s\n", slipstream::bench::command_line(argc, argv).c_str());
    std::printf("CPU: %s; load average before: %s\n\n", slipstream::bench::cpu_model().c_str(),
                load_average().c_str());
    std::vector<double> online, offline, ratios, online_target, files_target, target_ratios;
    std::vector<double> training_only, training_ratios, publish_seconds;
    double simulation = 0;
    int online_missed = 0, files_missed = 0;
    for (int run = 0; run < s.repetitions; ++run) {
      if (part != "target") {
        const Throughput t = measure_throughput(dir.path(), address, model, s, run);
        online.push_back(t.online);
        offline.push_back(t.offline);
        ratios.push_back(t.online / t.offline);
        training_only.push_back(t.online_training);
        training_ratios.push_back(t.online_training / t.offline);
        publish_seconds.push_back(t.publish_seconds);
      }
      if (part == "throughput") continue;
      const auto on = online_time_to_target(dir.path(), address, s, run);
      const auto off = files_time_to_target(dir.path(), model, s, run, simulation);
      if (on) online_target.push_back(*on); else ++online_missed;
      if (off) files_target.push_back(*off); else ++files_missed;
      if (on && off) target_ratios.push_back(*off / *on);
    }
    using slipstream::bench::median;
    if (part != "target") {
      std::printf("## Throughput: %d steps x %d samples, batch %d, MLP 1-64-64-1, Adam\n\n",
                  s.steps, s.points, s.batch);
      std::printf("| | samples/s (median of %d) | / offline (median of ratios; aim >= 0.9) |\n"
                  "|---|---|---|\n",
                  s.repetitions);
      std::printf("| online, from a live stream, start to done | %s | %.2f |\n",
                  format_number(median(online)).c_str(), median(ratios));
      std::printf("| online, without the final publish (%.2f s, the server loading the model) | "
                  "%s | %.2f |\n",
                  median(publish_seconds), format_number(median(training_only)).c_str(),
                  median(training_ratios));
      std::printf("| offline, from memory | %s | 1 |\n\n", format_number(median(offline)).c_str());
    }
    if (part != "throughput") {
      std::printf("## Time to held-out error <= %g: a simulation of %d steps of %g ms\n\n", s.target,
                  s.steps, s.step_ms);
      std::printf("| | seconds (median) | runs that never reached it |\n|---|---|---|\n");
      std::printf("| online: train while it runs, the simulation calls the model | %s | %d |\n",
                  online_target.empty() ? "-" : format_number(median(online_target)).c_str(),
                  online_missed);
      std::printf("| files: write every step, then train (simulation alone: %.2f s) | %s | %d |\n",
                  simulation,
                  files_target.empty() ? "-" : format_number(median(files_target)).c_str(),
                  files_missed);
      std::printf("| ratio files / online (aim >= 3) | %s | |\n\n",
                  target_ratios.empty() ? "-" : format_number(median(target_ratios)).c_str());
    }
    std::printf("load average after: %s\n", load_average().c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "train_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
