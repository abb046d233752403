// Hash commands: HSET, HMSET, HGET, HMGET, HGETALL, HDEL, HEXISTS, HLEN, HKEYS, HVALS.
#include "server/commands/command_util.hpp"
#include "server/net/reply.hpp"
#include "server/server.hpp"

namespace slipstream::server {
namespace {

// The hash at `key` for reading. Writes WRONGTYPE and returns false for another type; a missing
// key gives true with `out` null.
bool read_hash(CommandContext& c, ValuePtr& out) {
  out = c.server.keyspace().get(c.arg(1));
  Stats& stats = c.server.stats();
  (out ? stats.keyspace_hits : stats.keyspace_misses).fetch_add(1, std::memory_order_relaxed);
  if (out && out->type() != ValueType::kHash) {
    c.reply.error(kWrongType);
    return false;
  }
  return true;
}

Outcome hset_impl(CommandContext& c, bool reply_ok) {
  if (c.argc() % 2 != 0) {
    c.reply.error(std::string("ERR wrong number of arguments for '") +
                  (reply_ok ? "hmset" : "hset") + "' command");
    return Outcome::kDone;
  }
  // What the write can add, counted as if every field were new (as SET counts its whole value
  // even when it replaces one), so one large HSET cannot carry the keyspace far past the limit.
  std::size_t incoming = (c.argc() - 2) / 2 * Hash::kFieldOverhead;
  for (std::size_t i = 2; i < c.argc(); ++i) incoming += c.args[i].size();
  if (c.server.keyspace().over_limit(incoming)) {
    c.reply.error(kOomError);
    return Outcome::kDone;
  }
  std::int64_t added = c.server.keyspace().update(c.arg(1), [&](MutableSlot& slot) {
    if (slot.peek() && slot.peek()->type() != ValueType::kHash) return std::int64_t{-1};
    if (!slot.peek()) slot.assign(std::make_shared<Value>(Hash()));
    Hash& hash = slot.mutate().hash();
    std::int64_t n = 0;
    for (std::size_t i = 2; i < c.argc(); i += 2) n += hash.set(c.arg(i), c.arg(i + 1)) ? 1 : 0;
    return n;
  });
  if (added < 0) {
    c.reply.error(kWrongType);
    return Outcome::kDone;
  }
  c.server.mark_dirty();
  if (reply_ok) {
    c.reply.simple("OK");
  } else {
    c.reply.integer(added);
  }
  return Outcome::kDone;
}

Outcome hset(CommandContext& c) { return hset_impl(c, false); }
Outcome hmset(CommandContext& c) { return hset_impl(c, true); }

Outcome hget(CommandContext& c) {
  ValuePtr value;
  if (!read_hash(c, value)) return Outcome::kDone;
  const std::string* field = value ? value->hash().find(c.arg(2)) : nullptr;
  if (field) {
    c.reply.bulk(*field);
  } else {
    c.reply.null();
  }
  return Outcome::kDone;
}

Outcome hmget(CommandContext& c) {
  ValuePtr value;
  if (!read_hash(c, value)) return Outcome::kDone;
  c.reply.array(c.argc() - 2);
  for (std::size_t i = 2; i < c.argc(); ++i) {
    const std::string* field = value ? value->hash().find(c.arg(i)) : nullptr;
    if (field) {
      c.reply.bulk(*field);
    } else {
      c.reply.null();
    }
  }
  return Outcome::kDone;
}

Outcome hgetall(CommandContext& c) {
  ValuePtr value;
  if (!read_hash(c, value)) return Outcome::kDone;
  if (!value) {
    c.reply.map(0);
    return Outcome::kDone;
  }
  const auto& entries = value->hash().entries();
  c.reply.map(entries.size());
  for (const auto& [field, v] : entries) {
    c.reply.bulk(field);
    c.reply.bulk(v);
  }
  return Outcome::kDone;
}

Outcome hkeys_or_vals(CommandContext& c, bool keys) {
  ValuePtr value;
  if (!read_hash(c, value)) return Outcome::kDone;
  if (!value) {
    c.reply.array(0);
    return Outcome::kDone;
  }
  const auto& entries = value->hash().entries();
  c.reply.array(entries.size());
  for (const auto& [field, v] : entries) c.reply.bulk(keys ? field : v);
  return Outcome::kDone;
}

Outcome hkeys(CommandContext& c) { return hkeys_or_vals(c, true); }
Outcome hvals(CommandContext& c) { return hkeys_or_vals(c, false); }

Outcome hdel(CommandContext& c) {
  std::int64_t removed = c.server.keyspace().update(c.arg(1), [&](MutableSlot& slot) {
    if (!slot.peek()) return std::int64_t{0};
    if (slot.peek()->type() != ValueType::kHash) return std::int64_t{-1};
    std::int64_t n = 0;
    for (std::size_t i = 2; i < c.argc(); ++i) {
      if (slot.peek()->hash().find(c.arg(i))) n += slot.mutate().hash().erase(c.arg(i)) ? 1 : 0;
    }
    if (slot.peek()->hash().size() == 0) slot.remove();  // an empty hash is no key, as in Redis
    return n;
  });
  if (removed < 0) {
    c.reply.error(kWrongType);
  } else {
    c.server.mark_dirty(static_cast<std::uint64_t>(removed));
    c.reply.integer(removed);
  }
  return Outcome::kDone;
}

Outcome hexists(CommandContext& c) {
  ValuePtr value;
  if (!read_hash(c, value)) return Outcome::kDone;
  c.reply.integer(value && value->hash().find(c.arg(2)) ? 1 : 0);
  return Outcome::kDone;
}

Outcome hlen(CommandContext& c) {
  ValuePtr value;
  if (!read_hash(c, value)) return Outcome::kDone;
  c.reply.integer(value ? static_cast<std::int64_t>(value->hash().size()) : 0);
  return Outcome::kDone;
}

}  // namespace

void add_hash_commands(std::vector<CommandSpec>& out) {
  out.insert(out.end(), {
    {"HSET", -4, kWrite | kDenyOom | kFast, 1, 1, 1, hset, "hash",
     "key field value [field value ...]", "Sets fields; replies the number of new fields."},
    {"HMSET", -4, kWrite | kDenyOom | kFast, 1, 1, 1, hmset, "hash",
     "key field value [field value ...]", "Sets fields; replies OK."},
    {"HGET", 3, kReadOnly | kFast, 1, 1, 1, hget, "hash", "key field", "One field, or nil."},
    {"HMGET", -3, kReadOnly | kFast, 1, 1, 1, hmget, "hash", "key field [field ...]",
     "Several fields; nil for missing ones."},
    {"HGETALL", 2, kReadOnly, 1, 1, 1, hgetall, "hash", "key",
     "Every field and value, in insertion order."},
    {"HKEYS", 2, kReadOnly, 1, 1, 1, hkeys, "hash", "key", "Every field name."},
    {"HVALS", 2, kReadOnly, 1, 1, 1, hvals, "hash", "key", "Every value."},
    {"HDEL", -3, kWrite | kFast, 1, 1, 1, hdel, "hash", "key field [field ...]",
     "Removes fields; replies the number removed. The key goes when no field is left."},
    {"HEXISTS", 3, kReadOnly | kFast, 1, 1, 1, hexists, "hash", "key field", "1 or 0."},
    {"HLEN", 2, kReadOnly | kFast, 1, 1, 1, hlen, "hash", "key", "Number of fields."},
  });
}

}  // namespace slipstream::server
