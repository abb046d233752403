// openPMD-api's Iteration (meshes, particles, time, dt, close) and IndexedIteration, as
// read_iterations() and write_iterations().current_iteration() yield them.
#include <string>

#include "openpmd_bindings.hpp"

namespace openpmd_python {

using openPMD::IndexedIteration;
using openPMD::Iteration;

void bind_iteration(py::module_& module) {
  Class<Iteration, openPMD::Attributable>(module, "Iteration", "One time step of a series.")
      .def("__repr__",
           [](const Iteration& iteration) {
             return "<openPMD.Iteration " + describe(iteration) + " with " +
                    std::to_string(iteration.meshes.size()) + " meshes and " +
                    std::to_string(iteration.particles.size()) + " particle species>";
           })
      .def_property_readonly(
          "meshes", [](py::object self) { return tied(self.cast<Iteration&>().meshes, self); })
      .def_property_readonly(
          "particles",
          [](py::object self) { return tied(self.cast<Iteration&>().particles, self); })
      .def_property(
          "time", [](const Iteration& iteration) { return iteration.time<double>(); },
          [](Iteration& iteration, double time) { iteration.setTime(time); })
      .def_property(
          "dt", [](const Iteration& iteration) { return iteration.dt<double>(); },
          [](Iteration& iteration, double dt) { iteration.setDt(dt); })
      .def_property("time_unit_SI", &Iteration::timeUnitSI,
                    [](Iteration& iteration, double unit) { iteration.setTimeUnitSI(unit); })
      .def(
          "set_time",
          [](py::object self, double time) {
            self.cast<Iteration&>().setTime(time);
            return self;
          },
          py::arg("time"))
      .def(
          "set_dt",
          [](py::object self, double dt) {
            self.cast<Iteration&>().setDt(dt);
            return self;
          },
          py::arg("dt"))
      .def(
          "set_time_unit_SI",
          [](py::object self, double unit) {
            self.cast<Iteration&>().setTimeUnitSI(unit);
            return self;
          },
          py::arg("unit"))
      .def(
          "close",
          [](py::object self, bool flush) {
            Iteration& iteration = self.cast<Iteration&>();
            call_without_gil([&] { iteration.close(flush); });
            return self;
          },
          py::arg("flush") = true,
          "Ends the iteration: its stores and loads are done (on a stream: the writer's step "
          "ends, the reader's is released). It cannot change afterwards.")
      .def(
          "open",
          [](py::object self) {
            Iteration& iteration = self.cast<Iteration&>();
            call_without_gil([&] { iteration.open(); });
            return self;
          })
      .def_property_readonly("closed", &Iteration::closed);

  Class<IndexedIteration, Iteration>(module, "IndexedIteration",
                                     "An iteration with its index (iteration_index).")
      .def_readonly("iteration_index", &IndexedIteration::iterationIndex)
      .def("__repr__", [](const IndexedIteration& iteration) {
        return "<openPMD.IndexedIteration " + std::to_string(iteration.iterationIndex) + " " +
               describe(iteration) + ">";
      });
}

}  // namespace openpmd_python
