// slipstream::LocalModel: a TorchScript or ONNX model run in-process on the caller's buffers, with
// no server in between (the same model files the server serves). Lives in libslipstream_local, which
// links libtorch; the plain client library (libslipstream) does not.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "slipstream/export.hpp"
#include "slipstream/tensor.hpp"
#include "slipstream/tensor_data.hpp"

namespace slipstream {

/// A caller's buffer that receives one output of LocalModel::run. The caller keeps `data` (and
/// `shape`) alive until the call returns.
struct MutableTensorRef {
  /// Must equal the dtype of the model's output.
  DType dtype = DType::kFloat32;
  void* data = nullptr;
  /// Capacity of `data` in bytes: at least the output's size. A larger buffer is allowed; its
  /// tail is left untouched.
  std::size_t bytes = 0;
  /// The shape the caller expects. When not empty, the output's shape must equal it; when empty,
  /// any shape is accepted (so a scalar output cannot be checked this way).
  std::span<const std::int64_t> shape;
  /// Order the output is written in: a Fortran-order buffer receives the transpose, so that
  /// a(i+1, j+1) is element [i][j] of the row-major output.
  MemoryOrder order = MemoryOrder::kC;

  template <typename T>
  static MutableTensorRef of(std::span<T> data, std::span<const std::int64_t> shape = {},
                             MemoryOrder order = MemoryOrder::kC) {
    return {dtype_of<T>, data.data(), data.size_bytes(), shape, order};
  }
};

/// A TorchScript or ONNX model loaded into this process. Which one is told from the bytes: a
/// TorchScript archive is a zip file; anything else is read as an ONNX ModelProto and lowered to
/// TorchScript (docs/models.md lists the operators).
///
/// Thread-safety: run() may be called concurrently from any number of threads on one LocalModel
/// (they share the loaded module; libtorch runs its forward method concurrently). Moving or
/// destroying a LocalModel while a run() is in progress is not allowed.
///
/// Errors: InvalidArgumentError for a bad device string, an unusable device, unreadable file or
/// inputs and output buffers that do not fit the model; BufferTooSmallError for a too small
/// output buffer; Error with code ErrorCode::kServer when libtorch refuses the model or fails
/// running it (the message quotes libtorch's).
class SLIPSTREAM_API LocalModel {
 public:
  /// Loads the TorchScript archive (as written by torch.jit.save or Module::save) or ONNX model
  /// at `path` onto `device` ("CPU", "GPU" or "GPU:n", case-insensitive).
  static LocalModel from_file(const std::string& path, std::string_view device = "CPU");
  /// Loads a TorchScript archive or ONNX model held in memory; `bytes` is only read during the
  /// call.
  static LocalModel from_bytes(std::string_view bytes, std::string_view device = "CPU");

  LocalModel(LocalModel&&) noexcept;
  LocalModel& operator=(LocalModel&&) noexcept;
  LocalModel(const LocalModel&) = delete;
  LocalModel& operator=(const LocalModel&) = delete;
  ~LocalModel();

  /// Runs the model's forward method on `inputs` (their names are ignored; the order is the
  /// order of forward's parameters) and returns one tensor per output, a tuple or list result
  /// being flattened in order. C-order inputs on the CPU are read in place, not copied; a
  /// Fortran-order input is transposed into a temporary first.
  std::vector<Tensor> run(std::span<const TensorRef> inputs) const;

  /// As run(inputs), but writes output i into `outputs[i]` (converting to its order) instead of
  /// allocating result tensors. `outputs.size()` must equal the number of model outputs. Every
  /// output is checked against its buffer before anything is written: on any error no buffer
  /// has been touched.
  void run(std::span<const TensorRef> inputs, std::span<const MutableTensorRef> outputs) const;

  /// The device the model runs on ("CPU", "GPU:0", ...).
  std::string device() const;

 private:
  struct Impl;
  explicit LocalModel(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace slipstream
