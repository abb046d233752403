// Models traced and scripted from Python (tests/ml/models/make_models.py, run by CTest as a
// fixture) load and run through LocalModel with the results Python computed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "slipstream/local_model.hpp"

namespace slipstream {
namespace {

struct Reference {
  DType dtype;
  std::vector<std::int64_t> shape;
  std::vector<double> values;
};

struct ReferenceRun {
  std::vector<Reference> inputs, outputs;
};

// Reads NAME.io: "input|output DTYPE DIM,DIM,... VALUE ...", one tensor per line.
ReferenceRun read_reference(const std::filesystem::path& path) {
  ReferenceRun run;
  std::ifstream file(path);
  std::string line;
  while (std::getline(file, line)) {
    std::istringstream fields(line);
    std::string kind, dtype, dims;
    fields >> kind >> dtype >> dims;
    Reference tensor{*parse_dtype(dtype), {}, {}};
    std::istringstream dim_stream(dims);
    for (std::string dim; std::getline(dim_stream, dim, ',');)
      tensor.shape.push_back(std::stoll(dim));
    for (double value; fields >> value;) tensor.values.push_back(value);
    (kind == "input" ? run.inputs : run.outputs).push_back(std::move(tensor));
  }
  return run;
}

// Holds the bytes of one input in its dtype.
std::vector<std::byte> bytes_of(const Reference& tensor) {
  std::vector<std::byte> bytes(tensor.values.size() * dtype_size(tensor.dtype));
  for (std::size_t i = 0; i < tensor.values.size(); ++i) {
    if (tensor.dtype == DType::kFloat32) {
      const float value = static_cast<float>(tensor.values[i]);
      std::memcpy(bytes.data() + i * sizeof value, &value, sizeof value);
    } else if (tensor.dtype == DType::kFloat64) {
      std::memcpy(bytes.data() + i * sizeof(double), &tensor.values[i], sizeof(double));
    } else {
      const auto value = static_cast<std::int64_t>(tensor.values[i]);
      std::memcpy(bytes.data() + i * sizeof value, &value, sizeof value);
    }
  }
  return bytes;
}

double element(const Tensor& tensor, std::size_t i) {
  switch (tensor.dtype()) {
    case DType::kFloat32:
      return tensor.data<float>()[i];
    case DType::kFloat64:
      return tensor.data<double>()[i];
    default:
      return static_cast<double>(tensor.data<std::int64_t>()[i]);
  }
}

class PythonModels : public ::testing::TestWithParam<const char*> {};

TEST_P(PythonModels, RunsAsInPython) {
  const std::filesystem::path directory = SLIPSTREAM_PY_MODELS_DIR;
  const std::filesystem::path model = directory / (std::string(GetParam()) + ".pt");
  if (!std::filesystem::exists(model)) {
    GTEST_SKIP() << model << " is missing: run tests/ml/models/make_models.py (CTest does)";
  }
  const ReferenceRun reference = read_reference(directory / (std::string(GetParam()) + ".io"));
  ASSERT_FALSE(reference.inputs.empty());

  const LocalModel local = LocalModel::from_file(model.string());
  std::vector<std::vector<std::byte>> buffers;
  std::vector<TensorRef> inputs;
  for (const Reference& input : reference.inputs) {
    buffers.push_back(bytes_of(input));
    inputs.push_back({"", input.dtype, buffers.back().data(), buffers.back().size(), input.shape});
  }
  const std::vector<Tensor> outputs = local.run(inputs);
  ASSERT_EQ(outputs.size(), reference.outputs.size());
  for (std::size_t o = 0; o < outputs.size(); ++o) {
    const Reference& expected = reference.outputs[o];
    EXPECT_EQ(outputs[o].dtype(), expected.dtype) << "output " << o;
    EXPECT_EQ(std::vector<std::int64_t>(outputs[o].shape().begin(), outputs[o].shape().end()),
              expected.shape);
    ASSERT_EQ(outputs[o].size(), expected.values.size());
    for (std::size_t i = 0; i < expected.values.size(); ++i) {
      EXPECT_NEAR(element(outputs[o], i), expected.values[i],
                  1e-5 * (1.0 + std::abs(expected.values[i])))
          << "output " << o << " element " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Generated, PythonModels,
                         ::testing::Values("mlp_traced", "cnn_traced", "scripted"),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
}  // namespace slipstream
