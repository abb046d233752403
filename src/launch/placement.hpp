// Placement: an experiment turned, once, into the processes to start (servers' shards, ensemble
// members, trainers), with their commands, environments, run directories, nodes and the order
// they start in. Every back-end starts the same plan; `slipstream run --dry-run` prints it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "launch/experiment.hpp"

namespace slipstream::launch {

struct ProcessPlan {
  enum class Kind { kServer, kApplication, kTrainer };
  Kind kind = Kind::kApplication;
  std::string name;         ///< unique in the experiment: a server shard, a member, a trainer
  std::string group;        ///< the [[server]], [[application]] or [[trainer]] it comes from
  int index = 0;            ///< the shard's or member's position in its group
  std::string node = "localhost";
  int ranks = 1;
  /// The command. Servers: `slipstream server` with the user's options; the back-end adds the
  /// port, the snapshot folder and the cluster's members it chose. Others: the whole command,
  /// mpirun and its options included when ranks > 1.
  std::vector<std::string> argv;
  /// Environment the launcher sets, on top of its own: the user's `env`, SSKEYIN and SSKEYOUT.
  /// SSDB (the server's addresses) is added when the servers have started.
  std::map<std::string, std::string> env;
  std::vector<std::string> exported;  ///< names passed to mpirun with -x (ranks > 1)
  std::string run_dir;      ///< the process's own folder: logs, copied inputs, snapshots
  /// Servers: the Unix socket a colocated server also listens on, which the processes of its
  /// node reach it through (SSDB), with shared memory; empty for the others.
  std::string unix_socket;
  std::string workdir;      ///< where it runs (its run_dir unless the file says otherwise)
  std::map<std::string, std::string> params;  ///< the member's placeholders
  std::vector<std::string> copy, link, configure;
  std::vector<std::string> after;  ///< processes that must end successfully first
  std::string server;              ///< the server group it talks to ("" for none)
  /// Colocated servers: the shard on this process's node, which it talks to (through SSDB).
  std::string server_shard;
  FailurePolicy on_failure;
  double timeout_seconds = 0;
  double hang_seconds = 0;
};

struct Plan {
  std::string experiment;
  std::string run_dir;
  std::vector<std::string> nodes;      ///< where processes run; more than one: addresses by name
  /// With a password (password.hpp): RUN_DIR/password, which the servers read
  /// (`--requirepass-file`); the back-end writes it and gives every other process the password
  /// in SLIPSTREAM_PASSWORD. Empty without one.
  std::string password_file;
  /// The experiment sets no password but its servers span several nodes (they listen on every
  /// interface, and refuse other hosts' peers without one): the run makes one, as with
  /// `password = "generate"`.
  bool password_generated = false;
  std::vector<ProcessPlan> processes;  ///< servers first, then in the file's order

  const ProcessPlan* find(const std::string& name) const;
  /// The shards of server group `server`, in order.
  std::vector<const ProcessPlan*> shards(const std::string& server) const;
};

/// Expands `x` into its processes and places them on `nodes` (host names; one for the local and
/// PBS back-ends): a standalone server on the first node, a cluster's shards spread over the
/// nodes in turn, a colocated server one shard per node; members and trainers spread over the
/// nodes in turn, each talking to its own node's colocated shard. `slipstream_binary` is the
/// program servers and trainers run (this executable); `run_dir` the experiment's folder.
/// Throws ConfigError for placeholders, dependencies (unknown, circular) and reads that cannot be
/// honoured.
Plan make_plan(const Experiment& x, const std::string& slipstream_binary, const std::string& run_dir,
               const std::vector<std::string>& nodes = {"localhost"});

/// The nodes a plan is made for: inside a Slurm job, its nodes (`scontrol show hostnames`);
/// for a Slurm plan made outside one (--dry-run), `[slurm] nodes` placeholders node0, node1, ...;
/// otherwise this machine.
std::vector<std::string> plan_nodes(const Experiment& x);

/// The plan as text: each process, where it runs, its command and what the launcher sets. It
/// shows no password: the value of `--requirepass VALUE` or `--requirepass=VALUE` in a command,
/// of an environment variable whose name holds PASSWORD (SLIPSTREAM_PASSWORD), and a parameter
/// with one of those values are written as `***`. The run's own password (Plan::password_file)
/// is never in the plan: the servers are shown reading its file, the others getting
/// `SLIPSTREAM_PASSWORD=***`.
std::string describe(const Plan& plan);

}  // namespace slipstream::launch
