// TorchScript models and scripts for the ml tests, built in C++ with libtorch (test_models.cpp is
// the only test file that includes torch) and returned as serialized archives, plus the plain
// C++ reference computations their outputs are checked against.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ml/backend.hpp"

namespace slipstream::ml::testing {

/// Rows [first, first + n) of a fixed regression problem for mlp_model: inputs [n, 4] and
/// targets [n, 1], as views for TrainableModel.
struct MlpBatch {
  MlpBatch(int first, int n);
  TensorView x() const { return {DType::kFloat32, x_shape, xs.data(), xs.size() * sizeof(float)}; }
  TensorView y() const { return {DType::kFloat32, y_shape, ys.data(), ys.size() * sizeof(float)}; }
  std::vector<float> xs, ys;
  std::vector<std::int64_t> x_shape, y_shape;
};

/// The EKE-shaped MLP: input [n, 4] FLOAT -> output [n, 1]: relu(x W1 + b1) W2 + b2 with
/// W1 [4, 8], b1 [8], W2 [8, 1], b2 [1] fixed (see mlp_reference).
std::string mlp_model();
/// What mlp_model computes for `x` ([n, 4] row-major), by hand.
std::vector<float> mlp_reference(const std::vector<float>& x);

/// A small CNN: input [n, 1, 8, 8] FLOAT -> [n, 2]: per channel, the sum over the image of
/// relu(conv2d(x, K, bias, stride 1, padding 1)) with K [2, 1, 3, 3] fixed.
std::string cnn_model();
std::vector<float> cnn_reference(const std::vector<float>& x, std::int64_t n);

/// forward(x) -> x @ w + b with parameters w [1, 1] = `w` and b [1] = `b`: input [n, 1] FLOAT.
std::string linear_model(float w, float b);

/// A module with no parameters whose methods are `source` (TorchScript), serialized.
std::string module_from_source(const std::string& name, const std::string& source);

/// forward(a, b) -> (a + b, a * b): two inputs, a tuple of two outputs.
std::string two_outputs_model();

/// forward(x) -> (x > 0, [(x * 2).int(), x.double()]): a tuple holding a list, outputs
/// of BOOL, INT32 and DOUBLE.
std::string mixed_dtypes_model();

/// forward(x) -> x.half(): an output dtype slipstream cannot hold.
std::string half_output_model();

/// forward(x) -> 7: an output that is not a tensor.
std::string int_output_model();

/// `model` (a TorchScript archive) with its record `name` replaced by `bytes`, written with
/// libtorch's own archive writer (so sizes and checksums are right).
std::string with_record(const std::string& model, const std::string& name,
                        const std::string& bytes);

}  // namespace slipstream::ml::testing
