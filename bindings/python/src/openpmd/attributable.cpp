// openPMD-api's Attributable, the base of every object of a series: set_attribute with Python
// and numpy values mapped to exact C++ types, get_attribute back as plain Python values.
#include <array>
#include <cstring>
#include <string>
#include <type_traits>
#include <variant>

#include "openpmd_bindings.hpp"

namespace openpmd_python {

using openPMD::Attributable;
using openPMD::Attribute;

namespace {

template <typename T>
struct IsComplex : std::false_type {};
template <typename T>
struct IsComplex<std::complex<T>> : std::true_type {};

py::module_ numpy() { return py::module_::import("numpy"); }

template <typename T>
Attribute exact(T value) {
  return Attribute(Attribute::resource(std::in_place_type<T>, std::move(value)));
}

// `value` as a C-contiguous numpy array of `dtype` (numpy converts and checks).
py::array numpy_array(py::handle value, Datatype dtype) {
  py::object array = numpy().attr("asarray")(value, numpy_of_datatype(dtype));
  return numpy().attr("ascontiguousarray")(array);
}

bool is_numpy_value(py::handle value) {
  return py::isinstance(value, numpy().attr("generic")) || py::isinstance<py::array>(value);
}

bool is_text(py::handle value) { return py::isinstance<py::str>(value); }

std::vector<std::string> strings_of(py::handle value) {
  if (is_text(value)) return {value.cast<std::string>()};
  std::vector<std::string> out;
  for (py::handle item : py::iter(value)) {
    if (!is_text(item)) {
      throw py::type_error("a VEC_STRING attribute takes str items, not " +
                           std::string(py::str(py::type::of(item))));
    }
    out.push_back(item.cast<std::string>());
  }
  return out;
}

// The type a value has when no datatype is given.
Datatype natural_datatype(py::handle value) {
  if (py::isinstance<py::bool_>(value)) return Datatype::BOOL;
  if (is_text(value)) return Datatype::STRING;
  if (is_numpy_value(value)) {
    py::array array = numpy().attr("asarray")(value);
    const char kind = array.dtype().kind();
    if (kind == 'U' || kind == 'S') {
      return array.ndim() == 0 ? Datatype::STRING : Datatype::VEC_STRING;
    }
    const Datatype element = datatype_of_numpy(array.dtype());
    if (array.ndim() == 0) return element;
    if (element == Datatype::BOOL) {
      throw py::type_error("an attribute cannot be an array of bool (openPMD has no VEC_BOOL)");
    }
    return openPMD::toVectorType(element);
  }
  if (py::isinstance<py::int_>(value)) {
    int overflow = 0;
    PyLong_AsLongAndOverflow(value.ptr(), &overflow);
    if (overflow > 0) return Datatype::ULONG;  // beyond int64 (uint64 checks the range)
    return Datatype::LONG;
  }
  if (py::isinstance<py::float_>(value)) return Datatype::DOUBLE;
  if (PyComplex_Check(value.ptr())) return Datatype::CDOUBLE;
  if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
    py::sequence items = py::reinterpret_borrow<py::sequence>(value);
    if (py::len(items) == 0) return Datatype::VEC_DOUBLE;
    bool all_text = true;
    bool all_bool = true;
    for (py::handle item : items) {
      all_text = all_text && is_text(item);
      all_bool = all_bool && (py::isinstance<py::bool_>(item) ||
                              py::isinstance(item, numpy().attr("bool_")));
    }
    if (all_text) return Datatype::VEC_STRING;
    if (all_bool) {
      throw py::type_error("an attribute cannot be a list of bool (openPMD has no VEC_BOOL)");
    }
    py::array array = numpy().attr("asarray")(value);
    const char kind = array.dtype().kind();
    if (kind != 'i' && kind != 'u' && kind != 'f' && kind != 'c') {
      throw py::type_error("a list attribute holds numbers of one kind or str, not " +
                           std::string(py::repr(value)));
    }
    return openPMD::toVectorType(datatype_of_numpy(array.dtype()));
  }
  throw py::type_error("no openPMD attribute type for a value of type " +
                       std::string(py::str(py::type::of(value))));
}

Attribute attribute_with(py::handle value, Datatype dtype) {
  switch (dtype) {
    case Datatype::STRING:
      if (!is_text(value)) {
        throw py::type_error("a STRING attribute takes a str, not " +
                             std::string(py::str(py::type::of(value))));
      }
      return exact(value.cast<std::string>());
    case Datatype::VEC_STRING:
      return exact(strings_of(value));
    case Datatype::ARR_DBL_7: {
      py::array array = numpy_array(value, Datatype::DOUBLE);
      if (array.size() != 7) throw py::value_error("an ARR_DBL_7 attribute takes 7 numbers");
      std::array<double, 7> out{};
      std::memcpy(out.data(), array.data(), sizeof(out));
      return exact(out);
    }
    case Datatype::CHAR:
      if (is_text(value)) {
        const std::string text = value.cast<std::string>();
        if (text.size() != 1) throw py::value_error("a CHAR attribute takes one character");
        return exact(text[0]);
      }
      break;
    case Datatype::UNDEFINED:
      throw py::type_error("an attribute cannot be of type UNDEFINED");
    default:
      break;
  }
  if (openPMD::isVector(dtype)) {
    const Datatype element = openPMD::basicDatatype(dtype);
    if (element == Datatype::CHAR && is_text(value)) {
      const std::string text = value.cast<std::string>();
      return exact(std::vector<char>(text.begin(), text.end()));
    }
    py::array array = numpy_array(value, element);
    return with_element_type(element, [&]<typename T>() -> Attribute {
      if constexpr (std::is_constructible_v<Attribute::resource, std::vector<T>> &&
                    !std::is_same_v<T, bool>) {
        const T* data = static_cast<const T*>(array.data());
        return exact(std::vector<T>(data, data + array.size()));
      } else {
        throw py::type_error("no vector attribute of " + openPMD::datatypeToString(element));
      }
    });
  }
  py::array array = numpy_array(value, dtype);
  if (array.size() != 1) {
    throw py::type_error("a " + openPMD::datatypeToString(dtype) +
                         " attribute takes one value, not " + std::to_string(array.size()));
  }
  return with_element_type(dtype, [&]<typename T>() -> Attribute {
    T out;
    std::memcpy(static_cast<void*>(&out), array.data(), sizeof(T));
    return exact(out);
  });
}

template <typename T>
py::object scalar_to_python(const T& value) {
  if constexpr (std::is_same_v<T, bool>) {
    return py::bool_(value);
  } else if constexpr (std::is_same_v<T, char>) {
    // As pybind11 (and so openPMD-api) casts a char: one Latin-1 character. HDF5 has one 1-byte
    // signed type, which reads as CHAR.
    return py::reinterpret_steal<py::object>(PyUnicode_DecodeLatin1(&value, 1, nullptr));
  } else if constexpr (std::is_integral_v<T>) {
    return py::int_(value);
  } else if constexpr (std::is_floating_point_v<T>) {
    return py::float_(static_cast<double>(value));
  } else if constexpr (IsComplex<T>::value) {
    return py::reinterpret_steal<py::object>(PyComplex_FromDoubles(
        static_cast<double>(value.real()), static_cast<double>(value.imag())));
  } else {
    return py::str(value);  // std::string
  }
}

}  // namespace

Attribute attribute_of(py::handle value, std::optional<Datatype> dtype) {
  return attribute_with(value, dtype ? *dtype : natural_datatype(value));
}

py::object attribute_to_python(const Attribute& attribute) {
  return std::visit(
      [](const auto& held) -> py::object {
        using T = std::decay_t<decltype(held)>;
        if constexpr (std::is_same_v<T, std::array<double, 7>>) {
          py::list out;
          for (double value : held) out.append(py::float_(value));
          return out;
        } else if constexpr (requires { typename T::value_type; } &&
                             !std::is_same_v<T, std::string> && !IsComplex<T>::value) {
          py::list out;
          for (const auto& value : held) out.append(scalar_to_python(value));
          return out;
        } else {
          return scalar_to_python(held);
        }
      },
      attribute.getResource());
}

std::string describe(const Attributable& object) {
  const Attributable::MyPath path = object.myPath();
  return "'" + path.openPMDPath() + "' of series '" + path.filePath() + "'";
}

void bind_attributable(py::module_& module) {
  Class<Attributable>(module, "Attributable",
                      "Base of every object of a series: its attributes.")
      .def("__repr__",
           [](const Attributable& object) {
             return "<openPMD.Attributable " + describe(object) + " with " +
                    std::to_string(object.numAttributes()) + " attributes>";
           })
      .def_property_readonly("attributes", &Attributable::attributes,
                             "The names of the attributes, sorted.")
      .def_property_readonly("num_attributes", &Attributable::numAttributes)
      .def(
          "set_attribute",
          [](Attributable& object, const std::string& key, py::handle value,
             std::optional<Datatype> datatype) {
            return object.setAttribute(key, attribute_of(value, datatype));
          },
          py::arg("key"), py::arg("value"), py::arg("datatype") = py::none(),
          "Sets attribute `key` (written at the next flush): bool, int (LONG), float (DOUBLE), "
          "complex, str, numpy scalars of their own type, lists and arrays as vectors; "
          "`datatype` (a Datatype) converts the value to that type. Returns True when it "
          "replaced a value.")
      .def(
          "get_attribute",
          [](const Attributable& object, const std::string& key) {
            return attribute_to_python(object.getAttribute(key));
          },
          py::arg("key"))
      .def(
          "get_attribute_dtype",
          [](const Attributable& object, const std::string& key) {
            return object.getAttribute(key).dtype;
          },
          py::arg("key"), "The Datatype attribute `key` has.")
      .def("delete_attribute", &Attributable::deleteAttribute, py::arg("key"))
      .def("contains_attribute", &Attributable::containsAttribute, py::arg("key"))
      .def_property(
          "comment", &Attributable::comment,
          [](Attributable& object, const std::string& comment) { object.setComment(comment); })
      .def(
          "set_comment",
          [](Attributable& object, const std::string& comment) { object.setComment(comment); },
          py::arg("comment"))
      .def(
          "series_flush",
          [](Attributable& object, const std::string& config) {
            call_without_gil([&] { object.seriesFlush(config); });
          },
          py::arg("backend_config") = "{}");
}

}  // namespace openpmd_python
