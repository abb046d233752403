// Fortran <-> C order transposes (see tensor_layout.hpp).
#include "common/tensor_layout.hpp"

#include <cstring>
#include <vector>

namespace slipstream {
namespace {

// Walks the row-major positions in order while tracking the matching column-major position, and
// calls copy(row_major_index, column_major_index) for each element. The column-major position is
// updated incrementally (add the stride of the dimension that advanced, subtract the span of the
// ones that wrapped), so the walk costs O(1) per element for any rank.
template <typename Copy>
void walk(std::span<const std::int64_t> shape, Copy copy) {
  const std::size_t rank = shape.size();
  std::size_t total = 1;
  for (auto d : shape) total *= static_cast<std::size_t>(d);
  if (rank <= 1) {
    for (std::size_t i = 0; i < total; ++i) copy(i, i);
    return;
  }
  std::vector<std::size_t> stride(rank);  // column-major strides
  std::size_t s = 1;
  for (std::size_t k = 0; k < rank; ++k) {
    stride[k] = s;
    s *= static_cast<std::size_t>(shape[k]);
  }
  std::vector<std::size_t> index(rank, 0);
  std::size_t f = 0;
  for (std::size_t c = 0; c < total; ++c) {
    copy(c, f);
    for (std::size_t k = rank; k-- > 0;) {
      if (++index[k] < static_cast<std::size_t>(shape[k])) {
        f += stride[k];
        break;
      }
      index[k] = 0;
      f -= stride[k] * (static_cast<std::size_t>(shape[k]) - 1);
    }
  }
}

template <typename Word>
void transpose(const std::byte* src, std::byte* dst, std::span<const std::int64_t> shape,
               bool to_c) {
  const auto* in = reinterpret_cast<const Word*>(src);
  auto* out = reinterpret_cast<Word*>(dst);
  if (to_c) {
    walk(shape, [&](std::size_t c, std::size_t f) { std::memcpy(out + c, in + f, sizeof(Word)); });
  } else {
    walk(shape, [&](std::size_t c, std::size_t f) { std::memcpy(out + f, in + c, sizeof(Word)); });
  }
}

void transpose_any(const std::byte* src, std::byte* dst, std::size_t element_size,
                   std::span<const std::int64_t> shape, bool to_c) {
  switch (element_size) {
    case 1:
      return transpose<std::uint8_t>(src, dst, shape, to_c);
    case 2:
      return transpose<std::uint16_t>(src, dst, shape, to_c);
    case 4:
      return transpose<std::uint32_t>(src, dst, shape, to_c);
    case 8:
      return transpose<std::uint64_t>(src, dst, shape, to_c);
    default:
      walk(shape, [&](std::size_t c, std::size_t f) {
        if (to_c) {
          std::memcpy(dst + c * element_size, src + f * element_size, element_size);
        } else {
          std::memcpy(dst + f * element_size, src + c * element_size, element_size);
        }
      });
  }
}

}  // namespace

void fortran_to_c(const std::byte* src, std::byte* dst, std::size_t element_size,
                  std::span<const std::int64_t> shape) {
  transpose_any(src, dst, element_size, shape, true);
}

void c_to_fortran(const std::byte* src, std::byte* dst, std::size_t element_size,
                  std::span<const std::int64_t> shape) {
  transpose_any(src, dst, element_size, shape, false);
}

}  // namespace slipstream
