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
// What a chunk costs beyond its bytes (its entry and its place in its writer's window).
constexpr std::size_t kChunkOverhead = 128;

// The writer of an SS.CHUNKS.PUT or SEGMENTS: this connection, the stream, the rank.
ChunkStore::Writer parse_writer(const CommandContext& c) {
  ChunkStore::Writer writer{c.session.id(), std::string(c.arg(1)),
                            parse_rank(c.arg(2), "writer rank")};
  if (writer.stream.empty()) throw StreamError("stream name must not be empty");
  return writer;
}

std::uint32_t parse_limit(std::string_view text) {
  const std::uint32_t limit = parse_count(text, "limit", 1);
  if (limit > kMaxLimit) {
    throw StreamError("limit " + std::to_string(limit) + " is above " + std::to_string(kMaxLimit) +
                      " steps");
  }
  return limit;
}

// The connection's writers' windows go when it closes (once per connection).
void hook_store_close(CommandContext& c, ChunkStore& store) {
  const std::uint64_t session = c.session.id();
  if (store.needs_close_hook(session)) {
    c.session.on_close([&store, session] { store.session_closed(session); });
  }
}

// SS.CHUNKS.PUT stream rank step limit bytes -> chunk id
Outcome put(CommandContext& c) {
  return reply_errors(c, [&] {
    const ChunkStore::Writer writer = parse_writer(c);
    const std::int64_t step = parse_step(c.arg(3));
    const std::uint32_t limit = parse_limit(c.arg(4));
    Buffer& bytes = c.args[5];
    Keyspace& keyspace = c.server.keyspace();
    // The bookkeeping counts too, so that many tiny chunks cannot grow the server unchecked.
    std::optional<MemoryReservation> memory =
        keyspace.reserve(bytes.size() + kChunkOverhead + writer.stream.size());
    if (!memory) {
      throw StreamOutOfMemory("the chunk's " + std::to_string(bytes.size()) +
                              " bytes do not fit in maxmemory (" +
                              std::to_string(keyspace.used_memory()) + " of " +
                              std::to_string(keyspace.max_memory()) + " bytes used)");
    }
    ChunkStore& store = c.server.chunk_store();
    hook_store_close(c, store);
    const std::uint64_t id =
        store.put(writer, step, limit, std::move(bytes), std::move(*memory));
    c.reply.integer(static_cast<std::int64_t>(id));
    return Outcome::kDone;
  });
}

// SS.CHUNKS.SEGMENTS stream rank step limit size [size ...] -> [[chunk-id, segment-id, fresh]
// per size, [segment ids dropped since]], the memfd of each fresh segment passed alongside: a
// writer on this node writes its chunks into them and names the chunk ids on the stream's shard
// (a chunk id it does not name it frees). Needs SS.SHM.ATTACH (a Unix socket).
Outcome segments(CommandContext& c) {
  return reply_errors(c, [&] {
    const ChunkStore::Writer writer = parse_writer(c);
    const std::int64_t step = parse_step(c.arg(3));
    const std::uint32_t limit = parse_limit(c.arg(4));
    if (!c.session.shm) {
      throw StreamError("chunk segments need shared memory: SS.SHM.ATTACH first (Unix socket)");
    }
    const std::vector<std::size_t> sizes = parse_segment_sizes(c, 5);
    std::vector<std::uint64_t> dropped;
    ChunkStore& store = c.server.chunk_store();
    hook_store_close(c, store);  // first: lend creates the writer's state even when it fails
    const std::vector<ChunkStore::Lent> lent =
        store.lend(writer, step, limit, sizes, segment_maker(c), &dropped);
    for (const ChunkStore::Lent& l : lent) {
      if (l.lent.fresh) c.reply.pass_fd(l.lent.segment->fd(), l.lent.segment);
    }
    c.reply.array(2);
    c.reply.array(lent.size());
    for (const ChunkStore::Lent& l : lent) {
      c.reply.array(3);
      c.reply.integer(static_cast<std::int64_t>(l.id));
      c.reply.integer(static_cast<std::int64_t>(l.lent.segment->id()));
      c.reply.integer(l.lent.fresh ? 1 : 0);
    }
    c.reply.array(dropped.size());
    for (std::uint64_t id : dropped) c.reply.integer(static_cast<std::int64_t>(id));
    return Outcome::kDone;
  });
}

// SS.CHUNKS.GET id [id ...] -> one bulk string per chunk.
// SS.CHUNKS.VIEW (the same, shared memory attached): a chunk in a segment is [segment-id, bytes]
// with the segment's memfd passed alongside, in order; others are bulk strings.
Outcome get_chunks(CommandContext& c, bool view) {
  return reply_errors(c, [&] {
    const std::vector<std::uint64_t> ids = parse_chunk_ids(c, 1);
    if (view && !c.session.shm) {
      throw StreamError("SS.CHUNKS.VIEW needs shared memory: SS.SHM.ATTACH first (Unix socket)");
    }
    write_chunks(c, c.server.chunk_store().get(ids), view);
    return Outcome::kDone;
  });
}

Outcome get(CommandContext& c) { return get_chunks(c, false); }
Outcome view(CommandContext& c) { return get_chunks(c, true); }

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
    {"SS.CHUNKS.SEGMENTS", -6, kWrite | kDenyOom, 0, 0, 0, segments, "stream",
     "stream rank step limit size [size ...]",
     "Cluster mode, a writer on this shard's node (SS.SHM.ATTACH first): lends shared-memory "
     "segments for chunks of its step, a chunk id each: [[chunk-id, segment-id, fresh] per "
     "size, [segment ids dropped since]], the memfd of each fresh one passed alongside."},
    {"SS.CHUNKS.GET", -2, kReadOnly, 0, 0, 0, get, "stream", "id [id ...]",
     "The bytes of colocated chunks, one bulk string each."},
    {"SS.CHUNKS.VIEW", -2, kReadOnly, 0, 0, 0, view, "stream", "id [id ...]",
     "As SS.CHUNKS.GET, chunks in segments as [segment-id, bytes] with the memfd passed "
     "(SS.SHM.ATTACH first)."},
    {"SS.CHUNKS.FREE", -2, kWrite, 0, 0, 0, free, "stream", "id [id ...]",
     "Frees colocated chunks (the stream's shard sends it when their step is freed): how many "
     "were held."},
    {"SS.CHUNKS.DROP", -4, kWrite, 0, 0, 0, drop, "stream", "stream rank step [step ...]",
     "Frees a writer's colocated chunks of aborted steps (the stream's shard sends it when the "
     "writer fails): how many were held."},
  });
}
// clang-format on

}  // namespace slipstream::server
