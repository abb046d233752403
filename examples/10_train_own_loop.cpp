// Example 10: your own training loop in C++ (libslipstream_training), instead of
// `slipstream train CONFIG`. A simulation thread streams samples of y = sin(x) (`samples/xy`,
// rows of (x, y)) for 40 steps; the loop reads the stream as a reader group, turns each step into
// samples with a TorchScript sample builder, keeps them in a reservoir replay memory, trains a
// TorchScript model, and publishes it every 20 optimiser steps; the simulation calls the newest
// published model as it goes. At the end the model is published once more and its error on
// held-out points must be small.
// Usage: 10_train_own_loop MODELS_DIR [ADDRESS]   (MODELS_DIR holds sine_mlp.pt and
// xy_samples.pt, written by tests/integration/models/make_models.py; ADDRESS defaults to
// SLIPSTREAM_ADDRESS, then SSDB). One rank here; under mpirun, use mpi_world() instead of
// single_process() and agree on when to stop (see docs/training.md). Exits non-zero on failure,
// so it also runs as a test.
#include <cmath>
#include <cstdio>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "slipstream/training.hpp"

namespace {

namespace train = slipstream::train;

const std::string kStream = "example10.sine";
const std::string kModel = "example10.surrogate";
constexpr int kSteps = 40, kRows = 64;

// The simulation: writes kRows samples a step and calls the newest published model (once there
// is one), as a simulation would use its surrogate.
void simulate(const slipstream::ClientOptions& options, std::uint64_t& last_version) {
  slipstream::StreamWriterOptions writer_options;
  writer_options.expected_groups = 1;  // keep steps until the trainer's group has joined
  slipstream::StreamWriter writer(options, kStream, 0, 1, writer_options);
  slipstream::Client client(options);
  std::vector<float> xy(2 * kRows), probe{0.5f};
  const std::vector<std::uint64_t> global{kSteps * kRows, 2}, extent{kRows, 2};
  for (int step = 0; step < kSteps; ++step) {
    for (int i = 0; i < kRows; ++i) {
      const float x = -3.0f + 6.0f * static_cast<float>((step * 37 + i * 11) % 97) / 96.0f;
      xy[2 * i] = x;
      xy[2 * i + 1] = std::sin(x);
    }
    writer.begin_step(step);
    const std::vector<std::uint64_t> offset{static_cast<std::uint64_t>(step) * kRows, 0};
    writer.put_chunk<float>("samples/xy", global, offset, extent, xy);
    writer.end_step();
    if (client.model_exists(kModel)) {  // the simulation's inference call, once there is a model
      const std::int64_t shape[] = {1, 1};
      const slipstream::TensorRef input = slipstream::TensorRef::of<float>("x", probe, shape);
      slipstream::ModelVersion version;
      client.run_model_on(kModel, {&input, 1}, {"y"}, {}, &version);
      last_version = version.ran;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  writer.close();
}

}  // namespace

int main(int argc, char** argv) try {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MODELS_DIR [ADDRESS]\n", argv[0]);
    return 2;
  }
  const std::string models = argv[1];
  slipstream::ClientOptions options;
  if (argc > 2) options.address = argv[2];

  auto world = train::single_process();
  train::TrainOptions training;  // Adam, MSE
  training.learning_rate = 0.01;
  train::Model model = train::Model::from_file(models + "/sine_mlp.pt", training, *world);
  train::SampleBuilder builder = train::SampleBuilder::from_file(models + "/xy_samples.pt");
  train::ReplayConfig replay;  // reservoir: every sample seen is kept with equal probability
  replay.max_samples = 2000;
  replay.min_fill = 128;
  train::SampleMemory memory(replay);
  train::PublishOptions publishing;
  publishing.keep_versions = 1;
  train::Publisher publisher(options, kModel, publishing);

  std::uint64_t simulation_saw = 0;
  std::thread simulation([&] { simulate(options, simulation_saw); });

  slipstream::StreamReader reader(options, kStream, "trainer", 0, 1);
  std::int64_t stream_step = -1;
  for (;;) {
    slipstream::StreamNext next = reader.next_step();
    if (next.kind == slipstream::StreamNext::Kind::kEnd) break;
    if (next.kind != slipstream::StreamNext::Kind::kStep) continue;
    stream_step = next.step->number();
    memory.add(builder.build(*next.step));
    next.step->release();  // the writer may reuse the slot
    for (int b = 0; memory.ready() && b < 8; ++b) {
      model.train_step(memory.draw(64));
      if (model.steps() % 20 == 0) {
        publisher.publish(model, {model.steps(), stream_step, model.last_loss()});
      }
    }
  }
  simulation.join();
  for (int b = 0; b < 600; ++b) model.train_step(memory.draw(64));  // more from the memory
  publisher.publish(model, {model.steps(), stream_step, model.last_loss()});
  if (const std::string error = publisher.flush(); !error.empty()) {
    std::fprintf(stderr, "the final publish failed: %s\n", error.c_str());
    return 1;
  }

  // The published model on held-out points, through the server as the simulation calls it.
  slipstream::Client client(options);
  std::vector<float> xs;
  for (int i = 0; i < 50; ++i) xs.push_back(-2.9f + 5.8f * static_cast<float>(i) / 49.0f);
  const std::int64_t shape[] = {50, 1};
  const slipstream::TensorRef input = slipstream::TensorRef::of<float>("x", xs, shape);
  slipstream::ModelVersion version;
  const std::vector<slipstream::Tensor> out =
      client.run_model_on(kModel, {&input, 1}, {"y"}, {}, &version);
  double error = 0;
  const auto predicted = out.at(0).data<float>();
  for (int i = 0; i < 50; ++i) error += std::pow(predicted[i] - std::sin(xs[i]), 2) / 50;
  const train::ReplayStats stats = memory.stats();
  std::printf("%lld optimiser steps, last loss %.5f; replay holds %zu of %llu samples seen\n",
              static_cast<long long>(model.steps()), model.last_loss(), stats.held,
              static_cast<unsigned long long>(stats.seen));
  std::printf("published version %llu (the simulation last ran version %llu); held-out MSE %.5f\n",
              static_cast<unsigned long long>(version.ran),
              static_cast<unsigned long long>(simulation_saw), error);
  if (version.ran != static_cast<std::uint64_t>(publisher.published()) || error > 0.01) {
    std::fprintf(stderr, "FAILED: expected the newest version and a held-out MSE below 0.01\n");
    return 1;
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "error: %s\n", e.what());
  return 1;
}
