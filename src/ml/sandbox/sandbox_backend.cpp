// Models and scripts in worker processes; see sandbox_backend.hpp.
#include "ml/sandbox/sandbox_backend.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_set>

#include "common/sealed_file.hpp"
#include "ml/sandbox/channel.hpp"
#include "ml/sandbox/control_block.hpp"

namespace slipstream::ml {
namespace {

using sandbox::ChannelError;
using sandbox::Deadline;
using sandbox::MessageReader;
using sandbox::MessageType;
using sandbox::MessageWriter;
using Clock = std::chrono::steady_clock;

constexpr int kChildChannelFd = 3;

// Bounds on what one worker may put into the server's log (see WorkerLog).
constexpr std::size_t kMaxLogLineBytes = 1024;
constexpr unsigned kMaxLogLinesPerWindow = 20;
constexpr std::chrono::seconds kLogWindow{60};

// The worker's whole environment. A worker runs code that users stored, so it gets nothing of the
// server's own (SLIPSTREAM_PASSWORD above all): a fixed PATH, and of the server's variables only
// those that decide how libtorch and the loader start (where libraries are, thread counts, which
// GPUs, sanitizer settings in test builds).
std::vector<std::string> worker_environment() {
  std::vector<std::string> environment = {"PATH=/usr/bin:/bin"};
  for (const char* name : {"LD_LIBRARY_PATH", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                           "CUDA_VISIBLE_DEVICES", "ASAN_OPTIONS", "UBSAN_OPTIONS",
                           "LSAN_OPTIONS", "TSAN_OPTIONS"}) {
    if (const char* value = std::getenv(name)) {
      environment.push_back(std::string(name) + "=" + value);
    }
  }
  return environment;
}

// Turns what a worker writes to its stderr into lines for the server's log. That text is chosen
// by stored code (TorchScript's `warnings.warn` reaches libtorch's warning printer with any
// message), so it is quoted and bounded:
//   1. every line is prefixed with the worker ("model worker 1234: "), so none can pass for a
//      line of the server's own;
//   2. control characters, backslashes and bytes outside ASCII are escaped (\r, \x1b, \\), so
//      a line stays one line on any terminal; a newline ends the line;
//   3. a line is cut after kMaxLogLineBytes of quoted text ("... (N bytes cut)");
//   4. at most kMaxLogLinesPerWindow lines per kLogWindow are passed on; the others are counted
//      and reported in one line when the window ends or the worker does.
// Used by one thread (the worker's log thread).
class WorkerLog {
 public:
  WorkerLog(pid_t pid, std::function<void(const std::string&)> sink)
      : prefix_("model worker " + std::to_string(pid) + ": "), sink_(std::move(sink)) {}

  void feed(std::string_view bytes, Clock::time_point now) {
    for (char c : bytes) {
      if (c == '\n') {
        end_line(now);
      } else {
        append(static_cast<unsigned char>(c));
      }
    }
  }

  // When the count of dropped lines is due (the end of the window), if any were dropped.
  std::optional<Clock::time_point> report_due() const {
    if (dropped_ == 0) return std::nullopt;
    return window_start_ + kLogWindow;
  }

  void tick(Clock::time_point now) {
    if (now - window_start_ < kLogWindow) return;
    report_dropped();
    window_start_ = now;
    lines_in_window_ = 0;
  }

  // The worker is gone: its last unterminated line and the count of dropped lines.
  void finish(Clock::time_point now) {
    end_line(now);
    report_dropped();
  }

 private:
  void append(unsigned char c) {
    char quoted[5] = {static_cast<char>(c), '\0'};
    if (c == '\\' || c == '\r' || c == '\t') {
      quoted[0] = '\\';
      quoted[1] = c == '\\' ? '\\' : c == '\r' ? 'r' : 't';
      quoted[2] = '\0';
    } else if (c < 0x20 || c >= 0x7f) {
      std::snprintf(quoted, sizeof quoted, "\\x%02x", c);
    }
    const std::size_t length = std::strlen(quoted);
    if (cut_ > 0 || line_.size() + length > kMaxLogLineBytes) {
      ++cut_;  // once cut, the rest of the line goes too
    } else {
      line_.append(quoted, length);
    }
  }

  void end_line(Clock::time_point now) {
    if (line_.empty() && cut_ == 0) return;  // blank lines say nothing
    tick(now);
    if (lines_in_window_ < kMaxLogLinesPerWindow) {
      ++lines_in_window_;
      std::string text = prefix_ + line_;
      if (cut_ > 0) text += "... (" + std::to_string(cut_) + " bytes cut)";
      sink_(text);
    } else {
      ++dropped_;
    }
    line_.clear();
    cut_ = 0;
  }

  void report_dropped() {
    if (dropped_ == 0) return;
    sink_(prefix_ + std::to_string(dropped_) + " more lines of its output dropped (at most " +
          std::to_string(kMaxLogLinesPerWindow) + " a minute are logged)");
    dropped_ = 0;
  }

  const std::string prefix_;
  const std::function<void(const std::string&)> sink_;
  std::string line_;      // quoted text of the line so far, at most kMaxLogLineBytes
  std::uint64_t cut_ = 0; // bytes of the line past that
  Clock::time_point window_start_ = Clock::now();
  unsigned lines_in_window_ = 0;
  std::uint64_t dropped_ = 0;
};

// The body of a worker's log thread: reads the worker's stderr (`fd`, which it closes) until the
// worker and every copy of its end are gone.
void forward_worker_log(int fd, pid_t pid, std::function<void(const std::string&)> sink) {
  WorkerLog log(pid, std::move(sink));
  char buffer[4096];
  while (true) {
    int timeout_ms = -1;
    if (auto due = log.report_due()) {
      const auto wait = std::chrono::ceil<std::chrono::milliseconds>(*due - Clock::now());
      timeout_ms = static_cast<int>(std::max<std::int64_t>(0, wait.count()));
    }
    pollfd readable{fd, POLLIN, 0};
    const int ready = ::poll(&readable, 1, timeout_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {
      log.tick(Clock::now());
      continue;
    }
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    log.feed({buffer, static_cast<std::size_t>(n)}, Clock::now());
  }
  log.finish(Clock::now());
  ::close(fd);
}

std::string describe_exit(int status) {
  if (WIFSIGNALED(status)) {
    const int signal = WTERMSIG(status);
    const char* name = ::sigabbrev_np(signal);
    return "killed by signal " + std::to_string(signal) + " (SIG" + (name ? name : "?") + ")";
  }
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  return "stopped";
}

// One worker process and the server's end of its channel. Owned by one thread at a time (the
// pool hands it out); `pending_unloads` alone is shared, under the pool's mutex.
class WorkerProcess {
 public:
  // Takes `fd` (the channel) and `log_fd` (the read end of the worker's stderr, handed to a
  // thread that logs it through `log`).
  WorkerProcess(pid_t pid, int fd, int log_fd, std::function<void(const std::string&)> log)
      : pid_(pid),
        fd_(fd),
        reader_(fd),
        log_thread_(forward_worker_log, log_fd, pid, std::move(log)) {}
  ~WorkerProcess() {
    kill();
    reap();
    log_thread_.join();  // the worker is gone: its stderr is at its end
    ::close(fd_);
  }
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  // Starts a worker with its own environment (worker_environment), its stderr going to a log
  // thread (WorkerLog) and its address space limited (options.address_space_limit). The limit is
  // set from here, before the worker reports ready, so it holds before any stored code runs.
  static std::unique_ptr<WorkerProcess> spawn(const SandboxOptions& options, std::string* error) {
    int ends[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0) {
      *error = std::string("cannot create the worker's channel: ") + std::strerror(errno);
      return nullptr;
    }
    int log_ends[2];
    if (::pipe2(log_ends, O_CLOEXEC) != 0) {
      *error = std::string("cannot create the worker's log pipe: ") + std::strerror(errno);
      ::close(ends[0]);
      ::close(ends[1]);
      return nullptr;
    }
    std::vector<std::string> args = options.worker_command;
    args.insert(args.end(), {"--channel-fd", std::to_string(kChildChannelFd), "--parent-pid",
                             std::to_string(::getpid())});
    std::vector<char*> argv;
    for (auto& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    std::vector<std::string> environment = worker_environment();
    std::vector<char*> envp;
    for (auto& variable : environment) envp.push_back(variable.data());
    envp.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    ::posix_spawn_file_actions_init(&actions);
    // dup2 onto the channel number clears close-on-exec there (also when the numbers are equal).
    ::posix_spawn_file_actions_adddup2(&actions, ends[1], kChildChannelFd);
    ::posix_spawn_file_actions_adddup2(&actions, log_ends[1], STDERR_FILENO);
    pid_t pid = -1;
    const int failed =
        ::posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
    ::posix_spawn_file_actions_destroy(&actions);
    ::close(ends[1]);
    ::close(log_ends[1]);
    if (failed != 0) {
      ::close(ends[0]);
      ::close(log_ends[0]);
      *error = "cannot start the model worker '" + args[0] + "': " + std::strerror(failed);
      return nullptr;
    }
    ::fcntl(ends[0], F_SETFL, ::fcntl(ends[0], F_GETFL) | O_NONBLOCK);
    auto log = options.log ? options.log : [](const std::string& line) {
      std::fprintf(stderr, "%s\n", line.c_str());
    };
    auto worker = std::make_unique<WorkerProcess>(pid, ends[0], log_ends[0], std::move(log));
    if (options.address_space_limit) {
      const rlimit limit{*options.address_space_limit, *options.address_space_limit};
      if (::prlimit(pid, RLIMIT_AS, &limit, nullptr) != 0) {
        *error = std::string("cannot limit the model worker's memory: ") + std::strerror(errno);
        return nullptr;  // `worker` is killed and reaped as it goes
      }
    }
    return worker;
  }

  // Waits for the worker's ready message once (it loads libtorch and confines itself first).
  ChannelError wait_ready(Deadline deadline) {
    if (ready_) return ChannelError::kNone;
    MessageType type{};
    std::uint64_t length = 0;
    if (ChannelError e = reader_.next(deadline, type, length); e != ChannelError::kNone) return e;
    if (type != MessageType::kReady) return ChannelError::kProtocol;
    if (ChannelError e = reader_.str(confinement_); e != ChannelError::kNone) return e;
    ready_ = true;
    return ChannelError::kNone;
  }

  // May be called from any thread (the pool kills busy workers at shutdown while their callers
  // reap them): the pid is read under pid_mutex_, and it is reaped under it too, so a kill never
  // reaches a process id the system may have given to someone else.
  void kill() {
    std::lock_guard lock(pid_mutex_);
    if (pid_ > 0) ::kill(pid_, SIGKILL);
  }
  // Waits for the process to end and says how it ended ("killed by signal 11 (SIGSEGV)"). Only
  // the thread that holds the worker calls it.
  std::string reap() {
    pid_t pid;
    {
      std::lock_guard lock(pid_mutex_);
      if (pid_ <= 0) return exit_text_;
      pid = pid_;
    }
    // Wait for the end without reaping (an exited, unreaped child keeps its id), then reap.
    siginfo_t info{};
    while (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) < 0 &&
           errno == EINTR) {
    }
    int status = 0;
    std::lock_guard lock(pid_mutex_);
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
    exit_text_ = describe_exit(status);
    return exit_text_;
  }

  // Hands the worker a control block (control_block.hpp), once: from then on every message
  // meets in it first. A worker or kernel that refuses leaves the socket alone in use.
  ChannelError attach_control(Deadline deadline) {
    if (control_ || control_refused_) return ChannelError::kNone;
    std::string error;
    std::unique_ptr<sandbox::ControlBlock> control = sandbox::ControlBlock::create(&error);
    if (!control) {
      control_refused_ = true;
      return ChannelError::kNone;
    }
    MessageWriter w(MessageType::kControl);
    w.pass(control->fd());
    if (ChannelError e = w.send(fd_, deadline); e != ChannelError::kNone) return e;
    MessageType type{};
    std::uint64_t length = 0;
    if (ChannelError e = reader_.next(deadline, type, length); e != ChannelError::kNone) return e;
    if (type == MessageType::kOk) {
      control_ = std::move(control);
    } else if (type == MessageType::kError) {
      control_refused_ = true;
    } else {
      return ChannelError::kProtocol;
    }
    return reader_.skip_rest();
  }

  // Sends a request: through the control block when there is one and it fits there.
  ChannelError post(MessageWriter& w, Deadline deadline) {
    return control_ ? control_->send(w, fd_, deadline) : w.send(fd_, deadline);
  }

  // The header of the worker's reply (the body then read from reader()), wherever it is.
  ChannelError next_reply(Deadline deadline, MessageType& type, std::uint64_t& length) {
    if (control_) {
      sandbox::Posted where{};
      if (ChannelError e = control_->receive(reader_, fd_, deadline, where);
          e != ChannelError::kNone) {
        return e;
      }
      if (where == sandbox::Posted::kNothing) return ChannelError::kProtocol;
    }
    return reader_.next(deadline, type, length);
  }

  // After a request that has no reply (kUnload): the worker gives the turn back.
  ChannelError expect_no_reply(Deadline deadline) {
    if (!control_) return ChannelError::kNone;
    sandbox::Posted where{};
    if (ChannelError e = control_->receive(reader_, fd_, deadline, where);
        e != ChannelError::kNone) {
      return e;
    }
    return where == sandbox::Posted::kNothing ? ChannelError::kNone : ChannelError::kProtocol;
  }

  pid_t pid() const noexcept {
    std::lock_guard lock(pid_mutex_);
    return pid_;
  }
  int fd() const noexcept { return fd_; }
  MessageReader& reader() noexcept { return reader_; }
  std::unordered_set<std::uint64_t>& loaded() noexcept { return loaded_; }
  const std::string& confinement() const noexcept { return confinement_; }
  std::vector<std::uint64_t> pending_unloads;  // guarded by the pool's mutex

 private:
  mutable std::mutex pid_mutex_;
  pid_t pid_;  // guarded by pid_mutex_; -1 once reaped
  int fd_;
  MessageReader reader_;
  bool ready_ = false;
  std::string confinement_;
  std::string exit_text_;
  std::unordered_set<std::uint64_t> loaded_;
  std::unique_ptr<sandbox::ControlBlock> control_;  // once attach_control succeeded
  bool control_refused_ = false;
  std::thread log_thread_;  // forward_worker_log; joined once the process is reaped
};

class WorkerPool;

// A worker taken from the pool for one call; goes back when the lease ends, or is killed and
// replaced if the call left it in an unknown state.
class Lease {
 public:
  Lease(WorkerPool* pool, std::unique_ptr<WorkerProcess> worker)
      : pool_(pool), worker_(std::move(worker)) {}
  Lease(Lease&&) = default;
  ~Lease();
  WorkerProcess* operator->() { return worker_.get(); }
  WorkerProcess& operator*() { return *worker_; }
  explicit operator bool() const { return worker_ != nullptr; }
  void mark_broken() { healthy_ = false; }

 private:
  WorkerPool* pool_;
  std::unique_ptr<WorkerProcess> worker_;
  bool healthy_ = true;
};

class WorkerPool {
 public:
  // Workers start when first needed (a model or script stored or restored): a server that never
  // serves models pays nothing for libtorch.
  explicit WorkerPool(SandboxOptions options) : options_(std::move(options)) {
    options_.workers = std::max(1u, options_.workers);
  }
  ~WorkerPool() { shutdown(); }

  const SandboxOptions& options() const noexcept { return options_; }
  // Counts the inputs `request` (sent) passed by descriptor.
  void count_shared(const MessageWriter& request) noexcept {
    inputs_.fetch_add(request.shared_tensors(), std::memory_order_relaxed);
    input_bytes_.fetch_add(request.shared_bytes(), std::memory_order_relaxed);
  }
  // Counts the outputs that came as files.
  void count_shared(const std::vector<OwnedTensor>& outputs) noexcept {
    for (const OwnedTensor& output : outputs) {
      if (dynamic_cast<const SealedFile*>(output.data.storage()) == nullptr) continue;
      outputs_.fetch_add(1, std::memory_order_relaxed);
      output_bytes_.fetch_add(output.data.size(), std::memory_order_relaxed);
    }
  }
  Backend::FileCounters file_counters() const noexcept {
    return {inputs_.load(std::memory_order_relaxed), input_bytes_.load(std::memory_order_relaxed),
            outputs_.load(std::memory_order_relaxed), output_bytes_.load(std::memory_order_relaxed)};
  }
  std::uint64_t next_id() noexcept { return next_id_.fetch_add(1); }

  // A ready worker, or an empty lease with `error` set (shutting down, cannot start one).
  Lease acquire(std::string* error) {
    std::unique_ptr<WorkerProcess> worker;
    {
      std::unique_lock lock(mutex_);
      cv_.wait(lock, [&] { return stopped_ || !idle_.empty() || live_ < options_.workers; });
      if (stopped_) {
        *error = "server shutting down";
        return Lease(this, nullptr);
      }
      if (!idle_.empty()) {
        worker = std::move(idle_.back());
        idle_.pop_back();
      } else {
        ++live_;  // a slot for the one started below
      }
    }
    if (!worker) {
      worker = WorkerProcess::spawn(options_, error);
      if (!worker) {
        std::lock_guard lock(mutex_);
        --live_;
        cv_.notify_one();
        return Lease(this, nullptr);
      }
    }
    std::vector<std::uint64_t> unloads;
    {
      std::lock_guard lock(mutex_);
      busy_.push_back(worker.get());
      unloads.swap(worker->pending_unloads);
    }
    Lease lease(this, std::move(worker));
    if (ChannelError e = lease->wait_ready(Clock::now() + options_.start_timeout);
        e != ChannelError::kNone) {
      lease->kill();
      *error = "the model worker did not start (" + std::string(channel_error_text(e)) + "; " +
               lease->reap() + ")";
      lease.mark_broken();
      return Lease(this, nullptr);  // `lease` goes back broken as it is destroyed
    }
    if (options_.share_memory &&
        lease->attach_control(Clock::now() + options_.start_timeout) != ChannelError::kNone) {
      lease.mark_broken();
      *error = "lost the model worker";
      return Lease(this, nullptr);
    }
    for (std::uint64_t id : unloads) {
      if (!lease->loaded().erase(id)) continue;
      MessageWriter w(MessageType::kUnload);
      w.u64(id);
      const Deadline deadline = Clock::now() + options_.start_timeout;
      if (lease->post(w, deadline) != ChannelError::kNone ||
          lease->expect_no_reply(deadline) != ChannelError::kNone) {
        lease.mark_broken();
        *error = "lost the model worker";
        return Lease(this, nullptr);
      }
    }
    return lease;
  }

  void release(std::unique_ptr<WorkerProcess> worker, bool healthy) {
    if (!healthy) {
      worker->kill();
      worker->reap();
      restarts_.fetch_add(1, std::memory_order_relaxed);
    }
    std::lock_guard lock(mutex_);
    std::erase(busy_, worker.get());
    if (healthy && !stopped_) {
      idle_.push_back(std::move(worker));
    } else {
      --live_;
      worker.reset();  // kills and reaps
    }
    cv_.notify_one();
  }

  // The model or script `id` is gone: unload it from every worker (each at its next call).
  void forget(std::uint64_t id) {
    std::lock_guard lock(mutex_);
    for (auto& worker : idle_) worker->pending_unloads.push_back(id);
    for (WorkerProcess* worker : busy_) worker->pending_unloads.push_back(id);
  }

  void shutdown() {
    std::vector<std::unique_ptr<WorkerProcess>> idle;
    {
      std::lock_guard lock(mutex_);
      if (stopped_) return;
      stopped_ = true;
      idle.swap(idle_);
      live_ -= static_cast<unsigned>(idle.size());
      // A busy worker's call fails at once (its channel closes) and its thread lets it go.
      for (WorkerProcess* worker : busy_) worker->kill();
    }
    cv_.notify_all();
  }

 private:
  SandboxOptions options_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<WorkerProcess>> idle_;  // guarded by mutex_
  std::vector<WorkerProcess*> busy_;                 // guarded by mutex_
  unsigned live_ = 0;                                // idle + busy, guarded by mutex_
  bool stopped_ = false;                             // guarded by mutex_
  std::atomic<std::uint64_t> next_id_{1};
  std::atomic<std::uint64_t> restarts_{0};
  // Tensors passed by descriptor (file_counters).
  std::atomic<std::uint64_t> inputs_{0}, input_bytes_{0}, outputs_{0}, output_bytes_{0};
};

Lease::~Lease() {
  if (worker_) pool_->release(std::move(worker_), healthy_);
}

std::int64_t ms_since(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}

// Turns a failed exchange with a worker into a Status, killing the worker when its state is
// unknown: timed out (still running), died, or sent something malformed.
Status lost_worker(Lease& lease, ChannelError error, std::string_view doing,
                   Clock::time_point start) {
  lease.mark_broken();
  lease->kill();
  const std::string how = lease->reap();
  if (error == ChannelError::kTimedOut) {
    return Status::timeout(std::string(doing) + " was stopped after " +
                           std::to_string(ms_since(start)) + " ms: it exceeded its time limit");
  }
  if (error == ChannelError::kTooLarge) {  // refused from its sizes: the bytes were never read
    return Status::failure(std::string(doing) + " was refused: " + lease->reader().problem() +
                           "; nothing was stored");
  }
  if (error == ChannelError::kClosed) {
    return Status::failure(std::string(doing) + " crashed the sandboxed worker process (" + how +
                           "); the server is unaffected");
  }
  const std::string detail = error == ChannelError::kProtocol && !lease->reader().problem().empty()
                                 ? lease->reader().problem()
                                 : std::string(channel_error_text(error));
  return Status::failure(std::string(doing) + " failed: lost the model worker (" + detail + ")");
}

// Reads a reply of `expected` type (or kError) and hands the body to `on_body`.
template <typename OnBody>
Status read_reply(Lease& lease, Deadline deadline, MessageType expected, std::string_view doing,
                  Clock::time_point start, OnBody on_body) {
  MessageReader& reader = lease->reader();
  MessageType type{};
  std::uint64_t length = 0;
  ChannelError e = lease->next_reply(deadline, type, length);
  if (e == ChannelError::kNone && type == MessageType::kError) {
    std::string message;
    e = reader.str(message);
    if (e == ChannelError::kNone) return Status::failure(message);
  } else if (e == ChannelError::kNone && type == expected) {
    e = on_body(reader);
    if (e == ChannelError::kNone) e = reader.skip_rest();
    if (e == ChannelError::kNone) return Status::success();
  } else if (e == ChannelError::kNone) {
    e = ChannelError::kProtocol;
  }
  return lost_worker(lease, e, doing, start);
}

// What models and scripts share: their id in the workers, their bytes (to load them into a
// worker that has not got them yet) and the pool.
class SandboxedCode {
 public:
  SandboxedCode(std::shared_ptr<WorkerPool> pool, std::uint64_t id, MessageType load_type,
                std::string bytes, Device device)
      : pool_(std::move(pool)),
        id_(id),
        load_type_(load_type),
        bytes_(std::move(bytes)),
        device_(device) {}
  ~SandboxedCode() { pool_->forget(id_); }

  // Loads into `lease`'s worker unless it has it. `on_ok` reads the kOk body.
  template <typename OnOk>
  Status load_into(Lease& lease, Deadline deadline, Clock::time_point start, OnOk on_ok) {
    if (lease->loaded().count(id_)) return Status::success();
    MessageWriter w(load_type_);
    w.u64(id_);
    w.str(device_.str());
    w.str_ref(bytes_);
    const std::string_view doing = load_type_ == MessageType::kLoadScript ? "compiling the script"
                                   : load_type_ == MessageType::kLoadOnnxModel
                                       ? "loading the ONNX model"
                                       : "loading the model";
    if (ChannelError e = lease->post(w, deadline); e != ChannelError::kNone) {
      return lost_worker(lease, e, doing, start);
    }
    Status status = read_reply(lease, deadline, MessageType::kOk, doing, start, on_ok);
    if (status.ok) lease->loaded().insert(id_);
    return status;
  }

  // Takes a worker, makes sure it has this code, sends `request` and reads the outputs.
  Status call(MessageWriter& request, const RunLimits& limits, std::vector<OwnedTensor>& outputs) {
    outputs.clear();
    const auto start = Clock::now();
    std::string error;
    Lease lease = pool_->acquire(&error);
    if (!lease) return Status::failure(error);
    const Deadline load_deadline = std::min(limits.deadline, start + pool_->options().load_timeout);
    Status status = load_into(lease, load_deadline, start, [](MessageReader&) {
      return ChannelError::kNone;
    });
    if (!status.ok) return status;
    if (ChannelError e = lease->post(request, limits.deadline); e != ChannelError::kNone) {
      return lost_worker(lease, e, "the run", start);
    }
    pool_->count_shared(request);
    lease->reader().accept_files(pool_->options().share_memory ? sandbox::FileUse::kSealAndMap
                                                               : sandbox::FileUse::kRefuse);
    status = read_reply(lease, limits.deadline, MessageType::kOutputs, "the run", start,
                        [&](MessageReader& reader) {
                          return reader.tensors(outputs, limits.max_output_bytes);
                        });
    if (!status.ok) outputs.clear();
    pool_->count_shared(outputs);
    return status;
  }

  std::uint64_t id() const noexcept { return id_; }
  const Device& device() const noexcept { return device_; }
  WorkerPool& pool() noexcept { return *pool_; }

 private:
  std::shared_ptr<WorkerPool> pool_;
  const std::uint64_t id_;
  const MessageType load_type_;
  const std::string bytes_;
  const Device device_;
};

class SandboxModel final : public Model {
 public:
  explicit SandboxModel(std::unique_ptr<SandboxedCode> code) : code_(std::move(code)) {}

  Status run(std::span<const TensorView> inputs, std::vector<OwnedTensor>& outputs,
             const RunLimits& limits) override {
    MessageWriter request(MessageType::kRunModel);
    const bool share = code_->pool().options().share_memory;
    request.u64(code_->id());
    request.u8(share ? sandbox::kOutputsInFiles : 0);
    request.tensors(inputs, share);
    return code_->call(request, limits, outputs);
  }
  const Device& device() const override { return code_->device(); }

 private:
  std::unique_ptr<SandboxedCode> code_;
};

class SandboxScript final : public Script {
 public:
  SandboxScript(std::unique_ptr<SandboxedCode> code, std::vector<std::string> functions)
      : code_(std::move(code)), functions_(std::move(functions)) {}

  bool has_function(std::string_view function) const override {
    return std::find(functions_.begin(), functions_.end(), function) != functions_.end();
  }
  std::vector<std::string> functions() const override { return functions_; }

  Status run(std::string_view function, std::span<const TensorView> inputs,
             std::span<const std::string> keys, std::span<const std::string> args,
             std::vector<OwnedTensor>& outputs, const RunLimits& limits) override {
    if (!has_function(function)) {
      outputs.clear();
      return Status::failure("the script has no function '" + std::string(function) + "'");
    }
    const bool share = code_->pool().options().share_memory;
    MessageWriter request(MessageType::kRunScript);
    request.u64(code_->id());
    request.u8(share ? sandbox::kOutputsInFiles : 0);
    request.str(function);
    request.strs(keys);
    request.strs(args);
    request.tensors(inputs, share);
    return code_->call(request, limits, outputs);
  }
  const Device& device() const override { return code_->device(); }

 private:
  std::unique_ptr<SandboxedCode> code_;
  const std::vector<std::string> functions_;
};

class SandboxBackend final : public Backend {
 public:
  explicit SandboxBackend(SandboxOptions options)
      : pool_(std::make_shared<WorkerPool>(std::move(options))) {}
  ~SandboxBackend() override { pool_->shutdown(); }

  std::string_view name() const override { return "TORCH"; }

  Status check_device(const Device& device) const override {
    if (device.kind == Device::Kind::kCpu) return Status::success();
    // Whether a GPU is usable is known in the workers (they load libtorch); asked once.
    std::lock_guard lock(device_mutex_);
    auto cached = device_checks_.find(device.str());
    if (cached != device_checks_.end()) return cached->second;
    const auto start = Clock::now();
    std::string error;
    Lease lease = pool_->acquire(&error);
    if (!lease) return Status::failure(error);
    MessageWriter w(MessageType::kDeviceCheck);
    w.str(device.str());
    const Deadline deadline = start + pool_->options().start_timeout;
    Status status = lease->post(w, deadline) == ChannelError::kNone
                        ? read_reply(lease, deadline, MessageType::kOk, "the device check", start,
                                     [](MessageReader&) { return ChannelError::kNone; })
                        : Status::failure("lost the model worker");
    if (!status.ok && status.message.starts_with("the device check")) return status;
    device_checks_[device.str()] = status;
    return status;
  }

  std::shared_ptr<Model> load_model(std::string_view bytes, ModelFormat format,
                                    const Device& device, std::string* error) override {
    const MessageType type =
        format == ModelFormat::kOnnx ? MessageType::kLoadOnnxModel : MessageType::kLoadModel;
    auto code = std::make_unique<SandboxedCode>(pool_, pool_->next_id(), type, std::string(bytes),
                                                device);
    Status status = load(*code, [](MessageReader&) { return ChannelError::kNone; });
    if (!status.ok) {
      return fail(status, format == ModelFormat::kOnnx ? "the ONNX model" : "the model archive",
                  error);
    }
    return std::make_shared<SandboxModel>(std::move(code));
  }

  std::shared_ptr<Script> load_script(std::string_view source, const Device& device,
                                      std::string* error) override {
    auto code = std::make_unique<SandboxedCode>(pool_, pool_->next_id(), MessageType::kLoadScript,
                                                std::string(source), device);
    std::vector<std::string> functions;
    Status status = load(*code, [&](MessageReader& reader) { return reader.strs(functions); });
    if (!status.ok) return fail(status, "the script", error);
    return std::make_shared<SandboxScript>(std::move(code), std::move(functions));
  }

  void shutdown() override { pool_->shutdown(); }
  FileCounters file_counters() const override { return pool_->file_counters(); }

 private:
  template <typename OnOk>
  Status load(SandboxedCode& code, OnOk on_ok) {
    const auto start = Clock::now();
    std::string error;
    Lease lease = pool_->acquire(&error);
    if (!lease) return Status::failure(error);
    return code.load_into(lease, start + pool_->options().load_timeout, start, on_ok);
  }

  static std::nullptr_t fail(const Status& status, std::string_view what, std::string* error) {
    if (error != nullptr) {
      *error = status.message;
      if (status.timed_out) *error += " (" + std::string(what) + " was refused)";
    }
    return nullptr;
  }

  std::shared_ptr<WorkerPool> pool_;
  mutable std::mutex device_mutex_;
  mutable std::map<std::string, Status> device_checks_;  // guarded by device_mutex_
};

}  // namespace

std::shared_ptr<Backend> make_sandboxed_backend(SandboxOptions options) {
  return std::make_shared<SandboxBackend>(std::move(options));
}

}  // namespace slipstream::ml
