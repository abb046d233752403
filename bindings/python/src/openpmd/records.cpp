// openPMD-api's records and their containers: Mesh, Record, Patch_Record, Particle_Patches,
// ParticleSpecies, and the containers of meshes and species an iteration has.
#include <map>
#include <string>

#include "openpmd_bindings.hpp"

namespace openpmd_python {

using openPMD::Attributable;
using openPMD::Container;
using openPMD::Mesh;
using openPMD::MeshRecordComponent;
using openPMD::ParticlePatches;
using openPMD::ParticleSpecies;
using openPMD::PatchRecord;
using openPMD::PatchRecordComponent;
using openPMD::Record;
using openPMD::RecordComponent;
using openPMD::UnitDimension;

namespace {

// {Unit_Dimension: power} as the C++ map.
std::map<UnitDimension, double> powers_of(const py::dict& powers) {
  std::map<UnitDimension, double> out;
  for (const auto& [dimension, power] : powers) {
    out[dimension.cast<UnitDimension>()] = power.cast<double>();
  }
  return out;
}

// What every record has: unit_dimension (get: the 7 powers; set: {Unit_Dimension: power}) and
// scalar.
template <typename R, typename Base>
void add_record_api(Class<R, Base>& cls) {
  cls.def_property(
         "unit_dimension", [](const R& record) { return record.unitDimension(); },
         [](R& record, const py::dict& powers) { record.setUnitDimension(powers_of(powers)); },
         "The powers of the SI base units L, M, T, I, theta, N, J (set: a dict "
         "{Unit_Dimension: power}; dimensions not named keep their power).")
      .def(
          "set_unit_dimension",
          [](py::object self, const py::dict& powers) {
            self.cast<R&>().setUnitDimension(powers_of(powers));
            return self;
          },
          py::arg("unit_dimension"))
      .def_property_readonly("scalar", [](const R& record) { return record.scalar(); },
                             "True when the record has only the SCALAR component.");
}

template <typename R, typename Base>
void add_time_offset(Class<R, Base>& cls) {
  cls.def_property(
      "time_offset", [](const R& record) { return record.template timeOffset<double>(); },
      [](R& record, double offset) { record.setTimeOffset(offset); });
}

char data_order_char(py::handle order) {
  if (py::isinstance<Mesh::DataOrder>(order)) {
    return static_cast<char>(order.cast<Mesh::DataOrder>());
  }
  const std::string text = order.cast<std::string>();
  if (text != "C" && text != "F") throw py::value_error("data_order is 'C' or 'F'");
  return text[0];
}

}  // namespace

void bind_records(py::module_& module) {
  // Meshes: containers of Mesh_Record_Component.
  bind_container<Container<MeshRecordComponent>, Attributable>(module,
                                                               "Mesh_Record_Component_Container");
  Class<Mesh, Container<MeshRecordComponent>> mesh(module, "Mesh");
  add_record_api(mesh);
  add_time_offset(mesh);
  mesh.def("__repr__",
           [](const Mesh& record) {
             return "<openPMD.Mesh " + describe(record) + " with " +
                    std::to_string(record.size()) + " record components>";
           })
      .def_property(
          "geometry", &Mesh::geometry,
          [](Mesh& record, py::handle geometry) {
            if (py::isinstance<py::str>(geometry)) {
              record.setGeometry(geometry.cast<std::string>());
            } else {
              record.setGeometry(geometry.cast<Mesh::Geometry>());
            }
          },
          "A Geometry (set: a Geometry or a string).")
      .def_property(
          "geometry_string", &Mesh::geometryString,
          [](Mesh& record, std::string geometry) { record.setGeometry(std::move(geometry)); })
      .def_property("geometry_parameters", &Mesh::geometryParameters,
                    [](Mesh& record, const std::string& parameters) {
                      record.setGeometryParameters(parameters);
                    })
      .def_property(
          "data_order",
          [](const Mesh& record) { return std::string(1, static_cast<char>(record.dataOrder())); },
          [](Mesh& record, py::handle order) {
            record.setDataOrder(static_cast<Mesh::DataOrder>(data_order_char(order)));
          },
          "'C' or 'F' (set: also a Data_Order).")
      .def_property(
          "axis_labels", &Mesh::axisLabels,
          [](Mesh& record, std::vector<std::string> labels) {
            record.setAxisLabels(std::move(labels));
          })
      .def_property(
          "grid_spacing", [](const Mesh& record) { return record.gridSpacing<double>(); },
          [](Mesh& record, std::vector<double> spacing) {
            record.setGridSpacing(std::move(spacing));
          })
      .def_property(
          "grid_global_offset", &Mesh::gridGlobalOffset,
          [](Mesh& record, std::vector<double> offset) {
            record.setGridGlobalOffset(std::move(offset));
          })
      .def_property("grid_unit_SI", &Mesh::gridUnitSI,
                    [](Mesh& record, double unit) { record.setGridUnitSI(unit); });

  // Particle records and species.
  bind_container<Container<RecordComponent>, Attributable>(module, "Record_Component_Container");
  Class<Record, Container<RecordComponent>> record(module, "Record");
  add_record_api(record);
  add_time_offset(record);
  record.def("__repr__", [](const Record& r) {
    return "<openPMD.Record " + describe(r) + " with " + std::to_string(r.size()) +
           " record components>";
  });

  bind_container<Container<PatchRecordComponent>, Attributable>(
      module, "Patch_Record_Component_Container");
  Class<PatchRecord, Container<PatchRecordComponent>> patch_record(module, "Patch_Record");
  add_record_api(patch_record);
  patch_record.def("__repr__", [](const PatchRecord& r) {
    return "<openPMD.Patch_Record " + describe(r) + " with " + std::to_string(r.size()) +
           " record components>";
  });

  bind_container<Container<PatchRecord>, Attributable>(module, "Patch_Record_Container");
  Class<ParticlePatches, Container<PatchRecord>>(module, "Particle_Patches")
      .def_property_readonly("num_patches", &ParticlePatches::numPatches)
      .def("__repr__", [](const ParticlePatches& patches) {
        return "<openPMD.Particle_Patches " + describe(patches) + " with " +
               std::to_string(patches.size()) + " records>";
      });

  bind_container<Container<Record>, Attributable>(module, "Record_Container");
  Class<ParticleSpecies, Container<Record>> species(module, "ParticleSpecies");
  species
      .def_property_readonly(
          "particle_patches",
          [](py::object self) { return tied(self.cast<ParticleSpecies&>().particlePatches, self); })
      .def("__repr__", [](const ParticleSpecies& s) {
        return "<openPMD.ParticleSpecies " + describe(s) + " with " + std::to_string(s.size()) +
               " records>";
      });
  module.attr("Particle_Species") = species;

  // An iteration's meshes and particle species.
  bind_container<Container<Mesh>, Attributable>(module, "Mesh_Container");
  bind_container<Container<ParticleSpecies>, Attributable>(module, "Particle_Container");
}

}  // namespace openpmd_python
