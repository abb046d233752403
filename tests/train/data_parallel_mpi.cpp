// Data parallel training under mpirun -n 2, through the public API (slipstream::train::Model, the
// code the trainer runs): each rank takes half of every batch, one fused all-reduce per step, and
// both ranks must end with the parameters one process gets from the whole batches (an
// independent TrainableModel stepping on them), within floating-point tolerance. Also: rank 1
// loads other parameters and gets rank 0's by the broadcast of Model::from_bytes; a step where
// rank 1 has no data (it takes part with an empty batch); a batch the model fails on, on one rank
// only, throws on both and changes nothing; ranks agree.
// Prints "ok" on rank 0 and exits 0 when every check holds.
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "ml/trainable_model.hpp"
#include "slipstream/training.hpp"
#include "test_models.hpp"

namespace {

using slipstream::ml::TensorView;
using slipstream::ml::TrainableModel;
using slipstream::train::Samples;

using Batch = slipstream::ml::testing::MlpBatch;

std::vector<float> parameters(const TrainableModel& model) {
  std::vector<float> out(model.parameter_count());
  model.parameters(out);
  return out;
}

std::vector<float> parameters(const slipstream::train::Model& model) {
  return parameters(*TrainableModel::load(model.save(), {}));
}

Samples samples_of(const Batch& b) {
  Samples s;
  s.input = slipstream::Tensor::copy_of(std::span<const float>(b.xs), b.x_shape);
  s.target = slipstream::Tensor::copy_of(std::span<const float>(b.ys), b.y_shape);
  s.count = b.x_shape[0];
  return s;
}

int failures = 0;
void check(bool ok, const std::string& what, int rank) {
  if (!ok) {
    std::fprintf(stderr, "rank %d: FAILED: %s\n", rank, what.c_str());
    ++failures;
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  auto world = slipstream::train::mpi_world();
  const int rank = world->rank();
  if (world->size() != 2) {
    if (rank == 0) std::fprintf(stderr, "run with 2 ranks\n");
    MPI_Finalize();
    return 2;
  }
  slipstream::train::TrainOptions options;  // Adam: its moments must agree too
  options.learning_rate = 0.01;
  auto reference = TrainableModel::load(slipstream::ml::testing::mlp_model(), options);
  // Rank 1 loads other values; the broadcast from rank 0 makes them equal.
  std::string archive = slipstream::ml::testing::mlp_model();
  if (rank == 1) {
    std::vector<float> shifted = parameters(*reference);
    for (float& p : shifted) p += 0.5f;
    auto other = TrainableModel::load(archive, options);
    other->set_parameters(shifted);
    archive = other->save();
  }
  auto model = slipstream::train::Model::from_bytes(archive, options, *world);
  check(parameters(model) == parameters(*reference), "parameters equal after the broadcast", rank);

  constexpr int kSteps = 6, kBatch = 16;
  for (int step = 0; step < kSteps; ++step) {
    // Step 3: rank 1 has no data; rank 0 takes the whole batch.
    const bool empty = step == 3 && rank == 1;
    const int mine = step == 3 ? (rank == 0 ? kBatch : 0) : kBatch / 2;
    const int first = step * kBatch + (step == 3 ? 0 : rank * kBatch / 2);
    const Samples share = empty ? Samples{} : samples_of(Batch(first, mine));
    const slipstream::train::BatchLoss loss = model.train_step(share);
    check(loss.samples == kBatch, "the ranks count the whole batch", rank);
    // One process, the whole batch.
    const Batch whole(step * kBatch, kBatch);
    const TensorView wx = whole.x();
    reference->accumulate({&wx, 1}, whole.y());
    reference->step();
  }
  const std::vector<float> got = parameters(model), expected = parameters(*reference);
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    worst = std::max(worst, static_cast<double>(std::fabs(got[i] - expected[i])));
  }
  check(worst < 1e-5, "parameters match the full-batch run (worst difference " +
                          std::to_string(worst) + ")", rank);
  check(model.steps() == kSteps, "six optimiser steps", rank);

  // Rank 1's batch has 3 columns where the model takes 4: both ranks throw, nothing changes.
  Samples bad = samples_of(Batch(0, 4));
  if (rank == 1) {
    std::vector<float> three(12, 0.5f);
    const std::int64_t shape[] = {4, 3};
    bad.input = slipstream::Tensor::copy_of(std::span<const float>(three), shape);
  }
  bool threw = false;
  try {
    model.train_step(bad);
  } catch (const slipstream::train::TrainingError& e) {
    threw = true;
  }
  check(threw, "a batch the model fails on, on one rank, throws on every rank", rank);
  check(parameters(model) == got && model.steps() == kSteps, "a failed step changes nothing",
        rank);
  // The next step starts from zero gradients: it matches one more reference step.
  model.train_step(samples_of(Batch(1000 + rank * kBatch / 2, kBatch / 2)));
  const Batch whole(1000, kBatch);
  const TensorView wx = whole.x();
  reference->accumulate({&wx, 1}, whole.y());
  reference->step();
  const std::vector<float> after = parameters(model), expected_after = parameters(*reference);
  worst = 0;
  for (std::size_t i = 0; i < after.size(); ++i) {
    worst = std::max(worst, static_cast<double>(std::fabs(after[i] - expected_after[i])));
  }
  check(worst < 1e-5, "the step after a failed one matches (worst " + std::to_string(worst) + ")",
        rank);

  std::vector<float> mine = after, other = after;
  world->broadcast(other, 1);
  check(mine == other, "both ranks hold the same parameters", rank);
  const bool all_ok = world->all(failures == 0);
  if (rank == 0 && all_ok) std::printf("ok: 2 ranks on half-batches match 1 on whole batches (worst %.2g)\n", worst);
  MPI_Finalize();
  return all_ok ? 0 : 1;
}
