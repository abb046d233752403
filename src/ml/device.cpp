// Device strings ("CPU", "GPU", "GPU:n") for models and scripts (see backend.hpp). Torch-free, so
// the server and tests can parse devices without libtorch.
#include <strings.h>

#include <charconv>

#include "ml/backend.hpp"

namespace slipstream::ml {
namespace {

bool equals_ignoring_case(std::string_view text, std::string_view word) {
  return text.size() == word.size() && strncasecmp(text.data(), word.data(), word.size()) == 0;
}

}  // namespace

std::string Device::str() const {
  return kind == Kind::kCpu ? std::string("CPU") : "GPU:" + std::to_string(index);
}

std::optional<Device> parse_device(std::string_view text) {
  // RedisAI also accepts "CPU:n" (the ordinal is meaningless for a CPU); so do we.
  if (text.size() < 3) return std::nullopt;
  Device device;
  if (equals_ignoring_case(text.substr(0, 3), "GPU")) {
    device.kind = Device::Kind::kGpu;
  } else if (!equals_ignoring_case(text.substr(0, 3), "CPU")) {
    return std::nullopt;
  }
  std::string_view rest = text.substr(3);
  if (rest.empty()) return device;
  if (rest.front() != ':') return std::nullopt;
  rest.remove_prefix(1);
  // Digits only: from_chars accepts a leading '-'; "GPU:" alone is malformed.
  if (rest.empty() || rest.size() > 9 || rest.front() < '0' || rest.front() > '9') {
    return std::nullopt;
  }
  int index = 0;
  const auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), index);
  if (error != std::errc() || end != rest.data() + rest.size()) return std::nullopt;
  if (device.kind == Device::Kind::kGpu) device.index = index;
  return device;
}

std::string_view backend_name(ModelFormat format) {
  return format == ModelFormat::kOnnx ? "ONNX" : "TORCH";
}

std::optional<ModelFormat> parse_backend_name(std::string_view name) {
  if (equals_ignoring_case(name, "TORCH")) return ModelFormat::kTorchScript;
  if (equals_ignoring_case(name, "ONNX")) return ModelFormat::kOnnx;
  return std::nullopt;
}

ModelFormat sniff_model_format(std::string_view bytes) {
  return bytes.starts_with("PK\x03\x04") ? ModelFormat::kTorchScript : ModelFormat::kOnnx;
}

}  // namespace slipstream::ml
