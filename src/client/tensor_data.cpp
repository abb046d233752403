// Tensor (owning, row-major) and shape validation (see include/slipstream/tensor_data.hpp).
#include "slipstream/tensor_data.hpp"

#include <cstring>
#include <limits>

#include "common/tensor_layout.hpp"

namespace slipstream {

std::size_t element_count(std::span<const std::int64_t> shape) {
  if (shape.size() > kMaxTensorRank) {
    throw InvalidArgumentError("tensor has " + std::to_string(shape.size()) +
                               " dimensions; at most " + std::to_string(kMaxTensorRank) +
                               " are allowed");
  }
  std::size_t count = 1;
  for (std::size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] <= 0) {
      throw InvalidArgumentError("tensor dimension " + std::to_string(k) + " is " +
                                 std::to_string(shape[k]) + "; every dimension must be positive");
    }
    auto d = static_cast<std::size_t>(shape[k]);
    if (count > std::numeric_limits<std::size_t>::max() / d / 8) {
      throw InvalidArgumentError("tensor shape is too large: its element count overflows");
    }
    count *= d;
  }
  return count;
}

Tensor Tensor::uninitialized(DType dtype, std::span<const std::int64_t> shape) {
  Tensor tensor;
  tensor.dtype_ = dtype;
  tensor.shape_.assign(shape.begin(), shape.end());
  tensor.byte_size_ = element_count(shape) * dtype_size(dtype);
  tensor.data_ = std::make_unique_for_overwrite<std::byte[]>(tensor.byte_size_);
  return tensor;
}

Tensor Tensor::copy_of(DType dtype, const void* data, std::size_t bytes,
                       std::span<const std::int64_t> shape, MemoryOrder order) {
  Tensor tensor = uninitialized(dtype, shape);
  if (bytes != tensor.byte_size_) {
    throw InvalidArgumentError("tensor data is " + std::to_string(bytes) + " bytes but a " +
                               std::string(dtype_name(dtype)) + " tensor of " +
                               std::to_string(tensor.size()) + " elements needs " +
                               std::to_string(tensor.byte_size_));
  }
  if (bytes > 0 && data == nullptr) throw InvalidArgumentError("tensor data pointer is null");
  const auto* src = static_cast<const std::byte*>(data);
  if (order == MemoryOrder::kFortran) {
    fortran_to_c(src, tensor.data_.get(), dtype_size(dtype), shape);
  } else if (bytes > 0) {
    std::memcpy(tensor.data_.get(), src, bytes);
  }
  return tensor;
}

Tensor Tensor::clone() const {
  Tensor copy = uninitialized(dtype_, shape_);
  if (byte_size_ > 0) std::memcpy(copy.data_.get(), data_.get(), byte_size_);
  return copy;
}

void Tensor::check_dtype(DType requested) const {
  if (requested != dtype_) {
    throw InvalidArgumentError("tensor holds " + std::string(dtype_name(dtype_)) + ", not " +
                               std::string(dtype_name(requested)));
  }
}

void Tensor::copy_to(DType dtype, void* out, std::size_t out_bytes, MemoryOrder order) const {
  check_dtype(dtype);
  if (out_bytes < byte_size_) {
    throw BufferTooSmallError("buffer of " + std::to_string(out_bytes) +
                              " bytes is too small for " + std::to_string(size()) + " " +
                              std::string(dtype_name(dtype_)) + " elements (" +
                              std::to_string(byte_size_) + " bytes)");
  }
  if (byte_size_ == 0) return;
  auto* dst = static_cast<std::byte*>(out);
  if (order == MemoryOrder::kFortran) {
    c_to_fortran(data_.get(), dst, dtype_size(dtype_), shape_);
  } else {
    std::memcpy(dst, data_.get(), byte_size_);
  }
}

}  // namespace slipstream
