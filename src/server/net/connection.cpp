// Connection I/O loop and request dispatch; see connection.hpp.
#include "server/net/connection.hpp"

#include <spdlog/spdlog.h>

#include <cctype>
#include <cstring>

#include "server/server.hpp"
#include "server/shm/shm.hpp"
#include "common/ascii.hpp"

namespace slipstream::server {
namespace {

constexpr std::size_t kInitialInput = 16 * 1024;
constexpr std::size_t kDirectReadMin = 16 * 1024;  // bulks this large skip the input buffer
// Requests stop running while this many bytes of replies wait behind a write in progress, so a
// pipeline makes the server hold a few MiB of replies, not all of them.
constexpr std::size_t kMaxPendingOutput = 4 << 20;
// While requests cannot run (parked, or replies backed up), reading stops once this much input
// waits: the socket buffers then fill and TCP holds the client back, so a client that sends
// without reading its replies cannot make the server buffer its requests without bound. Generous
// enough that a client writing a large pipeline of small requests before reading (a batch of
// tensor gets) is rarely held back before it starts reading.
constexpr std::size_t kMaxUnparsedWhilePaused = 4 << 20;

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string lower(std::string_view text) { return ascii_lower(text); }

// Redis 7's text for an unknown command: the name and the first arguments, quoted.
std::string unknown_command_error(const std::vector<Buffer>& args) {
  std::string text = "ERR unknown command '";
  text.append(args[0].view().substr(0, 128));
  text.append("', with args beginning with: ");
  std::size_t quoted = 0;
  for (std::size_t i = 1; i < args.size() && quoted < 128; ++i) {
    std::string_view arg = args[i].view().substr(0, 128 - quoted);
    text.push_back('\'');
    text.append(arg);
    text.append("' ");
    quoted += arg.size() + 3;
  }
  return text;
}

}  // namespace

Connection::Connection(Server& server, Socket socket, std::string peer, std::string local,
                       bool is_unix)
    : Session(server.next_client_id()),
      server_(server),
      socket_(std::move(socket)),
      parser_(RequestLimits::before_auth(), &server.client_limits().input_budget()),
      input_(kInitialInput),
      peer_(std::move(peer)),
      local_(std::move(local)),
      is_unix_(is_unix),
      created_(std::chrono::steady_clock::now()),
      last_active_ms_(now_ms()) {
  authenticated = server_.password().empty();
  apply_request_limits();
  io_thread_.store(server_.io_thread_index(asio::query(socket_.get_executor(),
                                                        asio::execution::context)));
}

// A connection ends through close(), except at server shutdown, when the I/O contexts are
// destroyed with the operations that hold their connections.
Connection::~Connection() {
  if (!closed_) server_.unregister_client(id());
}

void Connection::stop_at_shutdown() {
  take_close_hooks();  // a server that stops is no client leaving
  close();
  parked_self_.reset();
}

void Connection::start() {
  if (!is_unix_) {
    asio::error_code ignored;
    socket_.set_option(asio::ip::tcp::no_delay(true), ignored);
  }
  read_more();
}

void Connection::set_name(std::string name) {
  std::lock_guard lock(name_mutex_);
  name_ = std::move(name);
}

std::string Connection::name() const {
  std::lock_guard lock(name_mutex_);
  return name_;
}

void Connection::set_protocol(int protocol) {
  protocol_.store(protocol);
  output_.set_protocol(protocol);
}

std::string Connection::describe() const {
  auto now = std::chrono::steady_clock::now();
  auto age = std::chrono::duration_cast<std::chrono::seconds>(now - created_).count();
  auto idle = (now_ms() - last_active_ms_.load()) / 1000;
  std::string cmd = lower(last_command_.load());
  for (char& c : cmd) {
    if (c == ' ') c = '|';
  }
  const std::size_t input = shown_input_.load(std::memory_order_relaxed);
  const std::size_t request = shown_request_.load(std::memory_order_relaxed);
  const std::size_t output = shown_output_.load(std::memory_order_relaxed);
  return "id=" + std::to_string(id()) + " addr=" + peer_ + " laddr=" + local_ +
         " fd=-1 name=" + name() + " age=" + std::to_string(age) +
         " idle=" + std::to_string(idle) + " flags=" + (is_unix_ ? "U" : "N") +
         " db=0 sub=0 psub=0 ssub=0 multi=-1 qbuf=" + std::to_string(input) +
         " qbuf-free=0 argv-mem=" + std::to_string(request) +
         " multi-mem=0 rbs=0 rbp=0 obl=0 oll=0 omem=" + std::to_string(output) +
         " tot-mem=" + std::to_string(input + request + output) + " events=r cmd=" + cmd +
         " user=default redir=-1 resp=" + std::to_string(protocol()) +
         " io-thread=" + std::to_string(io_thread());
}

void Connection::read_more() {
  if (reading_ || closed_ || close_after_write_) return;
  if (requests_paused() && input_end_ - input_start_ >= kMaxUnparsedWhilePaused) return;
  auto self = shared_from_this();
  std::span<char> pending = parser_.pending_bulk();
  if (input_start_ == input_end_ && pending.size() >= kDirectReadMin) {
    // Read the payload straight into the argument's final buffer: no intermediate copy.
    reading_ = true;
    socket_.read_some_async(asio::buffer(pending.data(), pending.size()), replied_since_read(),
                            [this, self](const asio::error_code& ec, std::size_t n) {
                              reading_ = false;
                              if (ec) return close();
                              server_.stats().net_input_bytes.fetch_add(n, std::memory_order_relaxed);
                              parser_.commit_pending(n);
                              process();
                            });
    return;
  }
  if (input_start_ == input_end_) {
    input_start_ = input_end_ = 0;
    if (input_.size() > 4 * kInitialInput) input_.resize(kInitialInput), input_.shrink_to_fit();
  } else if (input_start_ > 0 && input_.size() - input_end_ < 4096) {
    std::memmove(input_.data(), input_.data() + input_start_, input_end_ - input_start_);
    input_end_ -= input_start_;
    input_start_ = 0;
  }
  if (input_.size() - input_end_ < 4096) input_.resize(input_.size() * 2);
  reading_ = true;
  socket_.read_some_async(
      asio::buffer(input_.data() + input_end_, input_.size() - input_end_), replied_since_read(),
      [this, self](const asio::error_code& ec, std::size_t n) {
        reading_ = false;
        if (ec) return close();
        server_.stats().net_input_bytes.fetch_add(n, std::memory_order_relaxed);
        input_end_ += n;
        process();
      });
}

bool Connection::replied_since_read() noexcept {
  // A reply in flight counts: its send is still to come.
  return std::exchange(replied_since_read_, false) || writing_;
}

bool Connection::requests_paused() const noexcept {
  return parked_ || (writing_ && output_.total_bytes() > kMaxPendingOutput);
}

void Connection::process() {
  if (closed_) return;
  try {
    // A move asked for earlier, when something was in flight (a read completes here with none).
    if (move_to_ && move_when_idle()) return;
    run_requests();
    flush();
    if (move_to_ && move_when_idle()) return;
    read_more();
  } catch (const std::bad_alloc&) {
    // Out of memory outside a command (a command's own failure is its -OOM reply): this client
    // cannot go on, but the server must.
    spdlog::warn("client id={} addr={} closed: out of memory handling its input or output", id(),
                 peer_);
    close();
  }
}

void Connection::run_requests() {
  if (!enforce_output_limit()) return;  // the reply of a wait that ended may have crossed it
  while (!parked_ && !close_after_write_ && !closed_) {
    if (output_.total_bytes() > kMaxPendingOutput) {
      if (writing_) break;  // resumes when the write in progress completes
      flush();              // send these replies before running more requests
    }
    auto result = parser_.parse({input_.data() + input_start_, input_end_ - input_start_});
    input_start_ += result.consumed;
    if (result.status == RequestParser::Status::kNeedMore) break;
    if (result.status == RequestParser::Status::kRequest) {
      last_active_ms_.store(now_ms(), std::memory_order_relaxed);
      execute(parser_.args());
      parser_.args().clear();
      apply_request_limits();
      if (!enforce_output_limit()) return;
      continue;
    }
    server_.stats().protocol_errors.fetch_add(1, std::memory_order_relaxed);
    output_.error(parser_.error());
    if (result.status == RequestParser::Status::kFatal) {
      if (parser_.fatal_over_limit()) {
        server_.client_limits().query_buffer_disconnections.fetch_add(1, std::memory_order_relaxed);
        spdlog::warn("client id={} addr={} closed: {}", id(), peer_, parser_.error());
      } else {
        spdlog::debug("client id={} addr={}: {}; closing", id(), peer_, parser_.error());
      }
      close_after_write_ = true;
    }
  }
  note_buffer_sizes();
}

void Connection::apply_request_limits() {
  if (authenticated == limits_authenticated_) return;
  limits_authenticated_ = authenticated;
  if (!authenticated) {
    parser_.set_limits(RequestLimits::before_auth());
    return;
  }
  RequestLimits limits;
  limits.max_bulk_len = server_.max_bulk_len();
  limits.max_request_bytes = server_.client_limits().query_buffer_limit();
  parser_.set_limits(limits);
}

// Redis's client-output-buffer-limit for normal clients, on every byte of the replies waiting
// (built or being written, stored payloads referenced in place included):
//   1. at the hard limit or over it: dropped at once;
//   2. at the soft limit or over it: dropped if still there after the allowed seconds, checked
//      again by a timer since a client that reads nothing gives no other occasion;
//   3. under both: the soft clock stops.
// Back-pressure keeps a pipelining client's replies to a few MiB, so these limits mostly catch
// single large replies to a client that does not read them.
bool Connection::enforce_output_limit() {
  const OutputBufferLimit limit = server_.client_limits().output_limit();
  const std::size_t bytes = output_bytes();
  const bool over_soft = limit.soft != 0 && bytes >= limit.soft;
  if (limit.hard != 0 && bytes >= limit.hard) {
    spdlog::warn(
        "client id={} addr={} dropped: {} bytes of replies waiting reached its hard limit of {} "
        "bytes (client-output-buffer-limit)",
        id(), peer_, bytes, limit.hard);
  } else if (over_soft) {
    const auto now = std::chrono::steady_clock::now();
    const auto allowed = std::chrono::seconds(limit.soft_seconds);
    if (!soft_limit_since_) {
      soft_limit_since_ = now;
      if (!soft_limit_timer_) {
        soft_limit_timer_ = std::make_unique<asio::steady_timer>(socket_.get_executor());
      }
      soft_limit_timer_->expires_after(allowed + std::chrono::milliseconds(10));
      soft_limit_waiting_ = true;
      soft_limit_timer_->async_wait([this, self = shared_from_this()](const asio::error_code& ec) {
        soft_limit_waiting_ = false;
        if (!ec && !closed_) enforce_output_limit();
      });
      return true;
    }
    if (now - *soft_limit_since_ <= allowed) return true;
    spdlog::warn(
        "client id={} addr={} dropped: {} bytes of replies waiting stayed at or over its soft "
        "limit of {} bytes for more than {} s (client-output-buffer-limit)",
        id(), peer_, bytes, limit.soft, limit.soft_seconds);
  } else {
    if (soft_limit_since_) {
      soft_limit_since_.reset();
      soft_limit_timer_->cancel();
    }
    return true;
  }
  server_.client_limits().output_buffer_disconnections.fetch_add(1, std::memory_order_relaxed);
  close();
  return false;
}

void Connection::note_buffer_sizes() {
  const std::size_t input = input_end_ - input_start_;
  const std::size_t request = parser_.request_bytes();
  const std::size_t output = output_bytes();
  shown_input_.store(input, std::memory_order_relaxed);
  shown_request_.store(request, std::memory_order_relaxed);
  shown_output_.store(output, std::memory_order_relaxed);
  ClientLimits& limits = server_.client_limits();
  limits.input_peak().observe(input + request);
  limits.output_peak().observe(output);
}

void Connection::execute(std::vector<Buffer>& args) {
  Stats& stats = server_.stats();
  stats.commands_processed.fetch_add(1, std::memory_order_relaxed);
  const CommandSpec* spec = server_.commands().find(args[0].view());
  if (spec == nullptr) {
    output_.error(unknown_command_error(args));
    stats.error_replies.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  constexpr std::string_view kNoAuthError = "NOAUTH Authentication required.";
  if (!authenticated && !(spec->flags & kNoAuth)) {
    output_.error(kNoAuthError);
    return;
  }
  if (!arity_ok(spec->arity, args.size())) {
    // Redis names core commands in lower case and module (AI.*) commands as the client sent them.
    std::string shown = spec->name.starts_with("AI.") ? std::string(args[0].view())
                                                      : lower(spec->name);
    output_.error("ERR wrong number of arguments for '" + shown + "' command");
    return;
  }
  // A container (CONFIG, CLIENT, CLUSTER, COMMAND) runs the subcommand its second argument names,
  // under that subcommand's gate, arity, key positions and flags; its own handler runs only for a
  // request that names none (COMMAND alone). The container's gate comes first, so a client that
  // has not authenticated learns nothing of its subcommands.
  const CommandSpec* command = spec;
  if (!spec->subcommands.empty() && args.size() >= 2) {
    command = CommandTable::find_subcommand(*spec, args[1].view());
    if (command == nullptr) {
      output_.error(CommandTable::subcommand_error(*spec, args[1].view(), nullptr));
      return;
    }
    if (!authenticated && !(command->flags & kNoAuth)) {
      output_.error(kNoAuthError);
      return;
    }
    if (!arity_ok(command->arity, args.size())) {
      output_.error(CommandTable::subcommand_error(*spec, args[1].view(), command));
      return;
    }
  }
  if (const Cluster* cluster = server_.cluster()) {
    if (auto redirect = cluster->check(*command, args)) {  // -MOVED or -CROSSSLOT
      output_.error(*redirect);
      return;
    }
  }
  if ((command->flags & kDenyOom) && server_.keyspace().over_limit(0)) {
    output_.error("OOM command not allowed when used memory > 'maxmemory'.");
    return;
  }
  last_command_.store(spec->name.data(), std::memory_order_relaxed);  // CLIENT LIST's cmd=
  CommandContext context{server_, *this, args, output_};
  Outcome outcome = Outcome::kDone;
  try {
    outcome = command->handler(context);
  } catch (const std::bad_alloc&) {
    output_.error("OOM out of memory while executing '" + lower(spec->name) + "'");
  } catch (const std::exception& e) {
    spdlog::error("command {} failed: {}", spec->name, e.what());
    output_.error(std::string("ERR internal error: ") + e.what());
  }
  if (outcome == Outcome::kParked) {
    parked_ = true;
    parked_self_ = shared_from_this();
  }
  if (close_requested) close_after_write_ = true;
}

void Connection::close() {
  if (closed_) return;
  closed_ = true;
  if (park_cancel_) {
    auto cancel = std::move(park_cancel_);
    park_cancel_ = nullptr;
    cancel();
  }
  if (timer_) timer_->cancel();
  if (soft_limit_timer_) soft_limit_timer_->cancel();
  if (descriptor_timer_) descriptor_timer_->cancel();
  shm.reset();  // a client that leaves, however it ends, gives back its loans and leases
  for (auto& hook : take_close_hooks()) hook();  // e.g. its stream ranks fail or leave
  asio::error_code ignored;
  socket_.shutdown(asio::socket_base::shutdown_both, ignored);
  socket_.close(ignored);
  server_.unregister_client(id());
  // Let go of the parked request's reference once the caller is done with this connection.
  if (parked_self_) asio::post(socket_.get_executor(), [self = std::move(parked_self_)] {});
}

void Connection::resume(std::function<void(ReplyBuffer&)> write_reply) {
  // Called from any thread: posted to the connection's thread as io_thread_ (atomic) names it,
  // never through socket_, which a move replaces; a handler that finds the connection moved since
  // follows it.
  const unsigned thread = io_thread();
  asio::post(server_.io_thread_context(thread), [this, self = shared_from_this(), thread,
                                                 write_reply = std::move(write_reply)]() mutable {
    if (thread != io_thread()) return resume(std::move(write_reply));
    if (closed_ || !parked_) return;
    parked_ = false;
    parked_self_.reset();  // this handler holds the connection too
    park_cancel_ = nullptr;
    if (timer_) timer_->cancel();
    try {
      write_reply(output_);
    } catch (const std::bad_alloc&) {
      spdlog::warn("client id={} addr={} closed: out of memory writing a reply", id(), peer_);
      return close();
    }
    process();
  });
}

void Connection::move_to_io_thread(unsigned index) {
  if (index == io_thread() || index >= server_.io_threads()) {
    move_to_.reset();
    return;
  }
  move_to_ = index;
}

bool Connection::move_when_idle() {
  // Nothing of this connection may be queued on its thread's reactor: no read or write pending,
  // no wait parked (whose resume() another thread may post), no handler of the soft limit's timer
  // to come (one that expired runs even when cancelled). The park timer's handler holds nothing
  // of the connection.
  if (reading_ || writing_ || parked_ || closed_ || close_after_write_ || soft_limit_since_ ||
      soft_limit_waiting_) {
    return false;
  }
  const unsigned index = *std::exchange(move_to_, std::nullopt);
  timer_.reset();  // a finished wait's, cancelled: its handler does nothing
  soft_limit_timer_.reset();
  descriptor_timer_.reset();  // bound to this thread's context; idle while nothing is written
  asio::io_context& target = server_.io_thread_context(index);
  asio::error_code ec;
  socket_.move_to(target, ec);
  if (ec) {
    spdlog::warn("client id={} addr={} closed: cannot move it to I/O thread {}: {}", id(), peer_,
                 index, ec.message());
    close();
    return true;
  }
  io_thread_.store(index, std::memory_order_relaxed);
  asio::post(target, [this, self = shared_from_this()] { process(); });
  return true;
}

void Connection::arm_timer(std::chrono::milliseconds delay, std::function<void()> on_expiry) {
  timer_ = std::make_unique<asio::steady_timer>(socket_.get_executor(), delay);
  timer_->async_wait([on_expiry = std::move(on_expiry)](const asio::error_code& ec) {
    if (!ec) on_expiry();
  });
}

void Connection::on_close_while_parked(std::function<void()> cancel) {
  park_cancel_ = std::move(cancel);
}

}  // namespace slipstream::server
