// How a model is trained: optimiser, learning rate, loss, clipping. Plain data: the trainer's
// config (src/train/train_config.*) fills it without libtorch, and slipstream::train::Model
// (training.hpp) takes it.
#pragma once

#include <string>

namespace slipstream::train {

enum class OptimizerKind { kSgd, kAdam, kAdamW };
/// kScript: the user's TorchScript loss (TrainOptions::loss_module).
enum class LossKind { kMse, kL1, kScript };

struct TrainOptions {
  OptimizerKind optimizer = OptimizerKind::kAdam;
  double learning_rate = 1e-3;   ///< > 0
  double momentum = 0.0;         ///< SGD only, >= 0
  double weight_decay = 0.0;     ///< >= 0 (AdamW: decoupled)
  LossKind loss = LossKind::kMse;
  /// For LossKind::kScript: a TorchScript module (torch.jit.save bytes) whose forward(output,
  /// target) returns the loss as a one-element tensor. output and target reach it as they are
  /// (no shape check, the target's dtype kept: class indices for a cross entropy, say).
  std::string loss_module;
  double clip_grad_norm = 0.0;   ///< > 0: the gradients' global L2 norm is clipped to it
};

}  // namespace slipstream::train
