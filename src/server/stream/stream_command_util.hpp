// Internal to the SS.STREAM.* command files: error replies, parking a request on a stream, close
// hooks and the TIMEOUT option.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "server/commands/command_table.hpp"
#include "server/stream/stream.hpp"

namespace slipstream::server {

/// The error reply for an exception from a stream request: "OOM ..." for StreamOutOfMemory,
/// "ERR <what()>" for everything else.
std::string stream_error_text(const std::exception& error);

/// Runs `body`, turning any exception it throws into an error reply: no exception leaves a
/// stream handler. `body` writes its reply only once nothing more can throw.
template <typename Body>
Outcome reply_errors(CommandContext& c, Body&& body) {
  try {
    return body();
  } catch (const std::exception& error) {
    c.reply.error(stream_error_text(error));
  }
  return Outcome::kDone;
}

/// After a rank was bound to the connection (stream locked): makes the connection call
/// Stream::session_closed when it closes (once per stream and connection), and moves a local
/// connection on the shared-memory path to the stream's I/O thread (see stream_commands.cpp).
void bind_session(CommandContext& c, Stream& stream);

/// A retry for ParkedRequest: nullopt while the request waits, else its reply.
using Retry = std::function<std::optional<ReplyWriter>(Stream&)>;

/// Parks the request on `stream` (locked) until `retry` gives a reply, or answers nil after
/// `timeout_ms` (0: no limit). `retry` may throw: the exception becomes an error reply.
Outcome park(CommandContext& c, Stream& stream, Retry retry, std::int64_t timeout_ms);

/// The optional "TIMEOUT ms" at args[index..]: 0 (no limit) when absent.
std::int64_t parse_timeout_option(const CommandContext& c, std::size_t index);

/// The segment sizes at args[first..]: positive, at most max-bulk-len each.
std::vector<std::size_t> parse_segment_sizes(const CommandContext& c, std::size_t first);
/// Makes writer segments for SegmentPool::lend, counted against --maxmemory and --shm-size
/// (StreamOutOfMemory / StreamError when they do not fit).
SegmentPool::Create segment_maker(CommandContext& c);

/// The reply of SS.STREAM.GET / VIEW and SS.CHUNKS.GET / VIEW: one bulk string per chunk, or with
/// `by_descriptor` (shared memory attached) [segment-id, bytes] for a chunk in a segment, whose
/// memfd is passed alongside, in order.
void write_chunks(CommandContext& c, const std::vector<ChunkBytes>& chunks, bool by_descriptor);

void add_stream_writer_commands(std::vector<CommandSpec>& out);
void add_stream_reader_commands(std::vector<CommandSpec>& out);
void add_stream_chunk_commands(std::vector<CommandSpec>& out);

}  // namespace slipstream::server
