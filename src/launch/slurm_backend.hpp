// The Slurm back-end from outside an allocation: `slipstream run` writes a batch script into the
// run directory (RUN_DIR/job.sbatch), submits it with sbatch, and follows the job to its end;
// inside the job the script runs `slipstream run FILE --run-dir RUN_DIR --in-allocation`, which
// starts every process as a job step (srun) with the local back-end's supervision. Inside an
// allocation already (SLURM_JOB_ID set), `slipstream run` starts the steps itself.
#pragma once

#include <ostream>
#include <string>

#include "launch/experiment.hpp"
#include "launch/local_backend.hpp"

namespace slipstream::launch {

/// The batch script for experiment file `file` (as given on the command line).
std::string batch_script(const Experiment& x, const std::string& file, const std::string& run_dir,
                         const std::string& slipstream_binary);

/// Submits the experiment and waits for its job: its output is followed on `options.progress`;
/// SIGINT/SIGTERM are passed to the job's batch step (which stops the experiment in order).
/// Returns the experiment's exit status (from its status.json: 0 done, 1 failed, 130
/// interrupted), or 1 when the job ended without one.
int submit_slurm(const Experiment& x, const std::string& file, const std::string& run_dir,
                 const RunOptions& options);

}  // namespace slipstream::launch
