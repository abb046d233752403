// Interoperability test with a real third-party client: hiredis (the C client SmartRedis builds on)
// against a `slipstream server` it starts itself. Checks RedisAI's tensor replies shape by shape,
// its error messages, that rejected writes leave the key unchanged, and pipelining.
// Exits 0 when every check passed; otherwise prints each failure and exits 1.
#include <hiredis/hiredis.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "support/server_process.hpp"

namespace {

struct ContextDeleter {
  void operator()(redisContext* context) const { redisFree(context); }
};
struct ReplyDeleter {
  void operator()(redisReply* reply) const { freeReplyObject(reply); }
};
using Context = std::unique_ptr<redisContext, ContextDeleter>;
using Reply = std::unique_ptr<redisReply, ReplyDeleter>;

int g_failures = 0;

void fail(const std::string& what) {
  std::fprintf(stderr, "FAIL: %s\n", what.c_str());
  ++g_failures;
}

bool check(bool condition, const std::string& what) {
  if (!condition) fail(what);
  return condition;
}

const char* type_name(int type) {
  switch (type) {
    case REDIS_REPLY_STRING:
      return "bulk string";
    case REDIS_REPLY_ARRAY:
      return "array";
    case REDIS_REPLY_INTEGER:
      return "integer";
    case REDIS_REPLY_NIL:
      return "nil";
    case REDIS_REPLY_STATUS:
      return "status";
    case REDIS_REPLY_ERROR:
      return "error";
    default:
      return "unknown";
  }
}

std::string describe(const redisReply* reply) {
  if (reply == nullptr) return "no reply";
  std::string text = type_name(reply->type);
  if (reply->type == REDIS_REPLY_STRING || reply->type == REDIS_REPLY_STATUS ||
      reply->type == REDIS_REPLY_ERROR) {
    std::string_view body(reply->str, std::min<size_t>(reply->len, 80));
    text += " \"" + std::string(body) + (reply->len > 80 ? "...\"" : "\"");
  } else if (reply->type == REDIS_REPLY_INTEGER) {
    text += " " + std::to_string(reply->integer);
  } else if (reply->type == REDIS_REPLY_ARRAY) {
    text += " of " + std::to_string(reply->elements);
  }
  return text;
}

Context connect_tcp(int port) {
  Context context(redisConnect("127.0.0.1", port));
  if (!context || context->err) {
    std::fprintf(stderr, "FAIL: cannot connect: %s\n", context ? context->errstr : "out of memory");
    std::exit(1);
  }
  return context;
}

Reply command_argv(redisContext* context, const std::vector<std::string>& args) {
  std::vector<const char*> argv;
  std::vector<size_t> lengths;
  for (const auto& arg : args) {
    argv.push_back(arg.data());
    lengths.push_back(arg.size());
  }
  return Reply(static_cast<redisReply*>(
      redisCommandArgv(context, static_cast<int>(argv.size()), argv.data(), lengths.data())));
}

bool is_bulk(const redisReply* reply, std::string_view expected) {
  return reply != nullptr && reply->type == REDIS_REPLY_STRING &&
         std::string_view(reply->str, reply->len) == expected;
}

bool is_status(const redisReply* reply, std::string_view expected) {
  return reply != nullptr && reply->type == REDIS_REPLY_STATUS &&
         std::string_view(reply->str, reply->len) == expected;
}

bool is_error(const redisReply* reply, std::string_view expected) {
  return reply != nullptr && reply->type == REDIS_REPLY_ERROR &&
         std::string_view(reply->str, reply->len) == expected;
}

bool is_integer(const redisReply* reply, long long expected) {
  return reply != nullptr && reply->type == REDIS_REPLY_INTEGER && reply->integer == expected;
}

/// Checks the exact RedisAI reply to `AI.TENSORGET key META BLOB`:
/// ["dtype", TYPE, "shape", [d1 ... dn], "blob", bytes], strings as bulk strings, dims integers.
void check_meta_blob(const redisReply* reply, std::string_view dtype,
                     const std::vector<long long>& shape, std::string_view blob,
                     const std::string& context) {
  if (!check(reply != nullptr && reply->type == REDIS_REPLY_ARRAY && reply->elements == 6,
             context + ": META BLOB: expected an array of 6, got " + describe(reply))) {
    return;
  }
  redisReply** e = reply->element;
  check(is_bulk(e[0], "dtype"),
        context + ": element 1: expected bulk \"dtype\", got " + describe(e[0]));
  check(is_bulk(e[1], dtype), context + ": element 2: expected bulk \"" + std::string(dtype) +
                                  "\", got " + describe(e[1]));
  check(is_bulk(e[2], "shape"),
        context + ": element 3: expected bulk \"shape\", got " + describe(e[2]));
  if (check(e[3]->type == REDIS_REPLY_ARRAY && e[3]->elements == shape.size(),
            context + ": element 4: expected an array of " + std::to_string(shape.size()) +
                " integers, got " + describe(e[3]))) {
    for (size_t i = 0; i < shape.size(); ++i) {
      check(is_integer(e[3]->element[i], shape[i]),
            context + ": dimension " + std::to_string(i) + ": expected integer " +
                std::to_string(shape[i]) + ", got " + describe(e[3]->element[i]));
    }
  }
  check(is_bulk(e[4], "blob"),
        context + ": element 5: expected bulk \"blob\", got " + describe(e[4]));
  check(is_bulk(e[5], blob), context + ": element 6: expected the " + std::to_string(blob.size()) +
                                 " blob bytes, got " + describe(e[5]));
}

std::string float_blob(const std::vector<float>& values) {
  std::string bytes(values.size() * sizeof(float), '\0');
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

void test_blob_round_trip(redisContext* context) {
  // Zero bytes and high bytes in the payload: it must travel as binary, not as text.
  const std::vector<float> values = {0.0f, 1.5f, -2.25f, 1e30f, -0.0f, 3.0f};
  const std::string blob = float_blob(values);
  Reply set(static_cast<redisReply*>(redisCommand(context, "AI.TENSORSET %s FLOAT %d %d BLOB %b",
                                                  "tensor:float", 2, 3, blob.data(), blob.size())));
  check(is_status(set.get(), "OK"),
        "TENSORSET FLOAT 2 3 BLOB: expected +OK, got " + describe(set.get()));

  Reply meta_blob(
      static_cast<redisReply*>(redisCommand(context, "AI.TENSORGET tensor:float META BLOB")));
  check_meta_blob(meta_blob.get(), "FLOAT", {2, 3}, blob, "FLOAT 2x3");

  Reply only_blob(
      static_cast<redisReply*>(redisCommand(context, "AI.TENSORGET tensor:float BLOB")));
  check(is_bulk(only_blob.get(), blob),
        "TENSORGET BLOB: expected the blob, got " + describe(only_blob.get()));

  Reply meta(static_cast<redisReply*>(redisCommand(context, "AI.TENSORGET tensor:float META")));
  if (check(meta && meta->type == REDIS_REPLY_ARRAY && meta->elements == 4,
            "TENSORGET META: expected an array of 4, got " + describe(meta.get()))) {
    check(is_bulk(meta->element[0], "dtype") && is_bulk(meta->element[1], "FLOAT") &&
              is_bulk(meta->element[2], "shape") && meta->element[3]->type == REDIS_REPLY_ARRAY &&
              meta->element[3]->elements == 2 && is_integer(meta->element[3]->element[0], 2) &&
              is_integer(meta->element[3]->element[1], 3),
          "TENSORGET META: expected [\"dtype\", \"FLOAT\", \"shape\", [2, 3]]");
  }

  Reply exists(
      static_cast<redisReply*>(redisCommand(context, "EXISTS tensor:float nokey tensor:float")));
  check(is_integer(exists.get(), 2),
        "EXISTS on a tensor: expected 2, got " + describe(exists.get()));
  Reply type(static_cast<redisReply*>(redisCommand(context, "TYPE tensor:float")));
  check(is_status(type.get(), "AI_TENSOR"),
        "TYPE of a tensor: expected AI_TENSOR, got " + describe(type.get()));
}

void test_every_dtype(redisContext* context) {
  struct Dtype {
    const char* name;
    size_t element_size;
  };
  const Dtype dtypes[] = {{"FLOAT", 4}, {"DOUBLE", 8}, {"INT8", 1},   {"INT16", 2}, {"INT32", 4},
                          {"INT64", 8}, {"UINT8", 1},  {"UINT16", 2}, {"BOOL", 1}};
  for (const auto& dtype : dtypes) {
    const long long count = 5;
    std::string blob(count * dtype.element_size, '\0');
    for (size_t i = 0; i < blob.size(); ++i) {
      blob[i] = static_cast<char>(std::string_view(dtype.name) == "BOOL" ? (i % 2) : (i * 37 + 1));
    }
    std::string key = std::string("tensor:") + dtype.name;
    Reply set(command_argv(context, {"AI.TENSORSET", key, dtype.name, "5", "BLOB", blob}));
    check(is_status(set.get(), "OK"),
          std::string("TENSORSET ") + dtype.name + ": expected +OK, got " + describe(set.get()));
    Reply get(command_argv(context, {"AI.TENSORGET", key, "META", "BLOB"}));
    check_meta_blob(get.get(), dtype.name, {count}, blob, dtype.name);
  }
}

void test_values(redisContext* context) {
  Reply set(static_cast<redisReply*>(
      redisCommand(context, "AI.TENSORSET tensor:values FLOAT 2 2 VALUES 1 2.5 -3 4")));
  check(is_status(set.get(), "OK"), "TENSORSET VALUES: expected +OK, got " + describe(set.get()));
  Reply values(
      static_cast<redisReply*>(redisCommand(context, "AI.TENSORGET tensor:values VALUES")));
  // RedisAI replies floating-point values as doubles, which RESP2 carries as bulk strings.
  const char* expected[] = {"1", "2.5", "-3", "4"};
  if (check(values && values->type == REDIS_REPLY_ARRAY && values->elements == 4,
            "TENSORGET VALUES: expected an array of 4, got " + describe(values.get()))) {
    for (size_t i = 0; i < 4; ++i) {
      check(is_bulk(values->element[i], expected[i]),
            "TENSORGET VALUES: element " + std::to_string(i) + ": expected bulk \"" + expected[i] +
                "\", got " + describe(values->element[i]));
    }
  }
  // The blob of a VALUES tensor is the row-major float32 bytes.
  Reply blob(static_cast<redisReply*>(redisCommand(context, "AI.TENSORGET tensor:values BLOB")));
  check(
      is_bulk(blob.get(), float_blob({1.0f, 2.5f, -3.0f, 4.0f})),
      "TENSORGET BLOB of a VALUES tensor: expected 16 float32 bytes, got " + describe(blob.get()));

  Reply set_int(static_cast<redisReply*>(
      redisCommand(context, "AI.TENSORSET tensor:ints INT64 3 VALUES 7 -8 9000000000")));
  check(is_status(set_int.get(), "OK"),
        "TENSORSET INT64 VALUES: expected +OK, got " + describe(set_int.get()));
  Reply ints(
      static_cast<redisReply*>(redisCommand(context, "AI.TENSORGET tensor:ints META VALUES")));
  if (check(ints && ints->type == REDIS_REPLY_ARRAY && ints->elements == 6,
            "TENSORGET META VALUES: expected an array of 6, got " + describe(ints.get()))) {
    check(is_bulk(ints->element[0], "dtype") && is_bulk(ints->element[1], "INT64") &&
              is_bulk(ints->element[2], "shape") && is_bulk(ints->element[4], "values"),
          "TENSORGET META VALUES: expected dtype/INT64/shape/.../values");
    const redisReply* list = ints->element[5];
    check(list->type == REDIS_REPLY_ARRAY && list->elements == 3 &&
              is_integer(list->element[0], 7) && is_integer(list->element[1], -8) &&
              is_integer(list->element[2], 9000000000LL),
          "TENSORGET META VALUES: INT64 values must be the integers [7, -8, 9000000000], got " +
              describe(list));
  }
}

void test_errors_leave_key_unchanged(redisContext* context) {
  const std::string original = float_blob({1.0f, 2.0f, 3.0f, 4.0f});
  Reply set(static_cast<redisReply*>(redisCommand(
      context, "AI.TENSORSET tensor:kept FLOAT 4 BLOB %b", original.data(), original.size())));
  check(is_status(set.get(), "OK"),
        "TENSORSET tensor:kept: expected +OK, got " + describe(set.get()));

  const std::string short_blob(15, '\x01');
  struct Case {
    std::vector<std::string> args;
    const char* error;
  };
  const std::vector<Case> cases = {
      {{"AI.TENSORSET", "tensor:kept", "FLOATX", "4", "BLOB", original}, "ERR invalid data type"},
      {{"AI.TENSORSET", "tensor:kept", "FLOAT", "-4", "BLOB", original},
       "ERR invalid or negative value found in tensor shape"},
      {{"AI.TENSORSET", "tensor:kept", "FLOAT", "0", "BLOB", ""},
       "ERR invalid or negative value found in tensor shape"},
      {{"AI.TENSORSET", "tensor:kept", "FLOAT", "x", "BLOB", original},
       "ERR invalid or negative value found in tensor shape"},
      {{"AI.TENSORSET", "tensor:kept", "FLOAT", "4", "BLOB", short_blob},
       "ERR data length does not match tensor shape and type"},
      {{"AI.TENSORSET", "tensor:kept", "FLOAT", "2", "2", "BLOB", original + "x"},
       "ERR data length does not match tensor shape and type"},
  };
  for (const auto& c : cases) {
    Reply reply(command_argv(context, c.args));
    check(is_error(reply.get(), c.error), "TENSORSET " + c.args[2] + " " + c.args[3] +
                                              ": expected error \"" + c.error + "\", got " +
                                              describe(reply.get()));
    Reply after(
        static_cast<redisReply*>(redisCommand(context, "AI.TENSORGET tensor:kept META BLOB")));
    check_meta_blob(after.get(), "FLOAT", {4}, original,
                    "tensor:kept after a rejected TENSORSET (" + std::string(c.error) + ")");
  }

  Reply missing(
      static_cast<redisReply*>(redisCommand(context, "AI.TENSORGET no:such:key META BLOB")));
  check(is_error(missing.get(), "ERR tensor key is empty or in a different shard"),
        "TENSORGET of a missing key: expected \"ERR tensor key is empty or in a different shard\", "
        "got " +
            describe(missing.get()));
  Reply exists(static_cast<redisReply*>(redisCommand(context, "EXISTS no:such:key")));
  check(is_integer(exists.get(), 0), "a rejected TENSORGET must not create the key");

  Reply string_set(static_cast<redisReply*>(redisCommand(context, "SET plain:string x")));
  Reply wrong_type(
      static_cast<redisReply*>(redisCommand(context, "AI.TENSORGET plain:string META")));
  check(is_error(wrong_type.get(),
                 "WRONGTYPE Operation against a key holding the wrong kind of value"),
        "TENSORGET of a string key: expected WRONGTYPE, got " + describe(wrong_type.get()));
}

/// 1000 commands written before any reply is read: TENSORSETs and TENSORGETs of distinct keys,
/// interleaved, so each GET depends on the SET just before it in the same pipeline.
void test_pipelining(redisContext* context) {
  const int kCommands = 1000;
  for (int i = 0; i < kCommands; ++i) {
    std::string key = "pipe:" + std::to_string(i / 2);
    if (i % 2 == 0) {
      int64_t value = static_cast<int64_t>(i) * 1000003;
      redisAppendCommand(context, "AI.TENSORSET %s INT64 1 BLOB %b", key.c_str(), &value,
                         sizeof value);
    } else {
      redisAppendCommand(context, "AI.TENSORGET %s BLOB", key.c_str());
    }
  }
  int good = 0;
  for (int i = 0; i < kCommands; ++i) {
    void* raw = nullptr;
    if (redisGetReply(context, &raw) != REDIS_OK) {
      fail("pipelining: connection error after " + std::to_string(i) +
           " replies: " + context->errstr);
      return;
    }
    Reply reply(static_cast<redisReply*>(raw));
    bool ok;
    if (i % 2 == 0) {
      ok = is_status(reply.get(), "OK");
    } else {
      int64_t value = static_cast<int64_t>(i - 1) * 1000003;
      ok = is_bulk(reply.get(),
                   std::string_view(reinterpret_cast<const char*>(&value), sizeof value));
    }
    if (!ok && good == i) {
      fail("pipelining: reply " + std::to_string(i) + " is wrong: " + describe(reply.get()));
    }
    if (ok) ++good;
  }
  check(good == kCommands, "pipelining: " + std::to_string(good) + " of " +
                               std::to_string(kCommands) + " replies as expected");
}

void test_large_blob(redisContext* context) {
  const size_t kBytes = 16u << 20;  // 16 MiB, as the benchmark's largest tensor
  std::string blob(kBytes, '\0');
  for (size_t i = 0; i < kBytes; ++i) blob[i] = static_cast<char>((i * 131) >> 3);
  Reply set(
      static_cast<redisReply*>(redisCommand(context, "AI.TENSORSET tensor:big UINT8 %d BLOB %b",
                                            static_cast<int>(kBytes), blob.data(), blob.size())));
  check(is_status(set.get(), "OK"),
        "TENSORSET of 16 MiB: expected +OK, got " + describe(set.get()));
  Reply get(static_cast<redisReply*>(redisCommand(context, "AI.TENSORGET tensor:big BLOB")));
  check(is_bulk(get.get(), blob), "TENSORGET of 16 MiB: bytes differ, got " + describe(get.get()));
}

void test_unix_socket(const std::string& path) {
  Context context(redisConnectUnix(path.c_str()));
  if (!check(context && !context->err, "cannot connect to the Unix socket " + path)) return;
  Reply get(
      static_cast<redisReply*>(redisCommand(context.get(), "AI.TENSORGET tensor:float META BLOB")));
  check_meta_blob(get.get(), "FLOAT", {2, 3}, float_blob({0.0f, 1.5f, -2.25f, 1e30f, -0.0f, 3.0f}),
                  "over the Unix socket");
}

}  // namespace

int main() {
  slipstream::testing::ServerProcess server;
  Context context = connect_tcp(server.port());

  test_blob_round_trip(context.get());
  test_every_dtype(context.get());
  test_values(context.get());
  test_errors_leave_key_unchanged(context.get());
  test_pipelining(context.get());
  test_large_blob(context.get());
  test_unix_socket(server.unix_socket());

  if (g_failures > 0) {
    std::fprintf(stderr, "%d check(s) failed\n", g_failures);
    return 1;
  }
  std::printf("PASS: hiredis %d.%d.%d against slipstream\n", HIREDIS_MAJOR, HIREDIS_MINOR,
              HIREDIS_PATCH);
  return 0;
}
