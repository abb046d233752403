// libtorch interop shared by the torch files of src/ml: error text, dtypes, devices, wrapping
// caller buffers as tensors and copying results out. See torch_interop.hpp.
#include "ml/torch_interop.hpp"

#include <ATen/ops/empty.h>
#include <ATen/ops/from_blob.h>

#include <cstring>

namespace slipstream::ml {
namespace {

// ---- Error text -------------------------------------------------------------------------------

constexpr std::size_t kMaxMessageLength = 600;

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const auto end = text.find('\n');
    lines.push_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

bool is_indented(std::string_view line) {
  return !line.empty() && (line.front() == ' ' || line.front() == '\t');
}

// True for the line that starts the exception of a TorchScript traceback ("RuntimeError: ...",
// "torch.jit.Error: ..."), as opposed to echoed source lines such as "def forward(self, x):".
bool is_exception_line(std::string_view line) {
  const auto colon = line.find(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  const std::string_view type = line.substr(0, colon);
  const bool identifier = std::all_of(type.begin(), type.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
  });
  return identifier && (type.ends_with("Error") || type.ends_with("Exception"));
}

std::string join_lines(const std::vector<std::string_view>& lines) {
  std::string text;
  for (std::string_view line : lines) {
    const std::string_view trimmed = trim(line);
    if (trimmed.empty()) continue;
    if (!text.empty()) text += ' ';
    text += trimmed;
  }
  return text;
}


}  // namespace

// Turns torch's error text into one readable line (error replies on the wire are one line).
// Torch's messages come in three shapes:
//  1. a plain message, possibly several lines ("forward() is missing value for argument 'x'.
//     Declaration: forward(...)"): kept whole, lines joined;
//  2. an error raised while running TorchScript code: "The following operation failed in the
//     TorchScript interpreter.", then one or two "Traceback of TorchScript ..." blocks of echoed
//     code, then the exception ("RuntimeError: the reason"): the exception is kept, with the
//     innermost source location of the last traceback ("<string>", line 3, in forward);
//  3. a compile error: "reason:", then '  File "<string>", line N', the echoed code around a
//     "~~~ <--- HERE" marker and possibly the callers being compiled: the reason and the line
//     are kept, the rest is dropped.
// The C++ backtrace is already gone (what_without_backtrace). The result is capped in length.
std::string summarize_torch_error(std::string_view text) {
  const std::vector<std::string_view> lines = split_lines(text);
  std::string summary;
  std::size_t last_traceback = lines.size();
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (trim(lines[i]).starts_with("Traceback of TorchScript")) last_traceback = i;
  }
  if (last_traceback < lines.size()) {
    // Shape 2.
    std::size_t exception = lines.size();
    std::string_view location;
    for (std::size_t i = last_traceback + 1; i < lines.size(); ++i) {
      if (!is_indented(lines[i]) && is_exception_line(lines[i])) {
        exception = i;
        break;
      }
      const std::string_view trimmed = trim(lines[i]);
      if (trimmed.starts_with("File ")) location = trimmed.substr(5);
    }
    if (exception < lines.size()) {
      summary = join_lines({lines.begin() + static_cast<std::ptrdiff_t>(exception), lines.end()});
      if (!location.empty()) summary += " (at " + std::string(location) + ")";
    }
  } else {
    // Shapes 1 and 3. Everything from the first "File" line on is echoed code (with context
    // before and after the "<--- HERE" marker) or the chain of callers being compiled.
    std::vector<std::string_view> kept;
    std::string where;
    for (std::string_view line : lines) {
      const std::string_view trimmed = trim(line);
      if (trimmed.starts_with("File \"")) {
        const auto at = trimmed.find(", line ");
        if (at != std::string_view::npos) where = trimmed.substr(at + 2);
        break;
      }
      kept.push_back(trimmed);
    }
    summary = join_lines(kept);
    if (!where.empty()) {
      if (summary.ends_with(':')) summary.pop_back();
      summary += " (at " + where + ")";
    }
  }
  if (summary.empty()) summary = join_lines(lines);
  if (summary.size() > kMaxMessageLength) {
    summary.resize(kMaxMessageLength - 3);
    summary += "...";
  }
  return summary;
}

std::string describe(const std::exception& error) {
  if (const auto* torch_error = dynamic_cast<const c10::Error*>(&error)) {
    return summarize_torch_error(torch_error->what_without_backtrace());
  }
  return summarize_torch_error(error.what());
}

// ---- Types and devices ------------------------------------------------------------------------

std::optional<c10::ScalarType> torch_type(DType type) {
  switch (type) {
    case DType::kFloat32:
      return c10::ScalarType::Float;
    case DType::kFloat64:
      return c10::ScalarType::Double;
    case DType::kInt8:
      return c10::ScalarType::Char;
    case DType::kInt16:
      return c10::ScalarType::Short;
    case DType::kInt32:
      return c10::ScalarType::Int;
    case DType::kInt64:
      return c10::ScalarType::Long;
    case DType::kUInt8:
      return c10::ScalarType::Byte;
    case DType::kBool:
      return c10::ScalarType::Bool;
    case DType::kUInt16:
    case DType::kUInt32:
    case DType::kUInt64:
      return std::nullopt;  // libtorch 1.13 has no uint16, uint32 or uint64
  }
  return std::nullopt;
}

std::optional<DType> slipstream_type(c10::ScalarType type) {
  switch (type) {
    case c10::ScalarType::Float:
      return DType::kFloat32;
    case c10::ScalarType::Double:
      return DType::kFloat64;
    case c10::ScalarType::Char:
      return DType::kInt8;
    case c10::ScalarType::Short:
      return DType::kInt16;
    case c10::ScalarType::Int:
      return DType::kInt32;
    case c10::ScalarType::Long:
      return DType::kInt64;
    case c10::ScalarType::Byte:
      return DType::kUInt8;
    case c10::ScalarType::Bool:
      return DType::kBool;
    default:
      return std::nullopt;
  }
}

c10::Device torch_device(const Device& device) {
  if (device.kind == Device::Kind::kCpu) return c10::Device(c10::DeviceType::CPU);
  return c10::Device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(device.index));
}

// ---- Inputs and outputs -----------------------------------------------------------------------

// Wraps the caller's buffers as tensors. On the CPU nothing is copied: torch reads the caller's
// memory directly. from_blob wants a mutable pointer; the tensors are only read (run() holds an
// InferenceMode guard and TorchScript models do not write their inputs; one that did, with an
// in-place op on an argument, would write into the caller's buffer). On a GPU each input is
// copied to the device.
Status wrap_inputs(std::span<const TensorView> inputs, const c10::Device& device,
                   std::vector<at::Tensor>& tensors) {
  tensors.clear();
  tensors.reserve(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const TensorView& view = inputs[i];
    const auto type = torch_type(view.dtype);
    if (!type) {
      return Status::failure("input " + std::to_string(i) + " is " +
                             std::string(dtype_name(view.dtype)) +
                             ", which libtorch does not support");
    }
    std::size_t count = 1;
    for (const std::int64_t dimension : view.shape) {
      if (dimension < 0 ||
          __builtin_mul_overflow(count, static_cast<std::size_t>(dimension), &count)) {
        return Status::failure("input " + std::to_string(i) + " has an invalid shape " +
                               shape_text(view.shape));
      }
    }
    std::size_t needed = 0;
    if (__builtin_mul_overflow(count, dtype_size(view.dtype), &needed) || needed != view.bytes) {
      return Status::failure("input " + std::to_string(i) + " has " + std::to_string(view.bytes) +
                             " bytes but a " + std::string(dtype_name(view.dtype)) +
                             " tensor of shape " + shape_text(view.shape) + " needs " +
                             std::to_string(count * dtype_size(view.dtype)));
    }
    if (needed > 0 && view.data == nullptr) {
      return Status::failure("input " + std::to_string(i) + " has a null data pointer");
    }
    const at::IntArrayRef sizes(view.shape.data(), view.shape.size());
    const auto options = at::TensorOptions().dtype(*type);
    at::Tensor tensor = needed == 0 ? at::empty(sizes, options)
                                    : at::from_blob(const_cast<void*>(view.data), sizes, options);
    if (!device.is_cpu()) tensor = tensor.to(device);
    tensors.push_back(std::move(tensor));
  }
  return Status::success();
}

// Appends the tensors of `value` in order: a tensor, or a tuple or list (possibly nested) of them.
Status flatten(const c10::IValue& value, std::vector<at::Tensor>& tensors) {
  if (value.isTensor()) {
    tensors.push_back(value.toTensor());
    return Status::success();
  }
  if (value.isTuple()) {
    for (const c10::IValue& element : value.toTupleRef().elements()) {
      if (Status status = flatten(element, tensors); !status.ok) return status;
    }
    return Status::success();
  }
  if (value.isList()) {
    for (const c10::IValue& element : value.toListRef()) {
      if (Status status = flatten(element, tensors); !status.ok) return status;
    }
    return Status::success();
  }
  return Status::failure("the result holds a " + std::string(value.tagKind()) +
                         " where a tensor (or a tuple or list of tensors) was expected");
}

// Copies each result tensor into a row-major OwnedTensor on the host.
Status copy_outputs(const c10::IValue& result, std::vector<OwnedTensor>& outputs) {
  std::vector<at::Tensor> tensors;
  if (Status status = flatten(result, tensors); !status.ok) return status;
  outputs.clear();
  outputs.reserve(tensors.size());
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    at::Tensor tensor = tensors[i];
    const auto type = slipstream_type(tensor.scalar_type());
    if (!type) {
      outputs.clear();
      return Status::failure("output " + std::to_string(i) + " has dtype " +
                             std::string(c10::toString(tensor.scalar_type())) +
                             ", which slipstream tensors cannot hold (FLOAT, DOUBLE, INT8, INT16, "
                             "INT32, INT64, UINT8 or BOOL)");
    }
    if (!tensor.device().is_cpu()) tensor = tensor.to(c10::DeviceType::CPU);
    tensor = tensor.contiguous();
    OwnedTensor& output = outputs.emplace_back();
    output.dtype = *type;
    output.shape.assign(tensor.sizes().begin(), tensor.sizes().end());
    const std::size_t bytes = tensor.numel() * tensor.element_size();
    output.data = Buffer::uninitialized(bytes);
    if (bytes > 0) std::memcpy(output.data.data(), tensor.data_ptr(), bytes);
  }
  return Status::success();
}


}  // namespace slipstream::ml
