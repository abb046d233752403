// The machine-learning backend interface: load a model or script from bytes, run it on tensors,
// report errors as values. The server and LocalModel see only this header; the TorchScript
// implementation (torch_backend.cpp) is the only code that includes libtorch headers.
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/shape_text.hpp"

#include "common/buffer.hpp"
#include "slipstream/tensor.hpp"

namespace slipstream::ml {

/// Where a model runs. Parsed from "CPU", "GPU" or "GPU:n" (case-insensitive).
struct Device {
  enum class Kind : std::uint8_t { kCpu, kGpu };
  Kind kind = Kind::kCpu;
  int index = 0;  ///< GPU ordinal; 0 for CPU

  /// "CPU", "GPU:0", ...
  std::string str() const;
  bool operator==(const Device&) const = default;
};

/// Parses a device string; nullopt when malformed ("TPU", "GPU:x", "GPU:-1").
std::optional<Device> parse_device(std::string_view text);

/// What a stored model's bytes are: a TorchScript archive (RedisAI's TORCH backend) or an ONNX
/// ModelProto (ONNX), which the TorchScript backend lowers to TorchScript when it loads it.
enum class ModelFormat : std::uint8_t { kTorchScript, kOnnx };

/// "TORCH" or "ONNX" (RedisAI's backend names).
std::string_view backend_name(ModelFormat format);
/// The format of a RedisAI backend name (case-insensitive); nullopt for others (TF, TFLITE).
std::optional<ModelFormat> parse_backend_name(std::string_view name);
/// The format `bytes` look like: a zip archive is TorchScript, anything else is taken for ONNX.
ModelFormat sniff_model_format(std::string_view bytes);


/// A tensor the caller owns, borrowed for one call. Row-major.
struct TensorView {
  DType dtype = DType::kFloat32;
  std::span<const std::int64_t> shape;
  const void* data = nullptr;
  std::size_t bytes = 0;
  /// A sealed memory file that holds these bytes at `file_offset` (a shared-memory segment the
  /// caller keeps open for the call), or -1. A backend in another process may map it instead of
  /// copying the bytes; the sandboxed one does (channel.hpp).
  int file = -1;
  std::uint64_t file_offset = 0;
};

/// A tensor produced by a backend. Row-major, owned.
struct OwnedTensor {
  DType dtype = DType::kFloat32;
  std::vector<std::int64_t> shape;
  Buffer data;
};

/// Success, or a message saying what went wrong (the backend's own text where it has one).
struct Status {
  bool ok = true;
  std::string message;
  bool timed_out = false;  ///< the run was stopped at its deadline (RunLimits)
  static Status success() { return {}; }
  static Status failure(std::string text) { return {false, std::move(text)}; }
  static Status timeout(std::string text) { return {false, std::move(text), true}; }
};

/// Bounds on one run. A backend that can stop a run (the sandboxed one: it kills the process
/// running it) returns Status::timeout once `deadline` has passed; the in-process TorchScript
/// backend cannot interrupt libtorch and ignores it.
struct RunLimits {
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  /// Most bytes the outputs may hold together (what --maxmemory leaves free when the run
  /// starts). The sandboxed backend refuses larger outputs from their sizes, before it receives
  /// their bytes; the in-process backend cannot and leaves the check to the caller.
  std::uint64_t max_output_bytes = std::numeric_limits<std::uint64_t>::max();
};

/// A loaded model. Thread-safe: run() may be called concurrently from several threads.
class Model {
 public:
  virtual ~Model() = default;
  /// Runs the model's forward method on `inputs`; on success `outputs` holds one tensor per
  /// model output (a tuple or list output is flattened in order). On failure `outputs` is left
  /// empty and the status quotes the backend's message.
  virtual Status run(std::span<const TensorView> inputs, std::vector<OwnedTensor>& outputs,
                     const RunLimits& limits = {}) = 0;
  virtual const Device& device() const = 0;
};

/// A loaded script: a set of named functions. Thread-safe like Model.
class Script {
 public:
  virtual ~Script() = default;
  /// True when the script defines `function`.
  virtual bool has_function(std::string_view function) const = 0;
  /// Names of the functions the script defines.
  virtual std::vector<std::string> functions() const = 0;
  /// Calls `function`. When its first parameter is a List[Tensor] it is called RedisAI-1.2 style
  /// as f(tensors, keys, args) with `keys` and `args` as List[str]; otherwise the tensors are
  /// passed as positional arguments (the older AI.SCRIPTRUN convention).
  virtual Status run(std::string_view function, std::span<const TensorView> inputs,
                     std::span<const std::string> keys, std::span<const std::string> args,
                     std::vector<OwnedTensor>& outputs, const RunLimits& limits = {}) = 0;
  virtual const Device& device() const = 0;
};

/// A backend (TorchScript, which also runs ONNX models lowered to it). Thread-safe.
class Backend {
 public:
  virtual ~Backend() = default;
  /// "TORCH".
  virtual std::string_view name() const = 0;
  /// Checks that `device` can be used (a GPU needs CUDA support and that device present).
  virtual Status check_device(const Device& device) const = 0;
  /// Loads a serialized model: a TorchScript archive, or an ONNX model lowered to TorchScript.
  /// Returns null and sets `error` on failure.
  virtual std::shared_ptr<Model> load_model(std::string_view bytes, ModelFormat format,
                                            const Device& device, std::string* error) = 0;
  /// Compiles a script from source. Returns null and sets `error` on failure.
  virtual std::shared_ptr<Script> load_script(std::string_view source, const Device& device,
                                              std::string* error) = 0;
  /// Over the backend's life: inputs that reached another process mapped from their sealed
  /// memory file rather than copied (TensorView::file), outputs that came back as memory files
  /// rather than through a socket, and their bytes.
  struct FileCounters {
    std::uint64_t inputs = 0, input_bytes = 0;
    std::uint64_t outputs = 0, output_bytes = 0;
  };
  virtual FileCounters file_counters() const { return {}; }
  /// Stops whatever runs and loads are in progress (they fail promptly) and refuses new ones.
  /// Called once when the server shuts down, before the executor threads are joined, so that a
  /// run that never ends cannot hold the process. Thread-safe.
  virtual void shutdown() {}
};

/// Thread settings of the TorchScript backend (0 = the library's default).
struct TorchOptions {
  int intra_op_threads = 0;
  int inter_op_threads = 0;
  /// Refuse, at load time, models and scripts whose code calls an operator outside the allowed
  /// set (see operator_policy.hpp): no file, process or foreign-library operators. The server's
  /// model sandbox turns this on; LocalModel (the caller's own models, in the caller's process)
  /// leaves it off.
  bool check_operators = false;
};

/// The TorchScript backend over libtorch. Thread counts are process-wide in libtorch: the first
/// call sets them.
std::shared_ptr<Backend> make_torch_backend(const TorchOptions& options = {});

}  // namespace slipstream::ml
