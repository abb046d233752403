// The batch back-ends (Slurm, PBS) from outside a job: `slipstream run` writes a batch script into
// the run directory (RUN_DIR/job.sbatch or RUN_DIR/job.pbs), submits it (sbatch, qsub), and
// follows the job to its end; inside the job the script runs
// `slipstream run FILE --run-dir RUN_DIR --in-allocation`, which starts the processes with the
// local back-end's supervision: as job steps (srun) under Slurm, with mpiexec for MPI programs
// under PBS. Inside a job already (SLURM_JOB_ID or PBS_JOBID set), `slipstream run` starts them
// itself. See docs/launcher.md.
#pragma once

#include <string>

#include "launch/experiment.hpp"
#include "launch/local_backend.hpp"

namespace slipstream::launch {

/// True when this process runs inside a job of the experiment's batch system.
bool inside_batch_job(const Experiment& x);

/// The batch script for experiment file `file` (as given on the command line). Every value it
/// writes is checked: one with a control character (a newline would turn the rest of it into a
/// command of the job), or a blank in a value that is one word of a #SBATCH or #PBS line (the
/// run directory, account, partition, queue, time, resources), throws ConfigError naming the
/// setting. Paths on its command lines are shell-quoted.
std::string batch_script(const Experiment& x, const std::string& file, const std::string& run_dir,
                         const std::string& slipstream_binary);
/// Its path in the run directory.
std::string batch_script_path(const Experiment& x, const std::string& run_dir);

/// Checks the batch script's values (a refused one throws ConfigError before anything is made),
/// makes the run directory (run_dir.hpp), writes the batch script (owner-only), submits it and
/// waits for the job: its output is followed on `options.progress`; SIGINT/SIGTERM are passed to
/// the job's batch step (which stops the experiment in order). Returns the experiment's exit
/// status (from its status.json: 0 done, 1 failed, 130 interrupted), or 1 when the job ended
/// without one. Throws when the submission program is missing or refuses the script (which
/// stays written).
int submit_batch(const Experiment& x, const std::string& file, const std::string& run_dir,
                 const RunOptions& options);

}  // namespace slipstream::launch
