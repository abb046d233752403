// The names of optimisers and losses (the options themselves are public:
// slipstream/train_options.hpp). No torch: the trainer's config parses these without libtorch.
#pragma once

#include <optional>
#include <string_view>

#include "slipstream/train_options.hpp"

namespace slipstream::ml {

using train::LossKind;
using train::OptimizerKind;
using train::TrainOptions;

/// "sgd", "adam", "adamw" / "mse", "l1", "script" (case-insensitive); nullopt otherwise.
std::optional<OptimizerKind> parse_optimizer(std::string_view name);
std::optional<LossKind> parse_loss(std::string_view name);

std::string_view optimizer_name(OptimizerKind kind);
std::string_view loss_name(LossKind kind);

}  // namespace slipstream::ml
