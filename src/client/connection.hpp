// One blocking socket to the server: connecting (TCP with TCP_NODELAY, or a Unix socket), sending
// a Request with scatter/gather writes, and reading RESP replies through a small buffer, with bulk
// payloads optionally read straight into their final destination.
#pragma once

#include <sys/uio.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "client/address.hpp"
#include "slipstream/reply.hpp"

namespace slipstream::client {

class Request;

/// Not thread-safe: the Client serialises access. Every read or write waits at most the I/O
/// timeout for progress, then throws TimeoutError; a closed or failed socket throws
/// ConnectionError; malformed replies throw ProtocolError. After any of these the connection is
/// unusable.
class Connection {
 public:
  /// Connects, waiting at most `timeout`. Throws ConnectionError (naming the address) or
  /// TimeoutError.
  static std::unique_ptr<Connection> open(const Address& address,
                                          std::chrono::milliseconds timeout);
  /// Wraps a connected socket (takes ownership); `peer` names it in messages.
  Connection(int fd, std::string peer);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  /// Longest wait for any progress; zero or negative waits forever.
  void set_io_timeout(std::chrono::milliseconds timeout) noexcept { io_timeout_ = timeout; }
  std::chrono::milliseconds io_timeout() const noexcept { return io_timeout_; }
  const std::string& peer() const noexcept { return peer_; }

  void send(const Request& request);
  void send(std::vector<iovec> parts);

  // Reply reading, piece by piece. A reply line is a type byte followed by text up to CRLF.

  /// Reads one line; returns its type byte and puts the rest (without CRLF) in `text`.
  char read_line(std::string& text);
  /// Parses the text of a '$', '*' or ':' line as an integer. Throws ProtocolError.
  std::int64_t parse_integer(const std::string& text) const;
  /// Reads exactly `size` payload bytes into `out`, then the CRLF that ends a bulk string.
  void read_bulk_body(void* out, std::size_t size);
  /// Reads and discards `size` payload bytes and the CRLF.
  void skip_bulk_body(std::size_t size);
  /// Reads one whole reply of any type (RESP2, and RESP3 types if the caller switched).
  Reply read_reply();

  [[noreturn]] void protocol_error(const std::string& what) const;

  /// For an idle connection (no reply outstanding): true when the server has closed it or it has
  /// failed, so it can only be discarded (e.g. the server restarted). Never blocks.
  bool closed_by_peer() const;

  /// The next file descriptor the server passed (SCM_RIGHTS on a Unix socket), in the order they
  /// arrived; the caller owns it. Descriptors arrive no later than the first byte of the reply
  /// that announces them (see server/connection_fds.cpp). Throws ProtocolError if none came.
  int take_fd();

 private:
  void read_exact(void* out, std::size_t size);
  void fill();  // reads at least one byte into the buffer
  // One non-blocking recvmsg into `out`, keeping any descriptors passed with the bytes.
  ssize_t receive(void* out, std::size_t size);
  void wait(short events);
  Reply read_reply(int depth);

  int fd_;
  std::string peer_;
  std::chrono::milliseconds io_timeout_{0};
  // Set by send(): the next read waits for the socket first. A reply cannot have come back in the
  // moment since the request left, so trying to receive first would cost a system call that
  // finds nothing (about 1.4 us on a paravirtualised node) on every round trip.
  bool awaiting_reply_ = false;
  std::unique_ptr<char[]> buffer_;
  std::size_t begin_ = 0;  ///< first unread byte in buffer_
  std::size_t end_ = 0;    ///< one past the last received byte
  std::deque<int> received_fds_;  ///< passed descriptors not yet taken (closed on destruction)
};

}  // namespace slipstream::client
