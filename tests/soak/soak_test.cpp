// Soak test: for a bounded time, loopback clients mix string and tensor writes, reads, overwrites,
// deletes and script runs against one real server, alongside clients that stall (never read),
// vanish mid-request and send garbage, while the server's RSS, open descriptors and used_memory
// are sampled. It fails (exit status 1) when a read is torn, a well-behaved client gets an
// unexpected reply, the server dies, or descriptors or memory do not come back afterwards.
//
// Usage: soak_test [seconds]   (default 30). Prints a table of figures at the end.

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "support/raw_client.hpp"
#include "support/server_process.hpp"

namespace {

using slipstream::testing::RawClient;
using slipstream::testing::RespReply;
using slipstream::testing::ServerProcess;
using Clock = std::chrono::steady_clock;

constexpr int kWriters = 8;
constexpr int kRunners = 2;
constexpr int kSharedKeys = 64;
constexpr int kTensorKeys = 16;
constexpr int kPrivateKeysPerWriter = 8;
// Generous: the machines this runs on are small and shared, and a script run may wait for a
// sandboxed worker. A well-behaved client that waits this long has found a stall.
constexpr int kCallTimeoutMs = 30000;
constexpr std::size_t kMiB = 1024 * 1024;
// Allocators keep pages after a flush: RSS only has to come back within this of its baseline.
constexpr std::size_t kRssSlack = 64 * kMiB;
// Under AddressSanitizer (this test and its server are built alike) freed memory is held in a
// quarantine and RSS does not come back: only used_memory and descriptors are checked then.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kCheckRss = false;
#else
constexpr bool kCheckRss = true;
#endif

constexpr const char* kScriptKey = "soak:script";
// f is called by AI.SCRIPTRUN (positional tensors), g by AI.SCRIPTEXECUTE (RedisAI 1.2 form).
constexpr const char* kScriptSource =
    "def f(x):\n"
    "    return x * 2.0 + 1.0\n"
    "def g(tensors: List[Tensor], keys: List[str], args: List[str]):\n"
    "    return tensors[0] * 2.0 + 1.0\n";

// ---- Counters and failures ------------------------------------------------------------------

/// Counts by name, owned by one thread and merged after it ends (no locking on the hot path).
using Counts = std::map<std::string, std::uint64_t>;

class Failures {
 public:
  void add(std::string what) {
    std::lock_guard lock(mutex_);
    ++count_;
    if (first_.size() < 20) first_.push_back(std::move(what));
  }
  std::uint64_t count() const {
    std::lock_guard lock(mutex_);
    return count_;
  }
  std::vector<std::string> first() const {
    std::lock_guard lock(mutex_);
    return first_;
  }

 private:
  mutable std::mutex mutex_;
  std::uint64_t count_ = 0;
  std::vector<std::string> first_;
};

struct Shared {
  std::atomic<bool> stop{false};
  // The highest sequence number each writer has handed out: a value read back may carry any
  // sequence up to this, never above (it would be a value nobody wrote).
  std::array<std::atomic<std::uint64_t>, kWriters> issued{};
  Failures failures;
  std::mutex counts_mutex;
  Counts operations, errors;

  void merge(const Counts& ops, const Counts& errs) {
    std::lock_guard lock(counts_mutex);
    for (const auto& [k, v] : ops) operations[k] += v;
    for (const auto& [k, v] : errs) errors[k] += v;
  }
};

// ---- Checksummed payloads -------------------------------------------------------------------

std::uint64_t fnv1a(std::string_view bytes) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ull;
  return h;
}

/// The body a writer stores for (key, writer, seq): a pseudo-random byte stream seeded by all
/// three, so a reader can regenerate it and tell a torn or mixed value from a written one.
std::string make_body(std::string_view key, int writer, std::uint64_t seq, std::size_t length) {
  std::uint64_t state =
      (fnv1a(key) ^ (static_cast<std::uint64_t>(writer) << 56) ^ (seq * 0x9E3779B97F4A7C15ull)) |
      1;
  std::string body(length, '\0');
  for (std::size_t i = 0; i < length; ++i) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    body[i] = static_cast<char>(state);
  }
  return body;
}

/// "soak1 KEY WRITER SEQ LENGTH FNV\n" followed by LENGTH body bytes.
std::string make_payload(std::string_view key, int writer, std::uint64_t seq, std::size_t length) {
  std::string body = make_body(key, writer, seq, length);
  char header[256];
  std::snprintf(header, sizeof header, "soak1 %.*s %d %llu %zu %016llx\n",
                static_cast<int>(key.size()), key.data(), writer,
                static_cast<unsigned long long>(seq), length,
                static_cast<unsigned long long>(fnv1a(body)));
  return header + body;
}

/// Empty when `value` is a payload some writer wrote for `key`; otherwise what is wrong with it.
std::string check_payload(std::string_view key, std::string_view value, const Shared& shared) {
  const std::size_t newline = value.find('\n');
  if (newline == std::string_view::npos || newline > 200) return "no header";
  std::istringstream header{std::string(value.substr(0, newline))};
  std::string magic, embedded_key, hash_text;
  int writer = -1;
  unsigned long long seq = 0;
  std::size_t length = 0;
  if (!(header >> magic >> embedded_key >> writer >> seq >> length >> hash_text) ||
      magic != "soak1") {
    return "unparsable header";
  }
  if (embedded_key != key) return "value written for key " + embedded_key;
  if (writer < 0 || writer >= kWriters) return "bad writer " + std::to_string(writer);
  if (seq > shared.issued[static_cast<std::size_t>(writer)].load()) {
    return "sequence " + std::to_string(seq) + " never issued by writer " + std::to_string(writer);
  }
  const std::string_view body = value.substr(newline + 1);
  if (body.size() != length) {
    return "body of " + std::to_string(body.size()) + " bytes, header says " +
           std::to_string(length);
  }
  if (std::strtoull(hash_text.c_str(), nullptr, 16) != fnv1a(body)) return "checksum mismatch";
  if (body != make_body(key, writer, seq, length)) return "body differs from what was written";
  return {};
}

/// Sizes from a few bytes to 256 KiB: small values, values of 4 KiB or more that replies send in
/// place, and a few large ones.
std::size_t pick_length(std::mt19937_64& rng) {
  const unsigned bucket = rng() % 100;
  if (bucket < 55) return 8 + rng() % 1016;
  if (bucket < 90) return 1024 + rng() % (31 * 1024);
  return 32 * 1024 + rng() % (224 * 1024);
}

std::string shared_key(std::uint64_t i) { return "soak:k:" + std::to_string(i % kSharedKeys); }
std::string tensor_key(std::uint64_t i) { return "soak:t:" + std::to_string(i % kTensorKeys); }

/// Records an unexpected reply: counted by its first word, and a failure.
void unexpected(Shared& shared, Counts& errors, const std::string& who, const std::string& op,
                const RespReply& reply) {
  std::string kind = reply.is_error() ? reply.text.substr(0, reply.text.find(' ')) : "reply";
  ++errors[op + ": " + kind];
  std::string text = reply.str();
  if (text.size() > 160) text.resize(160);
  shared.failures.add(who + " " + op + ": unexpected " + text);
}

void torn(Shared& shared, Counts& errors, const std::string& who, const std::string& op,
          const std::string& key, const std::string& why) {
  ++errors[op + ": torn"];
  shared.failures.add(who + " " + op + " " + key + ": " + why);
}

// ---- Well-behaved clients -------------------------------------------------------------------

/// One writer/reader: shared keys (overwritten and deleted by everyone, so a read may return any
/// written value or nil), tensor keys, and private keys whose exact value it knows.
void writer_client(int id, int port, Shared& shared) {
  const std::string who = "writer " + std::to_string(id);
  Counts ops, errors;
  std::mt19937_64 rng(0x50a4 + static_cast<std::uint64_t>(id));
  std::vector<std::optional<std::string>> private_values(kPrivateKeysPerWriter);
  auto& issued = shared.issued[static_cast<std::size_t>(id)];
  auto next_payload = [&](const std::string& key) {
    const std::uint64_t seq = issued.fetch_add(1) + 1;  // issued before anyone can read it
    return make_payload(key, id, seq, pick_length(rng));
  };
  auto check_string = [&](const std::string& op, const std::string& key, const RespReply& r) {
    if (r.kind == RespReply::Kind::kNull) return;
    if (r.kind != RespReply::Kind::kBulk) return unexpected(shared, errors, who, op, r);
    if (std::string why = check_payload(key, r.text, shared); !why.empty()) {
      torn(shared, errors, who, op, key, why);
    }
  };
  try {
    RawClient c = RawClient::tcp(port);
    while (!shared.stop.load()) {
      const unsigned dice = rng() % 100;
      if (dice < 18) {
        const std::string key = shared_key(rng());
        RespReply r = c.call({"SET", key, next_payload(key)}, kCallTimeoutMs);
        ++ops["set"];
        if (!r.is_ok()) unexpected(shared, errors, who, "set", r);
      } else if (dice < 28) {
        // SET ... GET replaces the value and returns the one it replaced: both must be whole.
        const std::string key = shared_key(rng());
        RespReply r = c.call({"SET", key, next_payload(key), "GET"}, kCallTimeoutMs);
        ++ops["overwrite"];
        check_string("overwrite", key, r);
      } else if (dice < 50) {
        const std::string key = shared_key(rng());
        RespReply r = c.call({"GET", key}, kCallTimeoutMs);
        ++ops["get"];
        check_string("get", key, r);
      } else if (dice < 56) {
        std::vector<std::string> args = {"MGET"};
        for (int i = 0; i < 4; ++i) args.push_back(shared_key(rng()));
        RespReply r = c.call(args, kCallTimeoutMs);
        ++ops["mget"];
        if (r.kind != RespReply::Kind::kArray || r.elements.size() != 4) {
          unexpected(shared, errors, who, "mget", r);
        } else {
          for (std::size_t i = 0; i < 4; ++i) check_string("mget", args[i + 1], r.elements[i]);
        }
      } else if (dice < 62) {
        RespReply r = c.call({"DEL", shared_key(rng())}, kCallTimeoutMs);
        ++ops["del"];
        if (r.kind != RespReply::Kind::kInteger) unexpected(shared, errors, who, "del", r);
      } else if (dice < 70) {
        const std::string key = tensor_key(rng());
        const std::string payload = next_payload(key);
        RespReply r = c.call({"AI.TENSORSET", key, "UINT8", std::to_string(payload.size()),
                              "BLOB", payload},
                             kCallTimeoutMs);
        ++ops["tensorset"];
        if (!r.is_ok()) unexpected(shared, errors, who, "tensorset", r);
      } else if (dice < 78) {
        const std::string key = tensor_key(rng());
        RespReply r = c.call({"AI.TENSORGET", key, "META", "BLOB"}, kCallTimeoutMs);
        ++ops["tensorget"];
        if (r.is_error() && r.text.rfind("ERR tensor key is empty", 0) == 0) {
          ++ops["tensorget (missing)"];
        } else if (r.kind != RespReply::Kind::kArray || r.elements.size() != 6 ||
                   r.elements[1].text != "UINT8" || r.elements[3].elements.size() != 1 ||
                   r.elements[3].elements[0].integer !=
                       static_cast<long long>(r.elements[5].text.size())) {
          unexpected(shared, errors, who, "tensorget", r);
        } else if (std::string why = check_payload(key, r.elements[5].text, shared);
                   !why.empty()) {
          torn(shared, errors, who, "tensorget", key, why);
        }
      } else if (dice < 80) {
        RespReply r = c.call({"DEL", tensor_key(rng())}, kCallTimeoutMs);
        ++ops["del"];
        if (r.kind != RespReply::Kind::kInteger) unexpected(shared, errors, who, "del", r);
      } else {
        // A private key: nobody else writes it, so the reply must be exactly what was last set.
        const std::size_t slot = rng() % kPrivateKeysPerWriter;
        const std::string key = "soak:w" + std::to_string(id) + ":" + std::to_string(slot);
        const unsigned action = rng() % 10;
        if (action < 4) {
          std::string payload = next_payload(key);
          RespReply r = c.call({"SET", key, payload}, kCallTimeoutMs);
          ++ops["private set"];
          if (!r.is_ok()) unexpected(shared, errors, who, "private set", r);
          private_values[slot] = std::move(payload);
        } else if (action < 9) {
          RespReply r = c.call({"GET", key}, kCallTimeoutMs);
          ++ops["private get"];
          const auto& expected = private_values[slot];
          if (expected ? (r.kind != RespReply::Kind::kBulk || r.text != *expected)
                       : r.kind != RespReply::Kind::kNull) {
            ++errors["private get: lost or torn"];
            shared.failures.add(who + " private get " + key + ": not the value last written (" +
                                (r.kind == RespReply::Kind::kBulk
                                     ? check_payload(key, r.text, shared)
                                     : r.str().substr(0, 80)) +
                                ")");
          }
        } else {
          RespReply r = c.call({"DEL", key}, kCallTimeoutMs);
          ++ops["private del"];
          if (r.kind != RespReply::Kind::kInteger || r.integer != (private_values[slot] ? 1 : 0)) {
            unexpected(shared, errors, who, "private del", r);
          }
          private_values[slot].reset();
        }
      }
    }
  } catch (const std::exception& e) {
    ++errors[std::string("exception: ") + e.what()];
    shared.failures.add(who + ": " + e.what());
  }
  shared.merge(ops, errors);
}

/// Runs the script on tensors of 4 to 20000 floats (the largest come back through shared memory)
/// and checks every output element against x * 2 + 1.
void runner_client(int id, int port, Shared& shared) {
  const std::string who = "runner " + std::to_string(id);
  const std::string in = "soak:run:in:" + std::to_string(id);
  const std::string out = "soak:run:out:" + std::to_string(id);
  Counts ops, errors;
  std::mt19937_64 rng(0x7a11 + static_cast<std::uint64_t>(id));
  constexpr std::array<std::size_t, 4> kSizes = {4, 100, 1000, 20000};
  try {
    RawClient c = RawClient::tcp(port);
    for (std::uint64_t round = 0; !shared.stop.load(); ++round) {
      const std::size_t n = kSizes[rng() % kSizes.size()];
      std::vector<float> x(n), y(n);
      for (std::size_t i = 0; i < n; ++i) {
        // Quarters of small integers: x * 2 + 1 is exact in float, so the check can be exact.
        x[i] = static_cast<float>(static_cast<long long>((round * 31 + i) % 2001) - 1000) / 4.0f;
        y[i] = x[i] * 2.0f + 1.0f;
      }
      const std::string x_bytes(reinterpret_cast<const char*>(x.data()), n * sizeof(float));
      const std::string y_bytes(reinterpret_cast<const char*>(y.data()), n * sizeof(float));
      RespReply r = c.call({"AI.TENSORSET", in, "FLOAT", std::to_string(n), "BLOB", x_bytes},
                           kCallTimeoutMs);
      if (!r.is_ok()) unexpected(shared, errors, who, "tensorset", r);
      const bool old_form = round % 2 == 1;
      r = old_form ? c.call({"AI.SCRIPTRUN", kScriptKey, "f", "INPUTS", in, "OUTPUTS", out},
                            kCallTimeoutMs)
                   : c.call({"AI.SCRIPTEXECUTE", kScriptKey, "g", "INPUTS", "1", in, "OUTPUTS",
                             "1", out},
                            kCallTimeoutMs);
      ++ops["script run"];
      if (!r.is_ok()) {
        unexpected(shared, errors, who, "script run", r);
        continue;
      }
      r = c.call({"AI.TENSORGET", out, "META", "BLOB"}, kCallTimeoutMs);
      if (r.kind != RespReply::Kind::kArray || r.elements.size() != 6 ||
          r.elements[1].text != "FLOAT") {
        unexpected(shared, errors, who, "script output", r);
      } else if (r.elements[5].text != y_bytes) {
        torn(shared, errors, who, "script output", out,
             "output of " + std::to_string(r.elements[5].text.size()) +
                 " bytes is not x * 2 + 1 of the input");
      }
      if (rng() % 4 == 0) {
        r = c.call({"DEL", out}, kCallTimeoutMs);
        if (r.kind != RespReply::Kind::kInteger) unexpected(shared, errors, who, "del", r);
      }
    }
  } catch (const std::exception& e) {
    ++errors[std::string("exception: ") + e.what()];
    shared.failures.add(who + ": " + e.what());
  }
  shared.merge(ops, errors);
}

// ---- Misbehaving clients --------------------------------------------------------------------

/// Sleeps up to `duration`, waking early when the run stops.
void nap(const Shared& shared, std::chrono::milliseconds duration) {
  const auto until = Clock::now() + duration;
  while (!shared.stop.load() && Clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

/// Sends as much as the socket takes now, without blocking; returns the bytes sent.
std::size_t send_some(int fd, std::string_view bytes) {
  ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  return n > 0 ? static_cast<std::size_t>(n) : 0;
}

/// Pipelines reads of large values and a script run, never reads a reply, holds the connection
/// for three seconds, and leaves.
void staller_client(int port, Shared& shared) {
  Counts ops, errors;
  while (!shared.stop.load()) {
    try {
      RawClient c = RawClient::tcp(port);
      std::string batch;
      for (int i = 0; i < kSharedKeys; ++i) batch += RawClient::encode({"GET", shared_key(i)});
      for (int i = 0; i < kTensorKeys; ++i) {
        batch += RawClient::encode({"AI.TENSORGET", tensor_key(i), "BLOB"});
      }
      batch += RawClient::encode(
          {"AI.SCRIPTEXECUTE", kScriptKey, "g", "INPUTS", "1", "soak:run:in:0", "OUTPUTS", "1",
           "soak:stall:out"});
      std::size_t sent = 0, offset = 0;
      // Up to 32 MiB of requests, or until the server stops reading and the socket is full.
      while (sent < 32 * kMiB && !shared.stop.load()) {
        std::size_t n = send_some(c.fd(), std::string_view(batch).substr(offset));
        if (n == 0) break;
        sent += n;
        offset = (offset + n) % batch.size();
      }
      ops["stall: bytes sent unread"] += sent;
      nap(shared, std::chrono::milliseconds(3000));
      ++ops["stall"];
    } catch (const std::exception& e) {
      ++errors[std::string("stall: ") + e.what()];
      shared.failures.add(std::string("staller: ") + e.what());
      nap(shared, std::chrono::milliseconds(200));
    }
  }
  shared.merge(ops, errors);
}

/// Opens a connection, sends part (or all) of a request, and closes without reading the reply.
void disconnector_client(int port, Shared& shared) {
  Counts ops, errors;
  const std::string big(256 * 1024, 'z');
  const std::vector<std::pair<std::string, std::string>> requests = {
      {"disconnect: partial header", "*3\r\n$3\r\nSET\r\n$9\r\nsoak:dc:k\r\n$10"},
      {"disconnect: half of a 1 MiB bulk",
       "*3\r\n$3\r\nSET\r\n$9\r\nsoak:dc:k\r\n$1048576\r\n" + big + big},
      {"disconnect: during script run",
       RawClient::encode({"AI.SCRIPTEXECUTE", kScriptKey, "g", "INPUTS", "1", "soak:run:in:1",
                          "OUTPUTS", "1", "soak:dc:out"})},
      {"disconnect: before a large reply", RawClient::encode({"MGET", "soak:k:1", "soak:k:2",
                                                              "soak:k:3", "soak:k:4"})},
      {"disconnect: blocked in SS.WAIT",
       RawClient::encode({"SS.WAIT", "soak:dc:never", "TIMEOUT", "0"})},
  };
  for (std::uint64_t round = 0; !shared.stop.load(); ++round) {
    const auto& [kind, bytes] = requests[round % requests.size()];
    try {
      RawClient c = RawClient::tcp(port);
      c.send_raw(bytes);
      if (round % 3 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      c.close();
      ++ops[kind];
    } catch (const std::exception& e) {
      ++errors[kind + ": " + e.what()];
      shared.failures.add("disconnector " + kind + ": " + e.what());
    }
    nap(shared, std::chrono::milliseconds(10));
  }
  shared.merge(ops, errors);
}

/// Sends malformed input; the server may answer an error and must close or keep the connection,
/// never fall over. Replies are read raw, since they need not be valid for the parser.
// ECHO with NUL bytes inside its arguments (sizeof counts the literal's own terminator).
constexpr char kWithNulBytes[] = "*2\r\n$4\r\nE\0HO\r\n$1\r\n\0\r\n";

void garbage_client(int port, Shared& shared) {
  Counts ops, errors;
  std::mt19937_64 rng(0x6a5b);
  const std::vector<std::string> fixed = {
      "*abc\r\n",
      "*2\r\n$-5\r\n",
      "*1\r\n$99999999999999999999\r\n",
      "*3\r\n$3\r\nSET\r\n$1\r\nx\r\n$1\r\nyy\r\n",
      "\x01\x02 NOTACOMMAND foo\r\n",
      std::string(100 * 1024, 'A'),  // an inline request longer than its 64 KiB limit
      "*-7\r\n*0\r\n$0\r\n\r\n",
      std::string(kWithNulBytes, sizeof kWithNulBytes - 1),
  };
  for (std::uint64_t round = 0; !shared.stop.load(); ++round) {
    std::string bytes;
    if (round % 2 == 0) {
      bytes = fixed[(round / 2) % fixed.size()];
    } else {
      bytes.resize(1 + rng() % 4096);
      for (char& b : bytes) b = static_cast<char>(rng());
    }
    try {
      RawClient c = RawClient::tcp(port);
      c.send_raw(bytes);
      ++ops["garbage sent"];
      std::string reply;
      bool closed = false;
      for (int i = 0; i < 20 && !closed; ++i) {
        pollfd p{c.fd(), POLLIN, 0};
        if (::poll(&p, 1, 25) <= 0) continue;
        char buffer[4096];
        ssize_t n = ::recv(c.fd(), buffer, sizeof buffer, 0);
        if (n <= 0) closed = true;
        else reply.append(buffer, static_cast<std::size_t>(n));
      }
      ++ops[!reply.empty() && reply[0] == '-' ? "garbage: error reply" : "garbage: other reply"];
      ++ops[closed ? "garbage: closed by server" : "garbage: left open"];
    } catch (const std::exception& e) {
      // The server may close before all of a large garbage write is taken: that is allowed.
      ++ops["garbage: send cut off"];
    }
    nap(shared, std::chrono::milliseconds(5));
  }
  shared.merge(ops, errors);
}

// ---- Server figures ---------------------------------------------------------------------------

std::size_t rss_bytes(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::strtoull(line.c_str() + 6, nullptr, 10) * 1024;
  }
  return 0;
}

bool process_alive(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("State:", 0) == 0) return line.find('Z') == std::string::npos;
  }
  return false;
}

std::size_t open_fds(pid_t pid) {
  std::error_code ec;
  std::size_t count = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++count;
  }
  return count;
}

/// The server's model worker processes (its children). Workers start when first needed, up to
/// --executor-threads + 1, each holding one socket in the server: descriptors are compared net
/// of them.
std::size_t ml_workers(pid_t pid) {
  std::size_t count = 0;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    std::ifstream children(it->path() / "children");
    pid_t child = 0;
    while (children >> child) ++count;
  }
  return count;
}

/// The server's descriptors per model worker: its channel (a socket), the pipe its output
/// reaches the server's log through, and the memory file of the control block they share
/// (--model-shared-memory, on by default).
constexpr std::size_t kPerWorker = 3;

/// What each descriptor points at (socket:[...], pipe:[...], /memfd:...), for a leak report.
std::map<std::string, int> fd_kinds(pid_t pid) {
  std::map<std::string, int> kinds;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    std::string target = std::filesystem::read_symlink(it->path(), ec).string();
    ++kinds[target.substr(0, target.find_first_of("[ "))];
  }
  return kinds;
}

/// A field of INFO (e.g. used_memory), or -1 when it is missing.
long long info_field(RawClient& c, const std::string& section, const std::string& field) {
  RespReply r = c.call({"INFO", section}, kCallTimeoutMs);
  const std::string needle = field + ":";
  std::size_t pos = 0;
  while ((pos = r.text.find(needle, pos)) != std::string::npos) {
    if (pos == 0 || r.text[pos - 1] == '\n') return std::atoll(r.text.c_str() + pos + needle.size());
    pos += needle.size();
  }
  return -1;
}

double load_average() {
  std::ifstream in("/proc/loadavg");
  double one = 0;
  in >> one;
  return one;
}

struct Figures {
  std::size_t rss = 0, fds = 0, workers = 0;
  long long used_memory = 0;
};

/// Samples the server every 200 ms until the run stops, keeping the peaks, and checks it lives.
void sampler(pid_t pid, int port, Shared& shared, Figures& peak, double& peak_load) {
  try {
    RawClient c = RawClient::tcp(port);
    while (!shared.stop.load()) {
      if (!process_alive(pid)) {
        shared.failures.add("server died during the run");
        return;
      }
      peak.rss = std::max(peak.rss, rss_bytes(pid));
      peak.fds = std::max(peak.fds, open_fds(pid));
      peak.workers = std::max(peak.workers, ml_workers(pid));
      peak.used_memory = std::max(peak.used_memory, info_field(c, "memory", "used_memory"));
      peak_load = std::max(peak_load, load_average());
      nap(shared, std::chrono::milliseconds(200));
    }
  } catch (const std::exception& e) {
    shared.failures.add(std::string("sampler (server unresponsive?): ") + e.what());
  }
}

/// Polls `read` until it returns `want` or `timeout` passes; returns the last value read.
template <typename T>
T settle(std::function<T()> read, T want, std::chrono::seconds timeout) {
  const auto until = Clock::now() + timeout;
  T value = read();
  while (value != want && Clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    value = read();
  }
  return value;
}

std::string mib(std::size_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / kMiB);
  return text;
}

void print_counts(const char* title, const Counts& counts) {
  std::printf("%-44s %12s\n", title, "count");
  if (counts.empty()) std::printf("  %-42s %12s\n", "(none)", "");
  for (const auto& [name, value] : counts) {
    std::printf("  %-42s %12llu\n", name.c_str(), static_cast<unsigned long long>(value));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int seconds = argc > 1 ? std::atoi(argv[1]) : 30;
  // Optional kinds of client to run (all by default), to narrow down what a failure needs.
  const std::vector<std::string> kinds = {"writers", "runners", "staller", "disconnector",
                                          "garbage"};
  std::vector<std::string> chosen(argv + std::min(argc, 2), argv + argc);
  if (chosen.empty()) chosen = kinds;
  auto wanted = [&](const std::string& kind) {
    return std::find(chosen.begin(), chosen.end(), kind) != chosen.end();
  };
  const bool known = std::all_of(chosen.begin(), chosen.end(), [&](const std::string& k) {
    return std::find(kinds.begin(), kinds.end(), k) != kinds.end();
  });
  if (seconds <= 0 || !known) {
    std::fprintf(stderr,
                 "usage: %s [seconds [kind ...]]  (seconds > 0, default 30; kinds: writers "
                 "runners staller disconnector garbage, default all)\n",
                 argv[0]);
    return 2;
  }
  ::signal(SIGPIPE, SIG_IGN);
  ServerProcess server;
  const pid_t pid = server.pid();
  const int port = server.port();
  RawClient control = RawClient::tcp(port);
  std::vector<std::string> setup_failures;
  auto expect_ok = [&](const std::vector<std::string>& args) {
    RespReply r = control.call(args, 120000);
    if (!r.is_ok()) setup_failures.push_back(args[0] + ": " + r.str());
  };

  // Baselines: used_memory of the empty server; descriptors and RSS once the script is stored and
  // has run in both forms (so its sandboxed worker is up), with only the control client connected.
  const long long used_memory_empty = info_field(control, "memory", "used_memory");
  expect_ok({"AI.SCRIPTSTORE", kScriptKey, "CPU", "ENTRY_POINTS", "1", "g", "SOURCE",
             kScriptSource});
  expect_ok({"AI.TENSORSET", "soak:warm", "FLOAT", "2", "VALUES", "1", "2"});
  expect_ok({"AI.SCRIPTEXECUTE", kScriptKey, "g", "INPUTS", "1", "soak:warm", "OUTPUTS", "1",
             "soak:warm:out"});
  expect_ok({"AI.SCRIPTRUN", kScriptKey, "f", "INPUTS", "soak:warm", "OUTPUTS", "soak:warm:out"});
  RespReply warm = control.call({"AI.TENSORGET", "soak:warm:out", "VALUES"});
  if (warm.str() != "[$3, $5]") setup_failures.push_back("warm-up output " + warm.str());
  control.call({"DEL", "soak:warm", "soak:warm:out"});
  for (const auto& f : setup_failures) std::fprintf(stderr, "setup: %s\n", f.c_str());
  if (!setup_failures.empty()) return 1;

  Figures baseline{rss_bytes(pid), open_fds(pid), ml_workers(pid), used_memory_empty};
  const auto baseline_fd_kinds = fd_kinds(pid);
  Figures peak = baseline;
  const double load_start = load_average();
  double load_peak = load_start;

  Shared shared;
  const auto started = Clock::now();
  std::vector<std::thread> threads;
  for (int i = 0; i < kWriters && wanted("writers"); ++i) {
    threads.emplace_back(writer_client, i, port, std::ref(shared));
  }
  for (int i = 0; i < kRunners && wanted("runners"); ++i) {
    threads.emplace_back(runner_client, i, port, std::ref(shared));
  }
  if (wanted("staller")) threads.emplace_back(staller_client, port, std::ref(shared));
  if (wanted("disconnector")) threads.emplace_back(disconnector_client, port, std::ref(shared));
  if (wanted("garbage")) threads.emplace_back(garbage_client, port, std::ref(shared));
  std::thread sampling(sampler, pid, port, std::ref(shared), std::ref(peak), std::ref(load_peak));

  const auto deadline = started + std::chrono::seconds(seconds);
  while (Clock::now() < deadline && shared.failures.count() == 0 && process_alive(pid)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  shared.stop = true;
  for (auto& t : threads) t.join();
  sampling.join();
  const double elapsed = std::chrono::duration<double>(Clock::now() - started).count();
  const double load_end = load_average();

  // Afterwards: every client connection but the control one closed, then everything flushed.
  std::vector<std::string> problems;
  for (const auto& f : shared.failures.first()) problems.push_back(f);
  if (shared.failures.count() > problems.size()) {
    problems.push_back("... " + std::to_string(shared.failures.count() - problems.size()) +
                       " more failures");
  }
  Figures after{};
  std::size_t fds_after_clients = 0;
  long long clients_after = -1, pending_after = -1, keys_before_flush = -1;
  std::string client_list_after;
  if (!process_alive(pid)) {
    problems.push_back("server is not running after the run");
  } else {
    try {
      const std::size_t baseline_net = baseline.fds - kPerWorker * baseline.workers;
      auto net_fds = [&] { return open_fds(pid) - kPerWorker * ml_workers(pid); };
      settle<std::size_t>(net_fds, baseline_net, std::chrono::seconds(10));
      fds_after_clients = open_fds(pid);
      // 20 s: after a run that loaded the machine, the server may take seconds to see every
      // client's close.
      clients_after = settle<long long>(
          [&] { return info_field(control, "clients", "connected_clients"); }, 1,
          std::chrono::seconds(20));
      if (clients_after != 1) client_list_after = control.call({"CLIENT", "LIST"}).text;
      pending_after = info_field(control, "clients", "pending_input_reserved");
      keys_before_flush = control.call({"DBSIZE"}, kCallTimeoutMs).integer;
      RespReply flushed = control.call({"FLUSHALL"}, kCallTimeoutMs);
      if (!flushed.is_ok()) problems.push_back("FLUSHALL: " + flushed.str());
      after.used_memory = settle<long long>(
          [&] { return info_field(control, "memory", "used_memory"); }, baseline.used_memory,
          std::chrono::seconds(10));
      std::this_thread::sleep_for(std::chrono::seconds(1));
      after.rss = rss_bytes(pid);
      after.fds = settle<std::size_t>(net_fds, baseline_net, std::chrono::seconds(10));
      after.workers = ml_workers(pid);
      after.fds = open_fds(pid);
      if (control.call({"PING"}, kCallTimeoutMs).str() != "+PONG") {
        problems.push_back("no PONG after the run");
      }
    } catch (const std::exception& e) {
      problems.push_back(std::string("control client after the run: ") + e.what());
    }
    // Stored values may hold descriptors (model outputs of 64 KiB or more live in sealed shared
    // memory), so the count must be back to its baseline once they are flushed too.
    if (after.fds - kPerWorker * after.workers != baseline.fds - kPerWorker * baseline.workers) {
      std::string detail;
      for (const auto& [kind, n] : fd_kinds(pid)) {
        const auto it = baseline_fd_kinds.find(kind);
        const int before = it == baseline_fd_kinds.end() ? 0 : it->second;
        if (n != before) {
          detail += " " + kind + " " + std::to_string(before) + "->" + std::to_string(n);
        }
      }
      problems.push_back("open descriptors " + std::to_string(after.fds) + " with " +
                         std::to_string(after.workers) +
                         " model workers after clients left and FLUSHALL, baseline " +
                         std::to_string(baseline.fds) + " with " +
                         std::to_string(baseline.workers) + ":" + detail);
    }
    if (clients_after != 1) {
      problems.push_back("connected_clients " + std::to_string(clients_after) +
                         " after the run:\n" + client_list_after);
    }
    if (pending_after != 0) {
      problems.push_back("pending_input_reserved " + std::to_string(pending_after) +
                         " after the run");
    }
    if (after.used_memory != baseline.used_memory) {
      problems.push_back("used_memory " + std::to_string(after.used_memory) +
                         " after FLUSHALL, baseline " + std::to_string(baseline.used_memory));
    }
    if (kCheckRss && after.rss > baseline.rss + kRssSlack) {
      problems.push_back("RSS " + mib(after.rss) + " after FLUSHALL, over baseline " +
                         mib(baseline.rss) + " + " + mib(kRssSlack));
    }
  }

  std::string clients;
  for (const auto& kind : chosen) clients += " " + kind;
  std::printf("\nSoak test: %.1f s; clients:%s (%d writers, %d runners, 1 staller, "
              "1 disconnector, 1 garbage sender); server pid %d\n\n",
              elapsed, clients.c_str(), kWriters, kRunners, static_cast<int>(pid));
  print_counts("operations", shared.operations);
  std::printf("\n");
  print_counts("errors (each one a failure)", shared.errors);
  std::printf("\n%-22s %14s %14s %14s\n", "server", "baseline", "peak", "after");
  std::printf("%-22s %14s %14s %14s\n", "RSS", mib(baseline.rss).c_str(), mib(peak.rss).c_str(),
              mib(after.rss).c_str());
  std::printf("%-22s %14zu %14zu %14zu  (%zu once clients left, before FLUSHALL)\n",
              "open descriptors", baseline.fds, peak.fds, after.fds, fds_after_clients);
  std::printf("%-22s %14zu %14zu %14zu  (a socket, a pipe and a control block each among the "
              "descriptors)\n",
              "model workers", baseline.workers, peak.workers, after.workers);
  std::printf("%-22s %14lld %14lld %14lld  (after FLUSHALL; %lld keys before it)\n",
              "used_memory (bytes)", baseline.used_memory, peak.used_memory, after.used_memory,
              keys_before_flush);
  std::printf("%-22s %14.2f %14.2f %14.2f\n", "load average (1 min)", load_start, load_peak,
              load_end);
  if (problems.empty()) {
    std::printf("\nPASS\n");
    return 0;
  }
  std::printf("\nFAIL\n");
  for (const auto& p : problems) std::printf("  %s\n", p.c_str());
  // For a look at the server's descriptors before it is stopped.
  if (const char* hold = std::getenv("SOAK_HOLD_SECONDS")) {
    std::fflush(stdout);
    std::this_thread::sleep_for(std::chrono::seconds(std::atoi(hold)));
  }
  return 1;
}
