// An openPMD-api serial file reader as openPMD-api's documentation writes one (its example
// 2_read_serial): random access to iterations, loadChunk then flush(), attributes of their
// exact types; built unchanged against Slipstream's openPMD layer. It checks every element and
// attribute serial_write wrote. Usage: serial_read FILE
#include <openPMD/openPMD.hpp>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

using namespace openPMD;

namespace {
int failures = 0;
void check(bool ok, const std::string& what) {
  if (!ok) {
    ++failures;
    std::cerr << "MISMATCH: " << what << "\n";
  }
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: serial_read FILE\n";
    return 2;
  }
  Series series = Series(argv[1], Access::READ_ONLY);
  std::cout << "Read a Series with openPMD standard version " << series.openPMD() << "\n"
            << "The Series contains " << series.iterations.size() << " iterations:";
  for (auto const& i : series.iterations) std::cout << "\n\t" << i.first;
  std::cout << "\n";
  check(series.iterations.size() == 2, "two iterations");
  check(series.author() == "Axel Huebl <a.huebl@hzdr.de>", "author");
  check(series.machine() == "testing", "machine");
  check(series.getAttribute("dinner").get<std::string>() == "Pizza and Coke", "dinner");
  check(series.getAttribute("lucky_numbers").dtype == Datatype::VEC_INT, "lucky_numbers type");
  check(series.getAttribute("lucky_numbers").get<std::vector<int>>() == std::vector<int>{5, 12, 7},
        "lucky_numbers");

  Iteration i = series.iterations[1];
  check(i.getAttribute("time").dtype == Datatype::FLOAT, "time is a float");
  check(i.time<float>() == 42.0f && i.dt<float>() == 0.5f && i.timeUnitSI() == 1e-15, "time");
  check(i.comment() == "a 3x3 field, a constant and particles", "comment");
  check(i.meshes.size() == 2 && i.particles.size() == 1, "records");

  Mesh rho_mesh = i.meshes["rho"];
  check(rho_mesh.scalar(), "rho is scalar");
  check(rho_mesh.getAttribute("gridSpacing").dtype == Datatype::VEC_FLOAT, "gridSpacing type");
  check(rho_mesh.gridSpacing<float>() == std::vector<float>{1.0f, 2.0f}, "gridSpacing");
  check(rho_mesh.axisLabels() == std::vector<std::string>{"y", "x"}, "axisLabels");
  check(rho_mesh.unitDimension()[0] == -3 && rho_mesh.unitDimension()[3] == 1, "unitDimension");
  MeshRecordComponent rho = rho_mesh[MeshRecordComponent::SCALAR];
  Extent extent = rho.getExtent();
  check(extent == Extent{3, 3} && rho.getDatatype() == Datatype::DOUBLE, "rho's dataset");
  check(rho.unitSI() == 1e3, "rho's unitSI");
  auto all = rho.loadChunk<double>();
  auto middle = rho.loadChunk<double>({1, 1}, {2, 2});
  MeshRecordComponent temperature = i.meshes["T"][MeshRecordComponent::SCALAR];
  check(temperature.constant() && temperature.getDatatype() == Datatype::FLOAT, "T is constant");
  auto t = temperature.loadChunk<float>();
  ParticleSpecies ions = i.particles["ions"];
  RecordComponent ids = ions["id"][RecordComponent::SCALAR];
  check(ids.getDatatype() == Datatype::ULONG, "ids are unsigned");
  auto id_values = ids.loadChunk<unsigned long>();
  auto weights = ions["weighting"][RecordComponent::SCALAR].loadChunk<float>();
  auto charges = ions["charge"][RecordComponent::SCALAR].loadChunk<double>();
  std::cout << "Queued the loading of a single chunk from disk, ready to execute\n";
  series.flush();
  std::cout << "Chunks have been read from disk\n";
  for (std::size_t k = 0; k < 9; ++k) check(all.get()[k] == static_cast<double>(k), "rho");
  const double expected_middle[] = {4, 5, 7, 8};
  for (std::size_t k = 0; k < 4; ++k) check(middle.get()[k] == expected_middle[k], "rho's box");
  for (std::size_t k = 0; k < 9; ++k) check(t.get()[k] == 300.5f, "T");
  for (std::size_t k = 0; k < 4; ++k) {
    check(id_values.get()[k] == 11 + k, "id");
    check(weights.get()[k] == 0.5f + static_cast<float>(k), "weighting");
    check(charges.get()[k] == 1.602e-19, "charge");
  }
  auto doubled = series.iterations[2].meshes["rho"][MeshRecordComponent::SCALAR].loadChunk<double>();
  series.iterations[2].close();
  for (std::size_t k = 0; k < 9; ++k) check(doubled.get()[k] == 2.0 * k, "iteration 2's rho");
  if (failures) return 1;
  std::cout << "serial_read: every element and attribute checked\n";
  return 0;
}
