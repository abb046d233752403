// One client connection: reads requests, runs them through the command table, writes replies.
//
// Threading: a connection lives on one I/O thread (its io_context); every member is touched only
// from that thread, except describe()/name() (CLIENT LIST from other connections) and resume()
// (a wait completed by a writer on another thread), which post to the connection's thread.
//
// Memory per client is bounded (docs/security.md, "Memory bounds per client"): requests stop
// running while replies back up, reading stops while requests cannot run, the parser refuses
// arguments over the limits before allocating them, and a client over client-output-buffer-limit
// is dropped.
#pragma once

#include <sys/uio.h>

#include <asio.hpp>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "common/resp_parser.hpp"
#include "server/net/read_socket.hpp"
#include "server/net/reply.hpp"
#include "server/net/session.hpp"

namespace slipstream::server {

class Server;

class Connection final : public Session, public std::enable_shared_from_this<Connection> {
 public:
  using Socket = asio::generic::stream_protocol::socket;

  Connection(Server& server, Socket socket, std::string peer, std::string local, bool is_unix);
  ~Connection() override;

  /// Starts reading. The connection keeps itself alive through its pending operations, and
  /// while a request is parked (when reading may be paused) through a reference to itself.
  void start();
  /// At server shutdown, once the I/O threads have stopped: closes the connection and lets go
  /// of a parked request's reference to itself.
  void stop_at_shutdown() override;

  void set_name(std::string name) override;
  std::string name() const override;
  std::string describe() const override;
  void set_protocol(int protocol) override;
  int protocol() const override { return protocol_.load(); }
  void resume(std::function<void(ReplyBuffer&)> write_reply) override;
  void arm_timer(std::chrono::milliseconds delay, std::function<void()> on_expiry) override;
  void on_close_while_parked(std::function<void()> cancel) override;
  std::weak_ptr<Session> weak_session() override { return weak_from_this(); }
  bool is_local() const override { return is_unix_; }
  unsigned io_thread() const override { return io_thread_.load(std::memory_order_relaxed); }
  void move_to_io_thread(unsigned index) override;

 private:
  void read_more();
  void process();
  // Moves to the I/O thread move_to_io_thread() asked for, once nothing is in flight; true when
  // it moved (or closed): the rest of process() then runs there.
  bool move_when_idle();
  void run_requests();
  void execute(std::vector<Buffer>& args);
  void flush();
  // True while no more requests may run: parked, or replies backed up behind a write.
  bool requests_paused() const noexcept;
  // True once after replies were sent or queued since the last read (ReadSocket's `replied`).
  bool replied_since_read() noexcept;
  std::size_t output_bytes() const noexcept {
    return output_.total_bytes() + in_flight_.total_bytes();
  }
  // Switches the parser between the limits before and after AUTH.
  void apply_request_limits();
  // Drops the client when its replies are over client-output-buffer-limit; false if dropped.
  bool enforce_output_limit();
  // Publishes this client's buffer sizes for CLIENT LIST and INFO's recent peaks.
  void note_buffer_sizes();
  // Writing a batch of replies (connection_write.cpp): sent at once where the socket takes it,
  // the rest when it is writable; descriptors ride with their reply's first byte.
  struct PendingWrite {
    std::vector<iovec> parts;
    std::size_t first = 0;     // parts[first] is the next to send (possibly partly sent)
    std::size_t position = 0;  // bytes of the batch sent so far
    std::size_t next_fd = 0;   // in_flight_.passed_fds()[next_fd] is the next descriptor to send
    std::size_t total = 0;
    void reset() noexcept {  // keeps the parts' capacity for the next batch
      parts.clear();
      first = position = next_fd = total = 0;
    }
  };
  enum class SendResult { kDone, kWaiting, kClosed };
  SendResult send_now();
  // Waits for writability (`for_writable`) or, while descriptors are held back, polls on a timer
  // (a client that reads makes no writability event when the socket had room all along).
  SendResult wait_to_send(bool for_writable);
  // How many more descriptors this connection may send now (descriptors_budget(), less those the
  // client has not read yet).
  std::size_t descriptors_allowed();
  void end_write();
  // Closes this connection, and only this one, after a failed send, logging why.
  void fail_write(std::error_code error);
  void close();

  Server& server_;
  ReadSocket socket_;
  RequestParser parser_;
  std::vector<char> input_;
  std::size_t input_start_ = 0, input_end_ = 0;
  ReplyBuffer output_;     // replies being built
  ReplyBuffer in_flight_;  // replies being written
  PendingWrite write_;     // what of in_flight_ is left to send
  // Descriptors in flight (docs/security.md, "Memory bounds per client"): passed to the client
  // but maybe not received yet, as batches of (stream position of the byte they rode with, count).
  // A batch leaves once the client has read past its byte (see connection_write.cpp).
  std::uint64_t bytes_sent_ = 0;  // on this socket since it opened
  std::deque<std::pair<std::uint64_t, std::size_t>> descriptor_batches_;
  std::size_t descriptors_in_flight_ = 0;
  std::unique_ptr<asio::steady_timer> descriptor_timer_;
  std::chrono::milliseconds descriptor_poll_{1};
  bool descriptors_held_ = false;  // replies are held back for the descriptor budget
  bool reading_ = false, writing_ = false, parked_ = false, closed_ = false;
  bool replied_since_read_ = false;
  bool close_after_write_ = false;
  std::unique_ptr<asio::steady_timer> timer_;
  std::function<void()> park_cancel_;
  // Set while a request is parked: reading stops once kMaxUnparsedWhilePaused bytes wait behind
  // it, and then no pending operation holds the connection.
  std::shared_ptr<Connection> parked_self_;
  bool limits_authenticated_ = false;  // which limits the parser has
  std::atomic<unsigned> io_thread_{0};  // read by describe() on other threads
  std::optional<unsigned> move_to_;     // the I/O thread to move to when idle
  // Since when the replies have been at or over the soft output limit, and the timer that drops
  // the client if they still are when the allowed seconds are up.
  std::optional<std::chrono::steady_clock::time_point> soft_limit_since_;
  std::unique_ptr<asio::steady_timer> soft_limit_timer_;
  bool soft_limit_waiting_ = false;  // its handler is still to run
  // Buffer sizes at the end of the last processing round, for describe() on other threads.
  std::atomic<std::size_t> shown_input_{0}, shown_request_{0}, shown_output_{0};

  const std::string peer_, local_;
  const bool is_unix_;
  const std::chrono::steady_clock::time_point created_;
  std::atomic<std::int64_t> last_active_ms_;
  std::atomic<const char*> last_command_{"NULL"};
  std::atomic<int> protocol_{2};
  mutable std::mutex name_mutex_;
  std::string name_;  // guarded by name_mutex_
};

}  // namespace slipstream::server
