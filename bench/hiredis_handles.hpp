// Owning handles for hiredis objects, shared by the benchmarks that drive redis-server (and
// slipstream) through hiredis.
#pragma once

#include <hiredis/hiredis.h>

#include <memory>

namespace slipstream::bench {

struct ContextDeleter {
  void operator()(redisContext* context) const { redisFree(context); }
};
struct ReplyDeleter {
  void operator()(redisReply* reply) const { freeReplyObject(reply); }
};
/// A connection, freed with redisFree.
using HiredisContext = std::unique_ptr<redisContext, ContextDeleter>;
/// A reply, freed with freeReplyObject.
using HiredisReply = std::unique_ptr<redisReply, ReplyDeleter>;

}  // namespace slipstream::bench
