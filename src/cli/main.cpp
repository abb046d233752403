// Entry point of the `slipstream` command: dispatches to its subcommands.
#include <spdlog/spdlog.h>

#include <csignal>
#include <iostream>

#include "cli/commands.hpp"

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);  // a peer that goes away is an I/O error, not a fatal signal
  CLI::App app{"slipstream: in-memory coupling of HPC simulations and machine learning"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "slipstream 0.1.0");
  auto run_server = slipstream::cli::add_server_command(app);
  auto run_commands = slipstream::cli::add_commands_command(app);
  auto run_ml_worker = slipstream::cli::add_ml_worker_command(app);
  auto run_stream = slipstream::cli::add_stream_command(app);
  auto run_train = slipstream::cli::add_train_command(app);
  auto run_run = slipstream::cli::add_run_command(app);
  auto run_status = slipstream::cli::add_status_command(app);
  auto run_wait_ready = slipstream::cli::add_wait_ready_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    if (app.got_subcommand("server")) return run_server();
    if (app.got_subcommand("commands")) return run_commands();
    if (app.got_subcommand("ml-worker")) return run_ml_worker();
    if (app.got_subcommand("stream")) return run_stream();
    if (app.got_subcommand("train")) return run_train();
    if (app.got_subcommand("run")) return run_run();
    if (app.got_subcommand("status")) return run_status();
    if (app.got_subcommand("wait-ready")) return run_wait_ready();
  } catch (const std::exception& e) {
    // Once: the server's (and its workers') go to the log, which may be a file; the tools' to
    // standard error as a plain line.
    if (app.got_subcommand("server") || app.got_subcommand("ml-worker")) {
      spdlog::critical("{}", e.what());
    } else {
      std::cerr << "slipstream: " << e.what() << "\n";
    }
    return 1;
  }
  return 0;
}
