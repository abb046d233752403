// Where the tensor keys are in RedisAI run commands, whose keys sit in counted or keyword-led
// sections that Redis's first/last/step key positions cannot describe. Shared by the server
// (MOVED / CROSSSLOT checks) and the client (cluster routing).
#pragma once

#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

namespace slipstream {

/// Positions in `args` (command name at 0) of the tensor keys of AI.MODELEXECUTE
/// (`key INPUTS n in... OUTPUTS m out... [TIMEOUT ms]`), AI.MODELRUN (`key [TIMEOUT ms] INPUTS
/// in... OUTPUTS out...`), AI.SCRIPTEXECUTE (`key fn [KEYS n k...] [INPUTS n in...] [ARGS n a...]
/// [OUTPUTS m out...] [TIMEOUT ms]`: KEYS, INPUTS and OUTPUTS) and AI.SCRIPTRUN (`key fn [TIMEOUT
/// ms] INPUTS in... OUTPUTS out...`). The model or script key itself is not included: models
/// and scripts are stored on every shard. Malformed arguments give the keys found up to the
/// problem (the command reports it). Empty for any other command.
std::vector<std::size_t> redisai_run_key_positions(std::span<const std::string_view> args);

}  // namespace slipstream
