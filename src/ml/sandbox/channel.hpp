// The byte protocol between the server and its model worker processes (sandbox_backend.hpp): one
// Unix stream socket per worker, framed messages, tensors sent as a metadata block followed by
// their bytes so each side reads a tensor's payload straight into the buffer that keeps it.
//
// Frame: u32 magic, u32 type, u64 body length, then the body. Integers are little-endian host
// order (both ends are the same binary on the same machine). Strings are u32 length + bytes.
// A tensor list is: u64 metadata length; metadata (u32 count; per tensor u8 dtype, u32 rank,
// i64 dims[rank], u64 bytes, u8 place, and for place kInFile u64 offset); then the bytes of each
// tensor whose place is kInline, in order.
//
// Large tensors may go by descriptor instead (place kInFile): the frame's first bytes carry the
// descriptors (SCM_RIGHTS), one per such tensor in order.
// - Inputs the server holds in sealed memory files (shared-memory segments): the worker maps each
//   one privately (copy-on-write), so its bytes are never copied and an in-place operator
//   changes the worker's pages, never the stored ones (FileUse::kMapPrivate).
// - Outputs, when the run request allows it: the worker writes each into a memory file of its
//   own and passes it; the server seals it against every change before mapping it read-only
//   (FileUse::kSealAndMap), so the worker cannot alter what is stored, and the file becomes the
//   stored value's shared-memory segment instead of being copied twice more.
// A reader that expects none (FileUse::kRefuse) finds a kInFile tensor malformed and closes
// anything passed.
//
// Every read and write on the server's side has a deadline: a worker that hangs or stops reading
// costs the caller a timeout, never a stuck thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/buffer.hpp"
#include "ml/backend.hpp"

namespace slipstream::ml::sandbox {

inline constexpr std::uint32_t kMagic = 0x574d5353;  // "SSMW"

enum class MessageType : std::uint32_t {
  // server -> worker
  kLoadModel = 1,   ///< u64 id, str device, str archive bytes       -> kOk | kError
  kLoadScript = 2,  ///< u64 id, str device, str source              -> kOk(str list) | kError
  kUnload = 3,      ///< u64 id                                       (no reply)
  kRunModel = 4,    ///< u64 id, u8 run flags, tensors                -> kOutputs | kError
  kRunScript = 5,   ///< u64 id, u8 run flags, str function, strs keys, strs args, tensors
                    ///< -> kOutputs | kError
  kDeviceCheck = 6,  ///< str device                                  -> kOk | kError
  kLoadOnnxModel = 7,  ///< u64 id, str device, str ModelProto bytes  -> kOk | kError
  kControl = 8,     ///< a control block's descriptor (control_block.hpp) -> kOk | kError; every
                    ///< message after the kOk meets in the block first
  // worker -> server
  kReady = 100,   ///< sent once, when the worker is confined and ready
  kOk = 101,
  kError = 102,   ///< str message
  kOutputs = 103,  ///< tensors
};

/// Flags of a run request.
inline constexpr std::uint8_t kOutputsInFiles = 1;  ///< outputs from kShareFromBytes may be files

/// What a reader does with tensors that come by descriptor.
enum class FileUse : std::uint8_t {
  kRefuse,      ///< malformed: none may come (closed as they arrive)
  kMapPrivate,  ///< the server's sealed segments, mapped copy-on-write (the worker's side)
  kSealAndMap,  ///< a worker's own files, sealed here first, then mapped read-only (the server's)
};

/// Where a tensor's bytes are in a tensor list.
enum class TensorPlace : std::uint8_t {
  kInline = 0,  ///< in the message, after the metadata
  kInFile = 1,  ///< in the next descriptor passed with the message, at the given offset
};

/// Tensors from this size go by descriptor when they are in a sealed memory file: below it,
/// copying through the socket costs less than mapping, faulting and unmapping the pages.
inline constexpr std::size_t kShareFromBytes = 64 * 1024;

/// Limits on what a peer may send, checked before anything is allocated from its word.
inline constexpr std::uint32_t kMaxRank = 64;
inline constexpr std::size_t kMaxDescriptors = 253;  ///< per message (the kernel's SCM_MAX_FD)
inline constexpr std::uint32_t kMaxTensors = 4096;
inline constexpr std::uint64_t kMaxMetadataBytes = 1u << 20;
inline constexpr std::uint32_t kMaxStringBytes = 1u << 30;

/// Why a channel operation failed.
enum class ChannelError { kNone, kClosed, kTimedOut, kIo, kProtocol, kTooLarge };

using Deadline = std::chrono::steady_clock::time_point;
inline constexpr Deadline kNoDeadline = Deadline::max();

/// A message being built: small fields are copied into one string, large byte ranges (tensor
/// payloads, model archives) are referenced and sent with one gather write. The referenced memory
/// must stay valid until send() returns.
class MessageWriter {
 public:
  explicit MessageWriter(MessageType type);
  ~MessageWriter();
  MessageWriter(const MessageWriter&) = delete;
  MessageWriter& operator=(const MessageWriter&) = delete;

  void u8(std::uint8_t value) { raw(&value, sizeof value); }
  void u32(std::uint32_t value) { raw(&value, sizeof value); }
  void u64(std::uint64_t value) { raw(&value, sizeof value); }
  void i64(std::int64_t value) { raw(&value, sizeof value); }
  void str(std::string_view text);  ///< copied
  /// Bytes copied as they are, with no length prefix.
  void copy(std::string_view bytes) { small_.append(bytes); }
  void strs(std::span<const std::string> texts);
  /// u32 length, then `bytes` by reference (not copied).
  void str_ref(std::string_view bytes);
  /// A tensor list; the payloads are referenced. With `share_files`, tensors of at least
  /// kShareFromBytes that are in a sealed memory file (TensorView::file) go by descriptor, at
  /// most kMaxDescriptors of them (the rest inline); the descriptors must stay open until send()
  /// returns.
  void tensors(std::span<const TensorView> tensors, bool share_files = false);
  /// A tensor list of owned tensors; the payloads are referenced. With `in_files`, tensors of at
  /// least kShareFromBytes are written into memory files of their own and go by descriptor (the
  /// worker's outputs); one that cannot be goes inline.
  void tensors(std::span<const OwnedTensor> tensors, bool in_files = false);

  /// Passes `fd` with the message (borrowed: it must stay open until send() returns).
  void pass(int fd) { descriptors_.push_back(fd); }
  /// The whole frame in `out` when it passes no descriptor and is at most `limit` bytes long (it
  /// can then travel through a control block); false otherwise.
  bool frame_into(std::string& out, std::size_t limit) const;

  /// The tensors that go by descriptor, and their bytes.
  std::size_t shared_tensors() const noexcept { return descriptors_.size(); }
  std::uint64_t shared_bytes() const noexcept { return shared_bytes_; }

  /// Sends the whole frame on `fd`. On a non-blocking fd, waits for room until `deadline`.
  ChannelError send(int fd, Deadline deadline);

 private:
  void raw(const void* data, std::size_t size) {
    small_.append(static_cast<const char*>(data), size);
  }
  void reference(const void* data, std::size_t size);

  struct Splice {
    std::size_t small_offset;  // where in small_ the referenced range goes
    const char* data;
    std::size_t size;
  };
  std::uint32_t type_;
  std::string small_;
  std::vector<Splice> splices_;
  std::vector<int> descriptors_;  // passed with the frame's first bytes
  std::vector<int> owned_;        // of those, files this writer made (closed with it)
  std::uint64_t shared_bytes_ = 0;
};

/// Reads framed messages from a socket, buffered; large reads go straight into the caller's
/// memory. Not thread-safe: one reader per socket.
class MessageReader {
 public:
  explicit MessageReader(int fd) : fd_(fd) {}
  ~MessageReader();
  MessageReader(const MessageReader&) = delete;
  MessageReader& operator=(const MessageReader&) = delete;

  /// What tensors that come by descriptor become (FileUse); kRefuse until set.
  void accept_files(FileUse use) noexcept { file_use_ = use; }
  /// The next frame comes from `frame` (a whole frame taken from a control block) instead of the
  /// socket. Only between messages, with nothing of the socket buffered: false otherwise.
  bool feed(std::string_view frame);
  /// The next descriptor passed with the current message (the caller's to close), or -1.
  int take_file();

  /// Reads the next frame header. Returns kNone with `type` and `length` set, or why not.
  ChannelError next(Deadline deadline, MessageType& type, std::uint64_t& length);
  /// Body fields; each fails with kProtocol when the body (length from next()) is shorter.
  ChannelError u8(std::uint8_t& value) { return exact(&value, sizeof value); }
  ChannelError u32(std::uint32_t& value) { return exact(&value, sizeof value); }
  ChannelError u64(std::uint64_t& value) { return exact(&value, sizeof value); }
  ChannelError str(std::string& text);
  ChannelError strs(std::vector<std::string>& texts);
  /// A string read into a Buffer (model archives: no copy through a std::string).
  ChannelError bytes(Buffer& out);
  /// A tensor list; checks dtype, rank, and that each byte count matches its shape. A tensor
  /// that came by descriptor is that file mapped as accept_files() says, after checking that the
  /// file holds its bytes (and, sealed here, no more). kTooLarge (nothing allocated, the bytes left unread) when the
  /// payloads together exceed `max_payload`.
  ChannelError tensors(std::vector<OwnedTensor>& out,
                       std::uint64_t max_payload = std::numeric_limits<std::uint64_t>::max());
  /// Discards what is left of the current body.
  ChannelError skip_rest();
  /// The text of the last kProtocol failure.
  const std::string& problem() const noexcept { return problem_; }

  void set_deadline(Deadline deadline) noexcept { deadline_ = deadline; }

 private:
  ChannelError exact(void* out, std::size_t size);
  ChannelError fill(void* out, std::size_t size);  // from buffer, then the socket
  ChannelError protocol(std::string text);
  // read() of the socket, keeping (or closing) the descriptors that come with the bytes.
  ssize_t receive(char* into, std::size_t size);
  void close_files() noexcept;
  // The next passed descriptor mapped as `bytes` bytes at `offset`, into `out`.
  ChannelError map_file(std::uint64_t offset, std::uint64_t bytes, Buffer& out);

  int fd_;
  FileUse file_use_ = FileUse::kRefuse;
  std::vector<int> files_;  // passed with the current message, not yet used (owned)
  std::size_t files_used_ = 0;
  bool too_many_files_ = false;
  Deadline deadline_ = kNoDeadline;
  std::uint64_t body_left_ = 0;
  std::vector<char> buffer_ = std::vector<char>(64 * 1024);
  std::size_t begin_ = 0, end_ = 0;
  std::string problem_;
};

/// Text for a ChannelError ("timed out", ...).
std::string_view channel_error_text(ChannelError error);

}  // namespace slipstream::ml::sandbox
