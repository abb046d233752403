// Framed messages between the server and its model workers; see channel.hpp.
#include "ml/sandbox/channel.hpp"

#include <fcntl.h>

#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <utility>

#include "common/sealed_file.hpp"

namespace slipstream::ml::sandbox {
namespace {

struct FrameHeader {
  std::uint32_t magic;
  std::uint32_t type;
  std::uint64_t length;
};

// Milliseconds until `deadline` for poll(): -1 for none, 0 once passed.
int poll_timeout(Deadline deadline) {
  if (deadline == kNoDeadline) return -1;
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  if (left.count() <= 0) return 0;
  return static_cast<int>(std::min<std::int64_t>(left.count() + 1, 1 << 30));
}

// Waits until `fd` is ready for `events`; kNone when it is.
ChannelError wait_ready(int fd, short events, Deadline deadline) {
  while (true) {
    pollfd p{fd, events, 0};
    const int timeout = poll_timeout(deadline);
    const int n = ::poll(&p, 1, timeout);
    if (n > 0) return ChannelError::kNone;  // readable, writable, or hung up: the I/O says which
    if (n == 0) {
      if (timeout != 0 && std::chrono::steady_clock::now() < deadline) continue;
      return ChannelError::kTimedOut;
    }
    if (errno != EINTR) return ChannelError::kIo;
  }
}

bool valid_dtype(std::uint8_t value) { return value <= static_cast<std::uint8_t>(DType::kUInt64); }

}  // namespace

std::string_view channel_error_text(ChannelError error) {
  switch (error) {
    case ChannelError::kNone: return "no error";
    case ChannelError::kClosed: return "the peer closed the connection";
    case ChannelError::kTimedOut: return "timed out";
    case ChannelError::kIo: return "I/O error";
    case ChannelError::kProtocol: return "malformed message";
    case ChannelError::kTooLarge: return "too large";
  }
  return "unknown error";
}

// ---- MessageWriter ------------------------------------------------------------------------------

MessageWriter::MessageWriter(MessageType type) : type_(static_cast<std::uint32_t>(type)) {
  small_.reserve(256);
}

void MessageWriter::reference(const void* data, std::size_t size) {
  if (size == 0) return;
  splices_.push_back({small_.size(), static_cast<const char*>(data), size});
}

void MessageWriter::str(std::string_view text) {
  u32(static_cast<std::uint32_t>(text.size()));
  small_.append(text);
}

void MessageWriter::strs(std::span<const std::string> texts) {
  u32(static_cast<std::uint32_t>(texts.size()));
  for (const auto& text : texts) str(text);
}

void MessageWriter::str_ref(std::string_view bytes) {
  u32(static_cast<std::uint32_t>(bytes.size()));
  reference(bytes.data(), bytes.size());
}

namespace {

// `file_of(t)`: the descriptor and offset a tensor goes by, or {-1, 0} for inline.
// A new memory file (sealable) holding `bytes`, or -1 when the kernel refuses one.
int file_holding(std::string_view bytes) {
  const int file = ::memfd_create("slipstream-output", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (file < 0) return -1;
  std::size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::pwrite(file, bytes.data() + written, bytes.size() - written,
                               static_cast<off_t>(written));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(file);
      return -1;
    }
    written += static_cast<std::size_t>(n);
  }
  return file;
}

template <typename Tensor, typename ShapeOf, typename BytesOf, typename FileOf>
void write_tensor_list(MessageWriter& w, std::span<const Tensor> tensors, ShapeOf shape_of,
                       BytesOf bytes_of, FileOf file_of, std::string& metadata) {
  metadata.clear();
  auto put = [&metadata](const void* data, std::size_t size) {
    metadata.append(static_cast<const char*>(data), size);
  };
  const auto count = static_cast<std::uint32_t>(tensors.size());
  put(&count, sizeof count);
  for (const Tensor& t : tensors) {
    const auto dtype = static_cast<std::uint8_t>(t.dtype);
    const auto shape = shape_of(t);
    const auto rank = static_cast<std::uint32_t>(shape.size());
    const std::uint64_t bytes = bytes_of(t).size();
    put(&dtype, sizeof dtype);
    put(&rank, sizeof rank);
    for (const std::int64_t dim : shape) put(&dim, sizeof dim);
    put(&bytes, sizeof bytes);
    const auto [file, offset] = file_of(t);
    const auto place = static_cast<std::uint8_t>(file >= 0 ? TensorPlace::kInFile
                                                           : TensorPlace::kInline);
    put(&place, sizeof place);
    if (file >= 0) put(&offset, sizeof offset);
  }
  w.u64(metadata.size());
  w.copy(metadata);
}

}  // namespace

void MessageWriter::tensors(std::span<const TensorView> list, bool share_files) {
  std::string metadata;
  std::vector<bool> shared(list.size(), false);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const TensorView& t = list[i];
    shared[i] = share_files && t.file >= 0 && t.bytes >= kShareFromBytes &&
                descriptors_.size() < kMaxDescriptors;
    if (shared[i]) {
      descriptors_.push_back(t.file);
      shared_bytes_ += t.bytes;
    }
  }
  std::size_t next = 0;
  write_tensor_list(
      *this, list, [](const TensorView& t) { return t.shape; },
      [](const TensorView& t) {
        return std::string_view(static_cast<const char*>(t.data), t.bytes);
      },
      [&](const TensorView& t) {
        return shared[next++] ? std::pair<int, std::uint64_t>{t.file, t.file_offset}
                              : std::pair<int, std::uint64_t>{-1, 0};
      },
      metadata);
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (!shared[i]) reference(list[i].data, list[i].bytes);
  }
}

void MessageWriter::tensors(std::span<const OwnedTensor> list, bool in_files) {
  std::string metadata;
  std::vector<int> files(list.size(), -1);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const Buffer& data = list[i].data;
    if (!in_files || data.size() < kShareFromBytes || descriptors_.size() >= kMaxDescriptors) {
      continue;
    }
    files[i] = file_holding(data.view());
    if (files[i] < 0) continue;  // inline after all
    owned_.push_back(files[i]);
    descriptors_.push_back(files[i]);
    shared_bytes_ += data.size();
  }
  std::size_t next = 0;
  write_tensor_list(
      *this, list,
      [](const OwnedTensor& t) { return std::span<const std::int64_t>(t.shape); },
      [](const OwnedTensor& t) { return t.data.view(); },
      [&](const OwnedTensor&) { return std::pair<int, std::uint64_t>{files[next++], 0}; },
      metadata);
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (files[i] < 0) reference(list[i].data.data(), list[i].data.size());
  }
}

MessageWriter::~MessageWriter() {
  for (int file : owned_) ::close(file);
}

bool MessageWriter::frame_into(std::string& out, std::size_t limit) const {
  std::uint64_t length = small_.size();
  for (const Splice& s : splices_) length += s.size;
  const FrameHeader header{kMagic, type_, length};
  if (!descriptors_.empty() || sizeof header + length > limit) return false;
  out.clear();
  out.reserve(sizeof header + length);
  out.append(reinterpret_cast<const char*>(&header), sizeof header);
  std::size_t small_done = 0;
  for (const Splice& s : splices_) {
    out.append(small_.data() + small_done, s.small_offset - small_done);
    small_done = s.small_offset;
    out.append(s.data, s.size);
  }
  out.append(small_.data() + small_done, small_.size() - small_done);
  return true;
}

ChannelError MessageWriter::send(int fd, Deadline deadline) {
  std::uint64_t length = small_.size();
  for (const Splice& s : splices_) length += s.size;
  const FrameHeader header{kMagic, type_, length};

  // The pieces in order: header, then small_ cut at each splice point with the referenced range
  // in between.
  std::vector<iovec> pieces;
  pieces.reserve(2 * splices_.size() + 2);
  pieces.push_back({const_cast<FrameHeader*>(&header), sizeof header});
  std::size_t small_done = 0;
  for (const Splice& s : splices_) {
    if (s.small_offset > small_done) {
      pieces.push_back({small_.data() + small_done, s.small_offset - small_done});
      small_done = s.small_offset;
    }
    pieces.push_back({const_cast<char*>(s.data), s.size});
  }
  if (small_.size() > small_done) {
    pieces.push_back({small_.data() + small_done, small_.size() - small_done});
  }

  // The descriptors go with the first bytes sent (SCM_RIGHTS), so they arrive with the header.
  std::vector<char> control;
  if (!descriptors_.empty()) {
    control.assign(CMSG_SPACE(descriptors_.size() * sizeof(int)), 0);
  }
  std::size_t first = 0;
  bool descriptors_sent = descriptors_.empty();
  while (first < pieces.size()) {
    const int batch = static_cast<int>(std::min<std::size_t>(pieces.size() - first, IOV_MAX));
    msghdr message{};
    message.msg_iov = pieces.data() + first;
    message.msg_iovlen = static_cast<std::size_t>(batch);
    if (!descriptors_sent) {
      message.msg_control = control.data();
      message.msg_controllen = control.size();
      cmsghdr* header_of_rights = CMSG_FIRSTHDR(&message);
      header_of_rights->cmsg_level = SOL_SOCKET;
      header_of_rights->cmsg_type = SCM_RIGHTS;
      header_of_rights->cmsg_len = CMSG_LEN(descriptors_.size() * sizeof(int));
      std::memcpy(CMSG_DATA(header_of_rights), descriptors_.data(),
                  descriptors_.size() * sizeof(int));
    }
    const ssize_t n = ::sendmsg(fd, &message, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        if (ChannelError e = wait_ready(fd, POLLOUT, deadline); e != ChannelError::kNone) return e;
        continue;
      }
      return errno == EPIPE || errno == ECONNRESET ? ChannelError::kClosed : ChannelError::kIo;
    }
    descriptors_sent = true;
    auto written = static_cast<std::size_t>(n);
    while (first < pieces.size() && written >= pieces[first].iov_len) {
      written -= pieces[first].iov_len;
      ++first;
    }
    if (written > 0) {
      pieces[first].iov_base = static_cast<char*>(pieces[first].iov_base) + written;
      pieces[first].iov_len -= written;
    }
  }
  return ChannelError::kNone;
}

// ---- MessageReader ------------------------------------------------------------------------------

MessageReader::~MessageReader() { close_files(); }

bool MessageReader::feed(std::string_view frame) {
  if (begin_ != end_ || body_left_ != 0 || frame.size() > buffer_.size()) return false;
  close_files();  // a frame from a block passes none
  std::memcpy(buffer_.data(), frame.data(), frame.size());
  begin_ = 0;
  end_ = frame.size();
  return true;
}

int MessageReader::take_file() {
  if (files_used_ >= files_.size()) return -1;
  return std::exchange(files_[files_used_++], -1);
}

void MessageReader::close_files() noexcept {
  for (int file : files_) {
    if (file >= 0) ::close(file);
  }
  files_.clear();
  files_used_ = 0;
}

ssize_t MessageReader::receive(char* into, std::size_t size) {
  alignas(cmsghdr) char control[CMSG_SPACE(kMaxDescriptors * sizeof(int))];
  iovec piece{into, size};
  msghdr message{};
  message.msg_iov = &piece;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof control;
  const ssize_t n = ::recvmsg(fd_, &message, MSG_CMSG_CLOEXEC);
  if (n < 0) return n;
  if ((message.msg_flags & MSG_CTRUNC) != 0) too_many_files_ = true;
  for (cmsghdr* c = CMSG_FIRSTHDR(&message); c != nullptr; c = CMSG_NXTHDR(&message, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (std::size_t i = 0; i < count; ++i) {
      int file = -1;
      std::memcpy(&file, CMSG_DATA(c) + i * sizeof(int), sizeof file);
      const bool accept = file_use_ != FileUse::kRefuse;
      if (accept && files_.size() < kMaxDescriptors) {
        files_.push_back(file);
      } else {
        ::close(file);
        if (accept) too_many_files_ = true;
      }
    }
  }
  return n;
}

ChannelError MessageReader::map_file(std::uint64_t offset, std::uint64_t bytes, Buffer& out) {
  if (file_use_ == FileUse::kRefuse) {
    return protocol("a tensor passed by descriptor where none may be");
  }
  if (files_used_ >= files_.size()) return protocol("a tensor's descriptor is missing");
  const int file = files_[files_used_++];
  struct stat about {};
  if (::fstat(file, &about) != 0 || !S_ISREG(about.st_mode)) {
    return protocol("a tensor's descriptor is not a memory file");
  }
  std::uint64_t end = 0;
  if (__builtin_add_overflow(offset, bytes, &end) ||
      end > static_cast<std::uint64_t>(about.st_size)) {
    return protocol("a tensor's bytes lie outside its file");
  }
  if (bytes == 0) return protocol("an empty tensor passed by descriptor");
  if (file_use_ == FileUse::kSealAndMap) {
    // A worker's file becomes a stored value: exactly the tensor's bytes, and sealed here against
    // every change (which the kernel refuses while the worker still maps it writable) before
    // anything is read from it.
    if (offset != 0 || end != static_cast<std::uint64_t>(about.st_size)) {
      return protocol("a tensor's file holds more than its bytes");
    }
    constexpr int kAllSeals = F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;
    if (::fcntl(file, F_ADD_SEALS, kAllSeals) != 0 ||
        (::fcntl(file, F_GET_SEALS) & kAllSeals) != kAllSeals) {
      return protocol(std::string("a tensor's file cannot be sealed: ") + std::strerror(errno));
    }
    void* mapping = ::mmap(nullptr, static_cast<std::size_t>(bytes), PROT_READ, MAP_SHARED, file, 0);
    if (mapping == MAP_FAILED) {
      return protocol(std::string("cannot map a tensor's file: ") + std::strerror(errno));
    }
    files_[files_used_ - 1] = -1;  // now the buffer's
    out = Buffer::adopt(static_cast<char*>(mapping), static_cast<std::size_t>(bytes),
                        std::make_unique<SealedFile>(file, mapping, static_cast<std::size_t>(bytes)));
    return ChannelError::kNone;
  }
  const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  const std::uint64_t start = offset / page * page;
  const std::size_t length = static_cast<std::size_t>(end - start);
  // Private: a model writing into its input gets its own copies of those pages. Mapped
  // read-only first, with every page mapped at once (one call instead of a fault per page;
  // writable, the pages would be copied as they are mapped), then made writable.
  void* mapping = ::mmap(nullptr, length, PROT_READ, MAP_PRIVATE | MAP_POPULATE, file,
                         static_cast<off_t>(start));
  if (mapping == MAP_FAILED) {
    return protocol(std::string("cannot map a tensor's file: ") + std::strerror(errno));
  }
  if (::mprotect(mapping, length, PROT_READ | PROT_WRITE) != 0) {
    const int error = errno;
    ::munmap(mapping, length);
    return protocol(std::string("cannot map a tensor's file writable: ") + std::strerror(error));
  }
  // The mapping keeps the file: its descriptor is not needed any more.
  ::close(file);
  files_[files_used_ - 1] = -1;
  class Mapping final : public BufferStorage {
   public:
    Mapping(void* at, std::size_t length) : at_(at), length_(length) {}
    ~Mapping() override { ::munmap(at_, length_); }

   private:
    void* at_;
    std::size_t length_;
  };
  out = Buffer::adopt(static_cast<char*>(mapping) + (offset - start), static_cast<std::size_t>(bytes),
                      std::make_unique<Mapping>(mapping, length));
  return ChannelError::kNone;
}

ChannelError MessageReader::protocol(std::string text) {
  problem_ = std::move(text);
  return ChannelError::kProtocol;
}

ChannelError MessageReader::fill(void* out, std::size_t size) {
  char* dest = static_cast<char*>(out);
  while (size > 0) {
    if (begin_ < end_) {
      const std::size_t take = std::min(size, end_ - begin_);
      std::memcpy(dest, buffer_.data() + begin_, take);
      begin_ += take;
      dest += take;
      size -= take;
      continue;
    }
    // Large reads skip the buffer: a tensor's bytes land in their final place.
    const bool direct = size >= buffer_.size() / 2;
    char* target = direct ? dest : buffer_.data();
    const std::size_t room = direct ? size : buffer_.size();
    const ssize_t n = receive(target, room);
    if (n > 0) {
      if (direct) {
        dest += n;
        size -= static_cast<std::size_t>(n);
      } else {
        begin_ = 0;
        end_ = static_cast<std::size_t>(n);
      }
      continue;
    }
    if (n == 0) return ChannelError::kClosed;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (ChannelError e = wait_ready(fd_, POLLIN, deadline_); e != ChannelError::kNone) return e;
      continue;
    }
    return errno == ECONNRESET ? ChannelError::kClosed : ChannelError::kIo;
  }
  return ChannelError::kNone;
}

ChannelError MessageReader::exact(void* out, std::size_t size) {
  if (size > body_left_) return protocol("a message is shorter than its fields");
  body_left_ -= size;
  return fill(out, size);
}

ChannelError MessageReader::next(Deadline deadline, MessageType& type, std::uint64_t& length) {
  deadline_ = deadline;
  if (body_left_ > 0) {
    if (ChannelError e = skip_rest(); e != ChannelError::kNone) return e;
  }
  // Descriptors come with a frame's first bytes: those of an earlier frame that it did not use
  // are closed (requests and replies alternate, so nothing of a later frame is read yet).
  if (begin_ == end_) close_files();
  FrameHeader header{};
  if (ChannelError e = fill(&header, sizeof header); e != ChannelError::kNone) return e;
  if (too_many_files_) return protocol("more descriptors than a message may carry");
  if (header.magic != kMagic) return protocol("bad frame magic");
  type = static_cast<MessageType>(header.type);
  length = header.length;
  body_left_ = header.length;
  return ChannelError::kNone;
}

ChannelError MessageReader::str(std::string& text) {
  std::uint32_t size = 0;
  if (ChannelError e = u32(size); e != ChannelError::kNone) return e;
  if (size > body_left_) return protocol("a string is longer than its message");
  text.resize(size);
  return exact(text.data(), size);
}

ChannelError MessageReader::strs(std::vector<std::string>& texts) {
  std::uint32_t count = 0;
  if (ChannelError e = u32(count); e != ChannelError::kNone) return e;
  if (count > body_left_ / sizeof(std::uint32_t)) return protocol("too many strings");
  texts.resize(count);
  for (auto& text : texts) {
    if (ChannelError e = str(text); e != ChannelError::kNone) return e;
  }
  return ChannelError::kNone;
}

ChannelError MessageReader::bytes(Buffer& out) {
  std::uint32_t size = 0;
  if (ChannelError e = u32(size); e != ChannelError::kNone) return e;
  if (size > body_left_) return protocol("a byte string is longer than its message");
  out = Buffer::uninitialized(size);
  return exact(out.data(), size);
}

ChannelError MessageReader::tensors(std::vector<OwnedTensor>& out, std::uint64_t max_payload) {
  out.clear();
  std::uint64_t metadata_bytes = 0;
  if (ChannelError e = u64(metadata_bytes); e != ChannelError::kNone) return e;
  if (metadata_bytes > kMaxMetadataBytes || metadata_bytes > body_left_) {
    return protocol("tensor metadata too long");
  }
  const std::uint64_t after_metadata = body_left_ - metadata_bytes;
  std::uint32_t count = 0;
  if (ChannelError e = u32(count); e != ChannelError::kNone) return e;
  if (count > kMaxTensors) return protocol("too many tensors");
  std::vector<std::uint64_t> sizes(count);
  std::vector<std::optional<std::uint64_t>> in_file(count);  // a passed file's offset
  out.resize(count);
  std::uint64_t payload = 0, in_files = 0;  // bytes in the message, and in passed files
  for (std::uint32_t i = 0; i < count; ++i) {
    std::uint8_t dtype = 0;
    std::uint32_t rank = 0;
    if (ChannelError e = u8(dtype); e != ChannelError::kNone) return e;
    if (ChannelError e = u32(rank); e != ChannelError::kNone) return e;
    if (!valid_dtype(dtype)) return protocol("unknown dtype " + std::to_string(dtype));
    if (rank > kMaxRank) return protocol("tensor rank above " + std::to_string(kMaxRank));
    out[i].dtype = static_cast<DType>(dtype);
    out[i].shape.resize(rank);
    std::uint64_t elements = 1;
    for (auto& dim : out[i].shape) {
      if (ChannelError e = exact(&dim, sizeof dim); e != ChannelError::kNone) return e;
      if (dim < 0 || __builtin_mul_overflow(elements, static_cast<std::uint64_t>(dim), &elements)) {
        return protocol("invalid tensor shape");
      }
    }
    if (ChannelError e = u64(sizes[i]); e != ChannelError::kNone) return e;
    std::uint64_t expected = 0;
    if (__builtin_mul_overflow(elements, dtype_size(out[i].dtype), &expected) ||
        expected != sizes[i]) {
      return protocol("a tensor's byte count does not match its shape");
    }
    std::uint8_t place = 0;
    if (ChannelError e = u8(place); e != ChannelError::kNone) return e;
    if (place == static_cast<std::uint8_t>(TensorPlace::kInFile)) {
      std::uint64_t offset = 0;
      if (ChannelError e = u64(offset); e != ChannelError::kNone) return e;
      in_file[i] = offset;
      if (__builtin_add_overflow(in_files, sizes[i], &in_files)) {
        return protocol("tensors too large");
      }
      continue;  // not in the message
    }
    if (place != static_cast<std::uint8_t>(TensorPlace::kInline)) {
      return protocol("unknown tensor place " + std::to_string(place));
    }
    if (__builtin_add_overflow(payload, sizes[i], &payload)) return protocol("tensors too large");
  }
  if (body_left_ != after_metadata) return protocol("tensor metadata length mismatch");
  if (payload > body_left_) return protocol("tensor bytes missing from the message");
  std::uint64_t total = 0;
  if (__builtin_add_overflow(payload, in_files, &total)) return protocol("tensors too large");
  if (total > max_payload) {
    problem_ = "its outputs hold " + std::to_string(total) + " bytes, more than the " +
               std::to_string(max_payload) + " bytes maxmemory leaves free";
    return ChannelError::kTooLarge;
  }
  for (std::uint32_t i = 0; i < count; ++i) {
    if (in_file[i]) {
      if (ChannelError e = map_file(*in_file[i], sizes[i], out[i].data); e != ChannelError::kNone) {
        return e;
      }
      continue;
    }
    out[i].data = Buffer::uninitialized(sizes[i]);
    if (ChannelError e = exact(out[i].data.data(), sizes[i]); e != ChannelError::kNone) return e;
  }
  return ChannelError::kNone;
}

ChannelError MessageReader::skip_rest() {
  char scratch[4096];
  while (body_left_ > 0) {
    const std::size_t take = std::min<std::uint64_t>(body_left_, sizeof scratch);
    if (ChannelError e = exact(scratch, take); e != ChannelError::kNone) return e;
  }
  return ChannelError::kNone;
}

}  // namespace slipstream::ml::sandbox
