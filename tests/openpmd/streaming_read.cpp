// An openPMD-api streaming reader as openPMD-api's documentation writes one (its example
// 10_streaming_read): built unchanged against Slipstream's openPMD layer. It reads what
// streaming_write wrote, iteration by iteration, and checks every element and attribute; each
// MPI rank loads the whole of every component (any box, not only a strategy's share).
// Usage: streaming_read SERIES ITERATIONS ELEMENTS_PER_RANK WRITER_RANKS
#include <openPMD/openPMD.hpp>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "tests/openpmd/expected_values.hpp"

using namespace openPMD;

namespace {
int failures = 0;

void check(bool ok, const std::string& what) {
  if (!ok) {
    if (++failures <= 20) std::cerr << "MISMATCH: " << what << "\n";
  }
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::cerr << "usage: streaming_read SERIES ITERATIONS ELEMENTS_PER_RANK WRITER_RANKS\n";
    return 2;
  }
  const std::uint64_t iterations = std::strtoull(argv[2], nullptr, 10);
  const std::uint64_t per_rank = std::strtoull(argv[3], nullptr, 10);
  const std::uint64_t writers = std::strtoull(argv[4], nullptr, 10);
  const std::uint64_t global = per_rank * writers;
  std::uint64_t seen = 0;
#if openPMD_HAVE_MPI
  MPI_Init(&argc, &argv);
  {
    Series series(argv[1], Access::READ_LINEAR, MPI_COMM_WORLD,
                  R"({"slipstream": {"group": "checker"}})");
#else
  {
    Series series(argv[1], Access::READ_LINEAR, R"({"slipstream": {"group": "checker"}})");
#endif
    for (IndexedIteration iteration : series.readIterations()) {
      const std::uint64_t index = iteration.iterationIndex;
      check(index == seen * 10, "iteration index " + std::to_string(index));
      const std::string at = "iteration " + std::to_string(index) + ": ";
      check(iteration.time<double>() == static_cast<double>(seen) * 0.5, at + "time");
      check(iteration.dt<double>() == 0.5, at + "dt");
      check(iteration.getAttribute("step_float").get<float>() == static_cast<float>(seen) + 0.25f,
            at + "step_float");
      // Attributes keep their exact types, on a stream as in a file.
      check(iteration.getAttribute("step_float").dtype == Datatype::FLOAT, at + "step_float type");
      check(series.getAttribute("ranks").dtype == Datatype::UINT, at + "ranks type");
      check(iteration.meshes["E"].getAttribute("unitDimension").dtype == Datatype::ARR_DBL_7,
            at + "unitDimension type");
      check(iteration.meshes["E"].getAttribute("timeOffset").dtype == Datatype::FLOAT,
            at + "timeOffset type");
      check(iteration.meshes["E"].getAttribute("axisLabels").dtype == Datatype::VEC_STRING,
            at + "axisLabels type");
      check((iteration.getAttribute("labels").get<std::vector<std::string>>() ==
             std::vector<std::string>{"a", "bc"}),
            at + "labels");
      check(series.author() == "Slipstream tests <tests@example.org>", at + "author");
      check(series.getAttribute("ranks").get<std::uint32_t>() == writers, at + "ranks attribute");
      // A stream names its writers' hosts; a file has no rank table.
      const chunk_assignment::RankMeta ranks = series.rankTable(false);
      check(series.backend() != "SLIPSTREAM" || ranks.size() == writers, at + "rank table");

      Mesh E = iteration.meshes["E"];
      check(E.gridSpacing<double>() == std::vector<double>{0.1}, at + "gridSpacing");
      check(E.axisLabels() == std::vector<std::string>{"x"}, at + "axisLabels");
      const std::array<double, 7> dimension = E.unitDimension();
      check(dimension[0] == 1 && dimension[1] == 1 && dimension[2] == -3 && dimension[3] == -1,
            at + "E's unitDimension");
      std::vector<std::shared_ptr<double>> components;
      for (const char* axis : {"x", "y", "z"}) {
        MeshRecordComponent component = E[axis];
        check(component.getDatatype() == Datatype::DOUBLE, at + "E dtype");
        check(component.getExtent() == Extent{global}, at + "E extent");
        check(component.unitSI() == 2.5, at + "E unitSI");
        ChunkTable chunks = component.availableChunks();
        check(chunks.size() == writers, at + "E chunks");
        for (const WrittenChunkInfo& chunk : chunks) {
          check(chunk.offset == Offset{chunk.sourceID * per_rank} &&
                    chunk.extent == Extent{per_rank},
                at + "E chunk of writer " + std::to_string(chunk.sourceID));
        }
        components.push_back(component.loadChunk<double>());
      }
      MeshRecordComponent rho = iteration.meshes["rho"][RecordComponent::SCALAR];
      auto rho_values = rho.loadChunk<float>({0}, {global});
      // A box across the writers' chunks.
      const std::uint64_t middle = global / 2 > 5 ? global / 2 - 5 : 0;
      const std::uint64_t box = global >= 10 ? 10 : global;
      auto rho_box = rho.loadChunk<float>({middle}, {box});

      ParticleSpecies electrons = iteration.particles["e"];
      auto ids = electrons["id"][RecordComponent::SCALAR].loadChunk<std::int64_t>();
      auto positions = electrons["position"]["x"].loadChunk<float>();
      RecordComponent charge = electrons["charge"][RecordComponent::SCALAR];
      check(charge.constant(), at + "charge is constant");
      auto charges = charge.loadChunk<double>();
      PatchRecordComponent counts = electrons.particlePatches["numParticles"][RecordComponent::SCALAR];
      check(counts.getDatatype() == Datatype::ULONG, at + "numParticles is uint64");
      auto patch_counts = counts.load<std::uint64_t>();
      auto patch_offsets =
          electrons.particlePatches["numParticlesOffset"][RecordComponent::SCALAR].load<std::uint64_t>();
      RecordComponent cell = electrons["cell"][RecordComponent::SCALAR];
      check(cell.getDatatype() == Datatype::UINT, at + "cell is uint32");
      auto cells = cell.loadChunk<std::uint32_t>();
      iteration.close();  // the loads happen here

      const char axes[] = {'x', 'y', 'z'};
      for (std::size_t c = 0; c < 3; ++c) {
        for (std::uint64_t k = 0; k < global; ++k) {
          check(components[c].get()[k] == expected_field(index, axes[c], k),
                at + "E/" + axes[c] + "[" + std::to_string(k) + "]");
        }
      }
      for (std::uint64_t k = 0; k < global; ++k) {
        check(rho_values.get()[k] == static_cast<float>(expected_field(index, 'r', k)),
              at + "rho[" + std::to_string(k) + "]");
        check(ids.get()[k] == static_cast<std::int64_t>(k), at + "id[" + std::to_string(k) + "]");
        check(positions.get()[k] == static_cast<float>(expected_field(index, 'p', k)),
              at + "position/x[" + std::to_string(k) + "]");
        check(charges.get()[k] == -1.602e-19, at + "charge[" + std::to_string(k) + "]");
        check(cells.get()[k] == k, at + "cell[" + std::to_string(k) + "]");
      }
      for (std::uint64_t k = 0; k < box; ++k) {
        check(rho_box.get()[k] == static_cast<float>(expected_field(index, 'r', middle + k)),
              at + "rho box[" + std::to_string(k) + "]");
      }
      for (std::uint64_t r = 0; r < writers; ++r) {
        check(patch_counts.get()[r] == per_rank, at + "numParticles");
        check(patch_offsets.get()[r] == r * per_rank, at + "numParticlesOffset");
      }
      ++seen;
    }
  }
#if openPMD_HAVE_MPI
  MPI_Finalize();
#endif
  check(seen == iterations, "iterations read: " + std::to_string(seen) + " of " +
                                std::to_string(iterations));
  if (failures != 0) {
    std::cerr << failures << " mismatches\n";
    return 1;
  }
  std::cout << "streaming_read: " << seen << " iterations, every element and attribute checked\n";
  return 0;
}
