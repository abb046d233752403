// An openPMD-api serial file writer as openPMD-api's documentation writes one (its examples
// 3_write_serial and 7_extended_write_serial): random access to iterations, storeChunk of a
// shared_ptr, flush() and the series closed by its destructor; built unchanged against
// Slipstream's openPMD layer. serial_read checks what it wrote.
// Usage: serial_write FILE   (e.g. data.h5, data_%T.h5)
#include <openPMD/openPMD.hpp>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <numeric>
#include <vector>

using namespace openPMD;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: serial_write FILE\n";
    return 2;
  }
  const std::size_t rows = 3, cols = 3;
  Extent extent = {rows, cols};
  std::vector<double> global(rows * cols);
  std::iota(global.begin(), global.end(), 0.0);

  Series series = Series(argv[1], Access::CREATE);
  series.setAuthor("Axel Huebl <a.huebl@hzdr.de>");
  series.setMachine("testing");
  series.setAttribute("dinner", "Pizza and Coke");
  series.setAttribute("lucky_numbers", std::vector<int>{5, 12, 7});

  Iteration iteration = series.iterations[1];
  iteration.setTime(42.0f).setDt(0.5f).setTimeUnitSI(1e-15);
  iteration.setComment("a 3x3 field, a constant and particles");

  MeshRecordComponent rho = iteration.meshes["rho"][MeshRecordComponent::SCALAR];
  Dataset dataset = Dataset(determineDatatype<double>(), extent);
  rho.resetDataset(dataset);
  rho.setUnitSI(1e3);
  series.flush();  // the dataset exists before any chunk

  // The example's chunking: one row at a time, from a shared buffer.
  for (std::size_t row = 0; row < rows; ++row) {
    auto chunk = std::shared_ptr<double>(new double[cols], std::default_delete<double[]>());
    for (std::size_t col = 0; col < cols; ++col) chunk.get()[col] = global[row * cols + col];
    rho.storeChunk(chunk, {row, 0}, {1, cols});
  }
  iteration.meshes["rho"].setGridSpacing(std::vector<float>{1.0f, 2.0f});
  iteration.meshes["rho"].setAxisLabels({"y", "x"});
  iteration.meshes["rho"].setGeometry(Mesh::Geometry::cartesian);
  iteration.meshes["rho"].setUnitDimension({{UnitDimension::L, -3}, {UnitDimension::I, 1},
                                            {UnitDimension::T, 1}});

  MeshRecordComponent temperature = iteration.meshes["T"][MeshRecordComponent::SCALAR];
  temperature.resetDataset(Dataset(Datatype::FLOAT, extent));
  temperature.makeConstant(300.5f);

  ParticleSpecies ions = iteration.particles["ions"];
  std::vector<std::uint64_t> ids = {11, 12, 13, 14};
  ions["id"][RecordComponent::SCALAR].resetDataset(Dataset(Datatype::ULONG, {ids.size()}));
  ions["id"][RecordComponent::SCALAR].storeChunk(ids, {0}, {ids.size()});
  auto weights = std::unique_ptr<float[]>(new float[4]{0.5f, 1.5f, 2.5f, 3.5f});
  ions["weighting"][RecordComponent::SCALAR].resetDataset(Dataset(Datatype::FLOAT, {4}));
  ions["weighting"][RecordComponent::SCALAR].storeChunk(std::move(weights), {0}, {4});
  ions["charge"][RecordComponent::SCALAR].resetDataset(Dataset(Datatype::DOUBLE, {4}));
  ions["charge"][RecordComponent::SCALAR].makeConstant(1.602e-19);

  series.flush();
  // A second iteration, written after the first was flushed (not closed).
  Iteration second = series.iterations[2];
  second.setTime(43.0f);
  MeshRecordComponent rho2 = second.meshes["rho"][MeshRecordComponent::SCALAR];
  rho2.resetDataset(dataset);
  // A shared_ptr: the layer keeps it alive until the destructor's flush.
  auto doubled = std::shared_ptr<double[]>(new double[rows * cols]);
  for (std::size_t k = 0; k < rows * cols; ++k) doubled[k] = 2 * global[k];
  rho2.storeChunk(doubled, {0, 0}, extent);
  return 0;  // the series is closed by its destructor, as in openPMD-api's examples
}
