// The values the openPMD test writers write and the readers check, element by element.
#pragma once

#include <cstdint>

/// A value for iteration `iteration`, quantity `what` ('x', 'y', 'z': E's components, 'r':
/// rho, 'p': positions) at global index `index`; exact in float for the sizes the tests use.
inline double expected_field(std::uint64_t iteration, char what, std::uint64_t index) {
  return static_cast<double>(iteration) * 1000.0 + static_cast<double>(what) * 0.5 +
         static_cast<double>(index % 4096) * 0.25;
}
