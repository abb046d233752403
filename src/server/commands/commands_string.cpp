// String commands: SET, GET, MSET, MGET, STRLEN, SETNX, GETDEL, APPEND.
#include <cstring>

#include "server/commands/command_util.hpp"
#include "server/net/reply.hpp"
#include "server/server.hpp"

namespace slipstream::server {
namespace {

// The value of a string key, counting the hit or miss; nullptr (with an error written for a
// non-string) when there is none.
ValuePtr lookup_string(CommandContext& c, std::string_view key, bool* wrong_type) {
  ValuePtr value = c.server.keyspace().get(key);
  Stats& stats = c.server.stats();
  (value ? stats.keyspace_hits : stats.keyspace_misses).fetch_add(1, std::memory_order_relaxed);
  *wrong_type = value && value->type() != ValueType::kString;
  return *wrong_type ? nullptr : value;
}

void reply_string(ReplyBuffer& reply, const ValuePtr& value) {
  reply.bulk_shared(value, value->string().view());
}

Outcome set(CommandContext& c) {
  bool nx = false, xx = false, get = false;
  for (std::size_t i = 3; i < c.argc(); ++i) {
    std::string_view option = c.arg(i);
    if (equals_nocase(option, "NX")) {
      nx = true;
    } else if (equals_nocase(option, "XX")) {
      xx = true;
    } else if (equals_nocase(option, "GET")) {
      get = true;
    } else if (equals_nocase(option, "EX") || equals_nocase(option, "PX") ||
               equals_nocase(option, "EXAT") || equals_nocase(option, "PXAT") ||
               equals_nocase(option, "KEEPTTL")) {
      c.reply.error("ERR key expiry is not supported by slipstream");
      return Outcome::kDone;
    } else {
      c.reply.error(kSyntaxError);
      return Outcome::kDone;
    }
  }
  if (nx && xx) {
    c.reply.error(kSyntaxError);
    return Outcome::kDone;
  }
  Buffer& payload = c.args[2];
  if (c.server.keyspace().over_limit(payload.size())) {
    c.reply.error(kOomError);
    return Outcome::kDone;
  }
  auto value = std::make_shared<Value>(std::move(payload));
  // Conditional and GET forms run under the key's lock so the check and the write are atomic.
  enum class Result { kStored, kSkipped, kWrongType };
  ValuePtr previous;
  Result result = c.server.keyspace().update(c.arg(1), [&](MutableSlot& slot) {
    const Value* current = slot.peek();
    if (get && current && current->type() != ValueType::kString) return Result::kWrongType;
    if ((nx && current) || (xx && !current)) {
      if (get && current) previous = slot.share();
      return Result::kSkipped;
    }
    if (get && current) previous = slot.share();
    slot.assign(std::move(value));
    return Result::kStored;
  });
  if (result == Result::kWrongType) {
    c.reply.error(kWrongType);
    return Outcome::kDone;
  }
  if (result == Result::kStored) c.server.mark_dirty();
  if (get) {
    if (previous) {
      reply_string(c.reply, previous);
    } else {
      c.reply.null();
    }
  } else if (result == Result::kStored) {
    c.reply.simple("OK");
  } else {
    c.reply.null();
  }
  return Outcome::kDone;
}

Outcome get(CommandContext& c) {
  bool wrong_type = false;
  ValuePtr value = lookup_string(c, c.arg(1), &wrong_type);
  if (wrong_type) {
    c.reply.error(kWrongType);
  } else if (!value) {
    c.reply.null();
  } else {
    reply_string(c.reply, value);
  }
  return Outcome::kDone;
}

Outcome getdel(CommandContext& c) {
  ValuePtr taken;
  bool wrong_type = false;
  c.server.keyspace().update(c.arg(1), [&](MutableSlot& slot) {
    const Value* current = slot.peek();
    if (!current) return;
    if (current->type() != ValueType::kString) {
      wrong_type = true;
      return;
    }
    taken = slot.share();
    slot.remove();
  });
  if (wrong_type) {
    c.reply.error(kWrongType);
  } else if (!taken) {
    c.reply.null();
  } else {
    c.server.mark_dirty();
    reply_string(c.reply, taken);
  }
  return Outcome::kDone;
}

Outcome setnx(CommandContext& c) {
  Buffer& payload = c.args[2];
  if (c.server.keyspace().over_limit(payload.size())) {
    c.reply.error(kOomError);
    return Outcome::kDone;
  }
  auto value = std::make_shared<Value>(std::move(payload));
  bool stored = c.server.keyspace().update(c.arg(1), [&](MutableSlot& slot) {
    if (slot.peek()) return false;
    slot.assign(std::move(value));
    return true;
  });
  if (stored) c.server.mark_dirty();
  c.reply.integer(stored ? 1 : 0);
  return Outcome::kDone;
}

Outcome mset(CommandContext& c) {
  if (c.argc() % 2 != 1) {
    c.reply.error("ERR wrong number of arguments for 'mset' command");
    return Outcome::kDone;
  }
  // Keys and their bookkeeping count too: MSET may create any number of keys at once.
  std::size_t total = 0;
  for (std::size_t i = 1; i < c.argc(); i += 2) {
    total += c.args[i].size() + c.args[i + 1].size() + Keyspace::kKeyOverhead;
  }
  if (c.server.keyspace().over_limit(total)) {
    c.reply.error(kOomError);
    return Outcome::kDone;
  }
  std::vector<std::pair<std::string, std::shared_ptr<Value>>> entries;
  for (std::size_t i = 1; i < c.argc(); i += 2) {
    entries.emplace_back(std::string(c.arg(i)), std::make_shared<Value>(std::move(c.args[i + 1])));
  }
  c.server.mark_dirty(entries.size());
  c.server.keyspace().set_many(std::move(entries));
  c.reply.simple("OK");
  return Outcome::kDone;
}

Outcome mget(CommandContext& c) {
  c.reply.array(c.argc() - 1);
  for (std::size_t i = 1; i < c.argc(); ++i) {
    bool wrong_type = false;
    ValuePtr value = lookup_string(c, c.arg(i), &wrong_type);
    if (value) {
      reply_string(c.reply, value);
    } else {
      c.reply.null();  // missing keys and non-strings alike, as Redis does
    }
  }
  return Outcome::kDone;
}

Outcome strlen(CommandContext& c) {
  bool wrong_type = false;
  ValuePtr value = lookup_string(c, c.arg(1), &wrong_type);
  if (wrong_type) {
    c.reply.error(kWrongType);
  } else {
    c.reply.integer(value ? static_cast<std::int64_t>(value->string().size()) : 0);
  }
  return Outcome::kDone;
}

Outcome append(CommandContext& c) {
  std::string_view extra = c.arg(2);
  if (c.server.keyspace().over_limit(extra.size())) {
    c.reply.error(kOomError);
    return Outcome::kDone;
  }
  std::int64_t length = -1;
  c.server.keyspace().update(c.arg(1), [&](MutableSlot& slot) {
    const Value* current = slot.peek();
    if (current && current->type() != ValueType::kString) return;
    std::string_view old = current ? current->string().view() : std::string_view();
    Buffer joined = Buffer::uninitialized(old.size() + extra.size());
    if (!old.empty()) std::memcpy(joined.data(), old.data(), old.size());
    if (!extra.empty()) std::memcpy(joined.data() + old.size(), extra.data(), extra.size());
    length = static_cast<std::int64_t>(joined.size());
    slot.assign(std::make_shared<Value>(std::move(joined)));
  });
  if (length < 0) {
    c.reply.error(kWrongType);
  } else {
    c.server.mark_dirty();
    c.reply.integer(length);
  }
  return Outcome::kDone;
}

}  // namespace

void add_string_commands(std::vector<CommandSpec>& out) {
  out.insert(out.end(), {
    {"SET", -3, kWrite | kDenyOom, 1, 1, 1, set, "string", "key value [NX|XX] [GET]",
     "Stores a binary-safe string. Expiry options are refused (no TTLs)."},
    {"GET", 2, kReadOnly | kFast, 1, 1, 1, get, "string", "key", "The string, or nil."},
    {"GETDEL", 2, kWrite | kFast, 1, 1, 1, getdel, "string", "key",
     "The string, removing the key."},
    {"SETNX", 3, kWrite | kDenyOom | kFast, 1, 1, 1, setnx, "string", "key value",
     "Stores only if the key is missing; replies 1 or 0."},
    {"MSET", -3, kWrite | kDenyOom, 1, -1, 2, mset, "string", "key value [key value ...]",
     "Stores several strings atomically."},
    {"MGET", -2, kReadOnly | kFast, 1, -1, 1, mget, "string", "key [key ...]",
     "Several strings; nil for missing or non-string keys."},
    {"STRLEN", 2, kReadOnly | kFast, 1, 1, 1, strlen, "string", "key", "Length in bytes."},
    {"APPEND", 3, kWrite | kDenyOom, 1, 1, 1, append, "string", "key value",
     "Appends to a string; replies the new length."},
  });
}

}  // namespace slipstream::server
