// List commands: RPUSH, LPUSH, LLEN, LRANGE, LINDEX, LPOP, RPOP.
#include "server/commands/command_util.hpp"
#include "server/net/reply.hpp"
#include "server/server.hpp"

namespace slipstream::server {
namespace {

bool read_list(CommandContext& c, ValuePtr& out) {
  out = c.server.keyspace().get(c.arg(1));
  Stats& stats = c.server.stats();
  (out ? stats.keyspace_hits : stats.keyspace_misses).fetch_add(1, std::memory_order_relaxed);
  if (out && out->type() != ValueType::kList) {
    c.reply.error(kWrongType);
    return false;
  }
  return true;
}

Outcome push(CommandContext& c, bool front) {
  // Items cost more than their bytes: counting that up front keeps one push of a million tiny
  // items from carrying the keyspace far past the limit.
  std::size_t incoming = (c.argc() - 2) * List::kItemOverhead;
  for (std::size_t i = 2; i < c.argc(); ++i) incoming += c.args[i].size();
  if (c.server.keyspace().over_limit(incoming)) {
    c.reply.error(kOomError);
    return Outcome::kDone;
  }
  std::int64_t length = c.server.keyspace().update(c.arg(1), [&](MutableSlot& slot) {
    if (slot.peek() && slot.peek()->type() != ValueType::kList) return std::int64_t{-1};
    if (!slot.peek()) slot.assign(std::make_shared<Value>(List()));
    List& list = slot.mutate().list();
    for (std::size_t i = 2; i < c.argc(); ++i) {
      if (front) {
        list.push_front(std::string(c.arg(i)));
      } else {
        list.push_back(std::string(c.arg(i)));
      }
    }
    return static_cast<std::int64_t>(list.size());
  });
  if (length < 0) {
    c.reply.error(kWrongType);
  } else {
    c.server.mark_dirty();
    c.reply.integer(length);
  }
  return Outcome::kDone;
}

Outcome rpush(CommandContext& c) { return push(c, false); }
Outcome lpush(CommandContext& c) { return push(c, true); }

Outcome llen(CommandContext& c) {
  ValuePtr value;
  if (!read_list(c, value)) return Outcome::kDone;
  c.reply.integer(value ? static_cast<std::int64_t>(value->list().size()) : 0);
  return Outcome::kDone;
}

Outcome lrange(CommandContext& c) {
  auto start = parse_int(c.arg(2)), stop = parse_int(c.arg(3));
  if (!start || !stop) {
    c.reply.error(kNotInteger);
    return Outcome::kDone;
  }
  ValuePtr value;
  if (!read_list(c, value)) return Outcome::kDone;
  if (!value) {
    c.reply.array(0);
    return Outcome::kDone;
  }
  const List& list = value->list();
  auto size = static_cast<std::int64_t>(list.size());
  std::int64_t from = *start < 0 ? std::max<std::int64_t>(size + *start, 0) : *start;
  std::int64_t to = *stop < 0 ? size + *stop : std::min(*stop, size - 1);
  if (from > to || from >= size) {
    c.reply.array(0);
    return Outcome::kDone;
  }
  c.reply.array(static_cast<std::size_t>(to - from + 1));
  for (std::int64_t i = from; i <= to; ++i) c.reply.bulk(list.at(static_cast<std::size_t>(i)));
  return Outcome::kDone;
}

Outcome lindex(CommandContext& c) {
  auto index = parse_int(c.arg(2));
  if (!index) {
    c.reply.error(kNotInteger);
    return Outcome::kDone;
  }
  ValuePtr value;
  if (!read_list(c, value)) return Outcome::kDone;
  if (!value) {
    c.reply.null();
    return Outcome::kDone;
  }
  auto size = static_cast<std::int64_t>(value->list().size());
  std::int64_t i = *index < 0 ? size + *index : *index;
  if (i < 0 || i >= size) {
    c.reply.null();
  } else {
    c.reply.bulk(value->list().at(static_cast<std::size_t>(i)));
  }
  return Outcome::kDone;
}

Outcome pop(CommandContext& c, bool front) {
  if (c.argc() > 3) {
    c.reply.error(std::string("ERR wrong number of arguments for '") + (front ? "lpop" : "rpop") +
                  "' command");
    return Outcome::kDone;
  }
  std::optional<std::int64_t> count;
  if (c.argc() == 3) {
    count = parse_int(c.arg(2));
    if (!count || *count < 0) {
      c.reply.error("ERR value is out of range, must be positive");
      return Outcome::kDone;
    }
  }
  std::vector<std::string> popped;
  bool wrong_type = false, missing = false;
  c.server.keyspace().update(c.arg(1), [&](MutableSlot& slot) {
    if (!slot.peek()) {
      missing = true;
      return;
    }
    if (slot.peek()->type() != ValueType::kList) {
      wrong_type = true;
      return;
    }
    std::int64_t n = count.value_or(1);
    if (n == 0) return;
    List& list = slot.mutate().list();
    while (n-- > 0 && !list.empty()) popped.push_back(front ? list.pop_front() : list.pop_back());
    if (list.empty()) slot.remove();
  });
  if (wrong_type) {
    c.reply.error(kWrongType);
  } else if (missing) {
    if (count) {
      c.reply.null_array();
    } else {
      c.reply.null();
    }
  } else if (!count) {
    c.server.mark_dirty();
    c.reply.bulk(popped.front());
  } else {
    c.server.mark_dirty();
    c.reply.array(popped.size());
    for (const auto& item : popped) c.reply.bulk(item);
  }
  return Outcome::kDone;
}

Outcome lpop(CommandContext& c) { return pop(c, true); }
Outcome rpop(CommandContext& c) { return pop(c, false); }

}  // namespace

void add_list_commands(std::vector<CommandSpec>& out) {
  out.insert(out.end(), {
    {"RPUSH", -3, kWrite | kDenyOom | kFast, 1, 1, 1, rpush, "list", "key element [element ...]",
     "Appends; replies the new length."},
    {"LPUSH", -3, kWrite | kDenyOom | kFast, 1, 1, 1, lpush, "list", "key element [element ...]",
     "Prepends; replies the new length."},
    {"LLEN", 2, kReadOnly | kFast, 1, 1, 1, llen, "list", "key", "Length (0 if missing)."},
    {"LRANGE", 4, kReadOnly, 1, 1, 1, lrange, "list", "key start stop",
     "Elements from start to stop inclusive; negative indexes count from the end."},
    {"LINDEX", 3, kReadOnly, 1, 1, 1, lindex, "list", "key index", "One element, or nil."},
    {"LPOP", -2, kWrite | kFast, 1, 1, 1, lpop, "list", "key [count]",
     "Removes and replies the first element(s)."},
    {"RPOP", -2, kWrite | kFast, 1, 1, 1, rpop, "list", "key [count]",
     "Removes and replies the last element(s)."},
  });
}

}  // namespace slipstream::server
