// Builds the test models with libtorch's torch::jit::Module (parameters registered from fixed
// values, forward defined in TorchScript source) and serializes them (see test_models.hpp).
#include "test_models.hpp"

#include <caffe2/serialize/inline_container.h>
#include <torch/script.h>

#include <algorithm>
#include <cmath>
#include <sstream>

namespace slipstream::ml::testing {
namespace {

constexpr int kHidden = 8;

float w1(int i, int j) {
  return 0.1f * static_cast<float>(i + 1) * (j % 2 ? -1.0f : 1.0f) + 0.01f * j;
}
float b1(int j) { return 0.05f * static_cast<float>(j) - 0.2f; }
float w2(int j) { return 0.3f - 0.07f * static_cast<float>(j); }
constexpr float kB2 = 0.5f;

float kernel(int c, int ky, int kx) {
  return (c == 0 ? 1.0f : -1.0f) * 0.1f * static_cast<float>(ky * 3 + kx + 1) +
         (c == 1 ? 0.25f : 0.0f);
}
float kernel_bias(int c) { return c == 0 ? 0.1f : -0.2f; }

at::Tensor tensor_of(std::vector<float> values, std::vector<std::int64_t> shape) {
  return torch::tensor(values, torch::kFloat32).reshape(shape);
}

std::string serialize(torch::jit::Module& module) {
  std::ostringstream out;
  module.save(out);
  return out.str();
}

std::string module_with(const std::string& name, const std::string& source) {
  torch::jit::Module module(name);
  module.define(source);
  return serialize(module);
}

}  // namespace

std::string module_from_source(const std::string& name, const std::string& source) {
  return module_with(name, source);
}

MlpBatch::MlpBatch(int first, int n) {
  for (int i = first; i < first + n; ++i) {
    for (int j = 0; j < 4; ++j) xs.push_back(std::sin(0.37f * static_cast<float>(i * 4 + j)));
    ys.push_back(std::cos(0.21f * static_cast<float>(i)));
  }
  x_shape = {n, 4};
  y_shape = {n, 1};
}

std::string linear_model(float w, float b) {
  torch::jit::Module module("Linear");
  module.register_parameter("w", tensor_of({w}, {1, 1}), false);
  module.register_parameter("b", tensor_of({b}, {1}), false);
  module.define(R"(
def forward(self, x):
    return torch.matmul(x, self.w) + self.b
)");
  return serialize(module);
}

std::string mlp_model() {
  std::vector<float> w1_values, b1_values, w2_values;
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < kHidden; ++j) w1_values.push_back(w1(i, j));
  }
  for (int j = 0; j < kHidden; ++j) b1_values.push_back(b1(j));
  for (int j = 0; j < kHidden; ++j) w2_values.push_back(w2(j));
  torch::jit::Module module("EkeMlp");
  module.register_parameter("w1", tensor_of(w1_values, {4, kHidden}), false);
  module.register_parameter("b1", tensor_of(b1_values, {kHidden}), false);
  module.register_parameter("w2", tensor_of(w2_values, {kHidden, 1}), false);
  module.register_parameter("b2", tensor_of({kB2}, {1}), false);
  module.define(R"(
def forward(self, x):
    h = torch.relu(torch.matmul(x, self.w1) + self.b1)
    return torch.matmul(h, self.w2) + self.b2
)");
  return serialize(module);
}

std::vector<float> mlp_reference(const std::vector<float>& x) {
  const std::size_t n = x.size() / 4;
  std::vector<float> y(n);
  for (std::size_t row = 0; row < n; ++row) {
    float out = kB2;
    for (int j = 0; j < kHidden; ++j) {
      float h = b1(j);
      for (int i = 0; i < 4; ++i) h += x[row * 4 + i] * w1(i, j);
      out += std::max(h, 0.0f) * w2(j);
    }
    y[row] = out;
  }
  return y;
}

std::string cnn_model() {
  std::vector<float> k_values;
  for (int c = 0; c < 2; ++c) {
    for (int ky = 0; ky < 3; ++ky) {
      for (int kx = 0; kx < 3; ++kx) k_values.push_back(kernel(c, ky, kx));
    }
  }
  torch::jit::Module module("SmallCnn");
  module.register_parameter("weight", tensor_of(k_values, {2, 1, 3, 3}), false);
  module.register_parameter("bias", tensor_of({kernel_bias(0), kernel_bias(1)}, {2}), false);
  module.define(R"(
def forward(self, x):
    h = torch.relu(torch.conv2d(x, self.weight, self.bias, [1, 1], [1, 1]))
    return torch.sum(h, [2, 3])
)");
  return serialize(module);
}

std::vector<float> cnn_reference(const std::vector<float>& x, std::int64_t n) {
  std::vector<float> out(static_cast<std::size_t>(n) * 2, 0.0f);
  for (std::int64_t b = 0; b < n; ++b) {
    for (int c = 0; c < 2; ++c) {
      float total = 0.0f;
      for (int y = 0; y < 8; ++y) {
        for (int xx = 0; xx < 8; ++xx) {
          float v = kernel_bias(c);
          for (int ky = 0; ky < 3; ++ky) {
            for (int kx = 0; kx < 3; ++kx) {
              const int sy = y + ky - 1, sx = xx + kx - 1;
              if (sy < 0 || sy >= 8 || sx < 0 || sx >= 8) continue;
              v += kernel(c, ky, kx) * x[static_cast<std::size_t>(b * 64 + sy * 8 + sx)];
            }
          }
          total += std::max(v, 0.0f);
        }
      }
      out[static_cast<std::size_t>(b * 2 + c)] = total;
    }
  }
  return out;
}

std::string two_outputs_model() {
  return module_with("TwoOutputs", R"(
def forward(self, a, b):
    return a + b, a * b
)");
}

std::string mixed_dtypes_model() {
  return module_with("MixedDtypes", R"(
def forward(self, x):
    return (x > 0, [(x * 2).int(), x.double()])
)");
}

std::string half_output_model() {
  return module_with("HalfOutput", R"(
def forward(self, x):
    return x.half()
)");
}

std::string int_output_model() {
  return module_with("IntOutput", R"(
def forward(self, x) -> int:
    return 7
)");
}

std::string with_record(const std::string& model, const std::string& name,
                        const std::string& bytes) {
  std::istringstream in(model);
  caffe2::serialize::PyTorchStreamReader reader(&in);
  std::string out;
  caffe2::serialize::PyTorchStreamWriter writer([&](const void* data, std::size_t size) {
    out.append(static_cast<const char*>(data), size);
    return size;
  });
  for (const std::string& record : reader.getAllRecords()) {
    if (record == "version") continue;  // the writer writes its own
    if (record == name) {
      writer.writeRecord(record, bytes.data(), bytes.size());
    } else {
      auto [data, size] = reader.getRecord(record);
      writer.writeRecord(record, data.get(), size);
    }
  }
  writer.writeEndOfFile();
  return out;
}

}  // namespace slipstream::ml::testing
