// openPMD-api's Python exceptions: Error (a RuntimeError) and ErrorWrongAPIUsage etc. for the
// C++ layer's openPMD::error classes, KeyError for a missing container key.
#include <stdexcept>
#include <string>

#include "openpmd_bindings.hpp"

namespace openpmd_python {

namespace {

// Created once at import and never freed: translators may run until the interpreter exits.
struct ErrorTypes {
  PyObject* base = nullptr;
  PyObject* operation_unsupported = nullptr;
  PyObject* wrong_api_usage = nullptr;
  PyObject* backend_config_schema = nullptr;
  PyObject* read_error = nullptr;
  PyObject* no_such_attribute = nullptr;
  PyObject* illegal_in_standard = nullptr;
};
ErrorTypes types;

PyObject* make_type(py::module_& module, const char* name, const char* doc, PyObject* base) {
  const std::string qualified = std::string("openpmd_api.") + name;
  PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, base, nullptr);
  if (type == nullptr) throw py::error_already_set();
  module.add_object(name, py::reinterpret_borrow<py::object>(type));
  return type;  // the new reference is kept for the life of the process
}

}  // namespace

void bind_errors(py::module_& module) {
  types.base = make_type(module, "Error", "Base of openPMD's errors.", PyExc_RuntimeError);
  types.operation_unsupported = make_type(
      module, "ErrorOperationUnsupportedInBackend",
      "The backend cannot do this (e.g. random access to a stream's steps).", types.base);
  types.wrong_api_usage = make_type(module, "ErrorWrongAPIUsage",
                                    "A call the API does not allow in this state.", types.base);
  types.backend_config_schema = make_type(
      module, "ErrorBackendConfigSchema",
      "A JSON/TOML configuration that does not parse, or a value of the wrong type.", types.base);
  types.read_error = make_type(module, "ErrorReadError",
                               "A series, iteration or component could not be read.", types.base);
  types.no_such_attribute = make_type(module, "ErrorNoSuchAttribute",
                                      "get_attribute of an attribute that does not exist.",
                                      types.base);
  types.illegal_in_standard = make_type(module, "ErrorIllegalInOpenPMDStandard",
                                        "A name or value the openPMD standard does not allow.",
                                        types.base);

  // Local: only this module's functions raise these (slipstream._slipstream keeps its own).
  py::register_local_exception_translator([](std::exception_ptr error) {
    try {
      if (error) std::rethrow_exception(error);
    } catch (const py::builtin_exception&) {
      throw;  // pybind11's own (TypeError, IndexError, ...): its translator raises them
    } catch (const openPMD::error::OperationUnsupportedInBackend& e) {
      PyErr_SetString(types.operation_unsupported, e.what());
    } catch (const openPMD::error::WrongAPIUsage& e) {
      PyErr_SetString(types.wrong_api_usage, e.what());
    } catch (const openPMD::error::BackendConfigSchema& e) {
      PyErr_SetString(types.backend_config_schema, e.what());
    } catch (const openPMD::error::ReadError& e) {
      PyErr_SetString(types.read_error, e.what());
    } catch (const openPMD::error::NoSuchAttribute& e) {
      PyErr_SetString(types.no_such_attribute, e.what());
    } catch (const openPMD::error::IllegalInOpenPMDStandard& e) {
      PyErr_SetString(types.illegal_in_standard, e.what());
    } catch (const openPMD::Error& e) {
      PyErr_SetString(types.base, e.what());
    } catch (const std::out_of_range& e) {
      // Containers: a key that does not exist (openPMD-api raises KeyError too).
      PyErr_SetString(PyExc_KeyError, e.what());
    } catch (const std::runtime_error& e) {
      // slipstream::Error (the server cannot be reached, a timeout, ...) and the like.
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });
}

}  // namespace openpmd_python
