// TrainableModel: a model learns (linear regression to its exact answer), two half-batches whose
// averaged gradients are applied give the same parameters as the full batch (what the MPI
// all-reduce relies on), weights, clipping, the flat views, saving, and clear errors.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ml/trainable_model.hpp"
#include "test_models.hpp"

namespace slipstream::ml {
namespace {

// y = 2x + 1 at n points in [-1, 1], as [n, 1] inputs and targets.
struct Data {
  explicit Data(int n, int first = 0, int count = -1) {
    for (int i = first; i < (count < 0 ? n : first + count); ++i) {
      const float x = -1.0f + 2.0f * static_cast<float>(i) / static_cast<float>(n - 1);
      xs.push_back(x);
      ys.push_back(2.0f * x + 1.0f);
    }
    shape = {static_cast<std::int64_t>(xs.size()), 1};
  }
  TensorView x() const { return {DType::kFloat32, shape, xs.data(), xs.size() * sizeof(float)}; }
  TensorView y() const { return {DType::kFloat32, shape, ys.data(), ys.size() * sizeof(float)}; }
  std::vector<float> xs, ys;
  std::vector<std::int64_t> shape;
};

using MlpData = testing::MlpBatch;

TrainOptions sgd(double lr) {
  TrainOptions o;
  o.optimizer = OptimizerKind::kSgd;
  o.learning_rate = lr;
  return o;
}

std::vector<float> flat_parameters(const TrainableModel& model) {
  std::vector<float> out(model.parameter_count());
  model.parameters(out);
  return out;
}

std::vector<float> flat_gradients(const TrainableModel& model) {
  std::vector<float> out(model.parameter_count());
  model.gradients(out);
  return out;
}

TEST(TrainableModel, NamesParse) {
  EXPECT_EQ(parse_optimizer("AdamW"), OptimizerKind::kAdamW);
  EXPECT_EQ(parse_optimizer("sgd"), OptimizerKind::kSgd);
  EXPECT_FALSE(parse_optimizer("lbfgs"));
  EXPECT_EQ(parse_loss("L1"), LossKind::kL1);
  EXPECT_EQ(parse_loss("script"), LossKind::kScript);
  EXPECT_FALSE(parse_loss("huber"));
}

TrainOptions scripted_loss(const std::string& body, double lr = 0.1) {
  TrainOptions o = sgd(lr);
  o.loss = LossKind::kScript;
  o.loss_module = testing::module_from_source(
      "Loss", "def forward(self, output: Tensor, target: Tensor) -> Tensor:\n" + body);
  return o;
}

// A TorchScript loss: the user's MSE gives the very updates of the built-in one, a loss over
// targets of another shape and dtype (class indices) trains, and a bad loss is a clear error.
TEST(TrainableModel, AScriptedLossTrainsAndItsErrorsAreClear) {
  auto builtin = TrainableModel::load(testing::linear_model(0.0f, 0.0f), sgd(0.1));
  auto scripted = TrainableModel::load(testing::linear_model(0.0f, 0.0f),
                                       scripted_loss("  return ((output - target) ** 2).mean()\n"));
  const Data data(16);
  const TensorView x = data.x();
  for (int step = 0; step < 5; ++step) {
    EXPECT_NEAR(scripted->accumulate({&x, 1}, data.y()), builtin->accumulate({&x, 1}, data.y()),
                1e-6);
    builtin->step();
    scripted->step();
  }
  const std::vector<float> a = flat_parameters(*builtin), b = flat_parameters(*scripted);
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-6);
  EXPECT_NEAR(scripted->evaluate({&x, 1}, data.y()), builtin->evaluate({&x, 1}, data.y()), 1e-6);

  // Targets as they are: int64 labels [n] against an output [n, 1] (here: push the output
  // towards the label).
  auto labels_model = TrainableModel::load(
      testing::linear_model(0.0f, 0.0f),
      scripted_loss("  return ((output.squeeze(1) - target.to(output.dtype)) ** 2).mean()\n"));
  std::vector<std::int64_t> labels(data.xs.size(), 3), label_shape{
      static_cast<std::int64_t>(labels.size())};
  const TensorView y{DType::kInt64, label_shape, labels.data(), labels.size() * 8};
  const double before = labels_model->evaluate({&x, 1}, y);
  for (int step = 0; step < 100; ++step) {
    labels_model->accumulate({&x, 1}, y);
    labels_model->step();
  }
  EXPECT_LT(labels_model->evaluate({&x, 1}, y), before / 100);

  auto error_of = [&](const TrainOptions& o) -> std::string {
    try {
      auto m = TrainableModel::load(testing::linear_model(0.0f, 0.0f), o);
      m->accumulate({&x, 1}, data.y());
    } catch (const TrainError& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_NE(error_of(scripted_loss("  return output - target\n")).find("one-element tensor"),
            std::string::npos);
  EXPECT_NE(error_of(scripted_loss("  return target.sum()\n")).find("does not depend"),
            std::string::npos);
  EXPECT_NE(error_of(scripted_loss("  return output.mean() + torch.ones(3)\n"))
                .find("the loss module"),
            std::string::npos);
  TrainOptions garbage = sgd(0.1);
  garbage.loss = LossKind::kScript;
  garbage.loss_module = "not a module";
  EXPECT_NE(error_of(garbage).find("the loss module cannot be loaded"), std::string::npos);
}

TEST(TrainableModel, LinearRegressionReachesTheExactAnswer) {
  auto model = TrainableModel::load(testing::linear_model(0.0f, 0.0f), sgd(0.5));
  ASSERT_EQ(model->parameter_count(), 2u);
  const Data data(64);
  const TensorView x = data.x();
  double loss = 0;
  for (int step = 0; step < 300; ++step) {
    loss = model->accumulate({&x, 1}, data.y());
    model->step();
  }
  EXPECT_LT(model->evaluate({&x, 1}, data.y()), 1e-8);
  EXPECT_LT(loss, 1e-6);
  const std::vector<float> p = flat_parameters(*model);  // w, then b
  EXPECT_NEAR(p[0], 2.0f, 1e-3);
  EXPECT_NEAR(p[1], 1.0f, 1e-3);
  std::vector<OwnedTensor> out = model->predict({&x, 1});
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].shape, data.shape);
  const auto* predicted = reinterpret_cast<const float*>(out[0].data.data());
  for (std::size_t i = 0; i < data.ys.size(); ++i) EXPECT_NEAR(predicted[i], data.ys[i], 1e-3);
}

TEST(TrainableModel, EveryOptimizerAndLossLearns) {
  for (OptimizerKind optimizer : {OptimizerKind::kSgd, OptimizerKind::kAdam, OptimizerKind::kAdamW}) {
    for (LossKind loss : {LossKind::kMse, LossKind::kL1}) {
      TrainOptions o;
      o.optimizer = optimizer;
      o.loss = loss;
      o.learning_rate = optimizer == OptimizerKind::kSgd ? 0.1 : 0.05;
      auto model = TrainableModel::load(testing::linear_model(0.0f, 0.0f), o);
      const Data data(32);
      const TensorView x = data.x();
      const double before = model->evaluate({&x, 1}, data.y());
      for (int step = 0; step < 200; ++step) {
        model->accumulate({&x, 1}, data.y());
        model->step();
      }
      EXPECT_LT(model->evaluate({&x, 1}, data.y()), before / 20)
          << static_cast<int>(optimizer) << " " << static_cast<int>(loss);
    }
  }
}

// Data parallel: two ranks each take half the batch; their gradients, averaged (what one fused
// all-reduce does), then applied on both, give the parameters one rank gets from the full batch.
TEST(TrainableModel, AveragedHalfBatchGradientsEqualTheFullBatch) {
  TrainOptions o;  // Adam: its moments too must agree
  o.learning_rate = 0.01;
  auto whole = TrainableModel::load(testing::mlp_model(), o);
  auto rank0 = TrainableModel::load(testing::mlp_model(), o);
  auto rank1 = TrainableModel::load(testing::mlp_model(), o);
  const std::size_t n = whole->parameter_count();
  for (int step = 0; step < 5; ++step) {
    const MlpData full(step * 16, 16), first(step * 16, 8), second(step * 16 + 8, 8);
    const TensorView fx = full.x(), ax = first.x(), bx = second.x();
    whole->accumulate({&fx, 1}, full.y());
    rank0->accumulate({&ax, 1}, first.y());
    rank1->accumulate({&bx, 1}, second.y());
    std::vector<float> g0 = flat_gradients(*rank0), g1 = flat_gradients(*rank1);
    const std::vector<float> expected = flat_gradients(*whole);
    for (std::size_t i = 0; i < n; ++i) {
      g0[i] = 0.5f * (g0[i] + g1[i]);
      ASSERT_NEAR(g0[i], expected[i], 1e-6) << "step " << step << " gradient " << i;
    }
    rank0->set_gradients(g0);
    rank1->set_gradients(g0);
    whole->step();
    rank0->step();
    rank1->step();
  }
  const std::vector<float> p = flat_parameters(*whole), p0 = flat_parameters(*rank0),
                           p1 = flat_parameters(*rank1);
  for (std::size_t i = 0; i < n; ++i) {
    EXPECT_NEAR(p0[i], p[i], 1e-6) << i;
    EXPECT_EQ(p0[i], p1[i]) << i;  // the same gradients, the same updates
  }
}

TEST(TrainableModel, WeightsScaleTheGradientsAndZeroLeavesThemUnchanged) {
  auto model = TrainableModel::load(testing::mlp_model(), sgd(0.1));
  const MlpData data(0, 8);
  const TensorView x = data.x();
  model->accumulate({&x, 1}, data.y());
  const std::vector<float> once = flat_gradients(*model);
  const double loss = model->accumulate({&x, 1}, data.y(), 0.0);  // takes part, adds nothing
  EXPECT_GT(loss, 0);
  EXPECT_EQ(flat_gradients(*model), once);
  model->accumulate({&x, 1}, data.y(), 0.5);
  const std::vector<float> more = flat_gradients(*model);
  for (std::size_t i = 0; i < once.size(); ++i) EXPECT_NEAR(more[i], 1.5f * once[i], 1e-6);
  model->step();
  for (float g : flat_gradients(*model)) EXPECT_EQ(g, 0.0f);  // zeroed by the step
}

TEST(TrainableModel, ClippingBoundsTheUpdate) {
  TrainOptions o = sgd(1.0);
  o.clip_grad_norm = 0.1;
  auto model = TrainableModel::load(testing::linear_model(10.0f, -10.0f), o);
  const Data data(16);
  const TensorView x = data.x();
  model->accumulate({&x, 1}, data.y());
  EXPECT_GT(model->gradient_norm(), 1.0);
  const std::vector<float> before = flat_parameters(*model);
  model->step();
  const std::vector<float> after = flat_parameters(*model);
  double moved = 0;
  for (std::size_t i = 0; i < before.size(); ++i) moved += std::pow(after[i] - before[i], 2);
  EXPECT_LE(std::sqrt(moved), 0.1 + 1e-5);
  EXPECT_GT(std::sqrt(moved), 0.09);
}

TEST(TrainableModel, ParametersRoundTripThroughTheFlatViewAndSave) {
  auto model = TrainableModel::load(testing::mlp_model(), TrainOptions{});
  const MlpData data(0, 8);
  const TensorView x = data.x();
  for (int step = 0; step < 3; ++step) {
    model->accumulate({&x, 1}, data.y());
    model->step();
  }
  auto reloaded = TrainableModel::load(model->save(), TrainOptions{});
  EXPECT_EQ(flat_parameters(*reloaded), flat_parameters(*model));
  auto fresh = TrainableModel::load(testing::mlp_model(), TrainOptions{});
  fresh->set_parameters(flat_parameters(*model));  // a broadcast from rank 0
  EXPECT_EQ(flat_parameters(*fresh), flat_parameters(*model));
  EXPECT_DOUBLE_EQ(fresh->evaluate({&x, 1}, data.y()), model->evaluate({&x, 1}, data.y()));
}

// A checkpoint: the saved module and the optimiser's state, loaded into a new model, continue
// exactly as the original (Adam's moments and step count, and a decayed learning rate).
TEST(TrainableModel, OptimizerStateRoundTripsForCheckpoints) {
  for (OptimizerKind kind : {OptimizerKind::kAdam, OptimizerKind::kAdamW, OptimizerKind::kSgd}) {
    TrainOptions o;
    o.optimizer = kind;
    o.learning_rate = 0.01;
    o.momentum = kind == OptimizerKind::kSgd ? 0.9 : 0.0;
    auto model = TrainableModel::load(testing::mlp_model(), o);
    auto train = [](TrainableModel& m, int first) {
      const MlpData data(first, 8);
      const TensorView x = data.x();
      m.accumulate({&x, 1}, data.y());
      m.step();
    };
    for (int step = 0; step < 3; ++step) train(*model, step * 8);
    model->scale_learning_rate(0.5);
    auto resumed = TrainableModel::load(model->save(), o);
    resumed->load_optimizer_state(model->optimizer_state());
    EXPECT_DOUBLE_EQ(resumed->learning_rate(), 0.005);
    for (int step = 3; step < 6; ++step) {
      train(*model, step * 8);
      train(*resumed, step * 8);
    }
    EXPECT_EQ(flat_parameters(*resumed), flat_parameters(*model)) << static_cast<int>(kind);
    try {
      resumed->load_optimizer_state("not an optimiser state");
      ADD_FAILURE() << "garbage loaded";
    } catch (const TrainError& e) {
      EXPECT_NE(std::string(e.what()).find("optimiser state cannot be loaded"), std::string::npos);
    }
    train(*resumed, 0);  // still usable
  }
}

TEST(TrainableModel, ErrorsSayWhatIsWrongAndLeaveTheModelUsable) {
  auto fails_with = [](auto&& call, const std::string& text) {
    try {
      call();
      ADD_FAILURE() << "no error; expected one mentioning '" << text << "'";
    } catch (const TrainError& e) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  };
  fails_with([] { TrainableModel::load("not a model", TrainOptions{}); }, "cannot be loaded");
  fails_with([] { TrainableModel::load(testing::two_outputs_model(), TrainOptions{}); },
             "no parameters");
  fails_with([] { TrainableModel::load(testing::linear_model(1, 1), sgd(0)); }, "learning rate");
  TrainOptions adam_momentum;
  adam_momentum.momentum = 0.9;
  fails_with([&] { TrainableModel::load(testing::linear_model(1, 1), adam_momentum); }, "SGD");

  auto model = TrainableModel::load(testing::linear_model(1.0f, 0.0f), sgd(0.1));
  const Data data(8);
  const TensorView x = data.x();
  const std::vector<std::int64_t> wrong_shape{4, 2};
  const TensorView wrong_target{DType::kFloat32, wrong_shape, data.ys.data(), 8 * sizeof(float)};
  fails_with([&] { model->accumulate({&x, 1}, wrong_target); }, "shape [8, 1]");
  const std::vector<std::int64_t> wide{4, 2};
  const TensorView wide_input{DType::kFloat32, wide, data.xs.data(), 8 * sizeof(float)};
  fails_with([&] { model->accumulate({&wide_input, 1}, data.y()); }, "forward failed");
  fails_with([&] { model->set_parameters(std::vector<float>(3)); }, "the model has 2");
  for (float g : flat_gradients(*model)) EXPECT_EQ(g, 0.0f);  // nothing accumulated
  model->accumulate({&x, 1}, data.y());  // still trains
  model->step();
  EXPECT_LT(model->evaluate({&x, 1}, data.y()), 2.0);
}

}  // namespace
}  // namespace slipstream::ml
