// The batch back-ends (Slurm, PBS); see batch_backend.hpp and docs/launcher.md.
#include "launch/batch_backend.hpp"

#include "launch/run_dir.hpp"
#include "launch/run_program.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>
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

bool is_control(unsigned char c) { return c < 0x20 || c == 0x7f; }

std::string control_name(unsigned char c) {
  switch (c) {
    case '\n': return "a newline";
    case '\r': return "a carriage return";
    case '\t': return "a tab";
    case '\0': return "a NUL byte";
    default: {
      char text[40];
      std::snprintf(text, sizeof text, "the control character 0x%02x", c);
      return text;
    }
  }
}

// The value as it can be shown in one line of an error message: control characters escaped.
std::string visible(std::string_view value) {
  std::string out;
  for (unsigned char c : value) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (is_control(c)) {
      char code[8];
      std::snprintf(code, sizeof code, "\\x%02x", c);
      out += code;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

// What may be written into the batch script. The script is read by the shell and, for its
// directive lines (#SBATCH, #PBS), by sbatch or qsub, so:
// 1. no value may hold a control character: a newline (or a carriage return) would end the
//    directive or comment it is written in and make the rest a shell command of the job;
// 2. a value that is one word of a directive line (`#SBATCH --account=VALUE`, `#PBS -q VALUE`)
//    may hold no blank either: the batch system splits directive lines at blanks, so a blank
//    would start another option;
// 3. values on the script's command lines (`cd`, `exec`) are shell-quoted as well.
// A refused value is a ConfigError naming the experiment file and the setting.
class ScriptValues {
 public:
  ScriptValues(const Experiment& x, std::string script) : x_(x), script_(std::move(script)) {}

  /// `value` of `setting`, checked for rule 1.
  const std::string& line(const char* setting, const std::string& value) const {
    for (unsigned char c : value) {
      if (is_control(c)) {
        refuse(setting, value,
               "contains " + control_name(c) + ": a value written into the batch script " +
                   script_ + " must be one line without control characters (a newline would " +
                   "make the rest of it a command of the job)");
      }
    }
    return value;
  }

  /// `value` of `setting`, checked for rules 1 and 2.
  const std::string& word(const char* setting, const std::string& value) const {
    line(setting, value);
    if (value.find(' ') != std::string::npos) {
      refuse(setting, value,
             "contains a blank: it is one word of a directive line of the batch script " +
                 script_ + ", where a blank would start another option");
    }
    return value;
  }

 private:
  [[noreturn]] void refuse(const char* setting, const std::string& value,
                           const std::string& problem) const {
    throw ConfigError(x_.file + ": " + setting + " \"" + visible(value) + "\" " + problem);
  }

  const Experiment& x_;
  std::string script_;
};

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
  const ScriptValues v(x, fs::path(batch_script_path(x, run_dir)).filename().string());
  const std::string& name = v.word("[experiment] name", x.name);
  // From --run-dir, [experiment] run_dir or the name.
  const std::string& dir = v.word("the run directory", run_dir);
  std::ostringstream s;
  s << "#!/bin/sh\n"
    << "# Written by slipstream run for experiment " << name << ": the launcher runs inside\n"
    << "# the job and starts every process of the experiment.\n";
  if (x.backend == Experiment::Backend::kSlurm) {
    s << "#SBATCH --job-name=" << name << "\n"
      << "#SBATCH --nodes=" << x.slurm.nodes << "\n"
      // The whole node: the experiment's steps share it (srun --overlap --overcommit).
      << "#SBATCH --exclusive\n"
      << "#SBATCH --time=" << v.word("[slurm] time", x.slurm.time) << "\n"
      << "#SBATCH --output=" << dir << "/slurm-%j.out\n"
      << "#SBATCH --chdir=" << dir << "\n";
    if (!x.slurm.partition.empty()) {
      s << "#SBATCH --partition=" << v.word("[slurm] partition", x.slurm.partition) << "\n";
    }
    if (!x.slurm.account.empty()) {
      s << "#SBATCH --account=" << v.word("[slurm] account", x.slurm.account) << "\n";
    }
    for (const std::string& a : x.slurm.sbatch_args) {
      s << "#SBATCH " << v.line("[slurm] sbatch_args", a) << "\n";
    }
  } else {
    s << "#PBS -N " << name.substr(0, 15) << "\n"  // PBS job names: at most 15 characters
      << "#PBS -l " << v.word("[pbs] resources", x.pbs.resources) << "\n"
      << "#PBS -l walltime=" << v.word("[pbs] walltime", x.pbs.walltime) << "\n"
      << "#PBS -j oe\n"
      << "#PBS -o " << dir << "/pbs.out\n";
    if (!x.pbs.queue.empty()) s << "#PBS -q " << v.word("[pbs] queue", x.pbs.queue) << "\n";
    if (!x.pbs.account.empty()) s << "#PBS -A " << v.word("[pbs] account", x.pbs.account) << "\n";
    for (const std::string& a : x.pbs.qsub_args) {
      s << "#PBS " << v.line("[pbs] qsub_args", a) << "\n";
    }
    s << "cd " << shell_word(dir) << " || exit 1\n";
  }
  const std::string absolute_file = fs::absolute(file).lexically_normal().string();
  s << "exec " << shell_word(v.line("the slipstream program's path", slipstream_binary)) << " run "
    << shell_word(v.line("the experiment file's path", absolute_file)) << " --run-dir "
    << shell_word(dir) << " --in-allocation\n";
  return s.str();
}

int submit_batch(const Experiment& x, const std::string& file, const std::string& run_dir,
                 const RunOptions& options) {
  std::ostream* out = options.progress;
  const bool slurm = x.backend == Experiment::Backend::kSlurm;
  // The script first: a value it refuses stops the run before anything is made.
  const std::string text = batch_script(x, file, run_dir, options.slipstream_binary);
  make_run_dir(run_dir, options.overwrite);
  const std::string script = batch_script_path(x, run_dir);
  if (!write_private_file(script, text)) {
    const int error = errno;
    throw std::runtime_error("cannot write " + script + ": " + std::strerror(error));
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
