// Internal to openpmd_api.openpmd_api_cxx: the bind_* function of each source file, the GIL
// helpers, numpy <-> Datatype conversions and the container template the classes share.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "../bindings.hpp"

#include <complex>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "openPMD/openPMD.hpp"

namespace openpmd_python {

namespace py = pybind11;
using openPMD::Datatype;

void bind_errors(py::module_& module);            // errors.cpp: Error and its subclasses
void bind_enums(py::module_& module);             // enums.cpp: Access, Datatype, ... enums
void bind_dataset(py::module_& module);           // dataset.cpp: Dataset
void bind_attributable(py::module_& module);      // attributable.cpp: Attributable
void bind_record_component(py::module_& module);  // record_component.cpp: the components
void bind_records(py::module_& module);           // records.cpp: records, meshes, species
void bind_iteration(py::module_& module);         // iteration.cpp: Iteration, IndexedIteration
void bind_series(py::module_& module);            // series.cpp: Series and its iterators

/// Every class is held by shared_ptr (pybind11 wants one holder kind along a hierarchy), so
/// that the objects owning a series can be given a deleter that releases the GIL.
template <typename T, typename... Bases>
using Class = py::class_<T, Bases..., std::shared_ptr<T>>;

// ---- The GIL ----------------------------------------------------------------------------------

inline bool interpreter_finalizing() noexcept {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing() != 0;
#else
  return _Py_IsFinalizing() != 0;
#endif
}

/// Runs `call()` with the GIL released (every call that may wait or do I/O: opening a series,
/// flushes, closes, going to the next iteration): slipstream._slipstream's call_without_gil.
using slipstream::python::call_without_gil;

/// A strong reference to a Python object that may be dropped on any thread, with or without the
/// GIL (the layer frees stored and loaded buffers inside flushes, which run without it). During
/// interpreter shutdown the reference is leaked instead.
class PythonReference {
 public:
  explicit PythonReference(py::object object) : object_(object.release().ptr()) {}
  ~PythonReference() {
    if (object_ == nullptr || !Py_IsInitialized() || interpreter_finalizing()) return;
    PyGILState_STATE state = PyGILState_Ensure();
    Py_DECREF(object_);
    PyGILState_Release(state);
  }
  PythonReference(const PythonReference&) = delete;
  PythonReference& operator=(const PythonReference&) = delete;
  PyObject* get() const noexcept { return object_; }

 private:
  PyObject* object_;
};

/// A shared_ptr<T> to `data` that keeps `owner` (a numpy array) alive until the layer lets go.
template <typename T>
std::shared_ptr<T> keeping_alive(void* data, py::object owner) {
  auto reference = std::make_shared<PythonReference>(std::move(owner));
  return std::shared_ptr<T>(static_cast<T*>(data),
                            [reference](T*) mutable { reference.reset(); });
}

/// Deletes with the GIL released: for the objects that may own a series, whose destruction
/// closes it (a flush, a stream's writer ending).
struct DeleteWithoutGil {
  template <typename T>
  void operator()(T* object) const {
    if (Py_IsInitialized() && PyGILState_Check()) {
      PyThreadState* state = PyEval_SaveThread();
      delete object;
      PyEval_RestoreThread(state);
    } else {
      delete object;
    }
  }
};

template <typename T, typename... Args>
std::shared_ptr<T> make_without_gil_deleter(Args&&... args) {
  return std::shared_ptr<T>(new T(std::forward<Args>(args)...), DeleteWithoutGil{});
}

/// `value` as a Python object that keeps `parent` alive (children keep their series alive).
template <typename T>
py::object tied(T value, py::handle parent) {
  py::object object = py::cast(std::move(value));
  py::detail::keep_alive_impl(object, parent);
  return object;
}

// ---- Datatypes (enums.cpp) --------------------------------------------------------------------

/// The Datatype of a numpy dtype (int8 -> SCHAR, int64 -> LONG, uint64 -> ULONG, ...). Throws
/// TypeError for one openPMD has no type for.
Datatype datatype_of_numpy(const py::dtype& dtype);
/// The numpy dtype of a Datatype (vectors: of their elements; CHAR -> int8, LONGLONG -> int64).
/// Throws TypeError for STRING, VEC_STRING and UNDEFINED.
py::dtype numpy_of_datatype(Datatype dtype);
/// A Datatype from a Datatype enum value, a numpy dtype, or anything np.dtype() takes.
Datatype datatype_argument(py::handle value);
/// np.dtype(value).
py::dtype to_numpy_dtype(py::handle value);

/// Calls f.template operator()<T>() with T the C++ type of a dataset Datatype (the numeric types,
/// complex and bool). Throws TypeError for other Datatypes.
template <typename F>
decltype(auto) with_element_type(Datatype dtype, F&& f) {
  switch (dtype) {
    case Datatype::CHAR: return f.template operator()<char>();
    case Datatype::UCHAR: return f.template operator()<unsigned char>();
    case Datatype::SCHAR: return f.template operator()<signed char>();
    case Datatype::SHORT: return f.template operator()<short>();
    case Datatype::INT: return f.template operator()<int>();
    case Datatype::LONG: return f.template operator()<long>();
    case Datatype::LONGLONG: return f.template operator()<long long>();
    case Datatype::USHORT: return f.template operator()<unsigned short>();
    case Datatype::UINT: return f.template operator()<unsigned int>();
    case Datatype::ULONG: return f.template operator()<unsigned long>();
    case Datatype::ULONGLONG: return f.template operator()<unsigned long long>();
    case Datatype::FLOAT: return f.template operator()<float>();
    case Datatype::DOUBLE: return f.template operator()<double>();
    case Datatype::LONG_DOUBLE: return f.template operator()<long double>();
    case Datatype::CFLOAT: return f.template operator()<std::complex<float>>();
    case Datatype::CDOUBLE: return f.template operator()<std::complex<double>>();
    case Datatype::CLONG_DOUBLE: return f.template operator()<std::complex<long double>>();
    case Datatype::BOOL: return f.template operator()<bool>();
    default:
      throw py::type_error("openPMD datatype " + openPMD::datatypeToString(dtype) +
                           " is not a type of dataset elements");
  }
}

// ---- Shared by the component and record bindings ----------------------------------------------

/// "'/data/100/meshes/E/x' of series 'dir/name.sst'" for messages about `object`
/// (attributable.cpp).
std::string describe(const openPMD::Attributable& object);

/// A Python value as an openPMD attribute of the exact type it has (attributable.cpp): bool ->
/// BOOL, int -> LONG, float -> DOUBLE, complex -> CDOUBLE, str -> STRING, numpy scalars and 0-d
/// arrays -> their own type, lists, tuples and arrays -> vectors of their element type, a list
/// of str -> VEC_STRING. With `dtype`, the value is converted to that type instead.
openPMD::Attribute attribute_of(py::handle value, std::optional<Datatype> dtype = std::nullopt);
/// An attribute as a plain Python value (int, float, complex, bool, str, list).
py::object attribute_to_python(const openPMD::Attribute& attribute);

/// Binds the mapping protocol of a Container: __getitem__ (creating the child when the series is
/// written), __contains__, __len__, __iter__ (keys), keys(), values(), items(), __delitem__.
template <typename Container, typename Base>
Class<Container, Base> bind_container(py::module_& module, const char* name) {
  using Key = typename Container::key_type;
  Class<Container, Base> cls(module, name);
  cls.def(
         "__getitem__",
         [](py::object self, const Key& key) {
           Container& container = self.cast<Container&>();
           return tied(container[key], self);
         },
         py::arg("key"))
      .def(
          "__contains__",
          [](const Container& container, py::handle key) {
            try {
              return container.contains(key.cast<Key>());
            } catch (const py::cast_error&) {
              return false;
            }
          },
          py::arg("key"))
      .def("__len__", [](const Container& container) { return container.size(); })
      .def("__iter__",
           [](const Container& container) {
             py::list keys;
             for (const auto& entry : container) keys.append(py::cast(entry.first));
             return py::iter(keys);
           })
      .def("keys",
           [](const Container& container) {
             py::list keys;
             for (const auto& entry : container) keys.append(py::cast(entry.first));
             return keys;
           })
      .def("values",
           [](py::object self) {
             Container& container = self.cast<Container&>();
             py::list values;
             for (const auto& entry : container) values.append(tied(entry.second, self));
             return values;
           })
      .def("items",
           [](py::object self) {
             Container& container = self.cast<Container&>();
             py::list items;
             for (const auto& entry : container) {
               items.append(py::make_tuple(py::cast(entry.first), tied(entry.second, self)));
             }
             return items;
           })
      .def(
          "__delitem__",
          [](Container& container, const Key& key) {
            if (container.erase(key) == 0) throw py::key_error(std::string(py::str(py::cast(key))));
          },
          py::arg("key"))
      .def("__repr__", [name](const Container& container) {
        return "<openPMD." + std::string(name) + " with " + std::to_string(container.size()) +
               " entries>";
      });
  return cls;
}

}  // namespace openpmd_python
