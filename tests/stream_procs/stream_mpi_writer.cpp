// stream_mpi_writer: a simulation's writer side as an MPI job. Every rank of MPI_COMM_WORLD is a
// stream writer (rank and size from MPI), writing its rows of a 2-D field as two chunks and its
// particles each step, with openPMD's standard attributes (mpi_layout.hpp). The server address
// comes from SLIPSTREAM_ADDRESS.
// Usage: mpirun -n N stream_mpi_writer STREAM STEPS
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "mpi_layout.hpp"
#include "slipstream/stream.hpp"

namespace {

using namespace slipstream::testing::mpi_stream;

void set_openpmd_series_attributes(slipstream::StreamWriter& writer) {
  writer.set_stream_attribute("/", "openPMD", std::string("1.1.0"));
  writer.set_stream_attribute("/", "openPMDextension", std::int64_t{0});
  writer.set_stream_attribute("/", "basePath", std::string("/data/%T/"));
  writer.set_stream_attribute("/", "meshesPath", std::string("meshes/"));
  writer.set_stream_attribute("/", "particlesPath", std::string("particles/"));
  writer.set_stream_attribute("/", "iterationEncoding", std::string("variableBased"));
  writer.set_stream_attribute("/", "iterationFormat", std::string("/data/%T/"));
  writer.set_stream_attribute("/", "software", std::string("slipstream stream_mpi_writer"));
}

void set_openpmd_step_attributes(slipstream::StreamWriter& writer, std::int64_t step) {
  writer.set_attribute("/", "time", kDt * static_cast<double>(step));
  writer.set_attribute("/", "dt", kDt);
  writer.set_attribute("/", "timeUnitSI", 1.0);
  writer.set_attribute("meshes/B", "unitDimension", kTesla);
  writer.set_attribute("meshes/B", "geometry", std::string("cartesian"));
  writer.set_attribute("meshes/B", "dataOrder", std::string("C"));
  writer.set_attribute("meshes/B", "axisLabels", std::vector<std::string>{"y", "x"});
  writer.set_attribute("meshes/B", "gridSpacing", std::vector<double>{1.0, 0.5});
  writer.set_attribute("meshes/B", "gridGlobalOffset", std::vector<double>{0.0, 0.0});
  writer.set_attribute("meshes/B", "gridUnitSI", 1e-6);
  writer.set_attribute("meshes/B", "timeOffset", 0.0);
  writer.set_attribute(kField, "unitSI", 1.0);
  writer.set_attribute(kField, "position", std::vector<double>{0.5, 0.5});
  writer.set_attribute("particles/electrons/position", "unitDimension", kMetre);
  writer.set_attribute("particles/electrons/position", "timeOffset", 0.0);
  writer.set_attribute(kPositionX, "unitSI", 1e-6);
  writer.set_attribute(kId, "unitSI", 1.0);
}

void write(const std::string& stream, int steps, int rank, int size) {
  slipstream::ClientOptions client;  // SLIPSTREAM_ADDRESS
  slipstream::StreamWriterOptions options;
  options.expected_groups = 2;  // stream_mpi_check's groups: no step is dropped before they join
  slipstream::StreamWriter writer(client, stream, static_cast<std::uint32_t>(rank),
                                  static_cast<std::uint32_t>(size), options);
  if (rank == 0) set_openpmd_series_attributes(writer);
  const auto r = static_cast<std::uint64_t>(rank);
  const std::vector<std::uint64_t> global = field_extent(static_cast<std::uint64_t>(size));
  const std::vector<std::uint64_t> particles_global = {
      particle_count(static_cast<std::uint64_t>(size))};
  for (std::int64_t step = 0; step < steps; ++step) {
    writer.begin_step(step);
    std::vector<std::vector<double>> rows(2);  // borrowed until end_step
    for (std::uint64_t half = 0; half < 2; ++half) {
      const std::uint64_t first_row = (2 * r + half) * kRowsPerChunk;
      for (std::uint64_t i = 0; i < kRowsPerChunk * kColumns; ++i) {
        rows[half].push_back(field_value(step, first_row * kColumns + i));
      }
      const std::vector<std::uint64_t> offset = {first_row, 0}, extent = {kRowsPerChunk, kColumns};
      writer.put_chunk<double>(kField, global, offset, extent, rows[half]);
    }
    std::vector<double> x;
    std::vector<std::int64_t> ids;
    for (std::uint64_t p = first_particle(r); p < first_particle(r) + particles_of(r); ++p) {
      x.push_back(position_value(step, p));
      ids.push_back(id_value(step, p));
    }
    const std::vector<std::uint64_t> offset = {first_particle(r)}, extent = {particles_of(r)};
    writer.put_chunk<double>(kPositionX, particles_global, offset, extent, x);
    writer.put_chunk<std::int64_t>(kId, particles_global, offset, extent, ids);
    if (rank == 0) set_openpmd_step_attributes(writer, step);
    writer.end_step();
  }
  writer.close();
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 3) {
    if (rank == 0) std::fprintf(stderr, "usage: stream_mpi_writer STREAM STEPS\n");
    MPI_Finalize();
    return 2;
  }
  try {
    write(argv[1], std::atoi(argv[2]), rank, size);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "stream_mpi_writer rank %d: %s\n", rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) std::printf("stream_mpi_writer: %d ranks wrote %s steps\n", size, argv[2]);
  MPI_Finalize();
  return 0;
}
