// An experiment (`slipstream run experiment.toml`): the servers, applications (alone or as
// ensembles of members) and trainers of one workflow, read from a TOML file. Every key has a
// default except the ones named in docs/launcher.md; a wrong value is a ConfigError naming the
// file, the line, the table and the key. The file is only the description: placement.hpp turns it
// into the processes to start, and a back-end starts them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/config_error.hpp"

namespace slipstream::launch {

/// What happens when a process ends with a non-zero status, is killed, or hangs.
struct FailurePolicy {
  enum class Kind { kAbort, kRestart, kContinue };
  Kind kind = Kind::kAbort;  ///< abort: stop everything; restart: up to `restarts` times, then
                             ///< abort; continue: record the failure and go on
  int restarts = 0;
};

struct ServerSpec {
  enum class Mode { kStandalone, kCluster, kColocated };
  std::string name = "db";
  Mode mode = Mode::kStandalone;
  int shards = 1;                    ///< cluster: the number of shards; otherwise 1
  std::vector<std::string> options;  ///< more `slipstream server` options, as on its command line
  bool snapshot_at_end = false;      ///< SHUTDOWN SAVE (a dump.slip in its run directory)
  int line = 0;                      ///< where it is declared, for errors
};

/// How an application becomes members. Without an ensemble it is one member, named as the
/// application. Parameters are text, filled into `{name}` placeholders.
struct EnsembleSpec {
  enum class Kind { kNone, kGrid, kRandom, kReplicas };
  /// A parameter drawn at random: uniformly from [min, max] (integers when both are integers),
  /// or one of `choices`.
  struct Random {
    std::string name;
    double min = 0, max = 0;
    bool integer = false;
    std::vector<std::string> choices;
  };
  Kind kind = Kind::kNone;
  std::vector<std::pair<std::string, std::vector<std::string>>> grid;  ///< every combination
  std::vector<Random> random;
  int samples = 0;          ///< random: how many members
  std::uint64_t seed = 0;   ///< random: the generator's seed, so a run can be repeated
  int replicas = 0;         ///< replicas: how many identical members (they differ by {index})
};

/// What applications and trainers have in common.
struct ProcessSpec {
  std::string name;
  int ranks = 1;                            ///< more than 1: started with mpirun
  std::map<std::string, std::string> env;
  std::vector<std::string> after;           ///< start once these have ended successfully
  std::string server;                       ///< empty: the only server
  FailurePolicy on_failure;
  double timeout_seconds = 0;               ///< wall-clock limit of one run; 0: none
  double hang_seconds = 0;                  ///< no output for this long is a hang; 0: never
  std::vector<std::string> copy;            ///< files or folders copied into the run directory
  std::vector<std::string> link;            ///< ... symlinked into it
  int line = 0;                             ///< where it is declared, for errors
};

struct ApplicationSpec : ProcessSpec {
  std::string exe;                          ///< a path (relative to the file) or a name on PATH
  std::vector<std::string> args;
  std::map<std::string, std::string> params;  ///< fixed parameters for placeholders
  std::string workdir;                      ///< empty: the member's run directory
  std::vector<std::string> configure;       ///< files copied with their {placeholders} filled
  EnsembleSpec ensemble;
  bool key_prefix = false;                  ///< SSKEYOUT/SSKEYIN; default true for ensembles
  std::vector<std::string> reads;           ///< other members (or applications) it may read
};

struct TrainerSpec : ProcessSpec {
  /// The `slipstream train` config file. It is copied into the trainer's folder and run from
  /// there, so its relative paths name files in that folder (copied or linked there) or in the
  /// folders of other processes (`../prepare/model.pt`).
  std::string config;
};

struct Experiment {
  std::string name;
  std::string file;                     ///< the experiment file, as given
  std::string base_dir;                 ///< its folder: relative paths are relative to it
  std::string run_dir;                  ///< where the run's folders go (default base_dir/name)
  enum class Backend { kLocal, kSlurm, kPbs };
  Backend backend = Backend::kLocal;
  std::string mpirun = "mpirun";        ///< the MPI launcher of the local back-end
  std::vector<std::string> mpirun_args; ///< e.g. ["--oversubscribe"]
  /// The Slurm back-end: the batch job it submits, and the options of every job step.
  struct Slurm {
    int nodes = 1;
    std::string time = "01:00:00";
    std::string partition, account;
    std::vector<std::string> sbatch_args;  ///< more sbatch options
    std::vector<std::string> srun_args;    ///< more srun options, e.g. ["--mpi=pmix"]
  } slurm;
  /// The PBS back-end (PBS Pro, OpenPBS, Torque): the job script it writes and submits, and how
  /// MPI programs start inside the job.
  struct Pbs {
    std::string resources = "select=1:ncpus=1";  ///< the -l resource request
    std::string walltime = "01:00:00";
    std::string queue, account;
    std::vector<std::string> qsub_args;     ///< more #PBS lines
    std::string mpiexec = "mpiexec";
    std::vector<std::string> mpiexec_args;
  } pbs;
  /// The servers' password (password.hpp): none, the first line of `password_file`, or made
  /// anew for each run (`password = "generate"`). Never the password itself: a file holding it
  /// would be copied and committed with the experiment.
  struct Password {
    enum class Source { kNone, kFile, kGenerate };
    Source source = Source::kNone;
    std::string file;  ///< kFile: the file, relative paths resolved against base_dir
  } password;
  double stop_grace_seconds = 10;       ///< SIGTERM, then this long, then SIGKILL
  double server_start_seconds = 30;     ///< a server must answer PING within this
  double heartbeat_seconds = 2;         ///< how often servers are pinged and processes checked
  double status_every_seconds = 5;      ///< progress lines (0: only state changes)
  double metrics_every_seconds = 0.5;    ///< servers, trainers, streams, models sampled (0: off)
  bool report = true;                   ///< write RUN_DIR/report at the end
  std::vector<ServerSpec> servers;
  std::vector<ApplicationSpec> applications;
  std::vector<TrainerSpec> trainers;
};

/// Reads an experiment from TOML text; `origin` names it in errors and relative paths are resolved
/// against `base_dir`.
Experiment parse_experiment(std::string_view text, std::string_view origin,
                            const std::string& base_dir);
/// Reads an experiment file.
Experiment load_experiment(const std::string& path);

/// Fills `{name}` placeholders of `text` from `values`; `{{` and `}}` stand for braces. An unknown
/// name or an unclosed brace throws ConfigError with `where` in front.
std::string fill_placeholders(std::string_view text, const std::map<std::string, std::string>& values,
                              const std::string& where);

}  // namespace slipstream::launch
