// A page of shared memory the server and one model worker hand their messages over with, instead
// of the channel's socket (issue 32): a small request or reply is copied into the block and the
// other side is woken with a futex on it, which costs a fraction of a socket round trip (two
// wake-ups through the kernel's socket code), and nothing at all when the other side is still
// spinning for it. Messages that do not fit, or that pass descriptors, still travel on the socket:
// the block then only says "on the socket", so the two sides always meet in the block first.
//
// Turns: `turn` is even while the server may write the request area, odd while the worker may
// write the reply area; each side keeps its own count of the turn it expects and trusts nothing
// else in the block. The server copies a reply out of the block before parsing it (the worker
// could change it meanwhile), checks its length against the area, and waits for the turn in
// slices that end at its deadline or as soon as the worker's end of the socket hangs up: a worker
// that writes garbage into the block, stops in the middle of a reply or dies costs the call a
// malformed-reply error, its deadline or a "crashed" error, never a hung thread. The worker trusts
// the server, which started it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "ml/sandbox/channel.hpp"

namespace slipstream::ml::sandbox {

/// Bytes of the request area and of the reply area: at most the MessageReader's buffer, which
/// takes a frame from the block whole.
inline constexpr std::size_t kControlAreaBytes = 60 * 1024;

/// Where a posted message is.
enum class Posted : std::uint32_t {
  kInBlock = 0,   ///< in the block's area (its length beside it)
  kOnSocket = 1,  ///< on the socket, sent after the turn changed
  kNothing = 2,   ///< no message (the worker's answer to a request that has no reply)
};

class ControlBlock {
 public:
  /// The server's side: a new block in a memory file, whose descriptor (fd()) the worker is
  /// passed. Null with `error` set when the kernel refuses.
  static std::unique_ptr<ControlBlock> create(std::string* error);
  /// The worker's side: maps the block passed as `fd` (which it closes). Null with `error` set
  /// when `fd` is not such a block.
  static std::unique_ptr<ControlBlock> attach(int fd, std::string* error);
  ~ControlBlock();
  ControlBlock(const ControlBlock&) = delete;
  ControlBlock& operator=(const ControlBlock&) = delete;

  /// The block's memory file (the server's side); -1 on the worker's.
  int fd() const noexcept { return fd_; }

  /// Sends `w` from this side (a request from the server's, a reply from the worker's): in the
  /// block when it fits there and passes no descriptor, else announced in the block and then sent
  /// on `socket` (until `deadline`).
  ChannelError send(MessageWriter& w, int socket, Deadline deadline);
  /// Waits for the other side's next message until `deadline` (the worker: kNoDeadline) and, when
  /// it is in the block, hands a copy of it to `reader` (which then reads it as from the socket).
  /// `where` says where it is.
  ChannelError receive(MessageReader& reader, int socket, Deadline deadline, Posted& where);

  /// The server: posts a request (`frame`, at most kControlAreaBytes, when `where` is kInBlock)
  /// and wakes the worker.
  void post_request(Posted where, std::string_view frame = {});
  /// The server: waits for the worker's reply until `deadline`, or until the worker's end of
  /// `socket` hangs up (kClosed). On kNone, `where` says where the reply is and `frame` holds a
  /// copy of it when it is in the block (checked to be a whole frame of the area's size at most).
  ChannelError wait_reply(int socket, Deadline deadline, Posted& where, std::string& frame);

  /// The worker: waits for the next request, or until the server's end of `socket` hangs up
  /// (kClosed). `frame` gets a copy of it when it is in the block.
  ChannelError wait_request(int socket, Posted& where, std::string& frame);
  /// The worker: posts its reply and wakes the server.
  void post_reply(Posted where, std::string_view frame = {});

 private:
  struct Shared;
  ControlBlock(int fd, Shared* shared, bool server) : fd_(fd), shared_(shared), server_(server) {}
  // Waits until `turn` is `expected` (spinning for `spin` first), sleeping in slices, until
  // `deadline` (kTimedOut) or until `socket` hangs up (kClosed).
  ChannelError wait_turn(std::uint32_t expected, int socket, Deadline deadline,
                         std::chrono::steady_clock::duration spin);

  int fd_;
  Shared* shared_;
  bool server_;             // this is the server's side (created, not attached)
  std::uint32_t turn_ = 0;  // the turn this side last saw or set
  std::string frame_;       // a message to or from the block
};

}  // namespace slipstream::ml::sandbox
