// The local back-end; see local_backend.hpp and docs/launcher.md.
#include "launch/local_backend.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include "launch/metrics.hpp"
#include "launch/password.hpp"
#include "launch/readiness.hpp"
#include "launch/run_dir.hpp"
#include "slipstream/client.hpp"

namespace slipstream::launch {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

volatile sig_atomic_t g_signal = 0;
void on_signal(int number) { g_signal = number; }

enum class State { kWaiting, kRunning, kDone, kFailed, kSkipped, kStopped };
const char* state_name(State s) {
  static const char* kNames[] = {"waiting", "running", "done", "failed", "skipped", "stopped"};
  return kNames[static_cast<int>(s)];
}

struct Process {
  const ProcessPlan* plan = nullptr;
  State state = State::kWaiting;
  pid_t pid = -1;
  int attempts = 0;
  int exit_code = -1;          // or 128 + signal
  std::string reason;          // why it failed or was skipped
  std::string kill_reason;     // set when the launcher kills it (timeout, hang)
  Clock::time_point started{}, ended{};
  std::uintmax_t output_size = 0;
  Clock::time_point output_changed{};
  Clock::time_point term_sent{};  // SIGTERM sent, SIGKILL due after the grace period
  std::string address;            // servers: where clients reach it
  std::string mpi_session_base;   // MPI applications: OpenMPI's session folder base (see below)
  int port = 0;
  int missed_pings = 0;
  std::string log_out() const { return plan->run_dir + "/" + plan->name + ".out"; }
  std::string log_err() const { return plan->run_dir + "/" + plan->name + ".err"; }
  bool finished() const {
    return state == State::kDone || state == State::kFailed || state == State::kSkipped ||
           state == State::kStopped;
  }
};

// A free TCP port on the loopback (the kernel's choice; the server binds it a moment later).
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof a;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &length) != 0) {
    const int error = errno;
    ::close(fd);
    throw std::runtime_error(std::string("cannot find a free port: ") + std::strerror(error));
  }
  ::close(fd);
  return ntohs(a.sin_port);
}

std::string tail_of(const std::string& path, std::size_t bytes = 600) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  const auto size = static_cast<std::size_t>(in.tellg());
  in.seekg(static_cast<std::streamoff>(size > bytes ? size - bytes : 0));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char code[8];
      std::snprintf(code, sizeof code, "\\u%04x", c);
      out += code;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

class LocalRun {
 public:
  LocalRun(const Experiment& x, const Plan& plan, const RunOptions& options)
      : x_(x), plan_(plan), options_(options), begin_(Clock::now()) {
    for (const ProcessPlan& p : plan.processes) {
      processes_.push_back(Process{});
      processes_.back().plan = &p;
    }
  }

  int run() {
    prepare_run_dir();
    struct sigaction action {};
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    struct sigaction old_int {}, old_term {}, old_hup {};
    ::sigaction(SIGINT, &action, &old_int);
    ::sigaction(SIGTERM, &action, &old_term);
    ::sigaction(SIGHUP, &action, &old_hup);
    g_signal = 0;
    int code = 0;
    try {
      code = supervise();
    } catch (...) {
      stop_everything();
      restore(old_int, old_term, old_hup);
      throw;
    }
    erase_live_table();
    stop_everything();
    restore(old_int, old_term, old_hup);
    if (code == 0 && std::any_of(processes_.begin(), processes_.end(), [](const Process& p) {
          return p.state == State::kFailed || p.state == State::kSkipped;
        })) {
      code = 1;
    }
    outcome_ = code == 0 ? "done" : code == 130 ? "interrupted" : "failed";
    write_status();
    summary();
    if (x_.report) make_report();
    return code;
  }

 private:
  static void restore(const struct sigaction& i, const struct sigaction& t,
                      const struct sigaction& h) {
    ::sigaction(SIGINT, &i, nullptr);
    ::sigaction(SIGTERM, &t, nullptr);
    ::sigaction(SIGHUP, &h, nullptr);
  }

  double elapsed() const {
    return std::chrono::duration<double>(Clock::now() - begin_).count();
  }
  void say(const std::string& line) {
    if (options_.progress == nullptr) return;
    erase_live_table();
    char stamp[32];
    std::snprintf(stamp, sizeof stamp, "[%8.1f s] ", elapsed());
    *options_.progress << stamp << line << std::endl;
  }

  void prepare_run_dir() {
    const fs::path dir = plan_.run_dir;
    if (!options_.prepared_run_dir) make_run_dir(plan_.run_dir, options_.overwrite);
    // Status files are best effort: the run goes on without them.
    write_private_file((dir / "plan.txt").string(), describe(plan_));
    write_password();
    write_status();
    for (Process& p : processes_) prepare_process_dir(*p.plan);
  }

  // The run's password (password.hpp), read or made now and written owner-only where the servers
  // read it; under a batch system this runs inside the job, so the password never passes through
  // the job script.
  void write_password() {
    if (plan_.password_file.empty()) return;
    password_ = plan_.password_generated ? generate_password() : run_password(x_);
    if (!write_private_file(plan_.password_file, *password_ + "\n")) {
      const int error = errno;
      throw std::runtime_error("cannot write the run's password to " + plan_.password_file +
                               ": " + std::strerror(error));
    }
  }

  // The process's folder (owner-only, as the run directory) and its inputs (copied, linked, or
  // copied with placeholders filled).
  void prepare_process_dir(const ProcessPlan& p) {
    make_private_dir(p.run_dir);
    if (p.workdir != p.run_dir) fs::create_directories(p.workdir);
    for (const std::string& source : p.copy) {
      const fs::path target = fs::path(p.run_dir) / fs::path(source).filename();
      std::error_code error;
      fs::copy(source, target, fs::copy_options::recursive | fs::copy_options::copy_symlinks,
               error);
      if (error) {
        throw std::runtime_error(p.name + ": cannot copy " + source + ": " + error.message());
      }
    }
    for (const std::string& source : p.link) {
      std::error_code error;
      if (!fs::exists(source, error)) throw std::runtime_error(p.name + ": cannot link " + source + ": it does not exist");
      fs::create_symlink(source, fs::path(p.run_dir) / fs::path(source).filename(), error);
      if (error) {
        throw std::runtime_error(p.name + ": cannot link " + source + ": " + error.message());
      }
    }
    for (const std::string& source : p.configure) {
      std::ifstream in(source, std::ios::binary);
      if (!in) throw std::runtime_error(p.name + ": cannot read " + source);
      std::ostringstream text;
      text << in.rdbuf();
      const std::string filled = fill_placeholders(text.str(), p.params, source + ": ");
      const fs::path target = fs::path(p.run_dir) / fs::path(source).filename();
      if (!write_private_file(target.string(), filled)) {
        const int error = errno;
        throw std::runtime_error(p.name + ": cannot write " + target.string() + ": " +
                                 std::strerror(error));
      }
    }
  }

  // ---- Starting processes ----------------------------------------------------------------------

  // Forks and execs `argv` in its own process group (so that signals reach mpirun and its ranks
  // together, and a Ctrl-C in the terminal reaches only the launcher, which stops things in
  // order), with stdin from /dev/null and stdout/stderr appended to the process's logs (made
  // owner-only here, before the child opens them).
  void spawn(Process& p, const std::vector<std::string>& argv,
             const std::map<std::string, std::string>& env) {
    if (const int out = open_private_for_append(p.log_out()); out >= 0) ::close(out);
    if (const int err = open_private_for_append(p.log_err()); err >= 0) {
      const std::string header = "== slipstream run: " + p.plan->name + ", attempt " +
                                 std::to_string(p.attempts + 1) + "\n";
      [[maybe_unused]] const auto written = ::write(err, header.data(), header.size());
      ::close(err);
    }
    // A log that cannot be made here cannot be opened by the child either, which says why.
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
    std::vector<std::string> words = argv;
    std::vector<char*> c_argv;
    for (std::string& w : words) c_argv.push_back(w.data());
    c_argv.push_back(nullptr);
    const std::string out_path = p.log_out(), err_path = p.log_err(), workdir = p.plan->workdir;
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
      // The child: only async-signal-safe calls until exec.
      ::setpgid(0, 0);
      struct sigaction defaults {};
      defaults.sa_handler = SIG_DFL;
      for (int s : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGCHLD}) ::sigaction(s, &defaults, nullptr);
      sigset_t none;
      sigemptyset(&none);
      ::sigprocmask(SIG_SETMASK, &none, nullptr);
      const int in = ::open("/dev/null", O_RDONLY);
      const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
      const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
      int error = 0;
      if (in < 0 || out < 0 || err < 0 || ::dup2(in, 0) < 0 || ::dup2(out, 1) < 0 ||
          ::dup2(err, 2) < 0 || ::chdir(workdir.c_str()) != 0) {
        error = errno;
      }
      if (error == 0) {
        for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
        ::execvp(c_argv[0], c_argv.data());
        error = errno;
      }
      [[maybe_unused]] auto written = ::write(pipe_fds[1], &error, sizeof error);
      ::_exit(127);
    }
    ::setpgid(pid, pid);  // also here, so that it holds before the parent signals the group
    ::close(pipe_fds[1]);
    int error = 0;
    const auto got = ::read(pipe_fds[0], &error, sizeof error);
    ::close(pipe_fds[0]);
    p.attempts += 1;
    p.pid = pid;
    p.started = Clock::now();
    p.output_changed = p.started;
    p.output_size = 0;
    p.kill_reason.clear();
    p.term_sent = {};
    p.state = State::kRunning;
    if (got == static_cast<ssize_t>(sizeof error) && error != 0) {
      // The exec failed: the child exits 127 at once; the reason is ours to tell.
      p.kill_reason = "cannot run " + argv[0] + " (in " + workdir + "): " + std::strerror(error);
    }
  }

  // OpenMPI keeps each mpirun's session folder under one top folder per host and user, which an
  // mpirun that ends removes when it looks empty: a second mpirun starting at that moment fails
  // ("orte_session_dir failed"). Members started together hit it, so every MPI application gets
  // a top folder of its own (short: it holds sockets), unless the user chose one; it is removed
  // when the application ends.
  void give_own_mpi_session_base(Process& p, std::map<std::string, std::string>& env) {
    static constexpr const char* kBase = "OMPI_MCA_orte_tmpdir_base";
    if (p.plan->ranks <= 1 || x_.backend == Experiment::Backend::kSlurm) return;
    if (env.count(kBase) != 0 || std::getenv(kBase) != nullptr) return;
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") +
                          "/slipstream-mpi.XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
      const int error = errno;
      throw std::runtime_error(p.plan->name + ": cannot make a session folder for mpirun (" +
                               pattern + "): " + std::strerror(error));
    }
    p.mpi_session_base = pattern;
    env[kBase] = pattern;
  }
  static void remove_mpi_session_base(Process& p) {
    if (p.mpi_session_base.empty()) return;
    std::error_code ignored;
    fs::remove_all(p.mpi_session_base, ignored);
    p.mpi_session_base.clear();
  }

  std::map<std::string, std::string> environment_of(const Process& p) const {
    std::map<std::string, std::string> env = p.plan->env;
    // Servers read the password from its file; every other process gets it here, never in argv.
    if (password_ && p.plan->kind != ProcessPlan::Kind::kServer) {
      env[std::string(kPasswordVariable)] = *password_;
    }
    if (!p.plan->server_shard.empty()) {
      env["SSDB"] = ssdb_.at(p.plan->server_shard);
    } else if (!p.plan->server.empty()) {
      env["SSDB"] = ssdb_.at(p.plan->server);
    }
    return env;
  }

  // Starts every shard of every server, waits until each answers PING and records SSDB.
  void start_servers() {
    std::map<std::string, std::vector<Process*>> groups;
    for (Process& p : processes_) {
      if (p.plan->kind == ProcessPlan::Kind::kServer) groups[p.plan->group].push_back(&p);
    }
    for (auto& [group, shards] : groups) {
      std::string members;
      // On one node everything is reached over the loopback; across nodes, by the node's name
      // (the port is free here; on another node it is very likely free too, and a server that
      // cannot bind it fails at start with the reason in its log).
      const bool several_nodes = plan_.nodes.size() > 1;
      for (Process* s : shards) {
        s->port = free_port();
        s->address = (several_nodes ? s->plan->node : "127.0.0.1") + ":" + std::to_string(s->port);
        members += (members.empty() ? "" : ",") + s->address;
      }
      for (Process* s : shards) {
        std::vector<std::string> argv = s->plan->argv;
        argv.insert(argv.end(), {"--port", std::to_string(s->port), "--dir", s->plan->run_dir});
        if (several_nodes) argv.insert(argv.end(), {"--bind", "0.0.0.0"});
        if (!s->plan->unix_socket.empty()) {
          argv.insert(argv.end(), {"--unixsocket", s->plan->unix_socket});
        }
        if (shards.size() > 1 && mode_of(group) == ServerSpec::Mode::kCluster) {
          argv.insert(argv.end(), {"--cluster-nodes", members, "--cluster-node-index",
                                   std::to_string(s->plan->index)});
        }
        spawn(*s, argv, {});
        say("server " + s->plan->name + " starting on " + s->address + " (pid " +
            std::to_string(s->pid) + ")");
      }
      // A colocated server's shards are independent servers, each reached through its Unix
      // socket (and with it shared memory) by the processes of its node; the launcher itself
      // pings them over TCP.
      if (mode_of(group) == ServerSpec::Mode::kColocated) {
        for (Process* s : shards) {
          const std::string& socket = s->plan->unix_socket;
          ssdb_[s->plan->name] = socket.empty() ? s->address : "unix://" + socket;
        }
      } else {
        ssdb_[group] = members;
      }
    }
    for (auto& [group, shards] : groups) {
      for (Process* s : shards) wait_until_answering(*s);
    }
    write_status();
  }

  bool ping(const Process& s, std::chrono::milliseconds timeout) const {
    return ping_server(s.address, password_, timeout).ready;
  }

  void wait_until_answering(Process& s) {
    const auto deadline =
        Clock::now() + std::chrono::duration<double>(x_.server_start_seconds);
    while (true) {
      int status = 0;
      if (::waitpid(s.pid, &status, WNOHANG) == s.pid) {
        s.state = State::kFailed;
        s.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        s.pid = -1;
        throw std::runtime_error("server " + s.plan->name + " exited at start (status " +
                                 std::to_string(s.exit_code) + "); the end of its log " +
                                 s.log_out() + ":\n" + tail_of(s.log_out()) + "\n" +
                                 tail_of(s.log_err()));
      }
      if (ping(s, std::chrono::milliseconds(500))) break;
      if (g_signal != 0) throw std::runtime_error("interrupted while the servers started");
      if (Clock::now() > deadline) {
        throw std::runtime_error("server " + s.plan->name + " did not answer PING within " +
                                 std::to_string(x_.server_start_seconds) + " s; its log " +
                                 s.log_out() + " ends:\n" + tail_of(s.log_out()));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    s.output_changed = Clock::now();
    say("server " + s.plan->name + " answers on " + s.address +
        (s.plan->unix_socket.empty() ? "" : " and " + s.plan->unix_socket));
  }

  Process& by_name(const std::string& name) {
    return *std::find_if(processes_.begin(), processes_.end(),
                         [&](const Process& p) { return p.plan->name == name; });
  }

  // Starts every waiting process whose predecessors have all ended successfully; skips those
  // whose predecessors failed.
  bool start_ready() {
    bool changed = false;
    for (Process& p : processes_) {
      if (p.state != State::kWaiting || p.plan->kind == ProcessPlan::Kind::kServer) continue;
      bool ready = true;
      std::string blocked_by;
      for (const std::string& dep : p.plan->after) {
        const Process& d = by_name(dep);
        if (d.state == State::kDone) continue;
        ready = false;
        if (d.finished()) blocked_by = dep;
      }
      if (!blocked_by.empty()) {
        p.state = State::kSkipped;
        p.reason = "not started: " + blocked_by + " did not end successfully";
        say(p.plan->name + " skipped: " + p.reason);
        changed = true;
        continue;
      }
      if (!ready) continue;
      std::map<std::string, std::string> env = environment_of(p);
      give_own_mpi_session_base(p, env);
      spawn(p, p.plan->argv, env);
      say(p.plan->name + " started (pid " + std::to_string(p.pid) +
          (p.attempts > 1 ? ", attempt " + std::to_string(p.attempts) : "") + ")");
      changed = true;
    }
    return changed;
  }

  // ---- Watching ----------------------------------------------------------------------------------

  // Reaps every child that ended and applies the policies. Returns true when something changed.
  bool reap() {
    bool changed = false;
    while (true) {
      int status = 0;
      const pid_t pid = ::waitpid(-1, &status, WNOHANG);
      if (pid <= 0) break;
      auto it = std::find_if(processes_.begin(), processes_.end(),
                             [&](const Process& p) { return p.pid == pid; });
      if (it == processes_.end()) continue;
      Process& p = *it;
      p.pid = -1;
      p.ended = Clock::now();
      remove_mpi_session_base(p);
      p.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      changed = true;
      if (stopping_) {
        p.state = p.exit_code == 0 && p.kill_reason.empty() ? State::kDone : State::kStopped;
        if (p.state == State::kStopped && p.reason.empty()) p.reason = "stopped by the launcher";
        continue;
      }
      if (p.plan->kind == ProcessPlan::Kind::kServer) {
        p.state = State::kFailed;
        p.reason = "the server exited (" + exit_text(status) + ")";
        abort_with("server " + p.plan->name + " ended while the experiment ran (" +
                   exit_text(status) + ")");
        continue;
      }
      if (p.exit_code == 0 && p.kill_reason.empty()) {
        p.state = State::kDone;
        say(p.plan->name + " done (" + seconds(p) + ")");
        continue;
      }
      p.reason = p.kill_reason.empty() ? exit_text(status) : p.kill_reason;
      fail(p);
    }
    return changed;
  }

  static std::string exit_text(int status) {
    if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
    return std::string("killed by signal ") + std::to_string(WTERMSIG(status)) + " (" +
           ::strsignal(WTERMSIG(status)) + ")";
  }
  static std::string seconds_text(double seconds) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f s", seconds);
    return text;
  }
  static std::string seconds(const Process& p) {
    return seconds_text(std::chrono::duration<double>(p.ended - p.started).count());
  }

  void fail(Process& p) {
    const FailurePolicy& policy = p.plan->on_failure;
    if (policy.kind == FailurePolicy::Kind::kRestart && p.attempts <= policy.restarts) {
      say(p.plan->name + " failed (" + p.reason + "); restarting (" + std::to_string(p.attempts) +
          " of " + std::to_string(policy.restarts) + " restarts)");
      p.state = State::kWaiting;
      return;
    }
    p.state = State::kFailed;
    say(p.plan->name + " failed: " + p.reason + "; see " + p.log_err());
    if (policy.kind == FailurePolicy::Kind::kContinue) return;
    abort_with(p.plan->name + " failed (" + p.reason + ")" +
               (policy.kind == FailurePolicy::Kind::kRestart
                    ? " after " + std::to_string(policy.restarts) + " restart" +
                          (policy.restarts == 1 ? "" : "s")
                    : ""));
  }

  void abort_with(const std::string& why) {
    if (stopping_) return;
    stopping_ = true;
    abort_reason_ = why;
    say("stopping the experiment: " + why);
  }

  // Timeouts and hangs of running processes; the servers' heartbeat.
  void check_running() {
    const auto now = Clock::now();
    for (Process& p : processes_) {
      if (p.state != State::kRunning || p.plan->kind == ProcessPlan::Kind::kServer) continue;
      if (p.term_sent != Clock::time_point{}) {
        if (now - p.term_sent > std::chrono::duration<double>(x_.stop_grace_seconds)) {
          ::kill(-p.pid, SIGKILL);
        }
        continue;
      }
      const double ran = std::chrono::duration<double>(now - p.started).count();
      if (p.plan->timeout_seconds > 0 && ran > p.plan->timeout_seconds) {
        terminate(p, "ran past its timeout of " + number(p.plan->timeout_seconds) + " s");
        continue;
      }
      if (p.plan->hang_seconds > 0) {
        std::error_code error;
        const auto size = fs::file_size(p.log_out(), error) + fs::file_size(p.log_err(), error);
        if (size != p.output_size) {
          p.output_size = size;
          p.output_changed = now;
        } else if (std::chrono::duration<double>(now - p.output_changed).count() >
                   p.plan->hang_seconds) {
          terminate(p, "wrote nothing for " + number(p.plan->hang_seconds) + " s (hung)");
        }
      }
    }
    if (now - last_heartbeat_ < std::chrono::duration<double>(x_.heartbeat_seconds)) return;
    last_heartbeat_ = now;
    const auto timeout = std::chrono::milliseconds(
        std::max<long>(200, static_cast<long>(x_.heartbeat_seconds * 1000)));
    for (Process& s : processes_) {
      if (s.plan->kind != ProcessPlan::Kind::kServer || s.state != State::kRunning) continue;
      if (ping(s, timeout)) {
        s.missed_pings = 0;
      } else if (++s.missed_pings >= 3) {
        s.state = State::kFailed;
        s.reason = "stopped answering PING";
        abort_with("server " + s.plan->name + " stopped answering (3 heartbeats of " +
                   number(x_.heartbeat_seconds) + " s missed)");
      }
    }
  }

  static std::string number(double v) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", v);
    return text;
  }

  void terminate(Process& p, const std::string& why) {
    p.kill_reason = why;
    p.term_sent = Clock::now();
    ::kill(-p.pid, SIGTERM);
    say(p.plan->name + " " + why + ": sent SIGTERM");
  }

  int supervise() {
    start_servers();
    if (x_.metrics_every_seconds > 0) {
      std::vector<MetricsRecorder::Shard> shards;
      for (const Process& p : processes_) {
        if (p.plan->kind == ProcessPlan::Kind::kServer) {
          shards.push_back({p.plan->group, p.plan->name, p.address});
        }
      }
      if (!shards.empty()) {
        metrics_ =
            std::make_unique<MetricsRecorder>(plan_.run_dir + "/metrics", shards, password_);
      }
    }
    auto last_status = Clock::now();
    auto last_drawn = Clock::time_point{};
    while (true) {
      bool changed = reap();
      if (g_signal != 0 && !stopping_) {
        abort_with(std::string("received ") + ::strsignal(g_signal));
        interrupted_ = true;
      }
      if (stopping_) break;
      changed |= start_ready();
      check_running();
      if (metrics_ && Clock::now() - last_sample_ >=
                          std::chrono::duration<double>(x_.metrics_every_seconds)) {
        last_sample_ = Clock::now();
        metrics_->sample(elapsed());
      }
      const bool all_ended = std::all_of(processes_.begin(), processes_.end(), [](const Process& p) {
        return p.plan->kind == ProcessPlan::Kind::kServer || p.finished();
      });
      if (all_ended) break;
      const auto now = Clock::now();
      if (changed || now - last_status > std::chrono::seconds(1)) write_status();
      if (options_.live_table) {
        if (changed || now - last_drawn > std::chrono::milliseconds(500)) {
          draw_live_table();
          last_drawn = now;
        }
      } else if (x_.status_every_seconds > 0 &&
                 now - last_status > std::chrono::duration<double>(x_.status_every_seconds)) {
        say(counts() + (metrics_ && !metrics_->summary().empty() ? " | " + metrics_->summary()
                                                                  : ""));
        last_status = now;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (interrupted_) return 130;
    return stopping_ ? 1 : 0;
  }

  // The live table (a terminal only): the processes' table and the latest metrics, redrawn in
  // place; event lines are printed above it.
  void draw_live_table() {
    if (!options_.live_table || options_.progress == nullptr) return;
    erase_live_table();
    std::string text = table();
    if (metrics_) {
      const std::string latest = metrics_->summary();
      if (!latest.empty()) text += latest + "\n";
    }
    *options_.progress << text << std::flush;
    live_lines_ = static_cast<int>(std::count(text.begin(), text.end(), '\n'));
  }
  void erase_live_table() {
    if (live_lines_ == 0) return;
    // Up to the table's first line, then clear to the end of the screen.
    *options_.progress << "\033[" << live_lines_ << "F\033[J";
    live_lines_ = 0;
  }

  std::string counts() const {
    std::map<std::string, int> n;
    for (const Process& p : processes_) {
      if (p.plan->kind != ProcessPlan::Kind::kServer) n[state_name(p.state)] += 1;
    }
    std::string text;
    for (const auto& [state, count] : n) {
      text += (text.empty() ? "" : ", ") + std::to_string(count) + " " + state;
    }
    return text;
  }

  // ---- Stopping ----------------------------------------------------------------------------------

  // Applications and trainers first (SIGTERM to each process group, SIGKILL after the grace
  // period), then the servers (SHUTDOWN, SIGTERM, SIGKILL), so that nothing outlives the launcher.
  void stop_everything() {
    stopping_ = true;
    auto running = [&](bool servers) {
      return std::count_if(processes_.begin(), processes_.end(), [&](const Process& p) {
        return p.pid > 0 && (p.plan->kind == ProcessPlan::Kind::kServer) == servers;
      });
    };
    auto wait_all = [&](bool servers, double seconds) {
      const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
      while (running(servers) > 0 && Clock::now() < deadline) {
        reap();
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    };
    auto signal_all = [&](bool servers, int number) {
      for (Process& p : processes_) {
        if (p.pid > 0 && (p.plan->kind == ProcessPlan::Kind::kServer) == servers) {
          if (p.kill_reason.empty()) p.kill_reason = "stopped by the launcher";
          ::kill(-p.pid, number);
        }
      }
    };
    if (running(false) > 0) {
      say("stopping " + std::to_string(running(false)) + " process(es)");
      signal_all(false, SIGTERM);
      wait_all(false, x_.stop_grace_seconds);
      signal_all(false, SIGKILL);
      wait_all(false, 5);
    }
    if (metrics_) metrics_->sample(elapsed());  // the last figures, before the servers go
    if (running(true) > 0) {
      for (Process& s : processes_) {
        if (s.pid <= 0 || s.plan->kind != ProcessPlan::Kind::kServer) continue;
        const bool save = snapshot(s.plan->group);
        try {
          ClientOptions o;
          o.address = s.address;
          o.password = password_;
          o.connect_timeout = std::chrono::milliseconds(1000);
          o.command_timeout = std::chrono::milliseconds(
              static_cast<long>(x_.stop_grace_seconds * 1000));
          o.reconnect_attempts = 1;
          o.shared_memory = SharedMemoryMode::kOff;
          Client client(o);
          client.command({"SHUTDOWN", save ? "SAVE" : "NOSAVE"});
        } catch (const std::exception&) {
          // The connection closes as the server stops; a server that cannot be told is signalled.
        }
      }
      wait_all(true, x_.stop_grace_seconds);
      signal_all(true, SIGKILL);
      wait_all(true, 5);
      say("servers stopped");
    }
    for (Process& p : processes_) {
      if (p.state == State::kWaiting) {
        p.state = State::kSkipped;
        p.reason = "not started: the experiment stopped";
      }
      if (p.plan->kind == ProcessPlan::Kind::kServer && p.state == State::kRunning) {
        p.state = State::kDone;
      }
    }
  }

  ServerSpec::Mode mode_of(const std::string& group) const {
    for (const ServerSpec& s : x_.servers) {
      if (s.name == group) return s.mode;
    }
    return ServerSpec::Mode::kStandalone;
  }

  bool snapshot(const std::string& group) const {
    for (const ServerSpec& s : x_.servers) {
      if (s.name == group) return s.snapshot_at_end;
    }
    return false;
  }

  // ---- Status and summary ----------------------------------------------------------------------

  std::string table() const {
    std::ostringstream out;
    char line[512];
    std::snprintf(line, sizeof line, "%-24s %-11s %-9s %8s %8s %9s %s\n", "process", "kind",
                  "state", "pid", "attempts", "seconds", "exit / address / reason");
    out << line;
    static const char* kKinds[] = {"server", "application", "trainer"};
    for (const Process& p : processes_) {
      double ran = 0;
      if (p.started != Clock::time_point{}) {
        ran = std::chrono::duration<double>((p.pid > 0 ? Clock::now() : p.ended) - p.started)
                  .count();
      }
      std::string detail = p.plan->kind == ProcessPlan::Kind::kServer ? p.address : "";
      if (p.exit_code >= 0 && p.plan->kind != ProcessPlan::Kind::kServer) {
        detail = "exit " + std::to_string(p.exit_code);
      }
      if (!p.reason.empty()) detail += (detail.empty() ? "" : "; ") + p.reason;
      std::snprintf(line, sizeof line, "%-24s %-11s %-9s %8s %8d %9.1f %s\n",
                    p.plan->name.c_str(), kKinds[static_cast<int>(p.plan->kind)],
                    state_name(p.state), p.pid > 0 ? std::to_string(p.pid).c_str() : "-",
                    p.attempts, ran, detail.c_str());
      out << line;
    }
    return out.str();
  }

  // Seconds from the launcher's start to `t`, as JSON (null when it has not happened).
  std::string since_begin(Clock::time_point t) const {
    if (t == Clock::time_point{}) return "null";
    char text[32];
    std::snprintf(text, sizeof text, "%.3f", std::chrono::duration<double>(t - begin_).count());
    return text;
  }

  void write_status() const {
    std::ostringstream json;
    json << "{\"experiment\": " << json_string(plan_.experiment)
         << ", \"state\": " << json_string(outcome_.empty() ? "running" : outcome_)
         << ", \"launcher_pid\": " << ::getpid() << ", \"seconds\": " << elapsed()
         << ", \"updated\": " << std::time(nullptr)
         << ", \"reason\": " << json_string(abort_reason_) << ", \"processes\": [";
    static const char* kKinds[] = {"server", "application", "trainer"};
    bool first = true;
    for (const Process& p : processes_) {
      json << (first ? "" : ", ") << "{\"name\": " << json_string(p.plan->name)
           << ", \"kind\": " << json_string(kKinds[static_cast<int>(p.plan->kind)])
           << ", \"group\": " << json_string(p.plan->group)
           << ", \"node\": " << json_string(p.plan->node)
           << ", \"state\": " << json_string(state_name(p.state)) << ", \"pid\": " << p.pid
           << ", \"attempts\": " << p.attempts << ", \"exit_code\": " << p.exit_code
           << ", \"address\": " << json_string(p.address) << ", \"port\": " << p.port
           << ", \"run_dir\": " << json_string(p.plan->run_dir)
           << ", \"started_s\": " << since_begin(p.started)
           << ", \"ended_s\": " << (p.pid > 0 ? std::string("null") : since_begin(p.ended))
           << ", \"reason\": " << json_string(p.reason) << "}";
      first = false;
    }
    json << "]}\n";
    write_private_file(plan_.run_dir + "/status.json", json.str());
    std::ostringstream text;
    text << "experiment " << plan_.experiment << ": "
         << (outcome_.empty() ? "running" : outcome_) << " (launcher pid " << ::getpid() << ", "
         << static_cast<long>(elapsed()) << " s)\n";
    if (!abort_reason_.empty()) text << "stopped because " << abort_reason_ << "\n";
    text << table();
    write_private_file(plan_.run_dir + "/status.txt", text.str());
  }

  void summary() {
    if (options_.progress == nullptr) return;
    *options_.progress << "\n" << table();
    for (const Process& p : processes_) {
      if (p.state != State::kFailed) continue;
      const std::string last = tail_of(p.log_err(), 400);
      if (!last.empty()) {
        *options_.progress << "\n" << p.plan->name << " (" << p.log_err() << ") ends:\n"
                           << last << "\n";
      }
    }
    *options_.progress << "\nexperiment " << plan_.experiment << " " << outcome_ << " in "
                       << seconds_text(elapsed()) << "; logs and status in " << plan_.run_dir
                       << std::endl;
  }

  // RUN_DIR/report: the report generator (make_report.py, installed beside the slipstream
  // program's share folder) run with Debian's Python and matplotlib. A report that cannot be made
  // is said, and does not change the run's exit status.
  void make_report() {
    const std::string script = report_script();
    if (script.empty()) {
      say("no report: make_report.py is not installed beside " + options_.slipstream_binary);
      return;
    }
    std::string python = "python3";
    if (const char* chosen = std::getenv("SLIPSTREAM_PYTHON")) {
      python = chosen;
    } else if (::access("/usr/bin/python3", X_OK) == 0) {
      python = "/usr/bin/python3";  // the interpreter Debian's matplotlib is installed for
    }
    Process p;
    ProcessPlan report_plan;
    report_plan.name = "report";
    report_plan.run_dir = plan_.run_dir;
    report_plan.workdir = plan_.run_dir;
    p.plan = &report_plan;
    spawn(p, {python, script, plan_.run_dir}, {{"MPLBACKEND", "Agg"}});
    int status = 0;
    while (::waitpid(p.pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
      say("report: " + plan_.run_dir + "/report/index.html");
    } else {
      say("no report (" + exit_text(status) + "): " + tail_of(p.log_err(), 300));
    }
  }

  std::string report_script() const {
    const fs::path exe_dir = fs::path(options_.slipstream_binary).parent_path();
    for (const fs::path& candidate :
         {exe_dir / "../share/slipstream/make_report.py",
          exe_dir / "../../share/slipstream/make_report.py"}) {
      std::error_code error;
      if (fs::exists(candidate, error)) return candidate.lexically_normal().string();
    }
    return "";
  }

  const Experiment& x_;
  const Plan& plan_;
  RunOptions options_;
  Clock::time_point begin_;
  Clock::time_point last_heartbeat_{};
  std::vector<Process> processes_;
  std::map<std::string, std::string> ssdb_;  // server group -> SSDB
  // The run's password; nullopt without one (the launcher's clients then use
  // SLIPSTREAM_PASSWORD from its own environment, as any client).
  std::optional<std::string> password_;
  std::unique_ptr<MetricsRecorder> metrics_;
  int live_lines_ = 0;  // lines of the live table on the terminal now
  Clock::time_point last_sample_{};
  bool stopping_ = false;
  bool interrupted_ = false;
  std::string abort_reason_;
  std::string outcome_;
};

}  // namespace

int run_local(const Experiment& x, const Plan& plan, const RunOptions& options) {
  LocalRun run(x, plan, options);
  return run.run();
}

}  // namespace slipstream::launch
