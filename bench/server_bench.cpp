// Benchmark: `slipstream server` against `redis-server`, both started by this program on free
// loopback ports and driven by the same hiredis client code. Prints a Markdown table of put and get
// throughput and latency per payload size and client count, with the ratio slipstream/redis.
//
// Put is `AI.TENSORSET k UINT8 n BLOB <bytes>` on slipstream and `SET k <bytes>` on redis; get is
// `AI.TENSORGET k BLOB` and `GET k`. The runs of the two servers are interleaved (for each
// repetition, each cell runs on slipstream and then on redis) and each figure is the median over
// the repetitions, because the machine is shared and noisy. A benchmark, not a test: it never fails
// on a figure.
#include <arpa/inet.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <latch>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#ifndef SLIPSTREAM_BINARY
#error "SLIPSTREAM_BINARY must name the slipstream executable"
#endif

namespace {

using Clock = std::chrono::steady_clock;

struct ContextDeleter {
  void operator()(redisContext* context) const { redisFree(context); }
};
struct ReplyDeleter {
  void operator()(redisReply* reply) const { freeReplyObject(reply); }
};
using Context = std::unique_ptr<redisContext, ContextDeleter>;
using Reply = std::unique_ptr<redisReply, ReplyDeleter>;

/// A port that was free a moment ago (bind to port 0, read it back, close).
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

Context connect(int port) {
  Context context(redisConnect("127.0.0.1", port));
  if (!context || context->err) {
    throw std::runtime_error(std::string("cannot connect to port ") + std::to_string(port) + ": " +
                             (context ? context->errstr : "out of memory"));
  }
  timeval timeout{120, 0};
  redisSetTimeout(context.get(), timeout);
  return context;
}

/// A server child process (slipstream or redis-server) on a free loopback port, in its own
/// temporary directory; SIGTERM and reaped on destruction. Not copyable.
class ServerChild {
 public:
  /// `make_args(port, dir)` gives the argv; argv[0] is looked up in PATH when it has no slash.
  template <typename MakeArgs>
  ServerChild(std::string name, MakeArgs make_args) : name_(std::move(name)) {
    char pattern[] = "/tmp/slipstream-bench-XXXXXX";
    if (::mkdtemp(pattern) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = pattern;
    for (int attempt = 0; attempt < 5 && pid_ <= 0; ++attempt) {
      port_ = free_loopback_port();
      std::vector<std::string> args = make_args(port_, dir_);
      std::string log = dir_ + "/log";
      pid_ = ::fork();
      if (pid_ == 0) {
        std::freopen(log.c_str(), "a", stdout);
        std::freopen(log.c_str(), "a", stderr);
        std::vector<char*> argv;
        for (auto& arg : args) argv.push_back(arg.data());
        argv.push_back(nullptr);
        ::execvp(argv[0], argv.data());
        std::fprintf(stderr, "cannot execute %s\n", argv[0]);
        ::_exit(127);
      }
      if (!wait_ready()) stop(SIGKILL);
    }
    if (pid_ <= 0) {
      std::ifstream log(dir_ + "/log");
      std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
      throw std::runtime_error(name_ + " did not start: " + text);
    }
  }
  ~ServerChild() {
    stop(SIGTERM);
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  ServerChild(const ServerChild&) = delete;
  ServerChild& operator=(const ServerChild&) = delete;

  const std::string& name() const { return name_; }
  int port() const { return port_; }

 private:
  bool wait_ready() {
    for (int i = 0; i < 1000; ++i) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return false;
      }
      redisContext* probe = redisConnect("127.0.0.1", port_);
      bool ready = false;
      if (probe != nullptr && probe->err == 0) {
        auto* reply = static_cast<redisReply*>(redisCommand(probe, "PING"));
        ready = reply != nullptr && reply->type == REDIS_REPLY_STATUS;
        if (reply != nullptr) freeReplyObject(reply);
      }
      if (probe != nullptr) redisFree(probe);
      if (ready) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }
  void stop(int signal) {
    if (pid_ <= 0) return;
    ::kill(pid_, signal);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
  }

  std::string name_;
  std::string dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

enum class Operation { kPut, kGet };
enum class Kind { kSlipstream, kRedis };

/// The argv of one put or get; the payload is borrowed, not copied.
struct Request {
  std::vector<const char*> argv;
  std::vector<size_t> lengths;
};

Request make_request(Kind kind, Operation operation, const std::string& key,
                     const std::string& size_text, const std::string& payload) {
  Request request;
  auto add = [&request](const char* data, size_t length) {
    request.argv.push_back(data);
    request.lengths.push_back(length);
  };
  auto add_text = [&add](const std::string& text) { add(text.data(), text.size()); };
  static const std::string kTensorSet = "AI.TENSORSET", kTensorGet = "AI.TENSORGET",
                           kUint8 = "UINT8", kBlob = "BLOB", kSet = "SET", kGet = "GET";
  if (kind == Kind::kSlipstream && operation == Operation::kPut) {
    add_text(kTensorSet), add_text(key), add_text(kUint8), add_text(size_text), add_text(kBlob);
    add(payload.data(), payload.size());
  } else if (kind == Kind::kSlipstream) {
    add_text(kTensorGet), add_text(key), add_text(kBlob);
  } else if (operation == Operation::kPut) {
    add_text(kSet), add_text(key), add(payload.data(), payload.size());
  } else {
    add_text(kGet), add_text(key);
  }
  return request;
}

/// Sends one request and checks its reply: +OK for a put, the payload's length for a get.
void execute(redisContext* context, const Request& request, Operation operation, size_t size) {
  // hiredis 0.14 declares argv as `const char**` but only reads it.
  auto** argv = const_cast<const char**>(request.argv.data());
  Reply reply(static_cast<redisReply*>(redisCommandArgv(
      context, static_cast<int>(request.argv.size()), argv, request.lengths.data())));
  if (!reply) throw std::runtime_error(std::string("connection error: ") + context->errstr);
  bool ok = operation == Operation::kPut
                ? reply->type == REDIS_REPLY_STATUS
                : reply->type == REDIS_REPLY_STRING && static_cast<size_t>(reply->len) == size;
  if (!ok) {
    std::string text = reply->type == REDIS_REPLY_ERROR ? std::string(reply->str, reply->len) : "";
    throw std::runtime_error("unexpected reply (type " + std::to_string(reply->type) + ") " + text);
  }
}

/// Figures of one run (one server, one cell) or the median of several.
struct Figures {
  double ops_per_second = 0;
  double megabytes_per_second = 0;  // 10^6 payload bytes per second
  double median_ms = 0;
  double p99_ms = 0;
};

struct Cell {
  Operation operation;
  size_t size;
  int clients;
};

struct Settings {
  double seconds = 1.0;  // measured time of one run
  int repetitions = 3;   // runs per server and cell; figures are medians over them
  int min_ops_per_client = 3;
};

double percentile(std::vector<double>& sorted, double fraction) {
  if (sorted.empty()) return 0;
  size_t index = static_cast<size_t>(fraction * static_cast<double>(sorted.size() - 1) + 0.5);
  return sorted[std::min(index, sorted.size() - 1)];
}

/// One run: `cell.clients` threads, each with its own connection and key, issue the operation
/// back to back for `settings.seconds` (and at least `min_ops_per_client` times).
Figures run_cell(const ServerChild& server, Kind kind, const Cell& cell, const std::string& payload,
                 const Settings& settings) {
  const std::string size_text = std::to_string(cell.size);
  std::vector<Context> contexts;
  std::vector<std::string> keys;
  for (int client = 0; client < cell.clients; ++client) {
    contexts.push_back(connect(server.port()));
    keys.push_back("bench:" + std::to_string(client));
    if (cell.operation == Operation::kGet) {  // the value to read, written outside the timing
      execute(contexts.back().get(),
              make_request(kind, Operation::kPut, keys.back(), size_text, payload), Operation::kPut,
              cell.size);
    }
  }

  std::vector<std::vector<double>> latencies(cell.clients);
  std::vector<std::string> errors(cell.clients);
  std::latch start(cell.clients + 1);
  std::atomic<Clock::rep> last_end{0};
  const auto duration =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(settings.seconds));
  Clock::time_point begin;
  std::vector<std::thread> threads;
  for (int client = 0; client < cell.clients; ++client) {
    threads.emplace_back([&, client] {
      Request request = make_request(kind, cell.operation, keys[client], size_text, payload);
      auto& samples = latencies[client];
      samples.reserve(4096);
      start.arrive_and_wait();
      const auto deadline = Clock::now() + duration;
      try {
        while (true) {
          auto t0 = Clock::now();
          execute(contexts[client].get(), request, cell.operation, cell.size);
          auto t1 = Clock::now();
          samples.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
          if (t1 >= deadline && static_cast<int>(samples.size()) >= settings.min_ops_per_client) {
            break;
          }
        }
      } catch (const std::exception& error) {
        errors[client] = error.what();
      }
      auto end = Clock::now().time_since_epoch().count();
      auto seen = last_end.load();
      while (end > seen && !last_end.compare_exchange_weak(seen, end)) {
      }
    });
  }
  begin = Clock::now();
  start.arrive_and_wait();
  for (auto& thread : threads) thread.join();
  for (const auto& error : errors) {
    if (!error.empty()) throw std::runtime_error(server.name() + ": " + error);
  }

  std::vector<double> all;
  for (const auto& samples : latencies) all.insert(all.end(), samples.begin(), samples.end());
  std::sort(all.begin(), all.end());
  double elapsed =
      std::chrono::duration<double>(Clock::time_point(Clock::duration(last_end.load())) - begin)
          .count();
  Figures figures;
  figures.ops_per_second = static_cast<double>(all.size()) / elapsed;
  figures.megabytes_per_second = figures.ops_per_second * static_cast<double>(cell.size) / 1e6;
  figures.median_ms = percentile(all, 0.5);
  figures.p99_ms = percentile(all, 0.99);
  return figures;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  if (n == 0) return 0;
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

Figures median_of(const std::vector<Figures>& runs) {
  std::vector<double> ops, megabytes, medians, p99s;
  for (const auto& run : runs) {
    ops.push_back(run.ops_per_second);
    megabytes.push_back(run.megabytes_per_second);
    medians.push_back(run.median_ms);
    p99s.push_back(run.p99_ms);
  }
  return {median(ops), median(megabytes), median(medians), median(p99s)};
}

std::string size_label(size_t bytes) {
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " B";
}

std::string format_number(double value) {
  char text[32];
  if (value >= 100) {
    std::snprintf(text, sizeof text, "%.0f", value);
  } else if (value >= 10) {
    std::snprintf(text, sizeof text, "%.1f", value);
  } else {
    std::snprintf(text, sizeof text, "%.2f", value);
  }
  return text;
}

std::string format_latency(double ms) {
  char text[32];
  std::snprintf(text, sizeof text, ms >= 10 ? "%.1f" : (ms >= 1 ? "%.2f" : "%.3f"), ms);
  return text;
}

std::string redis_version(int port) {
  Context context = connect(port);
  Reply reply(static_cast<redisReply*>(redisCommand(context.get(), "INFO server")));
  if (!reply || reply->type != REDIS_REPLY_STRING) return "unknown";
  std::string info(reply->str, reply->len);
  auto at = info.find("redis_version:");
  if (at == std::string::npos) return "unknown";
  at += 14;
  return info.substr(at, info.find_first_of("\r\n", at) - at);
}

std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown CPU";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Put/get throughput and latency: slipstream server vs redis-server"};
  Settings settings;
  bool quick = false;
  std::vector<size_t> sizes = {1u << 10, 64u << 10, 1u << 20, 16u << 20};
  std::vector<int> client_counts = {1, 8};
  std::string slipstream_binary = SLIPSTREAM_BINARY;
  std::string redis_binary = "redis-server";
  app.add_option("--seconds", settings.seconds, "Measured seconds per run (one server, one cell)")
      ->check(CLI::PositiveNumber);
  app.add_option("--repetitions", settings.repetitions,
                 "Runs per server and cell, interleaved; figures are medians")
      ->check(CLI::PositiveNumber);
  app.add_option("--sizes", sizes, "Payload sizes in bytes");
  app.add_option("--clients", client_counts, "Concurrent client counts (threads)");
  app.add_flag("--quick", quick, "A very short run (1 repetition of 0.1 s): checks, not figures");
  app.add_option("--slipstream", slipstream_binary, "slipstream executable");
  app.add_option("--redis-server", redis_binary, "redis-server executable (default: from PATH)");
  CLI11_PARSE(app, argc, argv);
  if (quick) {
    settings.seconds = 0.1;
    settings.repetitions = 1;
    settings.min_ops_per_client = 1;
  }
  ::signal(SIGPIPE, SIG_IGN);

  try {
    ServerChild slipstream("slipstream", [&](int port, const std::string& dir) {
      return std::vector<std::string>{slipstream_binary,    "server", "--port",
                                      std::to_string(port), "--dir",  dir,
                                      "--loglevel",         "warn"};
    });
    ServerChild redis("redis-server", [&](int port, const std::string& dir) {
      return std::vector<std::string>{
          redis_binary, "--port", std::to_string(port), "--bind", "127.0.0.1",
          "--save",     "",       "--appendonly",       "no",     "--dir",
          dir};
    });

    std::vector<Cell> cells;
    for (Operation operation : {Operation::kPut, Operation::kGet}) {
      for (size_t size : sizes) {
        for (int clients : client_counts) cells.push_back({operation, size, clients});
      }
    }
    // One payload per size, of varied bytes (zero bytes included: the data is binary).
    std::map<size_t, std::string> payloads;
    for (size_t size : sizes) {
      std::string payload(size, '\0');
      for (size_t i = 0; i < size; ++i) payload[i] = static_cast<char>(i * 2654435761u >> 24);
      payloads[size] = std::move(payload);
    }

    std::vector<std::vector<Figures>> slipstream_runs(cells.size()), redis_runs(cells.size());
    const auto started = Clock::now();
    // A short unmeasured pass over every cell first: a freshly started server (page faults, first
    // allocations) is otherwise several times slower on whichever cell comes first.
    Settings warm_up = settings;
    warm_up.seconds = std::min(0.05, settings.seconds);
    warm_up.min_ops_per_client = 1;
    for (size_t i = 0; i < cells.size(); ++i) {
      std::fprintf(stderr, "\rwarm-up, cell %zu/%zu   ", i + 1, cells.size());
      run_cell(slipstream, Kind::kSlipstream, cells[i], payloads[cells[i].size], warm_up);
      run_cell(redis, Kind::kRedis, cells[i], payloads[cells[i].size], warm_up);
    }
    for (int repetition = 0; repetition < settings.repetitions; ++repetition) {
      for (size_t i = 0; i < cells.size(); ++i) {
        std::fprintf(stderr, "\rrepetition %d/%d, cell %zu/%zu   ", repetition + 1,
                     settings.repetitions, i + 1, cells.size());
        slipstream_runs[i].push_back(
            run_cell(slipstream, Kind::kSlipstream, cells[i], payloads[cells[i].size], settings));
        redis_runs[i].push_back(
            run_cell(redis, Kind::kRedis, cells[i], payloads[cells[i].size], settings));
      }
    }
    const double total_seconds = std::chrono::duration<double>(Clock::now() - started).count();
    std::fprintf(stderr, "\rdone in %.0f s%30s\n", total_seconds, "");

    std::string command;
    for (int i = 0; i < argc; ++i) command += (i ? " " : "") + std::string(argv[i]);
    std::printf(
        "Machine: %u hardware threads, %s. redis-server %s (`--save '' --appendonly no`), "
        "slipstream with its default threads.\n",
        std::thread::hardware_concurrency(), cpu_model().c_str(),
        redis_version(redis.port()).c_str());
    std::printf(
        "Command: `%s` (%d repetition(s) of %.2f s per server and cell, interleaved; "
        "medians over repetitions; %.0f s in all).\n",
        command.c_str(), settings.repetitions, settings.seconds, total_seconds);
    std::printf(
        "Put: slipstream `AI.TENSORSET k UINT8 n BLOB <bytes>`, redis `SET k <bytes>`. "
        "Get: slipstream `AI.TENSORGET k BLOB`, redis `GET k`. "
        "Latency in ms; MB = 10^6 bytes.\n\n");
    std::printf(
        "| op | size | clients | slipstream ops/s | slipstream MB/s | slipstream p50 / p99 "
        "| redis ops/s | redis MB/s | redis p50 / p99 | ratio (ops/s) |\n");
    std::printf("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (size_t i = 0; i < cells.size(); ++i) {
      Figures s = median_of(slipstream_runs[i]);
      Figures r = median_of(redis_runs[i]);
      double ratio = r.ops_per_second > 0 ? s.ops_per_second / r.ops_per_second : 0;
      std::printf(
          "| %s | %s | %d | %s | %s | %s / %s | %s | %s | %s / %s | %.2fx |\n",
          cells[i].operation == Operation::kPut ? "put" : "get", size_label(cells[i].size).c_str(),
          cells[i].clients, format_number(s.ops_per_second).c_str(),
          format_number(s.megabytes_per_second).c_str(), format_latency(s.median_ms).c_str(),
          format_latency(s.p99_ms).c_str(), format_number(r.ops_per_second).c_str(),
          format_number(r.megabytes_per_second).c_str(), format_latency(r.median_ms).c_str(),
          format_latency(r.p99_ms).c_str(), ratio);
    }
  } catch (const std::exception& error) {
    std::fprintf(stderr, "\nserver_bench: %s\n", error.what());
    return 1;
  }
  return 0;
}
