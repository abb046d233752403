// SS.STREAM.JOIN, NEXT, GET, RELEASE, LEAVE and INFO: the reader side of streams. A reader
// (group, rank) is bound to the connection that joined it.
#include <memory>
#include <optional>
#include <utility>

#include "server/commands/command_util.hpp"
#include "server/net/reply.hpp"
#include "server/net/session.hpp"
#include "server/server.hpp"
#include "server/stream/stream_arguments.hpp"
#include "server/stream/stream_command_util.hpp"
#include "server/stream/stream_error.hpp"
#include "server/stream/stream_registry.hpp"

namespace slipstream::server {
namespace {

// openPMD-api's default chunk distribution.
constexpr std::string_view kDefaultStrategy = "hostname_binpacking_slicedataset";

// Routes a reader's request to the incarnation it joined from this connection.
StreamRegistry::BoundHere reader_here(const std::string& group, std::uint32_t rank,
                                      std::uint64_t session) {
  return
      [group, rank, session](const Stream& s) { return s.reader_bound_to(group, rank, session); };
}

std::string parse_group(std::string_view text) {
  check_name(text, "group name", kMaxGroupName);
  return std::string(text);
}

stream::StepDistribution parse_distribution(std::string_view value) {
  for (const stream::StepDistribution distribution :
       {stream::StepDistribution::kAll, stream::StepDistribution::kRoundRobin,
        stream::StepDistribution::kOnDemand}) {
    if (equals_nocase(value, stream::distribution_name(distribution))) return distribution;
  }
  throw StreamError("DISTRIBUTION must be all, round_robin or on_demand, got '" +
                    std::string(value.substr(0, 64)) + "'");
}

JoinOptions parse_join_options(const CommandContext& c, std::uint32_t size) {
  JoinOptions options;
  options.config.size = size;
  std::string_view strategy = kDefaultStrategy;
  for (std::size_t i = 6; i < c.argc(); i += 2) {
    const std::string_view option = c.arg(i);
    if (i + 1 >= c.argc()) throw StreamError("option " + std::string(option) + " needs a value");
    const std::string_view value = c.arg(i + 1);
    if (equals_nocase(option, "POLICY")) {
      if (equals_nocase(value, "block")) {
        options.config.policy = stream::QueuePolicy::kBlock;
      } else if (equals_nocase(value, "discard")) {
        options.config.policy = stream::QueuePolicy::kDiscard;
      } else {
        throw StreamError("POLICY must be block or discard, got '" + std::string(value) + "'");
      }
    } else if (equals_nocase(option, "START")) {
      if (equals_nocase(value, "oldest")) {
        options.config.start = stream::StartAt::kOldest;
      } else if (equals_nocase(value, "newest")) {
        options.config.start = stream::StartAt::kNewest;
      } else {
        throw StreamError("START must be oldest or newest, got '" + std::string(value) + "'");
      }
    } else if (equals_nocase(option, "STRATEGY")) {
      strategy = value;
    } else if (equals_nocase(option, "DISTRIBUTION")) {
      options.config.distribution = parse_distribution(value);
    } else {
      throw StreamError("unknown option '" + std::string(option) +
                        "'; expected POLICY, START, STRATEGY or DISTRIBUTION");
    }
  }
  options.strategy = stream::ChunkStrategy::parse(strategy).name();  // StrategyError lists names
  return options;
}

void write_rank_names(ReplyBuffer& reply, const RankNames& names) {
  reply.array(names.size());
  for (const auto& [rank, host] : names) {
    reply.array(2);
    reply.integer(rank);
    reply.bulk(host);
  }
}

// [step, path, name, type, value] and, when the writer declared one, its element type (readers
// that do not know it read the first five).
void write_attribute(ReplyBuffer& reply, const Attribute& attribute) {
  reply.array(attribute.element.empty() ? 5 : 6);
  reply.integer(attribute.step);
  reply.bulk(attribute.path);
  reply.bulk(attribute.name);
  reply.bulk(attribute_type_name(attribute.type));
  switch (attribute.type) {
    case AttributeType::kString:
      reply.bulk(attribute.strings.at(0));
      break;
    case AttributeType::kInt:
      reply.integer(attribute.ints.at(0));
      break;
    case AttributeType::kFloat:
      reply.double_value(attribute.floats.at(0));
      break;
    case AttributeType::kStrings:
      reply.array(attribute.strings.size());
      for (const auto& value : attribute.strings) reply.bulk(value);
      break;
    case AttributeType::kInts:
      reply.array(attribute.ints.size());
      for (auto value : attribute.ints) reply.integer(value);
      break;
    case AttributeType::kFloats:
      reply.array(attribute.floats.size());
      for (auto value : attribute.floats) reply.double_value(value);
      break;
  }
  if (!attribute.element.empty()) reply.bulk(attribute.element);
}

// A chunk row is [id, source rank, offset, extent], then for a colocated chunk (cluster mode)
// [member node id, id there] saying where to fetch it (SS.CHUNKS.GET), then for an encoded chunk
// its frame size (an integer: the bytes to fetch, which the reader decodes).
void write_component(ReplyBuffer& reply, const ComponentData& component,
                     const std::vector<std::pair<std::string, std::uint64_t>>& remote) {
  reply.array(4);
  reply.bulk(component.name);
  reply.bulk(dtype_name(component.dtype));
  reply.bulk(format_extent(component.global_extent));
  reply.array(component.chunks.size());
  for (std::size_t i = 0; i < component.chunks.size(); ++i) {
    const stream::Chunk& chunk = component.chunks[i];
    const std::uint32_t id = component.chunk_ids[i];
    const bool away = id < remote.size() && remote[id].second != 0;
    const std::uint64_t encoded = component.encoded.empty() ? 0 : component.encoded[i];
    reply.array(4 + (away ? 1 : 0) + (encoded != 0 ? 1 : 0));
    reply.integer(id);
    reply.integer(chunk.source_rank);
    reply.bulk(format_extent(chunk.offset));
    reply.bulk(format_extent(chunk.extent));
    if (away) {
      reply.array(2);
      reply.bulk(remote[id].first);
      reply.integer(static_cast<std::int64_t>(remote[id].second));
    }
    if (encoded != 0) reply.integer(static_cast<std::int64_t>(encoded));
  }
}

// The most chunk descriptors one NEXT ... MAP reply passes. With MAP alone, a step with more
// segment chunks passes none; with MAP CACHED, the chunks past the limit whose segments the
// connection does not map yet are left out. Readers ask for those with SS.STREAM.VIEW.
constexpr std::size_t kMappedChunksMax = 64;

// How NEXT answers a step's chunks in writer segments.
struct MapMode {
  bool map = false;                      // MAP: list them, their descriptors passed alongside
  std::shared_ptr<ShmSession> cached;    // MAP CACHED: not again those the connection maps
};

// Which of a step's chunks a MAP reply lists (by chunk id), and whether each one's descriptor
// is passed with it; passing recorded in `mode.cached`.
std::vector<std::pair<std::size_t, bool>> mapped_chunks(const StepDelivery& delivery,
                                                        const MapMode& mode) {
  std::vector<std::pair<std::size_t, bool>> listed;
  if (!mode.map || delivery.kind != stream::Delivery::Kind::kStep) return listed;
  std::size_t passed = 0;
  for (std::size_t id = 0; id < delivery.segments.size(); ++id) {
    const auto& segment = delivery.segments[id];
    if (!segment) continue;
    if (mode.cached && mode.cached->was_passed(segment->id())) {
      listed.emplace_back(id, false);
    } else if (passed < kMappedChunksMax) {
      listed.emplace_back(id, true);
      ++passed;
      if (mode.cached) mode.cached->note_passed(segment->id());
    } else if (!mode.cached) {
      return {};  // MAP alone: all or none
    }
  }
  return listed;
}

// ["step", step, readers, writers, strategy, attributes, components], ["skipped", step, reason]
// or ["end"]. With MAP (shared memory attached), a step gets an eighth element: [chunk-id,
// segment-id, bytes] for each chunk in a writer segment, whose descriptors are passed alongside
// in that order, so that a reader on the node loads its share without another round trip; and a
// ninth: the stream's queue limit, which tells the reader how many steps a segment may go unused
// before its writer lends it again (how long to keep its mapping). With MAP CACHED, the entries
// are [chunk-id, segment-id, bytes, passed]: passed 0 names a segment whose descriptor this
// connection was passed before and has not said it dropped (no descriptor comes with it).
void write_delivery(ReplyBuffer& reply, const StepDelivery& delivery, const MapMode& mode) {
  const std::vector<std::pair<std::size_t, bool>> listed = mapped_chunks(delivery, mode);
  for (const auto& [id, passed] : listed) {
    if (passed) reply.pass_fd(delivery.segments[id]->fd(), delivery.segments[id]);
  }
  const bool map = mode.map;
  switch (delivery.kind) {
    case stream::Delivery::Kind::kStep:
      reply.array(map ? 9 : 7);
      reply.bulk("step");
      reply.integer(delivery.step);
      write_rank_names(reply, delivery.readers);
      write_rank_names(reply, delivery.writers);
      reply.bulk(delivery.strategy);
      reply.array(delivery.attributes.size());
      for (const Attribute& attribute : delivery.attributes) write_attribute(reply, attribute);
      reply.array(delivery.components.size());
      for (const ComponentData& component : delivery.components) {
        write_component(reply, component, delivery.remote);
      }
      if (map) {
        reply.array(listed.size());
        for (const auto& [id, passed] : listed) {
          reply.array(mode.cached ? 4 : 3);
          reply.integer(static_cast<std::int64_t>(id));
          reply.integer(static_cast<std::int64_t>(delivery.segments[id]->id()));
          reply.integer(static_cast<std::int64_t>(delivery.segments[id]->size()));
          if (mode.cached) reply.integer(passed ? 1 : 0);
        }
        reply.integer(static_cast<std::int64_t>(delivery.queue_limit));
      }
      break;
    case stream::Delivery::Kind::kSkipped:
      reply.array(3);
      reply.bulk("skipped");
      reply.integer(delivery.step);
      reply.bulk(delivery.reason);
      break;
    case stream::Delivery::Kind::kEnd:
    case stream::Delivery::Kind::kWait:  // never handed out
      reply.array(1);
      reply.bulk("end");
      break;
  }
}

// SS.STREAM.JOIN stream group rank size hostname [POLICY p] [START s] [STRATEGY name]
//                [DISTRIBUTION all|round_robin|on_demand]
Outcome join(CommandContext& c) {
  return reply_errors(c, [&] {
    const std::string group = parse_group(c.arg(2));
    const std::uint32_t rank = parse_rank(c.arg(3), "reader rank");
    const std::uint32_t size = parse_count(c.arg(4), "size", 1);
    const std::string hostname(c.arg(5));
    check_name(hostname, "hostname", kMaxHostName);
    const JoinOptions options = parse_join_options(c, size);
    c.server.streams().with_current(c.arg(1), [&](Stream& s) {
      s.join(group, rank, options, hostname, c.session.id());
      bind_session(c, s);
    });
    c.reply.simple("OK");
    return Outcome::kDone;
  });
}

// SS.STREAM.NEXT stream group rank [RELEASE step] [TIMEOUT ms] [MAP [CACHED] [DROPPED id...]]
Outcome next(CommandContext& c) {
  return reply_errors(c, [&] {
    const std::string group = parse_group(c.arg(2));
    const std::uint32_t rank = parse_rank(c.arg(3), "reader rank");
    std::int64_t timeout = 0;
    std::optional<std::int64_t> releasing;
    MapMode mode;
    std::vector<std::uint64_t> dropped;
    for (std::size_t i = 4; i < c.argc(); ++i) {
      if (equals_nocase(c.arg(i), "RELEASE") && i + 1 < c.argc() && !releasing) {
        releasing = parse_step(c.arg(++i));
      } else if (equals_nocase(c.arg(i), "TIMEOUT") && i + 1 < c.argc()) {
        timeout = parse_milliseconds(c.arg(++i), "TIMEOUT");
      } else if (equals_nocase(c.arg(i), "MAP")) {
        if (!c.session.shm) {
          throw StreamError("MAP needs shared memory: SS.SHM.ATTACH first (Unix socket)");
        }
        mode.map = true;
      } else if (mode.map && equals_nocase(c.arg(i), "CACHED")) {
        mode.cached = c.session.shm;
      } else if (mode.cached && equals_nocase(c.arg(i), "DROPPED")) {
        // The segments whose mappings the reader let go: the rest of the arguments.
        while (++i < c.argc()) dropped.push_back(parse_id(c.arg(i), "segment id"));
      } else {
        throw StreamError("syntax error: expected RELEASE step, TIMEOUT ms, MAP, MAP CACHED or "
                          "DROPPED ids after the arguments, got '" + std::string(c.arg(i)) + "'");
      }
    }
    for (std::uint64_t segment : dropped) mode.cached->forget_passed(segment);
    const std::uint64_t session = c.session.id();
    std::optional<StepDelivery> delivery;
    Outcome outcome = Outcome::kDone;
    c.server.streams().with_existing(c.arg(1), reader_here(group, rank, session), [&](Stream& s) {
      // The step the reader is done with, in the same request: one reply instead of RELEASE's
      // +OK, which would wake the reader once more while its NEXT waits.
      if (releasing) s.release(group, rank, *releasing, session);
      delivery = s.next(group, rank, session);
      if (delivery) return;
      outcome = park(
          c, s,
          [group, rank, session, mode](Stream& parked_on) -> std::optional<ReplyWriter> {
            auto ready = parked_on.next(group, rank, session);
            if (!ready) return std::nullopt;
            auto shared = std::make_shared<const StepDelivery>(std::move(*ready));
            // Runs on the reader's connection's thread, like the handler (mode.cached is its).
            return [shared, mode](ReplyBuffer& reply) { write_delivery(reply, *shared, mode); };
          },
          timeout);
    });
    if (delivery) write_delivery(c.reply, *delivery, mode);
    return outcome;
  });
}

// SS.STREAM.GET stream group rank step id... -> one bulk string per chunk.
// SS.STREAM.VIEW (same arguments, shared memory attached): a chunk in a writer segment is
// [segment-id, bytes] with the segment's memfd passed alongside, in order; others are bulk strings.
Outcome get_chunks(CommandContext& c, bool view) {
  return reply_errors(c, [&] {
    const std::string group = parse_group(c.arg(2));
    const std::uint32_t rank = parse_rank(c.arg(3), "reader rank");
    const std::int64_t step = parse_step(c.arg(4));
    std::vector<std::uint64_t> ids;
    for (std::size_t i = 5; i < c.argc(); ++i) ids.push_back(parse_rank(c.arg(i), "chunk id"));
    const std::uint64_t session = c.session.id();
    std::vector<ChunkBytes> chunks;
    c.server.streams().with_existing(c.arg(1), reader_here(group, rank, session), [&](Stream& s) {
      chunks = s.get(group, rank, step, ids, session);
    });
    const bool by_descriptor = view && c.session.shm;
    if (view && !by_descriptor) {
      throw StreamError("SS.STREAM.VIEW needs shared memory: SS.SHM.ATTACH first (Unix socket)");
    }
    write_chunks(c, chunks, by_descriptor);
    return Outcome::kDone;
  });
}

Outcome get(CommandContext& c) { return get_chunks(c, false); }
Outcome view(CommandContext& c) { return get_chunks(c, true); }

// SS.STREAM.RELEASE stream group rank step
Outcome release(CommandContext& c) {
  return reply_errors(c, [&] {
    const std::string group = parse_group(c.arg(2));
    const std::uint32_t rank = parse_rank(c.arg(3), "reader rank");
    const std::int64_t step = parse_step(c.arg(4));
    const std::uint64_t session = c.session.id();
    c.server.streams().with_existing(c.arg(1), reader_here(group, rank, session),
                                     [&](Stream& s) { s.release(group, rank, step, session); });
    c.reply.simple("OK");
    return Outcome::kDone;
  });
}

// SS.STREAM.LEAVE stream group rank
Outcome leave(CommandContext& c) {
  return reply_errors(c, [&] {
    const std::string group = parse_group(c.arg(2));
    const std::uint32_t rank = parse_rank(c.arg(3), "reader rank");
    const std::uint64_t session = c.session.id();
    c.server.streams().with_existing(c.arg(1), reader_here(group, rank, session),
                                     [&](Stream& s) { s.leave(group, rank, session); });
    c.reply.simple("OK");
    return Outcome::kDone;
  });
}

// SS.STREAM.INFO stream: flat field/value pairs.
// SS.STREAM.DELETE stream [stream ...]: the streams go now, with every step, chunk, segment and
// attribute they hold; their writers and readers get errors from then on. :deleted.
Outcome erase(CommandContext& c) {
  std::int64_t erased = 0;
  for (std::size_t i = 1; i < c.argc(); ++i) {
    erased += static_cast<std::int64_t>(c.server.streams().erase(c.arg(i)));
  }
  c.reply.integer(erased);
  return Outcome::kDone;
}

Outcome info(CommandContext& c) {
  return reply_errors(c, [&] {
    StreamInfo shown;
    c.server.streams().with_existing(c.arg(1), nullptr, [&](Stream& s) { shown = s.info(); });
    ReplyBuffer& reply = c.reply;
    reply.array(34);
    auto field = [&](std::string_view name, std::int64_t value) {
      reply.bulk(name);
      reply.integer(value);
    };
    field("writers", shown.writers);
    field("writers_attached", static_cast<std::int64_t>(shown.writers_attached));
    field("queue_limit", static_cast<std::int64_t>(shown.queue_limit));
    field("steps_held", static_cast<std::int64_t>(shown.queue.steps_held));
    field("bytes_held", static_cast<std::int64_t>(shown.bytes_held));
    field("newest_complete", shown.queue.newest_complete);
    field("steps_completed", static_cast<std::int64_t>(shown.queue.steps_completed));
    field("steps_aborted", static_cast<std::int64_t>(shown.queue.steps_aborted));
    field("steps_dropped_unread", static_cast<std::int64_t>(shown.queue.steps_dropped_unread));
    field("ended", shown.ended ? 1 : 0);
    field("kept_ms", shown.kept_ms);
    reply.bulk("groups");
    reply.array(shown.groups.size());
    for (const StreamInfo::Group& group : shown.groups) {
      reply.array(20);
      reply.bulk("name");
      reply.bulk(group.name);
      reply.bulk("policy");
      reply.bulk(group.policy);
      reply.bulk("strategy");
      reply.bulk(group.strategy);
      field("size", group.size);
      field("readers", static_cast<std::int64_t>(group.stats.readers));
      field("position", group.stats.position);
      field("delivered", static_cast<std::int64_t>(group.stats.delivered));
      field("discarded", static_cast<std::int64_t>(group.stats.discarded));
      field("aborted", static_cast<std::int64_t>(group.stats.aborted));
      reply.bulk("distribution");
      reply.bulk(group.distribution);
    }
    field("segment_bytes", static_cast<std::int64_t>(shown.segment_bytes));
    field("segments", static_cast<std::int64_t>(shown.segments));
    field("segments_made", static_cast<std::int64_t>(shown.segments_made));
    field("precious_step", shown.queue.precious_step);
    field("precious_bytes", static_cast<std::int64_t>(shown.precious_bytes));
    return Outcome::kDone;
  });
}

}  // namespace

// One table row per command, as in the other command files.
// clang-format off
void add_stream_reader_commands(std::vector<CommandSpec>& out) {
  out.insert(out.end(), {
    {"SS.STREAM.JOIN", -6, kWrite, 1, 1, 1, join, "stream",
     "stream group rank size hostname [POLICY block|discard] [START oldest|newest] "
     "[STRATEGY name] [DISTRIBUTION all|round_robin|on_demand]",
     "Joins reader rank of a group of size readers on hostname to the stream (created if need "
     "be): +OK. The reader is bound to this connection. DISTRIBUTION (default all): every "
     "reader gets a share of every step; round_robin: each step goes whole to one reader, in "
     "turn by rank; on_demand: each step goes whole to the reader that asks first. Every reader "
     "of a group must give the same size, policy, strategy and distribution."},
    {"SS.STREAM.NEXT", -4, kWrite | kBlocking, 1, 1, 1, next, "stream",
     "stream group rank [RELEASE step] [TIMEOUT ms] [MAP [CACHED] [DROPPED segment-id ...]]",
     "Waits for the reader's next step: [step, n, readers, writers, strategy, attributes, "
     "components], [skipped, n, reason], [end], or nil after ms milliseconds (0 = no limit). "
     "RELEASE: first releases the step the reader holds, as SS.STREAM.RELEASE does (its error "
     "is the reply, and then no step is taken). "
     "MAP (shared memory attached): a step also lists [chunk-id, segment, bytes] of its chunks "
     "in writer segments, their memfds passed alongside (64 at most: with more, none), and then "
     "the stream's queue limit (how many steps a segment may go unused before its writer gets it "
     "again: how long a reader keeps its mapping). MAP CACHED: the reader keeps its mappings, so "
     "a memfd is passed once per connection; entries are [chunk-id, segment, bytes, passed], "
     "passed 0 for a segment passed before (no memfd with it), and chunks past 64 new memfds are "
     "left out. DROPPED (last): the segments whose mappings the reader let go since."},
    {"SS.STREAM.GET", -6, kReadOnly, 1, 1, 1, get, "stream",
     "stream group rank step chunk-id [chunk-id ...]",
     "The bytes of chunks of the step the reader holds, one bulk string each."},
    {"SS.STREAM.VIEW", -6, kReadOnly, 1, 1, 1, view, "stream",
     "stream group rank step chunk-id [chunk-id ...]",
     "As GET over shared memory (SS.SHM.ATTACH first): a chunk in a writer segment is [id, bytes] "
     "with the segment's memfd passed alongside; others are bulk strings."},
    {"SS.STREAM.RELEASE", 5, kWrite, 1, 1, 1, release, "stream", "stream group rank step",
     "The reader is done with the step it holds: +OK."},
    {"SS.STREAM.LEAVE", 4, kWrite, 1, 1, 1, leave, "stream", "stream group rank",
     "The reader leaves its group; what it held is released: +OK."},
    {"SS.STREAM.INFO", 2, kReadOnly, 1, 1, 1, info, "stream", "stream",
     "The stream's queue, counters and groups (with their step distribution) as field/value "
     "pairs; precious_step: the precious first step kept (-1: none), precious_bytes its bytes."},
    {"SS.STREAM.DELETE", -2, kWrite, 1, -1, 1, erase, "stream", "stream [stream ...]",
     "Deletes the streams with everything they hold (their memory is given back at once); their "
     "writers and readers get errors from then on, parked requests at once: the number deleted."},
  });
}
// clang-format on

}  // namespace slipstream::server
