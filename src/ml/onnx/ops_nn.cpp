// Neural-network operators: Gemm and MatMul (more in later families: convolutions, pools,
// normalizations). Written for opsets 13-17.
#include "ml/onnx/emitter.hpp"

namespace slipstream::ml::onnx_import {
namespace {

// Y = alpha * A' B' + beta * C, A' and B' transposed when asked, C broadcast.
void lower_Gemm(Emitter& e, const onnx::NodeProto& node) {
  std::string a = e.in(node, 0), b = e.in(node, 1);
  if (Emitter::attr_int(node, "transA", 0) != 0) a += ".t()";
  if (Emitter::attr_int(node, "transB", 0) != 0) b += ".t()";
  const double alpha = Emitter::attr_float(node, "alpha", 1.0F);
  const double beta = Emitter::attr_float(node, "beta", 1.0F);
  std::string expression = "torch.matmul(" + a + ", " + b + ")";
  if (alpha != 1.0) expression = Emitter::number(alpha) + " * " + expression;
  if (Emitter::has_input(node, 2)) {
    std::string c = e.in(node, 2);
    if (beta != 1.0) c = Emitter::number(beta) + " * " + c;
    expression += " + " + c;
  }
  e.out(node, 0, expression);
}

void lower_MatMul(Emitter& e, const onnx::NodeProto& node) {
  e.out(node, 0, "torch.matmul(" + e.in(node, 0) + ", " + e.in(node, 1) + ")");
}

}  // namespace

void add_nn_ops(OpTable& t) {
  t.add("", "Gemm", lower_Gemm);
  t.add("", "MatMul", lower_MatMul);
}

}  // namespace slipstream::ml::onnx_import
