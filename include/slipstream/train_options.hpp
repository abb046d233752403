// How a model is trained: optimiser, learning rate, loss, clipping. Plain data: the trainer's
// config (src/train/train_config.*) fills it without libtorch, and slipstream::train::Model
// (training.hpp) takes it.
#pragma once

namespace slipstream::train {

enum class OptimizerKind { kSgd, kAdam, kAdamW };
enum class LossKind { kMse, kL1 };

struct TrainOptions {
  OptimizerKind optimizer = OptimizerKind::kAdam;
  double learning_rate = 1e-3;   ///< > 0
  double momentum = 0.0;         ///< SGD only, >= 0
  double weight_decay = 0.0;     ///< >= 0 (AdamW: decoupled)
  LossKind loss = LossKind::kMse;
  double clip_grad_norm = 0.0;   ///< > 0: the gradients' global L2 norm is clipped to it
};

}  // namespace slipstream::train
