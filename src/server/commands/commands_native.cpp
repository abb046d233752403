// Slipstream extensions for native clients (SS.*): blocking waits that park the request, not a
// thread, until keys exist or a list reaches a length.
#include "server/commands/command_util.hpp"
#include "server/net/reply.hpp"
#include "server/server.hpp"
#include "server/net/session.hpp"

namespace slipstream::server {
namespace {

// Parks the request until `ready()` holds (reply written by `on_ready`) or `timeout_ms` passes
// (null reply). 0 waits without a time limit. `keys` are the keys whose writes re-check it.
Outcome park(CommandContext& c, std::vector<std::string> keys, std::function<bool()> ready,
             std::function<void(ReplyBuffer&)> on_ready, std::int64_t timeout_ms) {
  auto wait = std::make_shared<Wait>();
  wait->keys = std::move(keys);
  wait->ready = std::move(ready);
  std::weak_ptr<Session> weak = c.session.weak_session();
  wait->complete = [weak, on_ready = std::move(on_ready)](bool timed_out) {
    auto session = weak.lock();
    if (!session) return;
    if (timed_out) {
      session->resume([](ReplyBuffer& reply) { reply.null(); });
    } else {
      session->resume(on_ready);
    }
  };
  WaitRegistry& registry = c.server.waits();
  c.session.on_close_while_parked([&registry, wait] { registry.cancel(wait); });
  if (timeout_ms > 0) {
    c.session.arm_timer(saturated_timeout(timeout_ms),
                        [&registry, wait] { registry.expire(wait); });
  }
  registry.add(wait);  // completes at once if the condition already holds
  return Outcome::kParked;
}

// Reads "TIMEOUT ms" at args[argc-2..]; writes an error and returns nullopt when malformed.
std::optional<std::int64_t> parse_timeout(CommandContext& c) {
  if (!equals_nocase(c.arg(c.argc() - 2), "TIMEOUT")) {
    c.reply.error(kSyntaxError);
    return std::nullopt;
  }
  auto ms = parse_int(c.arg(c.argc() - 1));
  if (!ms || *ms < 0) {
    c.reply.error("ERR timeout is not an integer or out of range");
    return std::nullopt;
  }
  return ms;
}

Outcome wait_keys(CommandContext& c) {
  auto timeout = parse_timeout(c);
  if (!timeout) return Outcome::kDone;
  std::vector<std::string> keys;
  for (std::size_t i = 1; i + 2 < c.argc(); ++i) keys.emplace_back(c.arg(i));
  Keyspace& keyspace = c.server.keyspace();
  auto all_exist = [&keyspace, keys] {
    for (const auto& key : keys) {
      if (!keyspace.exists(key)) return false;
    }
    return true;
  };
  if (all_exist()) {
    c.reply.simple("OK");
    return Outcome::kDone;
  }
  return park(c, keys, all_exist, [](ReplyBuffer& reply) { reply.simple("OK"); }, *timeout);
}

std::int64_t list_length(const Keyspace& keyspace, const std::string& key) {
  ValuePtr value = keyspace.get(key);
  return value && value->type() == ValueType::kList
             ? static_cast<std::int64_t>(value->list().size())
             : 0;
}

Outcome wait_length(CommandContext& c) {
  auto timeout = parse_timeout(c);
  if (!timeout) return Outcome::kDone;
  auto wanted = parse_int(c.arg(2));
  if (!wanted || *wanted < 0) {
    c.reply.error("ERR length is not an integer or out of range");
    return Outcome::kDone;
  }
  std::string key(c.arg(1));
  Keyspace& keyspace = c.server.keyspace();
  ValuePtr value = keyspace.get(key);
  if (value && value->type() != ValueType::kList) {
    c.reply.error(kWrongType);
    return Outcome::kDone;
  }
  std::int64_t n = *wanted;
  if (list_length(keyspace, key) >= n) {
    c.reply.integer(list_length(keyspace, key));
    return Outcome::kDone;
  }
  return park(
      c, {key}, [&keyspace, key, n] { return list_length(keyspace, key) >= n; },
      [&keyspace, key](ReplyBuffer& reply) { reply.integer(list_length(keyspace, key)); },
      *timeout);
}

}  // namespace

void add_native_commands(std::vector<CommandSpec>& out) {
  out.insert(out.end(), {
    {"SS.WAIT", -4, kReadOnly | kBlocking, 1, -3, 1, wait_keys, "slipstream",
     "key [key ...] TIMEOUT ms",
     "Blocks until every key exists: +OK, or nil after ms milliseconds (0 = no limit)."},
    {"SS.WAITLEN", 5, kReadOnly | kBlocking, 1, 1, 1, wait_length, "slipstream",
     "key length TIMEOUT ms",
     "Blocks until the list holds at least length elements: the length, or nil on timeout."},
  });
}

}  // namespace slipstream::server
