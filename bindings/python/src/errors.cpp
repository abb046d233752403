// The Python exception hierarchy mirroring slipstream::Error and its subclasses, and the
// translator that raises them (with the server's message) from every call.
//
//   SlipstreamError(Exception)              .code, .code_name on every instance
//   +- ConnectionError(.., builtins.ConnectionError)
//   +- TimeoutError(.., builtins.TimeoutError)
//   +- ProtocolError
//   +- InvalidArgumentError(.., ValueError)
//   +- BufferTooSmallError(.., ValueError)
//   +- KeyNotFoundError(.., KeyError)
//   +- ServerError                           .server_text: the server's reply, verbatim
//      +- WrongTypeError
//      +- OutOfMemoryError
//      +- AuthError
#include <string>

#include "bindings.hpp"
#include "slipstream/error.hpp"

namespace slipstream::python {

namespace {

// Created once at import and never freed: translators may run until the interpreter exits.
struct ErrorTypes {
  PyObject* base = nullptr;
  PyObject* connection = nullptr;
  PyObject* timeout = nullptr;
  PyObject* protocol = nullptr;
  PyObject* invalid_argument = nullptr;
  PyObject* buffer_too_small = nullptr;
  PyObject* key_not_found = nullptr;
  PyObject* server = nullptr;
  PyObject* wrong_type = nullptr;
  PyObject* out_of_memory = nullptr;
  PyObject* auth = nullptr;
};
ErrorTypes types;

PyObject* make_type(py::module_& module, const char* name, const char* doc,
                    std::initializer_list<PyObject*> bases) {
  py::tuple base_tuple(bases.size());
  std::size_t i = 0;
  for (PyObject* base : bases) base_tuple[i++] = py::reinterpret_borrow<py::object>(base);
  std::string qualified = std::string("slipstream.") + name;
  PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, base_tuple.ptr(), nullptr);
  if (type == nullptr) throw py::error_already_set();
  module.add_object(name, py::reinterpret_borrow<py::object>(type));
  return type;  // the new reference is kept for the life of the process
}

PyObject* type_for(ErrorCode code) {
  switch (code) {
    case ErrorCode::kConnection:
      return types.connection;
    case ErrorCode::kTimeout:
      return types.timeout;
    case ErrorCode::kProtocol:
      return types.protocol;
    case ErrorCode::kServer:
      return types.server;
    case ErrorCode::kKeyNotFound:
      return types.key_not_found;
    case ErrorCode::kWrongType:
      return types.wrong_type;
    case ErrorCode::kInvalidArgument:
      return types.invalid_argument;
    case ErrorCode::kBufferTooSmall:
      return types.buffer_too_small;
    case ErrorCode::kOutOfMemory:
      return types.out_of_memory;
    case ErrorCode::kAuth:
      return types.auth;
    case ErrorCode::kBackend:
      return types.server;
  }
  return types.base;
}

void raise(const Error& error) {
  PyObject* type = type_for(error.code());
  if (dynamic_cast<const ServerError*>(&error) != nullptr && type != types.server &&
      type != types.wrong_type && type != types.out_of_memory && type != types.auth) {
    type = types.server;  // a ServerError with a code that has no ServerError subclass
  }
  py::object instance = py::reinterpret_borrow<py::object>(type)(lossy_str(error.what()));
  instance.attr("code") = static_cast<int>(error.code());
  instance.attr("code_name") = std::string(error_code_name(error.code()));
  if (const auto* server_error = dynamic_cast<const ServerError*>(&error)) {
    instance.attr("server_text") = lossy_str(server_error->server_text());
  }
  PyErr_SetObject(type, instance.ptr());
}

}  // namespace

void bind_errors(py::module_& module) {
  PyObject* exception = PyExc_Exception;
  types.base = make_type(module, "SlipstreamError",
                         "Base of every Slipstream error. `code` is the stable numeric error code "
                         "(as the C API returns it) and `code_name` its name.",
                         {exception});
  types.connection = make_type(module, "ConnectionError",
                               "The server cannot be reached, or the connection broke mid-request. "
                               "The client reconnects on its next call.",
                               {types.base, PyExc_ConnectionError});
  types.timeout = make_type(module, "TimeoutError",
                            "A connect or command timeout expired, or a model run was dropped "
                            "after waiting longer than its timeout.",
                            {types.base, PyExc_TimeoutError});
  types.protocol = make_type(module, "ProtocolError",
                             "The server sent bytes that are not a valid reply.", {types.base});
  types.invalid_argument = make_type(
      module, "InvalidArgumentError",
      "A bad argument caught by the client (name, shape, dtype, address), or a reply that does "
      "not fit the request (e.g. a tensor of another dtype than the output array).",
      {types.base, PyExc_ValueError});
  types.buffer_too_small =
      make_type(module, "BufferTooSmallError", "The output array is smaller than the tensor.",
                {types.base, PyExc_ValueError});
  types.key_not_found =
      make_type(module, "KeyNotFoundError",
                "The tensor, dataset, list, model, script or key does not exist. Also a KeyError.",
                {types.base, PyExc_KeyError});
  // KeyError's str() quotes its argument; show the message as it is, like every other error.
  py::handle(types.key_not_found).attr("__str__") =
      py::module_::import("builtins").attr("BaseException").attr("__str__");
  types.server = make_type(module, "ServerError",
                           "The server replied with an error. `server_text` is its reply verbatim "
                           "(for models and scripts it quotes libtorch's message).",
                           {types.base});
  types.wrong_type =
      make_type(module, "WrongTypeError", "The key holds another kind of value (server WRONGTYPE).",
                {types.server});
  types.out_of_memory =
      make_type(module, "OutOfMemoryError",
                "The server is over its memory limit and stored nothing.", {types.server});
  types.auth =
      make_type(module, "AuthError", "Wrong password, or a password is required and was not given.",
                {types.server});

  py::register_exception_translator([](std::exception_ptr pending) {
    try {
      if (pending) std::rethrow_exception(pending);
    } catch (const Error& error) {
      raise(error);
    }
  });
}

}  // namespace slipstream::python
