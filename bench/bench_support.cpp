// Support shared by the benchmark programs in bench/ (see bench_support.hpp).
#include "bench_support.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <latch>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <thread>

namespace slipstream::bench {

std::string read_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

TempDir::TempDir(const std::string& prefix) {
  std::string pattern = "/tmp/" + prefix + "-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

int free_loopback_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    throw std::runtime_error("cannot bind a loopback port");
  }
  socklen_t length = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length);
  ::close(fd);
  return ntohs(addr.sin_port);
}

bool unix_socket_accepts(const std::string& path) {
  sockaddr_un addr{};
  if (path.size() >= sizeof addr.sun_path) return false;
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0) return false;
  bool accepted = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return accepted;
}

ServerChild::ServerChild(std::string name, const MakeArgs& make_args, const Probe& ready,
                         int attempts)
    : name_(std::move(name)), dir_("slipstream-bench") {
  listen_.dir = dir_.path();
  listen_.socket = listen_.dir + "/server.sock";
  const std::string log = listen_.dir + "/log";
  for (int attempt = 0; attempt < attempts && pid_ <= 0; ++attempt) {
    listen_.port = free_loopback_port();
    std::vector<std::string> args = make_args(listen_);
    pid_ = ::fork();
    if (pid_ == 0) {
      std::freopen(log.c_str(), "a", stdout);
      std::freopen(log.c_str(), "a", stderr);
      std::vector<char*> argv;
      for (auto& arg : args) argv.push_back(arg.data());
      argv.push_back(nullptr);
      ::execvp(argv[0], argv.data());
      std::fprintf(stderr, "cannot execute %s\n", argv[0]);
      std::fflush(stderr);  // freopen made stderr buffered, and _exit does not flush
      ::_exit(127);
    }
    try {
      if (!wait_ready(ready)) stop(SIGKILL);
    } catch (...) {  // the probe failed: leave no child behind
      stop(SIGKILL);
      throw;
    }
  }
  if (pid_ <= 0) throw std::runtime_error(name_ + " did not start: " + read_file(log));
}

ServerChild::~ServerChild() { stop(SIGTERM); }

bool ServerChild::wait_ready(const Probe& ready) {
  for (int i = 0; i < 1000; ++i) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return false;
    }
    if (ready(listen_)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

void ServerChild::stop(int signal) {
  if (pid_ <= 0) return;
  ::kill(pid_, signal);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
}

ConcurrentRun run_concurrently(int threads, double seconds, int min_calls,
                               const std::function<void(int thread)>& call) {
  std::vector<std::vector<Clock::duration>> latencies(threads);
  std::vector<std::string> errors(threads);
  std::latch start(threads + 1);
  std::atomic<Clock::rep> last_end{0};
  const auto duration =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      auto& samples = latencies[t];
      samples.reserve(1 << 16);
      start.arrive_and_wait();
      const auto deadline = Clock::now() + duration;
      try {
        while (true) {
          auto t0 = Clock::now();
          call(t);
          auto t1 = Clock::now();
          samples.push_back(t1 - t0);
          if (t1 >= deadline && static_cast<int>(samples.size()) >= min_calls) break;
        }
      } catch (const std::exception& error) {
        errors[t] = error.what();
      }
      auto end = Clock::now().time_since_epoch().count();
      auto seen = last_end.load();
      while (end > seen && !last_end.compare_exchange_weak(seen, end)) {
      }
    });
  }
  const auto begin = Clock::now();
  start.arrive_and_wait();
  for (auto& worker : workers) worker.join();
  for (const auto& error : errors) {
    if (!error.empty()) throw std::runtime_error(error);
  }
  ConcurrentRun run;
  for (const auto& samples : latencies) {
    run.latencies.insert(run.latencies.end(), samples.begin(), samples.end());
  }
  run.seconds =
      std::chrono::duration<double>(Clock::time_point(Clock::duration(last_end.load())) - begin)
          .count();
  return run;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  std::size_t n = values.size();
  if (n == 0) return 0;
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

double percentile(std::vector<double> values, double fraction) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  auto index = static_cast<std::size_t>(fraction * static_cast<double>(values.size() - 1) + 0.5);
  return values[std::min(index, values.size() - 1)];
}

std::string format_number(double value) {
  char text[32];
  if (value >= 1e7) {
    std::snprintf(text, sizeof text, "%.3g", value);
  } else if (value >= 100) {
    std::snprintf(text, sizeof text, "%.0f", value);
  } else if (value >= 10) {
    std::snprintf(text, sizeof text, "%.1f", value);
  } else {
    std::snprintf(text, sizeof text, "%.2f", value);
  }
  return text;
}

std::string size_label(std::size_t bytes) {
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " B";
}

double process_cpu_seconds(pid_t pid) {
  clockid_t clock{};
  timespec now{};
  if (::clock_getcpuclockid(pid, &clock) != 0 || ::clock_gettime(clock, &now) != 0) {
    throw std::runtime_error("cannot read the CPU time of process " + std::to_string(pid));
  }
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown CPU";
}

std::string load_average() {
  std::istringstream fields(read_file("/proc/loadavg"));
  std::string one, five, fifteen;
  if (!(fields >> one >> five >> fifteen)) return "unknown";
  return one + " " + five + " " + fifteen;
}

std::string command_line(int argc, char** argv) {
  std::string command;
  for (int i = 0; i < argc; ++i) command += (i ? " " : "") + std::string(argv[i]);
  return command;
}

}  // namespace slipstream::bench
