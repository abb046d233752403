// Tensor values on the client side: `Tensor` owns row-major bytes with a dtype and a shape;
// `TensorRef` borrows a caller's buffer for a put.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "slipstream/compression.hpp"
#include "slipstream/error.hpp"
#include "slipstream/export.hpp"
#include "slipstream/tensor.hpp"

namespace slipstream {

/// Number of elements of `shape` (1 for an empty shape, i.e. a scalar).
/// Throws InvalidArgumentError if a dimension is not positive, the rank exceeds kMaxTensorRank, or
/// the product overflows.
SLIPSTREAM_API std::size_t element_count(std::span<const std::int64_t> shape);

/// A tensor owning its bytes, always stored in row-major (C) order for its logical shape.
/// Move-only (clone() copies). Not synchronised: share a const Tensor between threads freely, but
/// do not modify one while another thread reads it.
class SLIPSTREAM_API Tensor {
 public:
  /// An empty FLOAT tensor of shape {0}; only useful as a moved-from or placeholder value.
  Tensor() = default;
  Tensor(Tensor&&) noexcept = default;
  Tensor& operator=(Tensor&&) noexcept = default;
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;

  /// A tensor whose bytes are unspecified until written through mutable_bytes().
  /// Throws InvalidArgumentError for a bad shape.
  static Tensor uninitialized(DType dtype, std::span<const std::int64_t> shape);

  /// Copies `bytes` bytes from `data`, laid out in `order` for `shape`, into a new row-major
  /// tensor (a Fortran-order buffer is transposed). Throws InvalidArgumentError if `bytes` is not
  /// exactly element_count(shape) * dtype_size(dtype) or the shape is bad.
  static Tensor copy_of(DType dtype, const void* data, std::size_t bytes,
                        std::span<const std::int64_t> shape, MemoryOrder order = MemoryOrder::kC);

  /// Typed form of copy_of: `data.size()` must equal the element count of `shape`.
  template <typename T>
  static Tensor copy_of(std::span<const T> data, std::span<const std::int64_t> shape,
                        MemoryOrder order = MemoryOrder::kC) {
    return copy_of(dtype_of<T>, data.data(), data.size_bytes(), shape, order);
  }

  Tensor clone() const;

  DType dtype() const noexcept { return dtype_; }
  std::span<const std::int64_t> shape() const noexcept { return shape_; }
  /// Number of elements.
  std::size_t size() const noexcept { return byte_size_ / dtype_size(dtype_); }
  std::size_t byte_size() const noexcept { return byte_size_; }
  std::span<const std::byte> bytes() const noexcept { return {data_.get(), byte_size_}; }
  std::span<std::byte> mutable_bytes() noexcept { return {data_.get(), byte_size_}; }

  /// The elements in row-major order. Throws InvalidArgumentError if T is not the tensor's dtype.
  template <typename T>
  std::span<const T> data() const {
    check_dtype(dtype_of<T>);
    return {reinterpret_cast<const T*>(data_.get()), size()};
  }

  /// Copies the elements into `out` in `order` (transposing for Fortran order). Throws
  /// InvalidArgumentError if the dtype differs, BufferTooSmallError if `out_bytes` is smaller
  /// than byte_size(); a larger buffer is allowed and its tail is left untouched.
  void copy_to(DType dtype, void* out, std::size_t out_bytes,
               MemoryOrder order = MemoryOrder::kC) const;

  template <typename T>
  void copy_to(std::span<T> out, MemoryOrder order = MemoryOrder::kC) const {
    copy_to(dtype_of<T>, out.data(), out.size_bytes(), order);
  }

 private:
  void check_dtype(DType requested) const;

  DType dtype_ = DType::kFloat32;
  std::vector<std::int64_t> shape_{0};
  std::unique_ptr<std::byte[]> data_;
  std::size_t byte_size_ = 0;
};

/// A borrowed tensor for a batched put (Client::put_tensors): the caller keeps `data` and `shape`
/// alive and unchanged until the call returns.
struct TensorRef {
  std::string_view name;
  DType dtype = DType::kFloat32;
  const void* data = nullptr;
  std::size_t bytes = 0;
  std::span<const std::int64_t> shape;
  MemoryOrder order = MemoryOrder::kC;
  /// When set, the tensor is compressed by this operator before it is sent and stored compressed
  /// (Client::put_tensor's `compression`); borrowed for the call.
  const CompressionOperator* compression = nullptr;

  template <typename T>
  static TensorRef of(std::string_view name, std::span<const T> data,
                      std::span<const std::int64_t> shape, MemoryOrder order = MemoryOrder::kC) {
    return {name, dtype_of<T>, data.data(), data.size_bytes(), shape, order};
  }
};

}  // namespace slipstream
