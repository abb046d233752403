// slipstream.ModelInfo: the run statistics of a stored model or script (Client.model_info).
#include <string>

#include "bindings.hpp"
#include "slipstream/client.hpp"

namespace slipstream::python {

void bind_model_info(py::module_& module) {
  py::class_<ModelInfo>(module, "ModelInfo",
                        "Run statistics of a stored model or script (AI.INFO); times in "
                        "microseconds, summed over every run since it was stored or reset.")
      .def_readonly("key", &ModelInfo::key)
      .def_readonly("type", &ModelInfo::type)
      .def_readonly("backend", &ModelInfo::backend)
      .def_readonly("device", &ModelInfo::device)
      .def_readonly("tag", &ModelInfo::tag)
      .def_readonly("calls", &ModelInfo::calls)
      .def_readonly("samples", &ModelInfo::samples)
      .def_readonly("errors", &ModelInfo::errors)
      .def_readonly("duration_us", &ModelInfo::duration_us)
      .def_readonly("version", &ModelInfo::version)
      .def_readonly("runs", &ModelInfo::runs)
      .def_readonly("batches", &ModelInfo::batches)
      .def_readonly("mean_batch_size", &ModelInfo::mean_batch_size)
      .def_readonly("queue_wait_us", &ModelInfo::queue_wait_us)
      .def_readonly("run_time_us", &ModelInfo::run_time_us)
      .def("__repr__", [](const ModelInfo& info) {
        return "<slipstream.ModelInfo key='" + info.key + "' type=" + info.type +
               " device=" + info.device + " calls=" + std::to_string(info.calls) +
               " errors=" + std::to_string(info.errors) +
               " version=" + std::to_string(info.version) + ">";
      });
}

}  // namespace slipstream::python
