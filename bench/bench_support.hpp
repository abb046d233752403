// Support shared by the benchmark programs in bench/: server child processes and scratch
// directories, the concurrent timing loop, medians and percentiles, and the formatting of figures.
// Needs neither hiredis nor the slipstream library, so every benchmark can link it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace slipstream::bench {

using Clock = std::chrono::steady_clock;

/// The whole content of the file at `path`; empty when it cannot be read.
std::string read_file(const std::string& path);

/// A fresh directory /tmp/<prefix>-XXXXXX, removed with its content on destruction. Throws
/// std::runtime_error when it cannot be made. Not copyable.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

/// A loopback port that was free a moment ago (bind to port 0, read it back, close).
int free_loopback_port();

/// Whether a connection to the Unix socket at `path` is accepted (then closed at once).
bool unix_socket_accepts(const std::string& path);

/// Where a server child listens, handed to the functions that make its argv and probe it.
struct Listen {
  int port = 0;        // a loopback port that was free a moment ago (fresh on each attempt)
  std::string socket;  // <dir>/server.sock, for a server told to listen on a Unix socket
  std::string dir;     // the child's own scratch directory, for its data (--dir)
};

/// A server child process (slipstream or redis-server) in its own scratch directory, with its
/// stdout and stderr in <dir>/log; SIGTERM, reaped and its directory removed on destruction.
/// Not copyable.
class ServerChild {
 public:
  using MakeArgs = std::function<std::vector<std::string>(const Listen&)>;
  using Probe = std::function<bool(const Listen&)>;

  /// Starts `make_args(listen)` (argv[0] is looked up in PATH when it has no slash) and polls
  /// `ready(listen)` every 10 ms until it returns true. A child that exits first, or is not ready
  /// after about 10 s, is killed and started again on a fresh port, up to `attempts` times in all
  /// (a free port can be taken by another process before the child binds it). Throws
  /// std::runtime_error("<name> did not start: <log>") when no attempt got ready.
  ServerChild(std::string name, const MakeArgs& make_args, const Probe& ready, int attempts = 1);
  ~ServerChild();
  ServerChild(const ServerChild&) = delete;
  ServerChild& operator=(const ServerChild&) = delete;

  const std::string& name() const { return name_; }
  /// The child's process id: the server itself, or a wrapper such as taskset that execs it.
  pid_t pid() const { return pid_; }
  int port() const { return listen_.port; }
  const std::string& socket() const { return listen_.socket; }

 private:
  bool wait_ready(const Probe& ready);
  void stop(int signal);

  std::string name_;
  TempDir dir_;
  Listen listen_;
  pid_t pid_ = -1;
};

/// What run_concurrently measured.
struct ConcurrentRun {
  std::vector<Clock::duration> latencies;  // one per call, of all threads together, unsorted
  double seconds = 0;                      // from the common start to the end of the last thread
};

/// Runs `call(thread)` back to back on `threads` threads, started together, each for `seconds`
/// and at least `min_calls` times. `call` must be safe to run beside the other threads' calls. When
/// a call throws, its thread stops and, once all are joined, std::runtime_error is thrown with the
/// first failed thread's message.
ConcurrentRun run_concurrently(int threads, double seconds, int min_calls,
                               const std::function<void(int thread)>& call);

/// `durations` as numbers of `Period` (std::milli for milliseconds, std::micro, ...).
template <typename Period>
std::vector<double> count_in(const std::vector<Clock::duration>& durations) {
  std::vector<double> counts;
  counts.reserve(durations.size());
  for (auto duration : durations) {
    counts.push_back(std::chrono::duration<double, Period>(duration).count());
  }
  return counts;
}

/// The median of `values`: the middle one, or the mean of the two middle ones; 0 when empty.
double median(std::vector<double> values);

/// The value of rank round(fraction * (n - 1)) in sorted order (so the upper middle one for
/// fraction 0.5 and an even count); 0 when empty.
double percentile(std::vector<double> values, double fraction);

/// A figure with three significant digits or so: "%.3g" from 10^7, whole from 100, then one and
/// two decimals.
std::string format_number(double value);

/// "16 MiB", "64 KiB" or "1000 B": the largest unit that divides `bytes` exactly.
std::string size_label(std::size_t bytes);

/// CPU time process `pid` (0: this process) has used so far, all its threads together, in
/// seconds from its CPU-time clock (nanosecond resolution). Throws std::runtime_error when the
/// clock cannot be read.
double process_cpu_seconds(pid_t pid);

/// The "model name" of the first CPU in /proc/cpuinfo, or "unknown CPU".
std::string cpu_model();

/// The 1, 5 and 15 minute load averages of /proc/loadavg, as "0.52 0.58 0.59".
std::string load_average();

/// argv joined by spaces, to print the command that made a table.
std::string command_line(int argc, char** argv);

}  // namespace slipstream::bench
