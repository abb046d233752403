// The local back-end: starts a plan's processes on this machine (MPI applications and trainers
// through mpirun), watches them, applies their failure policies and stops everything at the end,
// servers last. The run directory then holds each process's folder and logs, plan.txt, and
// status.txt / status.json (rewritten while it runs; `slipstream status` prints them), all
// owner-only (run_dir.hpp).
#pragma once

#include <ostream>
#include <string>

#include "launch/experiment.hpp"
#include "launch/placement.hpp"

namespace slipstream::launch {

struct RunOptions {
  /// A run directory left by an earlier run (it holds the launcher's marker, see run_dir.hpp) is
  /// removed first; any other existing folder is never touched.
  bool overwrite = false;
  /// The run directory was made by `slipstream run` before it submitted the batch job that runs
  /// this (it holds the job script, no status yet): use it as it is.
  bool prepared_run_dir = false;
  std::ostream* progress = nullptr;  ///< events and status lines; nullptr: quiet
  /// `progress` is a terminal: keep a table of the processes and the latest metrics redrawn
  /// under the event lines, instead of status lines.
  bool live_table = false;
  /// The slipstream program: the report generator is found from it (SHARE/slipstream).
  std::string slipstream_binary;
};

/// Runs the plan to its end. Returns 0 when every application and trainer ended successfully
/// (after restarts), 1 when one failed, 130 after SIGINT/SIGTERM. Throws for what stops it from
/// starting (a run directory that cannot be made, an input file that cannot be copied).
int run_local(const Experiment& x, const Plan& plan, const RunOptions& options);

}  // namespace slipstream::launch
