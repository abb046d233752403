// The ONNX backend against ONNX's own conformance data (Debian's libonnx-testdata): every test
// model of node/ (one operator each), pytorch-operator/ and pytorch-converted/ (models exported
// from PyTorch) and simple/ is stored through the TorchScript backend as an ONNX model and run on
// its test inputs. Each must either give ONNX's expected outputs (ONNX's own tolerances: within
// 1e-3 relative and 1e-7 absolute, exact for integers and booleans), or be refused when it is
// loaded with a message that names what is not supported. A model that loads and then fails or
// answers wrongly is a failure: an ONNX model is refused at store time, never at run time.
//
// SLIPSTREAM_ONNX_TESTDATA overrides the data folder (default /usr/share/libonnx-testdata/data);
// the test skips where it is absent.
#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "ml/backend.hpp"

namespace slipstream::ml {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

fs::path data_folder() {
  const char* set = std::getenv("SLIPSTREAM_ONNX_TESTDATA");
  return set != nullptr ? fs::path(set) : fs::path("/usr/share/libonnx-testdata/data");
}

// A TensorProto's values as an owned tensor of ours; nullopt for element types we do not carry.
struct Loaded {
  DType dtype;
  std::vector<std::int64_t> shape;
  std::string bytes;
};

std::optional<Loaded> load_tensor(const onnx::TensorProto& proto) {
  Loaded out;
  std::size_t size = 0;
  switch (proto.data_type()) {
    case onnx::TensorProto::FLOAT: out.dtype = DType::kFloat32; size = 4; break;
    case onnx::TensorProto::DOUBLE: out.dtype = DType::kFloat64; size = 8; break;
    case onnx::TensorProto::INT8: out.dtype = DType::kInt8; size = 1; break;
    case onnx::TensorProto::INT16: out.dtype = DType::kInt16; size = 2; break;
    case onnx::TensorProto::INT32: out.dtype = DType::kInt32; size = 4; break;
    case onnx::TensorProto::INT64: out.dtype = DType::kInt64; size = 8; break;
    case onnx::TensorProto::UINT8: out.dtype = DType::kUInt8; size = 1; break;
    case onnx::TensorProto::BOOL: out.dtype = DType::kBool; size = 1; break;
    default: return std::nullopt;
  }
  std::size_t count = 1;
  for (std::int64_t d : proto.dims()) {
    out.shape.push_back(d);
    count *= static_cast<std::size_t>(d);
  }
  if (proto.has_raw_data()) {
    out.bytes = proto.raw_data();
  } else {
    out.bytes.resize(count * size);
    char* to = out.bytes.data();
    for (std::size_t k = 0; k < count; ++k) {
      const int i = static_cast<int>(k);
      switch (proto.data_type()) {
        case onnx::TensorProto::FLOAT: std::memcpy(to + k * 4, &proto.float_data()[i], 4); break;
        case onnx::TensorProto::DOUBLE: std::memcpy(to + k * 8, &proto.double_data()[i], 8); break;
        case onnx::TensorProto::INT64: std::memcpy(to + k * 8, &proto.int64_data()[i], 8); break;
        default: {
          const std::int32_t v = proto.int32_data()[i];
          if (size == 4) std::memcpy(to + k * 4, &v, 4);
          if (size == 2) {
            const auto narrow = static_cast<std::int16_t>(v);
            std::memcpy(to + k * 2, &narrow, 2);
          }
          if (size == 1) to[k] = static_cast<char>(v);
        }
      }
    }
  }
  if (out.bytes.size() != count * size) return std::nullopt;
  return out;
}

double value_at(const void* data, DType dtype, std::size_t k) {
  switch (dtype) {
    case DType::kFloat32: return static_cast<const float*>(data)[k];
    case DType::kFloat64: return static_cast<const double*>(data)[k];
    case DType::kInt8: return static_cast<const std::int8_t*>(data)[k];
    case DType::kInt16: return static_cast<const std::int16_t*>(data)[k];
    case DType::kInt32: return static_cast<const std::int32_t*>(data)[k];
    case DType::kInt64: return static_cast<double>(static_cast<const std::int64_t*>(data)[k]);
    case DType::kUInt8: return static_cast<const std::uint8_t*>(data)[k];
    case DType::kBool: return static_cast<const std::uint8_t*>(data)[k] != 0;
    default: return 0;
  }
}

// "" when `got` matches `expected`, else what differs.
std::string compare(const OwnedTensor& got, const Loaded& expected) {
  if (got.dtype != expected.dtype) {
    return "dtype " + std::to_string(static_cast<int>(got.dtype)) + " instead of " +
           std::to_string(static_cast<int>(expected.dtype));
  }
  if (got.shape != expected.shape) {
    std::ostringstream text;
    text << "shape [";
    for (auto d : got.shape) text << d << " ";
    text << "] instead of [";
    for (auto d : expected.shape) text << d << " ";
    text << "]";
    return text.str();
  }
  const std::size_t count = expected.bytes.size() / dtype_size(expected.dtype);
  const bool exact = expected.dtype != DType::kFloat32 && expected.dtype != DType::kFloat64;
  for (std::size_t k = 0; k < count; ++k) {
    const double a = value_at(got.data.data(), got.dtype, k);
    const double b = value_at(expected.bytes.data(), expected.dtype, k);
    if (std::isnan(a) && std::isnan(b)) continue;
    if (exact ? a != b : !(std::abs(a - b) <= 1e-7 + 1e-3 * std::abs(b) || a == b)) {
      return "element " + std::to_string(k) + ": " + std::to_string(a) + " instead of " +
             std::to_string(b);
    }
  }
  return "";
}

struct Outcome {
  enum Kind { kPassed, kRefused, kFailed } kind;
  std::string detail;
};

Outcome run_case(Backend& backend, const fs::path& folder) {
  std::string error;
  auto model = backend.load_model(read_file(folder / "model.onnx"), ModelFormat::kOnnx,
                                  Device{}, &error);
  if (!model) {
    // A refusal must say what: a node and its operator, or what of the model. Never a bug of
    // the lowering (TorchScript refusing what it wrote).
    if (error.find("a bug of the ONNX backend") != std::string::npos) return {Outcome::kFailed, error};
    return {Outcome::kRefused, error};
  }
  int sets = 0;
  for (const auto& entry : fs::directory_iterator(folder)) {
    if (!entry.is_directory() || !entry.path().filename().string().starts_with("test_data_set")) {
      continue;
    }
    ++sets;
    std::vector<Loaded> inputs, outputs;
    for (const char* kind : {"input", "output"}) {
      for (int k = 0;; ++k) {
        const fs::path file = entry.path() / (std::string(kind) + "_" + std::to_string(k) + ".pb");
        if (!fs::exists(file)) break;
        onnx::TensorProto proto;
        if (!proto.ParseFromString(read_file(file))) {
          return {Outcome::kRefused, "test data is not a tensor (a sequence or map): " + file.string()};
        }
        auto loaded = load_tensor(proto);
        if (!loaded) return {Outcome::kRefused, "test data of an element type we do not carry"};
        (std::string(kind) == "input" ? inputs : outputs).push_back(std::move(*loaded));
      }
    }
    std::vector<TensorView> views;
    for (const Loaded& input : inputs) {
      views.push_back({input.dtype, input.shape, input.bytes.data(), input.bytes.size()});
    }
    std::vector<OwnedTensor> got;
    Status status = model->run(views, got);
    if (!status.ok) return {Outcome::kFailed, "run failed: " + status.message};
    if (got.size() != outputs.size()) {
      return {Outcome::kFailed, std::to_string(got.size()) + " outputs instead of " +
                                    std::to_string(outputs.size())};
    }
    for (std::size_t k = 0; k < outputs.size(); ++k) {
      if (std::string problem = compare(got[k], outputs[k]); !problem.empty()) {
        return {Outcome::kFailed, "output " + std::to_string(k) + ": " + problem};
      }
    }
  }
  if (sets == 0) return {Outcome::kRefused, "no test data"};
  return {Outcome::kPassed, ""};
}

TEST(OnnxConformance, EveryTestModelPassesOrIsRefusedWhenLoaded) {
  const fs::path data = data_folder();
  if (!fs::exists(data / "node")) GTEST_SKIP() << "no ONNX test data at " << data;
  auto backend = make_torch_backend({});
  std::map<std::string, std::vector<std::string>> by_kind;
  std::vector<std::string> failures;
  int passed = 0, refused = 0;
  for (const char* group : {"node", "pytorch-operator", "pytorch-converted", "simple"}) {
    if (!fs::exists(data / group)) continue;
    std::vector<fs::path> cases;
    for (const auto& entry : fs::directory_iterator(data / group)) {
      if (fs::exists(entry.path() / "model.onnx")) cases.push_back(entry.path());
    }
    std::sort(cases.begin(), cases.end());
    for (const fs::path& folder : cases) {
      const std::string name = std::string(group) + "/" + folder.filename().string();
      Outcome outcome = run_case(*backend, folder);
      if (outcome.kind == Outcome::kPassed) ++passed;
      if (outcome.kind == Outcome::kRefused) ++refused;
      if (outcome.kind == Outcome::kFailed) failures.push_back(name + ": " + outcome.detail);
      if (std::getenv("SLIPSTREAM_ONNX_VERBOSE")) {
        std::cout << (outcome.kind == Outcome::kPassed    ? "PASS "
                      : outcome.kind == Outcome::kRefused ? "REFUSED "
                                                          : "FAIL ")
                  << name << " " << outcome.detail.substr(0, 200) << "\n";
      }
    }
  }
  std::cout << "ONNX conformance: " << passed << " passed, " << refused
            << " refused when loaded, " << failures.size() << " wrong or failing at run time\n";
  for (const std::string& failure : failures) ADD_FAILURE() << failure;
}

}  // namespace
}  // namespace slipstream::ml
