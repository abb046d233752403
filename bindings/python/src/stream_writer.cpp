// slipstream.StreamWriter: one writer rank of a stream (the C++ slipstream::StreamWriter) taking
// numpy arrays (or torch tensors) as chunks. Every call that talks to the server releases the GIL.
#include <pybind11/stl.h>

#include <atomic>
#include <exception>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "slipstream/error.hpp"
#include "slipstream/stream.hpp"

namespace slipstream::python {

namespace {

using std::chrono::milliseconds;

std::string type_name(const py::handle& value) {
  return py::str(py::type::handle_of(value).attr("__name__")).cast<std::string>();
}

std::string text_of(const std::vector<std::uint64_t>& values) {
  std::string text = "(";
  for (std::size_t i = 0; i < values.size(); ++i) {
    text += (i ? ", " : "") + std::to_string(values[i]);
  }
  return text + (values.size() == 1 ? ",)" : ")");
}

// True for Python and numpy integers, not for bool.
bool is_integer(const py::handle& value) {
  if (py::isinstance<py::bool_>(value)) return false;
  if (PyLong_Check(value.ptr())) return true;
  static const py::handle numpy_integer =  // kept for the life of the process
      py::module_::import("numpy").attr("integer").cast<py::object>().release();
  return PyObject_IsInstance(value.ptr(), numpy_integer.ptr()) == 1;
}

bool is_float(const py::handle& value) {
  if (PyFloat_Check(value.ptr())) return true;
  static const py::handle numpy_floating =
      py::module_::import("numpy").attr("floating").cast<py::object>().release();
  return PyObject_IsInstance(value.ptr(), numpy_floating.ptr()) == 1;
}

// A list of non-negative integers (a sequence of ints, or one int for one dimension).
std::vector<std::uint64_t> extent_argument(const py::handle& value, std::string_view what) {
  std::vector<std::uint64_t> out;
  auto add = [&](const py::handle& item) {
    if (!is_integer(item)) {
      throw py::type_error(std::string(what) + " must hold integers, not " + type_name(item));
    }
    py::int_ integer(py::reinterpret_borrow<py::object>(item));
    int overflow = 0;
    const long long number = PyLong_AsLongLongAndOverflow(integer.ptr(), &overflow);
    if (overflow != 0) {
      throw InvalidArgumentError(std::string(what) + " has " +
                                 py::str(integer).cast<std::string>() +
                                 ", which does not fit 64 bits");
    }
    if (number < 0) {
      throw InvalidArgumentError(std::string(what) + " has " + std::to_string(number) +
                                 "; expected integers >= 0");
    }
    out.push_back(static_cast<std::uint64_t>(number));
  };
  if (is_integer(value)) {
    add(value);
  } else if (py::isinstance<py::sequence>(value) && !py::isinstance<py::str>(value)) {
    for (py::handle item : py::reinterpret_borrow<py::sequence>(value)) add(item);
  } else {
    throw py::type_error(std::string(what) + " must be a sequence of integers, not " +
                         type_name(value));
  }
  return out;
}

std::int64_t int64_of(const py::handle& value, std::string_view name) {
  py::int_ number(py::reinterpret_borrow<py::object>(value));
  int overflow = 0;
  const long long result = PyLong_AsLongLongAndOverflow(number.ptr(), &overflow);
  if (overflow != 0) {
    throw py::value_error("attribute '" + std::string(name) + "': " +
                          py::str(number).cast<std::string>() + " does not fit a 64-bit integer");
  }
  return result;
}

// openPMD's attribute types from Python values: str, int, float, and sequences (lists, tuples,
// 1-D numpy arrays) of one of them. Ints mixed with floats make floats.
AttributeValue attribute_value(const py::handle& value, std::string_view name) {
  const std::string what = "attribute '" + std::string(name) + "'";
  const std::string accepted = "; expected str, int, float or a non-empty list of one of them";
  static const py::handle numpy_bool =
      py::module_::import("numpy").attr("bool_").cast<py::object>().release();
  if (py::isinstance<py::bool_>(value) || PyObject_IsInstance(value.ptr(), numpy_bool.ptr()) == 1 ||
      (py::isinstance<py::array>(value) &&
       py::reinterpret_borrow<py::array>(value).dtype().kind() == 'b')) {
    throw py::type_error(what + ": bool is not an attribute type; store 0 or 1 as an int");
  }
  if (py::isinstance<py::str>(value)) return value.cast<std::string>();
  if (is_integer(value)) return int64_of(value, name);
  if (is_float(value)) return value.cast<double>();
  py::object items = py::reinterpret_borrow<py::object>(value);
  if (py::isinstance<py::array>(value)) {
    auto array = py::reinterpret_borrow<py::array>(value);
    if (array.ndim() != 1) {
      throw InvalidArgumentError(what + ": a numpy array must have one dimension, this one has " +
                                 std::to_string(array.ndim()));
    }
    items = array.attr("tolist")();
  }
  if (!py::isinstance<py::list>(items) && !py::isinstance<py::tuple>(items)) {
    throw py::type_error(what + " cannot be a " + type_name(value) + accepted);
  }
  auto sequence = py::reinterpret_borrow<py::sequence>(items);
  if (sequence.size() == 0) throw InvalidArgumentError(what + ": an empty list has no type");
  bool all_str = true, all_int = true, all_number = true;
  for (py::handle item : sequence) {
    const bool integer = is_integer(item);
    all_str = all_str && py::isinstance<py::str>(item);
    all_int = all_int && integer;
    all_number = all_number && (integer || is_float(item));
  }
  if (all_str) return sequence.cast<std::vector<std::string>>();
  if (all_int) {
    std::vector<std::int64_t> out;
    for (py::handle item : sequence) out.push_back(int64_of(item, name));
    return out;
  }
  if (all_number) {
    std::vector<double> out;
    for (py::handle item : sequence) {
      out.push_back(py::float_(py::reinterpret_borrow<py::object>(item)).cast<double>());
    }
    return out;
  }
  throw py::type_error(what + ": a list must hold only str, only int, or only numbers" + accepted);
}

// A chunk's array: C-contiguous, native byte order, a dtype Slipstream stores. Torch tensors and
// other array-likes go through slipstream._convert.to_numpy first; an array that is not
// C-contiguous (Fortran order, strided views, transposes) is copied once into C order.
py::array chunk_array(const py::handle& value) {
  py::array array = array_input(value).array;  // native byte order, supported dtype
  if ((array.flags() & py::array::c_style) == 0) {
    array = py::module_::import("numpy").attr("ascontiguousarray")(array);
  }
  return array;
}

// operators=: {component: (type, {parameter: value}) or type}.
std::map<std::string, StreamOperator, std::less<>> stream_operators(const py::object& operators) {
  std::map<std::string, StreamOperator, std::less<>> out;
  if (operators.is_none()) return out;
  if (!py::isinstance<py::dict>(operators)) {
    throw InvalidArgumentError("operators must be a dict {component: (type, {parameter: value})}");
  }
  for (const auto& [key, spec] : operators.cast<py::dict>()) {
    const std::string component = py::str(key).cast<std::string>();
    out[component] = compression_operator(spec, "operator of '" + component + "'");
  }
  return out;
}

// A Python callable as a reduction's function: called with the GIL (end_step runs without it)
// on read-only numpy views of the inputs, valid during the call; what it returns is copied.
ReductionFunction python_reduction(const py::object& callable) {
  std::shared_ptr<py::object> held(new py::object(callable), [](py::object* object) {
    py::gil_scoped_acquire gil;
    delete object;
  });
  return [held](std::span<const TensorRef> inputs) {
    py::gil_scoped_acquire gil;
    try {
      py::tuple args(inputs.size());
      for (std::size_t i = 0; i < inputs.size(); ++i) {
        const TensorRef& in = inputs[i];
        std::vector<py::ssize_t> shape(in.shape.begin(), in.shape.end());
        py::array view(numpy_dtype(in.dtype), shape, in.data, py::none());
        py::detail::array_proxy(view.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
        args[i] = view;
      }
      py::object result = (*held)(*args);
      if (py::isinstance<py::tuple>(result) || py::isinstance<py::list>(result)) {
        if (py::len(result) == 0) return std::vector<Tensor>();
        result = result.cast<py::sequence>()[0];
      }
      ArrayInput out = array_input(result);
      std::vector<Tensor> tensors;
      tensors.push_back(Tensor::copy_of(out.dtype, out.data, out.bytes, out.shape, out.order));
      return tensors;
    } catch (py::error_already_set& e) {
      throw std::runtime_error(e.what());  // with the GIL, as the Python error is dropped
    }
  };
}

// reductions=: [{"function": path or callable, "inputs": [...], "output": ..., "send_inputs":
// False}, ...].
std::vector<StreamReduction> stream_reductions(const py::object& reductions) {
  std::vector<StreamReduction> out;
  if (reductions.is_none()) return out;
  const std::string form = "reductions must be a list of dicts {\"function\": file or callable, "
                           "\"inputs\": [components], \"output\": component}";
  if (!py::isinstance<py::list>(reductions) && !py::isinstance<py::tuple>(reductions)) {
    throw InvalidArgumentError(form);
  }
  for (const py::handle entry : reductions) {
    if (!py::isinstance<py::dict>(entry)) throw InvalidArgumentError(form);
    StreamReduction reduction;
    for (const auto& [key, value] : entry.cast<py::dict>()) {
      const std::string name = py::str(key).cast<std::string>();
      if (name == "function") {
        if (py::isinstance<py::str>(value)) {
          reduction.source = value.cast<std::string>();
        } else if (PyCallable_Check(value.ptr()) != 0) {
          reduction.function = python_reduction(py::reinterpret_borrow<py::object>(value));
          reduction.source = py::str(py::getattr(value, "__qualname__", py::repr(value)));
        } else {
          throw InvalidArgumentError("a reduction's function is a file name or a callable");
        }
      } else if (name == "inputs") {
        reduction.inputs = value.cast<std::vector<std::string>>();
      } else if (name == "output") {
        reduction.output = value.cast<std::string>();
      } else if (name == "send_inputs") {
        reduction.send_inputs = value.cast<bool>();
      } else {
        throw InvalidArgumentError("unknown key '" + name + "' in a reduction: " + form);
      }
    }
    out.push_back(std::move(reduction));
  }
  return out;
}

class WriterHandle {
 public:
  WriterHandle(std::unique_ptr<StreamWriter> writer, std::string stream, std::uint32_t rank,
               std::uint32_t writers)
      : writer_(std::move(writer)), stream_(std::move(stream)), rank_(rank), writers_(writers) {}
  WriterHandle(const WriterHandle&) = delete;
  WriterHandle& operator=(const WriterHandle&) = delete;
  // Closing talks to the server: done with the GIL released. The arrays are dropped after, with
  // the GIL held again.
  ~WriterHandle() {
    if (!writer_) return;
    ReleasedGil release;
    std::lock_guard<std::mutex> lock(mutex_);
    writer_.reset();
  }

  // Runs `call(writer)` without the GIL. Raises ConnectionError once closed.
  template <typename Call>
  auto with_writer(Call&& call) {
    return locked_without_gil(mutex_, [&] {
      if (!writer_) throw ConnectionError("this slipstream.StreamWriter has been closed");
      return call(*writer_);
    });
  }

  void begin_step(std::int64_t step) {
    with_writer([&](StreamWriter& w) { w.begin_step(step); });
    declared_.clear();
  }

  void set_operator(const std::string& component, const py::object& type,
                    const py::object& parameters) {
    std::optional<StreamOperator> op;
    if (!type.is_none()) {
      op = compression_operator(py::make_tuple(type, parameters),
                                "operator of '" + component + "'");
    }
    with_writer([&](StreamWriter& w) { w.set_operator(component, op); });
  }

  void put_chunk(const std::string& component, const py::handle& data,
                 const py::handle& global_extent_arg, const py::handle& offset_arg) {
    const std::string where = "put_chunk '" + component + "'";
    py::array array = chunk_array(data);
    const DType dtype = dtype_of_numpy(array.dtype());
    const std::vector<std::uint64_t> global = extent_argument(global_extent_arg, "global_extent");
    const std::vector<std::uint64_t> offset = extent_argument(offset_arg, "offset");
    const std::vector<std::uint64_t> extent(array.shape(), array.shape() + array.ndim());
    if (global.empty()) {
      throw InvalidArgumentError(where + ": global_extent needs at least one dimension");
    }
    if (extent.size() != global.size()) {
      throw InvalidArgumentError(where + ": the array has shape " + text_of(extent) +
                                 " but global_extent " + text_of(global) + " has " +
                                 std::to_string(global.size()) +
                                 " dimensions; the array's shape is the chunk's extent");
    }
    if (offset.size() != global.size()) {
      throw InvalidArgumentError(where + ": offset " + text_of(offset) + " needs " +
                                 std::to_string(global.size()) +
                                 " entries, one per dimension of global_extent " + text_of(global));
    }
    for (std::size_t d = 0; d < global.size(); ++d) {
      if (offset[d] > global[d] || extent[d] > global[d] - offset[d]) {
        throw InvalidArgumentError(
            where + ": the chunk at offset " + text_of(offset) + " with shape " + text_of(extent) +
            " does not fit in global_extent " + text_of(global) + " along dimension " +
            std::to_string(d) + " (" + std::to_string(offset[d]) + " + " +
            std::to_string(extent[d]) + " > " + std::to_string(global[d]) + ")");
      }
    }
    // Every chunk of a component agrees on its dtype and global extent (the server checks the
    // chunks of other writers at end_step; this catches this writer's own mistakes here).
    auto [declared, inserted] = declared_.try_emplace(component, dtype, global);
    if (!inserted && declared->second.first != dtype) {
      throw InvalidArgumentError(where + ": this step already has " +
                                 std::string(dtype_name(declared->second.first)) +
                                 " chunks of it; the array is " + std::string(dtype_name(dtype)));
    }
    if (!inserted && declared->second.second != global) {
      throw InvalidArgumentError(where +
                                 ": this step already has chunks of it with global_extent " +
                                 text_of(declared->second.second) + ", not " + text_of(global));
    }
    const void* bytes = array.data();
    const auto size = static_cast<std::size_t>(array.nbytes());
    try {
      with_writer([&](StreamWriter& w) {
        w.put_chunk(component, dtype, global, offset, extent, bytes, size);
      });
    } catch (...) {
      if (inserted) declared_.erase(component);
      throw;
    }
    borrowed_.push_back(std::move(array));  // the C++ writer reads it at end_step
  }

  void set_attribute(const std::string& path, const std::string& name, const py::handle& value,
                     bool stream_level) {
    AttributeValue converted = attribute_value(value, name);
    with_writer([&](StreamWriter& w) {
      if (stream_level) {
        w.set_stream_attribute(path, name, std::move(converted));
      } else {
        w.set_attribute(path, name, std::move(converted));
      }
    });
  }

  bool end_step() {
    bool published = false;
    try {
      published = with_writer([](StreamWriter& w) { return w.end_step(); });
    } catch (...) {
      // The writer sent or dropped everything pending either way: nothing borrows the arrays.
      borrowed_.clear();
      throw;
    }
    borrowed_.clear();
    return published;
  }
  std::string last_abort_reason() {
    return with_writer([](StreamWriter& w) { return w.last_abort_reason(); });
  }

  void close() {
    std::exception_ptr error;
    locked_without_gil(mutex_, [&] {
      if (!writer_) return;
      closed_ = true;
      std::unique_ptr<StreamWriter> closing = std::move(writer_);
      try {
        closing->close();  // on error the destructor does nothing more: the writer is closed
      } catch (...) {
        error = std::current_exception();
      }
    });
    borrowed_.clear();
    if (error) std::rethrow_exception(error);
  }

  bool closed() const { return closed_; }

  const std::string& stream() const { return stream_; }
  std::uint32_t rank() const { return rank_; }
  std::uint32_t writers() const { return writers_; }

 private:
  std::mutex mutex_;                      // taken only with the GIL released (locked_without_gil)
  std::unique_ptr<StreamWriter> writer_;  // guarded by mutex_; empty once closed
  std::atomic<bool> closed_ = false;      // writer_ is empty, readable without the mutex
  const std::string stream_;
  const std::uint32_t rank_;
  const std::uint32_t writers_;
  std::vector<py::object> borrowed_;  // arrays of the open step (touched with the GIL held)
  std::map<std::string, std::pair<DType, std::vector<std::uint64_t>>> declared_;
};

}  // namespace

// An operator from Python: "type" or (type, {parameter: value}); parameters numbers or strings
// (a float as Python writes it, 1e-07 and not 0.000000).
CompressionOperator compression_operator(const py::handle& spec, const std::string& what) {
  py::handle type = spec, parameters = py::none();
  if (py::isinstance<py::tuple>(spec) && py::len(spec) == 2) {
    auto pair = spec.cast<py::tuple>();
    type = pair[0];
    parameters = pair[1];
  }
  if (!py::isinstance<py::str>(type)) {
    throw InvalidArgumentError(what + ": the type must be a string (\"zstd\", \"blosc\", "
                               "\"bzip2\" or \"zfp\")");
  }
  CompressionOperator op{type.cast<std::string>(), {}};
  if (parameters.is_none()) return op;
  if (!py::isinstance<py::dict>(parameters)) {
    throw InvalidArgumentError(what + ": parameters must be a dict");
  }
  for (const auto& [name, value] : parameters.cast<py::dict>()) {
    op.parameters.emplace_back(py::str(name).cast<std::string>(), py::str(value).cast<std::string>());
  }
  return op;
}

ClientOptions stream_client_options(const std::optional<std::string>& address,
                                    std::optional<std::string> password,
                                    std::int64_t connect_timeout_ms,
                                    std::int64_t command_timeout_ms) {
  ClientOptions options;
  options.address = address.value_or("");
  options.password = std::move(password);
  options.connect_timeout = milliseconds(connect_timeout_ms);
  options.command_timeout = milliseconds(command_timeout_ms);
  return options;
}

std::uint32_t stream_rank_argument(std::int64_t value, std::string_view what) {
  if (value < 0 || value > std::numeric_limits<std::uint32_t>::max()) {
    throw InvalidArgumentError(std::string(what) + " " + std::to_string(value) +
                               " is out of range; expected 0 to 4294967295");
  }
  return static_cast<std::uint32_t>(value);
}

std::chrono::milliseconds stream_duration_argument(std::int64_t value, std::string_view what) {
  if (value < 0) {
    throw InvalidArgumentError(std::string(what) + " is " + std::to_string(value) +
                               "; expected milliseconds >= 0 (0: no limit)");
  }
  return std::chrono::milliseconds(value);
}

void bind_stream_writer(py::module_& module) {
  py::class_<WriterHandle>(module, "StreamWriter", R"doc(
One writer rank of a stream: publishes a simulation's steps as openPMD-shaped record components made
of chunks (docs/streams.md). Each StreamWriter has its own connection, to which the server binds
its rank.

    with slipstream.StreamWriter("run42", rank, n, address=address) as writer:
        for step in range(steps):
            writer.begin_step(step)               # waits while the queue is full
            writer.put_chunk("meshes/E/x", my_rows, global_extent=(ny, nx), offset=(y0, 0))
            writer.set_attribute("/", "time", t)
            writer.end_step()                     # sends the step in one round trip

Deferred I/O, as openPMD's storeChunk: put_chunk keeps the array (a reference, not a copy) and sends
nothing until end_step. Changes made to the array before end_step returns are sent.

Every call that talks to the server (the constructor, begin_step, end_step, close, and
set_stream_attribute outside a step) releases the GIL. Use a writer from one thread at a time
(calls from several threads take turns). Timeouts are in milliseconds.
)doc")
      .def(py::init([](std::string stream, std::int64_t rank, std::int64_t writers,
                       std::optional<std::string> address, std::optional<std::string> password,
                       std::int64_t connect_timeout_ms, std::int64_t command_timeout_ms,
                       std::int64_t queue_limit, std::int64_t expected_groups,
                       bool end_on_writer_failure, std::int64_t step_timeout_ms,
                       std::int64_t begin_timeout_ms, std::optional<std::string> hostname,
                       std::int64_t shared_memory_min_bytes, bool reserve_next_step,
                       bool first_step_precious, const py::object& operators,
                       const py::object& reductions) {
             ClientOptions client_options = stream_client_options(
                 address, std::move(password), connect_timeout_ms, command_timeout_ms);
             StreamWriterOptions options;
             if (queue_limit < 1) {
               throw InvalidArgumentError("queue_limit is " + std::to_string(queue_limit) +
                                          "; expected at least 1 step");
             }
             options.queue_limit = static_cast<std::size_t>(queue_limit);
             options.expected_groups = stream_rank_argument(expected_groups, "expected_groups");
             options.end_on_writer_failure = end_on_writer_failure;
             options.step_timeout = stream_duration_argument(step_timeout_ms, "step_timeout_ms");
             options.begin_timeout = stream_duration_argument(begin_timeout_ms, "begin_timeout_ms");
             options.hostname = hostname.value_or("");
             if (shared_memory_min_bytes < 0) {
               throw InvalidArgumentError("shared_memory_min_bytes is " +
                                          std::to_string(shared_memory_min_bytes) +
                                          "; expected 0 or more bytes");
             }
             options.shared_memory_min_bytes = static_cast<std::size_t>(shared_memory_min_bytes);
             options.reserve_next_step = reserve_next_step;
             options.first_step_precious = first_step_precious;
             options.operators = stream_operators(operators);
             options.reductions = stream_reductions(reductions);
             const std::uint32_t writer_rank = stream_rank_argument(rank, "writer rank");
             const std::uint32_t writer_count = stream_rank_argument(writers, "writers");
             std::unique_ptr<StreamWriter> writer;
             call_without_gil([&] {
               writer = std::make_unique<StreamWriter>(client_options, stream, writer_rank,
                                                       writer_count, std::move(options));
             });
             return std::make_unique<WriterHandle>(std::move(writer), std::move(stream),
                                                   writer_rank, writer_count);
           }),
           py::arg("stream"), py::arg("rank") = 0, py::arg("writers") = 1, py::kw_only(),
           py::arg("address") = py::none(), py::arg("password") = py::none(),
           py::arg("connect_timeout_ms") = 5000, py::arg("command_timeout_ms") = 60000,
           py::arg("queue_limit") = 2, py::arg("expected_groups") = 0,
           py::arg("end_on_writer_failure") = false, py::arg("step_timeout_ms") = 0,
           py::arg("begin_timeout_ms") = 0, py::arg("hostname") = py::none(),
           py::arg("shared_memory_min_bytes") = 64 * 1024, py::arg("reserve_next_step") = true,
           py::arg("first_step_precious") = false, py::arg("operators") = py::none(),
           py::arg("reductions") = py::none(), R"doc(
Attaches as writer `rank` of `writers` to `stream` (creating the stream if this is the first
writer or reader). Connection: address, password, connect_timeout_ms and command_timeout_ms as for
slipstream.Client. Stream options (every writer must give the same): queue_limit (steps held at
once, reserved at begin_step), expected_groups (reader groups to wait for before steps no group
wants may be dropped), end_on_writer_failure (a writer that dies ends the stream instead of the
others going on), step_timeout_ms (a step not ended by every writer in time is aborted; 0: no
limit). begin_timeout_ms: longest wait of begin_step (0: as long as it takes). hostname: this
writer's host for the readers' hostname_ strategies (None: this machine's name).
shared_memory_min_bytes: over a Unix socket, chunks of at least this size are copied into
shared-memory segments that readers on the node map without a copy (smaller ones, and all over
TCP, go on the socket); negative raises InvalidArgumentError. reserve_next_step: True (default)
lets end_step reserve this writer's next step when a slot is free, so that its begin_step costs
no round trip; False makes every begin_step a round trip. first_step_precious (every writer must
give the same): True keeps the first step that completes for the stream's life and hands it first
to every reader group that joins later (ADIOS2 SST's FirstTimestepPrecious).
operators: compression by component, {component: (type, {parameter: value})} with "*" for every
component without its own, as ADIOS2 names them: ("zstd", {"level": 3}), ("blosc", {"clevel": 5,
"doshuffle": "BLOSC_SHUFFLE", "compressor": "lz4"}), ("bzip2", {"blockSize100k": 9}),
("zfp", {"accuracy": 1e-4}) (or precision, rate; float32/float64 only). The writer encodes, the
server stores the encoded bytes, readers get decoded arrays (docs/streams.md, "Operators").
reductions: reductions at the source, [{"function": f, "inputs": [components], "output":
component, "send_inputs": False}]: at end_step this writer calls f with its own chunks of the
inputs (one numpy array each, read-only, valid during the call; several chunks of one input joined
along the first axis) and the stream carries what f returns as `output`, one row per writer rank
(global shape [writers, *f's shape]), instead of the inputs (also them with send_inputs). f is a
callable or the name of a TorchScript or ONNX file (docs/streams.md, "Reductions").
Raises InvalidArgumentError (rank out of range, bad option, unknown operator or parameter),
ConnectionError, ServerError (the stream exists with other options, or the rank is taken).
)doc")
      .def("set_operator", &WriterHandle::set_operator, py::arg("component"), py::arg("type"),
           py::arg("parameters") = py::none(), R"doc(
Sets the compression operator of `component` ("*": every component without its own) for the
chunks put from now on: set_operator("meshes/E/x", "zfp", {"accuracy": 1e-4}); a type of None
removes it. Raises InvalidArgumentError for an unknown operator or parameter.
)doc")
      .def("begin_step", &WriterHandle::begin_step, py::arg("step"), R"doc(
Begins `step` (numbers increase; every writer of a step gives the same number). Blocks, with the
GIL released, while the queue is full of steps a blocking reader group has not released. Raises
TimeoutError after begin_timeout_ms, InvalidArgumentError when a step is still open.
)doc")
      .def("put_chunk", &WriterHandle::put_chunk, py::arg("component"), py::arg("array"),
           py::arg("global_extent"), py::arg("offset"), R"doc(
Adds a chunk of `component` (an openPMD path such as "meshes/E/x" or "particles/e/position/x") to
the open step: `array`'s dtype is the component's, its shape is the chunk's extent, placed at
`offset` (one integer per dimension) within `global_extent` (the whole component's shape).

`array`: a numpy array of float32, float64, int8, int16, int32, int64, uint8, uint16 or bool; or a
torch tensor (detached, moved to the CPU); or anything numpy.asarray takes. A C-contiguous array
is sent from its own memory and kept (referenced, not copied) until end_step; any other layout
(Fortran order, slices with steps, transposes) is copied once into C order here. Byte-swapped
arrays are copied too.

Raises TypeError (unsupported dtype, non-integer extents), InvalidArgumentError (a ValueError:
the array's dimensions differ from global_extent's, the chunk does not fit in global_extent, the
component already has chunks of another dtype or global extent in this step, no step is open).
)doc")
      .def(
          "set_attribute",
          [](WriterHandle& self, const std::string& path, const std::string& name,
             const py::handle& value) { self.set_attribute(path, name, value, false); },
          py::arg("path"), py::arg("name"), py::arg("value"), R"doc(
Sets an attribute of the open step, sent with end_step. `path`: "/" for the step itself (time,
dt, timeUnitSI), else a record or component path ("meshes/E", "meshes/E/x"). `value`: str, int,
float, or a non-empty list, tuple or 1-D numpy array of str, of ints, or of numbers (ints mixed
with floats are stored as floats). Raises TypeError for other values (bool included: store 0 or 1)
and InvalidArgumentError for an empty list or when no step is open.
)doc")
      .def(
          "set_stream_attribute",
          [](WriterHandle& self, const std::string& path, const std::string& name,
             const py::handle& value) { self.set_attribute(path, name, value, true); },
          py::arg("path"), py::arg("name"), py::arg("value"), R"doc(
Sets a stream-level attribute (path "/": the series itself, e.g. "software"); values as for
set_attribute. Sent with the next end_step, or at once when no step is open. Readers see it with
every step they read after it arrived.
)doc")
      .def("end_step", &WriterHandle::end_step, R"doc(
Sends the step's chunks and attributes and ends the step for this writer (one round trip; the GIL
is released meanwhile). The step becomes visible to readers once every writer has ended it. The
arrays given to put_chunk are no longer referenced afterwards, whether or not this raised.
Returns True, or False when the step was aborted instead (another writer failed mid-step, or the
step timed out; the stream goes on and readers are told it was skipped; last_abort_reason says
why). Raises the first other error the server reported for the step (ServerError,
OutOfMemoryError).
)doc")
      .def("last_abort_reason", &WriterHandle::last_abort_reason,
           "Why the last step end_step returned False for was aborted.")
      .def("close", &WriterHandle::close, R"doc(
This writer is done: once every writer has closed, readers get the end of the stream after the
steps already complete. A step still open is dropped. Later calls raise ConnectionError; closing
twice does nothing. Called by the context manager's exit and, failing that, when the writer is
garbage collected.
)doc")
      .def_property_readonly("closed", &WriterHandle::closed)
      .def_property_readonly("stream", &WriterHandle::stream)
      .def_property_readonly("rank", &WriterHandle::rank)
      .def_property_readonly("writers", &WriterHandle::writers)
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](WriterHandle& self, py::args) { self.close(); })
      .def("__repr__", [](WriterHandle& self) {
        return "<slipstream.StreamWriter '" + self.stream() + "' rank " +
               std::to_string(self.rank()) + " of " + std::to_string(self.writers()) +
               (self.closed() ? " closed>" : ">");
      });
}

}  // namespace slipstream::python
