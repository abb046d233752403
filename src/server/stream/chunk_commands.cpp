// SS.CHUNKS.PUT, GET, FREE and DROP: colocated chunks (cluster mode). A writer stores its chunks
// on its own node's shard and names them, by the ids given here, on its stream's shard
// (SS.STREAM.PUTREF); readers fetch them from here; the stream's shard frees them. Keyless, so
// they run on whichever shard receives them.
#include <span>
#include <string>
#include <vector>

#include "server/commands/command_util.hpp"
#include "server/net/reply.hpp"
#include "server/net/session.hpp"
#include "server/server.hpp"
#include "server/store/keyspace.hpp"
#include "server/stream/chunk_store.hpp"
#include "server/stream/stream_arguments.hpp"
#include "server/stream/stream_command_util.hpp"
#include "server/stream/stream_error.hpp"

namespace slipstream::server {
namespace {

std::vector<std::uint64_t> parse_chunk_ids(const CommandContext& c, std::size_t first) {
  std::vector<std::uint64_t> ids;
  for (std::size_t i = first; i < c.argc(); ++i) {
    auto id = parse_int(c.arg(i));
    if (!id || *id <= 0) {
      throw StreamError("chunk ids are positive integers, got '" + std::string(c.arg(i)) + "'");
    }
    ids.push_back(static_cast<std::uint64_t>(*id));
  }
  return ids;
}

// The most steps a writer may ask this shard to keep (its stream's queue limit).
constexpr std::uint32_t kMaxLimit = 1u << 16;

// SS.CHUNKS.PUT stream rank step limit bytes -> chunk id
Outcome put(CommandContext& c) {
  return reply_errors(c, [&] {
    ChunkStore::Writer writer{c.session.id(), std::string(c.arg(1)),
                              parse_rank(c.arg(2), "writer rank")};
    if (writer.stream.empty()) throw StreamError("stream name must not be empty");
    const std::int64_t step = parse_step(c.arg(3));
    const std::uint32_t limit = parse_count(c.arg(4), "limit", 1);
    if (limit > kMaxLimit) {
      throw StreamError("limit " + std::to_string(limit) + " is above " +
                        std::to_string(kMaxLimit) + " steps");
    }
    Buffer& bytes = c.args[5];
    Keyspace& keyspace = c.server.keyspace();
    std::optional<MemoryReservation> memory = keyspace.reserve(bytes.size());
    if (!memory) {
      throw StreamOutOfMemory("the chunk's " + std::to_string(bytes.size()) +
                              " bytes do not fit in maxmemory (" +
                              std::to_string(keyspace.used_memory()) + " of " +
                              std::to_string(keyspace.max_memory()) + " bytes used)");
    }
    ChunkStore& store = c.server.chunk_store();
    const std::uint64_t id =
        store.put(writer, step, limit, std::move(bytes), std::move(*memory));
    if (store.needs_close_hook(writer.session)) {
      c.session.on_close([&store, session = writer.session] { store.session_closed(session); });
    }
    c.reply.integer(static_cast<std::int64_t>(id));
    return Outcome::kDone;
  });
}

// SS.CHUNKS.GET id [id ...] -> one bulk string per chunk
Outcome get(CommandContext& c) {
  return reply_errors(c, [&] {
    const std::vector<std::uint64_t> ids = parse_chunk_ids(c, 1);
    const auto chunks = c.server.chunk_store().get(ids);
    c.reply.array(chunks.size());
    for (const auto& chunk : chunks) c.reply.bulk_shared(chunk, chunk->view());
    return Outcome::kDone;
  });
}

// SS.CHUNKS.FREE id [id ...] -> how many were held
Outcome free(CommandContext& c) {
  return reply_errors(c, [&] {
    const std::vector<std::uint64_t> ids = parse_chunk_ids(c, 1);
    c.reply.integer(static_cast<std::int64_t>(c.server.chunk_store().free(ids)));
    return Outcome::kDone;
  });
}

// SS.CHUNKS.DROP stream rank step [step ...] -> how many were held
Outcome drop(CommandContext& c) {
  return reply_errors(c, [&] {
    const std::uint32_t rank = parse_rank(c.arg(2), "writer rank");
    std::vector<std::int64_t> steps;
    for (std::size_t i = 3; i < c.argc(); ++i) steps.push_back(parse_step(c.arg(i)));
    c.reply.integer(static_cast<std::int64_t>(
        c.server.chunk_store().drop(std::string(c.arg(1)), rank, steps)));
    return Outcome::kDone;
  });
}

}  // namespace

// clang-format off
void add_stream_chunk_commands(std::vector<CommandSpec>& out) {
  out.insert(out.end(), {
    {"SS.CHUNKS.PUT", 6, kWrite | kDenyOom, 0, 0, 0, put, "stream",
     "stream rank step limit bytes",
     "Cluster mode: stores a chunk of a writer's step on this shard (its node's) and returns its "
     "id, to name on the stream's shard with SS.STREAM.PUTREF. The writer's chunks of steps "
     "older than its last limit go."},
    {"SS.CHUNKS.GET", -2, kReadOnly, 0, 0, 0, get, "stream", "id [id ...]",
     "The bytes of colocated chunks, one bulk string each."},
    {"SS.CHUNKS.FREE", -2, kWrite, 0, 0, 0, free, "stream", "id [id ...]",
     "Frees colocated chunks (the stream's shard sends it when their step is freed): how many "
     "were held."},
    {"SS.CHUNKS.DROP", -4, kWrite, 0, 0, 0, drop, "stream", "stream rank step [step ...]",
     "Frees a writer's colocated chunks of aborted steps and refuses later ones (the stream's "
     "shard sends it when the writer fails): how many were held."},
  });
}
// clang-format on

}  // namespace slipstream::server
