// slipstream.StreamReader and what it hands out (StreamStep, StreamComponent, StreamChunk,
// StreamPiece, StreamSkipped): one reader of a group taking its share of every step, with the
// loaded bytes viewed by numpy without a copy. Every call that talks to the server releases the
// GIL: a reader waiting for a step must not stop the writer threads of the same process.
#include <pybind11/stl.h>

#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "slipstream/error.hpp"
#include "slipstream/stream.hpp"

namespace slipstream::python {

namespace {

// Shared by a reader and the steps it handed out: the C++ reader and the steps' StreamStep
// objects use one connection, so every call on either takes `mutex` (with the GIL released).
struct ReaderCore {
  std::mutex mutex;
  std::optional<StreamReader> reader;  // guarded by mutex; empty once closed
};

py::tuple tuple_of(const std::vector<std::uint64_t>& values) {
  py::tuple tuple(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) tuple[i] = py::int_(values[i]);
  return tuple;
}

std::string text_of(const std::vector<std::uint64_t>& values) {
  return py::str(tuple_of(values)).cast<std::string>();
}

py::object attribute_object(const AttributeValue& value) {
  return std::visit([](const auto& v) -> py::object { return py::cast(v); }, value);
}

constexpr const char* kPieceCapsule = "slipstream.StreamPiece.bytes";

// A loaded piece's bytes as a read-only numpy array of `dtype` and the piece's extent, without a
// copy: a capsule holding the piece's owner (the chunk as received, the mapped shared-memory
// segment, or the gathered piece) is the array's base, so the array's memory stays valid after
// the step is released and the reader is gone.
py::array piece_array(const StreamPiece& piece, DType dtype) {
  std::vector<py::ssize_t> shape(piece.piece.extent.begin(), piece.piece.extent.end());
  using Owner = std::shared_ptr<const void>;
  auto owner = std::make_unique<Owner>(piece.owner);
  py::capsule base(owner.get(), kPieceCapsule, [](PyObject* capsule) {
    delete static_cast<Owner*>(PyCapsule_GetPointer(capsule, kPieceCapsule));
  });
  owner.release();  // the capsule owns it now
  py::array array(numpy_dtype(dtype), shape, piece.bytes.data(), base);
  array.attr("setflags")(py::arg("write") = false);
  return array;
}

// slipstream.StreamPiece: where a piece lies and its elements.
struct PieceHandle {
  stream::Chunk piece;
  py::array array;
  bool shared = false;
};

// slipstream.StreamSkipped: a step the writers aborted.
struct Skipped {
  std::int64_t step = -1;
  std::string reason;
};

// slipstream.StreamStep.
class StepHandle {
 public:
  StepHandle(std::shared_ptr<ReaderCore> core, StreamStep step)
      : core_(std::move(core)), step_(std::move(step)) {}
  StepHandle(const StepHandle&) = delete;
  StepHandle& operator=(const StepHandle&) = delete;
  // Destroying a StreamStep releases it (a round trip): without the GIL, with the mutex.
  ~StepHandle() {
    if (!step_) return;
    ReleasedGil release;
    std::lock_guard<std::mutex> lock(core_->mutex);
    step_.reset();
  }

  const StreamStep& step() const { return *step_; }

  py::list load(const std::string& name) {
    std::vector<StreamPiece> pieces = locked_without_gil(core_->mutex, [&] {
      if (!core_->reader) {
        throw ConnectionError("load: the slipstream.StreamReader of step " +
                              std::to_string(step_->number()) + " has been closed");
      }
      return step_->load(name);
    });
    const DType dtype = step_->component(name)->dtype;  // load() found it
    py::list list;
    for (const StreamPiece& piece : pieces) {
      list.append(PieceHandle{piece.piece, piece_array(piece, dtype), piece.shared});
    }
    return list;
  }

  void release() {
    locked_without_gil(core_->mutex, [&] {
      // A closed reader has left its group, which released what it held.
      if (core_->reader) step_->release();
    });
  }

  py::dict components() const {
    py::dict dict;
    for (const StreamComponent& c : step_->components()) dict[py::str(c.name)] = py::cast(c);
    return dict;
  }

  // {path: {name: value}} of the attributes at step level (stream_level false) or stream level.
  py::dict attributes(bool stream_level) const {
    py::dict by_path;
    for (const StreamAttribute& a : step_->attributes()) {
      if ((a.step < 0) != stream_level) continue;
      py::str path(a.path);
      if (!by_path.contains(path)) by_path[path] = py::dict();
      by_path[path].cast<py::dict>()[py::str(a.name)] = attribute_object(a.value);
    }
    return by_path;
  }

 private:
  std::shared_ptr<ReaderCore> core_;
  std::optional<StreamStep> step_;  // destroyed with core_->mutex held
};

StreamReaderOptions::Policy policy_of(const std::string& name) {
  if (name == "block") return StreamReaderOptions::Policy::kBlock;
  if (name == "discard") return StreamReaderOptions::Policy::kDiscard;
  throw InvalidArgumentError("policy must be \"block\" or \"discard\", not \"" + name + "\"");
}

StreamReaderOptions::Start start_of(const std::string& name) {
  if (name == "oldest") return StreamReaderOptions::Start::kOldest;
  if (name == "newest") return StreamReaderOptions::Start::kNewest;
  throw InvalidArgumentError("start must be \"oldest\" or \"newest\", not \"" + name + "\"");
}

StepDistribution distribution_of(const std::string& name) {
  if (name == "all") return StepDistribution::kAll;
  if (name == "round_robin") return StepDistribution::kRoundRobin;
  if (name == "on_demand") return StepDistribution::kOnDemand;
  throw InvalidArgumentError(
      "step_distribution must be \"all\", \"round_robin\" or \"on_demand\", not \"" + name + "\"");
}

// slipstream.StreamReader.
class ReaderHandle {
 public:
  ReaderHandle(std::shared_ptr<ReaderCore> core, std::string stream, std::string group,
               std::uint32_t rank, std::uint32_t size, std::int64_t next_timeout_ms)
      : core_(std::move(core)),
        stream_(std::move(stream)),
        group_(std::move(group)),
        rank_(rank),
        size_(size),
        next_timeout_ms_(next_timeout_ms) {}
  ReaderHandle(const ReaderHandle&) = delete;
  ReaderHandle& operator=(const ReaderHandle&) = delete;
  // Leaving the group is a round trip: without the GIL.
  ~ReaderHandle() {
    ReleasedGil release;
    std::lock_guard<std::mutex> lock(core_->mutex);
    core_->reader.reset();
  }

  // A StreamStep, a StreamSkipped (also counted), or None at the end of the stream.
  py::object next_step() {
    StreamNext next = locked_without_gil(core_->mutex, [&] {
      if (!core_->reader) throw ConnectionError("this slipstream.StreamReader has been closed");
      return core_->reader->next_step();
    });
    switch (next.kind) {
      case StreamNext::Kind::kStep:
        return py::cast(std::make_unique<StepHandle>(core_, std::move(*next.step)));
      case StreamNext::Kind::kSkipped:
        skipped_steps_.append(Skipped{next.skipped_step, next.reason});
        return skipped_steps_[skipped_steps_.size() - 1];
      case StreamNext::Kind::kEnd:
        return py::none();
      case StreamNext::Kind::kTimeout:
        break;
    }
    throw TimeoutError("next_step: no step for reader " + std::to_string(rank_) + " of group '" +
                       group_ + "' of stream '" + stream_ + "' within next_timeout_ms (" +
                       std::to_string(next_timeout_ms_) + " ms)");
  }

  // The iterator protocol: steps only; skipped steps are counted, the end stops the iteration.
  py::object next_for_iteration() {
    for (;;) {
      py::object next = next_step();
      if (next.is_none()) throw py::stop_iteration();
      if (!py::isinstance<Skipped>(next)) return next;
    }
  }

  void close() {
    locked_without_gil(core_->mutex, [&] {
      closed_ = true;
      core_->reader.reset();
    });
  }

  bool closed() const { return closed_; }
  const std::string& stream() const { return stream_; }
  const std::string& group() const { return group_; }
  std::uint32_t rank() const { return rank_; }
  std::uint32_t size() const { return size_; }
  std::size_t skipped() const { return skipped_steps_.size(); }
  py::list skipped_steps() const { return skipped_steps_; }

 private:
  std::shared_ptr<ReaderCore> core_;
  const std::string stream_, group_;
  const std::uint32_t rank_, size_;
  std::atomic<bool> closed_ = false;
  const std::int64_t next_timeout_ms_;
  py::list skipped_steps_;  // StreamSkipped objects, oldest first (touched with the GIL held)
};

std::string chunk_repr(const stream::Chunk& c) {
  return "offset=" + text_of(c.offset) + ", extent=" + text_of(c.extent) +
         ", source_rank=" + std::to_string(c.source_rank);
}

void bind_parts(py::module_& module) {
  py::class_<stream::Chunk>(module, "StreamChunk",
                            "A box of a record component: `extent` elements from `offset` in each "
                            "dimension, written by writer `source_rank`.")
      .def_property_readonly("offset", [](const stream::Chunk& c) { return tuple_of(c.offset); })
      .def_property_readonly("extent", [](const stream::Chunk& c) { return tuple_of(c.extent); })
      .def_readonly("source_rank", &stream::Chunk::source_rank)
      .def(
          "__eq__", [](const stream::Chunk& a, const stream::Chunk& b) { return a == b; },
          py::is_operator())
      .def("__repr__",
           [](const stream::Chunk& c) { return "<slipstream.StreamChunk " + chunk_repr(c) + ">"; });

  py::class_<StreamComponent>(module, "StreamComponent", R"doc(
A record component of a step: `name` (its openPMD path), `dtype` (a numpy dtype), `global_extent`
(a tuple), `chunks` (every chunk the writers put, in their order) and `mine` (this reader's pieces
as the group's strategy assigned them; pieces may cut chunks and keep their source rank).
)doc")
      .def_readonly("name", &StreamComponent::name)
      .def_property_readonly("dtype", [](const StreamComponent& c) { return numpy_dtype(c.dtype); })
      .def_property_readonly("global_extent",
                             [](const StreamComponent& c) { return tuple_of(c.global_extent); })
      .def_readonly("chunks", &StreamComponent::chunks)
      .def_readonly("mine", &StreamComponent::mine)
      .def("__repr__", [](const StreamComponent& c) {
        return "<slipstream.StreamComponent '" + c.name + "' " + std::string(dtype_name(c.dtype)) +
               " " + text_of(c.global_extent) + ", " + std::to_string(c.chunks.size()) +
               " chunks, " + std::to_string(c.mine.size()) + " mine>";
      });

  py::class_<PieceHandle>(module, "StreamPiece", R"doc(
One piece of this reader's share of a component: `offset`, `extent` and `source_rank` say where it
lies and who wrote it; `array` holds its elements (C order, shape `extent`).

`array` is a read-only numpy view, not a copy, whenever the piece is a whole chunk or whole rows of
one (cuts along the first dimension, as slicedataset and binpacking make with split_dimension 0):
of the bytes as received, or, when `shared` is True, of the shared-memory segment the writer filled
(large chunks over a Unix socket). Other cuts are gathered into memory of their own once. The
array's base object owns that memory, so the array stays usable after the step is released and
after the reader is closed or deleted, for as long as the array lives.

A shared piece shows this step's values only until the step is released: the writer may then reuse
the segment for a later step. Copy (piece.array.copy()) what you keep beyond release().
)doc")
      .def_property_readonly("offset",
                             [](const PieceHandle& p) { return tuple_of(p.piece.offset); })
      .def_property_readonly("extent",
                             [](const PieceHandle& p) { return tuple_of(p.piece.extent); })
      .def_property_readonly("source_rank",
                             [](const PieceHandle& p) { return p.piece.source_rank; })
      .def_property_readonly(
          "chunk", [](const PieceHandle& p) { return p.piece; },
          "offset, extent and source rank as a StreamChunk.")
      .def_property_readonly(
          "slices",
          [](const PieceHandle& p) {
            py::tuple slices(p.piece.offset.size());
            for (std::size_t d = 0; d < slices.size(); ++d) {
              const auto begin = static_cast<py::ssize_t>(p.piece.offset[d]);
              slices[d] = py::slice(
                  std::optional<py::ssize_t>(begin),
                  std::optional<py::ssize_t>(begin + static_cast<py::ssize_t>(p.piece.extent[d])),
                  std::nullopt);
            }
            return slices;
          },
          "Where the piece lies as a tuple of slices: whole[piece.slices] = piece.array.")
      .def_readonly("array", &PieceHandle::array)
      .def_readonly("shared", &PieceHandle::shared,
                    "True when `array` maps the writer's shared-memory segment (values valid "
                    "until the step is released).")
      .def(
          "torch",
          [](const PieceHandle& p) {
            return py::module_::import("slipstream._convert").attr("torch_view")(p.array);
          },
          R"doc(
The elements as a torch tensor sharing the array's memory (torch.from_numpy, no copy). Treat it as
read-only: the memory is shared with every other view of the piece.
)doc")
      .def("__repr__", [](const PieceHandle& p) {
        return "<slipstream.StreamPiece " + chunk_repr(p.piece) +
               ", dtype=" + py::str(p.array.dtype()).cast<std::string>() + ">";
      });

  py::class_<Skipped>(module, "StreamSkipped",
                      "A step the writers aborted (a writer failed or timed out mid-step): "
                      "`step` and the server's `reason`. Nothing to load or release.")
      .def_readonly("step", &Skipped::step)
      .def_readonly("reason", &Skipped::reason)
      .def("__repr__", [](const Skipped& s) {
        return "<slipstream.StreamSkipped step " + std::to_string(s.step) + ": " + s.reason + ">";
      });

  py::class_<StepHandle>(module, "StreamStep", R"doc(
A step handed to this reader: its metadata, and load() for this reader's share of a component.
Release it when done (release(), the context manager, or the reader's next step does it), so that
the writers may reuse its slot; arrays of pieces with `shared` True change after that.

    for step in reader:
        with step:
            for piece in step.load("meshes/E/x"):
                field[piece.slices] = piece.array
)doc")
      .def_property_readonly(
          "number", [](const StepHandle& s) { return s.step().number(); },
          "The step (iteration) number the writers gave it.")
      .def_property_readonly(
          "readers", [](const StepHandle& s) { return s.step().readers(); },
          "The group's reader ranks for this step (the survivors, if some have left).")
      .def_property_readonly(
          "index", [](const StepHandle& s) { return s.step().index(); },
          "This reader's index in `readers`: its rank for the chunk strategy.")
      .def_property_readonly("components", &StepHandle::components,
                             "{name: StreamComponent}, in the order the writers first put them.")
      .def_property_readonly(
          "attributes", [](const StepHandle& s) { return s.attributes(false); },
          "This step's attributes as {path: {name: value}}: step.attributes[\"/\"][\"time\"], "
          "step.attributes[\"meshes/E/x\"][\"unitSI\"]. Values are str, int, float or lists of "
          "them. A new dict on every access.")
      .def_property_readonly(
          "stream_attributes", [](const StepHandle& s) { return s.attributes(true); },
          "The stream-level attributes, as {path: {name: value}}.")
      .def("load", &StepHandle::load, py::arg("component"), R"doc(
This reader's pieces of `component` as a list of StreamPiece (empty when the strategy gave it
none), fetched in one round trip with the GIL released. Raises InvalidArgumentError for a
component the step does not have or a step already released, ConnectionError once the reader is
closed.
)doc")
      .def("release", &StepHandle::release, R"doc(
Done with the step (a round trip, GIL released). Releasing twice, or a step the reader has moved
past, does nothing. Arrays already loaded stay valid.
)doc")
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](StepHandle& self, py::args) { self.release(); })
      .def("__repr__", [](const StepHandle& s) {
        return "<slipstream.StreamStep " + std::to_string(s.step().number()) + ", " +
               std::to_string(s.step().components().size()) + " components>";
      });
}

}  // namespace

void bind_stream_reader(py::module_& module) {
  bind_parts(module);

  py::class_<ReaderHandle>(module, "StreamReader", R"doc(
One reader of a group: takes its share of every step of a stream, as computed by the group's chunk
distribution strategy (docs/streams.md). Each StreamReader has its own connection, to which the
server binds its (group, rank).

    with slipstream.StreamReader("run42", "trainers", rank, m, address=address) as reader:
        for step in reader:                       # ends at the end of the stream
            with step:                            # released on exit
                for piece in step.load("meshes/E/x"):
                    use(piece.offset, piece.array)  # a numpy view, no copy

Iterating yields StreamStep objects only. Steps the writers aborted are skipped silently by the
iteration and counted in `skipped` (each kept in `skipped_steps` with its reason); next_step()
returns them instead. Steps a discarding group missed are not reported to the reader at all (the
server counts them: SS.STREAM.INFO). Asking for the next step releases the previous one.

Every call that talks to the server (the constructor, next_step, iteration, load, release, close)
releases the GIL, so writer threads of the same process run while a reader waits. Use a reader
and its steps from one thread at a time (calls from several threads take turns).
)doc")
      .def(py::init([](std::string stream, std::string group, std::int64_t rank, std::int64_t size,
                       std::optional<std::string> address, std::optional<std::string> password,
                       std::int64_t connect_timeout_ms, std::int64_t command_timeout_ms,
                       const std::string& policy, const std::string& start, std::string strategy,
                       std::int64_t split_dimension, bool no_empty_readers,
                       std::int64_t next_timeout_ms, std::optional<std::string> hostname,
                       const std::string& step_distribution) {
             ClientOptions client_options = stream_client_options(
                 address, std::move(password), connect_timeout_ms, command_timeout_ms);
             StreamReaderOptions options;
             options.policy = policy_of(policy);
             options.start = start_of(start);
             options.strategy = std::move(strategy);
             options.strategy_options.split_dimension =
                 stream_rank_argument(split_dimension, "split_dimension");
             options.strategy_options.no_empty_readers = no_empty_readers;
             options.next_timeout = stream_duration_argument(next_timeout_ms, "next_timeout_ms");
             options.hostname = hostname.value_or("");
             options.step_distribution = distribution_of(step_distribution);
             const std::uint32_t reader_rank = stream_rank_argument(rank, "reader rank");
             const std::uint32_t group_size = stream_rank_argument(size, "size");
             auto core = std::make_shared<ReaderCore>();
             call_without_gil([&] {
               core->reader.emplace(client_options, stream, group, reader_rank, group_size,
                                    std::move(options));
             });
             return std::make_unique<ReaderHandle>(std::move(core), std::move(stream),
                                                   std::move(group), reader_rank, group_size,
                                                   next_timeout_ms);
           }),
           py::arg("stream"), py::arg("group"), py::arg("rank") = 0, py::arg("size") = 1,
           py::kw_only(), py::arg("address") = py::none(), py::arg("password") = py::none(),
           py::arg("connect_timeout_ms") = 5000, py::arg("command_timeout_ms") = 60000,
           py::arg("policy") = "block", py::arg("start") = "oldest",
           py::arg("strategy") = "hostname_binpacking_slicedataset", py::arg("split_dimension") = 0,
           py::arg("no_empty_readers") = false, py::arg("next_timeout_ms") = 0,
           py::arg("hostname") = py::none(), py::arg("step_distribution") = "all", R"doc(
Joins `group` of `size` readers as `rank` on `stream` (created, waiting for its writers, if none
has attached yet). Steps are handed to the group once all its readers have joined. Connection:
address, password, connect_timeout_ms, command_timeout_ms as for slipstream.Client.
policy: "block" (the group sees every step; writers wait for it) or "discard" (writers never wait;
steps the group falls behind on are skipped for it). start: "oldest" (the oldest step still held)
or "newest" (the next step a writer begins), for a group joining a running stream.
strategy: the group's chunk distribution strategy (every member must agree): roundrobin,
roundrobinofsourceranks, blocks, blocksofsourceranks, slicedataset, binpacking or
hostname_<within>_<fallback>; split_dimension: the dimension slicedataset and binpacking cut;
no_empty_readers: give a reader that got nothing part of the largest piece.
next_timeout_ms: longest wait of next_step (0: as long as it takes). hostname: this reader's host
for hostname_ strategies (None: this machine's name).
step_distribution: "all" (every reader gets its share of every step), "round_robin" (each step
goes whole to one reader, in turn by rank) or "on_demand" (each step goes whole to the reader that
asks first); every member must agree. A whole step's reader table is this reader alone, so the
strategy gives it every chunk.
Raises InvalidArgumentError (bad rank, policy, start, strategy or step_distribution name),
ConnectionError, ServerError (the group exists with another size, policy, strategy or step
distribution, or the rank is taken).
)doc")
      .def("next_step", &ReaderHandle::next_step, R"doc(
Waits, with the GIL released, for this reader's next step (releasing the one it holds) and
returns it as a StreamStep; returns a StreamSkipped for a step the writers aborted (also counted in
`skipped`), and None at the end of the stream. Raises TimeoutError after next_timeout_ms.
)doc")
      .def("__iter__", [](py::object self) { return self; })
      .def("__next__", &ReaderHandle::next_for_iteration)
      .def("close", &ReaderHandle::close, R"doc(
Leaves the group (its share of the step it holds is given back, not reread). Later calls raise
ConnectionError; closing twice does nothing; arrays already loaded stay valid. Called by the
context manager's exit and, failing that, when the reader is garbage collected.
)doc")
      .def_property_readonly("closed", &ReaderHandle::closed)
      .def_property_readonly("stream", &ReaderHandle::stream)
      .def_property_readonly("group", &ReaderHandle::group)
      .def_property_readonly("rank", &ReaderHandle::rank)
      .def_property_readonly("size", &ReaderHandle::size)
      .def_property_readonly("skipped", &ReaderHandle::skipped,
                             "How many steps the writers aborted were reported to this reader.")
      .def_property_readonly("skipped_steps", &ReaderHandle::skipped_steps,
                             "Those steps as StreamSkipped objects (step, reason), oldest first.")
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](ReaderHandle& self, py::args) { self.close(); })
      .def("__repr__", [](const ReaderHandle& self) {
        return "<slipstream.StreamReader '" + self.stream() + "' group '" + self.group() +
               "' rank " + std::to_string(self.rank()) + " of " + std::to_string(self.size()) +
               (self.closed() ? " closed>" : ">");
      });
}

}  // namespace slipstream::python
