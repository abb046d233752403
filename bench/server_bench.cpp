// Benchmark: `slipstream server` against `redis-server`, both started by this program on free
// loopback ports and driven by the same hiredis client code. Prints a Markdown table of put and get
// throughput and latency per payload size and client count, with the ratio slipstream/redis.
//
// Put is `AI.TENSORSET k UINT8 n BLOB <bytes>` on slipstream and `SET k <bytes>` on redis; get is
// `AI.TENSORGET k BLOB` and `GET k`. The runs of the two servers are interleaved (for each
// repetition, each cell runs on slipstream and then on redis) and each figure is the median over
// the repetitions, because the machine is shared and noisy. A benchmark, not a test: it never fails
// on a figure.
#include <hiredis/hiredis.h>
#include <signal.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
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
using slipstream::bench::Listen;
using slipstream::bench::ServerChild;
using slipstream::bench::size_label;

using Context = slipstream::bench::HiredisContext;
using Reply = slipstream::bench::HiredisReply;

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

/// Whether the server on `listen.port` answers PING.
bool answers_ping(const Listen& listen) {
  Context probe(redisConnect("127.0.0.1", listen.port));
  if (!probe || probe->err != 0) return false;
  Reply reply(static_cast<redisReply*>(redisCommand(probe.get(), "PING")));
  return reply && reply->type == REDIS_REPLY_STATUS;
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

/// One run: `cell.clients` threads, each with its own connection and key, issue the operation
/// back to back for `settings.seconds` (and at least `min_ops_per_client` times).
Figures run_cell(const ServerChild& server, Kind kind, const Cell& cell, const std::string& payload,
                 const Settings& settings) {
  const std::string size_text = std::to_string(cell.size);
  std::vector<Context> contexts;
  std::vector<std::string> keys;
  std::vector<Request> requests;
  for (int client = 0; client < cell.clients; ++client) {
    contexts.push_back(connect(server.port()));
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
  try {
    run = slipstream::bench::run_concurrently(
        cell.clients, settings.seconds, settings.min_ops_per_client, [&](int client) {
          execute(contexts[client].get(), requests[client], cell.operation, cell.size);
        });
  } catch (const std::exception& error) {
    throw std::runtime_error(server.name() + ": " + error.what());
  }
  std::vector<double> all = slipstream::bench::count_in<std::milli>(run.latencies);
  Figures figures;
  figures.ops_per_second = static_cast<double>(all.size()) / run.seconds;
  figures.megabytes_per_second = figures.ops_per_second * static_cast<double>(cell.size) / 1e6;
  figures.median_ms = slipstream::bench::percentile(all, 0.5);
  figures.p99_ms = slipstream::bench::percentile(all, 0.99);
  return figures;
}

Figures median_of(const std::vector<Figures>& runs) {
  std::vector<double> ops, megabytes, medians, p99s;
  for (const auto& run : runs) {
    ops.push_back(run.ops_per_second);
    megabytes.push_back(run.megabytes_per_second);
    medians.push_back(run.median_ms);
    p99s.push_back(run.p99_ms);
  }
  using slipstream::bench::median;
  return {median(ops), median(megabytes), median(medians), median(p99s)};
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
    constexpr int kAttempts = 5;  // each on a fresh port, in case another process took it
    ServerChild slipstream(
        "slipstream",
        [&](const Listen& listen) {
          return std::vector<std::string>{
              slipstream_binary, "server",   "--port",     std::to_string(listen.port),
              "--dir",           listen.dir, "--loglevel", "warn"};
        },
        answers_ping, kAttempts);
    ServerChild redis(
        "redis-server",
        [&](const Listen& listen) {
          return std::vector<std::string>{redis_binary, "--port",       std::to_string(listen.port),
                                          "--bind",     "127.0.0.1",    "--save",
                                          "",           "--appendonly", "no",
                                          "--dir",      listen.dir};
        },
        answers_ping, kAttempts);

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

    const std::string command = slipstream::bench::command_line(argc, argv);
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
