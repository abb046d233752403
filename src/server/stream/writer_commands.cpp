// SS.STREAM.WRITE, BEGIN, PUT, ATTR, END and CLOSE: the writer side of streams. A writer rank is
// bound to the connection that attached it.
#include <optional>
#include <utility>
#include <vector>

#include "server/commands/command_util.hpp"
#include "server/net/reply.hpp"
#include "server/net/session.hpp"
#include "server/shm/shm.hpp"
#include "server/store/keyspace.hpp"
#include "server/server.hpp"
#include "server/stream/stream_arguments.hpp"
#include "server/stream/stream_command_util.hpp"
#include "server/stream/stream_error.hpp"
#include "server/stream/stream_registry.hpp"

namespace slipstream::server {
namespace {

// Routes a writer's request to the incarnation its rank is attached to from this connection.
StreamRegistry::BoundHere writer_here(std::uint32_t rank, std::uint64_t session) {
  return [rank, session](const Stream& s) { return s.writer_bound_to(rank, session); };
}

// `chunks_on` gets CHUNKS-ON's node id, which is the writer's own, not the stream's.
WriterOptions parse_writer_options(const CommandContext& c, std::uint32_t writers,
                                   std::string& chunks_on) {
  WriterOptions options;
  options.config.writers = writers;
  for (std::size_t i = 5; i < c.argc(); i += 2) {
    const std::string_view option = c.arg(i);
    if (i + 1 >= c.argc()) {
      throw StreamError("option " + std::string(option) + " needs a value");
    }
    const std::string_view value = c.arg(i + 1);
    if (equals_nocase(option, "CHUNKS-ON")) {
      chunks_on = std::string(value);
    } else if (equals_nocase(option, "QUEUE")) {
      options.config.queue_limit = parse_count(value, "QUEUE", 1);
    } else if (equals_nocase(option, "EXPECT-GROUPS")) {
      options.config.expected_groups = parse_count(value, "EXPECT-GROUPS", 0);
    } else if (equals_nocase(option, "ON-WRITER-FAILURE")) {
      if (equals_nocase(value, "end")) {
        options.config.end_on_writer_failure = true;
      } else if (equals_nocase(value, "continue")) {
        options.config.end_on_writer_failure = false;
      } else {
        throw StreamError("ON-WRITER-FAILURE must be continue or end, got '" + std::string(value) +
                          "'");
      }
    } else if (equals_nocase(option, "STEP-TIMEOUT")) {
      options.step_timeout_ms = parse_milliseconds(value, "STEP-TIMEOUT");
    } else if (equals_nocase(option, "FIRST-STEP-PRECIOUS")) {
      if (equals_nocase(value, "yes")) {
        options.config.first_step_precious = true;
      } else if (equals_nocase(value, "no")) {
        options.config.first_step_precious = false;
      } else {
        throw StreamError("FIRST-STEP-PRECIOUS must be yes or no, got '" +
                          std::string(value.substr(0, 64)) + "'");
      }
    } else {
      throw StreamError("unknown option '" + std::string(option) +
                        "'; expected QUEUE, EXPECT-GROUPS, ON-WRITER-FAILURE, STEP-TIMEOUT, "
                        "FIRST-STEP-PRECIOUS or CHUNKS-ON");
    }
  }
  return options;
}

// CHUNKS-ON's member: another shard of this cluster (this one: none, the chunks come here).
std::optional<ChunkNode> find_chunk_node(const CommandContext& c, std::string_view id) {
  const Cluster* cluster = c.server.cluster();
  if (cluster == nullptr) throw StreamError("CHUNKS-ON is for cluster mode");
  const auto& nodes = cluster->nodes();
  for (std::size_t k = 0; k < nodes.size(); ++k) {
    if (nodes[k].id != id) continue;
    if (k == cluster->self_index()) return std::nullopt;
    return ChunkNode{k, nodes[k].id};
  }
  throw StreamError("CHUNKS-ON " + std::string(id) + " is not a member of this cluster");
}

// SS.STREAM.WRITE stream rank writers hostname [options]
Outcome write(CommandContext& c) {
  return reply_errors(c, [&] {
    const std::uint32_t rank = parse_rank(c.arg(2), "writer rank");
    const std::uint32_t writers = parse_count(c.arg(3), "writers", 1);
    const std::string hostname(c.arg(4));
    check_name(hostname, "hostname", kMaxHostName);
    std::string chunks_on;
    const WriterOptions options = parse_writer_options(c, writers, chunks_on);
    std::optional<ChunkNode> chunk_node;
    if (!chunks_on.empty()) chunk_node = find_chunk_node(c, chunks_on);
    c.server.streams().with_writer(c.arg(1), rank, [&](Stream& s) {
      s.attach_writer(rank, options, hostname, c.session.id());
      bind_session(c, s);
      if (chunk_node) s.set_chunk_node(rank, *chunk_node, c.session.id());
    });
    c.reply.simple("OK");
    return Outcome::kDone;
  });
}

// SS.STREAM.BEGIN stream rank step [TIMEOUT ms]
Outcome begin(CommandContext& c) {
  return reply_errors(c, [&] {
    const std::uint32_t rank = parse_rank(c.arg(2), "writer rank");
    const std::int64_t step = parse_step(c.arg(3));
    const std::int64_t timeout = parse_timeout_option(c, 4);
    const std::uint64_t session = c.session.id();
    Outcome outcome = Outcome::kDone;
    c.server.streams().with_existing(c.arg(1), writer_here(rank, session), [&](Stream& s) {
      if (s.begin(rank, step, session)) return;
      outcome = park(
          c, s,
          [rank, step, session](Stream& parked_on) -> std::optional<ReplyWriter> {
            if (!parked_on.begin(rank, step, session)) return std::nullopt;
            return [](ReplyBuffer& reply) { reply.simple("OK"); };
          },
          timeout);
    });
    if (outcome == Outcome::kDone) c.reply.simple("OK");
    return outcome;
  });
}

// Runs a writer's PUT, PUTSEG or ATTR for `step`; when it is refused, the writer's next END of the
// step is refused too (Stream::refuse), so a client may pipeline END behind its puts.
template <typename Body>
void guard_step(CommandContext& c, std::uint32_t rank, std::int64_t step, Body&& body) {
  try {
    body();
  } catch (const std::exception&) {
    try {
      c.server.streams().with_existing(c.arg(1), writer_here(rank, c.session.id()),
                                       [&](Stream& s) { s.refuse(rank, step); });
    } catch (const std::exception&) {  // no such stream or writer here: no step to guard
    }
    throw;
  }
}

// The chunk description shared by PUT and PUTSEG (arguments 4 to 8).
PutRequest parse_put(const CommandContext& c) {
  PutRequest request;
  request.component = std::string(c.arg(4));
  check_component_name(request.component);
  auto dtype = parse_dtype(c.arg(5));
  if (!dtype) {
    throw StreamError("unknown dtype '" + std::string(c.arg(5)) +
                      "'; expected FLOAT, DOUBLE, INT8, INT16, INT32, INT64, UINT8, UINT16 or "
                      "BOOL");
  }
  request.dtype = *dtype;
  request.global_extent = parse_extent(c.arg(6), "global extent");
  request.offset = parse_extent(c.arg(7), "offset");
  request.extent = parse_extent(c.arg(8), "extent");
  return request;
}

// PUT, PUTSEG and PUTREF's optional `ENCODED size` (arguments 10 and 11): the chunk's bytes are a
// codec frame of that size (docs/streams.md, "Operators").
void parse_encoded(const CommandContext& c, PutRequest& request) {
  if (c.argc() == 10) return;
  if (c.argc() != 12 || !equals_nocase(c.arg(10), "ENCODED")) {
    throw StreamError("syntax error: after the chunk, only ENCODED size");
  }
  request.encoded = parse_id(c.arg(11), "encoded size");
}

// PUT, PUTSEG and PUTREF: a chunk of a begun step. `complete` fills in where its bytes are from
// argument 9.
template <typename Complete>
Outcome put_chunk(CommandContext& c, Complete&& complete) {
  return reply_errors(c, [&] {
    const std::uint32_t rank = parse_rank(c.arg(2), "writer rank");
    const std::int64_t step = parse_step(c.arg(3));
    guard_step(c, rank, step, [&] {
      PutRequest request = parse_put(c);
      parse_encoded(c, request);
      complete(request);
      const std::uint64_t session = c.session.id();
      c.server.streams().with_existing(c.arg(1), writer_here(rank, session), [&](Stream& s) {
        s.put(rank, step, std::move(request), session, c.server.keyspace());
      });
    });
    c.reply.simple("OK");
    return Outcome::kDone;
  });
}

// SS.STREAM.PUT stream rank step component dtype global-extent offset extent bytes
Outcome put(CommandContext& c) {
  return put_chunk(c, [&](PutRequest& request) {
    request.bytes = std::move(c.args[9]);  // kept as the chunk: no copy
  });
}

// SS.STREAM.PUTSEG stream rank step component dtype global-extent offset extent segment: as PUT,
// the bytes being in a segment lent by SS.STREAM.SEGMENTS for this step and filled by the writer.
Outcome put_segment(CommandContext& c) {
  return put_chunk(c, [&](PutRequest& request) {
    request.segment = parse_id(c.arg(9), "segment id");
  });
}

// SS.STREAM.PUTREF stream rank step component dtype global-extent offset extent chunk-id: as PUT,
// the bytes being on the writer's chunk shard (CHUNKS-ON) under chunk-id (SS.CHUNKS.PUT there).
Outcome put_reference(CommandContext& c) {
  return put_chunk(c, [&](PutRequest& request) {
    request.remote = parse_id(c.arg(9), "chunk id");
  });
}

// A SEGMENTS reply: [[id, fresh, bytes] per segment, [dropped id...]], the memfd of each fresh
// segment passed alongside, in order. A segment may be larger than the chunk it was asked for
// (its size class; SegmentPool::size_class).
void reply_segments(CommandContext& c, const std::vector<SegmentPool::Lent>& lent,
                    const std::vector<std::uint64_t>& dropped) {
  for (const SegmentPool::Lent& l : lent) {
    if (l.fresh) c.reply.pass_fd(l.segment->fd(), l.segment);
  }
  c.reply.array(2);
  c.reply.array(lent.size());
  for (const SegmentPool::Lent& l : lent) {
    c.reply.array(3);
    c.reply.integer(static_cast<std::int64_t>(l.segment->id()));
    c.reply.integer(l.fresh ? 1 : 0);
    c.reply.integer(static_cast<std::int64_t>(l.segment->size()));
  }
  c.reply.array(dropped.size());
  for (std::uint64_t id : dropped) c.reply.integer(static_cast<std::int64_t>(id));
}

// SS.STREAM.SEGMENTS stream rank step size [size ...] -> [[id, fresh, bytes] per size,
// [dropped id...]]; the memfd of each fresh segment is passed alongside, in order; dropped: this
// writer's segments destroyed since its last call (to unmap). Needs SS.SHM.ATTACH (a Unix socket).
Outcome segments(CommandContext& c) {
  return reply_errors(c, [&] {
    const std::uint32_t rank = parse_rank(c.arg(2), "writer rank");
    const std::int64_t step = parse_step(c.arg(3));
    if (!c.session.shm) {
      throw StreamError("stream segments need shared memory: SS.SHM.ATTACH first (Unix socket)");
    }
    const std::vector<std::size_t> sizes = parse_segment_sizes(c, 4);
    const SegmentPool::Create create = segment_maker(c);
    const std::uint64_t session = c.session.id();
    std::vector<SegmentPool::Lent> lent;
    std::vector<std::uint64_t> dropped;
    c.server.streams().with_existing(c.arg(1), writer_here(rank, session), [&](Stream& s) {
      lent = s.lend_segments(rank, step, sizes, session, create, &dropped);
    });
    reply_segments(c, lent, dropped);
    return Outcome::kDone;
  });
}

// SS.STREAM.ATTR stream rank step path name type[:ELEMENT] value [value ...]
Outcome attr(CommandContext& c) {
  return reply_errors(c, [&] {
    const std::uint32_t rank = parse_rank(c.arg(2), "writer rank");
    Attribute attribute;
    attribute.step = parse_step(c.arg(3), /*allow_stream_level=*/true);
    guard_step(c, rank, attribute.step, [&] {
      attribute.path = std::string(c.arg(4));
      if (attribute.path != "/") check_component_name(attribute.path);
      attribute.name = std::string(c.arg(5));
      check_name(attribute.name, "attribute name", kMaxAttributeName);
      parse_attribute_value(c.arg(6), std::span<const Buffer>(c.args).subspan(7), attribute);
      const std::uint64_t session = c.session.id();
      c.server.streams().with_existing(c.arg(1), writer_here(rank, session), [&](Stream& s) {
        s.set_attribute(rank, std::move(attribute), session);
      });
    });
    c.reply.simple("OK");
    return Outcome::kDone;
  });
}

// SS.STREAM.END stream rank step [NEXT next-step [size ...]]. Plain: +OK. With NEXT, the writer
// also reserves its next step if a slot is free now (Stream::reserve), and, given sizes and
// shared memory, gets segments lent for it: [1 or 0 (reserved), SEGMENTS reply or nil]. A step
// it reserved is begun without a round trip (its first chunk, attribute or END uses it); a BEGIN
// of another step withdraws the reservation, as does closing or disconnecting, and a step only
// reservations held goes unseen by readers.
Outcome end(CommandContext& c) {
  return reply_errors(c, [&] {
    const std::uint32_t rank = parse_rank(c.arg(2), "writer rank");
    const std::int64_t step = parse_step(c.arg(3));
    std::optional<std::int64_t> next;
    std::vector<std::size_t> sizes;
    if (c.argc() > 4) {
      if (!equals_nocase(c.arg(4), "NEXT") || c.argc() < 6) {
        throw StreamError("expected NEXT next-step [size ...] after the step");
      }
      next = parse_step(c.arg(5));
      if (*next <= step) throw StreamError("NEXT must name a later step than " + std::to_string(step));
      if (c.argc() > 6) sizes = parse_segment_sizes(c, 6);
    }
    const std::uint64_t session = c.session.id();
    bool reserved = false;
    std::vector<SegmentPool::Lent> lent;
    std::vector<std::uint64_t> dropped;
    const bool lend = !sizes.empty() && c.session.shm;
    const SegmentPool::Create create = lend ? segment_maker(c) : SegmentPool::Create();
    c.server.streams().with_existing(c.arg(1), writer_here(rank, session), [&](Stream& s) {
      s.end(rank, step, session);
      if (next) {
        reserved = s.reserve(rank, *next, lend ? std::span<const std::size_t>(sizes)
                                               : std::span<const std::size_t>(),
                             session, lend ? &create : nullptr, &lent, &dropped);
      }
    });
    if (!next) {
      c.reply.simple("OK");
      return Outcome::kDone;
    }
    c.reply.array(2);
    c.reply.integer(reserved ? 1 : 0);
    if (reserved && lend && !lent.empty()) {
      reply_segments(c, lent, dropped);
    } else {
      c.reply.null();
    }
    return Outcome::kDone;
  });
}

// SS.STREAM.CLOSE stream rank [OPEN step]
Outcome close(CommandContext& c) {
  return reply_errors(c, [&] {
    const std::uint32_t rank = parse_rank(c.arg(2), "writer rank");
    std::optional<std::int64_t> open;
    if (c.argc() > 3) {
      if (c.argc() != 5 || !equals_nocase(c.arg(3), "OPEN")) {
        throw StreamError("expected OPEN step after the writer rank");
      }
      open = parse_step(c.arg(4));
    }
    const std::uint64_t session = c.session.id();
    c.server.streams().with_existing(c.arg(1), writer_here(rank, session),
                                     [&](Stream& s) { s.close_writer(rank, session, open); });
    c.reply.simple("OK");
    return Outcome::kDone;
  });
}

}  // namespace

// One table row per command, as in the other command files.
// clang-format off
void add_stream_writer_commands(std::vector<CommandSpec>& out) {
  out.insert(out.end(), {
    {"SS.STREAM.WRITE", -5, kWrite, 1, 1, 1, write, "stream",
     "stream rank writers hostname [QUEUE steps] [EXPECT-GROUPS groups] "
     "[ON-WRITER-FAILURE continue|end] [STEP-TIMEOUT ms] [FIRST-STEP-PRECIOUS yes|no] "
     "[CHUNKS-ON node-id]",
     "Attaches writer rank (of writers) on hostname to the stream, creating it: +OK. The rank is "
     "bound to this connection. FIRST-STEP-PRECIOUS yes (default no): the first step that "
     "completes is kept for the stream's life and handed first to every group that joins later. "
     "Every writer must give the same options but CHUNKS-ON. CHUNKS-ON (cluster mode): the "
     "writer keeps its chunks on that member (SS.CHUNKS.PUT) and names them here with "
     "SS.STREAM.PUTREF."},
    {"SS.STREAM.BEGIN", -4, kWrite | kBlocking, 1, 1, 1, begin, "stream",
     "stream rank step [TIMEOUT ms]",
     "Begins a step: +OK once it has a slot in the queue, or nil after ms milliseconds "
     "(0 = no limit)."},
    {"SS.STREAM.PUT", -10, kWrite | kDenyOom, 1, 1, 1, put, "stream",
     "stream rank step component dtype global-extent offset extent bytes [ENCODED size]",
     "Stores a chunk of a record component in a begun step (extents as 64,32,32): +OK. ENCODED: "
     "the bytes are a codec frame of size bytes (an operator's output), stored as they are and "
     "handed to readers with the size in the chunk table."},
    {"SS.STREAM.SEGMENTS", -5, kWrite | kDenyOom, 1, 1, 1, segments, "stream",
     "stream rank step size [size ...]",
     "Lends the writer shared-memory segments for the chunks of a begun step (SS.SHM.ATTACH "
     "first): [[id, fresh, bytes] per size, [ids dropped since]], the memfd of each fresh one "
     "passed alongside; a segment (bytes) may be larger than its chunk (size classes)."},
    {"SS.STREAM.PUTSEG", -10, kWrite, 1, 1, 1, put_segment, "stream",
     "stream rank step component dtype global-extent offset extent segment [ENCODED size]",
     "Stores a chunk whose bytes the writer put in a segment lent for this step: +OK."},
    {"SS.STREAM.PUTREF", -10, kWrite, 1, 1, 1, put_reference, "stream",
     "stream rank step component dtype global-extent offset extent chunk-id [ENCODED size]",
     "Cluster mode: names a chunk the writer stored on its CHUNKS-ON member (SS.CHUNKS.PUT there) "
     "as part of a begun step: +OK. The stream frees it there when the step is freed."},
    {"SS.STREAM.ATTR", -8, kWrite | kDenyOom, 1, 1, 1, attr, "stream",
     "stream rank step path name string|int|float|strings|ints|floats[:ELEMENT] value [value ...]",
     "Sets an attribute of the stream (step -1), a step (path /), a record or a component: +OK. "
     "ELEMENT, after an int or float type, is the writer's own element type (CHAR ... ULONGLONG, "
     "BOOL; FLOAT, DOUBLE, LONG_DOUBLE, ARR_DBL_7), given back to readers with the value."},
    {"SS.STREAM.END", -4, kWrite, 1, 1, 1, end, "stream",
     "stream rank step [NEXT next-step [size ...]]",
     "Ends a step for this writer; it becomes visible once every writer has ended it: +OK. With "
     "NEXT, also reserves the writer's next step if a slot is free now, with segments of the "
     "sizes lent for it: [1|0 reserved, SEGMENTS reply or nil]."},
    {"SS.STREAM.CLOSE", -3, kWrite, 1, 1, 1, close, "stream", "stream rank [OPEN step]",
     "The writer is done with the stream; readers get end once every writer has closed: +OK. "
     "OPEN: the writer closes inside that step (begun, on a reservation too, and not ended), "
     "which is aborted for every group."},
  });
}
// clang-format on

}  // namespace slipstream::server
