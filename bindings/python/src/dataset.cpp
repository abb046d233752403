// slipstream.Dataset: named tensors plus typed metadata fields, put and got as a unit (the C++
// slipstream::DataSet, SmartRedis's Python Dataset API).
#include "slipstream/dataset.hpp"

#include <pybind11/stl.h>

#include <string>

#include "bindings.hpp"
#include "common/shape_text.hpp"
#include "slipstream/error.hpp"

namespace slipstream::python {

namespace {

template <typename T>
py::array scalars_array(const DataSet& dataset, std::string_view field) {
  std::vector<T> values = dataset.get_meta_scalars<T>(field);
  return py::array_t<T>(static_cast<py::ssize_t>(values.size()), values.data());
}

// The field type a Python int or float is stored as: the field's own type if it already exists
// with a compatible one (so that plain Python numbers can be appended to an int32 or float field),
// else int64 / float64.
MetaDataType type_for_python_number(const DataSet& dataset, std::string_view field, bool integer) {
  if (dataset.has_field(field)) {
    MetaDataType existing = dataset.get_metadata_field_type(field);
    const bool existing_integer =
        existing == MetaDataType::kInt32 || existing == MetaDataType::kInt64 ||
        existing == MetaDataType::kUInt32 || existing == MetaDataType::kUInt64;
    const bool existing_float =
        existing == MetaDataType::kDouble || existing == MetaDataType::kFloat;
    if ((integer && existing_integer) || (!integer && existing_float)) return existing;
  }
  return integer ? MetaDataType::kInt64 : MetaDataType::kDouble;
}

MetaDataType type_for_numpy_scalar(const py::dtype& dtype) {
  const char kind = dtype.kind();
  const auto size = dtype.itemsize();
  if (kind == 'f' && size == 8) return MetaDataType::kDouble;
  if (kind == 'f' && size == 4) return MetaDataType::kFloat;
  if (kind == 'i' && size == 4) return MetaDataType::kInt32;
  if (kind == 'i' && size == 8) return MetaDataType::kInt64;
  if (kind == 'u' && size == 4) return MetaDataType::kUInt32;
  if (kind == 'u' && size == 8) return MetaDataType::kUInt64;
  throw py::type_error(
      "a metadata scalar must be float64, float32, int32, int64, uint32 or "
      "uint64, not " +
      dtype.attr("name").cast<std::string>());
}

void add_meta_scalar(DataSet& dataset, std::string_view field, const py::handle& value) {
  MetaDataType type;
  if (py::isinstance<py::bool_>(value)) {
    throw py::type_error("a metadata scalar must be a number; store a bool as an int");
  } else if (py::isinstance<py::int_>(value)) {
    type = type_for_python_number(dataset, field, true);
  } else if (py::isinstance<py::float_>(value)) {
    type = type_for_python_number(dataset, field, false);
  } else if (py::hasattr(value, "dtype") && py::hasattr(value, "item") &&
             py::getattr(value, "ndim", py::int_(1)).cast<int>() == 0) {
    type = type_for_numpy_scalar(py::dtype::from_args(value.attr("dtype")));
  } else {
    throw py::type_error("a metadata scalar must be a Python int or float or a numpy scalar, not " +
                         py::str(py::type::handle_of(value)).cast<std::string>());
  }
  // Python ints are range-checked by the casts below (OverflowError / TypeError).
  switch (type) {
    case MetaDataType::kDouble:
      dataset.add_meta_scalar(field, value.cast<double>());
      break;
    case MetaDataType::kFloat:
      dataset.add_meta_scalar(field, value.cast<float>());
      break;
    case MetaDataType::kInt32:
      dataset.add_meta_scalar(field, value.cast<std::int32_t>());
      break;
    case MetaDataType::kInt64:
      dataset.add_meta_scalar(field, value.cast<std::int64_t>());
      break;
    case MetaDataType::kUInt32:
      dataset.add_meta_scalar(field, value.cast<std::uint32_t>());
      break;
    case MetaDataType::kUInt64:
      dataset.add_meta_scalar(field, value.cast<std::uint64_t>());
      break;
    case MetaDataType::kString:
      break;  // not produced above
  }
}

py::array get_meta_scalars(const DataSet& dataset, std::string_view field) {
  switch (dataset.get_metadata_field_type(field)) {
    case MetaDataType::kDouble:
      return scalars_array<double>(dataset, field);
    case MetaDataType::kFloat:
      return scalars_array<float>(dataset, field);
    case MetaDataType::kInt32:
      return scalars_array<std::int32_t>(dataset, field);
    case MetaDataType::kInt64:
      return scalars_array<std::int64_t>(dataset, field);
    case MetaDataType::kUInt32:
      return scalars_array<std::uint32_t>(dataset, field);
    case MetaDataType::kUInt64:
      return scalars_array<std::uint64_t>(dataset, field);
    case MetaDataType::kString:
      break;
  }
  throw InvalidArgumentError("metadata field '" + std::string(field) +
                             "' holds strings; use get_meta_strings");
}

}  // namespace

void bind_dataset(py::module_& module) {
  py::enum_<MetaDataType>(module, "MetaDataType", "Type of a dataset metadata field.")
      .value("FLOAT64", MetaDataType::kDouble)
      .value("FLOAT32", MetaDataType::kFloat)
      .value("INT32", MetaDataType::kInt32)
      .value("INT64", MetaDataType::kInt64)
      .value("UINT32", MetaDataType::kUInt32)
      .value("UINT64", MetaDataType::kUInt64)
      .value("STRING", MetaDataType::kString);

  py::class_<DataSet>(module, "Dataset", R"doc(
A named group of tensors and metadata fields that is put and got as a unit, stored exactly as
SmartRedis stores it (so SmartRedis and the C, C++ and Fortran clients read it back).

add_tensor copies the array in, so the caller may reuse it at once. get_tensor returns a read-only
numpy view of the dataset's own bytes (no copy) that keeps the Dataset alive; call .copy() for a
writable array. Not synchronised: do not modify a Dataset while another thread uses it.
)doc")
      .def(py::init<std::string>(), py::arg("name"),
           "An empty dataset. Raises InvalidArgumentError if the name is empty.")
      .def_property_readonly("name", &DataSet::name)
      .def("get_name", &DataSet::name)
      .def(
          "add_tensor",
          [](DataSet& self, std::string_view name, const py::handle& data) {
            ArrayInput input = array_input(data);
            self.add_tensor(name, input.dtype, input.data, input.bytes, input.shape, input.order);
          },
          py::arg("name"), py::arg("data"),
          "Adds a copy of an array (numpy, torch, or anything numpy.asarray accepts); C- and "
          "Fortran-ordered arrays keep their logical shape. Raises InvalidArgumentError if the "
          "name is empty or already used, TypeError for an unsupported dtype.")
      .def(
          "get_tensor",
          [](const py::object& self, std::string_view name) {
            return array_view(self.cast<const DataSet&>().get_tensor(name), self);
          },
          py::arg("name"),
          "A read-only C-ordered numpy view of the tensor (no copy). Raises KeyNotFoundError.")
      .def(
          "unpack_tensor",
          [](const DataSet& self, std::string_view name, const py::handle& out) {
            ArrayInput output = output_array(out);
            const Tensor& tensor = self.get_tensor(name);
            if (!std::equal(output.shape.begin(), output.shape.end(), tensor.shape().begin(),
                            tensor.shape().end())) {
              throw InvalidArgumentError("unpack_tensor: tensor '" + std::string(name) +
                                         "' has shape " + shape_text(tensor.shape(), "{}") +
                                         ", not the expected " + shape_text(output.shape, "{}") +
                                         " (the output array's)");
            }
            tensor.copy_to(output.dtype, const_cast<void*>(output.data), output.bytes,
                           output.order);
          },
          py::arg("name"), py::arg("out"),
          "Copies a tensor into a numpy array of the same shape and dtype (C or Fortran order).")
      .def("has_tensor", &DataSet::has_tensor, py::arg("name"))
      .def("get_tensor_names", &DataSet::get_tensor_names, "Tensor names in the order added.")
      .def(
          "get_tensor_type",
          [](const DataSet& self, std::string_view name) { return self.get_tensor(name).dtype(); },
          py::arg("name"))
      .def(
          "get_tensor_dims",
          [](const DataSet& self, std::string_view name) {
            auto shape = self.get_tensor(name).shape();
            return std::vector<std::int64_t>(shape.begin(), shape.end());
          },
          py::arg("name"), "The tensor's shape as a list.")
      .def("add_meta_scalar", &add_meta_scalar, py::arg("name"), py::arg("data"),
           "Appends a number to a scalar field, creating it. A numpy scalar keeps its type "
           "(float64, float32, int32, int64, uint32, uint64); a Python int or float takes the "
           "field's type if it exists, else int64 or float64. Raises InvalidArgumentError if the "
           "field holds another type.")
      .def("add_meta_string", &DataSet::add_meta_string, py::arg("name"), py::arg("data"),
           "Appends a string to a string field, creating it.")
      .def("get_meta_scalars", &get_meta_scalars, py::arg("name"),
           "All values of a scalar field as a 1-D numpy array of the field's type. Raises "
           "KeyNotFoundError if there is no such field.")
      .def("get_meta_strings", &DataSet::get_meta_strings, py::arg("name"),
           "All values of a string field as a list of str.")
      .def("get_metadata_field_names", &DataSet::get_metadata_field_names)
      .def("get_metadata_field_type", &DataSet::get_metadata_field_type, py::arg("name"))
      .def("has_field", &DataSet::has_field, py::arg("name"))
      .def("clear_field", &DataSet::clear_field, py::arg("name"))
      .def("__contains__", &DataSet::has_tensor)
      .def("__repr__", [](const DataSet& self) {
        std::string names;
        for (const auto& name : self.get_tensor_names()) {
          names += names.empty() ? "" : ", ";
          names += name;
        }
        return "<slipstream.Dataset '" + self.name() + "' tensors=[" + names +
               "] fields=" + std::to_string(self.get_metadata_field_names().size()) + ">";
      });
  module.attr("DataSet") = module.attr("Dataset");
}

}  // namespace slipstream::python
