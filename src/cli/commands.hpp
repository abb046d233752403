// Subcommands of the `slipstream` executable; each registers its options on the CLI11 app.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace slipstream::cli {

/// Adds `slipstream server`; the returned function runs it (after parsing) and gives the exit code.
std::function<int()> add_server_command(CLI::App& app);
/// Adds `slipstream commands` (the command reference as Markdown).
std::function<int()> add_commands_command(CLI::App& app);
/// Adds the hidden `slipstream ml-worker`, the model worker process the server starts.
std::function<int()> add_ml_worker_command(CLI::App& app);
/// Adds `slipstream stream info|dump|replay` (a stream's state; openPMD HDF5 files).
std::function<int()> add_stream_command(CLI::App& app);
/// Adds `slipstream train CONFIG` (runs the trainer, slipstream-train).
std::function<int()> add_train_command(CLI::App& app);

/// Adds `slipstream run EXPERIMENT` (the launcher, src/launch).
std::function<int()> add_run_command(CLI::App& app);
/// Adds `slipstream wait-ready [ADDRESS]` (returns once a server answers PING).
std::function<int()> add_wait_ready_command(CLI::App& app);
/// Adds `slipstream status [RUN_DIR]` (an experiment's status table).
std::function<int()> add_status_command(CLI::App& app);

}  // namespace slipstream::cli
