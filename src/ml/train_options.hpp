// How a model is trained: optimiser, learning rate, loss, clipping. Plain data and name parsing,
// no torch: the trainer's config reads these without linking libtorch.
#pragma once

#include <optional>
#include <string_view>

namespace slipstream::ml {

enum class OptimizerKind { kSgd, kAdam, kAdamW };
enum class LossKind { kMse, kL1 };

/// "sgd", "adam", "adamw" / "mse", "l1" (case-insensitive); nullopt otherwise.
std::optional<OptimizerKind> parse_optimizer(std::string_view name);
std::optional<LossKind> parse_loss(std::string_view name);

struct TrainOptions {
  OptimizerKind optimizer = OptimizerKind::kAdam;
  double learning_rate = 1e-3;   ///< > 0
  double momentum = 0.0;         ///< SGD only, >= 0
  double weight_decay = 0.0;     ///< >= 0 (AdamW: decoupled)
  LossKind loss = LossKind::kMse;
  double clip_grad_norm = 0.0;   ///< > 0: the gradients' global L2 norm is clipped to it
};

std::string_view optimizer_name(OptimizerKind kind);
std::string_view loss_name(LossKind kind);

}  // namespace slipstream::ml
