// Benchmark of the shared-memory fast path: put and get (a zero-copy view, and an unpack into the
// caller's buffer) of one tensor through shared memory, through slipstream's Unix socket, through
// redis-server's Unix socket (hiredis SET / GET), and a plain memcpy of the same bytes, in one run.
// Prints a Markdown table of the median time per operation and throughput, with ratios.
//
// Every repetition runs every cell on every path in turn (interleaved, so drifts in machine load
// hit all paths alike); a figure is the median over repetitions of the mean time per operation of
// one run. A benchmark, not a test: it never fails on a figure.
#include <hiredis/hiredis.h>
#include <signal.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench_support.hpp"
#include "hiredis_handles.hpp"
#include "slipstream/client.hpp"

#ifndef SLIPSTREAM_BINARY
#error "SLIPSTREAM_BINARY must name the slipstream executable"
#endif

namespace {

using slipstream::bench::Clock;
using slipstream::bench::cpu_model;
using slipstream::bench::Listen;
using slipstream::bench::median;
using slipstream::bench::ServerChild;
using slipstream::bench::size_label;

/// hiredis over redis-server's Unix socket.
class Redis {
 public:
  explicit Redis(const std::string& socket) : context_(redisConnectUnix(socket.c_str())) {
    if (!context_ || context_->err) throw std::runtime_error("cannot connect to redis-server");
  }
  void set(const std::string& key, const std::vector<char>& payload) {
    const char* argv[] = {"SET", key.data(), payload.data()};
    std::size_t lengths[] = {3, key.size(), payload.size()};
    check(redisCommandArgv(context_.get(), 3, argv, lengths), REDIS_REPLY_STATUS, 0);
  }
  void get(const std::string& key, std::size_t size) {
    const char* argv[] = {"GET", key.data()};
    std::size_t lengths[] = {3, key.size()};
    check(redisCommandArgv(context_.get(), 2, argv, lengths), REDIS_REPLY_STRING, size);
  }

 private:
  void check(void* raw, int type, std::size_t size) {
    auto* reply = static_cast<redisReply*>(raw);
    if (reply == nullptr) throw std::runtime_error(std::string("redis: ") + context_->errstr);
    bool ok = reply->type == type &&
              (type != REDIS_REPLY_STRING || static_cast<std::size_t>(reply->len) == size);
    freeReplyObject(reply);
    if (!ok) throw std::runtime_error("redis: unexpected reply");
  }
  slipstream::bench::HiredisContext context_;
};

enum class Op { kPut, kPutLoan, kView, kUnpack };
// kShmLoanPerPut: the shared-memory path with ClientOptions::shared_memory_lend_ahead off (every
// put asks for its loan with SS.SHM.LOAN: two round trips instead of one); puts only.
enum class Path { kShm, kShmLoanPerPut, kSocket, kRedis, kMemcpy };
constexpr Path kPaths[] = {Path::kShm, Path::kShmLoanPerPut, Path::kSocket, Path::kRedis,
                           Path::kMemcpy};

const char* op_name(Op op) {
  switch (op) {
    case Op::kPut: return "put (copy from caller)";
    case Op::kPutLoan: return "put (loan, no fill)";
    case Op::kView: return "get (view)";
    case Op::kUnpack: return "get (unpack)";
  }
  return "?";
}

std::string format_time(double seconds) {
  char text[32];
  double us = seconds * 1e6;
  if (us < 1000) {
    std::snprintf(text, sizeof text, "%.1f us", us);
  } else {
    std::snprintf(text, sizeof text, "%.2f ms", us / 1000);
  }
  return text;
}

std::string format_rate(std::size_t bytes, double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", static_cast<double>(bytes) / seconds / 1e9);
  return text;
}

/// Mean seconds per call of `fn` over a run of about `budget` seconds (at least `min_calls`).
double run(const std::function<void()>& fn, double budget, int min_calls) {
  int calls = 0;
  auto begin = Clock::now();
  auto deadline = begin + std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double>(budget));
  Clock::time_point now;
  do {
    fn();
    ++calls;
    now = Clock::now();
  } while (calls < min_calls || now < deadline);
  return std::chrono::duration<double>(now - begin).count() / calls;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Shared-memory fast path vs socket vs redis-server (Unix sockets) vs memcpy"};
  std::vector<std::size_t> sizes = {64u << 10, 1u << 20, 16u << 20, 256u << 20};
  double seconds = 0.25;
  int repetitions = 5;
  bool quick = false;
  std::string slipstream_binary = SLIPSTREAM_BINARY, redis_binary = "redis-server";
  app.add_option("--sizes", sizes, "Tensor sizes in bytes");
  app.add_option("--seconds", seconds, "Seconds per run (one path, one cell)");
  app.add_option("--repetitions", repetitions, "Interleaved runs per path and cell (medians)");
  app.add_flag("--quick", quick, "A short check that it runs (1 repetition of 0.02 s)");
  app.add_option("--slipstream", slipstream_binary, "slipstream executable");
  app.add_option("--redis-server", redis_binary, "redis-server executable");
  CLI11_PARSE(app, argc, argv);
  if (quick) {
    seconds = 0.02;
    repetitions = 1;
  }
  ::signal(SIGPIPE, SIG_IGN);
  try {
    std::size_t largest = *std::max_element(sizes.begin(), sizes.end());
    auto socket_accepts = [](const Listen& listen) {
      return slipstream::bench::unix_socket_accepts(listen.socket);
    };
    ServerChild slipstream(
        "slipstream",
        [&](const Listen& listen) {
          return std::vector<std::string>{slipstream_binary, "server", "--port", "0",
                                          "--unixsocket", listen.socket, "--dir", listen.dir,
                                          "--loglevel", "warn", "--shm-size",
                                          std::to_string(8 * largest + (64u << 20)),
                                          "--max-bulk-len", std::to_string(2 * largest)};
        },
        socket_accepts);
    ServerChild redis(
        "redis-server",
        [&](const Listen& listen) {
          return std::vector<std::string>{redis_binary, "--port", "0", "--unixsocket",
                                          listen.socket, "--unixsocketperm", "700", "--save", "",
                                          "--appendonly", "no", "--dir", listen.dir,
                                          "--proto-max-bulk-len", std::to_string(2 * largest)};
        },
        socket_accepts);
    slipstream::ClientOptions shm_options;
    shm_options.address = "unix://" + slipstream.socket();
    shm_options.shared_memory_min_bytes = 0;
    shm_options.shared_memory_put_min_bytes = 0;  // measure every size on both paths
    slipstream::Client shm(shm_options);
    if (!shm.stats().shared_memory) throw std::runtime_error("the fast path did not attach");
    slipstream::ClientOptions loan_per_put_options = shm_options;
    loan_per_put_options.shared_memory_lend_ahead = false;
    slipstream::Client loan_per_put(loan_per_put_options);
    slipstream::ClientOptions socket_options = shm_options;
    socket_options.shared_memory = slipstream::SharedMemoryMode::kOff;
    slipstream::Client socket(socket_options);
    Redis hiredis(redis.socket());

    const Op ops[] = {Op::kPut, Op::kPutLoan, Op::kView, Op::kUnpack};
    struct Cell {
      Op op;
      std::size_t size;
    };
    std::vector<Cell> cells;
    for (std::size_t size : sizes) {
      for (Op op : ops) cells.push_back({op, size});
    }
    std::map<std::size_t, std::vector<char>> payload, out;
    for (std::size_t size : sizes) {
      payload[size].resize(size);
      for (std::size_t i = 0; i < size; ++i) payload[size][i] = static_cast<char>(i * 2654435761u >> 24);
      out[size].assign(size, 1);  // written once: the destination is warm, as a reused buffer is
    }

    // The operation of one path for one cell; nullptr where the path has no such operation.
    auto operation = [&](const Cell& cell, Path path) -> std::function<void()> {
      const std::size_t size = cell.size;
      const std::vector<std::int64_t> shape{static_cast<std::int64_t>(size)};
      const std::string key = "bench:" + std::to_string(size);
      std::vector<char>& in = payload[size];
      std::vector<char>& dst = out[size];
      auto as_bytes = [](std::vector<char>& v) {
        return std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(v.data()),
                                             v.size());
      };
      auto as_out = [](std::vector<char>& v) {
        return std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(v.data()), v.size());
      };
      switch (path) {
        case Path::kMemcpy:
          return [&in, &dst] { std::memcpy(dst.data(), in.data(), in.size()); };
        case Path::kRedis:
          if (cell.op == Op::kPutLoan) return nullptr;
          if (cell.op == Op::kPut) return [&hiredis, &in, key] { hiredis.set(key, in); };
          return [&hiredis, key, size] { hiredis.get(key, size); };
        case Path::kShm:
        case Path::kShmLoanPerPut:
        case Path::kSocket: {
          slipstream::Client* client = path == Path::kShm ? &shm : &socket;
          if (path == Path::kShmLoanPerPut) {
            if (cell.op != Op::kPut && cell.op != Op::kPutLoan) return nullptr;
            client = &loan_per_put;
          }
          switch (cell.op) {
            case Op::kPut:
              return [client, &in, key, shape, as_bytes] {
                client->put_tensor<std::uint8_t>(key, as_bytes(in), shape);
              };
            case Op::kPutLoan:
              if (path == Path::kSocket) return nullptr;
              return [client, key, shape, size] {
                slipstream::TensorLoan loan = client->loan(size);
                client->put_tensor(key, std::move(loan), slipstream::DType::kUInt8, shape);
              };
            case Op::kView:
              return [client, key, size] {
                slipstream::TensorView view = client->view_tensor(key);
                if (view.byte_size() != size) throw std::runtime_error("short view");
              };
            case Op::kUnpack:
              return [client, key, &dst, as_out] {
                client->unpack_tensor<std::uint8_t>(key, as_out(dst));
              };
          }
        }
      }
      return nullptr;
    };
    auto prepare = [&](const Cell& cell) {  // gets read what the last put stored
      if (cell.op != Op::kView && cell.op != Op::kUnpack) return;
      const std::vector<std::int64_t> shape{static_cast<std::int64_t>(cell.size)};
      const std::string key = "bench:" + std::to_string(cell.size);
      auto bytes = std::span<const std::uint8_t>(
          reinterpret_cast<const std::uint8_t*>(payload[cell.size].data()), cell.size);
      shm.put_tensor<std::uint8_t>(key, bytes, shape);
      hiredis.set(key, payload[cell.size]);
    };

    std::map<std::pair<std::size_t, int>, std::vector<double>> figures;  // (cell, path) -> runs
    const auto started = Clock::now();
    for (int repetition = -1; repetition < repetitions; ++repetition) {  // -1: warm-up
      for (std::size_t c = 0; c < cells.size(); ++c) {
        std::fprintf(stderr, "\r%s %d/%d, cell %zu/%zu   ",
                     repetition < 0 ? "warm-up" : "repetition", repetition + 1, repetitions, c + 1,
                     cells.size());
        prepare(cells[c]);
        for (Path path : kPaths) {
          auto fn = operation(cells[c], path);
          if (!fn) continue;
          double t = run(fn, repetition < 0 ? std::min(seconds, 0.02) : seconds, 1);
          if (repetition >= 0) figures[{c, static_cast<int>(path)}].push_back(t);
        }
      }
    }
    const double total = std::chrono::duration<double>(Clock::now() - started).count();
    std::fprintf(stderr, "\rdone in %.0f s%40s\n", total, "");

    const std::string command = slipstream::bench::command_line(argc, argv);
    std::printf("Machine: %u hardware threads, %s.\n", std::thread::hardware_concurrency(),
                cpu_model().c_str());
    std::printf(
        "Command: `%s` (%d interleaved repetition(s) of %.2f s per path and cell; medians; "
        "%.0f s in all).\n",
        command.c_str(), repetitions, seconds, total);
    std::printf(
        "Time per operation (GB/s = 10^9 bytes/s). shm: slipstream over its Unix socket with the "
        "shared-memory path; socket: the same server and socket with it off; redis: redis-server "
        "over its Unix socket (hiredis SET/GET; its get is the row for both get kinds); memcpy: "
        "one memcpy of the bytes into a warm buffer; shm, LOAN per put: the shared-memory path "
        "without loans lent ahead with commits (shared_memory_lend_ahead off: each put asks for "
        "its loan, two round trips).\n\n");
    std::printf(
        "| op | size | shm | shm, LOAN per put | socket | redis | memcpy | shm GB/s | shm vs "
        "redis | shm vs socket | shm / memcpy time |\n"
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (std::size_t c = 0; c < cells.size(); ++c) {
      auto cell_median = [&](Path path, Op op_for_redis) -> double {
        std::size_t index = c;
        if (path == Path::kRedis && op_for_redis != cells[c].op) {
          for (std::size_t k = 0; k < cells.size(); ++k) {
            if (cells[k].size == cells[c].size && cells[k].op == op_for_redis) index = k;
          }
        }
        auto it = figures.find({index, static_cast<int>(path)});
        return it == figures.end() ? 0 : median(it->second);
      };
      const Op op = cells[c].op;
      const Op redis_op = op == Op::kPutLoan ? Op::kPut : op;
      double s = cell_median(Path::kShm, op), l = cell_median(Path::kShmLoanPerPut, op),
             k = cell_median(Path::kSocket, op), r = cell_median(Path::kRedis, redis_op),
             m = cell_median(Path::kMemcpy, op);
      auto ratio = [](double slow, double fast) {
        if (slow <= 0 || fast <= 0) return std::string("-");
        char text[32];
        std::snprintf(text, sizeof text, "%.1fx", slow / fast);
        return std::string(text);
      };
      std::printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", op_name(op),
                  size_label(cells[c].size).c_str(), format_time(s).c_str(),
                  l > 0 ? format_time(l).c_str() : "-", k > 0 ? format_time(k).c_str() : "-", format_time(r).c_str(),
                  format_time(m).c_str(), format_rate(cells[c].size, s).c_str(),
                  ratio(r, s).c_str(), ratio(k, s).c_str(), ratio(s, m).c_str());
    }
    slipstream::ClientStats stats = shm.stats();
    std::printf(
        "\nshm client: %llu shm puts (%llu loans, %llu with a loan lent ahead), %llu shm gets, "
        "%llu shm views, %llu socket puts, %llu socket gets, %llu fallbacks.\n",
        static_cast<unsigned long long>(stats.shm_puts),
        static_cast<unsigned long long>(stats.shm_loan_puts),
        static_cast<unsigned long long>(stats.shm_lent_ahead_puts),
        static_cast<unsigned long long>(stats.shm_gets),
        static_cast<unsigned long long>(stats.shm_views),
        static_cast<unsigned long long>(stats.socket_puts),
        static_cast<unsigned long long>(stats.socket_gets),
        static_cast<unsigned long long>(stats.fallbacks));
    // The server's side: how many loans came from a spare made ahead (shm_pool_hits).
    slipstream::Reply info = shm.command({"INFO", "memory"});
    std::string pool;
    for (const char* field :
         {"shm_pool_hits", "shm_pool_misses", "shm_huge_pages", "shm_loans_ahead"}) {
      auto at = info.string.find(std::string(field) + ":");
      if (at == std::string::npos) continue;
      auto end = info.string.find('\r', at);
      pool += (pool.empty() ? "" : ", ") + info.string.substr(at, end - at);
    }
    std::printf("server: %s.\n", pool.c_str());
  } catch (const std::exception& error) {
    std::fprintf(stderr, "\nshm_bench: %s\n", error.what());
    return 1;
  }
  return 0;
}
