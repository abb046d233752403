// The SS.STREAM.* command table and what its writer and reader commands share: error replies,
// parking, close hooks.
#include "server/stream/stream_commands.hpp"

#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <utility>

#include "server/commands/command_util.hpp"
#include "server/net/reply.hpp"
#include "server/net/session.hpp"
#include "server/server.hpp"
#include "server/shm/shm.hpp"
#include "server/store/keyspace.hpp"
#include "server/stream/stream_arguments.hpp"
#include "server/stream/stream_command_util.hpp"
#include "server/stream/stream_error.hpp"
#include "server/stream/stream_registry.hpp"

namespace slipstream::server {

std::string stream_error_text(const std::exception& error) {
  if (dynamic_cast<const StreamOutOfMemory*>(&error) != nullptr) {
    return std::string("OOM ") + error.what();
  }
  if (dynamic_cast<const StreamAborted*>(&error) != nullptr) {
    return std::string("ABORTED ") + error.what();
  }
  if (dynamic_cast<const std::bad_alloc*>(&error) != nullptr) {
    return "OOM out of memory handling a stream request";
  }
  return std::string("ERR ") + error.what();
}

void bind_session(CommandContext& c, Stream& stream) {
  // A stream's connections on the shared-memory path share one I/O thread: the END that
  // completes a step then answers the readers' parked NEXTs on its own thread, and a RELEASE the
  // writers' parked BEGINs, with no hand-off to another thread (an interrupt of its reactor and a
  // wake-up per step, on the critical path between the last writer and the readers). Their
  // requests are small (the bytes go through shared memory), so one thread serves them all;
  // connections that send chunk bytes through the socket stay spread over the threads.
  if (c.session.is_local() && c.session.shm) {
    c.session.move_to_io_thread(stream.home_io_thread(c.session.io_thread()));
  }
  const std::uint64_t session = c.session.id();
  if (!stream.needs_close_hook(session)) return;
  StreamRegistry& registry = c.server.streams();
  std::weak_ptr<Stream> weak = stream.weak_from_this();
  c.session.on_close([&registry, weak, session] {
    auto closed = weak.lock();
    if (!closed) return;
    try {
      registry.with_stream(closed, [session](Stream& s) { s.session_closed(session); });
    } catch (const std::exception&) {  // nothing to do from a closing connection
    }
  });
}

Outcome park(CommandContext& c, Stream& stream, Retry retry, std::int64_t timeout_ms) {
  auto request = std::make_shared<ParkedRequest>();
  request->session = c.session.weak_session();
  request->retry = [retry = std::move(retry)](Stream& s) -> std::optional<ReplyWriter> {
    try {
      return retry(s);
    } catch (const std::exception& error) {
      return [text = stream_error_text(error)](ReplyBuffer& reply) { reply.error(text); };
    }
  };
  stream.park(request);
  StreamRegistry& registry = c.server.streams();
  std::weak_ptr<Stream> weak = stream.weak_from_this();
  c.session.on_close_while_parked([&registry, weak, request] {
    auto parked_on = weak.lock();
    if (!parked_on) return;
    try {
      registry.with_stream(parked_on, [&](Stream& s) { s.withdraw(request.get()); });
    } catch (const std::exception&) {
    }
  });
  if (timeout_ms > 0) {
    c.session.arm_timer(std::chrono::milliseconds(timeout_ms), [&registry, weak, request] {
      auto parked_on = weak.lock();
      if (!parked_on) return;
      try {
        registry.with_stream(parked_on, [&](Stream& s) {
          if (!s.withdraw(request.get())) return;  // answered already
          if (auto session = request->session.lock()) {
            session->resume([](ReplyBuffer& reply) { reply.null(); });
          }
        });
      } catch (const std::exception&) {
      }
    });
  }
  return Outcome::kParked;
}

std::vector<std::size_t> parse_segment_sizes(const CommandContext& c, std::size_t first) {
  // A bound on one request's work (and on the descriptors of its reply).
  constexpr std::size_t kMostSegments = 65536;
  if (c.argc() - first > kMostSegments) {
    throw StreamError("at most " + std::to_string(kMostSegments) +
                      " segments may be asked for at once, got " +
                      std::to_string(c.argc() - first));
  }
  std::vector<std::size_t> sizes;
  for (std::size_t i = first; i < c.argc(); ++i) {
    auto size = parse_int(c.arg(i));
    if (!size || *size <= 0) throw StreamError("segment sizes must be positive integers");
    if (static_cast<std::uint64_t>(*size) > c.server.max_bulk_len()) {
      throw StreamError("a segment of " + std::to_string(*size) + " bytes exceeds max-bulk-len (" +
                        std::to_string(c.server.max_bulk_len()) + " bytes)");
    }
    sizes.push_back(static_cast<std::size_t>(*size));
  }
  return sizes;
}

SegmentPool::Create segment_maker(CommandContext& c) {
  Server& server = c.server;
  return [&server](std::size_t size) {
    std::optional<MemoryReservation> memory = server.keyspace().reserve(size);
    if (!memory) {
      throw StreamOutOfMemory("a segment of " + std::to_string(size) +
                              " bytes does not fit in maxmemory (" +
                              std::to_string(server.keyspace().used_memory()) + " of " +
                              std::to_string(server.keyspace().max_memory()) + " bytes used)");
    }
    ShmFailure failure;
    std::string error;
    auto segment =
        server.shared_memory().create_writer_segment(size, std::move(*memory), &failure, &error);
    if (!segment) throw StreamError(error.starts_with("ERR ") ? error.substr(4) : error);
    return segment;
  };
}

namespace {

// A chunk's bytes copied out of its writer segment for a socket reply, with the memory it takes
// counted against --maxmemory until the reply has been written.
struct ChunkCopy {
  Buffer bytes;
  MemoryReservation reservation;
};

}  // namespace

void write_chunks(CommandContext& c, const std::vector<ChunkBytes>& chunks, bool by_descriptor) {
  if (by_descriptor) {
    for (const ChunkBytes& chunk : chunks) {
      if (chunk.segment) c.reply.pass_fd(chunk.segment->fd(), chunk.segment);
    }
  }
  // A chunk in a writer segment is copied for a socket reply: once its step is freed the segment
  // is lent to its writer again, which a pipelined RELEASE (or a free from the stream's shard)
  // could do before this reply is written. It is copied once however often the request names it,
  // and every copy must fit in --maxmemory before anything is written: a request naming one large
  // chunk many times costs one copy, and never grows the server past its limit.
  std::map<std::pair<const ShmWriterSegment*, std::size_t>, std::shared_ptr<const ChunkCopy>>
      copies;
  if (!by_descriptor) {
    for (const ChunkBytes& chunk : chunks) {
      if (chunk.heap || !chunk.segment) continue;
      auto& copy = copies[{chunk.segment.get(), chunk.size}];
      if (copy) continue;
      std::optional<MemoryReservation> reservation = c.server.keyspace().reserve(chunk.size);
      std::optional<Buffer> bytes;
      if (reservation) bytes = Buffer::try_uninitialized(chunk.size);
      if (!bytes) {
        throw StreamOutOfMemory(
            "copying the chunks for the reply needs " + std::to_string(chunk.size) +
            " bytes more than maxmemory allows (" + std::to_string(c.server.keyspace().used_memory()) +
            " of " + std::to_string(c.server.keyspace().max_memory()) +
            " bytes used); read them through shared memory (SS.STREAM.VIEW) or fewer at a time");
      }
      std::memcpy(bytes->data(), chunk.segment->data(), chunk.size);
      copy = std::make_shared<const ChunkCopy>(ChunkCopy{std::move(*bytes), std::move(*reservation)});
    }
  }
  c.reply.array(chunks.size());
  for (const ChunkBytes& chunk : chunks) {
    if (chunk.heap) {
      c.reply.bulk_shared(chunk.heap, chunk.heap->view());
    } else if (by_descriptor) {
      c.reply.array(2);
      c.reply.integer(static_cast<std::int64_t>(chunk.segment->id()));
      c.reply.integer(static_cast<std::int64_t>(chunk.segment->size()));
    } else {
      const auto& copy = copies.at({chunk.segment.get(), chunk.size});
      c.reply.bulk_shared(copy, copy->bytes.view());
    }
  }
}

std::int64_t parse_timeout_option(const CommandContext& c, std::size_t index) {
  if (c.argc() == index) return 0;
  if (c.argc() != index + 2 || !equals_nocase(c.arg(index), "TIMEOUT")) {
    throw StreamError("syntax error: expected nothing or TIMEOUT ms after the arguments");
  }
  return parse_milliseconds(c.arg(index + 1), "TIMEOUT");
}

void add_stream_commands(std::vector<CommandSpec>& out) {
  add_stream_writer_commands(out);
  add_stream_reader_commands(out);
  add_stream_chunk_commands(out);
}

}  // namespace slipstream::server
