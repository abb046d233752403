// StreamWriter and StreamReader (include/slipstream/stream.hpp) over the SS.STREAM.* commands:
// the stream protocol, step state, reservations and aborts. How chunk bytes travel (socket, shared
// memory, colocated chunks) is chunk_transport.hpp's. Each writer and reader has its own
// connection: the server binds its rank to it.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstring>
#include <exception>
#include <functional>
#include <map>
#include <thread>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <utility>

#include "client/chunk_codec.hpp"
#include "client/chunk_transport.hpp"
#include "client/client_impl.hpp"
#include "client/connection.hpp"
#include "client/request.hpp"
#include "client/server_errors.hpp"
#include "client/stream_reduction.hpp"
#include "stream/extent_list.hpp"
#include "slipstream/stream.hpp"

namespace slipstream {
namespace {

using client::ReceivedChunk;
using client::Request;
using std::chrono::milliseconds;

std::string this_host() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "localhost";
  return name;
}

std::vector<std::uint64_t> parse_extent(std::string_view text) {
  auto values = stream::parse_extent_list(text);
  if (!values) throw ProtocolError("stream reply: bad extent '" + std::string(text) + "'");
  return std::move(*values);
}

const Reply& element(const Reply& reply, std::size_t i, std::string_view what) {
  if (!reply.is_array() || reply.elements.size() <= i) {
    throw ProtocolError("stream reply: " + std::string(what) + " is missing");
  }
  return reply.elements[i];
}

std::uint64_t product(std::span<const std::uint64_t> extent) {
  std::uint64_t n = 1;
  for (std::uint64_t e : extent) n *= e;
  return n;
}

// The wire type of an attribute value and its values as text, for SS.STREAM.ATTR.
std::pair<std::string_view, std::vector<std::string>> attribute_wire(const AttributeValue& value) {
  auto text = [](double d) {
    // The shortest text that reads back as exactly `d` (the server parses it with from_chars):
    // several times faster than printf's %.17g, and shorter on the wire.
    char buffer[32];
    char* end = std::to_chars(buffer, buffer + sizeof buffer, d).ptr;
    return std::string(buffer, static_cast<std::size_t>(end - buffer));
  };
  switch (value.index()) {
    case 0: return {"string", {std::get<std::string>(value)}};
    case 1: return {"int", {std::to_string(std::get<std::int64_t>(value))}};
    case 2: return {"float", {text(std::get<double>(value))}};
    case 3: return {"strings", std::get<std::vector<std::string>>(value)};
    case 4: {
      std::vector<std::string> out;
      for (std::int64_t v : std::get<std::vector<std::int64_t>>(value)) out.push_back(std::to_string(v));
      return {"ints", out};
    }
    default: {
      std::vector<std::string> out;
      for (double v : std::get<std::vector<double>>(value)) out.push_back(text(v));
      return {"floats", out};
    }
  }
}

AttributeValue parse_attribute(std::string_view type, const Reply& value) {
  // The values: the elements of an array reply, or the reply itself (no copy of either).
  std::span<const Reply> items =
      value.is_array() ? std::span<const Reply>(value.elements) : std::span<const Reply>(&value, 1);
  auto to_int = [](const Reply& v) {
    return v.is_integer() ? v.integer : static_cast<std::int64_t>(std::stoll(v.string));
  };
  // The server's text of a double: from_chars (exact, no locale), else stod's wider syntax.
  auto to_double = [](const Reply& v) {
    const std::string& s = v.string;
    double parsed = 0;
    const auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), parsed);
    if (error == std::errc() && end == s.data() + s.size() && !s.empty()) return parsed;
    return std::stod(s);
  };
  auto each = [&](auto convert) {
    std::vector<decltype(convert(value))> out;
    out.reserve(items.size());
    for (const Reply& v : items) out.push_back(convert(v));
    return out;
  };
  try {
    if (type == "string") return value.string;
    if (type == "int") return to_int(value);  // the server sends integers as integers
    if (type == "float") return to_double(value);
    if (type == "strings") return each([](const Reply& v) { return v.string; });
    if (type == "ints") return each(to_int);
    if (type == "floats") return each(to_double);
  } catch (const std::logic_error&) {
    throw ProtocolError("stream reply: bad " + std::string(type) + " attribute value");
  }
  throw ProtocolError("stream reply: unknown attribute type '" + std::string(type) + "'");
}

milliseconds wait_of(milliseconds timeout) { return timeout.count() == 0 ? kWaitForever : timeout; }

// The longest a destructor waits for the server to answer its goodbye (LEAVE, CLOSE): a program
// that ends with a reader or writer alive must not hang on a server that stopped answering, and
// the connection closing tells the server the same.
constexpr milliseconds kGoodbyeWait{5000};

// The bytes of `piece` within the row-major bytes of `chunk`, which contains it. A piece that is
// one contiguous run of the chunk (whole trailing dimensions, single leading ones) is a view into
// `owner`'s bytes; any other box is gathered, row by row, into memory of its own.
StreamPiece view_piece(const stream::Chunk& chunk, const stream::Chunk& piece,
                       std::size_t element_size, std::span<const std::byte> bytes,
                       std::shared_ptr<const void> owner, bool shared) {
  const std::size_t dims = chunk.extent.size();
  const std::size_t size = product(piece.extent) * element_size;
  StreamPiece out{piece, {}, std::move(owner), shared};
  // Linear element index in the chunk of the piece position `index` (relative to the piece).
  auto source_of = [&](const std::vector<std::uint64_t>& index) {
    std::uint64_t source = 0;
    for (std::size_t d = 0; d < dims; ++d) {
      source = source * chunk.extent[d] + (piece.offset[d] - chunk.offset[d] + index[d]);
    }
    return source;
  };
  std::size_t cut = dims;  // the last dimension the piece does not cover whole
  for (std::size_t d = dims; d-- > 0;) {
    if (piece.extent[d] != chunk.extent[d]) {
      cut = d;
      break;
    }
  }
  bool contiguous = true;
  for (std::size_t d = 0; cut != dims && d < cut; ++d) contiguous = contiguous && piece.extent[d] == 1;
  if (size == 0 || contiguous) {
    const std::size_t first = size == 0 ? 0 : source_of(std::vector<std::uint64_t>(dims, 0));
    out.bytes = bytes.subspan(first * element_size, size);
    return out;
  }
  // Rows along the last dimension are contiguous: walk every row of the piece.
  auto gathered = std::make_shared_for_overwrite<std::byte[]>(size);
  const std::size_t row = piece.extent[dims - 1] * element_size;
  std::vector<std::uint64_t> index(dims, 0);  // position within the piece, last dim fixed at 0
  for (std::size_t written = 0; written < size; written += row) {
    std::memcpy(gathered.get() + written, bytes.data() + source_of(index) * element_size, row);
    for (std::size_t d = dims - 1; d-- > 0;) {  // next row: odometer over dims 0..dims-2
      if (++index[d] < piece.extent[d]) break;
      index[d] = 0;
    }
  }
  out.bytes = {gathered.get(), size};
  out.owner = std::move(gathered);
  out.shared = false;
  return out;
}

bool contains(const stream::Chunk& chunk, const stream::Chunk& piece) {
  if (chunk.source_rank != piece.source_rank || chunk.offset.size() != piece.offset.size()) {
    return false;
  }
  for (std::size_t d = 0; d < chunk.offset.size(); ++d) {
    if (piece.offset[d] < chunk.offset[d] ||
        piece.offset[d] + piece.extent[d] > chunk.offset[d] + chunk.extent[d]) {
      return false;
    }
  }
  return true;
}

// Checks a chunk's description against the open step (`what` names the call in messages) and
// returns its size in bytes.
std::size_t check_chunk(const char* what, bool step_open, std::string_view component, DType dtype,
                        std::span<const std::uint64_t> global_extent,
                        std::span<const std::uint64_t> offset,
                        std::span<const std::uint64_t> extent) {
  if (!step_open) throw InvalidArgumentError(std::string(what) + ": no step is open; begin_step()");
  if (global_extent.empty() || offset.size() != global_extent.size() ||
      extent.size() != global_extent.size()) {
    throw InvalidArgumentError(std::string(what) + " '" + std::string(component) +
                               "': offset and extent need one entry per dimension of the global "
                               "extent (" + std::to_string(global_extent.size()) + ")");
  }
  return product(extent) * dtype_size(dtype);
}

// The reader's pieces of `component`: piece i is cut from chunk source_of[i], whose bytes are
// received[k] for wanted[k] == source_of[i].
std::vector<StreamPiece> assemble(const StreamComponent& component,
                                  const std::vector<std::size_t>& source_of,
                                  const std::vector<std::size_t>& wanted,
                                  const std::vector<ReceivedChunk>& received,
                                  std::size_t element_size) {
  std::vector<StreamPiece> out;
  for (std::size_t i = 0; i < component.mine.size(); ++i) {
    const std::size_t j = source_of[i];
    const ReceivedChunk& chunk = received[static_cast<std::size_t>(
        std::find(wanted.begin(), wanted.end(), j) - wanted.begin())];
    out.push_back(view_piece(component.chunks[j], component.mine[i], element_size, chunk.bytes,
                             chunk.owner, chunk.shared));
  }
  return out;
}

// A chunk a reader fetches: chunk `chunk` of the step's component `component` (indices).
struct WantedChunk {
  std::size_t component = 0, chunk = 0;
};

// product(extent) * element_size, or nullopt when it does not fit in a size_t.
std::optional<std::size_t> checked_bytes(std::span<const std::uint64_t> extent,
                                         std::size_t element_size) {
  std::size_t bytes = element_size;
  for (std::uint64_t e : extent) {
    if (__builtin_mul_overflow(bytes, e, &bytes)) return std::nullopt;
  }
  return bytes;
}

// Where a chunk and a box meet: `count` elements per dimension from global index `first`.
struct Overlap {
  std::vector<std::uint64_t> first, count;
};

// The overlap of `chunk` and the box at `offset` with `extent` (both inside the global extent, so
// no end overflows); nullopt when they do not meet. A chunk or box of no elements meets nothing;
// without dimensions, both are the one element and meet.
std::optional<Overlap> overlap(const stream::Chunk& chunk, std::span<const std::uint64_t> offset,
                               std::span<const std::uint64_t> extent) {
  Overlap out;
  for (std::size_t d = 0; d < extent.size(); ++d) {
    const std::uint64_t first = std::max(chunk.offset[d], offset[d]);
    const std::uint64_t end =
        std::min(chunk.offset[d] + chunk.extent[d], offset[d] + extent[d]);
    if (first >= end) return std::nullopt;
    out.first.push_back(first);
    out.count.push_back(end - first);
  }
  return out;
}

// Copies `met`, the overlap of `chunk` (its row-major bytes at `source`) and the box at `offset`
// with `extent`, into `destination`, the box's row-major elements. Each run is contiguous in both:
// along the last dimension, and across the trailing dimensions the chunk, the box and the overlap
// all cover whole.
void copy_overlap(const stream::Chunk& chunk, const std::byte* source,
                  std::span<const std::uint64_t> offset, std::span<const std::uint64_t> extent,
                  const Overlap& met, std::size_t element_size, std::byte* destination) {
  const std::size_t dims = met.count.size();
  if (dims == 0) {  // a scalar: the one element
    std::memcpy(destination, source, element_size);
    return;
  }
  std::size_t inner = dims - 1;  // runs span dimensions inner..dims-1
  while (inner > 0 && met.count[inner] == chunk.extent[inner] &&
         met.count[inner] == extent[inner]) {
    --inner;
  }
  std::size_t run = element_size;
  for (std::size_t d = inner; d < dims; ++d) run *= met.count[d];
  std::vector<std::uint64_t> index(inner, 0);  // the run's position in dimensions 0..inner-1
  for (;;) {
    std::uint64_t from = 0, to = 0;  // linear element indices in the chunk and the box
    for (std::size_t d = 0; d < dims; ++d) {
      const std::uint64_t at = met.first[d] + (d < inner ? index[d] : 0);
      from = from * chunk.extent[d] + (at - chunk.offset[d]);
      to = to * extent[d] + (at - offset[d]);
    }
    std::memcpy(destination + to * element_size, source + from * element_size, run);
    std::size_t d = inner;  // next run: odometer over dimensions 0..inner-1
    while (d > 0 && ++index[d - 1] == met.count[d - 1]) index[--d] = 0;
    if (d == 0) return;
  }
}

// Runs work(i) for every i below `count` on up to kCodecThreads threads (no more than the machine
// has; this thread is one of them): encoding a step's chunks on the writer, decoding a share's on
// the reader. The first exception is rethrown once every thread has stopped (the others stop after
// the item they are on).
constexpr std::size_t kCodecThreads = 4;
template <typename Work>
void run_parallel(std::size_t count, Work&& work) {
  const std::size_t threads = std::min<std::size_t>(
      {count, kCodecThreads, std::max(1u, std::thread::hardware_concurrency())});
  if (threads <= 1) {
    for (std::size_t i = 0; i < count; ++i) work(i);
    return;
  }
  std::atomic<std::size_t> next{0};
  std::vector<std::exception_ptr> errors(threads);
  auto loop = [&](std::size_t t) {
    try {
      for (std::size_t i = next++; i < count; i = next++) work(i);
    } catch (...) {
      errors[t] = std::current_exception();
      next = count;
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(loop, t);
  loop(0);
  for (std::thread& t : pool) t.join();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

// The server's reply to a writer's request for a step that was aborted.
bool is_aborted(std::string_view error) { return error.starts_with("ABORTED"); }

}  // namespace

// ---- StreamWriter --------------------------------------------------------------------------------

class StreamWriter::Impl {
 public:
  Impl(const ClientOptions& client_options, std::string_view stream, std::uint32_t rank,
       StreamWriterOptions options)
      : client(client_options), stream(stream), rank(rank), options(std::move(options)),
        pending(this->stream, rank), chunks(client, this->stream, rank, this->options, pending) {}

  void add_attribute(std::int64_t step, std::string_view path, std::string_view name,
                     const AttributeValue& value, std::string_view element) {
    auto [type, values] = attribute_wire(value);
    if (type.back() != 's' || type == "string") {
      if (values.size() != 1) throw InvalidArgumentError("attribute '" + std::string(name) + "'");
    } else if (values.empty()) {
      throw InvalidArgumentError("attribute '" + std::string(name) + "' is an empty array");
    }
    pending.start(7 + values.size(), "SS.STREAM.ATTR", step);
    pending.request.arg(pending.keep(std::string(path)));
    pending.request.arg(pending.keep(std::string(name)));
    if (element.empty()) {
      pending.request.arg(type);
    } else {
      pending.request.arg(pending.keep(std::string(type) + ":" + std::string(element)));
    }
    for (auto& v : values) pending.request.arg(pending.keep(std::move(v)));
  }
  // Sends the pending commands in one round trip; throws the first error after reading all.
  // `last`, when set, gets the last command's reply when it is not an error.
  void flush(std::string_view context,
             const std::function<void(client::Connection&, const Reply&)>& last = {}) {
    if (pending.count == 0) return;
    const std::size_t count = pending.count;
    try {
      client.exchange(stream, pending.request, [&](client::Connection& connection) {
        Client::Impl::read_each(connection, count, [&](client::Connection& c, std::size_t i) {
          Reply reply = c.read_reply();
          if (reply.is_error()) client::throw_server_error(reply.string, context);
          if (last && i + 1 == count) last(c, reply);
        });
      });
    } catch (...) {
      reset();
      throw;
    }
    reset();
  }
  // The open step was aborted: it is over for this writer all the same, and the stride to the
  // next reservation counts from it (or the writer would reserve a step too far, and its plain
  // begin of the right one would withdraw the other writers' reservations of it).
  void abandon_step(std::string reason) {
    previous_step = open_step;
    open_step.reset();
    last_abort = std::move(reason);
  }
  void reset() {
    pending.clear();
    chunks.reset();
    frames.clear();
    to_encode.clear();
    reductions.clear();
    derived.clear();
    reduced = false;
  }
  // Runs the reductions on the open step's inputs and puts their outputs (once a step: an
  // end_step that failed after this and is tried again does not put them twice). A reduction that
  // fails leaves the step open with nothing of it sent.
  void put_derived(StreamWriter& writer) {
    if (reductions.empty() || reduced) return;
    derived = reductions.run(*open_step);
    // Every output is checked against its operator before any is queued, so that a refusal leaves
    // none of them queued (put_chunk would borrow bytes a retried end_step replaces).
    for (const client::StreamReductions::Derived& d : derived) {
      codec_for("put_chunk", d.component, d.value.dtype(), d.extent.size());
    }
    for (const client::StreamReductions::Derived& d : derived) {
      const std::span<const std::byte> bytes = d.value.bytes();
      writer.put_chunk(d.component, d.value.dtype(), d.global_extent, d.offset, d.extent,
                       bytes.data(), bytes.size());
    }
    reduced = true;
  }
  // The operator for a chunk of `component` (its own, else "*"), or null. A component's own
  // operator that cannot encode the chunk (zfp on integers) is an InvalidArgumentError naming
  // `call` and the component; "*" leaves such chunks raw (zfp for every floating-point field).
  const client::ChunkCodec* codec_for(const char* call, std::string_view component, DType dtype,
                                      std::size_t dims) const {
    auto found = codecs.find(component);
    const bool own = found != codecs.end();
    if (!own) found = codecs.find(std::string_view("*"));
    if (found == codecs.end()) return nullptr;
    const std::string misfit = found->second->misfit(dtype, dims);
    if (misfit.empty()) return found->second.get();
    if (!own) return nullptr;
    throw InvalidArgumentError(std::string(call) + " '" + std::string(component) + "': " + misfit);
  }
  void set_codec(std::string_view component, const std::optional<StreamOperator>& op) {
    if (component.empty()) throw InvalidArgumentError("set_operator: empty component name");
    if (!op) {
      codecs.erase(std::string(component));
      return;
    }
    codecs[std::string(component)] =
        client::make_chunk_codec(*op, "operator of component '" + std::string(component) + "'");
  }
  // Encodes the step's chunks that have an operator, several at once, and hands the frames to the
  // sender in the order they were put.
  void encode_chunks() {
    frames.assign(to_encode.size(), {});
    run_parallel(to_encode.size(), [&](std::size_t i) {
      const ToEncode& c = to_encode[i];
      const std::string what = "component '" + std::string(c.place.component) + "' of step " +
                               std::to_string(*open_step);
      frames[i] = c.codec->encode(c.place.dtype, c.extent,
                                  {static_cast<const std::byte*>(c.data), c.bytes}, what);
    });
    for (std::size_t i = 0; i < to_encode.size(); ++i) {
      client::ChunkPlace place = to_encode[i].place;
      place.encoded = true;
      chunks.put(*open_step, place, frames[i].data(), frames[i].size());
    }
    to_encode.clear();  // queued (a loan's memory goes: its frame is what is sent)
  }
  // loan_chunk's region for a chunk that is sent (`codec`: its operator, or null).
  std::span<std::byte> loan(std::string_view component, DType dtype,
                            std::span<const std::uint64_t> global_extent,
                            std::span<const std::uint64_t> offset,
                            std::span<const std::uint64_t> extent, std::size_t bytes,
                            const client::ChunkCodec* codec);
  // The chunk described by the arguments, its extents kept in the pending commands' strings.
  client::ChunkPlace place(std::string_view component, DType dtype,
                           std::span<const std::uint64_t> global_extent,
                           std::span<const std::uint64_t> offset,
                           std::span<const std::uint64_t> extent) {
    return client::ChunkPlace{component, dtype,
                              pending.keep(stream::format_extent_list(global_extent)),
                              pending.keep(stream::format_extent_list(offset)),
                              pending.keep(stream::format_extent_list(extent))};
  }

  Client::Impl client;
  std::string stream;
  std::uint32_t rank;
  StreamWriterOptions options;
  client::PendingCommands pending;  // sent with the next round trip (END, or a stream attribute)
  client::ChunkSender chunks;       // how the open step's chunk bytes travel
  std::optional<std::int64_t> open_step;
  std::optional<std::string> aborted;   // the open step was aborted: the server's reason
  std::string last_abort;               // why the last step end_step() dropped was aborted
  // The next step, reserved with the last END (SS.STREAM.END ... NEXT): begin_step of it costs
  // no round trip, its segments (if any) lent already. The guess is the last step plus the last
  // stride between steps.
  std::optional<std::int64_t> reserved;
  std::optional<std::int64_t> previous_step;  // the step ended before the last one
  bool closed = false;
  // Compression operators by component ("*": the rest), checked when set.
  std::map<std::string, std::shared_ptr<const client::ChunkCodec>, std::less<>> codecs;
  // The open step's chunks with an operator, encoded at end_step (put_chunk's borrowed bytes, or
  // the writer's memory a loan_chunk handed out), and their frames, which the pending commands
  // borrow until they are sent.
  struct ToEncode {
    const client::ChunkCodec* codec;
    client::ChunkPlace place;  // the component's name kept in the pending commands
    std::vector<std::uint64_t> extent;
    const void* data;
    std::size_t bytes;
    std::unique_ptr<std::byte[]> memory;  // a loan's
  };
  std::vector<ToEncode> to_encode;
  std::vector<std::vector<std::byte>> frames;
  // Reductions at the source: their inputs' chunks of the open step, and their outputs, which the
  // pending commands borrow until they are sent.
  client::StreamReductions reductions;
  std::vector<client::StreamReductions::Derived> derived;
  bool reduced = false;  // the open step's outputs are put
};
StreamWriter::StreamWriter(const ClientOptions& client_options, std::string_view stream,
                           std::uint32_t rank, std::uint32_t writers, StreamWriterOptions options)
    : impl_(std::make_unique<Impl>(client_options, stream, rank, std::move(options))) {
  if (stream.empty()) throw InvalidArgumentError("stream name must not be empty");
  if (writers == 0 || rank >= writers) {
    throw InvalidArgumentError("writer rank " + std::to_string(rank) + " is out of range for " +
                               std::to_string(writers) + " writers");
  }
  const StreamWriterOptions& o = impl_->options;
  for (const auto& [component, op] : o.operators) impl_->set_codec(component, op);
  impl_->reductions = client::StreamReductions(o.reductions, rank, writers);
  const std::string host = o.hostname.empty() ? this_host() : o.hostname;
  const std::string queue = std::to_string(o.queue_limit), groups = std::to_string(o.expected_groups),
                    timeout = std::to_string(o.step_timeout.count());
  std::vector<std::string> words{"SS.STREAM.WRITE", std::string(stream), std::to_string(rank),
                                 std::to_string(writers), host, "QUEUE", queue, "EXPECT-GROUPS",
                                 groups, "ON-WRITER-FAILURE",
                                 o.end_on_writer_failure ? "end" : "continue", "STEP-TIMEOUT",
                                 timeout};
  // Only when set, so that a server without the option takes the defaults.
  if (o.first_step_precious) {
    words.emplace_back("FIRST-STEP-PRECIOUS");
    words.emplace_back("yes");
  }
  // In a cluster, chunks stay on this writer's own shard when the stream lives on another; not
  // with a precious first step, which must outlive that shard's bound on a writer's chunks (its
  // last queue limit + 1 steps): those streams' chunks all go to the stream's shard.
  if (!o.first_step_precious) {
    impl_->chunks.colocate_on(impl_->client.colocation_member(impl_->stream));
  }
  if (const std::optional<std::string>& member = impl_->chunks.member()) {
    words.emplace_back("CHUNKS-ON");
    words.push_back(*member);
  }
  Request request;
  request.command(words.size());
  for (const std::string& word : words) request.arg(word);
  impl_->client.call(impl_->stream, request, "SS.STREAM.WRITE");
  impl_->chunks.attach_member();
  // Where the reductions' outputs come from, as stream-level attributes (every rank sends the
  // same; the stream keeps one).
  for (const auto& [path, name, value] : impl_->reductions.provenance()) {
    impl_->add_attribute(-1, path, name, value, {});
  }
  impl_->flush("SS.STREAM.ATTR");
}

StreamWriter::~StreamWriter() {
  if (!impl_ || impl_->closed) return;
  try {
    impl_->client.cap_waits(kGoodbyeWait);
    close();
  } catch (const std::exception&) {
    // A writer that cannot say goodbye is a writer failure for the server: nothing to add.
  }
}

StreamWriter::StreamWriter(StreamWriter&&) noexcept = default;
StreamWriter& StreamWriter::operator=(StreamWriter&&) noexcept = default;

const std::string& StreamWriter::stream() const noexcept { return impl_->stream; }
const std::string& StreamWriter::last_abort_reason() const noexcept { return impl_->last_abort; }
std::uint32_t StreamWriter::rank() const noexcept { return impl_->rank; }

void StreamWriter::begin_step(std::int64_t step) {
  if (impl_->closed) throw InvalidArgumentError("begin_step: the writer has closed the stream");
  if (impl_->open_step) {
    throw InvalidArgumentError("begin_step: step " + std::to_string(*impl_->open_step) +
                               " is still open; end_step() first");
  }
  Impl& w = *impl_;
  if (std::exchange(w.reserved, std::nullopt) == step) {  // reserved with the last END
    w.open_step = step;
    return;
  }
  // Any other reservation is withdrawn by the server with this BEGIN; its segments come back
  // free, to be lent again.
  const milliseconds timeout = w.options.begin_timeout;
  Request request;
  request.command({"SS.STREAM.BEGIN", w.stream, std::to_string(w.rank), std::to_string(step),
                   "TIMEOUT", std::to_string(timeout.count())});
  // Segments for the chunks of the new step, asked for in the same round trip.
  const bool predict = w.chunks.add_predicted_segments(request, step);
  w.chunks.forget_lent();
  Reply reply;
  if (w.chunks.predicts_member_segments()) {
    // Colocated: the member's segments are asked for at the same time, from the member.
    w.client.exchange_batch(
        2, [&](std::size_t i) { return i == 0 ? Route(w.stream) : Route::any(); },
        [&](Request& r, std::size_t i) {
          if (i == 0) {
            r.command({"SS.STREAM.BEGIN", w.stream, std::to_string(w.rank), std::to_string(step),
                       "TIMEOUT", std::to_string(timeout.count())});
          } else {
            w.chunks.add_predicted_member_segments(r, step);
          }
        },
        [&](client::Connection& c, std::size_t i) {
          if (i == 0) {
            reply = c.read_reply();
          } else {
            w.chunks.read_predicted_member_segments(c);
          }
        },
        wait_of(timeout));
    if (reply.is_error() || reply.is_nil()) w.chunks.release_loans();  // no step: no loans
  } else {
    reply = w.client.exchange(
        w.stream, request,
        [&](client::Connection& c) {
          Reply begun = c.read_reply();
          if (predict) w.chunks.read_predicted_segments(c);
          return begun;
        },
        wait_of(timeout));
  }
  if (reply.is_error()) {
    w.chunks.forget_lent();
    if (is_aborted(reply.string)) {  // the others went on without this step: so does this writer
      w.open_step = step;
      w.aborted = reply.string;
      return;
    }
    client::throw_server_error(reply.string, "SS.STREAM.BEGIN");
  }
  if (reply.is_nil()) {
    w.chunks.forget_lent();
    throw TimeoutError("begin_step: no slot for step " + std::to_string(step) + " of stream '" +
                       impl_->stream + "' within " + std::to_string(timeout.count()) +
                       " ms (the queue is full of steps a blocking group has not released)");
  }
  impl_->open_step = step;
}

void StreamWriter::put_chunk(std::string_view component, DType dtype,
                             std::span<const std::uint64_t> global_extent,
                             std::span<const std::uint64_t> offset,
                             std::span<const std::uint64_t> extent, const void* data,
                             std::size_t bytes) {
  const std::uint64_t expected =
      check_chunk("put_chunk", impl_->open_step.has_value(), component, dtype, global_extent,
                  offset, extent);
  if (bytes != expected) {
    throw InvalidArgumentError("put_chunk '" + std::string(component) + "': " +
                               std::to_string(bytes) + " bytes given, the extent needs " +
                               std::to_string(expected));
  }
  Impl& w = *impl_;
  const client::ChunkCodec* codec = w.codec_for("put_chunk", component, dtype, extent.size());
  if (w.aborted) return;  // the step was aborted: nothing of it is sent
  if (const auto use = w.reductions.use(component); use != client::StreamReductions::Use::kNone) {
    w.reductions.record(component, dtype, extent, data, bytes);
    if (use == client::StreamReductions::Use::kInputOnly) return;
  }
  if (codec != nullptr && bytes > 0) {  // encoded at end_step, with the step's others
    client::ChunkPlace place = w.place(component, dtype, global_extent, offset, extent);
    place.component = w.pending.keep(std::string(component));
    w.to_encode.push_back(Impl::ToEncode{codec, place,
                                         std::vector<std::uint64_t>(extent.begin(), extent.end()),
                                         data, bytes, nullptr});
    return;
  }
  w.chunks.put(*w.open_step, w.place(component, dtype, global_extent, offset, extent), data,
               bytes);
}

void StreamWriter::set_operator(std::string_view component, std::optional<StreamOperator> op) {
  impl_->set_codec(component, op);
}

std::span<std::byte> StreamWriter::loan_chunk(std::string_view component, DType dtype,
                                              std::span<const std::uint64_t> global_extent,
                                              std::span<const std::uint64_t> offset,
                                              std::span<const std::uint64_t> extent) {
  const std::size_t bytes = check_chunk("loan_chunk", impl_->open_step.has_value(), component,
                                        dtype, global_extent, offset, extent);
  Impl& w = *impl_;
  const client::ChunkCodec* codec = w.codec_for("loan_chunk", component, dtype, extent.size());
  // An aborted step gets memory to fill, never sent.
  if (w.aborted) return w.chunks.private_memory(bytes);
  const auto use = w.reductions.use(component);
  if (use == client::StreamReductions::Use::kInputOnly) {  // filled here, reduced at end_step
    auto memory = std::make_unique_for_overwrite<std::byte[]>(bytes);
    std::byte* into = memory.get();
    w.reductions.record(component, dtype, extent, into, bytes, std::move(memory));
    return {into, bytes};
  }
  const std::span<std::byte> loaned = w.loan(component, dtype, global_extent, offset, extent,
                                             bytes, codec);
  if (use == client::StreamReductions::Use::kInputSent) {
    w.reductions.record(component, dtype, extent, loaned.data(), bytes);
  }
  return loaned;
}

std::span<std::byte> StreamWriter::Impl::loan(std::string_view component, DType dtype,
                                              std::span<const std::uint64_t> global_extent,
                                              std::span<const std::uint64_t> offset,
                                              std::span<const std::uint64_t> extent,
                                              std::size_t bytes, const client::ChunkCodec* codec) {
  Impl& w = *this;
  if (codec != nullptr && bytes > 0) {  // filled here, encoded at end_step
    client::ChunkPlace place = w.place(component, dtype, global_extent, offset, extent);
    place.component = w.pending.keep(std::string(component));
    auto memory = std::make_unique_for_overwrite<std::byte[]>(bytes);
    std::byte* into = memory.get();
    w.to_encode.push_back(Impl::ToEncode{codec, place,
                                         std::vector<std::uint64_t>(extent.begin(), extent.end()),
                                         into, bytes, std::move(memory)});
    return {into, bytes};
  }
  return w.chunks.loan(*w.open_step, w.place(component, dtype, global_extent, offset, extent),
                       bytes);
}

void StreamWriter::set_attribute(std::string_view path, std::string_view name,
                                 AttributeValue value, std::string_view element) {
  if (!impl_->open_step) throw InvalidArgumentError("set_attribute: no step is open");
  if (impl_->aborted) return;
  impl_->add_attribute(*impl_->open_step, path, name, value, element);
}

void StreamWriter::set_stream_attribute(std::string_view path, std::string_view name,
                                        AttributeValue value, std::string_view element) {
  impl_->add_attribute(-1, path, name, value, element);
  if (!impl_->open_step) impl_->flush("SS.STREAM.ATTR");
}

bool StreamWriter::end_step() {
  if (!impl_->open_step) throw InvalidArgumentError("end_step: no step is open");
  if (impl_->aborted) {
    impl_->reset();
    impl_->chunks.release_loans();
    impl_->abandon_step(*std::exchange(impl_->aborted, std::nullopt));
    return false;
  }
  // The chunks, the attributes and END in one round trip: the server refuses the END when any of
  // them was refused, so the step never becomes visible without one of them.
  Impl& w = *impl_;
  const std::int64_t step = *w.open_step;
  // A reduction that fails, or a chunk that cannot be encoded, fails end_step before anything is
  // queued for it: the step stays open with everything put so far (nothing of it was sent), and a
  // later end_step tries again.
  w.put_derived(*this);
  w.encode_chunks();
  w.chunks.lend_held(step);
  // Colocated chunks are stored on this writer's shard first: the stream's shard names them
  // only once they are there.
  if (w.chunks.holds_colocated()) {
    try {
      w.chunks.store_colocated(step);
    } catch (const ServerError& e) {
      w.reset();
      if (!is_aborted(e.server_text())) throw;
      w.chunks.drop_step();  // the step is gone: nothing will name them
      w.abandon_step(e.server_text());
      return false;
    } catch (...) {
      w.reset();
      throw;
    }
  }
  w.chunks.settle();
  // END, and the next step reserved in the same round trip when a slot is free (not for a
  // writer whose chunks go to another member: its segments come from there).
  const std::int64_t stride =
      w.previous_step && *w.previous_step < step ? step - *w.previous_step : 1;
  const bool reserve = w.options.reserve_next_step && !w.chunks.member();
  const std::span<const std::size_t> sizes =
      reserve ? w.chunks.sizes_to_lend() : std::span<const std::size_t>();
  const bool lend = !sizes.empty();
  bool reserved = false;
  if (reserve) {
    w.pending.start(6 + sizes.size(), "SS.STREAM.END", step);
    w.pending.request.arg("NEXT");
    w.pending.request.arg(step + stride);
    for (std::size_t size : sizes) w.pending.request.arg(static_cast<std::int64_t>(size));
  } else {
    w.pending.start(4, "SS.STREAM.END", step);
  }
  try {
    w.flush("end_step", [&](client::Connection& c, const Reply& reply) {
      if (!reserve) return;
      if (!reply.is_array() || reply.elements.size() != 2) c.protocol_error("malformed END reply");
      reserved = reply.elements[0].integer != 0;
      if (!lend || reply.elements[1].is_nil()) return;
      w.chunks.read_next_lent(c, reply.elements[1]);
    });
  } catch (const ServerError& e) {
    if (!is_aborted(e.server_text())) throw;
    // Aborted while this writer was busy with it (another writer failed, or it timed out).
    w.chunks.drop_step();
    w.abandon_step(e.server_text());
    return false;
  }
  w.chunks.keep_next_lent();
  w.previous_step = step;
  if (reserved) w.reserved = step + stride;
  w.open_step.reset();
  return true;
}

void StreamWriter::close() {
  if (impl_->closed) return;
  impl_->reset();
  impl_->closed = true;
  Request request;
  if (impl_->open_step) {
    // Closing inside a step: the server aborts it for every group, also when its begin was a
    // reservation the server has not seen used (which a plain CLOSE withdraws).
    request.command({"SS.STREAM.CLOSE", impl_->stream, std::to_string(impl_->rank), "OPEN",
                     std::to_string(*impl_->open_step)});
  } else {
    request.command({"SS.STREAM.CLOSE", impl_->stream, std::to_string(impl_->rank)});
  }
  impl_->client.call(impl_->stream, request, "SS.STREAM.CLOSE");
}

// ---- StreamReader --------------------------------------------------------------------------------

// Shared by a reader and the steps it hands out.
struct ReaderState {
  ReaderState(const ClientOptions& client_options, std::string_view stream, std::string_view group,
              std::uint32_t rank, StreamReaderOptions options)
      : client(client_options), stream(stream), group(group), rank(rank),
        options(std::move(options)), chunks(client, stream, group, rank) {}

  void release(std::int64_t step) {
    if (held != step) return;
    held.reset();
    Request request;
    request.command({"SS.STREAM.RELEASE", stream, group, std::to_string(rank), std::to_string(step)});
    client.call(stream, request, "SS.STREAM.RELEASE");
  }

  Client::Impl client;
  std::string stream, group;
  std::uint32_t rank;
  StreamReaderOptions options;
  client::ChunkFetcher chunks;  // how chunk bytes come, and the segments mapped for them
  std::optional<std::int64_t> held;
  // The stream-level attributes as the server last sent them (with a step, when they changed).
  std::vector<StreamAttribute> stream_attributes;
  // NEXT ... RELEASE step: the step held is released by the request for the next. False once a
  // server refused the option (older than it): RELEASE is then pipelined ahead of NEXT.
  bool next_releases = true;
  bool left = false;
};

class StreamReader::Impl {
 public:
  std::shared_ptr<ReaderState> state;
};

class StreamStep::Impl {
 public:
  std::shared_ptr<ReaderState> reader;
  std::int64_t number = -1;
  std::vector<std::uint32_t> readers;
  stream::RankTable writers;
  std::uint32_t index = 0;
  std::vector<StreamComponent> components;
  std::vector<std::vector<std::int64_t>> chunk_ids;  // per component, parallel to its chunks
  // Per component, parallel to its chunks: the cluster member holding a colocated chunk and its
  // id there (SS.CHUNKS.GET); an empty member: the stream's shard holds it.
  std::vector<std::vector<std::pair<std::string, std::int64_t>>> homes;
  // Per component, parallel to its chunks when any is encoded (else empty): a chunk's frame
  // size, 0 for raw elements.
  std::vector<std::vector<std::uint64_t>> encoded;
  std::vector<StreamAttribute> attributes;
  client::MappedChunks mapped;  // the chunks whose segments NEXT ... MAP passed

  // The bytes of each wanted chunk (of any components; each named once), in order (the reader's
  // ChunkFetcher: mapped already, or asked for in one round trip).
  std::vector<ReceivedChunk> fetch(std::span<const WantedChunk> wanted);
  // Decodes the encoded ones among `received` (the bytes of `wanted`, in order) in place.
  void decode(std::span<const WantedChunk> wanted, std::vector<ReceivedChunk>& received) const;
  // The frame size of a wanted chunk, 0 when it is raw.
  std::uint64_t encoded_size(const WantedChunk& w) const {
    const std::vector<std::uint64_t>& sizes = encoded[w.component];
    return sizes.empty() ? 0 : sizes[w.chunk];
  }
  // The index of the component called `name` in `components`, or nullopt.
  std::optional<std::size_t> find(std::string_view name) const {
    auto found = std::find_if(components.begin(), components.end(),
                              [&](const StreamComponent& c) { return c.name == name; });
    if (found == components.end()) return std::nullopt;
    return static_cast<std::size_t>(found - components.begin());
  }
};

StreamReader::StreamReader(const ClientOptions& client_options, std::string_view stream,
                           std::string_view group, std::uint32_t rank, std::uint32_t size,
                           StreamReaderOptions options)
    : impl_(std::make_unique<Impl>()) {
  if (stream.empty() || group.empty()) {
    throw InvalidArgumentError("stream and group names must not be empty");
  }
  if (size == 0 || rank >= size) {
    throw InvalidArgumentError("reader rank " + std::to_string(rank) + " is out of range for a "
                               "group of " + std::to_string(size));
  }
  try {
    stream::ChunkStrategy::parse(options.strategy, options.strategy_options);
  } catch (const stream::StrategyError& e) {
    throw InvalidArgumentError(e.what());
  }
  if (options.step_distribution != StepDistribution::kAll &&
      options.step_distribution != StepDistribution::kRoundRobin &&
      options.step_distribution != StepDistribution::kOnDemand) {
    throw InvalidArgumentError("step_distribution " +
                               std::to_string(static_cast<int>(options.step_distribution)) +
                               " is not a StepDistribution");
  }
  impl_->state = std::make_shared<ReaderState>(client_options, stream, group, rank, options);
  const StreamReaderOptions& o = impl_->state->options;
  const std::string host = o.hostname.empty() ? this_host() : o.hostname;
  const char* policy = o.policy == StreamReaderOptions::Policy::kBlock ? "block" : "discard";
  const char* start = o.start == StreamReaderOptions::Start::kOldest ? "oldest" : "newest";
  std::vector<std::string> words{"SS.STREAM.JOIN", std::string(stream), std::string(group),
                                 std::to_string(rank), std::to_string(size), host, "POLICY",
                                 policy, "START", start, "STRATEGY", o.strategy};
  // Only when not the default, so that a server without the option takes the default.
  if (o.step_distribution != StepDistribution::kAll) {
    words.emplace_back("DISTRIBUTION");
    words.emplace_back(o.step_distribution == StepDistribution::kRoundRobin ? "round_robin"
                                                                            : "on_demand");
  }
  Request request;
  request.command(words.size());
  for (const std::string& word : words) request.arg(word);
  impl_->state->client.call(impl_->state->stream, request, "SS.STREAM.JOIN");
}

StreamReader::~StreamReader() {
  if (!impl_ || !impl_->state || impl_->state->left) return;
  ReaderState& s = *impl_->state;
  s.left = true;
  try {
    s.client.cap_waits(kGoodbyeWait);
    Request request;
    request.command({"SS.STREAM.LEAVE", s.stream, s.group, std::to_string(s.rank)});
    s.client.call(s.stream, request, "SS.STREAM.LEAVE");
  } catch (const std::exception&) {
    // Closing the connection leaves the group too.
  }
}

StreamReader::StreamReader(StreamReader&&) noexcept = default;
StreamReader& StreamReader::operator=(StreamReader&&) noexcept = default;

StreamNext StreamReader::next_step() {
  ReaderState& s = *impl_->state;
  s.chunks.next_step();
  const milliseconds timeout = s.options.next_timeout;
  // A step still held is released by the request for the next (NEXT ... RELEASE step): one
  // reply, where a RELEASE ahead of the NEXT got its +OK at once and woke the reader once more
  // while the NEXT waited. A server that does not know the option gets the RELEASE pipelined.
  const std::optional<std::int64_t> releasing = std::exchange(s.held, std::nullopt);
  const bool release_in_next = releasing && s.next_releases;
  Request request;
  if (releasing && !release_in_next) {
    request.command({"SS.STREAM.RELEASE", s.stream, s.group, std::to_string(s.rank),
                     std::to_string(*releasing)});
  }
  // Over shared memory, MAP: the reply names the step's chunks in writer segments, so load()
  // needs no further round trip for them. CACHED: a segment's descriptor comes only the first
  // time (or again after this reader said it dropped the mapping).
  const bool map = s.client.shm_link().active();
  const std::vector<std::uint64_t> dropped = s.chunks.take_dropped();
  request.command(6 + (release_in_next ? 2 : 0) + (map ? 2 : 0) +
                  (map && !dropped.empty() ? 1 + dropped.size() : 0));
  request.arg("SS.STREAM.NEXT");
  request.arg(s.stream);
  request.arg(s.group);
  request.arg(static_cast<std::int64_t>(s.rank));
  if (release_in_next) {
    request.arg("RELEASE");
    request.arg(*releasing);
  }
  request.arg("TIMEOUT");
  request.arg(static_cast<std::int64_t>(timeout.count()));
  if (map) {
    request.arg("MAP");
    request.arg("CACHED");
    if (!dropped.empty()) request.arg("DROPPED");
    for (std::uint64_t id : dropped) request.arg(static_cast<std::int64_t>(id));
  }
  client::MappedChunks mapped;
  Reply reply = s.client.exchange(
      s.stream, request,
      [&](client::Connection& c) {
        std::optional<Reply> released;
        if (releasing && !release_in_next) released = c.read_reply();
        Reply answer = c.read_reply();
        if (released && released->is_error()) {
          client::throw_server_error(released->string, "SS.STREAM.RELEASE");
        }
        if (map && answer.is_array() && answer.elements.size() >= 8) {
          if (answer.elements.size() > 9 ||
              (answer.elements.size() == 9 && !answer.elements[8].is_integer())) {
            c.protocol_error("malformed SS.STREAM.NEXT reply");
          }
          if (answer.elements.size() == 9) s.chunks.set_queue_limit(answer.elements[8].integer);
          mapped = s.chunks.map_step_segments(c, answer.elements[7]);
        }
        return answer;
      },
      wait_of(timeout));
  if (reply.is_error() && release_in_next && reply.string.starts_with("ERR syntax error")) {
    // A server older than the option refused the request before acting on any of it (one that
    // knows it finds no syntax error in what this sends): ask again the way it knows, with the
    // same step held and the same mappings to tell it of.
    s.next_releases = false;
    s.held = releasing;
    s.chunks.retry_step(dropped);
    return next_step();
  }
  if (reply.is_error()) client::throw_server_error(reply.string, "SS.STREAM.NEXT");
  StreamNext next;
  if (reply.is_nil()) return next;  // kTimeout
  const std::string& kind = element(reply, 0, "kind").string;
  if (kind == "end") {
    next.kind = StreamNext::Kind::kEnd;
    return next;
  }
  if (kind == "skipped") {
    next.kind = StreamNext::Kind::kSkipped;
    next.skipped_step = element(reply, 1, "step").integer;
    next.reason = element(reply, 2, "reason").string;
    return next;
  }
  if (kind != "step") throw ProtocolError("SS.STREAM.NEXT: unknown reply kind '" + kind + "'");
  auto impl = std::make_unique<StreamStep::Impl>();
  impl->reader = impl_->state;
  impl->mapped = std::move(mapped);
  impl->number = element(reply, 1, "step").integer;
  s.held = impl->number;
  stream::RankTable readers;
  stream::RankTable& writers = impl->writers;
  for (const Reply& r : element(reply, 2, "readers").elements) {
    const auto rank = static_cast<std::uint32_t>(element(r, 0, "reader rank").integer);
    readers.emplace(static_cast<std::uint32_t>(impl->readers.size()), element(r, 1, "host").string);
    if (rank == s.rank) impl->index = static_cast<std::uint32_t>(impl->readers.size());
    impl->readers.push_back(rank);
  }
  for (const Reply& w : element(reply, 3, "writers").elements) {
    writers.emplace(static_cast<std::uint32_t>(element(w, 0, "writer rank").integer),
                    element(w, 1, "host").string);
  }
  stream::ChunkStrategy strategy = stream::ChunkStrategy::parse(
      element(reply, 4, "strategy").string, s.options.strategy_options);
  // The stream-level attributes come with this reader's first step and again only when they
  // change, whole: kept here, they are shown with every step, ahead of the step's own.
  bool stream_level_sent = false;
  std::vector<StreamAttribute> step_level;
  for (const Reply& a : element(reply, 5, "attributes").elements) {
    StreamAttribute attribute;
    attribute.step = element(a, 0, "attribute step").integer;
    attribute.path = element(a, 1, "attribute path").string;
    attribute.name = element(a, 2, "attribute name").string;
    attribute.value = parse_attribute(element(a, 3, "attribute type").string,
                                      element(a, 4, "attribute value"));
    if (a.elements.size() > 5) attribute.element = element(a, 5, "attribute element").string;
    if (attribute.step >= 0) {
      step_level.push_back(std::move(attribute));
      continue;
    }
    if (!std::exchange(stream_level_sent, true)) s.stream_attributes.clear();
    s.stream_attributes.push_back(std::move(attribute));
  }
  impl->attributes = s.stream_attributes;
  impl->attributes.insert(impl->attributes.end(), std::make_move_iterator(step_level.begin()),
                          std::make_move_iterator(step_level.end()));
  // Each component's chunks, and this reader's share of them by the group's strategy.
  for (const Reply& c : element(reply, 6, "components").elements) {
    StreamComponent component;
    component.name = element(c, 0, "component name").string;
    auto dtype = parse_dtype(element(c, 1, "dtype").string);
    if (!dtype) throw ProtocolError("stream reply: unknown dtype for " + component.name);
    component.dtype = *dtype;
    component.global_extent = parse_extent(element(c, 2, "global extent").string);
    std::vector<std::int64_t> ids;
    std::vector<std::pair<std::string, std::int64_t>> homes;
    std::vector<std::uint64_t> encoded;
    for (const Reply& chunk : element(c, 3, "chunks").elements) {
      ids.push_back(element(chunk, 0, "chunk id").integer);
      homes.emplace_back();
      std::uint64_t frame = 0;
      // After the four fields: [member node id, id there] for a colocated chunk (cluster mode),
      // then the frame size of an encoded one.
      for (std::size_t k = 4; k < chunk.elements.size(); ++k) {
        const Reply& more = chunk.elements[k];
        if (more.is_array()) {
          homes.back() = {element(more, 0, "chunk member").string,
                          element(more, 1, "chunk id there").integer};
        } else if (more.is_integer() && more.integer > 0) {
          frame = static_cast<std::uint64_t>(more.integer);
        } else {
          throw ProtocolError("stream reply: malformed chunk row of " + component.name);
        }
      }
      if (frame != 0 || !encoded.empty()) {
        encoded.resize(ids.size() - 1, 0);  // the raw ones before it
        encoded.push_back(frame);
      }
      component.chunks.push_back(stream::Chunk{
          parse_extent(element(chunk, 2, "offset").string),
          parse_extent(element(chunk, 3, "extent").string),
          static_cast<std::uint32_t>(element(chunk, 1, "source rank").integer)});
    }
    stream::Assignment assignment =
        strategy.assign(component.global_extent, component.chunks, writers, readers);
    component.mine = std::move(assignment.by_reader[impl->index]);
    impl->components.push_back(std::move(component));
    impl->chunk_ids.push_back(std::move(ids));
    impl->homes.push_back(std::move(homes));
    impl->encoded.push_back(std::move(encoded));
  }
  next.kind = StreamNext::Kind::kStep;
  next.step.emplace(StreamStep(std::move(impl)));
  return next;
}

// ---- StreamStep ----------------------------------------------------------------------------------

StreamStep::StreamStep(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
StreamStep::StreamStep(StreamStep&&) noexcept = default;
StreamStep& StreamStep::operator=(StreamStep&&) noexcept = default;
// A step dropped without release() stays held until the reader's next request, which gives it
// back in the same round trip (next_step's NEXT ... RELEASE; LEAVE releases what it holds).
StreamStep::~StreamStep() = default;

std::int64_t StreamStep::number() const noexcept { return impl_->number; }
const std::vector<std::uint32_t>& StreamStep::readers() const noexcept { return impl_->readers; }
std::uint32_t StreamStep::index() const noexcept { return impl_->index; }
const std::vector<StreamComponent>& StreamStep::components() const noexcept {
  return impl_->components;
}
const StreamComponent* StreamStep::component(std::string_view name) const noexcept {
  for (const auto& c : impl_->components) {
    if (c.name == name) return &c;
  }
  return nullptr;
}
const stream::RankTable& StreamStep::writers() const noexcept { return impl_->writers; }

const std::vector<StreamAttribute>& StreamStep::attributes() const noexcept {
  return impl_->attributes;
}

std::vector<StreamPiece> StreamStep::load(std::string_view name) {
  ReaderState& s = *impl_->reader;
  if (s.held != impl_->number) {
    throw InvalidArgumentError("load: step " + std::to_string(impl_->number) +
                               " has been released");
  }
  const std::optional<std::size_t> index = impl_->find(name);
  if (!index) {
    throw InvalidArgumentError("load: step " + std::to_string(impl_->number) +
                               " has no component '" + std::string(name) + "'");
  }
  const StreamComponent& component = impl_->components[*index];
  // Which chunk each piece comes from (chunks do not overlap; a piece lies in exactly one).
  std::vector<std::size_t> source_of;
  std::vector<std::size_t> wanted;  // chunk indices to fetch, each once
  for (const stream::Chunk& piece : component.mine) {
    std::size_t j = 0;
    while (j < component.chunks.size() && !contains(component.chunks[j], piece)) ++j;
    if (j == component.chunks.size()) {
      throw ProtocolError("load: a piece of '" + component.name + "' lies in no chunk");
    }
    source_of.push_back(j);
    if (std::find(wanted.begin(), wanted.end(), j) == wanted.end()) wanted.push_back(j);
  }
  if (wanted.empty()) return {};
  std::vector<WantedChunk> fetching;
  for (std::size_t j : wanted) fetching.push_back(WantedChunk{*index, j});
  return assemble(component, source_of, wanted, impl_->fetch(fetching),
                  dtype_size(component.dtype));
}

std::vector<ReceivedChunk> StreamStep::Impl::fetch(std::span<const WantedChunk> wanted) {
  std::vector<client::ChunkToFetch> chunks;
  chunks.reserve(wanted.size());
  for (const WantedChunk& w : wanted) {
    const StreamComponent& component = components[w.component];
    const auto& [member, id_there] = homes[w.component][w.chunk];
    const std::uint64_t frame = encoded_size(w);
    chunks.push_back(client::ChunkToFetch{
        chunk_ids[w.component][w.chunk], member, id_there,
        frame != 0 ? frame
                   : product(component.chunks[w.chunk].extent) * dtype_size(component.dtype),
        component.name});
  }
  std::vector<ReceivedChunk> received = reader->chunks.fetch(number, mapped, chunks);
  decode(wanted, received);
  return received;
}

// Encoded chunks are decoded into memory of their own, several at once (run_parallel): a reader's
// share of a step is often many chunks, and decoding, not fetching, is then what takes the time.
void StreamStep::Impl::decode(std::span<const WantedChunk> wanted,
                              std::vector<ReceivedChunk>& received) const {
  std::vector<std::size_t> encoded_ones;
  for (std::size_t k = 0; k < wanted.size(); ++k) {
    if (encoded_size(wanted[k]) != 0) encoded_ones.push_back(k);
  }
  if (encoded_ones.empty()) return;
  auto one = [&](std::size_t k) {
    const StreamComponent& component = components[wanted[k].component];
    const std::vector<std::uint64_t>& extent = component.chunks[wanted[k].chunk].extent;
    const std::size_t bytes = product(extent) * dtype_size(component.dtype);
    auto memory = std::make_shared_for_overwrite<std::byte[]>(bytes);
    client::decode_chunk(received[k].bytes, component.dtype, extent, {memory.get(), bytes},
                 "chunk " + std::to_string(wanted[k].chunk) + " of component '" + component.name +
                     "' in step " + std::to_string(number));
    received[k] = ReceivedChunk{{memory.get(), bytes}, std::move(memory), false};
  };
  run_parallel(encoded_ones.size(), [&](std::size_t i) { one(encoded_ones[i]); });
}

void StreamStep::load_boxes(std::span<const StreamBox> boxes) {
  ReaderState& s = *impl_->reader;
  const std::string step = "load_boxes: step " + std::to_string(impl_->number);
  if (s.held != impl_->number) throw InvalidArgumentError(step + " has been released");
  // Every box is checked before anything is asked for.
  std::vector<std::size_t> component_of;  // per box, its component's index
  for (const StreamBox& box : boxes) {
    const std::optional<std::size_t> index = impl_->find(box.component);
    if (!index) {
      throw InvalidArgumentError(step + " has no component '" + std::string(box.component) + "'");
    }
    const StreamComponent& component = impl_->components[*index];
    const std::string where = step + ", component '" + component.name + "': ";
    const std::vector<std::uint64_t>& global = component.global_extent;
    if (box.offset.size() != global.size() || box.extent.size() != global.size()) {
      throw InvalidArgumentError(where + "a box needs an offset and an extent of one entry per "
                                 "dimension of the component (" + std::to_string(global.size()) +
                                 "), not " + std::to_string(box.offset.size()) + " and " +
                                 std::to_string(box.extent.size()));
    }
    for (std::size_t d = 0; d < global.size(); ++d) {
      if (box.offset[d] > global[d] || box.extent[d] > global[d] - box.offset[d]) {
        throw InvalidArgumentError(
            where + "the box reaches past the global extent in dimension " + std::to_string(d) +
            ": offset " + std::to_string(box.offset[d]) + " + extent " +
            std::to_string(box.extent[d]) + " > " + std::to_string(global[d]));
      }
    }
    const std::optional<std::size_t> bytes = checked_bytes(box.extent, dtype_size(component.dtype));
    if (!bytes) throw InvalidArgumentError(where + "the box's size in bytes overflows");
    if (*bytes > 0 && box.destination == nullptr) {
      throw InvalidArgumentError(where + "the box's destination is null");
    }
    component_of.push_back(*index);
  }
  // The chunks the boxes touch, each fetched once, and what to copy from each.
  constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  std::vector<WantedChunk> wanted;
  std::vector<std::vector<std::size_t>> wanted_at(impl_->components.size());  // chunk -> wanted
  struct Copy {
    std::size_t box, chunk;  // chunk: the index into `wanted`
    Overlap met;
  };
  std::vector<Copy> copies;
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    const StreamComponent& component = impl_->components[component_of[i]];
    std::vector<std::size_t>& at = wanted_at[component_of[i]];
    at.resize(component.chunks.size(), kNone);
    for (std::size_t j = 0; j < component.chunks.size(); ++j) {
      std::optional<Overlap> met = overlap(component.chunks[j], boxes[i].offset, boxes[i].extent);
      if (!met) continue;
      if (at[j] == kNone) {
        at[j] = wanted.size();
        wanted.push_back(WantedChunk{component_of[i], j});
      }
      copies.push_back(Copy{i, at[j], std::move(*met)});
    }
  }
  if (wanted.empty()) return;
  const std::vector<ReceivedChunk> received = impl_->fetch(wanted);
  for (const Copy& copy : copies) {
    const StreamBox& box = boxes[copy.box];
    const StreamComponent& component = impl_->components[component_of[copy.box]];
    copy_overlap(component.chunks[wanted[copy.chunk].chunk], received[copy.chunk].bytes.data(),
                 box.offset, box.extent, copy.met, dtype_size(component.dtype),
                 static_cast<std::byte*>(box.destination));
  }
}

void StreamStep::load_box(std::string_view component, std::span<const std::uint64_t> offset,
                          std::span<const std::uint64_t> extent, void* destination) {
  const StreamBox box{component, {offset.begin(), offset.end()}, {extent.begin(), extent.end()},
                      destination};
  load_boxes(std::span<const StreamBox>(&box, 1));
}

void StreamStep::release() {
  if (impl_ && impl_->reader) impl_->reader->release(impl_->number);
}

}  // namespace slipstream
