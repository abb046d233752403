// openPMD-api's enumerations as its Python module names them (Access, Datatype, Geometry, ...),
// determine_datatype, and the numpy dtype <-> Datatype mapping the other files use.
#include <string>

#include "openpmd_bindings.hpp"

namespace openpmd_python {

using openPMD::Access;
using openPMD::IterationEncoding;
using openPMD::Mesh;
using openPMD::UnitDimension;

Datatype datatype_of_numpy(const py::dtype& dtype) {
  const char kind = dtype.kind();
  const py::ssize_t size = dtype.itemsize();
  switch (kind) {
    case 'b':
      if (size == 1) return Datatype::BOOL;
      break;
    case 'i':
      if (size == 1) return Datatype::SCHAR;
      if (size == 2) return Datatype::SHORT;
      if (size == 4) return Datatype::INT;
      if (size == 8) return Datatype::LONG;
      break;
    case 'u':
      if (size == 1) return Datatype::UCHAR;
      if (size == 2) return Datatype::USHORT;
      if (size == 4) return Datatype::UINT;
      if (size == 8) return Datatype::ULONG;
      break;
    case 'f':
      if (size == 4) return Datatype::FLOAT;
      if (size == 8) return Datatype::DOUBLE;
      if (size == static_cast<py::ssize_t>(sizeof(long double))) return Datatype::LONG_DOUBLE;
      break;
    case 'c':
      if (size == 8) return Datatype::CFLOAT;
      if (size == 16) return Datatype::CDOUBLE;
      if (size == static_cast<py::ssize_t>(2 * sizeof(long double))) {
        return Datatype::CLONG_DOUBLE;
      }
      break;
    default:
      break;
  }
  throw py::type_error("numpy dtype '" + std::string(py::str(py::handle(dtype))) +
                       "' has no openPMD datatype (openPMD datasets hold integers, floating "
                       "point and complex numbers and bool)");
}

py::dtype numpy_of_datatype(Datatype dtype) {
  const char* name = nullptr;
  switch (openPMD::basicDatatype(dtype)) {
    case Datatype::CHAR:
    case Datatype::SCHAR: name = "int8"; break;
    case Datatype::UCHAR: name = "uint8"; break;
    case Datatype::SHORT: name = "int16"; break;
    case Datatype::USHORT: name = "uint16"; break;
    case Datatype::INT: name = "int32"; break;
    case Datatype::UINT: name = "uint32"; break;
    case Datatype::LONG:
    case Datatype::LONGLONG: name = "int64"; break;
    case Datatype::ULONG:
    case Datatype::ULONGLONG: name = "uint64"; break;
    case Datatype::FLOAT: name = "float32"; break;
    case Datatype::DOUBLE:
    case Datatype::ARR_DBL_7: name = "float64"; break;
    case Datatype::LONG_DOUBLE: name = "longdouble"; break;
    case Datatype::CFLOAT: name = "complex64"; break;
    case Datatype::CDOUBLE: name = "complex128"; break;
    case Datatype::CLONG_DOUBLE: name = "clongdouble"; break;
    case Datatype::BOOL: name = "bool"; break;
    default:
      throw py::type_error("openPMD datatype " + openPMD::datatypeToString(dtype) +
                           " has no numpy dtype");
  }
  return py::dtype(std::string(name));
}

py::dtype to_numpy_dtype(py::handle value) {
  if (py::isinstance<py::dtype>(value)) return py::reinterpret_borrow<py::dtype>(value);
  if (py::isinstance<py::array>(value)) return py::reinterpret_borrow<py::array>(value).dtype();
  return py::dtype::from_args(py::reinterpret_borrow<py::object>(value));
}

Datatype datatype_argument(py::handle value) {
  if (py::isinstance<Datatype>(value)) return value.cast<Datatype>();
  return datatype_of_numpy(to_numpy_dtype(value));
}

void bind_enums(py::module_& module) {
  py::enum_<Access>(module, "Access", "How a series is opened.")
      .value("read_only", Access::READ_ONLY)
      .value("read_random_access", Access::READ_RANDOM_ACCESS)
      .value("read_write", Access::READ_WRITE)
      .value("create", Access::CREATE)
      .value("append", Access::APPEND)
      .value("read_linear", Access::READ_LINEAR);
  module.attr("Access_Type") = module.attr("Access");

  py::enum_<IterationEncoding>(module, "Iteration_Encoding")
      .value("file_based", IterationEncoding::fileBased)
      .value("group_based", IterationEncoding::groupBased)
      .value("variable_based", IterationEncoding::variableBased);

  py::enum_<Datatype> datatype(module, "Datatype", "openPMD's types of datasets and attributes.");
  for (int value = 0; value <= static_cast<int>(Datatype::UNDEFINED); ++value) {
    const auto dtype = static_cast<Datatype>(value);
    datatype.value(openPMD::datatypeToString(dtype).c_str(), dtype);
  }

  py::enum_<UnitDimension>(module, "Unit_Dimension", "The SI base dimensions of unit_dimension.")
      .value("L", UnitDimension::L)
      .value("M", UnitDimension::M)
      .value("T", UnitDimension::T)
      .value("I", UnitDimension::I)
      .value("theta", UnitDimension::theta)
      .value("N", UnitDimension::N)
      .value("J", UnitDimension::J);

  py::enum_<Mesh::Geometry> geometry(module, "Geometry");
  geometry.value("cartesian", Mesh::Geometry::cartesian)
      .value("thetaMode", Mesh::Geometry::thetaMode)
      .value("theta_mode", Mesh::Geometry::thetaMode)
      .value("cylindrical", Mesh::Geometry::cylindrical)
      .value("spherical", Mesh::Geometry::spherical)
      .value("other", Mesh::Geometry::other);

  py::enum_<Mesh::DataOrder>(module, "Data_Order")
      .value("C", Mesh::DataOrder::C)
      .value("F", Mesh::DataOrder::F);

  module.def(
      "determine_datatype", [](py::handle value) { return datatype_argument(value); },
      py::arg("dtype"),
      "The openPMD Datatype of a numpy dtype (or array, or anything np.dtype() takes).");
  module.def(
      "is_same", [](py::handle a, py::handle b) {
        return openPMD::isSame(datatype_argument(a), datatype_argument(b));
      },
      py::arg("a"), py::arg("b"), "True when both name the same type (LONG and LONGLONG, ...).");
  module.def("basic_datatype", &openPMD::basicDatatype, py::arg("dtype"));
  module.def("to_vector_type", &openPMD::toVectorType, py::arg("dtype"));
  module.def(
      "to_bytes", [](py::handle dtype) { return openPMD::toBytes(datatype_argument(dtype)); },
      py::arg("dtype"));
}

}  // namespace openpmd_python
