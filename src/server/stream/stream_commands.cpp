// The SS.STREAM.* command table and what its writer and reader commands share: error replies,
// parking, close hooks.
#include "server/stream/stream_commands.hpp"

#include <chrono>

#include "server/commands/command_util.hpp"
#include "server/net/reply.hpp"
#include "server/net/session.hpp"
#include "server/server.hpp"
#include "server/stream/stream_arguments.hpp"
#include "server/stream/stream_command_util.hpp"
#include "server/stream/stream_error.hpp"
#include "server/stream/stream_registry.hpp"

namespace slipstream::server {

std::string stream_error_text(const std::exception& error) {
  if (dynamic_cast<const StreamOutOfMemory*>(&error) != nullptr) {
    return std::string("OOM ") + error.what();
  }
  if (dynamic_cast<const StreamAborted*>(&error) != nullptr) {
    return std::string("ABORTED ") + error.what();
  }
  if (dynamic_cast<const std::bad_alloc*>(&error) != nullptr) {
    return "OOM out of memory handling a stream request";
  }
  return std::string("ERR ") + error.what();
}

void hook_close(CommandContext& c, Stream& stream) {
  const std::uint64_t session = c.session.id();
  if (!stream.needs_close_hook(session)) return;
  StreamRegistry& registry = c.server.streams();
  std::weak_ptr<Stream> weak = stream.weak_from_this();
  c.session.on_close([&registry, weak, session] {
    auto closed = weak.lock();
    if (!closed) return;
    try {
      registry.with_stream(closed, [session](Stream& s) { s.session_closed(session); });
    } catch (const std::exception&) {  // nothing to do from a closing connection
    }
  });
}

Outcome park(CommandContext& c, Stream& stream, Retry retry, std::int64_t timeout_ms) {
  auto request = std::make_shared<ParkedRequest>();
  request->session = c.session.weak_session();
  request->retry = [retry = std::move(retry)](Stream& s) -> std::optional<ReplyWriter> {
    try {
      return retry(s);
    } catch (const std::exception& error) {
      return [text = stream_error_text(error)](ReplyBuffer& reply) { reply.error(text); };
    }
  };
  stream.park(request);
  StreamRegistry& registry = c.server.streams();
  std::weak_ptr<Stream> weak = stream.weak_from_this();
  c.session.on_close_while_parked([&registry, weak, request] {
    auto parked_on = weak.lock();
    if (!parked_on) return;
    try {
      registry.with_stream(parked_on, [&](Stream& s) { s.withdraw(request.get()); });
    } catch (const std::exception&) {
    }
  });
  if (timeout_ms > 0) {
    c.session.arm_timer(std::chrono::milliseconds(timeout_ms), [&registry, weak, request] {
      auto parked_on = weak.lock();
      if (!parked_on) return;
      try {
        registry.with_stream(parked_on, [&](Stream& s) {
          if (!s.withdraw(request.get())) return;  // answered already
          if (auto session = request->session.lock()) {
            session->resume([](ReplyBuffer& reply) { reply.null(); });
          }
        });
      } catch (const std::exception&) {
      }
    });
  }
  return Outcome::kParked;
}

std::int64_t parse_timeout_option(const CommandContext& c, std::size_t index) {
  if (c.argc() == index) return 0;
  if (c.argc() != index + 2 || !equals_nocase(c.arg(index), "TIMEOUT")) {
    throw StreamError("syntax error: expected nothing or TIMEOUT ms after the arguments");
  }
  return parse_milliseconds(c.arg(index + 1), "TIMEOUT");
}

void add_stream_commands(std::vector<CommandSpec>& out) {
  add_stream_writer_commands(out);
  add_stream_reader_commands(out);
  add_stream_chunk_commands(out);
}

}  // namespace slipstream::server
