// `slipstream ml-worker`: a model worker process, started by the server (never by hand) to load,
// check and run models and scripts away from the server's memory (src/ml/sandbox).
#include <iostream>
#include <memory>

#include "cli/commands.hpp"
#include "ml/backend.hpp"
#include "ml/sandbox/worker.hpp"

namespace slipstream::cli {

std::function<int()> add_ml_worker_command(CLI::App& app) {
  struct Settings {
    int channel_fd = -1;
    long parent_pid = 0;
    int intra_op_threads = 0;
    int inter_op_threads = 0;
    bool no_syscall_filter = false;
  };
  auto settings = std::make_shared<Settings>();
  CLI::App* cmd = app.add_subcommand("ml-worker", "Model worker process (started by the server)");
  cmd->group("");  // not listed in --help: users never start it
  cmd->add_option("--channel-fd", settings->channel_fd, "Descriptor of the server's channel")
      ->required();
  cmd->add_option("--parent-pid", settings->parent_pid, "The server's pid");
  cmd->add_option("--intra-op-threads", settings->intra_op_threads, "Threads inside one run");
  cmd->add_option("--inter-op-threads", settings->inter_op_threads, "libtorch inter-op pool");
  cmd->add_flag("--no-syscall-filter", settings->no_syscall_filter,
                "Skip the system-call filter (debugging only)");
  return [settings]() -> int {
    auto backend = ml::make_torch_backend({.intra_op_threads = settings->intra_op_threads,
                                           .inter_op_threads = settings->inter_op_threads,
                                           .check_operators = true});
    try {
      return ml::sandbox::serve_worker(settings->channel_fd, *backend, [&] {
        return ml::sandbox::confine_worker(settings->channel_fd, settings->parent_pid,
                                           !settings->no_syscall_filter);
      });
    } catch (const std::exception& e) {
      std::cerr << "slipstream ml-worker: " << e.what() << "\n";
      return 2;
    }
  };
}

}  // namespace slipstream::cli
