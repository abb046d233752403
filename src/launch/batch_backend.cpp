// The batch back-ends (Slurm, PBS); see batch_backend.hpp and docs/launcher.md.
#include "launch/batch_backend.hpp"

#include "launch/run_program.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

namespace slipstream::launch {
namespace {

namespace fs = std::filesystem;

volatile sig_atomic_t g_stop_signal = 0;
void on_stop_signal(int number) { g_stop_signal = number; }

std::string trimmed(std::string text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  return text;
}

std::string shell_word(const std::string& word) {
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The experiment's exit status from the status.json its run left.
int exit_status_of(const std::string& run_dir) {
  std::ifstream in(run_dir + "/status.json");
  const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The experiment's own state is the first "state" of the file (the processes' come after).
  const std::string key = "\"state\": \"";
  const auto at = all.find(key);
  if (at == std::string::npos) return 1;
  const std::string state = all.substr(at + key.size(), all.find('"', at + key.size()) - at - key.size());
  return state == "done" ? 0 : state == "interrupted" ? 130 : 1;
}

}  // namespace

bool inside_batch_job(const Experiment& x) {
  const char* variable = x.backend == Experiment::Backend::kSlurm ? "SLURM_JOB_ID" : "PBS_JOBID";
  return x.backend != Experiment::Backend::kLocal && std::getenv(variable) != nullptr;
}

std::string batch_script_path(const Experiment& x, const std::string& run_dir) {
  return run_dir + (x.backend == Experiment::Backend::kSlurm ? "/job.sbatch" : "/job.pbs");
}

std::string batch_script(const Experiment& x, const std::string& file, const std::string& run_dir,
                         const std::string& slipstream_binary) {
  std::ostringstream s;
  s << "#!/bin/sh\n"
    << "# Written by slipstream run for experiment " << x.name << ": the launcher runs inside\n"
    << "# the job and starts every process of the experiment.\n";
  if (x.backend == Experiment::Backend::kSlurm) {
    s << "#SBATCH --job-name=" << x.name << "\n"
      << "#SBATCH --nodes=" << x.slurm.nodes << "\n"
      // The whole node: the experiment's steps share it (srun --overlap --overcommit).
      << "#SBATCH --exclusive\n"
      << "#SBATCH --time=" << x.slurm.time << "\n"
      << "#SBATCH --output=" << run_dir << "/slurm-%j.out\n"
      << "#SBATCH --chdir=" << run_dir << "\n";
    if (!x.slurm.partition.empty()) s << "#SBATCH --partition=" << x.slurm.partition << "\n";
    if (!x.slurm.account.empty()) s << "#SBATCH --account=" << x.slurm.account << "\n";
    for (const std::string& a : x.slurm.sbatch_args) s << "#SBATCH " << a << "\n";
  } else {
    s << "#PBS -N " << x.name.substr(0, 15) << "\n"  // PBS job names: at most 15 characters
      << "#PBS -l " << x.pbs.resources << "\n"
      << "#PBS -l walltime=" << x.pbs.walltime << "\n"
      << "#PBS -j oe\n"
      << "#PBS -o " << run_dir << "/pbs.out\n";
    if (!x.pbs.queue.empty()) s << "#PBS -q " << x.pbs.queue << "\n";
    if (!x.pbs.account.empty()) s << "#PBS -A " << x.pbs.account << "\n";
    for (const std::string& a : x.pbs.qsub_args) s << "#PBS " << a << "\n";
    s << "cd " << shell_word(run_dir) << " || exit 1\n";
  }
  s << "exec " << shell_word(slipstream_binary) << " run "
    << shell_word(fs::absolute(file).lexically_normal().string()) << " --run-dir "
    << shell_word(run_dir) << " --in-allocation\n";
  return s.str();
}

int submit_batch(const Experiment& x, const std::string& file, const std::string& run_dir,
                 const RunOptions& options) {
  std::ostream* out = options.progress;
  const bool slurm = x.backend == Experiment::Backend::kSlurm;
  make_run_dir(run_dir, options.overwrite);
  const std::string script = batch_script_path(x, run_dir);
  {
    std::ofstream f(script);
    f << batch_script(x, file, run_dir, options.slipstream_binary);
    if (!f) throw std::runtime_error("cannot write " + script);
  }
  const std::vector<std::string> submit =
      slurm ? std::vector<std::string>{"sbatch", "--parsable", script}
            : std::vector<std::string>{"qsub", script};
  std::pair<int, std::string> submitted;
  try {
    submitted = run_program(submit);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string(e.what()) + "; the job script is " + script +
                             " (submit it yourself where " + submit[0] + " is)");
  }
  if (submitted.first != 0) {
    throw std::runtime_error(submit[0] + " " + script + " failed (status " +
                             std::to_string(submitted.first) + ")");
  }
  // sbatch --parsable: "ID[;cluster]"; qsub: "ID.server".
  const std::string job = trimmed(submitted.second.substr(0, submitted.second.find(';')));
  if (out) *out << "submitted batch job " << job << " (" << script << ")" << std::endl;

  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  struct sigaction old_int {}, old_term {};
  ::sigaction(SIGINT, &action, &old_int);
  ::sigaction(SIGTERM, &action, &old_term);
  g_stop_signal = 0;
  bool signalled = false;
  std::size_t shown = 0;  // bytes of the job's output already printed
  // PBS copies the job's output when it ends; Slurm writes it as it comes.
  const std::string job_output = slurm ? run_dir + "/slurm-" + job + ".out" : run_dir + "/pbs.out";
  auto follow = [&] {
    std::ifstream in(job_output, std::ios::binary);
    if (!in) return;
    in.seekg(static_cast<std::streamoff>(shown));
    const std::string more((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    shown += more.size();
    if (out && !more.empty()) *out << more << std::flush;
  };
  while (true) {
    if (g_stop_signal != 0 && !signalled) {
      // The batch step is `slipstream run` itself: it stops the experiment in order.
      if (slurm) {
        run_program({"scancel", "--batch", "--signal=INT", job});
      } else {
        run_program({"qsig", "-s", "INT", job});
      }
      signalled = true;
    }
    // A job that has ended leaves the queue: squeue prints nothing, qstat fails.
    const auto [code, state] = slurm ? run_program({"squeue", "-h", "-j", job, "-o", "%T"})
                                     : run_program({"qstat", job});
    follow();
    if (code != 0 || (slurm && trimmed(state).empty())) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  follow();
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGTERM, &old_term, nullptr);
  return exit_status_of(run_dir);
}

}  // namespace slipstream::launch
