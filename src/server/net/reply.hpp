// Builds RESP replies for one connection: small pieces are appended to a contiguous buffer, large
// stored payloads are referenced in place (scatter/gather), never copied.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace slipstream::server {

class ReplyBuffer {
 public:
  /// A piece of output: bytes owned by the buffer, or a stored payload kept alive by `owner`.
  struct Piece {
    const char* data;
    std::size_t size;
  };

  /// 2 (RESP2, the default) or 3 (after HELLO 3): changes how maps, nulls and doubles look.
  void set_protocol(int protocol) noexcept { protocol_ = protocol; }
  int protocol() const noexcept { return protocol_; }

  void simple(std::string_view text);          ///< +text
  void error(std::string_view text);           ///< -text ("ERR ...", "WRONGTYPE ...")
  void integer(std::int64_t value);            ///< :n
  void bulk(std::string_view bytes);           ///< $n bytes (copied)
  void null();                                 ///< $-1 (RESP2) or _ (RESP3)
  void null_array();                           ///< *-1 (RESP2) or _ (RESP3)
  void array(std::size_t count);               ///< *n
  void map(std::size_t pairs);                 ///< %n (RESP3) or *2n (RESP2)
  void set(std::size_t count);                 ///< ~n (RESP3) or *n (RESP2)
  void double_value(double value);             ///< ,v (RESP3) or a bulk string (RESP2)
  void verbatim(std::string_view text);        ///< =n txt:... (RESP3) or a bulk string (RESP2)
  /// $n followed by `bytes`, which are not copied: `owner` keeps them alive until written.
  void bulk_shared(std::shared_ptr<const void> owner, std::string_view bytes);
  void raw(std::string_view bytes);

  /// A file descriptor passed to the client (SCM_RIGHTS) with the reply about to be written:
  /// call it before writing that reply. `owner` keeps the descriptor open until it is sent.
  /// Only Unix-socket connections may be handed descriptors (Session::is_local()).
  struct PassedFd {
    int fd;
    std::size_t offset;  ///< where its reply starts among the bytes of this buffer
  };
  void pass_fd(int fd, std::shared_ptr<const void> owner);
  const std::vector<PassedFd>& passed_fds() const noexcept { return fds_; }

  bool empty() const noexcept { return pieces_.empty() && open_ == small_.size(); }
  /// Bytes held in the owned buffer (shared payloads not counted).
  std::size_t owned_bytes() const noexcept { return small_.size(); }
  /// Every byte of the replies, stored payloads referenced in place included: each keeps its
  /// value's memory alive until written, even after the key is overwritten or deleted, so output
  /// limits and back-pressure count them.
  std::size_t total_bytes() const noexcept { return small_.size() + shared_bytes_; }
  /// Every piece, in order; valid until clear() or the next append.
  std::vector<Piece> pieces();
  void clear();

 private:
  void close_open_piece();

  int protocol_ = 2;
  std::string small_;
  std::size_t open_ = 0;  // start of the owned bytes not yet recorded as a piece
  struct Entry {
    bool shared;
    std::size_t offset;  // into small_ when !shared
    std::size_t size;
    const char* data;    // when shared
  };
  std::vector<Entry> pieces_;
  std::vector<std::shared_ptr<const void>> owners_;
  std::size_t shared_bytes_ = 0;  // bytes of the shared pieces
  std::vector<PassedFd> fds_;
};

}  // namespace slipstream::server
