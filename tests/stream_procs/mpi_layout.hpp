// What stream_mpi_writer writes and stream_mpi_check expects: a 2-D field whose rows the MPI ranks
// share (two chunks per rank), a particle species with a position component and integer ids, the
// value of every element, and openPMD's standard attributes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace slipstream::testing::mpi_stream {

inline constexpr const char* kField = "meshes/B/z";
inline constexpr const char* kPositionX = "particles/electrons/position/x";
inline constexpr const char* kId = "particles/electrons/id";

inline constexpr std::uint64_t kRowsPerChunk = 4;
inline constexpr std::uint64_t kColumns = 4096;  // 128 KiB chunks: the shared-memory path
inline constexpr double kDt = 0.25;

/// Rank r owns field rows [2 r kRowsPerChunk, 2 (r + 1) kRowsPerChunk), put as two chunks.
inline std::vector<std::uint64_t> field_extent(std::uint64_t ranks) {
  return {2 * kRowsPerChunk * ranks, kColumns};
}
/// Rank r has r + 3 particles, after those of the ranks before it.
inline std::uint64_t particles_of(std::uint64_t rank) { return rank + 3; }
inline std::uint64_t first_particle(std::uint64_t rank) { return rank * (rank + 5) / 2; }
inline std::uint64_t particle_count(std::uint64_t ranks) { return first_particle(ranks); }

/// Element `index` (row-major) of the field, of the x positions and of the ids in `step`.
inline double field_value(std::int64_t step, std::uint64_t index) {
  return static_cast<double>(step) * 1e8 + static_cast<double>(index);
}
inline double position_value(std::int64_t step, std::uint64_t particle) {
  return static_cast<double>(step) + 0.25 * static_cast<double>(particle);
}
inline std::int64_t id_value(std::int64_t step, std::uint64_t particle) {
  return step * 1000000 + static_cast<std::int64_t>(particle);
}

/// openPMD's unit dimensions (L, M, T, I, theta, N, J): tesla and metre.
inline const std::vector<double> kTesla = {0, 1, -2, -1, 0, 0, 0};
inline const std::vector<double> kMetre = {1, 0, 0, 0, 0, 0, 0};

}  // namespace slipstream::testing::mpi_stream
