// slipstream.Client: the C++ slipstream::Client with Pythonic arguments. Every call that talks to
// the server releases the GIL for the whole exchange; arguments are converted before and results
// after, with the GIL held.
#include "slipstream/client.hpp"

#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "bindings.hpp"

namespace slipstream::python {

namespace {

using std::chrono::milliseconds;

// The Python object's state. close() drops the connection at once; a call running on another
// thread keeps its own reference and finishes first.
class ClientHandle {
 public:
  explicit ClientHandle(std::shared_ptr<Client> client) : client_(std::move(client)) {}
  std::shared_ptr<Client> get() const {
    if (!client_) throw ConnectionError("this slipstream.Client has been closed");
    return client_;
  }
  void close() { client_.reset(); }
  bool closed() const { return !client_; }

 private:
  std::shared_ptr<Client> client_;
};

// Runs `call(client)` with the GIL released. Everything `call` captures must be plain C++ data
// (or Python objects it does not touch), converted beforehand.
template <typename Call>
auto without_gil(const ClientHandle& handle, Call&& call) {
  std::shared_ptr<Client> client = handle.get();
  return call_without_gil([&] { return call(*client); });
}

// A bytes-like argument (bytes, bytearray, memoryview, numpy buffer ...) or a str (as UTF-8),
// borrowed without a copy for as long as this object lives. Build and destroy with the GIL held.
class BorrowedBytes {
 public:
  explicit BorrowedBytes(const py::handle& value) {
    if (PyUnicode_Check(value.ptr())) {
      Py_ssize_t size = 0;
      const char* text = PyUnicode_AsUTF8AndSize(value.ptr(), &size);
      if (text == nullptr) throw py::error_already_set();
      view_ = {text, static_cast<std::size_t>(size)};
      return;
    }
    if (PyObject_GetBuffer(value.ptr(), &buffer_, PyBUF_SIMPLE) != 0) {
      throw py::error_already_set();  // TypeError: not bytes-like, or BufferError: not contiguous
    }
    held_ = true;
    view_ = {static_cast<const char*>(buffer_.buf), static_cast<std::size_t>(buffer_.len)};
  }
  BorrowedBytes(const BorrowedBytes&) = delete;
  BorrowedBytes& operator=(const BorrowedBytes&) = delete;
  ~BorrowedBytes() {
    if (held_) PyBuffer_Release(&buffer_);
  }
  std::string_view view() const { return view_; }

 private:
  Py_buffer buffer_{};
  bool held_ = false;
  std::string_view view_;
};

bool is_bytes_like(const py::handle& value) {
  return PyBytes_Check(value.ptr()) || PyByteArray_Check(value.ptr()) ||
         PyMemoryView_Check(value.ptr());
}

// A name or a sequence of names (SmartRedis accepts a single str for inputs and outputs).
std::vector<std::string> names_of(const py::handle& value) {
  if (py::isinstance<py::str>(value)) return {value.cast<std::string>()};
  return value.cast<std::vector<std::string>>();
}

// Named arrays from a dict {name: array} or an iterable of (name, array) pairs.
struct NamedArrays {
  std::vector<std::string> names;
  std::vector<ArrayInput> arrays;

  std::vector<TensorRef> refs() const {
    std::vector<TensorRef> refs;
    refs.reserve(names.size());
    for (std::size_t i = 0; i < names.size(); ++i) {
      const ArrayInput& a = arrays[i];
      refs.push_back(TensorRef{names[i], a.dtype, a.data, a.bytes, a.shape, a.order});
    }
    return refs;
  }
};

NamedArrays named_arrays(const py::handle& tensors) {
  NamedArrays result;
  py::object items = py::isinstance<py::dict>(tensors)
                         ? py::reinterpret_borrow<py::dict>(tensors).attr("items")()
                         : py::reinterpret_borrow<py::object>(tensors);
  for (py::handle item : items) {
    auto pair = item.cast<py::sequence>();
    if (pair.size() != 2) throw py::value_error("expected (name, array) pairs");
    result.names.push_back(pair[0].cast<std::string>());
    result.arrays.push_back(array_input(pair[1]));
  }
  return result;
}

py::list arrays_from_tensors(std::vector<Tensor> tensors) {
  py::list arrays;
  for (Tensor& tensor : tensors) arrays.append(array_from_tensor(std::move(tensor)));
  return arrays;
}

py::list datasets_list(std::vector<DataSet> datasets) {
  py::list list;
  for (DataSet& dataset : datasets) list.append(py::cast(std::move(dataset)));
  return list;
}

// Command arguments: str (UTF-8) or bytes-like, borrowed for the call.
struct CommandArgs {
  std::vector<std::unique_ptr<BorrowedBytes>> held;
  std::vector<std::string_view> views;
  explicit CommandArgs(const py::handle& args) {
    for (py::handle arg : args) {
      if (py::isinstance<py::int_>(arg) || py::isinstance<py::float_>(arg)) {
        throw py::type_error("command arguments must be str or bytes; format numbers with str()");
      }
      held.push_back(std::make_unique<BorrowedBytes>(arg));
      views.push_back(held.back()->view());
    }
  }
};

ModelOptions model_options(std::int64_t batch_size, std::int64_t min_batch_size,
                           std::int64_t min_batch_timeout_ms, std::string tag,
                           const py::object& inputs, const py::object& outputs,
                           std::int64_t keep_versions) {
  ModelOptions options;
  options.keep_versions = keep_versions;
  options.batch_size = batch_size;
  options.min_batch_size = min_batch_size;
  options.min_batch_timeout = milliseconds(min_batch_timeout_ms);
  options.tag = std::move(tag);
  if (!inputs.is_none()) options.inputs = names_of(inputs);
  if (!outputs.is_none()) options.outputs = names_of(outputs);
  return options;
}

std::uint64_t model_version_argument(const std::optional<std::int64_t>& version) {
  if (version && *version < 0) {
    throw InvalidArgumentError("version must be 0 (the newest) or a model version, got " +
                               std::to_string(*version));
  }
  return version ? static_cast<std::uint64_t>(*version) : 0;
}

std::string fspath(const py::handle& path) {
  return py::module_::import("os").attr("fspath")(path).cast<std::string>();
}

#define SLIPSTREAM_MODEL_OPTION_ARGS                                                       \
  py::arg("backend") = "TORCH", py::arg("device") = "CPU", py::arg("batch_size") = 0,      \
  py::arg("min_batch_size") = 0, py::arg("min_batch_timeout_ms") = 0, py::arg("tag") = "", \
  py::arg("inputs") = py::none(), py::arg("outputs") = py::none(), py::arg("keep_versions") = 0

}  // namespace

void bind_client(py::module_& module) {
  py::class_<ClientHandle> client(module, "Client", R"doc(
A connection to one Slipstream (or Redis-compatible) server.

Every method blocks until the server has answered and releases the GIL meanwhile, so other Python
threads run. A Client may be shared by threads (their calls take turns on the one connection); use
one Client per thread for parallel transfers. Errors are raised as slipstream.SlipstreamError
subclasses carrying the server's message. Timeouts are in milliseconds.
)doc");

  // ---- Construction -----------------------------------------------------------------------
  client
      .def(py::init([](std::optional<std::string> address, std::optional<std::string> password,
                       std::int64_t connect_timeout_ms, std::int64_t command_timeout_ms,
                       std::optional<std::string> key_prefix_out,
                       std::optional<std::string> key_prefixes_in) {
             ClientOptions options;
             options.address = address.value_or("");
             options.password = std::move(password);
             options.connect_timeout = milliseconds(connect_timeout_ms);
             options.command_timeout = milliseconds(command_timeout_ms);
             options.key_prefix_out = std::move(key_prefix_out);
             options.key_prefixes_in = std::move(key_prefixes_in);
             return call_without_gil(
                 [&] { return ClientHandle(std::make_shared<Client>(std::move(options))); });
           }),
           py::arg("address") = py::none(), py::arg("password") = py::none(),
           py::arg("connect_timeout_ms") = 5000, py::arg("command_timeout_ms") = 60000,
           py::arg("key_prefix_out") = py::none(), py::arg("key_prefixes_in") = py::none(),
           R"doc(
Connects and authenticates. address: "tcp://host:port", "unix:///path" or "host:port"; None takes
SLIPSTREAM_ADDRESS, else the first entry of SSDB. password: None takes SLIPSTREAM_PASSWORD if set.
command_timeout_ms: longest wait with no bytes moving (0: forever). key_prefix_out /
key_prefixes_in: ensemble prefixes, None takes SSKEYOUT / SSKEYIN. Raises InvalidArgumentError
(bad address), ConnectionError, TimeoutError, AuthError.
)doc")
      .def_property_readonly(
          "address", [](const ClientHandle& self) { return self.get()->address(); },
          "The address connected to, normalised (tcp://... or unix://...).")
      .def("close", &ClientHandle::close,
           "Closes the connection. Later calls raise ConnectionError. Arrays already returned stay "
           "valid (they own their memory).")
      .def_property_readonly("closed", &ClientHandle::closed)
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](ClientHandle& self, py::args) { self.close(); })
      .def("__repr__", [](const ClientHandle& self) {
        return self.closed() ? std::string("<slipstream.Client closed>")
                             : "<slipstream.Client " + self.get()->address() + ">";
      });

  // ---- Tensors ----------------------------------------------------------------------------
  client
      .def(
          "put_tensor",
          [](const ClientHandle& self, std::string_view name, const py::handle& data,
             const py::object& compression) {
            if (!compression.is_none()) {
              if (py::isinstance<LoanState>(data)) {
                throw InvalidArgumentError("a TensorLoan is stored as it is: no compression");
              }
              const CompressionOperator op =
                  compression_operator(compression, "compression of tensor '" + std::string(name) + "'");
              ArrayInput in = array_input(data);
              without_gil(self, [&](Client& c) {
                c.put_tensor(name, in.dtype, in.data, in.bytes, in.shape, in.order, op);
              });
              return;
            }
            if (py::isinstance<LoanState>(data)) {
              LoanState& state = data.cast<LoanState&>();
              TensorLoan loan = take_loan_for_put(state);
              without_gil(self, [&](Client& c) {
                c.put_tensor(name, std::move(loan), state.dtype, state.shape);
              });
              return;
            }
            ArrayInput in = array_input(data);
            without_gil(self, [&](Client& c) {
              c.put_tensor(name, in.dtype, in.data, in.bytes, in.shape, in.order);
            });
          },
          py::arg("name"), py::arg("data"), py::kw_only(), py::arg("compression") = py::none(),
          R"doc(
Stores an array under `name`, replacing any value. `data`: a numpy array (any dtype of DType, C- or
Fortran-ordered: both keep their logical shape and are sent from their own memory), a torch tensor
(detached, copied to the CPU if needed), or anything numpy.asarray accepts. Non-contiguous arrays
are copied once. Raises TypeError for an unsupported dtype, InvalidArgumentError for a bad name or
an empty array. `data` may also be a filled TensorLoan (Client.loan), stored with its shape and
dtype without a copy and consumed (see TensorLoan: BufferError while an array over it lives,
InvalidArgumentError if it was stored before). compression: None, or an operator as for streams,
"zstd" or ("zfp", {"accuracy": 1e-4}) (zstd, blosc, bzip2; zfp for float32/float64): the array is
compressed here and stored compressed; get_tensor and every other reader get the elements
(docs/clients.md, "Compressed tensors").
)doc")
      .def(
          "loan",
          [](const ClientHandle& self, const py::handle& shape, const py::handle& dtype) {
            std::vector<std::int64_t> dims;
            try {
              if (py::isinstance<py::int_>(shape)) {
                dims.push_back(shape.cast<std::int64_t>());
              } else {
                dims = shape.cast<std::vector<std::int64_t>>();
              }
            } catch (const py::cast_error&) {
              throw py::type_error("loan: shape must be an int or a sequence of ints, not " +
                                   std::string(py::str(py::type::of(shape).attr("__name__"))));
            }
            const DType type = py::isinstance<DType>(dtype)
                                   ? dtype.cast<DType>()
                                   : dtype_of_numpy(py::dtype::from_args(
                                         py::reinterpret_borrow<py::object>(dtype)));
            return make_loan(*self.get(), std::move(dims), type);
          },
          py::arg("shape"), py::arg("dtype"), R"doc(
Memory for a tensor of `shape` (an int or a sequence of ints) and `dtype` (a DType or anything
numpy.dtype() accepts), as a TensorLoan: fill `loan.array`, drop the arrays, then
put_tensor(name, loan) stores it without a copy. The server's shared memory over a Unix socket
when it offers it (`loan.shared`), private memory otherwise. Raises InvalidArgumentError for a
dimension below 1, TypeError for a dtype Slipstream cannot store, OutOfMemoryError when the server
is over its memory limit.
)doc")
      .def(
          "get_tensor",
          [](const ClientHandle& self, std::string_view name) {
            Tensor tensor = without_gil(self, [&](Client& c) { return c.get_tensor(name); });
            return array_from_tensor(std::move(tensor));
          },
          py::arg("name"), R"doc(
Fetches a tensor as a new C-ordered numpy array. The received bytes are not copied: the array's
base object owns them, so it stays valid after the Client is closed or destroyed. Raises
KeyNotFoundError, WrongTypeError.
)doc")
      .def(
          "unpack_tensor",
          [](const ClientHandle& self, std::string_view name, const py::handle& out) {
            ArrayInput o = output_array(out);
            without_gil(self, [&](Client& c) {
              c.unpack_tensor(name, o.dtype, const_cast<void*>(o.data), o.bytes, o.shape, o.order);
            });
          },
          py::arg("name"), py::arg("out"), R"doc(
Fetches a tensor into an existing writable numpy array of the same dtype and shape (C-ordered: read
from the socket straight into it; Fortran-ordered: transposed). Raises KeyNotFoundError,
InvalidArgumentError (dtype or shape differs); `out` may be partly written on error.
)doc")
      .def(
          "view_tensor",
          [](const ClientHandle& self, std::string_view name) {
            auto view = std::make_unique<TensorView>(
                without_gil(self, [&](Client& c) { return c.view_tensor(name); }));
            std::vector<py::ssize_t> shape(view->shape().begin(), view->shape().end());
            const void* data = view->bytes().data();
            py::dtype dtype = numpy_dtype(view->dtype());
            py::capsule base(view.get(), [](void* v) { delete static_cast<TensorView*>(v); });
            view.release();  // the capsule owns it now
            py::array array(dtype, shape, data, base);
            array.attr("setflags")(py::arg("write") = false);
            return array;
          },
          py::arg("name"), R"doc(
A read-only numpy array over a stored tensor's bytes. Over a Unix socket with the server's shared
memory on, the array is the server's copy itself, mapped read-only (no byte copied); otherwise it
holds a private copy received on the socket. The bytes stay as they were when viewed, even if the
key is overwritten, until the array is garbage-collected. Raises KeyNotFoundError, WrongTypeError.
)doc")
      .def(
          "stats",
          [](const ClientHandle& self) {
            ClientStats s = without_gil(self, [&](Client& c) { return c.stats(); });
            py::dict out;
            out["shared_memory"] = s.shared_memory;
            out["shm_puts"] = s.shm_puts;
            out["shm_loan_puts"] = s.shm_loan_puts;
            out["shm_lent_ahead_puts"] = s.shm_lent_ahead_puts;
            out["shm_gets"] = s.shm_gets;
            out["shm_views"] = s.shm_views;
            out["socket_puts"] = s.socket_puts;
            out["socket_gets"] = s.socket_gets;
            out["fallbacks"] = s.fallbacks;
            return out;
          },
          R"doc(
Which path this client's tensor operations took, as a dict: shared_memory (the connection has the
fast path), shm_puts, shm_loan_puts, shm_lent_ahead_puts (loans taken from those lent ahead with an
earlier commit), shm_gets, shm_views, socket_puts, socket_gets, fallbacks
(operations that wanted shared memory but used the socket because the server's pool was full).
)doc")
      .def(
          "delete_tensor",
          [](const ClientHandle& self, std::string_view name) {
            return without_gil(self, [&](Client& c) { return c.delete_tensor(name); });
          },
          py::arg("name"), "Deletes a tensor; returns False if it did not exist.")
      .def(
          "tensor_exists",
          [](const ClientHandle& self, std::string_view name) {
            return without_gil(self, [&](Client& c) { return c.tensor_exists(name); });
          },
          py::arg("name"))
      .def(
          "rename_tensor",
          [](const ClientHandle& self, std::string_view old_name, std::string_view new_name) {
            without_gil(self, [&](Client& c) { c.rename_tensor(old_name, new_name); });
          },
          py::arg("old_name"), py::arg("new_name"))
      .def(
          "copy_tensor",
          [](const ClientHandle& self, std::string_view source, std::string_view destination) {
            without_gil(self, [&](Client& c) { c.copy_tensor(source, destination); });
          },
          py::arg("source"), py::arg("destination"))
      .def(
          "poll_tensor",
          [](const ClientHandle& self, std::string_view name, int poll_frequency_ms,
             int num_tries) {
            return without_gil(
                self, [&](Client& c) { return c.poll_tensor(name, poll_frequency_ms, num_tries); });
          },
          py::arg("name"), py::arg("poll_frequency_ms"), py::arg("num_tries"),
          "Waits up to poll_frequency_ms * num_tries ms for the tensor; returns whether it exists.")
      .def(
          "put_tensors",
          [](const ClientHandle& self, const py::handle& tensors) {
            NamedArrays in = named_arrays(tensors);
            std::vector<TensorRef> refs = in.refs();
            without_gil(self, [&](Client& c) { c.put_tensors(refs); });
          },
          py::arg("tensors"),
          "Puts {name: array} (or (name, array) pairs) in one round trip. All are sent; the first "
          "error is raised after every reply is read.")
      .def(
          "get_tensors",
          [](const ClientHandle& self, const py::handle& names) {
            std::vector<std::string> keys = names_of(names);
            auto tensors = without_gil(self, [&](Client& c) { return c.get_tensors(keys); });
            return arrays_from_tensors(std::move(tensors));
          },
          py::arg("names"), "Gets several tensors in one round trip, as a list in that order.");

  // ---- Raw keys ---------------------------------------------------------------------------
  client
      .def(
          "key_exists",
          [](const ClientHandle& self, std::string_view key) {
            return without_gil(self, [&](Client& c) { return c.key_exists(key); });
          },
          py::arg("key"), "EXISTS on the raw key (no prefix).")
      .def(
          "poll_key",
          [](const ClientHandle& self, std::string_view key, int poll_frequency_ms, int num_tries) {
            return without_gil(
                self, [&](Client& c) { return c.poll_key(key, poll_frequency_ms, num_tries); });
          },
          py::arg("key"), py::arg("poll_frequency_ms"), py::arg("num_tries"))
      .def(
          "wait_for_keys",
          [](const ClientHandle& self, const py::handle& keys,
             std::optional<std::int64_t> timeout_ms) {
            std::vector<std::string> names = names_of(keys);
            milliseconds timeout = timeout_ms ? milliseconds(*timeout_ms) : kWaitForever;
            return without_gil(self, [&](Client& c) { return c.wait_for_keys(names, timeout); });
          },
          py::arg("keys"), py::arg("timeout_ms") = py::none(),
          "Waits until every raw key exists (server-side, no polling). Returns False if timeout_ms "
          "expires first; 0 checks once; None waits forever.")
      .def(
          "put_bytes",
          [](const ClientHandle& self, std::string_view key, const py::handle& data) {
            BorrowedBytes bytes(data);
            without_gil(self, [&](Client& c) { c.put_bytes(key, bytes.view()); });
          },
          py::arg("key"), py::arg("data"), "SET of bytes (or a str, as UTF-8) under a raw key.")
      .def(
          "get_bytes",
          [](const ClientHandle& self, std::string_view key) {
            std::string bytes = without_gil(self, [&](Client& c) { return c.get_bytes(key); });
            return py::bytes(bytes);
          },
          py::arg("key"), "GET of a raw key as bytes. Raises KeyNotFoundError.")
      .def(
          "delete_bytes",
          [](const ClientHandle& self, std::string_view key) {
            return without_gil(self, [&](Client& c) { return c.delete_bytes(key); });
          },
          py::arg("key"));

  // ---- Datasets ---------------------------------------------------------------------------
  client
      .def(
          "put_dataset",
          [](const ClientHandle& self, const DataSet& dataset) {
            without_gil(self, [&](Client& c) { c.put_dataset(dataset); });
          },
          py::arg("dataset"),
          "Stores a Dataset (SmartRedis layout) in one round trip. Do not modify the Dataset from "
          "another thread meanwhile.")
      .def(
          "get_dataset",
          [](const ClientHandle& self, std::string_view name) {
            return without_gil(self, [&](Client& c) { return c.get_dataset(name); });
          },
          py::arg("name"), "Fetches a Dataset with all its tensors. Raises KeyNotFoundError.")
      .def(
          "delete_dataset",
          [](const ClientHandle& self, std::string_view name) {
            without_gil(self, [&](Client& c) { c.delete_dataset(name); });
          },
          py::arg("name"))
      .def(
          "dataset_exists",
          [](const ClientHandle& self, std::string_view name) {
            return without_gil(self, [&](Client& c) { return c.dataset_exists(name); });
          },
          py::arg("name"))
      .def(
          "poll_dataset",
          [](const ClientHandle& self, std::string_view name, int poll_frequency_ms,
             int num_tries) {
            return without_gil(self, [&](Client& c) {
              return c.poll_dataset(name, poll_frequency_ms, num_tries);
            });
          },
          py::arg("name"), py::arg("poll_frequency_ms"), py::arg("num_tries"))
      .def(
          "copy_dataset",
          [](const ClientHandle& self, std::string_view source, std::string_view destination) {
            without_gil(self, [&](Client& c) { c.copy_dataset(source, destination); });
          },
          py::arg("source"), py::arg("destination"))
      .def(
          "rename_dataset",
          [](const ClientHandle& self, std::string_view old_name, std::string_view new_name) {
            without_gil(self, [&](Client& c) { c.rename_dataset(old_name, new_name); });
          },
          py::arg("old_name"), py::arg("new_name"));

  // ---- Aggregation lists ------------------------------------------------------------------
  client
      .def(
          "append_to_list",
          [](const ClientHandle& self, std::string_view list_name, const DataSet& dataset) {
            without_gil(self, [&](Client& c) { c.append_to_list(list_name, dataset); });
          },
          py::arg("list_name"), py::arg("dataset"),
          "Appends a reference to the dataset (not the dataset itself) to a list.")
      .def(
          "delete_list",
          [](const ClientHandle& self, std::string_view list_name) {
            without_gil(self, [&](Client& c) { c.delete_list(list_name); });
          },
          py::arg("list_name"))
      .def(
          "copy_list",
          [](const ClientHandle& self, std::string_view source, std::string_view destination) {
            without_gil(self, [&](Client& c) { c.copy_list(source, destination); });
          },
          py::arg("source"), py::arg("destination"))
      .def(
          "rename_list",
          [](const ClientHandle& self, std::string_view old_name, std::string_view new_name) {
            without_gil(self, [&](Client& c) { c.rename_list(old_name, new_name); });
          },
          py::arg("old_name"), py::arg("new_name"))
      .def(
          "get_list_length",
          [](const ClientHandle& self, std::string_view list_name) {
            return without_gil(self, [&](Client& c) { return c.get_list_length(list_name); });
          },
          py::arg("list_name"))
      .def(
          "poll_list_length",
          [](const ClientHandle& self, std::string_view list_name, std::int64_t length,
             int poll_frequency_ms, int num_tries) {
            return without_gil(self, [&](Client& c) {
              return c.poll_list_length(list_name, length, poll_frequency_ms, num_tries);
            });
          },
          py::arg("list_name"), py::arg("list_length"), py::arg("poll_frequency_ms"),
          py::arg("num_tries"))
      .def(
          "poll_list_length_gte",
          [](const ClientHandle& self, std::string_view list_name, std::int64_t length,
             int poll_frequency_ms, int num_tries) {
            return without_gil(self, [&](Client& c) {
              return c.poll_list_length_gte(list_name, length, poll_frequency_ms, num_tries);
            });
          },
          py::arg("list_name"), py::arg("list_length"), py::arg("poll_frequency_ms"),
          py::arg("num_tries"))
      .def(
          "poll_list_length_lte",
          [](const ClientHandle& self, std::string_view list_name, std::int64_t length,
             int poll_frequency_ms, int num_tries) {
            return without_gil(self, [&](Client& c) {
              return c.poll_list_length_lte(list_name, length, poll_frequency_ms, num_tries);
            });
          },
          py::arg("list_name"), py::arg("list_length"), py::arg("poll_frequency_ms"),
          py::arg("num_tries"))
      .def(
          "get_datasets_from_list",
          [](const ClientHandle& self, std::string_view list_name) {
            auto datasets =
                without_gil(self, [&](Client& c) { return c.get_datasets_from_list(list_name); });
            return datasets_list(std::move(datasets));
          },
          py::arg("list_name"), "Every dataset the list references, in list order.")
      .def(
          "get_dataset_list_range",
          [](const ClientHandle& self, std::string_view list_name, std::int64_t start_index,
             std::int64_t end_index) {
            auto datasets = without_gil(self, [&](Client& c) {
              return c.get_dataset_list_range(list_name, start_index, end_index);
            });
            return datasets_list(std::move(datasets));
          },
          py::arg("list_name"), py::arg("start_index"), py::arg("end_index"),
          "The datasets at positions [start_index, end_index], inclusive; negative counts from "
          "the end.");

  // ---- Models and scripts -----------------------------------------------------------------
  client
      .def(
          "set_model",
          [](const ClientHandle& self, std::string_view name, const py::handle& model,
             std::string_view backend, std::string_view device, std::int64_t batch_size,
             std::int64_t min_batch_size, std::int64_t min_batch_timeout_ms, std::string tag,
             const py::object& inputs, const py::object& outputs, std::int64_t keep_versions) {
            ModelOptions options = model_options(batch_size, min_batch_size, min_batch_timeout_ms,
                                                 std::move(tag), inputs, outputs, keep_versions);
            // A torch.jit.ScriptModule is serialised by the Python layer (torch.jit.save).
            py::object serialised =
                is_bytes_like(model)
                    ? py::reinterpret_borrow<py::object>(model)
                    : py::module_::import("slipstream._convert").attr("model_bytes")(model);
            BorrowedBytes bytes(serialised);
            without_gil(self, [&](Client& c) {
              c.set_model(name, bytes.view(), backend, device, options);
            });
          },
          py::arg("name"), py::arg("model"), SLIPSTREAM_MODEL_OPTION_ARGS, R"doc(
Stores a model (AI.MODELSTORE), replacing any model under the name; blocks until the server has
loaded it. `model`: the serialised model as bytes-like (a TorchScript archive, as torch.jit.save
writes), sent without a copy, or a torch.jit.ScriptModule (serialised here). Use
set_model_from_file for a path. device: "CPU", "GPU" or "GPU:n". batch_size > 0 lets the server
batch concurrent runs; inputs/outputs: optional tensor names stored with the model; keep_versions:
how many earlier versions stay loaded for run_model(..., version=v) (0-64). Raises
InvalidArgumentError (empty model, inconsistent options), ServerError (the backend cannot load it;
server_text quotes libtorch).
)doc")
      .def(
          "set_model_from_file",
          [](const ClientHandle& self, std::string_view name, const py::handle& path,
             std::string_view backend, std::string_view device, std::int64_t batch_size,
             std::int64_t min_batch_size, std::int64_t min_batch_timeout_ms, std::string tag,
             const py::object& inputs, const py::object& outputs, std::int64_t keep_versions) {
            ModelOptions options = model_options(batch_size, min_batch_size, min_batch_timeout_ms,
                                                 std::move(tag), inputs, outputs, keep_versions);
            std::string file = fspath(path);
            without_gil(self, [&](Client& c) {
              c.set_model_from_file(name, file, backend, device, options);
            });
          },
          py::arg("name"), py::arg("path"), SLIPSTREAM_MODEL_OPTION_ARGS,
          "set_model with the bytes of a file (str or os.PathLike). Raises InvalidArgumentError if "
          "the file cannot be read.")
      .def(
          "get_model",
          [](const ClientHandle& self, std::string_view name) {
            std::string blob = without_gil(self, [&](Client& c) { return c.get_model(name); });
            return py::bytes(blob);
          },
          py::arg("name"), "The serialised model as stored (bytes). Raises KeyNotFoundError.")
      .def(
          "delete_model",
          [](const ClientHandle& self, std::string_view name) {
            return without_gil(self, [&](Client& c) { return c.delete_model(name); });
          },
          py::arg("name"), "Deletes a model; returns False if there was none.")
      .def(
          "model_exists",
          [](const ClientHandle& self, std::string_view name) {
            return without_gil(self, [&](Client& c) { return c.model_exists(name); });
          },
          py::arg("name"))
      .def(
          "run_model",
          [](const ClientHandle& self, std::string_view name, const py::handle& inputs,
             const py::handle& outputs, std::int64_t timeout_ms,
             std::optional<std::int64_t> version) -> py::object {
            std::vector<std::string> in = names_of(inputs);
            std::vector<std::string> out = names_of(outputs);
            ModelVersion asked{model_version_argument(version), 0};
            without_gil(self, [&](Client& c) {
              c.run_model(name, in, out, milliseconds(timeout_ms), version ? &asked : nullptr);
            });
            if (!version) return py::none();
            return py::int_(asked.ran);
          },
          py::arg("name"), py::arg("inputs"), py::arg("outputs"), py::arg("timeout_ms") = 0,
          py::arg("version") = py::none(),
          R"doc(
Runs a stored model on the tensors named `inputs` (a name or a list) and stores its results under
`outputs`; blocks until done. timeout_ms > 0: drop the run (TimeoutError) if it has not started in
time. version: None (returns None), or the version to run, 0 for the newest or one the model keeps
(set_model's keep_versions); then returns the version that ran. Raises KeyNotFoundError (model or
input missing), ServerError (the model rejected the inputs, or does not hold that version).
)doc")
      .def(
          "run_model_on",
          [](const ClientHandle& self, std::string_view name, const py::handle& inputs,
             const py::handle& outputs, std::int64_t timeout_ms,
             std::optional<std::int64_t> version) -> py::object {
            NamedArrays in = named_arrays(inputs);
            std::vector<TensorRef> refs = in.refs();
            std::vector<std::string> out = names_of(outputs);
            ModelVersion asked{model_version_argument(version), 0};
            auto tensors = without_gil(self, [&](Client& c) {
              return c.run_model_on(name, refs, out, milliseconds(timeout_ms),
                                    version ? &asked : nullptr);
            });
            py::object arrays = arrays_from_tensors(std::move(tensors));
            if (!version) return arrays;
            return py::make_tuple(arrays, py::int_(asked.ran));
          },
          py::arg("name"), py::arg("inputs"), py::arg("outputs"), py::arg("timeout_ms") = 0,
          py::arg("version") = py::none(),
          R"doc(
One round trip per step: stores `inputs` ({name: array} or (name, array) pairs), runs the model on
them and returns the tensors named `outputs` as a list of numpy arrays (zero-copy, as get_tensor).
With version (0: the newest, or one the model keeps) returns (arrays, the version that ran).
)doc")
      .def(
          "model_chunk_size",
          [](const ClientHandle& self) {
            return without_gil(self, [&](Client& c) { return c.model_chunk_size(); });
          },
          "The chunk size (bytes) set_model splits models into (the server's MODEL_CHUNK_SIZE).")
      .def(
          "set_model_chunk_size",
          [](const ClientHandle& self, std::int64_t bytes) {
            without_gil(self, [&](Client& c) { c.set_model_chunk_size(bytes); });
          },
          py::arg("chunk_size"), "Sets the server's MODEL_CHUNK_SIZE (for every client).")
      .def(
          "set_script",
          [](const ClientHandle& self, std::string_view name, std::string_view script,
             std::string_view device, const py::object& entry_points) {
            std::vector<std::string> entries;
            if (!entry_points.is_none()) entries = names_of(entry_points);
            without_gil(self, [&](Client& c) { c.set_script(name, device, script, entries); });
          },
          py::arg("name"), py::arg("script"), py::arg("device") = "CPU",
          py::arg("entry_points") = py::none(), R"doc(
Compiles and stores TorchScript source. Without entry_points it is stored as AI.SCRIPTSET does (call
it with run_script); with entry_points (functions f(tensors: List[Tensor], keys: List[str],
args: List[str])) as AI.SCRIPTSTORE (call them with run_script(..., keys=..., args=...)).
Raises ServerError with the compiler's message.
)doc")
      .def(
          "set_script_from_file",
          [](const ClientHandle& self, std::string_view name, const py::handle& path,
             std::string_view device, const py::object& entry_points) {
            std::vector<std::string> entries;
            if (!entry_points.is_none()) entries = names_of(entry_points);
            std::string file = fspath(path);
            without_gil(self,
                        [&](Client& c) { c.set_script_from_file(name, device, file, entries); });
          },
          py::arg("name"), py::arg("path"), py::arg("device") = "CPU",
          py::arg("entry_points") = py::none())
      .def(
          "get_script",
          [](const ClientHandle& self, std::string_view name) {
            return without_gil(self, [&](Client& c) { return c.get_script(name); });
          },
          py::arg("name"), "The source of a stored script. Raises KeyNotFoundError.")
      .def(
          "run_script",
          [](const ClientHandle& self, std::string_view name, std::string_view function,
             const py::handle& inputs, const py::handle& outputs, const py::object& keys,
             const py::object& args, std::int64_t timeout_ms) {
            std::vector<std::string> in = names_of(inputs);
            std::vector<std::string> out = names_of(outputs);
            if (keys.is_none() && args.is_none()) {
              without_gil(self, [&](Client& c) {
                c.run_script(name, function, in, out, milliseconds(timeout_ms));
              });
              return;
            }
            std::vector<std::string> key_list =
                keys.is_none() ? std::vector<std::string>{} : names_of(keys);
            std::vector<std::string> arg_list =
                args.is_none() ? std::vector<std::string>{} : names_of(args);
            without_gil(self, [&](Client& c) {
              c.run_script(name, function, key_list, in, arg_list, out, milliseconds(timeout_ms));
            });
          },
          py::arg("name"), py::arg("function"), py::arg("inputs"), py::arg("outputs"),
          py::kw_only(), py::arg("keys") = py::none(), py::arg("args") = py::none(),
          py::arg("timeout_ms") = 0, R"doc(
Calls `function` of a stored script on the tensors named `inputs` and stores its results under
`outputs`. Without keys and args: AI.SCRIPTRUN, the inputs are positional arguments. With keys
and/or args (lists of str, possibly empty): AI.SCRIPTEXECUTE of an entry point, called as
function(tensors, keys, args). Errors as run_model; an unknown function raises ServerError.
)doc")
      .def(
          "delete_script",
          [](const ClientHandle& self, std::string_view name) {
            return without_gil(self, [&](Client& c) { return c.delete_script(name); });
          },
          py::arg("name"), "Deletes a script; returns False if there was none.")
      .def(
          "model_info",
          [](const ClientHandle& self, std::string_view name) {
            return without_gil(self, [&](Client& c) { return c.model_info(name); });
          },
          py::arg("name"), "Run statistics of a model or script (ModelInfo).")
      .def(
          "reset_model_stats",
          [](const ClientHandle& self, std::string_view name) {
            without_gil(self, [&](Client& c) { c.reset_model_stats(name); });
          },
          py::arg("name"));

  // ---- Ensemble prefixes (local settings: no network, no GIL release needed) ----------------
  client
      .def(
          "set_data_source",
          [](const ClientHandle& self, std::string_view source) {
            self.get()->set_data_source(source);
          },
          py::arg("source"), "Selects which SSKEYIN prefix reads use.")
      .def(
          "use_tensor_ensemble_prefix",
          [](const ClientHandle& self, bool enable) {
            self.get()->use_tensor_ensemble_prefix(enable);
          },
          py::arg("enable"))
      .def(
          "use_dataset_ensemble_prefix",
          [](const ClientHandle& self, bool enable) {
            self.get()->use_dataset_ensemble_prefix(enable);
          },
          py::arg("enable"))
      .def(
          "use_list_ensemble_prefix",
          [](const ClientHandle& self, bool enable) {
            self.get()->use_list_ensemble_prefix(enable);
          },
          py::arg("enable"))
      .def(
          "use_model_ensemble_prefix",
          [](const ClientHandle& self, bool enable) {
            self.get()->use_model_ensemble_prefix(enable);
          },
          py::arg("enable"))
      .def("model_ensemble_prefix_enabled",
           [](const ClientHandle& self) { return self.get()->model_ensemble_prefix_enabled(); });

  // ---- Escape hatch -----------------------------------------------------------------------
  client
      .def(
          "command",
          [](const ClientHandle& self, const py::handle& args) {
            CommandArgs command(args);
            Reply reply = without_gil(self, [&](Client& c) { return c.command(command.views); });
            return reply_to_python(reply);
          },
          py::arg("args"), R"doc(
Sends one command as given (str or bytes arguments, no prefixes) and returns its reply as Python
values (bulk strings as bytes, status as str, arrays as lists). An error reply raises ServerError;
an error nested in an array is returned as a ServerError instance.
)doc")
      .def(
          "commands",
          [](const ClientHandle& self, const py::handle& batch) {
            std::vector<std::unique_ptr<CommandArgs>> held;
            std::vector<std::vector<std::string_view>> views;
            for (py::handle command : batch) {
              held.push_back(std::make_unique<CommandArgs>(command));
              views.push_back(held.back()->views);
            }
            auto replies = without_gil(self, [&](Client& c) { return c.commands(views); });
            py::list result;
            for (const Reply& reply : replies) result.append(reply_to_python(reply));
            return result;
          },
          py::arg("batch"),
          "Sends several commands in one round trip; returns every reply in order (error replies "
          "as ServerError instances, not raised).");
}

#undef SLIPSTREAM_MODEL_OPTION_ARGS

}  // namespace slipstream::python
