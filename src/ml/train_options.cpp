// Optimiser and loss names; see train_options.hpp.
#include "ml/train_options.hpp"

#include <string>

#include "common/ascii.hpp"

namespace slipstream::ml {
std::optional<OptimizerKind> parse_optimizer(std::string_view name) {
  const std::string l = ascii_lower(name);
  if (l == "sgd") return OptimizerKind::kSgd;
  if (l == "adam") return OptimizerKind::kAdam;
  if (l == "adamw") return OptimizerKind::kAdamW;
  return std::nullopt;
}

std::optional<LossKind> parse_loss(std::string_view name) {
  const std::string l = ascii_lower(name);
  if (l == "mse") return LossKind::kMse;
  if (l == "l1") return LossKind::kL1;
  if (l == "script") return LossKind::kScript;
  return std::nullopt;
}

std::string_view optimizer_name(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::kSgd: return "sgd";
    case OptimizerKind::kAdam: return "adam";
    case OptimizerKind::kAdamW: break;
  }
  return "adamw";
}

std::string_view loss_name(LossKind kind) {
  switch (kind) {
    case LossKind::kMse: return "mse";
    case LossKind::kL1: return "l1";
    case LossKind::kScript: break;
  }
  return "script";
}

}  // namespace slipstream::ml
