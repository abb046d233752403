// The TorchScript backend (see backend.hpp): models loaded from serialized archives, scripts
// compiled from source, both run over libtorch. The only file of the project that includes torch.
#include <ATen/Parallel.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/from_blob.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/InferenceMode.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <caffe2/serialize/inline_container.h>
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
#include <optional>
#include <stdexcept>
#include <unordered_set>

#include "ml/backend.hpp"
#include "ml/operator_policy.hpp"
#include "ml/pickle_check.hpp"
#include "ml/torch_interop.hpp"
#ifdef SLIPSTREAM_HAVE_ONNX
#include "ml/onnx/lower.hpp"
#endif

namespace slipstream::ml {
namespace {

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

  std::shared_ptr<Model> load_model(std::string_view bytes, ModelFormat format,
                                    const Device& device, std::string* error) override {
    if (Status status = check_device(device); !status.ok) return fail(status.message, error);
    if (format == ModelFormat::kOnnx) return load_onnx_model(bytes, device, error);
    try {
      if (auto problem = check_archive_pickles(bytes)) return fail(*problem, error);
      torch::jit::Module module =
          torch::jit::load(std::make_shared<ByteReader>(bytes), torch_device(device));
      module.eval();
      if (!module.find_method("forward")) {
        return fail("the TorchScript module has no forward method", error);
      }
      if (check_operators_) {
        if (auto problem = check_module_operators(module)) return fail(*problem, error);
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
  // ONNX models are lowered to a TorchScript module (onnx/lower.hpp) and run as one. The code the
  // lowering writes is the lowering's own, never text from the model, so the operator check that
  // guards uploaded TorchScript does not apply to it.
  std::shared_ptr<Model> load_onnx_model(std::string_view bytes, const Device& device,
                                         std::string* error) {
#ifdef SLIPSTREAM_HAVE_ONNX
    try {
      torch::jit::Module module = onnx_import::lower_model(bytes);
      if (device.kind != Device::Kind::kCpu) module.to(torch_device(device));
      module.eval();
      return std::make_shared<TorchModel>(module, device);
    } catch (const std::exception& exception) {
      return fail(describe(exception), error);
    }
#else
    (void)bytes;
    (void)device;
    return fail("this build has no ONNX support (libonnx was not found when it was built)", error);
#endif
  }

  static std::nullptr_t fail(std::string message, std::string* error) {
    if (error != nullptr) *error = std::move(message);
    return nullptr;
  }

  const bool check_operators_;
};

}  // namespace

// ---- Checks of stored code (torch_interop.hpp) ------------------------------------------------

// Every pickle of the archive is checked before libtorch unpickles it: its unpickler allocates
// whatever length a string opcode declares (pickle_check.hpp).
std::optional<std::string> check_archive_pickles(std::string_view bytes) {
  caffe2::serialize::PyTorchStreamReader archive(std::make_shared<ByteReader>(bytes));
  for (const std::string& name : archive.getAllRecords()) {
    if (!name.ends_with("pkl")) continue;
    auto [data, size] = archive.getRecord(name);
    if (auto problem = check_pickle_bounds({static_cast<const char*>(data.get()), size})) {
      return "invalid model archive: " + name + ": " + *problem;
    }
  }
  return std::nullopt;
}

std::optional<std::string> check_module_operators(const torch::jit::Module& module) {
  return OperatorChecker().check(module);
}

torch::jit::Module load_checked_module(std::string_view bytes) {
  if (auto problem = check_archive_pickles(bytes)) throw std::invalid_argument(*problem);
  torch::jit::Module module =
      torch::jit::load(std::make_shared<ByteReader>(bytes), c10::Device(c10::kCPU));
  if (auto problem = check_module_operators(module)) throw std::invalid_argument(*problem);
  return module;
}

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
