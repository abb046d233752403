// openpmd_api.openpmd_api_cxx: openPMD-api's Python API (the module openPMD-api builds under the
// same name) over Slipstream's openPMD layer. Import the package `openpmd_api` instead.
#include "openpmd_bindings.hpp"

PYBIND11_MODULE(openpmd_api_cxx, module) {
  namespace op = openpmd_python;
  module.doc() =
      "openPMD-api compatible Python API over Slipstream's openPMD layer (compiled part; import "
      "`openpmd_api` instead).";
  pybind11::module_::import("numpy");
  op::bind_errors(module);  // first: the other bindings raise these
  op::bind_enums(module);
  op::bind_dataset(module);
  op::bind_attributable(module);
  op::bind_record_component(module);
  op::bind_records(module);
  op::bind_iteration(module);
  op::bind_series(module);
  module.attr("__version__") = openPMD::getVersion();
  module.attr("file_extensions") = pybind11::cast(openPMD::getFileExtensions());
  module.attr("variants") = pybind11::cast(openPMD::getVariants());
  module.attr("__standard__") = openPMD::getStandard();
  module.def("get_version", &openPMD::getVersion);
  module.def("get_standard", &openPMD::getStandard);
  module.def("get_standard_minimum", &openPMD::getStandardMinimum);
}
