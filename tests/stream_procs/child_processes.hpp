// Test support: child processes whose stdout the test reads line by line (fork/exec with a pipe),
// waited for with deadlines, and killed and reaped when the test ends however it ends.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace slipstream::testing {

/// One child process with its stdout on a pipe (stderr is the test's). The destructor kills it
/// with SIGKILL (if it still runs) and reaps it. The child also gets SIGKILL when the test process
/// dies, so a crashed test leaves no process behind.
class ChildProcess {
 public:
  ChildProcess(std::string name, const std::vector<std::string>& argv) : name_(std::move(name)) {
    // Built before fork: the child only calls async-signal-safe functions until exec.
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
    pid_ = ::fork();
    if (pid_ < 0) {
      ::close(fds[0]);
      ::close(fds[1]);
      throw std::runtime_error("fork failed");
    }
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      ::dup2(fds[1], STDOUT_FILENO);  // dup2 clears close-on-exec on the copy
      ::execv(args[0], args.data());
      ::_exit(127);
    }
    ::close(fds[1]);
    fd_ = fds[0];
    ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);
  }
  ~ChildProcess() {
    kill();
    if (fd_ >= 0) ::close(fd_);
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  const std::string& name() const { return name_; }
  /// The complete lines it has written so far (read by ProcessGroup::pump).
  const std::vector<std::string>& lines() const { return lines_; }
  bool has_line(std::string_view line) const {
    return std::find(lines_.begin(), lines_.end(), line) != lines_.end();
  }
  /// True once it has exited and its stdout is at end of file.
  bool finished() const { return reaped_ && fd_ < 0; }
  /// The wait status (valid once reaped).
  int status() const { return status_; }
  bool exited_with(int code) const {
    return reaped_ && WIFEXITED(status_) && WEXITSTATUS(status_) == code;
  }
  std::string describe_status() const {
    if (!reaped_) return "running";
    if (WIFEXITED(status_)) return "exit " + std::to_string(WEXITSTATUS(status_));
    if (WIFSIGNALED(status_)) return "signal " + std::to_string(WTERMSIG(status_));
    return "status " + std::to_string(status_);
  }

  /// SIGKILL and reap (no-op once reaped). What it wrote before is still in lines().
  void kill() {
    if (reaped_) return;
    ::kill(pid_, SIGKILL);
    if (::waitpid(pid_, &status_, 0) == pid_) reaped_ = true;
  }

  int fd() const { return fd_; }
  /// Reads what is available; closes the pipe at end of file.
  void read_available() {
    char buffer[4096];
    bool at_end = false;
    for (;;) {
      const ssize_t n = ::read(fd_, buffer, sizeof buffer);
      if (n > 0) {
        pending_.append(buffer, static_cast<std::size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      at_end = n == 0;
      break;  // EAGAIN, end of file or an error
    }
    for (std::size_t end; (end = pending_.find('\n')) != std::string::npos;) {
      lines_.push_back(pending_.substr(0, end));
      pending_.erase(0, end + 1);
    }
    if (at_end) {
      ::close(fd_);
      fd_ = -1;
      if (!pending_.empty()) lines_.push_back(std::exchange(pending_, {}));  // no final newline
    }
  }
  void try_reap() {
    if (!reaped_ && ::waitpid(pid_, &status_, WNOHANG) == pid_) reaped_ = true;
  }

 private:
  std::string name_;
  pid_t pid_ = -1;
  int fd_ = -1;
  int status_ = 0;
  bool reaped_ = false;
  std::string pending_;
  std::vector<std::string> lines_;
};

/// The children of one test. Every wait has a deadline and reads every child's stdout meanwhile,
/// so no child blocks on a full pipe while the test waits for another.
class ProcessGroup {
 public:
  ChildProcess& start(std::string name, const std::vector<std::string>& argv) {
    children_.push_back(std::make_unique<ChildProcess>(std::move(name), argv));
    return *children_.back();
  }

  /// Reads the children's output until `done()` holds or `timeout` passes; returns done().
  bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      if (done()) return true;
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return done();
      pump(std::min<std::chrono::milliseconds>(left, std::chrono::milliseconds(20)));
    }
  }
  /// Waits until `child` has written `line`.
  bool wait_for_line(const ChildProcess& child, std::string_view line,
                     std::chrono::milliseconds timeout) {
    return wait_until([&] { return child.has_line(line); }, timeout);
  }
  /// Waits until every child has exited and closed its stdout.
  bool wait_all_finished(std::chrono::milliseconds timeout) {
    return wait_until(
        [&] {
          return std::all_of(children_.begin(), children_.end(),
                             [](const auto& child) { return child->finished(); });
        },
        timeout);
  }

  /// Every child's status and output, for failure messages.
  std::string transcript() const {
    std::string out;
    for (const auto& child : children_) {
      out += "--- " + child->name() + " (" + child->describe_status() + ")\n";
      for (const std::string& line : child->lines()) out += "  " + line + "\n";
    }
    return out;
  }

 private:
  void pump(std::chrono::milliseconds timeout) {
    std::vector<pollfd> fds;
    for (const auto& child : children_) {
      if (child->fd() >= 0) fds.push_back(pollfd{child->fd(), POLLIN, 0});
    }
    if (fds.empty()) {
      ::usleep(static_cast<useconds_t>(timeout.count()) * 1000);
    } else {
      ::poll(fds.data(), fds.size(), static_cast<int>(timeout.count()));
    }
    for (const auto& child : children_) {
      if (child->fd() >= 0) child->read_available();
      child->try_reap();
    }
  }

  std::vector<std::unique_ptr<ChildProcess>> children_;
};

}  // namespace slipstream::testing
