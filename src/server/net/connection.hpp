// One client connection: reads requests, runs them through the command table, writes replies.
//
// Threading: a connection lives on one I/O thread (its io_context); every member is touched only
// from that thread, except describe()/name() (CLIENT LIST from other connections) and resume()
// (a wait completed by a writer on another thread), which post to the connection's thread.
#pragma once

#include <asio.hpp>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/resp_parser.hpp"
#include "server/net/reply.hpp"
#include "server/net/session.hpp"

namespace slipstream::server {

class Server;

class Connection final : public Session, public std::enable_shared_from_this<Connection> {
 public:
  using Socket = asio::generic::stream_protocol::socket;

  Connection(Server& server, Socket socket, std::string peer, std::string local, bool is_unix);
  ~Connection() override;

  /// Starts reading. The connection keeps itself alive through its pending operations.
  void start();

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

 private:
  void read_more();
  void process();
  void execute(std::vector<Buffer>& args);
  void flush();
  // Replies that pass file descriptors (connection_fds.cpp): Asio cannot send ancillary data.
  struct FdWrite;
  void write_with_fds(const std::vector<asio::const_buffer>& buffers, std::size_t total);
  void continue_fd_write(std::shared_ptr<FdWrite> write);
  void finish_write(std::size_t total);
  void close();

  Server& server_;
  Socket socket_;
  RequestParser parser_;
  std::vector<char> input_;
  std::size_t input_start_ = 0, input_end_ = 0;
  ReplyBuffer output_;     // replies being built
  ReplyBuffer in_flight_;  // replies being written
  bool reading_ = false, writing_ = false, parked_ = false, closed_ = false;
  bool close_after_write_ = false;
  std::unique_ptr<asio::steady_timer> timer_;
  std::function<void()> park_cancel_;

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
