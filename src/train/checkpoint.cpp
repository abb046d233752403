// Checkpoint files: see checkpoint.hpp. Layout: an 8-byte magic, a format number, the fields
// (integers as 8 bytes little-endian, byte strings length-prefixed), then the CRC-64 of
// everything before it.
#include "train/checkpoint.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <cstdint>
#include <string_view>

#include "common/crc64.hpp"
#include "train/input_file.hpp"

namespace slipstream::train {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kTrainerMagic = "SLPSTCKP";
constexpr std::string_view kReplayMagic = "SLPSTRPL";
constexpr std::uint64_t kFormat = 1;

class Writer {
 public:
  void u64(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) out_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
  void i64(std::int64_t v) { u64(static_cast<std::uint64_t>(v)); }
  void bytes(std::string_view b) {
    u64(b.size());
    out_.append(b);
  }
  void raw(std::string_view b) { out_.append(b); }
  void shape(const std::vector<std::int64_t>& s) {
    u64(s.size());
    for (std::int64_t d : s) i64(d);
  }
  std::string finish() {
    u64(crc64(0, out_));
    return std::move(out_);
  }

 private:
  std::string out_;
};

class Reader {
 public:
  Reader(std::string data, const fs::path& path) : data_(std::move(data)), path_(path) {}
  void check(std::string_view magic) {
    if (data_.size() < magic.size() + 16 || std::string_view(data_).substr(0, magic.size()) != magic) {
      fail("it is not a checkpoint of this kind");
    }
    std::uint64_t stored = 0;
    for (int i = 0; i < 8; ++i) {
      stored |= static_cast<std::uint64_t>(static_cast<unsigned char>(data_[data_.size() - 8 + i]))
                << (8 * i);
    }
    end_ = data_.size() - 8;
    if (crc64(0, std::string_view(data_).substr(0, end_)) != stored) {
      fail("its checksum does not match (a torn or corrupted file)");
    }
    pos_ = magic.size();
    if (u64() != kFormat) fail("it has a format this trainer does not read");
  }
  std::uint64_t u64() {
    need(8);
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) {
      v |= static_cast<std::uint64_t>(static_cast<unsigned char>(data_[pos_ + i])) << (8 * i);
    }
    pos_ += 8;
    return v;
  }
  std::int64_t i64() { return static_cast<std::int64_t>(u64()); }
  std::string bytes() {
    const std::uint64_t n = u64();
    need(n);
    std::string out = data_.substr(pos_, n);
    pos_ += n;
    return out;
  }
  std::vector<std::int64_t> shape() {
    const std::uint64_t n = u64();
    if (n > 64) fail("a shape has " + std::to_string(n) + " dimensions");
    std::vector<std::int64_t> s;
    for (std::uint64_t i = 0; i < n; ++i) s.push_back(i64());
    return s;
  }
  void done() {
    if (pos_ != end_) fail("it has bytes after its fields");
  }
  [[noreturn]] void fail(const std::string& why) const {
    throw CheckpointError("cannot read checkpoint " + path_.string() + ": " + why);
  }

 private:
  void need(std::uint64_t n) {
    if (n > end_ - pos_) fail("it ends in the middle of a field");
  }
  std::string data_;
  fs::path path_;
  std::size_t pos_ = 0, end_ = 0;
};

std::string os_error(int error) { return std::strerror(error); }

// A temporary file beside `target`, written, synced and renamed over it, then the directory
// synced: after a crash the target is the old file or the new one.
void write_atomically(const fs::path& target, const std::string& bytes) {
  static std::atomic<std::uint64_t> counter{0};
  const fs::path dir = target.parent_path();
  std::error_code made;
  fs::create_directories(dir, made);
  if (made) throw CheckpointError("cannot create checkpoint directory " + dir.string() + ": " + made.message());
  fs::path temporary = target;
  temporary += ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    throw CheckpointError("cannot write checkpoint " + target.string() + ": " + os_error(errno));
  }
  std::size_t written = 0;
  int error = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error = errno;
      break;
    }
    written += static_cast<std::size_t>(n);
  }
  if (error == 0 && ::fsync(fd) != 0) error = errno;
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error == 0 && ::rename(temporary.c_str(), target.c_str()) != 0) error = errno;
  if (error != 0) {
    ::unlink(temporary.c_str());
    throw CheckpointError("cannot write checkpoint " + target.string() + ": " + os_error(error));
  }
  const int dir_fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
}

// No size limit of its own: a replay checkpoint holds a whole replay memory, which the config
// bounds. Only a regular file is read (input_file.hpp), and its CRC is checked after.
std::optional<std::string> read_whole(const fs::path& path) {
  std::error_code error;
  if (!fs::exists(path, error) && !error) return std::nullopt;
  try {
    return read_input_file(path.string(), "checkpoint", UINT64_MAX);
  } catch (const InputFileError& e) {
    throw CheckpointError(e.what());
  }
}

DType dtype_of(Reader& r) {
  const std::uint64_t v = r.u64();
  if (v > static_cast<std::uint64_t>(DType::kUInt64)) r.fail("it names an unknown dtype");
  return static_cast<DType>(v);
}

// The checked file at `path` positioned at its first field; nullopt when there is none.
std::optional<Reader> open_checked(const fs::path& path, std::string_view magic) {
  auto data = read_whole(path);
  if (!data) return std::nullopt;
  std::optional<Reader> r(std::in_place, std::move(*data), path);
  r->check(magic);
  return r;
}

}  // namespace

fs::path trainer_checkpoint_path(const fs::path& dir) { return dir / "trainer.ckpt"; }
fs::path replay_checkpoint_path(const fs::path& dir, int rank) {
  return dir / ("replay-" + std::to_string(rank) + ".ckpt");
}

void write_checkpoint(const fs::path& dir, const TrainerCheckpoint& c) {
  Writer w;
  w.raw(kTrainerMagic);
  w.u64(kFormat);
  w.i64(c.optimizer_steps);
  w.i64(c.published_version);
  w.i64(c.stream_step);
  w.i64(c.samples_seen);
  w.i64(c.samples_trained);
  w.bytes(c.model);
  w.bytes(c.optimizer);
  write_atomically(trainer_checkpoint_path(dir), w.finish());
}

void write_checkpoint(const fs::path& dir, int rank, const ReplayCheckpoint& c) {
  Writer w;
  w.raw(kReplayMagic);
  w.u64(kFormat);
  w.i64(c.optimizer_steps);
  w.u64(static_cast<std::uint64_t>(c.input_dtype));
  w.shape(c.input_shape);
  w.u64(static_cast<std::uint64_t>(c.target_dtype));
  w.shape(c.target_shape);
  w.u64(c.count);
  w.bytes(c.inputs);
  w.bytes(c.targets);
  write_atomically(replay_checkpoint_path(dir, rank), w.finish());
}

std::optional<TrainerCheckpoint> read_trainer_checkpoint(const fs::path& dir) {
  std::optional<Reader> opened = open_checked(trainer_checkpoint_path(dir), kTrainerMagic);
  if (!opened) return std::nullopt;
  Reader& r = *opened;
  TrainerCheckpoint c;
  c.optimizer_steps = r.i64();
  c.published_version = r.i64();
  c.stream_step = r.i64();
  c.samples_seen = r.i64();
  c.samples_trained = r.i64();
  c.model = r.bytes();
  c.optimizer = r.bytes();
  r.done();
  return c;
}

std::optional<ReplayCheckpoint> read_replay_checkpoint(const fs::path& dir, int rank) {
  std::optional<Reader> opened = open_checked(replay_checkpoint_path(dir, rank), kReplayMagic);
  if (!opened) return std::nullopt;
  Reader& r = *opened;
  ReplayCheckpoint c;
  c.optimizer_steps = r.i64();
  c.input_dtype = dtype_of(r);
  c.input_shape = r.shape();
  c.target_dtype = dtype_of(r);
  c.target_shape = r.shape();
  c.count = r.u64();
  c.inputs = r.bytes();
  c.targets = r.bytes();
  r.done();
  auto row_bytes = [&](DType type, const std::vector<std::int64_t>& shape) {
    std::uint64_t n = dtype_size(type);
    for (std::int64_t d : shape) {
      if (d < 0) r.fail("a shape has a negative dimension");
      n *= static_cast<std::uint64_t>(d);
    }
    return n;
  };
  if (c.inputs.size() != c.count * row_bytes(c.input_dtype, c.input_shape) ||
      c.targets.size() != c.count * row_bytes(c.target_dtype, c.target_shape)) {
    r.fail("its sample bytes do not match its row shapes");
  }
  return c;
}

}  // namespace slipstream::train
