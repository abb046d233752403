// `slipstream run EXPERIMENT.toml`: starts an experiment's servers, applications and trainers and
// watches them to the end (src/launch, docs/launcher.md); `--dry-run` prints where everything
// would run and exits. `slipstream status [RUN_DIR]`: a running (or ended) experiment's table.
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include "cli/commands.hpp"
#include "launch/experiment.hpp"
#include "launch/local_backend.hpp"
#include "launch/password.hpp"
#include "launch/placement.hpp"
#include "launch/batch_backend.hpp"

namespace slipstream::cli {
namespace {

namespace fs = std::filesystem;

std::string this_executable() {
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error);
  return error ? std::string("slipstream") : self.string();
}

int print_status(const std::string& run_dir) {
  const fs::path dir = run_dir.empty() ? fs::current_path() : fs::path(run_dir);
  std::ifstream in(dir / "status.txt");
  if (!in) {
    std::cerr << "slipstream status: " << dir.string()
              << " is not the run directory of an experiment (no status.txt)\n";
    return 1;
  }
  std::ostringstream text;
  text << in.rdbuf();
  std::cout << text.str();
  // Whether the launcher that writes it still runs (its pid is on the first line).
  std::ifstream json(dir / "status.json");
  std::string all((std::istreambuf_iterator<char>(json)), std::istreambuf_iterator<char>());
  const auto at = all.find("\"launcher_pid\": ");
  const bool running = all.find("\"state\": \"running\"") != std::string::npos;
  if (running && at != std::string::npos) {
    const long pid = std::stol(all.substr(at + 16));
    if (::kill(static_cast<pid_t>(pid), 0) != 0) {
      std::cout << "(the launcher, pid " << pid
                << ", is no longer running: this is its last status)\n";
    }
  }
  return 0;
}

}  // namespace

std::function<int()> add_run_command(CLI::App& app) {
  struct Settings {
    std::string file, run_dir;
    bool dry_run = false, overwrite = false, in_allocation = false;
  };
  auto settings = std::make_shared<Settings>();
  CLI::App* cmd = app.add_subcommand(
      "run", "Run an experiment: servers, ensembles and trainers from one TOML file "
             "(docs/launcher.md)");
  cmd->add_option("experiment", settings->file, "The experiment file")->required();
  cmd->add_flag("--dry-run", settings->dry_run,
                "Print the processes, where they run and what they are given, then exit");
  cmd->add_option("--run-dir", settings->run_dir,
                  "The run directory (default: the file's run_dir, else ./NAME)");
  cmd->add_flag("--overwrite", settings->overwrite,
                "Replace the run directory of an earlier run (a folder without the launcher's "
                ".slipstream-run marker is never removed)");
  cmd->add_flag("--in-allocation", settings->in_allocation,
                "Slurm, PBS: run inside the batch job `slipstream run` submitted, in the run directory "
                "it prepared (written into the job script; not for users)");
  return [settings]() -> int {
    launch::Experiment x = launch::load_experiment(settings->file);
    // A password file that is missing or empty stops the run before anything is made or submitted.
    launch::check_password(x);
    std::string run_dir = settings->run_dir.empty() ? x.run_dir : settings->run_dir;
    if (run_dir.empty()) run_dir = x.name;
    run_dir = fs::absolute(run_dir).lexically_normal().string();
    const std::string self = this_executable();
    const launch::Plan plan = launch::make_plan(x, self, run_dir, launch::plan_nodes(x));
    if (settings->dry_run) {
      std::cout << launch::describe(plan);
      return 0;
    }
    launch::RunOptions options;
    options.overwrite = settings->overwrite;
    options.progress = &std::cout;
    options.live_table = ::isatty(STDOUT_FILENO) == 1;
    options.slipstream_binary = self;
    if (x.backend != launch::Experiment::Backend::kLocal) {
      if (settings->in_allocation) {
        options.prepared_run_dir = true;
      } else if (!launch::inside_batch_job(x)) {
        return launch::submit_batch(x, settings->file, run_dir, options);
      }
      // Inside a job already (salloc, or a batch script of the user's): start from here.
    }
    return launch::run_local(x, plan, options);
  };
}

std::function<int()> add_status_command(CLI::App& app) {
  auto run_dir = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "status", "Print the status of an experiment started with `slipstream run`");
  cmd->add_option("run_dir", *run_dir, "Its run directory (default: the current directory)");
  return [run_dir]() -> int { return print_status(*run_dir); };
}

}  // namespace slipstream::cli
