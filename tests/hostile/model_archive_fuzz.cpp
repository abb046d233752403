// Black-box mutational fuzzer of model loading: mutates TorchScript archives, stores each one in a
// real server with AI.MODELSTORE, and fails when the server dies, hangs or stops serving models.
//
// Usage: model_archive_fuzz SEED_DIR [SECONDS] [--seed N] [--iterations N] [--check-every N]
//                           [--timeout-ms N] [--artifacts DIR] [--replay FILE]
//
// Every *.pt file of SEED_DIR is a seed (make_models.py and make_hostile_models.py write them),
// and every *.onnx file a seed stored with backend ONNX (raw mutations only: the ONNX loader's
// protobuf parser, checker, shape inference and lowering get the mutated bytes).
// Each iteration takes a seed and applies one to four mutations: raw ones on the bytes (bit flips,
// interesting values, inserted, removed and duplicated ranges, truncation) and, when the input
// parses as a zip, structured ones that rewrite a well-formed archive (an entry's bytes mutated,
// pickle opcodes replaced or swapped, entries duplicated, dropped, renamed, swapped or taken from
// another seed). The mutations depend only on the seed number and the seed files, never on the
// server's replies, so `--seed S --iterations I` replays a run up to its iteration I (with the
// same standard library: its distributions pick the numbers).
//
// Every reply must be +OK or an error, within --timeout-ms, and PING must answer after it. Every
// --check-every iterations, SEED_DIR/scale.pt (x * 2 + 1) must still store and run correctly.
// On a failure the input is saved under --artifacts and the program exits 1; exit 2 is a usage or
// set-up error. At the end it prints iterations, accepted and refused stores, the distinct error
// texts and the store latency.
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <numeric>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>  // support/raw_client.hpp uses std::exchange
#include <vector>

#include "support/raw_client.hpp"
#include "support/server_process.hpp"

namespace {

using slipstream::testing::RawClient;
using slipstream::testing::RespReply;
using slipstream::testing::ServerProcess;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kMaxInputBytes = 1 << 20;  // mutated inputs are capped at 1 MiB

struct Options {
  std::filesystem::path seed_dir;
  double seconds = 0;
  std::uint64_t seed = 0;
  bool seed_given = false;
  std::uint64_t max_iterations = UINT64_MAX;
  std::uint64_t check_every = 50;
  int timeout_ms = 30000;
  std::filesystem::path artifacts = ".";
  std::filesystem::path replay;
};

[[noreturn]] void usage(const std::string& why) {
  std::cerr << "model_archive_fuzz: " << why << "\n"
            << "usage: model_archive_fuzz SEED_DIR [SECONDS=60] [--seed N] [--iterations N]\n"
            << "         [--check-every N] [--timeout-ms N] [--artifacts DIR] [--replay FILE]\n";
  std::exit(2);
}

std::uint64_t parse_number(const std::string& text, const std::string& what) {
  try {
    std::size_t used = 0;
    std::uint64_t value = std::stoull(text, &used);
    if (used == text.size()) return value;
  } catch (const std::exception&) {
  }
  usage(what + " must be a whole number, got '" + text + "'");
}

Options parse_options(int argc, char** argv) {
  Options options;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--seed") {
      options.seed = parse_number(value(), "--seed");
      options.seed_given = true;
    } else if (arg == "--iterations") {
      options.max_iterations = parse_number(value(), "--iterations");
    } else if (arg == "--check-every") {
      options.check_every = std::max<std::uint64_t>(1, parse_number(value(), "--check-every"));
    } else if (arg == "--timeout-ms") {
      options.timeout_ms = static_cast<int>(parse_number(value(), "--timeout-ms"));
    } else if (arg == "--artifacts") {
      options.artifacts = value();
    } else if (arg == "--replay") {
      options.replay = value();
    } else if (arg.starts_with("--")) {
      usage("unknown option " + arg);
    } else {
      positional.push_back(arg);
    }
  }
  if (positional.empty() || positional.size() > 2) usage("expected SEED_DIR [SECONDS]");
  options.seed_dir = positional[0];
  options.seconds =
      positional.size() == 2 ? static_cast<double>(parse_number(positional[1], "SECONDS")) : 60;
  if (!options.seed_given)
    options.seed = std::random_device{}() | (std::uint64_t{std::random_device{}()} << 32);
  return options;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// --- zip archives
// --------------------------------------------------------------------------------- Just enough of
// the format to take a TorchScript archive apart and write a well-formed one back: no zip64, no
// encryption. Deflated entries (torch.jit.save compresses code/) are kept as opaque bytes; only
// stored entries have their contents mutated.

std::uint32_t crc32(std::string_view data) {
  static const std::array<std::uint32_t, 256> table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  std::uint32_t crc = 0xFFFFFFFFu;
  for (unsigned char byte : data) crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8);
  return crc ^ 0xFFFFFFFFu;
}

struct ZipEntry {
  std::string name;
  std::uint16_t method = 0;  // 0 stored, 8 deflated
  std::uint32_t crc = 0;
  std::uint32_t uncompressed_size = 0;
  std::string data;  // as stored in the archive
};

std::uint32_t get_le(std::string_view bytes, std::size_t at, int width) {
  std::uint32_t value = 0;
  for (int k = width - 1; k >= 0; --k)
    value = (value << 8) | static_cast<unsigned char>(bytes[at + k]);
  return value;
}

void put_le(std::string& out, std::uint32_t value, int width) {
  for (int k = 0; k < width; ++k) out.push_back(static_cast<char>((value >> (8 * k)) & 0xFF));
}

/// The entries of a zip, from its central directory; nullopt when it is not a readable zip.
std::optional<std::vector<ZipEntry>> parse_zip(std::string_view zip) {
  if (zip.size() < 22) return std::nullopt;
  std::size_t end = zip.size() - 22;
  const std::size_t lowest = zip.size() > 22 + 65535 ? zip.size() - 22 - 65535 : 0;
  while (get_le(zip, end, 4) != 0x06054b50) {
    if (end == lowest) return std::nullopt;
    --end;
  }
  const std::uint32_t count = get_le(zip, end + 10, 2);
  std::size_t at = get_le(zip, end + 16, 4);
  std::vector<ZipEntry> entries;
  for (std::uint32_t i = 0; i < count; ++i) {
    if (at + 46 > zip.size() || get_le(zip, at, 4) != 0x02014b50) return std::nullopt;
    ZipEntry entry;
    entry.method = static_cast<std::uint16_t>(get_le(zip, at + 10, 2));
    entry.crc = get_le(zip, at + 16, 4);
    const std::uint32_t compressed = get_le(zip, at + 20, 4);
    entry.uncompressed_size = get_le(zip, at + 24, 4);
    const std::size_t name_len = get_le(zip, at + 28, 2);
    const std::size_t extra_len = get_le(zip, at + 30, 2);
    const std::size_t comment_len = get_le(zip, at + 32, 2);
    const std::size_t local = get_le(zip, at + 42, 4);
    if (at + 46 + name_len > zip.size()) return std::nullopt;
    entry.name = std::string(zip.substr(at + 46, name_len));
    if (local + 30 > zip.size() || get_le(zip, local, 4) != 0x04034b50) return std::nullopt;
    const std::size_t data_at =
        local + 30 + get_le(zip, local + 26, 2) + get_le(zip, local + 28, 2);
    if (data_at + compressed > zip.size()) return std::nullopt;
    entry.data = std::string(zip.substr(data_at, compressed));
    entries.push_back(std::move(entry));
    at += 46 + name_len + extra_len + comment_len;
  }
  return entries;
}

/// A well-formed zip of `entries`; stored entries get their CRC and sizes from their bytes.
std::string write_zip(std::vector<ZipEntry> entries) {
  std::string out, directory;
  for (ZipEntry& entry : entries) {
    if (entry.method == 0) {
      entry.crc = crc32(entry.data);
      entry.uncompressed_size = static_cast<std::uint32_t>(entry.data.size());
    }
    const std::uint32_t offset = static_cast<std::uint32_t>(out.size());
    auto common = [&](std::string& to) {
      put_le(to, 20, 2);  // version needed
      put_le(to, 0, 2);   // flags
      put_le(to, entry.method, 2);
      put_le(to, 0, 2);     // time
      put_le(to, 0x21, 2);  // date: 1980-01-01
      put_le(to, entry.crc, 4);
      put_le(to, static_cast<std::uint32_t>(entry.data.size()), 4);
      put_le(to, entry.uncompressed_size, 4);
      put_le(to, static_cast<std::uint32_t>(entry.name.size()), 2);
      put_le(to, 0, 2);  // extra length
    };
    put_le(out, 0x04034b50, 4);
    common(out);
    out += entry.name;
    out += entry.data;
    put_le(directory, 0x02014b50, 4);
    put_le(directory, 20, 2);  // version made by
    common(directory);
    put_le(directory, 0, 2);  // comment length
    put_le(directory, 0, 2);  // disk
    put_le(directory, 0, 2);  // internal attributes
    put_le(directory, 0, 4);  // external attributes
    put_le(directory, offset, 4);
    directory += entry.name;
  }
  const std::uint32_t directory_at = static_cast<std::uint32_t>(out.size());
  out += directory;
  put_le(out, 0x06054b50, 4);
  put_le(out, 0, 2);
  put_le(out, 0, 2);
  put_le(out, static_cast<std::uint32_t>(entries.size()), 2);
  put_le(out, static_cast<std::uint32_t>(entries.size()), 2);
  put_le(out, static_cast<std::uint32_t>(directory.size()), 4);
  put_le(out, directory_at, 4);
  put_le(out, 0, 2);
  return out;
}

// --- mutations
// ------------------------------------------------------------------------------------

struct Seed {
  std::string name;
  std::string bytes;
  std::optional<std::vector<ZipEntry>> entries;
  std::string backend;  // TORCH or ONNX
};

struct Input {
  std::string bytes;
  std::string origin;  // seed file and the mutations applied, for the report
  std::string backend;
};

// Pickle opcodes the unpickler acts on: replacing one byte of a pickle by one of these changes
// what is on its stack (the class of bug that crashes libtorch 1.13's loader).
constexpr std::string_view kPickleOpcodes =
    "()t.0NQRbcqhjKMJXu}]es\x80\x81\x85\x86\x87\x88\x89\x8a\x94";

constexpr std::array<std::uint64_t, 10> kInterestingValues = {
    0, 1, 0x7F, 0x80, 0xFF, 0x7FFF, 0xFFFF, 0x7FFFFFFF, 0xFFFFFFFF, 0x7FFFFFFFFFFFFFFF};

class Mutator {
 public:
  Mutator(std::uint64_t seed, const std::vector<Seed>& seeds) : rng_(seed), seeds_(seeds) {}

  Input next() {
    const Seed& seed = seeds_[below(seeds_.size())];
    Input input{seed.bytes, seed.name, seed.backend};
    const std::size_t rounds = 1 + below(4);
    for (std::size_t round = 0; round < rounds; ++round) {
      std::optional<std::vector<ZipEntry>> entries =
          round == 0 ? seed.entries : parse_zip(input.bytes);
      if (entries && !entries->empty() && below(10) < 8) {
        input.origin += " " + mutate_archive(*entries);
        input.bytes = write_zip(std::move(*entries));
      } else {
        input.origin += " " + mutate_bytes(input.bytes, "raw");
      }
      if (input.bytes.size() > kMaxInputBytes) input.bytes.resize(kMaxInputBytes);
    }
    return input;
  }

 private:
  std::size_t below(std::size_t n) {
    return n == 0 ? 0 : std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_);
  }

  // One raw mutation of `bytes`; returns what it did.
  std::string mutate_bytes(std::string& bytes, const std::string& where) {
    if (bytes.empty()) {
      bytes.push_back(static_cast<char>(below(256)));
      return where + ":grow";
    }
    std::ostringstream what;
    what << where << ":";
    const std::size_t at = below(bytes.size());
    switch (below(6)) {
      case 0: {  // flip 1 to 8 bits
        const std::size_t flips = 1 + below(8);
        for (std::size_t k = 0; k < flips; ++k)
          bytes[below(bytes.size())] ^= static_cast<char>(1 << below(8));
        what << "flip" << flips;
        break;
      }
      case 1: {  // an interesting little-endian value of 1, 2, 4 or 8 bytes
        const std::size_t width = std::size_t{1} << below(4);
        const std::uint64_t value = kInterestingValues[below(kInterestingValues.size())];
        for (std::size_t k = 0; k < width && at + k < bytes.size(); ++k)
          bytes[at + k] = static_cast<char>((value >> (8 * k)) & 0xFF);
        what << "value@" << at;
        break;
      }
      case 2: {  // insert random bytes or a copy of a range
        const std::size_t length = 1 + below(std::min<std::size_t>(bytes.size(), 256));
        std::string piece;
        if (below(2) == 0) {
          for (std::size_t k = 0; k < length; ++k) piece.push_back(static_cast<char>(below(256)));
        } else {
          piece = bytes.substr(below(bytes.size()), length);
        }
        bytes.insert(at, piece);
        what << "insert" << piece.size() << "@" << at;
        break;
      }
      case 3: {  // remove a range
        const std::size_t length = 1 + below(std::min<std::size_t>(bytes.size() - at, 256));
        bytes.erase(at, length);
        what << "erase" << length << "@" << at;
        break;
      }
      case 4: {  // truncate
        bytes.resize(at);
        what << "truncate@" << at;
        break;
      }
      default: {  // overwrite with a copy of another range
        const std::size_t from = below(bytes.size());
        const std::size_t length =
            1 + below(std::min<std::size_t>(bytes.size() - std::max(at, from), 64));
        bytes.replace(at, length, bytes.substr(from, length));
        what << "copy" << length << "@" << at;
        break;
      }
    }
    return what.str();
  }

  // Pickle-aware: a byte replaced by an opcode, two bytes swapped, or an integer operand made
  // extreme (sizes and strides of _rebuild_tensor_v2 are BININT1/BININT2/BININT operands).
  std::string mutate_pickle(std::string& pickle, const std::string& where) {
    if (pickle.size() < 3) return mutate_bytes(pickle, where);
    const std::size_t at = 2 + below(pickle.size() - 2);
    std::ostringstream what;
    switch (below(3)) {
      case 0:
        pickle[at] = kPickleOpcodes[below(kPickleOpcodes.size())];
        what << where << ":opcode@" << at;
        break;
      case 1: {
        const std::size_t other = 2 + below(pickle.size() - 2);
        std::swap(pickle[at], pickle[other]);
        what << where << ":swap@" << at << "," << other;
        break;
      }
      default: {
        std::vector<std::size_t> operands;
        for (std::size_t k = 2; k + 1 < pickle.size(); ++k)
          if (pickle[k] == 'K' || pickle[k] == 'M' || pickle[k] == 'J') operands.push_back(k + 1);
        if (operands.empty()) return mutate_bytes(pickle, where);
        const std::size_t operand = operands[below(operands.size())];
        const std::uint64_t value = kInterestingValues[below(kInterestingValues.size())];
        const std::size_t width = pickle[operand - 1] == 'K'   ? 1
                                  : pickle[operand - 1] == 'M' ? 2
                                                               : 4;
        for (std::size_t k = 0; k < width && operand + k < pickle.size(); ++k)
          pickle[operand + k] = static_cast<char>((value >> (8 * k)) & 0xFF);
        what << where << ":operand@" << operand;
        break;
      }
    }
    return what.str();
  }

  std::string mutate_archive(std::vector<ZipEntry>& entries) {
    ZipEntry& entry = entries[below(entries.size())];
    switch (below(7)) {
      case 0:
      case 1:
      case 2:  // the contents of one stored entry (twice as likely for pickles)
        if (entry.method == 0) {
          if (entry.name.ends_with(".pkl")) return mutate_pickle(entry.data, entry.name);
          return mutate_bytes(entry.data, entry.name);
        }
        [[fallthrough]];
      case 3: {  // a duplicate entry (same name, possibly different bytes)
        ZipEntry copy = entry;
        if (copy.method == 0 && below(2) == 0) mutate_bytes(copy.data, copy.name);
        entries.insert(entries.begin() + static_cast<std::ptrdiff_t>(below(entries.size() + 1)),
                       copy);
        return "duplicate:" + copy.name;
      }
      case 4: {  // drop an entry
        std::string name = entry.name;
        entries.erase(entries.begin() + (&entry - entries.data()));
        return "drop:" + name;
      }
      case 5: {  // swap the contents of two entries, or rename one to another's name
        ZipEntry& other = entries[below(entries.size())];
        if (below(2) == 0) {
          std::swap(entry.data, other.data);
          std::swap(entry.method, other.method);
          std::swap(entry.crc, other.crc);
          std::swap(entry.uncompressed_size, other.uncompressed_size);
          return "swap:" + entry.name + "," + other.name;
        }
        std::string old = entry.name;
        entry.name = other.name;
        return "rename:" + old + "->" + other.name;
      }
      default: {  // the same part (after the top folder) taken from another seed
        const Seed& donor = seeds_[below(seeds_.size())];
        if (!donor.entries || donor.entries->empty()) return mutate_bytes(entry.data, entry.name);
        const ZipEntry& part = (*donor.entries)[below(donor.entries->size())];
        const std::string suffix = part.name.substr(part.name.find('/') + 1);
        const std::string folder = entry.name.substr(0, entry.name.find('/') + 1);
        ZipEntry graft = part;
        graft.name = folder + suffix;
        for (ZipEntry& e : entries)
          if (e.name == graft.name) {
            e = graft;
            return "graft:" + donor.name + ":" + suffix;
          }
        entries.push_back(graft);
        return "graft+:" + donor.name + ":" + suffix;
      }
    }
  }

  std::mt19937_64 rng_;
  const std::vector<Seed>& seeds_;
};

// --- talking to the server
// ------------------------------------------------------------------------

struct Outcome {
  enum class Kind { kAccepted, kRefused, kLost } kind = Kind::kLost;
  std::string text;  // the error reply, or why the reply was lost
};

Outcome store(RawClient& client, const std::string& key, const std::string& blob, int timeout_ms,
              const std::string& backend = "TORCH") {
  try {
    client.send({"AI.MODELSTORE", key, backend, "CPU", "BLOB", blob});
    RespReply reply = client.read_reply(timeout_ms);
    if (reply.is_ok()) return {Outcome::Kind::kAccepted, {}};
    if (reply.is_error()) return {Outcome::Kind::kRefused, reply.text};
    return {Outcome::Kind::kLost, "neither +OK nor an error: " + reply.str()};
  } catch (const std::exception& e) {
    return {Outcome::Kind::kLost, e.what()};
  }
}

std::optional<std::string> ping_fails(RawClient& client, int timeout_ms) {
  try {
    client.send({"PING"});
    RespReply reply = client.read_reply(timeout_ms);
    if (reply.str() != "+PONG") return "PING answered " + reply.str();
    return std::nullopt;
  } catch (const std::exception& e) {
    return std::string("PING: ") + e.what();
  }
}

// scale.pt computes x * 2 + 1: stores it under its own key, runs it, compares the result.
std::optional<std::string> known_good_fails(RawClient& client, const std::string& model,
                                            int timeout_ms) {
  try {
    Outcome stored = store(client, "fuzz:known_good", model, timeout_ms);
    if (stored.kind != Outcome::Kind::kAccepted) return "known-good model refused: " + stored.text;
    const std::vector<float> x = {1, -2, 3.5f, 0, 10, -0.25f};
    std::string blob(reinterpret_cast<const char*>(x.data()), x.size() * sizeof(float));
    client.send({"AI.TENSORSET", "fuzz:x", "FLOAT", "2", "3", "BLOB", blob});
    if (RespReply r = client.read_reply(timeout_ms); !r.is_ok()) return "TENSORSET: " + r.str();
    client.send(
        {"AI.MODELEXECUTE", "fuzz:known_good", "INPUTS", "1", "fuzz:x", "OUTPUTS", "1", "fuzz:y"});
    if (RespReply r = client.read_reply(timeout_ms); !r.is_ok()) return "MODELEXECUTE: " + r.str();
    client.send({"AI.TENSORGET", "fuzz:y", "BLOB"});
    RespReply r = client.read_reply(timeout_ms);
    if (r.kind != RespReply::Kind::kBulk || r.text.size() != blob.size())
      return "TENSORGET: " + r.str();
    std::vector<float> y(x.size());
    std::memcpy(y.data(), r.text.data(), r.text.size());
    for (std::size_t i = 0; i < x.size(); ++i)
      if (y[i] != x[i] * 2 + 1)
        return "known-good model computed a wrong value at " + std::to_string(i);
    return std::nullopt;
  } catch (const std::exception& e) {
    return std::string("known-good check: ") + e.what();
  }
}

std::string describe_exit(int status) {
  if (WIFSIGNALED(status))
    return "died by signal " + std::to_string(WTERMSIG(status)) + " (" +
           strsignal(WTERMSIG(status)) + ")";
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "stopped";
}

// What became of the server after a lost reply: it died (how) or it hangs (then it is killed).
std::string server_fate(ServerProcess& server, int timeout_ms) {
  int status = 0;
  if (server.wait_exit(std::chrono::seconds(5), &status))
    return "the server " + describe_exit(status);
  server.stop(SIGKILL);
  return "the server is still running but did not answer within " + std::to_string(timeout_ms) +
         " ms (a hang)";
}

// Saves the input, says what happened and how to replay it. Returns the exit code.
int report_failure(ServerProcess& server, const Options& options, std::uint64_t iteration,
                   const Input& input, const std::string& what) {
  const std::string fate = server_fate(server, options.timeout_ms);
  std::filesystem::create_directories(options.artifacts);
  const std::filesystem::path saved =
      options.artifacts / ("model-archive-seed" + std::to_string(options.seed) + "-iteration" +
                           std::to_string(iteration) +
                           (input.backend == "ONNX" ? ".onnx" : ".pt"));
  std::ofstream(saved, std::ios::binary) << input.bytes;
  std::cout << "FAILURE at iteration " << iteration << " (seed " << options.seed << "): " << fate
            << "\n  " << what << "\n  input: " << saved.string() << " (" << input.bytes.size()
            << " bytes) from " << input.origin << "\n  replay: model_archive_fuzz "
            << options.seed_dir.string() << " --replay " << saved.string()
            << "\n      or: model_archive_fuzz " << options.seed_dir.string() << " 3600 --seed "
            << options.seed << " --iterations " << iteration + 1 << std::endl;
  return 1;
}

// Stores one file as it is: exit 0 when the server replies and still answers, 1 otherwise.
int replay(ServerProcess& server, RawClient& client, const Options& options) {
  const std::string bytes = read_file(options.replay);
  Outcome outcome = store(client, "fuzz:model", bytes, options.timeout_ms,
                          options.replay.extension() == ".onnx" ? "ONNX" : "TORCH");
  std::optional<std::string> failed;
  if (outcome.kind == Outcome::Kind::kLost)
    failed = "AI.MODELSTORE: " + outcome.text;
  else
    failed = ping_fails(client, options.timeout_ms);
  if (failed) {
    std::cout << "replay of " << options.replay.string() << ": "
              << server_fate(server, options.timeout_ms) << "\n  " << *failed << std::endl;
    return 1;
  }
  std::cout << "replay of " << options.replay.string() << ": "
            << (outcome.kind == Outcome::Kind::kAccepted ? "+OK" : "-" + outcome.text)
            << "; the server still answers" << std::endl;
  return 0;
}

std::vector<Seed> load_seeds(const std::filesystem::path& dir) {
  std::vector<Seed> seeds;
  for (const auto& file : std::filesystem::directory_iterator(dir))
    if (file.path().extension() == ".pt" || file.path().extension() == ".onnx") {
      const bool onnx = file.path().extension() == ".onnx";
      Seed seed{file.path().filename().string(), read_file(file.path()), std::nullopt,
                onnx ? "ONNX" : "TORCH"};
      if (!onnx) seed.entries = parse_zip(seed.bytes);
      seeds.push_back(std::move(seed));
    }
  // Directory order is the file system's: sort so a seed number means the same run everywhere.
  std::sort(seeds.begin(), seeds.end(),
            [](const Seed& a, const Seed& b) { return a.name < b.name; });
  return seeds;
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

int run(const Options& options) {
  std::vector<Seed> seeds;
  std::string known_good;
  try {
    seeds = load_seeds(options.seed_dir);
    if (std::filesystem::exists(options.seed_dir / "scale.pt"))
      known_good = read_file(options.seed_dir / "scale.pt");
  } catch (const std::exception& e) {
    usage(e.what());
  }
  if (seeds.empty()) usage("no *.pt seed files in " + options.seed_dir.string());

  ServerProcess server;
  RawClient client = RawClient::tcp(server.port());

  if (!options.replay.empty()) return replay(server, client, options);

  std::cout << "model_archive_fuzz: seed " << options.seed << ", " << seeds.size()
            << " seed files, " << options.seconds << " s, server pid " << server.pid() << std::endl;
  if (known_good.empty())
    std::cout << "  no scale.pt among the seeds: known-good checks skipped\n";
  else if (auto failed = known_good_fails(client, known_good, options.timeout_ms)) {
    std::cerr << "the known-good model fails before fuzzing: " << *failed << "\n";
    return 2;
  }

  Mutator mutator(options.seed, seeds);
  std::uint64_t accepted = 0, refused = 0, checks = 0, iteration = 0;
  std::map<std::string, std::uint64_t> errors;
  std::vector<double> latencies_ms;
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::duration<double>(options.seconds);
  for (; iteration < options.max_iterations && Clock::now() < deadline; ++iteration) {
    Input input = mutator.next();
    const auto sent = Clock::now();
    Outcome outcome = store(client, "fuzz:model", input.bytes, options.timeout_ms, input.backend);
    latencies_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - sent).count());
    if (latencies_ms.back() > options.timeout_ms / 10.0)  // a near-hang, named before it grows
      std::cout << "  slow store at iteration " << iteration << ": " << std::fixed
                << std::setprecision(0) << latencies_ms.back() << " ms, "
                << outcome.text.substr(0, 160) << "\n  input: " << input.origin << std::endl;
    if (outcome.kind == Outcome::Kind::kLost)
      return report_failure(server, options, iteration, input, "AI.MODELSTORE: " + outcome.text);
    if (outcome.kind == Outcome::Kind::kAccepted)
      ++accepted;
    else
      ++refused, ++errors[outcome.text];
    if (auto failed = ping_fails(client, options.timeout_ms))
      return report_failure(server, options, iteration, input, *failed);
    if (!known_good.empty() && (iteration + 1) % options.check_every == 0) {
      if (auto failed = known_good_fails(client, known_good, options.timeout_ms))
        return report_failure(server, options, iteration, input, *failed);
      ++checks;
    }
  }

  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  const double mean = latencies_ms.empty()
                          ? 0
                          : std::accumulate(latencies_ms.begin(), latencies_ms.end(), 0.0) /
                                static_cast<double>(latencies_ms.size());
  std::cout << std::fixed << std::setprecision(2);
  std::cout << "model_archive_fuzz: seed " << options.seed << ", " << iteration << " iterations in "
            << elapsed << " s: " << accepted << " accepted, " << refused << " refused, "
            << errors.size() << " distinct error texts, " << checks << " known-good checks passed\n"
            << "  store latency: mean " << mean << " ms, median " << median(latencies_ms)
            << " ms, max "
            << (latencies_ms.empty() ? 0
                                     : *std::max_element(latencies_ms.begin(), latencies_ms.end()))
            << " ms\n";
  std::vector<std::pair<std::uint64_t, std::string>> frequent;
  for (const auto& [text, count] : errors) frequent.emplace_back(count, text);
  std::sort(frequent.rbegin(), frequent.rend());
  if (!frequent.empty()) std::cout << "  most frequent errors:\n";
  for (std::size_t i = 0; i < frequent.size() && i < 8; ++i) {
    std::string text = frequent[i].second.substr(0, 110);
    std::replace(text.begin(), text.end(), '\n', ' ');
    std::cout << "    " << frequent[i].first << "  " << text << "\n";
  }
  std::cout << std::flush;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse_options(argc, argv);
  try {
    return run(options);
  } catch (const std::exception& e) {
    std::cerr << "model_archive_fuzz: " << e.what() << "\n";
    return 2;
  }
}
