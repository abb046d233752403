// openPMD-api's Dataset: Dataset(dtype, extent, options="{}") with dtype a numpy dtype or a
// Datatype, and Dataset(extent) to resize a component whose type is set.
#include <string>

#include "openpmd_bindings.hpp"

namespace openpmd_python {

using openPMD::Dataset;
using openPMD::Extent;

namespace {

/// Options as text: a str as it is, anything else (a dict) through json.dumps.
std::string options_text(py::handle options) {
  if (py::isinstance<py::str>(options)) return options.cast<std::string>();
  return py::module_::import("json").attr("dumps")(options).cast<std::string>();
}

}  // namespace

void bind_dataset(py::module_& module) {
  Class<Dataset>(module, "Dataset", "The type, extent and options of a record component's data.")
      .def(py::init([](py::handle dtype, Extent extent, py::handle options) {
             return std::make_shared<Dataset>(datatype_argument(dtype), std::move(extent),
                                              options_text(options));
           }),
           py::arg("dtype"), py::arg("extent"), py::arg("options") = "{}")
      .def(py::init([](Extent extent) { return std::make_shared<Dataset>(std::move(extent)); }),
           py::arg("extent"))
      .def("__repr__",
           [](const Dataset& dataset) {
             std::string extent;
             for (std::uint64_t size : dataset.extent) {
               extent += (extent.empty() ? "" : ", ") + std::to_string(size);
             }
             return "<openPMD.Dataset of type '" + openPMD::datatypeToString(dataset.dtype) +
                    "' and with extent [" + extent + "]>";
           })
      .def_readwrite("extent", &Dataset::extent)
      .def_property_readonly("dtype",
                             [](const Dataset& dataset) -> py::object {
                               if (dataset.dtype == Datatype::UNDEFINED) return py::none();
                               return numpy_of_datatype(dataset.dtype);
                             })
      .def_property_readonly("datatype", [](const Dataset& dataset) { return dataset.dtype; })
      .def_property_readonly("rank", [](const Dataset& dataset) { return int(dataset.rank); })
      .def_readwrite("options", &Dataset::options)
      .def(
          "extend", [](Dataset& dataset, Extent extent) -> Dataset& {
            return dataset.extend(std::move(extent));
          },
          py::arg("extent"), py::return_value_policy::reference_internal);
}

}  // namespace openpmd_python
