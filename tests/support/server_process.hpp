// Test support: starts a real `slipstream server` process on a free loopback port (and a Unix
// socket in a private temporary directory), waits until it answers, and stops it on destruction.
#pragma once

#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#ifndef SLIPSTREAM_BINARY
#error "SLIPSTREAM_BINARY must name the slipstream executable"
#endif

namespace slipstream::testing {

/// A port that was free a moment ago (bind to port 0, read it back, close).
inline int free_loopback_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    throw std::runtime_error("cannot bind a loopback port");
  }
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

/// `count` distinct ports that were free a moment ago (for servers that must know each other's
/// ports before they start, such as cluster members).
inline std::vector<int> free_loopback_ports(int count) {
  std::vector<int> ports;
  while (static_cast<int>(ports.size()) < count) {
    int port = free_loopback_port();
    bool seen = false;
    for (int p : ports) seen = seen || p == port;
    if (!seen) ports.push_back(port);
  }
  return ports;
}

/// A fresh private directory `<temp>/<prefix>-XXXXXX` (temp: TMPDIR, else /tmp); the caller
/// removes it. Throws std::runtime_error when it cannot be made.
/// The peak resident memory of process `pid` (VmHWM), in bytes; 0 when it cannot be read.
inline std::size_t peak_resident_bytes(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;  // in kB
  }
  return 0;
}

/// How much a peak reading grew from `before` to `after`; 0 when it reads lower (the kernel's
/// resident-memory counters are per-thread caches, summed lazily, so two readings of a peak that
/// did not move may differ by a few pages either way).
inline std::size_t growth_between(std::size_t before, std::size_t after) {
  return after > before ? after - before : 0;
}

inline std::string make_temp_dir(const std::string& prefix) {
  std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("cannot make a temporary directory " + pattern + ": " +
                             std::strerror(errno));
  }
  return pattern;
}

class ServerProcess {
 public:
  /// Starts the server with `extra_args` appended to the defaults. The snapshot directory is a
  /// fresh temporary directory unless `dir` is given (to test restarts over the same data). The
  /// TCP port is a free one unless `port` is given.
  explicit ServerProcess(std::vector<std::string> extra_args = {}, std::string dir = {},
                         int port = 0)
      : fixed_port_(port) {
    tmpdir_ = make_temp_dir("slipstream-test");
    dir_ = dir.empty() ? tmpdir_ : dir;
    socket_path_ = tmpdir_ + "/slipstream.sock";
    start(std::move(extra_args));
  }
  ~ServerProcess() {
    stop();
    std::error_code ec;
    std::filesystem::remove_all(tmpdir_, ec);
  }
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  int port() const { return port_; }
  const std::string& unix_socket() const { return socket_path_; }
  const std::string& dir() const { return dir_; }
  pid_t pid() const { return pid_; }
  std::string tcp_address() const { return "tcp://127.0.0.1:" + std::to_string(port_); }
  std::string unix_address() const { return "unix://" + socket_path_; }

  /// Sends SIGTERM and waits; returns the exit status (or -1 if already stopped).
  int stop(int signal = SIGTERM) {
    if (pid_ <= 0) return -1;
    ::kill(pid_, signal);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return status;
  }
  /// Waits for the process to exit by itself (after SHUTDOWN), up to `timeout`.
  bool wait_exit(std::chrono::milliseconds timeout, int* status_out = nullptr) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        pid_ = -1;
        if (status_out) *status_out = status;
        return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }

 private:
  void start(std::vector<std::string> extra_args) {
    for (int attempt = 0; attempt < 5; ++attempt) {
      port_ = fixed_port_ > 0 ? fixed_port_ : free_loopback_port();
      std::vector<std::string> args = {SLIPSTREAM_BINARY, "server", "--port", std::to_string(port_),
                                       "--unixsocket", socket_path_, "--dir", dir_,
                                       "--loglevel", "warn"};
      args.insert(args.end(), extra_args.begin(), extra_args.end());
      // A whole suite run again with one setting forced (CTest's models_socket_path runs the
      // model tests with --model-shared-memory no): words separated by spaces, after the test's.
      if (const char* forced = std::getenv("SLIPSTREAM_TEST_SERVER_ARGS")) {
        std::istringstream words(forced);
        for (std::string word; words >> word;) args.push_back(word);
      }
      const bool main_thread = ::gettid() == ::getpid();
      pid_ = ::fork();
      if (pid_ == 0) {
        // Die with the test: an aborted test (a sanitizer report, a crash) must not leave a
        // server behind holding CTest's output pipe open, which would hang the run. The signal
        // follows the forking thread, so only a server started from the main thread asks for it.
        if (main_thread) ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        std::vector<char*> argv;
        for (auto& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        ::execv(argv[0], argv.data());
        ::_exit(127);
      }
      if (wait_ready()) return;
      stop(SIGKILL);
    }
    throw std::runtime_error("slipstream server did not start");
  }
  bool wait_ready() {
    // Up to 30 s: a server restoring models from a snapshot starts model workers first, and a
    // loaded 2-core machine makes that slow.
    for (int i = 0; i < 3000; ++i) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return false;
      }
      int fd = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      addr.sin_port = htons(static_cast<uint16_t>(port_));
      bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
      ::close(fd);
      if (ok && unix_socket_ready()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }

  // The Unix socket is bound after the TCP port: wait for both before declaring the server ready.
  bool unix_socket_ready() const {
    int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", socket_path_.c_str());
    bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    ::close(fd);
    return ok;
  }

  std::string tmpdir_, dir_, socket_path_;
  int port_ = 0;
  int fixed_port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace slipstream::testing
