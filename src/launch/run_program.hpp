// Running a helper program of a batch system (sbatch, squeue, qsub, scontrol ...) and reading
// its standard output.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace slipstream::launch {

/// Runs `argv` (the program found on PATH) with this process's environment and returns its exit
/// status (128 + signal when killed) and standard output. Throws when it cannot be started.
std::pair<int, std::string> run_program(const std::vector<std::string>& argv);

}  // namespace slipstream::launch
