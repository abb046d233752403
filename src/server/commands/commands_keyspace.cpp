// Generic key commands: EXISTS, DEL, UNLINK, TYPE, RENAME, RENAMENX, COPY, KEYS, SCAN.
#include <charconv>

#include "server/commands/command_util.hpp"
#include "server/net/reply.hpp"
#include "server/server.hpp"

namespace slipstream::server {
namespace {

Outcome exists(CommandContext& c) {
  std::int64_t count = 0;
  for (std::size_t i = 1; i < c.argc(); ++i) count += c.server.keyspace().exists(c.arg(i)) ? 1 : 0;
  c.reply.integer(count);
  return Outcome::kDone;
}

Outcome del(CommandContext& c) {
  std::int64_t count = 0;
  for (std::size_t i = 1; i < c.argc(); ++i) count += c.server.keyspace().erase(c.arg(i)) ? 1 : 0;
  c.server.mark_dirty(static_cast<std::uint64_t>(count));
  c.reply.integer(count);
  return Outcome::kDone;
}

Outcome type(CommandContext& c) {
  ValuePtr value = c.server.keyspace().get(c.arg(1));
  c.reply.simple(value ? value_type_name(value->type()) : "none");
  return Outcome::kDone;
}

Outcome rename_impl(CommandContext& c, bool replace) {
  auto result = c.server.keyspace().rename(c.arg(1), c.arg(2), replace);
  switch (result) {
    case Keyspace::MoveResult::kNoSuchKey: c.reply.error("ERR no such key"); break;
    case Keyspace::MoveResult::kTargetExists: c.reply.integer(0); break;
    case Keyspace::MoveResult::kOverLimit: c.reply.error(kOomError); break;  // not from rename
    case Keyspace::MoveResult::kOk:
      c.server.mark_dirty();
      if (replace) {
        c.reply.simple("OK");
      } else {
        c.reply.integer(1);
      }
      break;
  }
  return Outcome::kDone;
}

Outcome rename(CommandContext& c) { return rename_impl(c, true); }
Outcome renamenx(CommandContext& c) { return rename_impl(c, false); }

Outcome copy(CommandContext& c) {
  bool replace = false;
  for (std::size_t i = 3; i < c.argc(); ++i) {
    if (equals_nocase(c.arg(i), "REPLACE")) {
      replace = true;
    } else if (equals_nocase(c.arg(i), "DB") && i + 1 < c.argc()) {
      auto db = parse_int(c.arg(++i));
      if (!db) {
        c.reply.error(kNotInteger);
        return Outcome::kDone;
      }
      if (*db != 0) {
        c.reply.error("ERR DB index is out of range");
        return Outcome::kDone;
      }
    } else {
      c.reply.error(kSyntaxError);
      return Outcome::kDone;
    }
  }
  if (c.arg(1) == c.arg(2)) {
    c.reply.error("ERR source and destination objects are the same");
    return Outcome::kDone;
  }
  auto result = c.server.keyspace().copy(c.arg(1), c.arg(2), replace);
  if (result == Keyspace::MoveResult::kOverLimit) {
    c.reply.error(kOomError);
    return Outcome::kDone;
  }
  if (result == Keyspace::MoveResult::kOk) c.server.mark_dirty();
  c.reply.integer(result == Keyspace::MoveResult::kOk ? 1 : 0);
  return Outcome::kDone;
}

Outcome keys(CommandContext& c) {
  auto found = c.server.keyspace().keys(c.arg(1));
  c.reply.array(found.size());
  for (const auto& key : found) c.reply.bulk(key);
  return Outcome::kDone;
}

std::optional<ValueType> parse_type_name(std::string_view name) {
  for (auto type : {ValueType::kString, ValueType::kTensor, ValueType::kHash, ValueType::kList,
                    ValueType::kModel, ValueType::kScript}) {
    if (equals_nocase(name, value_type_name(type))) return type;
  }
  return std::nullopt;
}

Outcome scan(CommandContext& c) {
  std::uint64_t cursor = 0;
  std::string_view text = c.arg(1);
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), cursor);
  if (ec != std::errc() || ptr != text.data() + text.size()) {
    c.reply.error("ERR invalid cursor");
    return Outcome::kDone;
  }
  std::size_t count = 10;
  std::string_view pattern;
  std::optional<ValueType> type;
  bool unknown_type = false;
  for (std::size_t i = 2; i < c.argc(); i += 2) {
    if (i + 1 >= c.argc()) {
      c.reply.error(kSyntaxError);
      return Outcome::kDone;
    }
    if (equals_nocase(c.arg(i), "COUNT")) {
      auto n = parse_int(c.arg(i + 1));
      if (!n) {
        c.reply.error(kNotInteger);
        return Outcome::kDone;
      }
      if (*n < 1) {
        c.reply.error(kSyntaxError);
        return Outcome::kDone;
      }
      count = static_cast<std::size_t>(*n);
    } else if (equals_nocase(c.arg(i), "MATCH")) {
      pattern = c.arg(i + 1);
      if (pattern == "*") pattern = {};
    } else if (equals_nocase(c.arg(i), "TYPE")) {
      type = parse_type_name(c.arg(i + 1));
      unknown_type = !type;
    } else {
      c.reply.error(kSyntaxError);
      return Outcome::kDone;
    }
  }
  auto page = c.server.keyspace().scan(cursor, count, pattern, type);
  if (unknown_type) page.keys.clear();  // Redis: an unknown TYPE matches nothing
  c.reply.array(2);
  c.reply.bulk(std::to_string(page.next_cursor));
  c.reply.array(page.keys.size());
  for (const auto& key : page.keys) c.reply.bulk(key);
  return Outcome::kDone;
}

}  // namespace

void add_keyspace_commands(std::vector<CommandSpec>& out) {
  out.insert(out.end(), {
    {"EXISTS", -2, kReadOnly | kFast, 1, -1, 1, exists, "keyspace", "key [key ...]",
     "Number of the given keys that exist (a key named twice counts twice)."},
    {"DEL", -2, kWrite, 1, -1, 1, del, "keyspace", "key [key ...]",
     "Removes keys; replies the number removed."},
    {"UNLINK", -2, kWrite | kFast, 1, -1, 1, del, "keyspace", "key [key ...]",
     "Removes keys; memory is freed when the last reader releases it."},
    {"TYPE", 2, kReadOnly | kFast, 1, 1, 1, type, "keyspace", "key",
     "string, hash, list, AI_TENSOR, or none."},
    {"RENAME", 3, kWrite, 1, 2, 1, rename, "keyspace", "key newkey",
     "Renames a key, replacing newkey; error if key is missing."},
    {"RENAMENX", 3, kWrite | kFast, 1, 2, 1, renamenx, "keyspace", "key newkey",
     "Renames only if newkey does not exist; replies 1 or 0."},
    {"COPY", -3, kWrite | kDenyOom, 1, 2, 1, copy, "keyspace",
     "source destination [DB 0] [REPLACE]",
     "Copies a value (bytes are shared until one side changes); replies 1 or 0."},
    {"KEYS", 2, kReadOnly, 0, 0, 0, keys, "keyspace", "pattern",
     "Every key matching a glob pattern."},
    {"SCAN", -2, kReadOnly, 0, 0, 0, scan, "keyspace",
     "cursor [MATCH pattern] [COUNT n] [TYPE type]",
     "Incremental iteration; a key present throughout is returned at least once."},
  });
}

}  // namespace slipstream::server
