// slipstream::LocalModel (include/slipstream/local_model.hpp): the TorchScript backend used
// in-process, with the client's tensor conventions (TensorRef, Fortran order, typed errors).
#include "slipstream/local_model.hpp"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>

#include "common/tensor_layout.hpp"
#include "ml/backend.hpp"
#include "slipstream/stream.hpp"

namespace slipstream {
namespace {

ml::Device parse_device_or_throw(std::string_view text) {
  const auto device = ml::parse_device(text);
  if (!device) {
    throw InvalidArgumentError("unknown device '" + std::string(text) +
                               "': expected CPU, GPU or GPU:n");
  }
  return *device;
}

std::shared_ptr<ml::Backend> torch_backend() {
  static const std::shared_ptr<ml::Backend> backend = ml::make_torch_backend();
  return backend;
}

}  // namespace

struct LocalModel::Impl {
  std::shared_ptr<ml::Model> model;

  // Runs the model; C-order inputs are passed in place, Fortran-order ones through a transposed
  // copy kept alive in `transposed` for the call.
  std::vector<ml::OwnedTensor> run(std::span<const TensorRef> inputs) const {
    std::vector<Tensor> transposed;
    std::vector<ml::TensorView> views;
    views.reserve(inputs.size());
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const TensorRef& input = inputs[i];
      const std::string which = "input " + std::to_string(i) +
                                (input.name.empty() ? "" : " ('" + std::string(input.name) + "')");
      if (input.dtype == DType::kUInt16) {
        throw InvalidArgumentError(which + " is UINT16, which libtorch does not support");
      }
      const std::size_t needed = element_count(input.shape) * dtype_size(input.dtype);
      if (input.bytes != needed) {
        throw InvalidArgumentError(which + " has " + std::to_string(input.bytes) + " bytes but a " +
                                   std::string(dtype_name(input.dtype)) + " tensor of shape " +
                                   shape_text(input.shape) + " needs " + std::to_string(needed));
      }
      if (input.data == nullptr) throw InvalidArgumentError(which + " has a null data pointer");
      if (input.order == MemoryOrder::kFortran && input.shape.size() > 1) {
        const Tensor& copy = transposed.emplace_back(Tensor::copy_of(
            input.dtype, input.data, input.bytes, input.shape, MemoryOrder::kFortran));
        views.push_back({copy.dtype(), copy.shape(), copy.bytes().data(), copy.byte_size()});
      } else {
        views.push_back({input.dtype, input.shape, input.data, input.bytes});
      }
    }
    std::vector<ml::OwnedTensor> outputs;
    const ml::Status status = model->run(views, outputs);
    if (!status.ok) throw Error(ErrorCode::kBackend, "model run failed: " + status.message);
    return outputs;
  }
};

LocalModel::LocalModel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
LocalModel::LocalModel(LocalModel&&) noexcept = default;
LocalModel& LocalModel::operator=(LocalModel&&) noexcept = default;
LocalModel::~LocalModel() = default;

LocalModel LocalModel::from_bytes(std::string_view bytes, std::string_view device) {
  const ml::Device parsed = parse_device_or_throw(device);
  const auto backend = torch_backend();
  if (const ml::Status status = backend->check_device(parsed); !status.ok) {
    throw InvalidArgumentError(status.message);
  }
  std::string error;
  // TorchScript archives are zip files; anything else is taken for an ONNX model.
  const ml::ModelFormat format = ml::sniff_model_format(bytes);
  auto model = backend->load_model(bytes, format, parsed, &error);
  if (!model && format == ml::ModelFormat::kOnnx && error.starts_with("not an ONNX model")) {
    throw Error(ErrorCode::kBackend, "cannot load the model: the bytes are neither a TorchScript "
                                     "archive (a zip file) nor an ONNX model");
  }
  if (!model) {
    throw Error(ErrorCode::kBackend,
                std::string("cannot load the ") +
                    (format == ml::ModelFormat::kOnnx ? "ONNX" : "TorchScript") + " model: " + error);
  }
  auto impl = std::make_unique<Impl>();
  impl->model = std::move(model);
  return LocalModel(std::move(impl));
}

LocalModel LocalModel::from_file(const std::string& path, std::string_view device) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw InvalidArgumentError("cannot open model file '" + path + "'");
  const std::string bytes{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
  if (file.bad()) throw InvalidArgumentError("cannot read model file '" + path + "'");
  try {
    return from_bytes(bytes, device);
  } catch (const InvalidArgumentError&) {
    throw;
  } catch (const Error& error) {
    throw Error(error.code(), std::string(error.what()) + " (file '" + path + "')");
  }
}

std::vector<Tensor> LocalModel::run(std::span<const TensorRef> inputs) const {
  std::vector<ml::OwnedTensor> outputs = impl_->run(inputs);
  std::vector<Tensor> tensors;
  tensors.reserve(outputs.size());
  for (const ml::OwnedTensor& output : outputs) {
    tensors.push_back(
        Tensor::copy_of(output.dtype, output.data.data(), output.data.size(), output.shape));
  }
  return tensors;
}

void LocalModel::run(std::span<const TensorRef> inputs,
                     std::span<const MutableTensorRef> outputs) const {
  std::vector<ml::OwnedTensor> results = impl_->run(inputs);
  if (results.size() != outputs.size()) {
    throw InvalidArgumentError("the model returned " + std::to_string(results.size()) +
                               " output(s) but " + std::to_string(outputs.size()) +
                               " output buffer(s) were given");
  }
  // Check every buffer before writing any, so that a failure leaves all of them untouched.
  for (std::size_t i = 0; i < results.size(); ++i) {
    const ml::OwnedTensor& result = results[i];
    const MutableTensorRef& out = outputs[i];
    const std::string which = "output " + std::to_string(i);
    if (out.dtype != result.dtype) {
      throw InvalidArgumentError(which + " is " + std::string(dtype_name(result.dtype)) +
                                 " but its buffer is for " + std::string(dtype_name(out.dtype)));
    }
    if (!out.shape.empty() &&
        !std::equal(out.shape.begin(), out.shape.end(), result.shape.begin(), result.shape.end())) {
      throw InvalidArgumentError(which + " has shape " + shape_text(result.shape) +
                                 " but its buffer expects " + shape_text(out.shape));
    }
    if (out.bytes < result.data.size()) {
      throw BufferTooSmallError(which + " (" + std::string(dtype_name(result.dtype)) + ", shape " +
                                shape_text(result.shape) + ") needs " +
                                std::to_string(result.data.size()) + " bytes but its buffer has " +
                                std::to_string(out.bytes));
    }
    if (out.data == nullptr && !result.data.empty()) {
      throw InvalidArgumentError(which + " has a null data pointer");
    }
  }
  for (std::size_t i = 0; i < results.size(); ++i) {
    const ml::OwnedTensor& result = results[i];
    const MutableTensorRef& out = outputs[i];
    const auto* src = reinterpret_cast<const std::byte*>(result.data.data());
    auto* dst = static_cast<std::byte*>(out.data);
    if (out.order == MemoryOrder::kFortran) {
      c_to_fortran(src, dst, dtype_size(result.dtype), result.shape);
    } else if (!result.data.empty()) {
      std::memcpy(dst, src, result.data.size());
    }
  }
}

std::string LocalModel::device() const { return impl_->model->device().str(); }

namespace {

// Stream writers' reductions given as a file (StreamReduction::source) run as LocalModels on the
// CPU: installed when this library is loaded, whether the program links it or libslipstream
// loads it for a writer that needs it.
const bool kReductionLoaderInstalled = [] {
  set_reduction_loader([](const std::string& source) -> ReductionFunction {
    auto model = std::make_shared<const LocalModel>(LocalModel::from_file(source));
    return [model](std::span<const TensorRef> inputs) { return model->run(inputs); };
  });
  return true;
}();

}  // namespace

}  // namespace slipstream
