// Streams in the C++ client: StreamWriter publishes a simulation's steps as openPMD-shaped record
// components made of chunks; StreamReader, one of a group of readers, takes its share of every
// step. See docs/streams.md for the data model, strategies, queue policies and faults.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "slipstream/client.hpp"
#include "slipstream/export.hpp"
#include "slipstream/stream_chunks.hpp"
#include "slipstream/tensor.hpp"
#include "slipstream/tensor_data.hpp"

namespace slipstream {

/// The alternatives an attribute value holds, in the order of its index().
using AttributeVariant = std::variant<std::string, std::int64_t, double, std::vector<std::string>,
                                      std::vector<std::int64_t>, std::vector<double>>;

/// An attribute value: openPMD's string, integer and floating-point scalars and arrays. It is the
/// variant above (std::get, std::visit and index() work on it) built from any arithmetic type:
/// every integer type (and bool) becomes an int64, every floating-point type a double, vectors of
/// them vectors of int64 or double, C strings and string views strings. An unsigned value above
/// INT64_MAX throws std::out_of_range: cast it and name its element type
/// (StreamWriter::set_attribute's `element`, "ULONGLONG") to send it as its two's complement.
class AttributeValue : public AttributeVariant {
 public:
  AttributeValue() = default;
  AttributeValue(AttributeVariant value) : AttributeVariant(std::move(value)) {}
  AttributeValue(std::string value) : AttributeVariant(std::move(value)) {}
  AttributeValue(std::string_view value) : AttributeVariant(std::string(value)) {}
  AttributeValue(const char* value) : AttributeVariant(std::string(value)) {}
  AttributeValue(std::vector<std::string> values) : AttributeVariant(std::move(values)) {}
  template <typename T>
    requires std::is_integral_v<T>
  AttributeValue(T value) : AttributeVariant(to_int64(value)) {}
  template <typename T>
    requires std::is_floating_point_v<T>
  AttributeValue(T value) : AttributeVariant(static_cast<double>(value)) {}
  template <typename T>
    requires std::is_integral_v<T>
  AttributeValue(std::vector<T> values) : AttributeVariant(to_int64s(std::move(values))) {}
  template <typename T>
    requires std::is_floating_point_v<T>
  AttributeValue(std::vector<T> values) : AttributeVariant(to_doubles(std::move(values))) {}

 private:
  template <typename T>
  static std::int64_t to_int64(T value) {
    if constexpr (std::is_unsigned_v<T> && sizeof(T) >= sizeof(std::int64_t)) {
      if (value > static_cast<T>(INT64_MAX)) {
        throw std::out_of_range("attribute value " + std::to_string(value) +
                                " is above INT64_MAX: cast it to int64 and give the element type");
      }
    }
    return static_cast<std::int64_t>(value);
  }
  template <typename T>
  static std::vector<std::int64_t> to_int64s(std::vector<T> values) {
    if constexpr (std::is_same_v<T, std::int64_t>) {
      return values;
    } else {
      std::vector<std::int64_t> out;
      out.reserve(values.size());
      for (T v : values) out.push_back(to_int64(v));
      return out;
    }
  }
  template <typename T>
  static std::vector<double> to_doubles(std::vector<T> values) {
    if constexpr (std::is_same_v<T, double>) {
      return values;
    } else {
      return std::vector<double>(values.begin(), values.end());
    }
  }
};

/// One attribute as a reader sees it. `step` is -1 for a stream-level attribute; `path` is "/" for
/// the stream or step itself, else a record or component path (`meshes/E`, `meshes/E/x`).
struct StreamAttribute {
  std::int64_t step = -1;
  std::string path;
  std::string name;
  AttributeValue value;
  /// The element type the writer declared (StreamWriter::set_attribute's `element`), or empty.
  std::string element;
};

/// A compression operator for a component's chunks (docs/streams.md, "Operators"; the operators
/// and their parameters: compression.hpp). The writer encodes each chunk on its own cores; the
/// server stores the encoded bytes and never decodes them; readers get the decoded elements.
using StreamOperator = CompressionOperator;

/// What a reduction runs: the inputs (one tensor per input component, in the order of
/// StreamReduction::inputs) in, the derived array out (its first tensor is used).
using ReductionFunction = std::function<std::vector<Tensor>(std::span<const TensorRef> inputs)>;

/// A reduction at the source (docs/streams.md, "Reductions"): a function the writer rank applies
/// at end_step to its own chunks of `inputs`, publishing what it returns as the component `output`
/// instead of (or beside) the inputs, so that a simulation ships what a learner needs (a
/// phase-space histogram, a subsample) rather than raw particles.
///
/// Each input is handed to the function as one tensor: this rank's chunk of it in the step, or its
/// chunks joined along the first dimension in the order they were put (their other dimensions must
/// agree). Every writer rank's result must have the same dtype and shape [d1, ...]; the output
/// component has the global extent [writers, d1, ...] and rank r's result is its row r (readers sum
/// or concatenate the rows as they need). The output's own operator, if any, applies to it.
/// Stream-level attributes on the output's path record where it came from: `reductionSource`,
/// `reductionInputs` and `reductionLayout`.
struct StreamReduction {
  /// The components the function takes, in the order of its parameters.
  std::vector<std::string> inputs;
  /// The derived component (an openPMD path such as `particles/e/phaseSpace`).
  std::string output;
  /// Where the function comes from: a TorchScript archive (torch.jit.save) or ONNX model file when
  /// `function` is empty (loaded through libslipstream_local, which libslipstream loads when it is
  /// needed); otherwise only a name recorded in the attributes.
  std::string source;
  /// The function to run; empty: loaded from `source`.
  ReductionFunction function;
  /// True: the inputs' chunks are also sent; false (the point of a reduction): only the output.
  bool send_inputs = false;
};

/// Makes a reduction's function from its source when StreamReduction::function is empty.
/// libslipstream_local installs one that loads TorchScript and ONNX files as LocalModels on the
/// CPU; set another to load functions of another kind. Not thread-safe against writers being made.
using ReductionLoader = std::function<ReductionFunction(const std::string& source)>;
SLIPSTREAM_API void set_reduction_loader(ReductionLoader loader);

/// How a writer attaches to a stream. The first writer to attach (or the first reader to join)
/// creates the stream; every writer must give the same options.
struct StreamWriterOptions {
  /// Steps held at once (reserved at begin_step, so 1 means one step in memory).
  std::size_t queue_limit = 2;
  /// Groups the writers wait for before steps that no group wants may be dropped.
  std::uint32_t expected_groups = 0;
  /// True: a writer that dies ends the stream; false: the others go on without it.
  bool end_on_writer_failure = false;
  /// A step not ended by every writer within this time is aborted; zero: no limit.
  std::chrono::milliseconds step_timeout{0};
  /// Longest wait of begin_step for a slot; zero waits as long as it takes.
  std::chrono::milliseconds begin_timeout{0};
  /// This writer's host, for the readers' hostname_ strategies. Empty: this machine's hostname.
  std::string hostname;
  /// Over a Unix socket with shared memory (ClientOptions::shared_memory), chunks of at least
  /// this many bytes are copied into shared-memory segments the server lends this writer and
  /// reuses step after step (readers on the node then map them: no further copy); smaller chunks,
  /// and every chunk over TCP, go on the socket.
  std::size_t shared_memory_min_bytes = 64 * 1024;
  /// True: end_step also reserves this writer's next step (the last step plus the last stride
  /// between steps) when a slot is free at that moment, with its shared-memory segments, so
  /// that a begin_step of that step costs no round trip (one round trip per step instead of
  /// two). A reservation only takes a free slot, never waits or makes room; a begin_step of
  /// another step, close() or a disconnect withdraws it, and readers never see it. False: every
  /// begin_step is a round trip.
  bool reserve_next_step = true;
  /// ADIOS2 SST's FirstTimestepPrecious. True: the first step that completes is kept for the
  /// stream's whole life, and every group that joins later (whatever its start) is handed it
  /// first, then continues as its start says. It holds one step's memory (chunks, attributes,
  /// segments) until the stream is forgotten or deleted, and takes a slot of queue_limit only
  /// while a group that is entitled to it has not released it. Sent only when true (a server
  /// without the option refuses it).
  bool first_step_precious = false;
  /// Compression operators by component name (`meshes/E/x`), or "*" for every component without
  /// one of its own. Checked when the writer is made (InvalidArgumentError naming the component
  /// for an unknown operator or parameter); StreamWriter::set_operator changes them later. A
  /// component's own zfp refuses integer chunks (InvalidArgumentError at put); "*" leaves them raw.
  std::map<std::string, StreamOperator, std::less<>> operators;
  /// Reductions at the source (see StreamReduction), run at every end_step in this order. A
  /// component may feed several reductions; an output may not be an input. Checked, and their
  /// functions loaded, when the writer is made (InvalidArgumentError naming the reduction).
  std::vector<StreamReduction> reductions;
};

/// One writer rank of a stream, over its own connection (the rank is bound to it: a stale process
/// cannot write as this rank, and a connection that breaks is a writer failure).
///
/// Deferred I/O, as openPMD's storeChunk: put_chunk() and set_attribute() borrow their buffers
/// and send nothing until end_step(), which sends the whole step in one round trip. Keep the
/// buffers alive and unchanged until end_step() returns.
///
/// Thread safety: one thread at a time.
class SLIPSTREAM_API StreamWriter {
 public:
  /// Attaches as writer `rank` of `writers` to `stream` on the server of `client_options`.
  /// Throws ServerError when the stream exists with other options or the rank is taken.
  StreamWriter(const ClientOptions& client_options, std::string_view stream, std::uint32_t rank,
               std::uint32_t writers, StreamWriterOptions options = {});
  /// Closes the stream for this writer (as close()); errors are not reported from here.
  ~StreamWriter();
  StreamWriter(StreamWriter&&) noexcept;
  StreamWriter& operator=(StreamWriter&&) noexcept;
  StreamWriter(const StreamWriter&) = delete;
  StreamWriter& operator=(const StreamWriter&) = delete;

  /// Begins `step` (numbers increase per writer; all writers of a step give the same number).
  /// Blocks while the queue is full. Throws TimeoutError after options.begin_timeout.
  void begin_step(std::int64_t step);
  /// Adds a chunk of `component` (an openPMD path such as `meshes/E/x`) to the step begun: the
  /// box at `offset` with `extent` elements per dimension (row-major bytes) within the
  /// component's `global_extent`. Borrows `data` until end_step().
  void put_chunk(std::string_view component, DType dtype,
                 std::span<const std::uint64_t> global_extent,
                 std::span<const std::uint64_t> offset, std::span<const std::uint64_t> extent,
                 const void* data, std::size_t bytes);
  template <typename T>
  void put_chunk(std::string_view component, std::span<const std::uint64_t> global_extent,
                 std::span<const std::uint64_t> offset, std::span<const std::uint64_t> extent,
                 std::span<const T> data) {
    put_chunk(component, dtype_of<T>, global_extent, offset, extent, data.data(),
              data.size_bytes());
  }
  /// A writable region for a chunk of `component` in the step begun (the arguments as
  /// put_chunk's), to fill before end_step(), as openPMD's span form of storeChunk. Over shared
  /// memory the region is the segment the readers will map: the chunk is never copied. Otherwise
  /// it is memory of the writer's, sent on the socket at end_step(). Valid until end_step().
  std::span<std::byte> loan_chunk(std::string_view component, DType dtype,
                                  std::span<const std::uint64_t> global_extent,
                                  std::span<const std::uint64_t> offset,
                                  std::span<const std::uint64_t> extent);
  template <typename T>
  std::span<T> loan_chunk(std::string_view component, std::span<const std::uint64_t> global_extent,
                          std::span<const std::uint64_t> offset,
                          std::span<const std::uint64_t> extent) {
    std::span<std::byte> bytes = loan_chunk(component, dtype_of<T>, global_extent, offset, extent);
    return {reinterpret_cast<T*>(bytes.data()), bytes.size() / sizeof(T)};
  }
  /// Sets (or, with nullopt, removes) the compression operator of `component` ("*": every
  /// component without its own) for the chunks put from now on. Throws InvalidArgumentError for
  /// an unknown operator or parameter, naming the component.
  void set_operator(std::string_view component, std::optional<StreamOperator> op);
  /// Sets an attribute of the step begun (`path` "/" for the step itself: time, dt, ...).
  /// `element` optionally names the writer's own element type of an integer or floating-point
  /// value, which readers get back in StreamAttribute::element so that they can restore the
  /// exact type: CHAR, SCHAR, UCHAR, SHORT, USHORT, INT, UINT, LONG, LONGLONG, ULONG, ULONGLONG
  /// or BOOL for integers (unsigned 64-bit values travel as their two's complement), FLOAT,
  /// DOUBLE, LONG_DOUBLE or ARR_DBL_7 for floating point (openPMD's Datatype names). The server
  /// refuses other names.
  void set_attribute(std::string_view path, std::string_view name, AttributeValue value,
                     std::string_view element = {});
  /// Sets a stream-level attribute (sent with the next end_step(), or at once when no step is
  /// open).
  void set_stream_attribute(std::string_view path, std::string_view name, AttributeValue value,
                            std::string_view element = {});
  /// Sends the step's chunks and attributes and ends it. The step becomes visible to readers when
  /// every writer has ended it. Returns false when the step was aborted instead (another writer
  /// failed mid-step or the step timed out, and the stream goes on: readers are told it was
  /// skipped); last_abort_reason() says why. A writer whose step was aborted before it began it
  /// gets through begin_step, put_chunk and set_attribute as usual, nothing being sent, and false
  /// here. Throws the first error the server reported for the step otherwise.
  bool end_step();
  /// Why the last step end_step() returned false for was aborted (the server's text).
  const std::string& last_abort_reason() const noexcept;
  /// This writer is done. Once every writer has closed, readers get the end of the stream.
  void close();

  const std::string& stream() const noexcept;
  std::uint32_t rank() const noexcept;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

/// How a group shares its steps among its readers (StreamReaderOptions::step_distribution).
///   kAll:        every reader gets every step and its share of the chunks by the strategy.
///   kRoundRobin: each step goes whole to one reader, in turn: the group's k-th step to its
///                members in ascending rank order, k mod M (deterministic). A step whose reader
///                left before taking it goes to the next member in rank order.
///   kOnDemand:   each step goes whole to whichever reader asks first (next_step()).
/// A step handed whole has this reader alone in its reader table (StreamStep::readers()), so the
/// strategy gives it every chunk (with a hostname_ strategy whose fallback is discard or fail,
/// chunks of writers on other hosts are discarded or refused: use another fallback). A reader is
/// never handed a step handed to another reader of its group; every reader is still told of
/// every aborted step (kSkipped).
enum class StepDistribution { kAll, kRoundRobin, kOnDemand };

/// How a reader joins a group.
struct StreamReaderOptions {
  enum class Policy { kBlock, kDiscard };
  enum class Start { kOldest, kNewest };
  using StepDistribution = slipstream::StepDistribution;
  /// Block: the group sees every step and writers wait for it. Discard: writers never wait for
  /// its backlog; steps it falls behind on are skipped for it (counted).
  Policy policy = Policy::kBlock;
  /// A group that joins after steps exist starts at the oldest held or the next step.
  Start start = Start::kOldest;
  /// The group's chunk distribution strategy (docs/streams.md); every member must agree.
  std::string strategy = "hostname_binpacking_slicedataset";
  stream::StrategyOptions strategy_options;
  /// Longest wait of next_step(); zero waits as long as it takes.
  std::chrono::milliseconds next_timeout{0};
  /// This reader's host. Empty: this machine's hostname.
  std::string hostname;
  /// How the group shares its steps (see StepDistribution); every member must agree (the server
  /// refuses a join that differs). Sent only when not kAll (a server without the option refuses
  /// it).
  StepDistribution step_distribution = StepDistribution::kAll;
};

/// A record component of a step as the reader sees it: every chunk the writers put (all ranks),
/// and this reader's share as computed by the group's strategy.
struct StreamComponent {
  std::string name;
  DType dtype = DType::kFloat32;
  std::vector<std::uint64_t> global_extent;
  stream::ChunkTable chunks;  ///< every chunk of the step, in the writers' order
  stream::ChunkTable mine;    ///< this reader's pieces (may cut chunks), source ranks kept
};

/// One piece of this reader's share with its bytes (row-major, `piece.extent` elements).
///
/// `bytes` is a view: `owner` keeps its memory mapped or allocated for as long as this piece (or
/// a copy of it) lives, even after the reader is destroyed. When the piece is its whole chunk, or
/// a run of whole rows of it (cuts along the first dimension), the view points into the chunk as
/// received, or, when `shared` is true, into the shared-memory segment the writer filled: no copy
/// is made. Other cuts are gathered into memory of their own.
///
/// A shared piece shows the step's bytes until the step is released: after that the writer may
/// reuse the segment for a later step (the mapping stays valid; the values change). Copy what you
/// keep beyond release(). Unshared pieces never change.
struct StreamPiece {
  stream::Chunk piece;
  std::span<const std::byte> bytes;
  std::shared_ptr<const void> owner;
  bool shared = false;

  /// The elements as T (the caller knows the component's dtype; sizes are not checked).
  template <typename T>
  std::span<const T> as() const noexcept {
    return {reinterpret_cast<const T*>(bytes.data()), bytes.size() / sizeof(T)};
  }
};

/// One box to load from a step: `extent` elements per dimension from `offset` of `component`,
/// copied row-major into `destination` (room for product(extent) elements of the component's
/// dtype). A component of no dimensions (a scalar) takes empty vectors: one element.
struct StreamBox {
  std::string_view component;
  std::vector<std::uint64_t> offset;
  std::vector<std::uint64_t> extent;
  void* destination = nullptr;
};

class StreamReader;

/// A step handed to this reader. Load what you need, then release() it, or just drop it: a step
/// dropped unreleased is given back in the same round trip as the reader's next request
/// (next_step() or leaving), which saves a round trip per step; release() gives it back at once
/// (do that before long work on copies, so the writers need not wait).
class SLIPSTREAM_API StreamStep {
 public:
  StreamStep(StreamStep&&) noexcept;
  StreamStep& operator=(StreamStep&&) noexcept;
  ~StreamStep();

  std::int64_t number() const noexcept;
  /// The group's readers for this step (their ranks) and this reader's index among them, which
  /// is its rank for the strategy.
  const std::vector<std::uint32_t>& readers() const noexcept;
  std::uint32_t index() const noexcept;
  /// The writers of the stream and their hosts (rank -> host), as the strategies see them.
  const stream::RankTable& writers() const noexcept;
  const std::vector<StreamComponent>& components() const noexcept;
  /// The component called `name`, or nullptr.
  const StreamComponent* component(std::string_view name) const noexcept;
  /// Stream-level attributes and this step's.
  const std::vector<StreamAttribute>& attributes() const noexcept;
  /// This reader's pieces of `component` with their bytes: the chunks they come from are fetched
  /// in one round trip.
  std::vector<StreamPiece> load(std::string_view component);
  /// Copies each box (any box inside its component's global extent, not only this reader's
  /// share) into its destination. Every chunk the boxes touch is fetched once, all in one round
  /// trip (chunks already mapped over shared memory are not fetched). Elements of a box that no
  /// chunk covers are left as they were in the destination. Throws InvalidArgumentError naming
  /// the step and component when a component does not exist, a box's dimensionality differs from
  /// the component's, a box lies outside its global extent, or a box of elements has no
  /// destination; nothing is copied then (nor when the step was released, or fetching fails).
  void load_boxes(std::span<const StreamBox> boxes);
  /// One box.
  void load_box(std::string_view component, std::span<const std::uint64_t> offset,
                std::span<const std::uint64_t> extent, void* destination);
  /// Done with the step: the writers may reuse its slot once every reader has released it.
  void release();

 private:
  friend class StreamReader;
  class Impl;
  explicit StreamStep(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// What next_step() found.
struct StreamNext {
  enum class Kind { kStep, kSkipped, kEnd, kTimeout };
  Kind kind = Kind::kTimeout;
  std::optional<StreamStep> step;  ///< for kStep
  std::int64_t skipped_step = -1;  ///< for kSkipped
  std::string reason;              ///< for kSkipped: why the step was aborted
};

/// One reader of a group, over its own connection (the (group, rank) is bound to it; a
/// connection that breaks is a reader leaving, and the group goes on without it).
///
/// Thread safety: one thread at a time.
class SLIPSTREAM_API StreamReader {
 public:
  /// Joins `group` of `size` readers as `rank` on `stream` (created, waiting for its writers, if
  /// none has attached yet).
  StreamReader(const ClientOptions& client_options, std::string_view stream,
               std::string_view group, std::uint32_t rank, std::uint32_t size,
               StreamReaderOptions options = {});
  /// Leaves the group.
  ~StreamReader();
  StreamReader(StreamReader&&) noexcept;
  StreamReader& operator=(StreamReader&&) noexcept;
  StreamReader(const StreamReader&) = delete;
  StreamReader& operator=(const StreamReader&) = delete;

  /// Waits for the next step for this reader (releasing the previous one if still held).
  StreamNext next_step();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace slipstream
