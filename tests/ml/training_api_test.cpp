// The public training API (slipstream/training.hpp) on one rank: the sample memory's layout
// checks, batches and statistics; the model's step, evaluation, prediction and state; the errors
// a user gets for bad files and bad batches. Data parallelism under MPI is
// tests/train/data_parallel_mpi.cpp; the whole loop against a server is example 10.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "slipstream/training.hpp"
#include "test_models.hpp"

namespace slipstream::train {
namespace {

// Rows i of x = [i, i + 0.5] (float32 [n, 2]) and y = [2i] (float32 [n, 1]).
Samples rows(std::int64_t n, std::int64_t first = 0, std::int64_t width = 2) {
  std::vector<float> x, y;
  for (std::int64_t i = first; i < first + n; ++i) {
    for (std::int64_t j = 0; j < width; ++j) x.push_back(static_cast<float>(i) + 0.5f * j);
    y.push_back(2.0f * static_cast<float>(i));
  }
  const std::int64_t xs[] = {n, width}, ys[] = {n, 1};
  return {Tensor::copy_of(std::span<const float>(x), xs),
          Tensor::copy_of(std::span<const float>(y), ys), n};
}

Samples mlp_rows(int first, int n) {
  const ml::testing::MlpBatch b(first, n);
  return {Tensor::copy_of(std::span<const float>(b.xs), b.x_shape),
          Tensor::copy_of(std::span<const float>(b.ys), b.y_shape), n};
}

TEST(SampleMemory, KeepsRowsAndDrawsBatchesOfThem) {
  ReplayConfig config;
  config.policy = ReplayPolicy::kFifo;
  config.max_samples = 5;
  config.min_fill = 3;
  SampleMemory memory(config);
  EXPECT_EQ(memory.draw(4).count, 0);  // nothing held
  EXPECT_EQ(memory.add(rows(2)), 2);
  EXPECT_FALSE(memory.ready());
  EXPECT_EQ(memory.add(rows(4, 10)), 4);  // fifo: the oldest goes
  EXPECT_TRUE(memory.ready());
  EXPECT_EQ(memory.size(), 5u);
  const Samples batch = memory.draw(7);
  ASSERT_EQ(batch.count, 7);
  EXPECT_EQ(std::vector<std::int64_t>(batch.input.shape().begin(), batch.input.shape().end()),
            (std::vector<std::int64_t>{7, 2}));
  const auto x = batch.input.data<float>(), y = batch.target.data<float>();
  for (int i = 0; i < 7; ++i) {  // every drawn row is a whole row of what was added
    EXPECT_FLOAT_EQ(x[2 * i + 1], x[2 * i] + 0.5f);
    EXPECT_FLOAT_EQ(y[i], 2 * x[2 * i]);
  }
  const Samples all = memory.all();
  EXPECT_EQ(all.count, 5);
  EXPECT_EQ(memory.stats().evicted, 1u);
  EXPECT_EQ(memory.stats().draws, 7u);
}

TEST(SampleMemory, RefusesRowsOfAnotherShapeNamingBoth) {
  SampleMemory memory(ReplayConfig{});
  memory.add(rows(3));
  try {
    memory.add(rows(3, 0, 3));
    FAIL() << "rows of another shape were taken";
  } catch (const TrainingError& e) {
    EXPECT_NE(std::string(e.what()).find("FLOAT [3] -> FLOAT [1]"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("FLOAT [2] -> FLOAT [1]"), std::string::npos) << e.what();
    EXPECT_EQ(e.code(), ErrorCode::kBackend);
  }
  EXPECT_EQ(memory.size(), 3u);
  EXPECT_THROW(memory.add(rows(3), 3), InvalidArgumentError);  // no row 3 of 3
}

TEST(Model, StepsEvaluatesAndPredicts) {
  auto one = single_process();
  TrainOptions options;
  options.learning_rate = 0.01;
  Model model = Model::from_bytes(ml::testing::mlp_model(), options, *one);
  EXPECT_EQ(model.train_step(Samples{}).samples, 0);  // an empty batch makes no step
  EXPECT_EQ(model.steps(), 0);
  const BatchLoss before = model.evaluate(mlp_rows(0, 32));
  EXPECT_EQ(before.samples, 32);
  for (int i = 0; i < 30; ++i) {
    const BatchLoss loss = model.train_step(mlp_rows(0, 32));
    EXPECT_EQ(loss.samples, 32);
  }
  EXPECT_EQ(model.steps(), 30);
  EXPECT_LT(model.evaluate(mlp_rows(0, 32)).loss, before.loss);
  EXPECT_GT(model.last_loss(), 0.0);
  const std::vector<Tensor> out = model.predict(mlp_rows(0, 5).input);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape()[0], 5);
  EXPECT_EQ(model.evaluate(Samples{}).samples, 0);
  // save() and the optimiser state carry on where the model was.
  Model copy = Model::from_bytes(model.save(), options, *one);
  copy.load_optimizer_state(model.optimizer_state(), model.steps());
  EXPECT_EQ(copy.steps(), 30);
  model.train_step(mlp_rows(40, 16));
  copy.train_step(mlp_rows(40, 16));
  EXPECT_DOUBLE_EQ(copy.evaluate(mlp_rows(0, 32)).loss, model.evaluate(mlp_rows(0, 32)).loss);
  model.scale_learning_rate(0.5);
  EXPECT_DOUBLE_EQ(model.learning_rate(), 0.005);
}

TEST(Model, ABadBatchThrowsAndChangesNothing) {
  auto one = single_process();
  Model model = Model::from_bytes(ml::testing::mlp_model(), {}, *one);
  const double loss = model.evaluate(mlp_rows(0, 8)).loss;
  EXPECT_THROW(model.train_step(rows(8, 0, 3)), TrainingError);  // 3 columns, the model takes 4
  EXPECT_EQ(model.steps(), 0);
  EXPECT_DOUBLE_EQ(model.evaluate(mlp_rows(0, 8)).loss, loss);
  EXPECT_THROW(model.evaluate(rows(8, 0, 3)), TrainingError);
  EXPECT_THROW(model.predict(rows(8, 0, 3).input), TrainingError);
  EXPECT_THROW(model.load_optimizer_state("not a state", 1), TrainingError);
}

TEST(Model, BadFilesAreClearErrors) {
  auto one = single_process();
  EXPECT_THROW(Model::from_file("/nonexistent/model.pt", {}, *one), InvalidArgumentError);
  try {
    Model::from_bytes("not a model", {}, *one);
    FAIL() << "garbage loaded";
  } catch (const TrainingError& e) {
    EXPECT_NE(std::string(e.what()).find("model"), std::string::npos) << e.what();
  }
  TrainOptions bad;
  bad.learning_rate = -1;
  EXPECT_THROW(Model::from_bytes(ml::testing::mlp_model(), bad, *one), TrainingError);
  EXPECT_THROW(SampleBuilder::from_bytes("not a module"), TrainingError);
  EXPECT_THROW(SampleBuilder::from_file("/nonexistent/samples.pt"), InvalidArgumentError);
}

}  // namespace
}  // namespace slipstream::train
