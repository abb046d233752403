// ONNX models lowered to TorchScript (the ONNX backend): the model is parsed with libonnx,
// refused where it reaches outside itself (external data, unknown domains) or is malformed,
// checked with ONNX's checker, brought to opset 13 or later with ONNX's version converter, its
// shapes inferred, and its graph written as the source of a TorchScript module whose buffers are
// the initializers (emitter.hpp, ops_*.cpp). The module then runs like any stored TorchScript
// model. Included by torch_backend.cpp only.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <torch/csrc/jit/api/module.h>

namespace slipstream::ml::onnx_import {

/// The module for the ONNX ModelProto `bytes`, on the CPU. Throws std::invalid_argument (the
/// message names the node and operator where a node is the reason) when the model cannot be
/// lowered.
torch::jit::Module lower_model(std::string_view bytes);

/// The TorchScript source lower_model compiles for `bytes` (for tests and debugging).
std::string lowered_source(std::string_view bytes);

/// The operators the lowering supports ("Abs", ..., "ai.onnx.ml.LinearRegressor").
std::vector<std::string> supported_operators();

}  // namespace slipstream::ml::onnx_import
