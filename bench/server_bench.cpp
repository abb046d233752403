// Benchmark: `slipstream server` against `redis-server`, both started by this program on free
// loopback ports (or Unix sockets, --unix) and driven by the same hiredis client code. Prints a
// Markdown table of put and get throughput and latency per payload size and client count, with the
// ratio slipstream/redis, and a second table of each server's CPU time per operation and per MiB:
// with few cores, throughput cannot show how a server would scale to many clients, but the CPU it
// spends per operation predicts it. --pin puts the client on core 0 and the servers on core 1.
//
// Put is `AI.TENSORSET k UINT8 n BLOB <bytes>` on slipstream and `SET k <bytes>` on redis; get is
// `AI.TENSORGET k BLOB` and `GET k`. The runs of the two servers are interleaved (for each
// repetition, each cell runs on slipstream and then on redis) and each figure is the median over
// the repetitions, because the machine is shared and noisy. A benchmark, not a test: it never fails
// on a figure.
#include <hiredis/hiredis.h>
#include <sched.h>
#include <signal.h>
#include <sys/types.h>
#include <time.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "bench_support.hpp"
#include "hiredis_handles.hpp"

#ifndef SLIPSTREAM_BINARY
#error "SLIPSTREAM_BINARY must name the slipstream executable"
#endif

namespace {

using slipstream::bench::Clock;
using slipstream::bench::cpu_model;
using slipstream::bench::format_number;
using slipstream::bench::load_average;
using slipstream::bench::Listen;
using slipstream::bench::ServerChild;
using slipstream::bench::size_label;

using Context = slipstream::bench::HiredisContext;
using Reply = slipstream::bench::HiredisReply;

/// A connection to the Unix socket `socket` or, where it is empty, to the loopback `port`.
Context try_connect(int port, const std::string& socket) {
  return Context(socket.empty() ? redisConnect("127.0.0.1", port)
                                : redisConnectUnix(socket.c_str()));
}

Context connect(int port, const std::string& socket) {
  Context context = try_connect(port, socket);
  if (!context || context->err) {
    throw std::runtime_error("cannot connect to " +
                             (socket.empty() ? "port " + std::to_string(port) : socket) + ": " +
                             (context ? context->errstr : "out of memory"));
  }
  timeval timeout{120, 0};
  redisSetTimeout(context.get(), timeout);
  return context;
}

/// Whether the server at `port` or `socket` (as for try_connect) answers PING.
bool answers_ping(int port, const std::string& socket) {
  Context probe = try_connect(port, socket);
  if (!probe || probe->err != 0) return false;
  Reply reply(static_cast<redisReply*>(redisCommand(probe.get(), "PING")));
  return reply && reply->type == REDIS_REPLY_STATUS;
}

/// CPU time a process has used so far, all its threads (living and exited) together.
struct CpuTime {
  double seconds = 0;          // from the process's CPU-time clock (nanosecond resolution)
  long long user_ticks = 0;    // utime, field 14 of /proc/PID/stat, in clock ticks
  long long system_ticks = 0;  // stime, field 15
};

CpuTime read_cpu_time(pid_t pid) {
  CpuTime time;
  time.seconds = slipstream::bench::process_cpu_seconds(pid);
  // Field 2, the command name in parentheses, may hold spaces: count from the last ')'.
  const std::string path = "/proc/" + std::to_string(pid) + "/stat";
  const std::string stat = slipstream::bench::read_file(path);
  const auto name_end = stat.rfind(')');
  if (name_end == std::string::npos) throw std::runtime_error("cannot read " + path);
  std::istringstream fields(stat.substr(name_end + 1));
  std::string field;
  for (int number = 3; number <= 15 && fields >> field; ++number) {
    if (number == 14) time.user_ticks = std::stoll(field);
    if (number == 15) time.system_ticks = std::stoll(field);
  }
  return time;
}

/// Pins the calling thread, and the threads and processes it starts afterwards, to `core`.
void pin_to_core(int core) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(core, &set);
  if (::sched_setaffinity(0, sizeof set, &set) != 0) {
    throw std::system_error(errno, std::generic_category(),
                            "cannot pin to core " + std::to_string(core));
  }
}

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
  // The server process's CPU time (all threads, user and system) during the run, per operation,
  // per MiB (2^20 bytes) of payload, per second of the run (1 = one core busy), and the share of
  // it spent in the kernel (coarse: from clock ticks).
  double server_cpu_us_per_op = 0;
  double server_cpu_us_per_mib = 0;
  double server_busy = 0;
  double server_system_share = 0;
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
  bool unix_socket = false;  // both servers on Unix sockets instead of loopback TCP
};

/// The Unix socket the client uses for `server`; empty for loopback TCP.
std::string socket_of(const ServerChild& server, const Settings& settings) {
  return settings.unix_socket ? server.socket() : std::string();
}

/// One run: `cell.clients` threads, each with its own connection and key, issue the operation
/// back to back for `settings.seconds` (and at least `min_ops_per_client` times).
Figures run_cell(const ServerChild& server, Kind kind, const Cell& cell, const std::string& payload,
                 const Settings& settings) {
  const std::string size_text = std::to_string(cell.size);
  std::vector<Context> contexts;
  std::vector<std::string> keys;
  std::vector<Request> requests;
  for (int client = 0; client < cell.clients; ++client) {
    contexts.push_back(connect(server.port(), socket_of(server, settings)));
    keys.push_back("bench:" + std::to_string(client));
    if (cell.operation == Operation::kGet) {  // the value to read, written outside the timing
      execute(contexts.back().get(),
              make_request(kind, Operation::kPut, keys.back(), size_text, payload), Operation::kPut,
              cell.size);
    }
  }
  for (int client = 0; client < cell.clients; ++client) {
    requests.push_back(make_request(kind, cell.operation, keys[client], size_text, payload));
  }

  slipstream::bench::ConcurrentRun run;
  const CpuTime cpu_before = read_cpu_time(server.pid());
  try {
    run = slipstream::bench::run_concurrently(
        cell.clients, settings.seconds, settings.min_ops_per_client, [&](int client) {
          execute(contexts[client].get(), requests[client], cell.operation, cell.size);
        });
  } catch (const std::exception& error) {
    throw std::runtime_error(server.name() + ": " + error.what());
  }
  const CpuTime cpu_after = read_cpu_time(server.pid());
  std::vector<double> all = slipstream::bench::count_in<std::milli>(run.latencies);
  const auto ops = static_cast<double>(all.size());
  Figures figures;
  figures.ops_per_second = ops / run.seconds;
  figures.megabytes_per_second = figures.ops_per_second * static_cast<double>(cell.size) / 1e6;
  figures.median_ms = slipstream::bench::percentile(all, 0.5);
  figures.p99_ms = slipstream::bench::percentile(all, 0.99);
  const double cpu_seconds = cpu_after.seconds - cpu_before.seconds;
  figures.server_cpu_us_per_op = cpu_seconds * 1e6 / ops;
  figures.server_cpu_us_per_mib =
      cpu_seconds * 1e6 / (ops * static_cast<double>(cell.size) / (1u << 20));
  figures.server_busy = cpu_seconds / run.seconds;
  const long long user = cpu_after.user_ticks - cpu_before.user_ticks;
  const long long system = cpu_after.system_ticks - cpu_before.system_ticks;
  figures.server_system_share =
      user + system > 0 ? static_cast<double>(system) / static_cast<double>(user + system) : 0;
  return figures;
}

Figures median_of(const std::vector<Figures>& runs) {
  auto median_by = [&runs](double Figures::*field) {
    std::vector<double> values;
    for (const auto& run : runs) values.push_back(run.*field);
    return slipstream::bench::median(values);
  };
  Figures figures;
  for (double Figures::*field :
       {&Figures::ops_per_second, &Figures::megabytes_per_second, &Figures::median_ms,
        &Figures::p99_ms, &Figures::server_cpu_us_per_op, &Figures::server_cpu_us_per_mib,
        &Figures::server_busy, &Figures::server_system_share}) {
    figures.*field = median_by(field);
  }
  return figures;
}

std::string format_latency(double ms) {
  char text[32];
  std::snprintf(text, sizeof text, ms >= 10 ? "%.1f" : (ms >= 1 ? "%.2f" : "%.3f"), ms);
  return text;
}

std::string redis_version(const ServerChild& redis, const Settings& settings) {
  Context context = connect(redis.port(), socket_of(redis, settings));
  Reply reply(static_cast<redisReply*>(redisCommand(context.get(), "INFO server")));
  if (!reply || reply->type != REDIS_REPLY_STRING) return "unknown";
  std::string info(reply->str, reply->len);
  auto at = info.find("redis_version:");
  if (at == std::string::npos) return "unknown";
  at += 14;
  return info.substr(at, info.find_first_of("\r\n", at) - at);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Put/get throughput and latency: slipstream server vs redis-server"};
  Settings settings;
  bool quick = false;
  bool pin = false;
  std::vector<size_t> sizes = {1u << 10, 64u << 10, 1u << 20, 16u << 20};
  std::vector<int> client_counts = {1, 8};
  std::vector<Operation> operations = {Operation::kPut, Operation::kGet};
  std::string slipstream_binary = SLIPSTREAM_BINARY;
  std::string redis_binary = "redis-server";
  app.add_option("--seconds", settings.seconds, "Measured seconds per run (one server, one cell)")
      ->check(CLI::PositiveNumber);
  app.add_option("--repetitions", settings.repetitions,
                 "Runs per server and cell, interleaved; figures are medians")
      ->check(CLI::PositiveNumber);
  app.add_option("--sizes", sizes, "Payload sizes in bytes");
  app.add_option("--clients", client_counts, "Concurrent client counts (threads)");
  app.add_option("--ops", operations, "Operations to run: put, get or both")
      ->transform(CLI::CheckedTransformer(
          std::map<std::string, Operation>{{"put", Operation::kPut}, {"get", Operation::kGet}}));
  app.add_flag("--unix", settings.unix_socket,
               "Both servers on Unix sockets (TCP off) instead of loopback TCP ports");
  app.add_flag("--pin", pin, "Pin this client to core 0 and both servers to core 1 (taskset -c 1)");
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
    const std::string load_at_start = load_average();
    if (pin) {
      if (std::thread::hardware_concurrency() < 2) throw std::runtime_error("--pin needs 2 cores");
      pin_to_core(0);  // before any thread or server starts: they inherit it, taskset overrides
    }
    // The argv of a server: taskset execs the server in its own process, so the child's pid (whose
    // CPU time is read) stays the server's.
    auto server_args = [&](std::vector<std::string> args) {
      if (pin) args.insert(args.begin(), {"taskset", "-c", "1"});
      return args;
    };
    auto listen_args = [&](const Listen& listen) {
      return settings.unix_socket
                 ? std::vector<std::string>{"--port", "0", "--unixsocket", listen.socket}
                 : std::vector<std::string>{"--port", std::to_string(listen.port)};
    };
    auto ready = [&](const Listen& listen) {
      return answers_ping(listen.port, settings.unix_socket ? listen.socket : std::string());
    };
    constexpr int kAttempts = 5;  // each on a fresh port, in case another process took it
    ServerChild slipstream(
        "slipstream",
        [&](const Listen& listen) {
          std::vector<std::string> args{slipstream_binary, "server"};
          for (auto& arg : listen_args(listen)) args.push_back(arg);
          for (const char* arg : {"--dir", listen.dir.c_str(), "--loglevel", "warn"}) {
            args.emplace_back(arg);
          }
          return server_args(args);
        },
        ready, kAttempts);
    ServerChild redis(
        "redis-server",
        [&](const Listen& listen) {
          std::vector<std::string> args{redis_binary};
          for (auto& arg : listen_args(listen)) args.push_back(arg);
          for (const char* arg : {"--bind", "127.0.0.1", "--unixsocketperm", "700", "--save", "",
                                  "--appendonly", "no", "--dir", listen.dir.c_str()}) {
            args.emplace_back(arg);
          }
          return server_args(args);
        },
        ready, kAttempts);
    std::fprintf(stderr, "slipstream pid %d, redis-server pid %d\n",
                 static_cast<int>(slipstream.pid()), static_cast<int>(redis.pid()));

    std::vector<Cell> cells;
    for (Operation operation : operations) {
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
    const std::string load_at_end = load_average();
    std::fprintf(stderr, "\rdone in %.0f s%30s\n", total_seconds, "");

    const std::string command = slipstream::bench::command_line(argc, argv);
    std::printf(
        "Machine: %u hardware threads, %s. redis-server %s (`--save '' --appendonly no`), "
        "slipstream with its default threads.\n",
        std::thread::hardware_concurrency(), cpu_model().c_str(),
        redis_version(redis, settings).c_str());
    std::printf(
        "Transport: %s, both servers. %s Load average (1, 5, 15 min): %s at start, %s at end.\n",
        settings.unix_socket ? "Unix sockets" : "loopback TCP",
        pin ? "Client threads pinned to core 0, both servers to core 1 (`taskset -c 1`)."
            : "Not pinned.",
        load_at_start.c_str(), load_at_end.c_str());
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

    std::printf(
        "\nServer CPU time (the server process's CPU-time clock: all threads, user and system) "
        "during each run, per operation and per MiB (2^20 bytes) of payload; ratio: slipstream / "
        "redis CPU per operation (below 1x: slipstream spends less). Busy: server CPU seconds per "
        "second of the run (1.00 = one core). Sys: the kernel's share of it (from /proc/PID/stat "
        "ticks).\n\n");
    std::printf(
        "| op | size | clients | slipstream us/op | redis us/op | slipstream us/MiB | redis us/MiB "
        "| ratio (CPU/op) | slipstream busy / sys | redis busy / sys |\n");
    std::printf("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    auto busy_and_system = [](const Figures& figures) {
      char text[32];
      std::snprintf(text, sizeof text, "%.2f / %.0f%%", figures.server_busy,
                    100 * figures.server_system_share);
      return std::string(text);
    };
    for (size_t i = 0; i < cells.size(); ++i) {
      Figures s = median_of(slipstream_runs[i]);
      Figures r = median_of(redis_runs[i]);
      double ratio =
          r.server_cpu_us_per_op > 0 ? s.server_cpu_us_per_op / r.server_cpu_us_per_op : 0;
      std::printf("| %s | %s | %d | %s | %s | %s | %s | %.2fx | %s | %s |\n",
                  cells[i].operation == Operation::kPut ? "put" : "get",
                  size_label(cells[i].size).c_str(), cells[i].clients,
                  format_number(s.server_cpu_us_per_op).c_str(),
                  format_number(r.server_cpu_us_per_op).c_str(),
                  format_number(s.server_cpu_us_per_mib).c_str(),
                  format_number(r.server_cpu_us_per_mib).c_str(), ratio, busy_and_system(s).c_str(),
                  busy_and_system(r).c_str());
    }
  } catch (const std::exception& error) {
    std::fprintf(stderr, "\nserver_bench: %s\n", error.what());
    return 1;
  }
  return 0;
}
