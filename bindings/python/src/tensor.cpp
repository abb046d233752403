// Tensors in Python are numpy arrays: this file binds DType and converts between numpy arrays and
// slipstream::Tensor (zero-copy on the way out, borrowed buffers on the way in).
#include <memory>
#include <string>

#include "bindings.hpp"

namespace slipstream::python {

namespace {

constexpr const char* kSupported =
    "float32, float64, int8, int16, int32, int64, uint8, uint16, uint32, uint64 or bool";

py::module_ convert_module() { return py::module_::import("slipstream._convert"); }

// Native byte order, then C- or Fortran-contiguous (a copy only when neither holds).
ArrayInput describe(py::array array) {
  py::dtype dtype = array.dtype();
  if (!dtype.attr("isnative").cast<bool>()) {
    array = array.attr("astype")(dtype.attr("newbyteorder")("="));
  }
  ArrayInput input;
  input.dtype = dtype_of_numpy(array.dtype());
  const bool c_order = (array.flags() & py::array::c_style) != 0;
  const bool f_order = (array.flags() & py::array::f_style) != 0;
  if (c_order) {
    input.order = MemoryOrder::kC;
  } else if (f_order) {
    // Same logical shape; the client transposes the column-major buffer into row-major.
    input.order = MemoryOrder::kFortran;
  } else {
    array = py::module_::import("numpy").attr("ascontiguousarray")(array);
    input.order = MemoryOrder::kC;
  }
  input.shape.assign(array.shape(), array.shape() + array.ndim());
  input.data = array.data();
  input.bytes = static_cast<std::size_t>(array.nbytes());
  input.array = std::move(array);
  return input;
}

}  // namespace

DType dtype_of_numpy(const py::dtype& dtype) {
  const char kind = dtype.kind();
  const auto size = dtype.itemsize();
  if (kind == 'f' && size == 4) return DType::kFloat32;
  if (kind == 'f' && size == 8) return DType::kFloat64;
  if (kind == 'i' && size == 1) return DType::kInt8;
  if (kind == 'i' && size == 2) return DType::kInt16;
  if (kind == 'i' && size == 4) return DType::kInt32;
  if (kind == 'i' && size == 8) return DType::kInt64;
  if (kind == 'u' && size == 1) return DType::kUInt8;
  if (kind == 'u' && size == 2) return DType::kUInt16;
  if (kind == 'u' && size == 4) return DType::kUInt32;
  if (kind == 'u' && size == 8) return DType::kUInt64;
  if (kind == 'b' && size == 1) return DType::kBool;
  throw py::type_error("slipstream cannot store elements of dtype " +
                       dtype.attr("name").cast<std::string>() + "; expected " + kSupported);
}

py::dtype numpy_dtype(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return py::dtype::of<float>();
    case DType::kFloat64:
      return py::dtype::of<double>();
    case DType::kInt8:
      return py::dtype::of<std::int8_t>();
    case DType::kInt16:
      return py::dtype::of<std::int16_t>();
    case DType::kInt32:
      return py::dtype::of<std::int32_t>();
    case DType::kInt64:
      return py::dtype::of<std::int64_t>();
    case DType::kUInt8:
      return py::dtype::of<std::uint8_t>();
    case DType::kUInt16:
      return py::dtype::of<std::uint16_t>();
    case DType::kBool:
      return py::dtype::of<bool>();
    case DType::kUInt32:
      return py::dtype::of<std::uint32_t>();
    case DType::kUInt64:
      return py::dtype::of<std::uint64_t>();
  }
  throw py::value_error("unknown slipstream DType");
}

ArrayInput array_input(py::handle value) {
  if (py::isinstance<py::array>(value)) return describe(py::reinterpret_borrow<py::array>(value));
  py::object converted = convert_module().attr("to_numpy")(value);
  return describe(py::reinterpret_borrow<py::array>(converted));
}

ArrayInput output_array(py::handle value) {
  if (!py::isinstance<py::array>(value)) {
    throw py::type_error("unpack_tensor needs a numpy array to fill, got " +
                         py::str(py::type::handle_of(value)).cast<std::string>());
  }
  auto array = py::reinterpret_borrow<py::array>(value);
  if (!array.writeable()) throw py::value_error("unpack_tensor: the output array is read-only");
  if (!array.dtype().attr("isnative").cast<bool>()) {
    throw py::value_error("unpack_tensor: the output array must be in native byte order");
  }
  ArrayInput output;
  output.dtype = dtype_of_numpy(array.dtype());
  if (array.flags() & py::array::c_style) {
    output.order = MemoryOrder::kC;
  } else if (array.flags() & py::array::f_style) {
    output.order = MemoryOrder::kFortran;
  } else {
    throw py::value_error("unpack_tensor: the output array must be C- or Fortran-contiguous");
  }
  output.shape.assign(array.shape(), array.shape() + array.ndim());
  output.data = array.mutable_data();
  output.bytes = static_cast<std::size_t>(array.nbytes());
  output.array = std::move(array);
  return output;
}

py::array array_from_tensor(Tensor tensor) {
  auto owned = std::make_unique<Tensor>(std::move(tensor));
  std::vector<py::ssize_t> shape(owned->shape().begin(), owned->shape().end());
  void* data = owned->mutable_bytes().data();
  py::dtype dtype = numpy_dtype(owned->dtype());
  py::capsule base(owned.get(), [](void* tensor) { delete static_cast<Tensor*>(tensor); });
  owned.release();  // the capsule owns it now
  return py::array(dtype, shape, data, base);
}

py::array array_view(const Tensor& tensor, py::handle owner) {
  std::vector<py::ssize_t> shape(tensor.shape().begin(), tensor.shape().end());
  py::array view(numpy_dtype(tensor.dtype()), shape, tensor.bytes().data(), owner);
  view.attr("setflags")(py::arg("write") = false);
  return view;
}

py::str lossy_str(std::string_view text) {
  PyObject* decoded =
      PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "replace");
  if (decoded == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(decoded);
}

void bind_tensor(py::module_& module) {
  py::enum_<DType>(module, "DType", "Element type of a stored tensor (RedisAI's type names).")
      .value("FLOAT32", DType::kFloat32)
      .value("FLOAT64", DType::kFloat64)
      .value("INT8", DType::kInt8)
      .value("INT16", DType::kInt16)
      .value("INT32", DType::kInt32)
      .value("INT64", DType::kInt64)
      .value("UINT8", DType::kUInt8)
      .value("UINT16", DType::kUInt16)
      .value("BOOL", DType::kBool)
      .value("UINT32", DType::kUInt32)
      .value("UINT64", DType::kUInt64)
      .def_property_readonly("numpy_dtype", &numpy_dtype, "The matching numpy dtype.")
      .def_property_readonly(
          "redisai_name", [](DType dtype) { return std::string(dtype_name(dtype)); },
          "The name on the wire (\"FLOAT\", \"INT32\", ...).")
      .def_property_readonly("itemsize", &dtype_size, "Bytes per element.");

  module.def(
      "dtype_of",
      [](const py::object& dtype) { return dtype_of_numpy(py::dtype::from_args(dtype)); },
      py::arg("numpy_dtype"),
      "The DType stored for a numpy dtype (anything numpy.dtype() accepts). Raises TypeError for "
      "a dtype Slipstream cannot store.");
}

}  // namespace slipstream::python
