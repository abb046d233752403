// What the stream process tests write: the record components, which part of each a writer rank
// owns, and the value of every element, shared by the writer and reader programs and the drivers
// that check what the readers reported.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace slipstream::testing::stream_procs {

/// The sizes of one run. Writer rank r of `writers` owns rows [2 r rows_per_chunk, 2 (r + 1)
/// rows_per_chunk) of the mesh, put as two chunks of `rows_per_chunk` rows, and elements
/// [r particles, (r + 1) particles) of the particle record, put as one chunk.
struct Layout {
  std::uint32_t writers = 4;
  std::uint64_t rows_per_chunk = 2;
  std::uint64_t columns = 8;
  std::uint64_t particles = 5;  // per writer

  std::vector<std::uint64_t> mesh_extent() const { return {2 * writers * rows_per_chunk, columns}; }
  std::vector<std::uint64_t> particle_extent() const { return {writers * particles}; }
  /// The writer that owns element `index` (row-major) of `component`.
  std::uint32_t owner(int component, std::uint64_t index) const {
    return component == 0 ? static_cast<std::uint32_t>(index / columns / (2 * rows_per_chunk))
                          : static_cast<std::uint32_t>(index / particles);
  }
};

inline constexpr const char* kMesh = "meshes/E/x";
inline constexpr const char* kParticles = "particles/electrons/position/x";
inline const std::vector<std::string> kComponents = {kMesh, kParticles};

/// The index of `name` in kComponents, or -1.
inline int component_index(const std::string& name) {
  for (std::size_t i = 0; i < kComponents.size(); ++i) {
    if (kComponents[i] == name) return static_cast<int>(i);
  }
  return -1;
}

/// The value of element `index` (row-major) of component `component` in `step` of run `run`:
/// every element of every step and run differs, and every value is exact in a double.
inline double element_value(int run, std::int64_t step, int component, std::uint64_t index) {
  return static_cast<double>(run) * 1e12 + static_cast<double>(step) * 1e8 +
         static_cast<double>(component) * 1e7 + static_cast<double>(index);
}

}  // namespace slipstream::testing::stream_procs
