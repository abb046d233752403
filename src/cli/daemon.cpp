// `slipstream server --daemonize` (see daemon.hpp).
#include "cli/daemon.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "launch/readiness.hpp"

namespace slipstream::cli {
namespace {

namespace fs = std::filesystem;

std::string log_path(const DaemonOptions& daemon, const server::ServerOptions& options) {
  if (!daemon.log_file.empty()) return daemon.log_file;
  return (fs::path(options.dir) / "slipstream.log").string();
}

// Where the parent pings its server: the Unix socket if there is one, else the TCP port on the
// loopback when the server listens on every interface.
std::string ready_address(const server::ServerOptions& options) {
  if (!options.unix_socket.empty()) return "unix://" + options.unix_socket;
  if (options.port == 0) {
    throw std::runtime_error(
        "--daemonize needs --port or --unixsocket: the server's address must be known to tell "
        "when it is ready");
  }
  std::string host = options.bind;
  if (host == "0.0.0.0" || host == "::" || host.empty()) host = "127.0.0.1";
  if (host.find(':') != std::string::npos) host = "[" + host + "]";
  return "tcp://" + host + ":" + std::to_string(options.port);
}

// What the server wrote to its log since `offset` (its own start), at most the last 4 KiB.
std::string log_since(const std::string& path, std::streamoff offset) {
  std::ifstream in(path, std::ios::binary);
  in.seekg(0, std::ios::end);
  const std::streamoff end = in.tellg();
  const std::streamoff from = std::max(offset, end - std::streamoff{4096});
  in.seekg(from);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_pid_file(const std::string& path, pid_t pid) {
  const std::string temp = path + ".tmp";
  {
    std::ofstream out(temp, std::ios::trunc);
    out << pid << "\n";
    if (!out) throw std::runtime_error("cannot write the pid file " + temp);
  }
  std::error_code error;
  fs::rename(temp, path, error);
  if (error) throw std::runtime_error("cannot write the pid file " + path + ": " + error.message());
}

std::string exit_text(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "was killed by signal " + std::to_string(WTERMSIG(status));
  return "stopped";
}

}  // namespace

std::optional<int> daemonize(const DaemonOptions& daemon, const server::ServerOptions& options) {
  const std::string address = ready_address(options);
  const std::string log = log_path(daemon, options);
  const int log_fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (log_fd < 0) {
    throw std::runtime_error("cannot open the log file " + log + ": " + std::strerror(errno));
  }
  const std::streamoff log_start = ::lseek(log_fd, 0, SEEK_END);
  std::cout.flush();
  std::cerr.flush();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(log_fd);
    throw std::runtime_error(std::string("cannot fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    // The server: its own session (no terminal's signals reach it), output to the log.
    ::setsid();
    const int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) {
      ::dup2(null_fd, STDIN_FILENO);
      ::close(null_fd);
    }
    ::dup2(log_fd, STDOUT_FILENO);
    ::dup2(log_fd, STDERR_FILENO);
    ::close(log_fd);
    return std::nullopt;
  }
  ::close(log_fd);

  int status = 0;
  bool exited = false;
  auto still_running = [&] {
    exited = ::waitpid(pid, &status, WNOHANG) == pid;
    return !exited;
  };
  try {
    const bool ready = launch::wait_until_ready(
        {address}, options.password.empty() ? std::nullopt : std::optional(options.password),
        std::chrono::milliseconds(static_cast<long>(daemon.ready_timeout * 1000.0)), still_running,
        static_cast<long>(pid));
    if (!ready) {
      std::cerr << "slipstream server: the server " << exit_text(status)
                << " during start-up; its log " << log << " ends:\n"
                << log_since(log, log_start);
      return 1;
    }
  } catch (const std::exception& e) {
    if (!exited) {
      ::kill(pid, SIGTERM);
      ::waitpid(pid, &status, 0);
    }
    std::cerr << "slipstream server: not ready: " << e.what() << "; stopped it (pid " << pid
              << "). Its log " << log << " ends:\n"
              << log_since(log, log_start);
    return 1;
  }
  if (!daemon.pid_file.empty()) {
    try {
      write_pid_file(daemon.pid_file, pid);
    } catch (const std::exception& e) {
      // Nobody could find or stop a server whose pid file was not written: it must not run on.
      ::kill(pid, SIGTERM);
      ::waitpid(pid, &status, 0);
      throw std::runtime_error(std::string(e.what()) + "; stopped the server (pid " +
                               std::to_string(pid) + ")");
    }
  }
  std::cout << "slipstream server ready on " << address << " (pid " << pid << ", log " << log
            << ")\n";
  return 0;
}

void remove_pid_file(const DaemonOptions& daemon) {
  if (daemon.pid_file.empty()) return;
  std::ifstream in(daemon.pid_file);
  long pid = 0;
  if (in >> pid && pid == static_cast<long>(::getpid())) {
    std::error_code ignored;
    fs::remove(daemon.pid_file, ignored);
  }
}

}  // namespace slipstream::cli
