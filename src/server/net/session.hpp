// What a command handler may know and do about the connection that sent it.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace slipstream::server {

class ReplyBuffer;
class ShmSession;

/// Per-connection state shared with command handlers. Implemented by the network connection;
/// handlers run on the connection's own I/O thread, so plain members need no locking unless
/// another connection reads them (CLIENT LIST reads through describe()).
class Session {
 public:
  virtual ~Session() = default;

  std::uint64_t id() const noexcept { return id_; }
  bool authenticated = false;
  /// Set by QUIT: close the connection once pending replies are written.
  bool close_requested = false;
  /// Loans and leases of the shared-memory fast path (after SS.SHM.ATTACH); released when the
  /// connection closes.
  std::shared_ptr<ShmSession> shm;

  /// True for a Unix-socket connection: the only kind that can be handed file descriptors.
  virtual bool is_local() const { return false; }

  virtual void set_name(std::string name) = 0;
  virtual std::string name() const = 0;
  /// One CLIENT LIST line (without the trailing newline). Safe from any thread.
  virtual std::string describe() const = 0;
  /// Switches the reply protocol (HELLO).
  virtual void set_protocol(int protocol) = 0;
  virtual int protocol() const = 0;

  // ---- Parking: a handler that returns Outcome::kParked must arrange for resume() to be called.
  /// Thread-safe. Appends the reply produced by `write_reply` and continues with the next
  /// pipelined request. Ignored if the connection has closed.
  virtual void resume(std::function<void(ReplyBuffer&)> write_reply) = 0;
  /// Runs `on_expiry` on the connection's thread after `delay` unless resumed first.
  virtual void arm_timer(std::chrono::milliseconds delay, std::function<void()> on_expiry) = 0;
  /// Called if the connection closes while parked, so the wait can be withdrawn.
  virtual void on_close_while_parked(std::function<void()> cancel) = 0;
  virtual std::weak_ptr<Session> weak_session() = 0;

  // ---- I/O threads.
  /// The index of the I/O thread this connection runs on (Server::io_threads() of them).
  virtual unsigned io_thread() const = 0;
  /// Moves the connection to I/O thread `index` once the requests now running have replied and
  /// nothing is in flight; its later requests run there. Call from the connection's thread.
  virtual void move_to_io_thread(unsigned index) = 0;
  /// Closes the connection at server shutdown, once no I/O thread runs.
  virtual void stop_at_shutdown() = 0;

  /// Runs `hook` once, on the connection's thread, when the connection closes for any reason but
  /// server shutdown (after a parked request was withdrawn). Call from the connection's thread;
  /// `hook` must not throw.
  void on_close(std::function<void()> hook) { close_hooks_.push_back(std::move(hook)); }

 protected:
  explicit Session(std::uint64_t id) : id_(id) {}
  /// The hooks given to on_close() so far; the caller runs them or drops them.
  std::vector<std::function<void()>> take_close_hooks() noexcept {
    return std::exchange(close_hooks_, {});
  }

 private:
  std::uint64_t id_;
  std::vector<std::function<void()>> close_hooks_;
};

}  // namespace slipstream::server
