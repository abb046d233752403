// The TorchScript backend (see backend.hpp): models loaded from serialized archives, scripts
// compiled from source, both run over libtorch. The only file of the project that includes torch.
#include <ATen/Parallel.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/from_blob.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/InferenceMode.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <caffe2/serialize/read_adapter_interface.h>
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/serialization/import.h>
#include <torch/cuda.h>
#include <torch/jit.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <mutex>
#include <unordered_set>

#include "ml/backend.hpp"
#include "ml/operator_policy.hpp"

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
      return std::nullopt;  // libtorch 1.13 has no uint16
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

std::string shape_text(std::span<const std::int64_t> shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(shape[i]);
  }
  return text + "]";
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

// Runs `call` (which returns the function's IValue result) with inference settings and the device
// selected, and converts the result; a torch exception becomes a failed Status.
template <typename Call>
Status run_guarded(const c10::Device& device, std::vector<OwnedTensor>& outputs, Call call) {
  outputs.clear();
  try {
    c10::InferenceMode inference;
    std::optional<c10::DeviceGuard> device_guard;
    if (!device.is_cpu()) device_guard.emplace(device);
    const c10::IValue result = call();
    Status status = copy_outputs(result, outputs);
    if (!status.ok) outputs.clear();
    return status;
  } catch (const std::exception& error) {
    outputs.clear();
    return Status::failure(describe(error));
  }
}

// Reads a serialized archive straight from the caller's bytes (no copy into a stream).
class ByteReader final : public caffe2::serialize::ReadAdapterInterface {
 public:
  explicit ByteReader(std::string_view bytes) : bytes_(bytes) {}
  std::size_t size() const override { return bytes_.size(); }
  std::size_t read(std::uint64_t position, void* buffer, std::size_t count,
                   const char* /*what*/) const override {
    if (position >= bytes_.size()) return 0;
    count = std::min<std::size_t>(count, bytes_.size() - position);
    std::memcpy(buffer, bytes_.data() + position, count);
    return count;
  }

 private:
  std::string_view bytes_;
};

// ---- Operator policy --------------------------------------------------------------------------

// Walks every node of a function's graph, nested blocks (if/loop bodies) and subgraphs included,
// and returns the first one the policy refuses (operator_policy.hpp).
class OperatorChecker {
 public:
  // Checks every function of `unit`: free functions, methods of every class and module type,
  // hooks. Functions called from another (prim::CallFunction / CallMethod) are in the same unit,
  // so checking all of them covers what a call can reach.
  std::optional<std::string> check(const torch::jit::CompilationUnit& unit) {
    for (const torch::jit::Function* function : unit.get_functions()) {
      if (auto problem = check(*function)) return problem;
    }
    return std::nullopt;
  }

  std::optional<std::string> check(const torch::jit::Module& module) {
    if (auto problem = check(*module._ivalue()->compilation_unit())) return problem;
    // Methods reachable from the module objects themselves (normally already in the unit).
    for (const torch::jit::Module& sub : module.modules()) {
      for (const torch::jit::Function* method : sub.type()->methods()) {
        if (auto problem = check(*method)) return problem;
      }
    }
    return std::nullopt;
  }

 private:
  std::optional<std::string> check(const torch::jit::Function& function) {
    if (!function.isGraphFunction()) return std::nullopt;  // a builtin: libtorch's own code
    if (!visited_.insert(&function).second) return std::nullopt;
    const auto graph = torch::jit::toGraphFunction(function).graph();
    return check_block(*graph->block(), function.qualname().qualifiedName());
  }

  std::optional<std::string> check_block(const torch::jit::Block& block,
                                         const std::string& where) {
    for (const torch::jit::Node* node : block.nodes()) {
      const std::string op = node->kind().toQualString();
      if (auto reason = refused_operator_reason(op)) {
        return "the code calls " + op + " (in " + where + "), which stored models and scripts " +
               "may not use: " + *reason;
      }
      for (const torch::jit::Block* inner : node->blocks()) {
        if (auto problem = check_block(*inner, where)) return problem;
      }
      if (node->hasAttribute(torch::jit::attr::Subgraph)) {
        const auto subgraph = node->g(torch::jit::attr::Subgraph);
        if (auto problem = check_block(*subgraph->block(), where)) return problem;
      }
    }
    return std::nullopt;
  }

  std::unordered_set<const torch::jit::Function*> visited_;
};

// ---- Models and scripts -----------------------------------------------------------------------

// Thread-safety: every run() calls the one shared module's forward method. TorchScript's graph
// executor is safe to run concurrently on a module in eval mode (its plan cache is locked), so no
// per-call clone is made; the only unsafe case would be a model whose forward assigns to its own
// attributes, which inference models do not do.
class TorchModel final : public Model {
 public:
  // Module is a handle: copying it shares the loaded module.
  TorchModel(const torch::jit::Module& module, const Device& device)
      : module_(module),
        forward_(module_.get_method("forward")),
        device_(device),
        torch_device_(torch_device(device)) {}

  Status run(std::span<const TensorView> inputs, std::vector<OwnedTensor>& outputs,
             const RunLimits& /*limits: libtorch cannot be interrupted*/) override {
    return run_guarded(torch_device_, outputs, [&] {
      std::vector<at::Tensor> tensors;
      if (Status status = wrap_inputs(inputs, torch_device_, tensors); !status.ok) {
        throw std::invalid_argument(status.message);
      }
      std::vector<c10::IValue> stack(tensors.begin(), tensors.end());
      return forward_(std::move(stack));
    });
  }

  const Device& device() const override { return device_; }

 private:
  torch::jit::Module module_;
  torch::jit::Method forward_;
  Device device_;
  c10::Device torch_device_;
};

// Thread-safety as TorchModel: functions of the compilation unit are only looked up and run.
class TorchScriptFunctions final : public Script {
 public:
  TorchScriptFunctions(std::shared_ptr<torch::jit::CompilationUnit> unit, const Device& device)
      : unit_(std::move(unit)), device_(device), torch_device_(torch_device(device)) {}

  bool has_function(std::string_view function) const override { return find(function) != nullptr; }

  std::vector<std::string> functions() const override {
    std::vector<std::string> names;
    for (const torch::jit::Function* function : unit_->get_functions()) {
      names.push_back(function->name());
    }
    return names;
  }

  Status run(std::string_view function, std::span<const TensorView> inputs,
             std::span<const std::string> keys, std::span<const std::string> args,
             std::vector<OwnedTensor>& outputs, const RunLimits& /*limits*/) override {
    torch::jit::Function* callee = find(function);
    if (callee == nullptr) {
      outputs.clear();
      return Status::failure("the script has no function '" + std::string(function) + "'");
    }
    return run_guarded(torch_device_, outputs, [&] {
      std::vector<at::Tensor> tensors;
      if (Status status = wrap_inputs(inputs, torch_device_, tensors); !status.ok) {
        throw std::invalid_argument(status.message);
      }
      std::vector<c10::IValue> stack;
      if (takes_tensor_list(*callee)) {
        stack.emplace_back(c10::List<at::Tensor>(tensors));
        stack.emplace_back(
            c10::List<std::string>(std::vector<std::string>(keys.begin(), keys.end())));
        stack.emplace_back(
            c10::List<std::string>(std::vector<std::string>(args.begin(), args.end())));
      } else {
        stack.assign(tensors.begin(), tensors.end());
      }
      return (*callee)(std::move(stack));
    });
  }

  const Device& device() const override { return device_; }

 private:
  torch::jit::Function* find(std::string_view function) const {
    if (function.empty()) return nullptr;
    try {
      return unit_->find_function(c10::QualifiedName(std::string(function)));
    } catch (const std::exception&) {
      return nullptr;  // a name QualifiedName refuses ("a..b") names no function
    }
  }

  // RedisAI 1.2 entry points are f(tensors: List[Tensor], keys: List[str], args: List[str]).
  static bool takes_tensor_list(const torch::jit::Function& function) {
    const auto& arguments = function.getSchema().arguments();
    return !arguments.empty() && *arguments.front().type() == *c10::ListType::ofTensors();
  }

  std::shared_ptr<torch::jit::CompilationUnit> unit_;
  Device device_;
  c10::Device torch_device_;
};

class TorchBackend final : public Backend {
 public:
  explicit TorchBackend(bool check_operators) : check_operators_(check_operators) {}

  std::string_view name() const override { return "TORCH"; }

  Status check_device(const Device& device) const override {
    if (device.kind == Device::Kind::kCpu) return Status::success();
    const std::string requested = device.str() + " requested but ";
    // libtorch_cuda registers the CUDA device guard when it is loaded: without it the build is
    // CPU-only, whatever hardware the machine has.
    if (!c10::impl::hasDeviceGuardImpl(c10::DeviceType::CUDA)) {
      return Status::failure(requested + "this libtorch build has no CUDA support");
    }
    const std::size_t count = torch::cuda::device_count();
    if (count == 0) return Status::failure(requested + "no CUDA device is visible");
    if (static_cast<std::size_t>(device.index) >= count) {
      return Status::failure(requested + "only " + std::to_string(count) +
                             (count == 1 ? " GPU is" : " GPUs are") + " present");
    }
    return Status::success();
  }

  std::shared_ptr<Model> load_model(std::string_view bytes, const Device& device,
                                    std::string* error) override {
    if (Status status = check_device(device); !status.ok) return fail(status.message, error);
    try {
      torch::jit::Module module =
          torch::jit::load(std::make_shared<ByteReader>(bytes), torch_device(device));
      module.eval();
      if (!module.find_method("forward")) {
        return fail("the TorchScript module has no forward method", error);
      }
      if (check_operators_) {
        if (auto problem = OperatorChecker().check(module)) return fail(*problem, error);
      }
      return std::make_shared<TorchModel>(module, device);
    } catch (const std::exception& exception) {
      return fail(describe(exception), error);
    }
  }

  std::shared_ptr<Script> load_script(std::string_view source, const Device& device,
                                      std::string* error) override {
    if (Status status = check_device(device); !status.ok) return fail(status.message, error);
    try {
      std::shared_ptr<torch::jit::CompilationUnit> unit = torch::jit::compile(std::string(source));
      if (check_operators_) {
        if (auto problem = OperatorChecker().check(*unit)) return fail(*problem, error);
      }
      return std::make_shared<TorchScriptFunctions>(std::move(unit), device);
    } catch (const std::exception& exception) {
      return fail(describe(exception), error);
    }
  }

 private:
  static std::nullptr_t fail(std::string message, std::string* error) {
    if (error != nullptr) *error = std::move(message);
    return nullptr;
  }

  const bool check_operators_;
};

}  // namespace

std::shared_ptr<Backend> make_torch_backend(const TorchOptions& options) {
  // Thread counts are process-wide; the inter-op pool can be sized only before it first runs, so
  // the first backend made decides and later options are ignored.
  static std::once_flag threads_set;
  std::call_once(threads_set, [&] {
    try {
      if (options.intra_op_threads > 0) at::set_num_threads(options.intra_op_threads);
      if (options.inter_op_threads > 0) at::set_num_interop_threads(options.inter_op_threads);
    } catch (const std::exception&) {
      // Parallel work already started (for instance another library used torch first): the
      // library's defaults stay.
    }
  });
  return std::make_shared<TorchBackend>(options.check_operators);
}

}  // namespace slipstream::ml
