// SS.TRAIN.* commands: the reports of online trainers (trainer_reports.hpp).
#pragma once

#include <vector>

#include "server/commands/command_table.hpp"

namespace slipstream::server {

void add_train_commands(std::vector<CommandSpec>& out);

}  // namespace slipstream::server
