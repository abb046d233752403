// Data parallel training under mpirun -n 2: each rank takes half of every batch, the gradients
// are summed in one fused all-reduce (each rank weighting its loss by its share of the samples),
// and both ranks must end with the parameters one process gets from the whole batches, within
// floating-point tolerance. Also: rank 1 starts from other parameters and gets rank 0's by
// broadcast; a step where rank 1 has no data (it takes part with weight 0); ranks agree.
// Prints "ok" on rank 0 and exits 0 when every check holds.
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "ml/trainable_model.hpp"
#include "test_models.hpp"
#include "train/collective.hpp"

namespace {

using slipstream::ml::TensorView;
using slipstream::ml::TrainableModel;

using Batch = slipstream::ml::testing::MlpBatch;

std::vector<float> parameters(const TrainableModel& model) {
  std::vector<float> out(model.parameter_count());
  model.parameters(out);
  return out;
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
  slipstream::ml::TrainOptions options;  // Adam: its moments must agree too
  options.learning_rate = 0.01;
  // Rank 1 starts from other values; the broadcast from rank 0 makes them equal.
  auto model = TrainableModel::load(slipstream::ml::testing::mlp_model(), options);
  if (rank == 1) {
    std::vector<float> shifted = parameters(*model);
    for (float& p : shifted) p += 0.5f;
    model->set_parameters(shifted);
  }
  std::vector<float> flat = parameters(*model);
  world->broadcast(flat, 0);
  model->set_parameters(flat);
  auto reference = TrainableModel::load(slipstream::ml::testing::mlp_model(), options);
  check(parameters(*model) == parameters(*reference), "parameters equal after the broadcast", rank);

  constexpr int kSteps = 6, kBatch = 16;
  std::vector<float> gradients(model->parameter_count());
  for (int step = 0; step < kSteps; ++step) {
    // Step 3: rank 1 has no data; rank 0 takes the whole batch.
    const bool empty = step == 3 && rank == 1;
    const int mine = step == 3 ? (rank == 0 ? kBatch : 0) : kBatch / 2;
    const int first = step * kBatch + (step == 3 ? 0 : rank * kBatch / 2);
    const std::int64_t total = world->sum(static_cast<std::int64_t>(mine));
    check(total == kBatch, "the ranks count the whole batch", rank);
    const Batch share(first, empty ? 1 : mine);  // an empty share still makes a (dummy) batch
    const TensorView x = share.x();
    model->accumulate({&x, 1}, share.y(), empty ? 0.0 : static_cast<double>(mine) / total);
    model->gradients(gradients);
    world->sum(gradients);  // one fused all-reduce
    model->set_gradients(gradients);
    model->step();
    // One process, the whole batch.
    const Batch whole(step * kBatch, kBatch);
    const TensorView wx = whole.x();
    reference->accumulate({&wx, 1}, whole.y());
    reference->step();
  }
  const std::vector<float> got = parameters(*model), expected = parameters(*reference);
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    worst = std::max(worst, static_cast<double>(std::fabs(got[i] - expected[i])));
  }
  check(worst < 1e-5, "parameters match the full-batch run (worst difference " +
                          std::to_string(worst) + ")", rank);
  std::vector<float> mine = got, other = got;
  world->broadcast(other, 1);
  check(mine == other, "both ranks hold the same parameters", rank);
  const bool all_ok = world->all(failures == 0);
  if (rank == 0 && all_ok) std::printf("ok: 2 ranks on half-batches match 1 on whole batches (worst %.2g)\n", worst);
  MPI_Finalize();
  return all_ok ? 0 : 1;
}
