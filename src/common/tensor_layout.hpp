// Conversion between Fortran (column-major) and C (row-major) element order for a logical shape
// that is the same in both: element [i0][i1]...[in] of the C buffer is a(i0+1, i1+1, ...) of the
// Fortran one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace slipstream {

/// Copies a column-major buffer `src` into row-major `dst`. Both hold element_count(shape)
/// elements of `element_size` bytes and must not overlap.
void fortran_to_c(const std::byte* src, std::byte* dst, std::size_t element_size,
                  std::span<const std::int64_t> shape);

/// The inverse of fortran_to_c.
void c_to_fortran(const std::byte* src, std::byte* dst, std::size_t element_size,
                  std::span<const std::int64_t> shape);

}  // namespace slipstream
