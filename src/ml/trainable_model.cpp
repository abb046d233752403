// TrainableModel over libtorch: the module's parameters, torch::optim and the losses. See
// trainable_model.hpp.
#include "ml/trainable_model.hpp"

#include <ATen/ops/from_blob.h>
#include <ATen/ops/full.h>
#include <ATen/ops/l1_loss.h>
#include <ATen/ops/mse_loss.h>
#include <ATen/ops/zeros_like.h>
#include <torch/csrc/api/include/torch/optim/adam.h>
#include <torch/csrc/api/include/torch/optim/adamw.h>
#include <torch/csrc/api/include/torch/optim/sgd.h>
#include <torch/csrc/api/include/torch/serialize/input-archive.h>
#include <torch/csrc/api/include/torch/serialize/output-archive.h>
#include <torch/csrc/autograd/grad_mode.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/serialization/import.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <sstream>

#include "ml/torch_interop.hpp"

namespace slipstream::ml {
namespace {

void check_options(const TrainOptions& o) {
  auto bad = [](double v) { return !std::isfinite(v) || v < 0; };
  if (!std::isfinite(o.learning_rate) || o.learning_rate <= 0) {
    throw TrainError("learning rate must be a positive number, got " +
                     std::to_string(o.learning_rate));
  }
  if (bad(o.momentum)) throw TrainError("momentum must be 0 or more");
  if (bad(o.weight_decay)) throw TrainError("weight decay must be 0 or more");
  if (bad(o.clip_grad_norm)) throw TrainError("gradient clipping norm must be 0 (off) or more");
  if (o.momentum > 0 && o.optimizer != OptimizerKind::kSgd) {
    throw TrainError("momentum is an SGD option (Adam and AdamW keep their own moments)");
  }
}

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const std::vector<at::Tensor>& params,
                                                        const TrainOptions& o) {
  switch (o.optimizer) {
    case OptimizerKind::kSgd:
      return std::make_unique<torch::optim::SGD>(
          params, torch::optim::SGDOptions(o.learning_rate)
                      .momentum(o.momentum)
                      .weight_decay(o.weight_decay));
    case OptimizerKind::kAdam:
      return std::make_unique<torch::optim::Adam>(
          params, torch::optim::AdamOptions(o.learning_rate).weight_decay(o.weight_decay));
    case OptimizerKind::kAdamW:
      break;
  }
  return std::make_unique<torch::optim::AdamW>(
      params, torch::optim::AdamWOptions(o.learning_rate).weight_decay(o.weight_decay));
}

constexpr const char* kLearningRateKey = "slipstream_learning_rate";

}  // namespace

struct TrainableModel::State {
  torch::jit::Module module;
  std::vector<at::Tensor> params;
  std::size_t count = 0;
  TrainOptions options;
  std::optional<torch::jit::Module> loss_module;  // LossKind::kScript
  std::unique_ptr<torch::optim::Optimizer> optimizer;

  // forward(inputs) and the loss against `target`, with or without autograd.
  std::pair<at::Tensor, double> loss(std::span<const TensorView> inputs, const TensorView& target) {
    std::vector<at::Tensor> tensors, targets;
    if (Status s = wrap_inputs(inputs, c10::Device(c10::DeviceType::CPU), tensors); !s.ok) {
      throw TrainError("inputs: " + s.message);
    }
    if (Status s = wrap_inputs({&target, 1}, c10::Device(c10::DeviceType::CPU), targets); !s.ok) {
      throw TrainError("target: " + s.message);
    }
    try {
      std::vector<c10::IValue> args(tensors.begin(), tensors.end());
      c10::IValue result = module.forward(args);
      if (!result.isTensor()) {
        throw TrainError("forward returned a " + std::string(result.tagKind()) +
                         "; training needs one tensor to compare with the target");
      }
      at::Tensor out = result.toTensor();
      if (loss_module) return scripted_loss(out, targets[0]);
      if (out.sizes() != targets[0].sizes()) {
        throw TrainError("the model's output has shape " +
                         shape_text(std::span<const std::int64_t>(out.sizes().data(), out.sizes().size())) +
                         " and the target " + shape_text(target.shape));
      }
      at::Tensor expected = targets[0].to(out.scalar_type());
      at::Tensor value = options.loss == LossKind::kMse ? at::mse_loss(out, expected)
                                                        : at::l1_loss(out, expected);
      return {value, value.item<double>()};
    } catch (const TrainError&) {
      throw;
    } catch (const std::exception& e) {
      throw TrainError("forward failed: " + describe(e));
    }
  }

  // The user's loss module on the output and the target as they are.
  std::pair<at::Tensor, double> scripted_loss(const at::Tensor& out, const at::Tensor& target) {
    c10::IValue result;
    try {
      result = loss_module->forward({out, target});
    } catch (const std::exception& e) {
      throw TrainError("the loss module failed: " + describe(e));
    }
    if (!result.isTensor() || result.toTensor().numel() != 1) {
      throw TrainError(std::string("the loss module returned ") +
                       (result.isTensor() ? "a tensor of shape " +
                                                shape_text(std::span<const std::int64_t>(
                                                result.toTensor().sizes().data(),
                                                result.toTensor().sizes().size()))
                                          : "a " + std::string(result.tagKind())) +
                       "; it must return the loss as a one-element tensor");
    }
    at::Tensor value = result.toTensor().reshape({}).to(at::kDouble);
    if (c10::GradMode::is_enabled() && !value.requires_grad()) {
      throw TrainError("the loss module's result does not depend on the model's output (no "
                       "gradient flows back through it)");
    }
    return {value, value.item<double>()};
  }

  // Each parameter's slice of a flat buffer of `count` floats.
  template <typename Visit>
  void each(Visit&& visit) const {
    std::size_t offset = 0;
    for (const at::Tensor& p : params) {
      const auto n = static_cast<std::size_t>(p.numel());
      visit(p, offset, n);
      offset += n;
    }
  }
  void check_length(std::size_t n, const char* what) const {
    if (n != count) {
      throw TrainError(std::string(what) + ": " + std::to_string(n) + " values given, the model has " +
                       std::to_string(count) + " parameters");
    }
  }
};

TrainableModel::TrainableModel(std::unique_ptr<State> state) : state_(std::move(state)) {}
TrainableModel::~TrainableModel() = default;

std::unique_ptr<TrainableModel> TrainableModel::load(std::string_view archive,
                                                     const TrainOptions& options) {
  check_options(options);
  auto state = std::make_unique<State>();
  state->options = options;
  try {
    state->module = load_checked_module(archive);
  } catch (const std::exception& e) {
    throw TrainError("the model cannot be loaded: " + describe(e));
  }
  state->module.train(true);
  if (options.loss == LossKind::kScript) {
    try {
      state->loss_module = load_checked_module(options.loss_module);
    } catch (const std::exception& e) {
      throw TrainError("the loss module cannot be loaded: " + describe(e));
    }
    if (!state->loss_module->find_method("forward")) {
      throw TrainError("the loss module has no forward method");
    }
  }
  for (const auto& named : state->module.named_parameters(/*recurse=*/true)) {
    at::Tensor p = named.value;
    if (p.scalar_type() != at::kFloat) {
      throw TrainError("parameter " + named.name + " is " +
                       std::string(c10::toString(p.scalar_type())) +
                       "; trainable parameters must be FLOAT (float32)");
    }
    p.requires_grad_(true);
    state->params.push_back(p);
    state->count += static_cast<std::size_t>(p.numel());
  }
  if (state->params.empty()) throw TrainError("the model has no parameters to train");
  state->optimizer = make_optimizer(state->params, options);
  return std::unique_ptr<TrainableModel>(new TrainableModel(std::move(state)));
}

double TrainableModel::accumulate(std::span<const TensorView> inputs, const TensorView& target,
                                  double weight) {
  if (!std::isfinite(weight) || weight < 0) throw TrainError("weight must be 0 or more");
  torch::AutoGradMode grad(true);
  auto [loss, value] = state_->loss(inputs, target);
  if (weight > 0) {
    try {
      (loss * weight).backward();
    } catch (const std::exception& e) {
      throw TrainError("backward failed: " + describe(e));
    }
  }
  return value;
}

// Evaluation mode (dropout off, batch-norm statistics used, not updated) for the length of a
// call that does not train.
class EvalMode {
 public:
  explicit EvalMode(torch::jit::Module& module) : module_(module) { module_.eval(); }
  ~EvalMode() { module_.train(true); }
  EvalMode(const EvalMode&) = delete;
  EvalMode& operator=(const EvalMode&) = delete;

 private:
  torch::jit::Module& module_;
};

double TrainableModel::evaluate(std::span<const TensorView> inputs, const TensorView& target) {
  torch::NoGradGuard no_grad;
  EvalMode eval(state_->module);
  return state_->loss(inputs, target).second;
}

std::vector<OwnedTensor> TrainableModel::predict(std::span<const TensorView> inputs) {
  torch::NoGradGuard no_grad;
  EvalMode eval(state_->module);
  std::vector<at::Tensor> tensors;
  if (Status s = wrap_inputs(inputs, c10::Device(c10::DeviceType::CPU), tensors); !s.ok) {
    throw TrainError("inputs: " + s.message);
  }
  std::vector<OwnedTensor> outputs;
  try {
    std::vector<c10::IValue> args(tensors.begin(), tensors.end());
    if (Status s = copy_outputs(state_->module.forward(args), outputs); !s.ok) {
      throw TrainError(s.message);
    }
  } catch (const TrainError&) {
    throw;
  } catch (const std::exception& e) {
    throw TrainError("forward failed: " + describe(e));
  }
  return outputs;
}

std::size_t TrainableModel::parameter_count() const noexcept { return state_->count; }

void TrainableModel::gradients(std::span<float> out) const {
  state_->check_length(out.size(), "gradients");
  state_->each([&](const at::Tensor& p, std::size_t offset, std::size_t n) {
    const at::Tensor& g = p.grad();
    if (!g.defined()) {
      std::fill_n(out.data() + offset, n, 0.0f);
      return;
    }
    const at::Tensor flat = g.contiguous();
    std::memcpy(out.data() + offset, flat.data_ptr<float>(), n * sizeof(float));
  });
}

void TrainableModel::set_gradients(std::span<const float> in) {
  state_->check_length(in.size(), "set_gradients");
  torch::NoGradGuard no_grad;
  state_->each([&](const at::Tensor& p, std::size_t offset, std::size_t n) {
    at::Tensor& g = const_cast<at::Tensor&>(p).mutable_grad();
    if (!g.defined()) g = at::zeros_like(p);
    g.copy_(at::from_blob(const_cast<float*>(in.data() + offset),
                          {static_cast<std::int64_t>(n)}, at::kFloat)
                .view_as(p));
  });
}

void TrainableModel::parameters(std::span<float> out) const {
  state_->check_length(out.size(), "parameters");
  state_->each([&](const at::Tensor& p, std::size_t offset, std::size_t n) {
    const at::Tensor flat = p.detach().contiguous();
    std::memcpy(out.data() + offset, flat.data_ptr<float>(), n * sizeof(float));
  });
}

void TrainableModel::set_parameters(std::span<const float> in) {
  state_->check_length(in.size(), "set_parameters");
  torch::NoGradGuard no_grad;
  state_->each([&](const at::Tensor& p, std::size_t offset, std::size_t n) {
    const_cast<at::Tensor&>(p).copy_(at::from_blob(const_cast<float*>(in.data() + offset),
                                                   {static_cast<std::int64_t>(n)}, at::kFloat)
                                         .view_as(p));
  });
}

double TrainableModel::gradient_norm() const {
  double sum = 0;
  for (const at::Tensor& p : state_->params) {
    if (p.grad().defined()) sum += p.grad().to(at::kDouble).pow(2).sum().item<double>();
  }
  return std::sqrt(sum);
}

void TrainableModel::step() {
  try {
    // Clipping by the global norm, as torch.nn.utils.clip_grad_norm_ does it.
    const double clip = state_->options.clip_grad_norm;
    if (clip > 0) {
      const double norm = gradient_norm();
      if (norm > clip) {
        torch::NoGradGuard no_grad;
        const double factor = clip / (norm + 1e-6);
        for (const at::Tensor& p : state_->params) {
          if (p.grad().defined()) const_cast<at::Tensor&>(p).mutable_grad().mul_(factor);
        }
      }
    }
    state_->optimizer->step();
    state_->optimizer->zero_grad();
  } catch (const std::exception& e) {
    throw TrainError("optimiser step failed: " + describe(e));
  }
}

void TrainableModel::scale_learning_rate(double factor) {
  if (!std::isfinite(factor) || factor <= 0) throw TrainError("learning-rate factor must be > 0");
  for (auto& group : state_->optimizer->param_groups()) {
    group.options().set_lr(group.options().get_lr() * factor);
  }
  state_->options.learning_rate *= factor;
}

double TrainableModel::learning_rate() const noexcept { return state_->options.learning_rate; }

std::string TrainableModel::save() const {
  std::ostringstream out;
  state_->module.save(out);
  return out.str();
}

std::string TrainableModel::optimizer_state() const {
  torch::serialize::OutputArchive archive;
  state_->optimizer->save(archive);
  // libtorch keeps the moments but not the options: the learning rate (scaled, decayed) goes too.
  archive.write(kLearningRateKey,
                at::full({1}, state_->options.learning_rate, at::TensorOptions(at::kDouble)));
  std::ostringstream out;
  archive.save_to(out);
  return out.str();
}

void TrainableModel::load_optimizer_state(std::string_view bytes) {
  // Loaded into a fresh optimiser first, so that a bad state leaves this one as it was.
  std::unique_ptr<torch::optim::Optimizer> loaded = make_optimizer(state_->params, state_->options);
  double learning_rate = 0;
  try {
    torch::serialize::InputArchive archive;
    std::istringstream in{std::string(bytes)};
    archive.load_from(in);
    loaded->load(archive);
    at::Tensor rate;
    archive.read(kLearningRateKey, rate);
    learning_rate = rate.item<double>();
  } catch (const std::exception& e) {
    throw TrainError("the optimiser state cannot be loaded: " + describe(e));
  }
  if (!std::isfinite(learning_rate) || learning_rate <= 0) {
    throw TrainError("the optimiser state cannot be loaded: its learning rate is " +
                     std::to_string(learning_rate));
  }
  for (auto& group : loaded->param_groups()) group.options().set_lr(learning_rate);
  state_->optimizer = std::move(loaded);
  state_->options.learning_rate = learning_rate;
}

}  // namespace slipstream::ml
