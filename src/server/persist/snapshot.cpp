// Snapshot save and load: streaming, checksummed, crash-safe file I/O; see snapshot.hpp for the
// format and the contracts.
#include "server/persist/snapshot.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "common/crc64.hpp"
#include "server/store/tensor_codec.hpp"

namespace slipstream::server {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kMagic = "SLIPSNAP";
constexpr std::uint64_t kHeaderSize = 8 + 4 + 8;  // magic, version, key count
constexpr std::uint64_t kTrailerSize = 8;         // CRC-64
// Large enough that syscalls are a small cost next to the copies, small enough not to matter.
constexpr std::size_t kIoBufferSize = std::size_t{1} << 20;
// Payloads at least this big bypass the buffer: copying a multi-GiB tensor to stage it would
// double the memory traffic for nothing.
constexpr std::size_t kDirectIoThreshold = std::size_t{64} << 10;

constexpr std::uint8_t kTagString = 0;
constexpr std::uint8_t kTagTensor = 1;
constexpr std::uint8_t kTagHash = 2;
constexpr std::uint8_t kTagList = 3;
constexpr std::uint8_t kTagModel = 4;
constexpr std::uint8_t kTagScript = 5;
// A compressed tensor (Tensor::encoded): as kTagTensor, its data a codec frame.
constexpr std::uint8_t kTagEncodedTensor = 6;

// The smallest encodings, used to reject absurd counts before looping or reserving on them.
constexpr std::uint64_t kMinEntrySize = 1 + 8 + 8;  // tag, empty key, empty string
constexpr std::uint64_t kMinHashFieldSize = 8 + 8;
constexpr std::uint64_t kMinListItemSize = 8;

// The file stores DType's numeric value, so renumbering DType needs a format version bump.
static_assert(static_cast<int>(DType::kFloat32) == 0 && static_cast<int>(DType::kFloat64) == 1 &&
              static_cast<int>(DType::kInt8) == 2 && static_cast<int>(DType::kInt16) == 3 &&
              static_cast<int>(DType::kInt32) == 4 && static_cast<int>(DType::kInt64) == 5 &&
              static_cast<int>(DType::kUInt8) == 6 && static_cast<int>(DType::kUInt16) == 7 &&
              static_cast<int>(DType::kBool) == 8 && static_cast<int>(DType::kUInt32) == 9 &&
              static_cast<int>(DType::kUInt64) == 10);
constexpr std::uint8_t kDTypeCount = 11;

// A structurally invalid entry (unknown tag, bad tensor, ...).
class FormatError : public std::runtime_error {
 public:
  using runtime_error::runtime_error;
};

// The data ended before a field did; `needed_end` is the file offset the field needed.
class OutOfData : public std::runtime_error {
 public:
  explicit OutOfData(std::uint64_t needed_end)
      : runtime_error("out of data"), needed_end(needed_end) {}
  std::uint64_t needed_end;
};

std::string os_error(int error) { return std::generic_category().message(error); }

std::string hex64(std::uint64_t value) {
  std::array<char, 24> text{};
  std::snprintf(text.data(), text.size(), "0x%016" PRIx64, value);
  return text.data();
}

// A key quoted for an error message: binary keys must not garble the log line.
std::string printable(std::string_view key) {
  constexpr std::size_t kMaxShown = 64;
  std::string out = "\"";
  for (unsigned char c : key.substr(0, kMaxShown)) {
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
      out += static_cast<char>(c);
    } else {
      std::array<char, 8> escape{};
      std::snprintf(escape.data(), escape.size(), "\\x%02x", c);
      out += escape.data();
    }
  }
  out += key.size() > kMaxShown ? "\"..." : "\"";
  return out;
}

// Why a tensor cannot be stored, or "" when it is valid. Save and load share this check so that
// every snapshot save writes is one that load accepts.
std::string tensor_problem(DType dtype, std::span<const std::int64_t> shape,
                           std::uint64_t data_size, bool encoded) {
  if (shape.size() > kMaxTensorRank) {
    return "tensor rank " + std::to_string(shape.size()) + " exceeds the maximum of " +
           std::to_string(kMaxTensorRank);
  }
  std::uint64_t needed = dtype_size(dtype);
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] <= 0) {
      return "tensor dimension " + std::to_string(i) + " is " + std::to_string(shape[i]) +
             "; dimensions must be positive";
    }
    if (__builtin_mul_overflow(needed, static_cast<std::uint64_t>(shape[i]), &needed)) {
      return "tensor shape overflows 64 bits";
    }
  }
  if (needed != data_size && !encoded) {  // a frame's own size is checked by its header
    std::string dims;
    for (std::int64_t dim : shape) dims += (dims.empty() ? "" : ", ") + std::to_string(dim);
    return "tensor has " + std::to_string(data_size) + " data bytes but shape [" + dims + "] of " +
           std::string(dtype_name(dtype)) + " needs " + std::to_string(needed);
  }
  return "";
}

// An owned file descriptor.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd = -1) noexcept : fd_(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() { reset(); }
  int get() const noexcept { return fd_; }
  explicit operator bool() const noexcept { return fd_ >= 0; }
  void reset(int fd = -1) noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }
  /// Closes and reports the error: on NFS and some others, close() is where write errors show.
  void close_or_throw() {
    const int fd = std::exchange(fd_, -1);
    if (::close(fd) != 0) throw std::system_error(errno, std::generic_category(), "close");
  }

 private:
  int fd_;
};

// ---------------------------------------------------------------------------------------------
// Writing

// Little-endian encoding into a buffer, with the running checksum of everything written.
class SnapshotWriter {
 public:
  explicit SnapshotWriter(int fd) : fd_(fd), buffer_(Buffer::uninitialized(kIoBufferSize)) {}

  void bytes(const char* data, std::size_t size) {
    if (size == 0) return;  // an empty value may have no storage at all (data == nullptr)
    crc_ = crc64(crc_, {data, size});
    if (size >= kDirectIoThreshold) {
      flush();
      write_all(data, size);
    } else {
      if (used_ + size > kIoBufferSize) flush();
      std::memcpy(buffer_.data() + used_, data, size);
      used_ += size;
    }
  }
  void u8(std::uint8_t value) { bytes(reinterpret_cast<const char*>(&value), 1); }
  void u32(std::uint32_t value) { little_endian(value, 4); }
  void u64(std::uint64_t value) { little_endian(value, 8); }
  void blob(std::string_view data) {
    u64(data.size());
    bytes(data.data(), data.size());
  }
  /// Appends the checksum of everything written so far and flushes.
  void finish() {
    const std::uint64_t crc = crc_;
    u64(crc);
    flush();
  }
  std::uint64_t size() const noexcept { return flushed_ + used_; }

 private:
  void little_endian(std::uint64_t value, int width) {
    std::array<char, 8> encoded{};
    for (int i = 0; i < width; ++i) encoded[i] = static_cast<char>(value >> (8 * i));
    bytes(encoded.data(), static_cast<std::size_t>(width));
  }
  void flush() {
    write_all(buffer_.data(), used_);
    used_ = 0;
  }
  void write_all(const char* data, std::size_t size) {
    while (size > 0) {
      const ssize_t written = ::write(fd_, data, size);
      if (written < 0) {
        if (errno == EINTR) continue;
        throw std::system_error(errno, std::generic_category(), "write");
      }
      data += written;
      size -= static_cast<std::size_t>(written);
      flushed_ += static_cast<std::uint64_t>(written);
    }
  }

  int fd_;
  Buffer buffer_;
  std::size_t used_ = 0;
  std::uint64_t flushed_ = 0;
  std::uint64_t crc_ = 0;
};

void write_names(SnapshotWriter& out, const std::vector<std::string>& names) {
  out.u64(names.size());
  for (const auto& name : names) out.blob(name);
}

void write_entry(SnapshotWriter& out, std::string_view key, const Value& value) {
  switch (value.type()) {
    case ValueType::kString:
      out.u8(kTagString);
      out.blob(key);
      out.blob(value.string().view());
      return;
    case ValueType::kTensor: {
      const Tensor& tensor = value.tensor();
      out.u8(tensor.encoded ? kTagEncodedTensor : kTagTensor);
      out.blob(key);
      out.u8(static_cast<std::uint8_t>(tensor.dtype));
      out.u32(static_cast<std::uint32_t>(tensor.shape.size()));
      for (std::int64_t dim : tensor.shape) out.u64(static_cast<std::uint64_t>(dim));
      out.blob(tensor.data.view());
      return;
    }
    case ValueType::kHash:
      out.u8(kTagHash);
      out.blob(key);
      out.u64(value.hash().size());
      for (const auto& [field, field_value] : value.hash().entries()) {
        out.blob(field);
        out.blob(field_value);
      }
      return;
    case ValueType::kList: {
      const List& list = value.list();
      out.u8(kTagList);
      out.blob(key);
      out.u64(list.size());
      for (std::size_t i = 0; i < list.size(); ++i) out.blob(list.at(i));
      return;
    }
    case ValueType::kModel: {
      const ModelEntry& model = value.model();
      out.u8(kTagModel);
      out.blob(key);
      out.blob(model.backend);
      out.blob(model.device);
      out.blob(model.tag);
      out.u64(model.batching.batch_size);
      out.u64(model.batching.min_batch_size);
      out.u64(static_cast<std::uint64_t>(model.batching.min_batch_timeout.count()));
      write_names(out, model.inputs);
      write_names(out, model.outputs);
      out.u64(model.version);
      out.blob(model.blob.view());
      return;
    }
    case ValueType::kScript: {
      const ScriptEntry& script = value.script();
      out.u8(kTagScript);
      out.blob(key);
      out.blob(script.device);
      out.blob(script.tag);
      write_names(out, script.entry_points);
      out.u64(script.version);
      out.blob(script.source);
      return;
    }
  }
}

// The temporary file a save writes; removed on destruction unless renamed into place.
class TempFile {
 public:
  // Creates `<name>.tmp-<pid>-<n>` beside `target`. The name is unique per save, so concurrent
  // saves never write into each other's file, and O_EXCL never reuses a crashed save's leftovers.
  explicit TempFile(const fs::path& target) {
    static std::atomic<std::uint64_t> counter{0};
    int open_error = 0;
    for (int attempt = 0; attempt < 100; ++attempt) {
      path_ = target;
      path_ += ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
      // 0600: the snapshot holds every key, and the mode is kept by the rename.
      file_.reset(::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
      open_error = errno;
      if (file_ || open_error != EEXIST) break;
    }
    if (!file_) {
      throw SnapshotError("cannot write snapshot " + target.string() + ": cannot create " +
                          path_.string() + ": " + os_error(open_error));
    }
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    file_.reset();
    if (!renamed_) ::unlink(path_.c_str());
  }

  int fd() const noexcept { return file_.get(); }
  const fs::path& path() const noexcept { return path_; }
  void sync_and_close() {
    if (::fsync(file_.get()) != 0) throw std::system_error(errno, std::generic_category(), "fsync");
    file_.close_or_throw();
  }
  void rename_to(const fs::path& target) {
    if (::rename(path_.c_str(), target.c_str()) != 0) {
      throw SnapshotError("cannot write snapshot " + target.string() + ": cannot rename " +
                          path_.string() + " over it: " + os_error(errno));
    }
    renamed_ = true;
  }

 private:
  fs::path path_;
  FileDescriptor file_;
  bool renamed_ = false;
};

// Makes a rename in `directory` durable: until the directory itself is synced, a power loss may
// bring back the old entry (or none).
void sync_directory(const fs::path& directory, const fs::path& target) {
  FileDescriptor dir(::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir || ::fsync(dir.get()) != 0) {
    throw SnapshotError("snapshot " + target.string() + " was written but its directory " +
                        directory.string() + " could not be synced: " + os_error(errno));
  }
}

// ---------------------------------------------------------------------------------------------
// Reading

// Reads the byte range [begin, end) of a file through a buffer, little-endian. Every read is
// bounds-checked against `end` before anything is allocated for it, so a corrupt length can cost
// at most the file's size in memory, and running out throws OutOfData.
class FileReader {
 public:
  FileReader(int fd, std::uint64_t begin, std::uint64_t end) : fd_(fd), offset_(begin), end_(end) {}

  std::uint64_t offset() const noexcept { return offset_; }
  std::uint64_t remaining() const noexcept { return end_ - offset_; }
  /// Throws OutOfData unless `size` more bytes remain.
  void require(std::uint64_t size) const {
    if (size > remaining()) throw OutOfData(offset_ + size);
  }
  /// Throws OutOfData unless `count` items of at least `item_size` bytes can fit.
  void require_items(std::uint64_t count, std::uint64_t item_size) const {
    if (count > remaining() / item_size) throw OutOfData(end_ + 1);
  }

  void read(char* out, std::uint64_t size) {
    require(size);
    while (size > 0) {
      if (buffered() == 0) {
        if (size >= kDirectIoThreshold) {
          pread_all(out, size, offset_);
          offset_ += size;
          return;
        }
        fill();
      }
      const std::uint64_t chunk = std::min(size, buffered());
      std::memcpy(out, buffer_.data() + (offset_ - buffer_start_), chunk);
      out += chunk;
      size -= chunk;
      offset_ += chunk;
    }
  }
  void skip(std::uint64_t size) {
    require(size);
    offset_ += size;
  }
  std::uint8_t u8() { return static_cast<std::uint8_t>(little_endian(1)); }
  std::uint32_t u32() { return static_cast<std::uint32_t>(little_endian(4)); }
  std::uint64_t u64() { return little_endian(8); }

 private:
  std::uint64_t buffered() const noexcept {
    const std::uint64_t buffer_end = buffer_start_ + buffer_size_;
    return offset_ >= buffer_start_ && offset_ < buffer_end ? buffer_end - offset_ : 0;
  }
  void fill() {
    if (buffer_.empty()) buffer_ = Buffer::uninitialized(kIoBufferSize);  // direct reads need none
    buffer_start_ = offset_;
    buffer_size_ = std::min<std::uint64_t>(kIoBufferSize, remaining());
    pread_all(buffer_.data(), buffer_size_, offset_);
  }
  std::uint64_t little_endian(int width) {
    std::array<char, 8> encoded{};
    read(encoded.data(), static_cast<std::uint64_t>(width));
    std::uint64_t value = 0;
    for (int i = width - 1; i >= 0; --i)
      value = (value << 8) | static_cast<std::uint8_t>(encoded[i]);
    return value;
  }
  void pread_all(char* out, std::uint64_t size, std::uint64_t offset) {
    while (size > 0) {
      const ssize_t got = ::pread(fd_, out, size, static_cast<off_t>(offset));
      if (got < 0) {
        if (errno == EINTR) continue;
        throw std::system_error(errno, std::generic_category(), "read");
      }
      if (got == 0) throw OutOfData(offset + size);  // the file shrank while we read it
      out += got;
      size -= static_cast<std::uint64_t>(got);
      offset += static_cast<std::uint64_t>(got);
    }
  }

  int fd_;
  std::uint64_t offset_;
  std::uint64_t end_;
  Buffer buffer_;
  std::uint64_t buffer_start_ = 0;
  std::uint64_t buffer_size_ = 0;
};

struct LoadedEntry {
  std::string key;
  std::shared_ptr<Value> value;
};

// Reads a blob into `out`, or skips it when `out` is null.
void read_blob(FileReader& in, std::string* out) {
  const std::uint64_t size = in.u64();
  in.require(size);
  if (out == nullptr) {
    in.skip(size);
    return;
  }
  out->resize(size);
  in.read(out->data(), size);
}

std::shared_ptr<Value> read_string(FileReader& in, bool materialize) {
  const std::uint64_t size = in.u64();
  in.require(size);
  if (!materialize) {
    in.skip(size);
    return nullptr;
  }
  Buffer data = Buffer::uninitialized(size);
  in.read(data.data(), size);
  return std::make_shared<Value>(std::move(data));
}

std::shared_ptr<Value> read_tensor(FileReader& in, bool materialize, bool encoded) {
  const std::uint8_t code = in.u8();
  if (code >= kDTypeCount) throw FormatError("unknown tensor dtype code " + std::to_string(code));
  const std::uint32_t rank = in.u32();
  if (rank > kMaxTensorRank) {
    throw FormatError("tensor rank " + std::to_string(rank) + " exceeds the maximum of " +
                      std::to_string(kMaxTensorRank));
  }
  Tensor tensor;
  tensor.dtype = static_cast<DType>(code);
  tensor.shape.resize(rank);
  for (std::int64_t& dim : tensor.shape) dim = static_cast<std::int64_t>(in.u64());
  const std::uint64_t size = in.u64();
  if (std::string problem = tensor_problem(tensor.dtype, tensor.shape, size, encoded);
      !problem.empty()) {
    throw FormatError(problem);
  }
  in.require(size);
  if (!materialize) {
    in.skip(size);
    return nullptr;
  }
  tensor.data = Buffer::uninitialized(size);
  in.read(tensor.data.data(), size);
  tensor.encoded = encoded;
  if (encoded) {
    if (std::string problem =
            encoded_tensor_problem(tensor.dtype, tensor_element_bytes(tensor), tensor.data.view());
        !problem.empty()) {
      throw FormatError("encoded tensor: " + problem);
    }
  }
  return std::make_shared<Value>(std::move(tensor));
}

std::shared_ptr<Value> read_hash(FileReader& in, bool materialize) {
  const std::uint64_t count = in.u64();
  in.require_items(count, kMinHashFieldSize);
  Hash hash;
  // require_items has checked that the file holds `count` fields, so a forged count cannot make
  // this allocate more than the file's size warrants.
  if (materialize) hash.reserve(count);
  std::string field, value;
  for (std::uint64_t i = 0; i < count; ++i) {
    read_blob(in, materialize ? &field : nullptr);
    read_blob(in, materialize ? &value : nullptr);
    if (materialize && !hash.set(field, value)) {
      throw FormatError("hash field " + printable(field) + " appears twice");
    }
  }
  return materialize ? std::make_shared<Value>(std::move(hash)) : nullptr;
}

std::shared_ptr<Value> read_list(FileReader& in, bool materialize) {
  const std::uint64_t count = in.u64();
  in.require_items(count, kMinListItemSize);
  List list;
  for (std::uint64_t i = 0; i < count; ++i) {
    std::string item;
    read_blob(in, materialize ? &item : nullptr);
    if (materialize) list.push_back(std::move(item));
  }
  return materialize ? std::make_shared<Value>(std::move(list)) : nullptr;
}

std::vector<std::string> read_names(FileReader& in, bool materialize) {
  const std::uint64_t count = in.u64();
  in.require_items(count, kMinListItemSize);
  std::vector<std::string> names(materialize ? count : 0);
  for (std::uint64_t i = 0; i < count; ++i) read_blob(in, materialize ? &names[i] : nullptr);
  return names;
}

// Models and scripts come back without a runtime: the server compiles them after loading (the
// snapshot code knows no ML backend).
std::shared_ptr<Value> read_model(FileReader& in, bool materialize) {
  ModelEntry model;
  read_blob(in, materialize ? &model.backend : nullptr);
  read_blob(in, materialize ? &model.device : nullptr);
  read_blob(in, materialize ? &model.tag : nullptr);
  model.batching.batch_size = in.u64();
  model.batching.min_batch_size = in.u64();
  model.batching.min_batch_timeout = std::chrono::milliseconds(in.u64());
  model.inputs = read_names(in, materialize);
  model.outputs = read_names(in, materialize);
  model.version = in.u64();
  const std::uint64_t size = in.u64();
  in.require(size);
  if (!materialize) {
    in.skip(size);
    return nullptr;
  }
  model.blob = Buffer::uninitialized(size);
  in.read(model.blob.data(), size);
  model.load_error = "not loaded yet";
  return std::make_shared<Value>(std::move(model));
}

std::shared_ptr<Value> read_script(FileReader& in, bool materialize) {
  ScriptEntry script;
  read_blob(in, materialize ? &script.device : nullptr);
  read_blob(in, materialize ? &script.tag : nullptr);
  script.entry_points = read_names(in, materialize);
  script.version = in.u64();
  read_blob(in, materialize ? &script.source : nullptr);
  if (!materialize) return nullptr;
  script.load_error = "not loaded yet";
  return std::make_shared<Value>(std::move(script));
}

// Reads the entries that follow the header's magic and version. With `materialize` false, only
// walks the structure (no allocation): used to tell a truncated file from a corrupt one.
std::vector<LoadedEntry> read_entries(FileReader& in, bool materialize) {
  const std::uint64_t count = in.u64();
  in.require_items(count, kMinEntrySize);
  std::vector<LoadedEntry> entries;
  if (materialize) entries.reserve(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::uint64_t start = in.offset();
    LoadedEntry entry;
    try {
      const std::uint8_t tag = in.u8();
      read_blob(in, materialize ? &entry.key : nullptr);
      switch (tag) {
        case kTagString:
          entry.value = read_string(in, materialize);
          break;
        case kTagTensor:
          entry.value = read_tensor(in, materialize, false);
          break;
        case kTagEncodedTensor:
          entry.value = read_tensor(in, materialize, true);
          break;
        case kTagHash:
          entry.value = read_hash(in, materialize);
          break;
        case kTagList:
          entry.value = read_list(in, materialize);
          break;
        case kTagModel:
          entry.value = read_model(in, materialize);
          break;
        case kTagScript:
          entry.value = read_script(in, materialize);
          break;
        default:
          throw FormatError("unknown value type tag " + std::to_string(tag));
      }
    } catch (const FormatError& error) {
      throw FormatError("entry " + std::to_string(i) + " (key " + printable(entry.key) +
                        " at byte " + std::to_string(start) + "): " + error.what());
    }
    if (materialize) entries.push_back(std::move(entry));
  }
  if (in.remaining() != 0) {
    throw FormatError(std::to_string(in.remaining()) + " unexpected bytes after the last of " +
                      std::to_string(count) + " entries");
  }
  return entries;
}

// Refuses a file that is not a slipstream snapshot of this version, before reading the rest.
void check_header(int fd, std::uint64_t file_size, const std::string& name) {
  std::array<char, 12> header{};
  const std::uint64_t available = std::min<std::uint64_t>(file_size, header.size());
  FileReader(fd, 0, available).read(header.data(), available);
  const std::size_t magic_seen = std::min<std::size_t>(available, kMagic.size());
  if (std::string_view(header.data(), magic_seen) != kMagic.substr(0, magic_seen)) {
    throw SnapshotError(name + " is not a slipstream snapshot (it does not start with \"" +
                        std::string(kMagic) + "\")");
  }
  const std::string truncated =
      name + " is truncated: " + std::to_string(file_size) + " bytes, shorter than the " +
      std::to_string(kHeaderSize + kTrailerSize) + "-byte header and checksum";
  if (available < header.size()) throw SnapshotError(truncated);
  std::uint32_t version = 0;
  for (int i = 3; i >= 0; --i) version = (version << 8) | static_cast<std::uint8_t>(header[8 + i]);
  if (version != kSnapshotFormatVersion) {
    throw SnapshotError(name + " was written by format version " + std::to_string(version) +
                        "; this server reads version " + std::to_string(kSnapshotFormatVersion));
  }
  if (file_size < kHeaderSize + kTrailerSize) throw SnapshotError(truncated);
}

// Compares the trailer with the CRC-64 of everything before it. On a mismatch, walks the
// structure to say whether the file was cut short (a copy interrupted, a full disk) or damaged.
void verify_checksum(int fd, std::uint64_t file_size, const std::string& name) {
  const std::uint64_t body_size = file_size - kTrailerSize;
  FileReader in(fd, 0, file_size);
  Buffer chunk = Buffer::uninitialized(kIoBufferSize);
  std::uint64_t computed = 0;
  while (in.offset() < body_size) {
    const std::uint64_t size = std::min<std::uint64_t>(kIoBufferSize, body_size - in.offset());
    in.read(chunk.data(), size);
    computed = crc64(computed, {chunk.data(), size});
  }
  const std::uint64_t stored = in.u64();
  if (computed == stored) return;

  const std::string mismatch =
      "checksum mismatch (expected " + hex64(stored) + ", found " + hex64(computed) + ")";
  try {
    FileReader walk(fd, kMagic.size() + 4, body_size);
    read_entries(walk, /*materialize=*/false);
  } catch (const OutOfData& out_of_data) {
    const std::uint64_t needed = std::max(out_of_data.needed_end + kTrailerSize, file_size + 1);
    throw SnapshotError(name + " is truncated: it has " + std::to_string(file_size) +
                        " bytes but its entries need at least " + std::to_string(needed) + "; " +
                        mismatch);
  } catch (const FormatError&) {
    // Damaged structure: the checksum is the message that matters.
  }
  throw SnapshotError(name + " is corrupt: " + mismatch);
}

}  // namespace

SnapshotStats save_snapshot(const Keyspace& keyspace, const fs::path& path) {
  const std::string name = path.string();
  if (path.filename().empty()) {
    throw SnapshotError("cannot write snapshot " + name + ": the path names no file");
  }
  // References only: values are immutable to their holders, so they are written without locks.
  std::vector<std::pair<std::string, ValuePtr>> entries;
  keyspace.for_each(
      [&](const std::string& key, const ValuePtr& value) { entries.emplace_back(key, value); });
  for (const auto& [key, value] : entries) {
    if (value->type() != ValueType::kTensor) continue;
    const Tensor& tensor = value->tensor();
    if (std::string problem =
            tensor_problem(tensor.dtype, tensor.shape, tensor.data.size(), tensor.encoded);
        !problem.empty()) {
      throw SnapshotError("cannot write snapshot " + name + ": key " + printable(key) + ": " +
                          problem);
    }
  }

  TempFile temp(path);
  SnapshotStats stats;
  stats.keys = entries.size();
  try {
    SnapshotWriter out(temp.fd());
    out.bytes(kMagic.data(), kMagic.size());
    out.u32(kSnapshotFormatVersion);
    out.u64(entries.size());
    for (const auto& [key, value] : entries) write_entry(out, key, *value);
    out.finish();
    stats.bytes = out.size();
    temp.sync_and_close();
  } catch (const std::system_error& error) {
    throw SnapshotError("cannot write snapshot " + name + " (temporary file " +
                        temp.path().string() + "): " + error.what());
  }
  temp.rename_to(path);
  const fs::path directory = path.parent_path();
  sync_directory(directory.empty() ? fs::path(".") : directory, path);
  return stats;
}

std::size_t remove_stale_temp_files(const fs::path& path) {
  const std::string prefix = path.filename().string() + ".tmp-";
  const fs::path directory = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  auto all_digits = [](std::string_view text) {
    return !text.empty() &&
           std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  std::error_code error;
  std::size_t removed = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(directory, error)) {
    const std::string name = entry.path().filename().string();
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    // Only our own pattern, "<pid>-<n>": anything else in the directory is not ours to delete.
    const std::string_view suffix = std::string_view(name).substr(prefix.size());
    const std::size_t dash = suffix.find('-');
    if (dash == std::string_view::npos || dash > 9 || !all_digits(suffix.substr(0, dash)) ||
        !all_digits(suffix.substr(dash + 1))) {
      continue;
    }
    std::error_code status_error;
    if (!entry.is_regular_file(status_error) || entry.is_symlink(status_error)) continue;
    // A live process other than us may be saving into it (two servers sharing a directory is a
    // misconfiguration, but not one to make worse). Our own pid can only be a previous life's:
    // containers reuse the same small pids across restarts.
    const pid_t pid = static_cast<pid_t>(std::stol(std::string(suffix.substr(0, dash))));
    if (pid != ::getpid() && pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM)) continue;
    if (::unlink(entry.path().c_str()) == 0) ++removed;
  }
  return removed;
}

SnapshotStats load_snapshot(Keyspace& keyspace, const fs::path& path) {
  const std::string name = path.string();
  FileDescriptor file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!file) throw SnapshotError("cannot open snapshot " + name + ": " + os_error(errno));
  struct stat info {};
  if (::fstat(file.get(), &info) != 0) {
    throw SnapshotError("cannot read snapshot " + name + ": " + os_error(errno));
  }
  if (!S_ISREG(info.st_mode)) throw SnapshotError(name + " is not a regular file");
  const auto file_size = static_cast<std::uint64_t>(info.st_size);

  std::vector<LoadedEntry> entries;
  try {
    check_header(file.get(), file_size, name);
    verify_checksum(file.get(), file_size, name);
    // The checksum matched, so a structural problem below means a faulty writer, not bad media.
    FileReader in(file.get(), kMagic.size() + 4, file_size - kTrailerSize);
    entries = read_entries(in, /*materialize=*/true);
  } catch (const FormatError& error) {
    throw SnapshotError(name + " is corrupt: " + error.what());
  } catch (const OutOfData& error) {
    throw SnapshotError(name + " is corrupt: an entry needs data up to byte " +
                        std::to_string(error.needed_end) + " but the entries end at byte " +
                        std::to_string(file_size - kTrailerSize));
  } catch (const std::system_error& error) {
    throw SnapshotError("cannot read snapshot " + name + ": " + error.what());
  }

  for (auto& entry : entries) keyspace.set(entry.key, std::move(entry.value));
  return SnapshotStats{entries.size(), static_cast<std::size_t>(file_size)};
}

}  // namespace slipstream::server
