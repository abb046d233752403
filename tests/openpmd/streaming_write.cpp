// An openPMD-api streaming writer as openPMD-api's documentation writes one (its example
// 10_streaming_write): built unchanged against Slipstream's openPMD layer. Each MPI rank (or
// the one process) writes its slab of a 3-component field E, a scalar field rho (span API),
// particles with a constant charge and particle patches, and attributes of many types, for
// ITERATIONS iterations. streaming_read checks every element and attribute.
// Usage: streaming_write SERIES [ITERATIONS] [ELEMENTS_PER_RANK]
#include <openPMD/openPMD.hpp>

#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "tests/openpmd/expected_values.hpp"

using namespace openPMD;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: streaming_write SERIES [ITERATIONS] [ELEMENTS_PER_RANK]\n";
    return 2;
  }
  const std::uint64_t iterations = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 5;
  const std::uint64_t per_rank = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 1000;
#if openPMD_HAVE_MPI
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  {
    Series series(argv[1], Access::CREATE, MPI_COMM_WORLD,
                  R"({"adios2": {"engine": {"parameters": {"QueueLimit": "2", "DataTransport": "WAN"}}}})");
#else
  const int rank = 0, size = 1;
  {
    Series series(argv[1], Access::CREATE, R"({"adios2": {"engine": {"parameters": {"QueueLimit": "2"}}}})");
#endif
    series.setAuthor("Slipstream tests <tests@example.org>");
    series.setSoftware("streaming_write", "1.0");
    series.setAttribute("ranks", static_cast<std::uint32_t>(size));
    const std::uint64_t global = per_rank * static_cast<std::uint64_t>(size);
    const std::uint64_t offset = per_rank * static_cast<std::uint64_t>(rank);
    for (std::uint64_t i = 0; i < iterations; ++i) {
      Iteration iteration = series.writeIterations()[i * 10];
      iteration.setTime(static_cast<double>(i) * 0.5);
      iteration.setDt(0.5);
      iteration.setAttribute("step_float", static_cast<float>(i) + 0.25f);
      iteration.setAttribute("labels", std::vector<std::string>{"a", "bc"});

      Mesh E = iteration.meshes["E"];
      E.setGridSpacing(std::vector<double>{0.1});
      E.setAxisLabels({"x"});
      E.setUnitDimension({{UnitDimension::M, 1}, {UnitDimension::L, 1}, {UnitDimension::I, -1},
                          {UnitDimension::T, -3}});
      std::vector<std::vector<double>> values;  // kept alive until the iteration is closed
      for (const char* axis : {"x", "y", "z"}) {
        MeshRecordComponent component = E[axis];
        component.resetDataset(Dataset(Datatype::DOUBLE, {global}));
        component.setUnitSI(2.5);
        values.emplace_back(per_rank);
        for (std::uint64_t k = 0; k < per_rank; ++k) {
          values.back()[k] = expected_field(i * 10, axis[0], offset + k);
        }
        component.storeChunk(values.back(), {offset}, {per_rank});
      }
      // The span API: the layer's (or the stream's shared) memory, filled in place.
      MeshRecordComponent rho = iteration.meshes["rho"][RecordComponent::SCALAR];
      rho.resetDataset(Dataset(determineDatatype<float>(), {global}));
      auto span = rho.storeChunk<float>({offset}, {per_rank}).currentBuffer();
      for (std::uint64_t k = 0; k < per_rank; ++k) {
        span[k] = static_cast<float>(expected_field(i * 10, 'r', offset + k));
      }

      ParticleSpecies electrons = iteration.particles["e"];
      auto ids = std::shared_ptr<std::int64_t[]>(new std::int64_t[per_rank]);
      for (std::uint64_t k = 0; k < per_rank; ++k) ids[k] = static_cast<std::int64_t>(offset + k);
      electrons["id"][RecordComponent::SCALAR].resetDataset(Dataset(Datatype::LONG, {global}));
      electrons["id"][RecordComponent::SCALAR].storeChunk(ids, {offset}, {per_rank});
      electrons["charge"][RecordComponent::SCALAR].resetDataset(Dataset(Datatype::DOUBLE, {global}));
      electrons["charge"][RecordComponent::SCALAR].makeConstant(-1.602e-19);
      electrons["charge"].setUnitDimension({{UnitDimension::I, 1}, {UnitDimension::T, 1}});
      std::vector<float> positions(per_rank);
      for (std::uint64_t k = 0; k < per_rank; ++k) {
        positions[k] = static_cast<float>(expected_field(i * 10, 'p', offset + k));
      }
      electrons["position"]["x"].resetDataset(Dataset(Datatype::FLOAT, {global}));
      electrons["position"]["x"].storeChunk(positions, {offset}, {per_rank});

      // One patch per rank, as PIConGPU writes them.
      auto patches = electrons.particlePatches;
      patches["numParticles"][RecordComponent::SCALAR].resetDataset(
          Dataset(determineDatatype<std::uint64_t>(), {static_cast<std::uint64_t>(size)}));
      patches["numParticles"][RecordComponent::SCALAR].store(
          static_cast<std::uint64_t>(rank), static_cast<std::uint64_t>(per_rank));
      patches["numParticlesOffset"][RecordComponent::SCALAR].resetDataset(
          Dataset(determineDatatype<std::uint64_t>(), {static_cast<std::uint64_t>(size)}));
      patches["numParticlesOffset"][RecordComponent::SCALAR].store(
          static_cast<std::uint64_t>(rank), static_cast<std::uint64_t>(offset));
      // An unsigned 32-bit record too.
      std::vector<std::uint32_t> cells(per_rank);
      for (std::uint64_t k = 0; k < per_rank; ++k) cells[k] = static_cast<std::uint32_t>(offset + k);
      electrons["cell"][RecordComponent::SCALAR].resetDataset(Dataset(Datatype::UINT, {global}));
      electrons["cell"][RecordComponent::SCALAR].storeChunk(cells, {offset}, {per_rank});

      iteration.close();  // `cells` and the other buffers are sent here, before they go
    }
    series.close();
  }
#if openPMD_HAVE_MPI
  MPI_Finalize();
#endif
  return 0;
}
