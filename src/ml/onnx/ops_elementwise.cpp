// Element-wise operators: arithmetic (numpy broadcasting, as torch's), comparisons and logic, the
// activations, Softmax and its kin, Cast, Clip, Where, Identity and Dropout (inference: the
// identity). Written for opsets 13-17.
#include "ml/onnx/emitter.hpp"

namespace slipstream::ml::onnx_import {
namespace {

// ---- Unary: out = expression(x).
template <const char* kFormat>
void unary(Emitter& e, const onnx::NodeProto& node) {
  std::string expression = kFormat;
  const std::string x = e.in(node, 0);
  for (std::size_t at; (at = expression.find('X')) != std::string::npos;) {
    expression.replace(at, 1, x);
  }
  e.out(node, 0, expression);
}

#define UNARY(NAME, FORMAT)                 \
  constexpr char k##NAME[] = FORMAT;        \
  void lower_##NAME(Emitter& e, const onnx::NodeProto& node) { unary<k##NAME>(e, node); }

UNARY(Abs, "torch.abs(X)")
UNARY(Neg, "torch.neg(X)")
UNARY(Exp, "torch.exp(X)")
UNARY(Log, "torch.log(X)")
UNARY(Sqrt, "torch.sqrt(X)")
UNARY(Reciprocal, "torch.reciprocal(X)")
UNARY(Floor, "torch.floor(X)")
UNARY(Ceil, "torch.ceil(X)")
UNARY(Round, "torch.round(X)")
UNARY(Sign, "torch.sign(X)")
UNARY(Sin, "torch.sin(X)")
UNARY(Cos, "torch.cos(X)")
UNARY(Tan, "torch.tan(X)")
UNARY(Asin, "torch.asin(X)")
UNARY(Acos, "torch.acos(X)")
UNARY(Atan, "torch.atan(X)")
UNARY(Sinh, "torch.sinh(X)")
UNARY(Cosh, "torch.cosh(X)")
UNARY(Asinh, "torch.asinh(X)")
UNARY(Acosh, "torch.acosh(X)")
UNARY(Atanh, "torch.atanh(X)")
UNARY(Erf, "torch.erf(X)")
UNARY(Relu, "torch.relu(X)")
UNARY(Sigmoid, "torch.sigmoid(X)")
UNARY(Tanh, "torch.tanh(X)")
UNARY(Softsign, "X / (1 + torch.abs(X))")
UNARY(Softplus, "torch.softplus(X)")
UNARY(HardSwish, "X * torch.clamp(X / 6 + 0.5, 0.0, 1.0)")
UNARY(Not, "torch.logical_not(X)")
UNARY(IsNaN, "torch.isnan(X)")
UNARY(Identity, "X")
#undef UNARY

void lower_LeakyRelu(Emitter& e, const onnx::NodeProto& node) {
  e.out(node, 0, "torch.leaky_relu(" + e.in(node, 0) + ", " +
                     Emitter::number(Emitter::attr_float(node, "alpha", 0.01F)) + ")");
}

void lower_Elu(Emitter& e, const onnx::NodeProto& node) {
  e.out(node, 0, "torch.elu(" + e.in(node, 0) + ", " +
                     Emitter::number(Emitter::attr_float(node, "alpha", 1.0F)) + ")");
}

void lower_Celu(Emitter& e, const onnx::NodeProto& node) {
  e.out(node, 0, "torch.celu(" + e.in(node, 0) + ", " +
                     Emitter::number(Emitter::attr_float(node, "alpha", 1.0F)) + ")");
}

void lower_Selu(Emitter& e, const onnx::NodeProto& node) {
  const std::string x = e.in(node, 0);
  const std::string alpha = Emitter::number(Emitter::attr_float(node, "alpha", 1.67326319217681884765625F));
  const std::string gamma = Emitter::number(Emitter::attr_float(node, "gamma", 1.05070102214813232421875F));
  e.out(node, 0, gamma + " * torch.where(" + x + " > 0, " + x + ", " + alpha + " * (torch.exp(" +
                     x + ") - 1))");
}

void lower_HardSigmoid(Emitter& e, const onnx::NodeProto& node) {
  const std::string x = e.in(node, 0);
  e.out(node, 0, "torch.clamp(" + Emitter::number(Emitter::attr_float(node, "alpha", 0.2F)) +
                     " * " + x + " + " + Emitter::number(Emitter::attr_float(node, "beta", 0.5F)) +
                     ", 0.0, 1.0)");
}

void lower_ThresholdedRelu(Emitter& e, const onnx::NodeProto& node) {
  const std::string x = e.in(node, 0);
  e.out(node, 0, "torch.where(" + x + " > " +
                     Emitter::number(Emitter::attr_float(node, "alpha", 1.0F)) + ", " + x +
                     ", torch.zeros_like(" + x + "))");
}

// Before opset 7 a 1-D slope is per channel (axis 1); the converter leaves it so.
constexpr char kChannelSlope[] = R"(
def onnx_channel_slope(self, x: Tensor, slope: Tensor) -> Tensor:
    if slope.dim() == 1 and x.dim() > 2 and slope.size(0) == x.size(1):
        shape: List[int] = [slope.size(0)]
        for d in range(x.dim() - 2):
            shape.append(1)
        return slope.reshape(shape)
    return slope
)";

void lower_PRelu(Emitter& e, const onnx::NodeProto& node) {
  const std::string x = e.in(node, 0);
  std::string slope = e.in(node, 1);
  if (e.source_opset() != 0 && e.source_opset() < 7) {
    slope = e.helper("onnx_channel_slope", kChannelSlope) + "(" + x + ", " + slope + ")";
  }
  e.out(node, 0, "torch.where(" + x + " < 0, " + x + " * " + slope + ", " + x + ")");
}

void lower_IsInf(Emitter& e, const onnx::NodeProto& node) {
  const std::string x = e.in(node, 0);
  const bool positive = Emitter::attr_int(node, "detect_positive", 1) != 0;
  const bool negative = Emitter::attr_int(node, "detect_negative", 1) != 0;
  if (positive && negative) {
    e.out(node, 0, "torch.isinf(" + x + ")");
  } else if (positive) {
    e.out(node, 0, "torch.isposinf(" + x + ")");
  } else if (negative) {
    e.out(node, 0, "torch.isneginf(" + x + ")");
  } else {
    e.out(node, 0, "torch.zeros_like(" + x + ", dtype=11)");
  }
}

// ---- Binary, numpy broadcasting.
void binary(Emitter& e, const onnx::NodeProto& node, const std::string& function) {
  e.out(node, 0, function + "(" + e.in(node, 0) + ", " + e.in(node, 1) + ")");
}

void lower_Add(Emitter& e, const onnx::NodeProto& node) { binary(e, node, "torch.add"); }
void lower_Sub(Emitter& e, const onnx::NodeProto& node) { binary(e, node, "torch.sub"); }
void lower_Mul(Emitter& e, const onnx::NodeProto& node) { binary(e, node, "torch.mul"); }
void lower_Equal(Emitter& e, const onnx::NodeProto& node) { binary(e, node, "torch.eq"); }
void lower_Less(Emitter& e, const onnx::NodeProto& node) { binary(e, node, "torch.lt"); }
void lower_Greater(Emitter& e, const onnx::NodeProto& node) { binary(e, node, "torch.gt"); }
void lower_LessOrEqual(Emitter& e, const onnx::NodeProto& node) { binary(e, node, "torch.le"); }
void lower_GreaterOrEqual(Emitter& e, const onnx::NodeProto& node) { binary(e, node, "torch.ge"); }
void lower_And(Emitter& e, const onnx::NodeProto& node) { binary(e, node, "torch.logical_and"); }
void lower_Or(Emitter& e, const onnx::NodeProto& node) { binary(e, node, "torch.logical_or"); }
void lower_Xor(Emitter& e, const onnx::NodeProto& node) { binary(e, node, "torch.logical_xor"); }

// Integer division truncates toward zero in ONNX (as C), where torch's `/` would give floats.
void lower_Div(Emitter& e, const onnx::NodeProto& node) {
  if (is_integer_type(e.input_type(node, 0))) {
    e.out(node, 0, "torch.div(" + e.in(node, 0) + ", " + e.in(node, 1) + ", rounding_mode='trunc')");
  } else {
    binary(e, node, "torch.div");
  }
}

// ONNX's Pow has the base's type whatever the exponent's.
void lower_Pow(Emitter& e, const onnx::NodeProto& node) {
  const std::string x = e.in(node, 0);
  e.out(node, 0, "torch.pow(" + x + ", " + e.in(node, 1) + ").to(" + x + ".dtype)");
}

// fmod = 1: the dividend's sign (C's fmod); 0: the divisor's (Python's %), integers only.
void lower_Mod(Emitter& e, const onnx::NodeProto& node) {
  binary(e, node, Emitter::attr_int(node, "fmod", 0) != 0 ? "torch.fmod" : "torch.remainder");
}

// Variadic, broadcast: Max, Min, Sum, Mean.
void variadic(Emitter& e, const onnx::NodeProto& node, const std::string& function) {
  std::string expression = e.in(node, 0);
  for (int i = 1; i < node.input_size(); ++i) {
    expression = function + "(" + expression + ", " + e.in(node, i) + ")";
  }
  e.out(node, 0, expression);
}

void lower_Max(Emitter& e, const onnx::NodeProto& node) { variadic(e, node, "torch.maximum"); }
void lower_Min(Emitter& e, const onnx::NodeProto& node) { variadic(e, node, "torch.minimum"); }
void lower_Sum(Emitter& e, const onnx::NodeProto& node) { variadic(e, node, "torch.add"); }
void lower_Mean(Emitter& e, const onnx::NodeProto& node) {
  std::string expression = e.in(node, 0);
  for (int i = 1; i < node.input_size(); ++i) {
    expression = "torch.add(" + expression + ", " + e.in(node, i) + ")";
  }
  e.out(node, 0, "torch.div(" + expression + ", " + std::to_string(node.input_size()) + ")");
}

void lower_Where(Emitter& e, const onnx::NodeProto& node) {
  e.out(node, 0,
        "torch.where(" + e.in(node, 0) + ", " + e.in(node, 1) + ", " + e.in(node, 2) + ")");
}

// Clip: min and max are optional inputs (opset 11 on).
void lower_Clip(Emitter& e, const onnx::NodeProto& node) {
  std::string expression = e.in(node, 0);
  if (Emitter::has_input(node, 1)) expression = "torch.maximum(" + expression + ", " + e.in(node, 1) + ")";
  if (Emitter::has_input(node, 2)) expression = "torch.minimum(" + expression + ", " + e.in(node, 2) + ")";
  e.out(node, 0, expression);
}

void lower_Cast(Emitter& e, const onnx::NodeProto& node) {
  const int to = static_cast<int>(Emitter::attr_int(node, "to", 0));
  e.out(node, 0, e.in(node, 0) + ".to(" + torch_dtype(to, "Cast's 'to'") + ")");
}

void lower_CastLike(Emitter& e, const onnx::NodeProto& node) {
  e.out(node, 0, e.in(node, 0) + ".to(" + e.in(node, 1) + ".dtype)");
}

// Dropout at inference is the identity; its mask, all true.
void lower_Dropout(Emitter& e, const onnx::NodeProto& node) {
  if (Emitter::has_input(node, 2)) {
    const onnx::TensorProto* training = e.constant(node, 2);
    const auto flag = e.constant_ints(node, 2);
    const bool off = training != nullptr &&
                     ((training->data_type() == onnx::TensorProto::BOOL &&
                       ((training->has_raw_data() && !training->raw_data().empty() &&
                         training->raw_data()[0] == 0) ||
                        (!training->has_raw_data() && training->int32_data_size() == 1 &&
                         training->int32_data(0) == 0))) ||
                      (flag && flag->size() == 1 && (*flag)[0] == 0));
    if (!off) Emitter::refuse(node, "training_mode is not supported: models run for inference");
  }
  const std::string x = e.out(node, 0, e.in(node, 0));
  if (node.output_size() > 1 && !node.output(1).empty()) {
    e.out(node, 1, "torch.ones_like(" + x + ", dtype=11)");
  }
}

// Softmax, LogSoftmax, Hardmax: along `axis` (opset 13's meaning; older models are converted).
void lower_Softmax(Emitter& e, const onnx::NodeProto& node) {
  e.out(node, 0, "torch.softmax(" + e.in(node, 0) + ", " +
                     std::to_string(Emitter::attr_int(node, "axis", -1)) + ")");
}

void lower_LogSoftmax(Emitter& e, const onnx::NodeProto& node) {
  e.out(node, 0, "torch.log_softmax(" + e.in(node, 0) + ", " +
                     std::to_string(Emitter::attr_int(node, "axis", -1)) + ")");
}

constexpr char kHardmax[] = R"(
def onnx_hardmax(self, x: Tensor, axis: int) -> Tensor:
    index = torch.argmax(x, axis, keepdim=True)
    return torch.zeros_like(x).scatter_(axis, index, 1.0)
)";

void lower_Hardmax(Emitter& e, const onnx::NodeProto& node) {
  e.out(node, 0, e.helper("onnx_hardmax", kHardmax) + "(" + e.in(node, 0) + ", " +
                     std::to_string(Emitter::attr_int(node, "axis", -1)) + ")");
}

}  // namespace

void add_elementwise_ops(OpTable& t) {
#define ADD(NAME) t.add("", #NAME, lower_##NAME)
  ADD(Abs); ADD(Neg); ADD(Exp); ADD(Log); ADD(Sqrt); ADD(Reciprocal); ADD(Floor); ADD(Ceil);
  ADD(Round); ADD(Sign); ADD(Sin); ADD(Cos); ADD(Tan); ADD(Asin); ADD(Acos); ADD(Atan);
  ADD(Sinh); ADD(Cosh); ADD(Asinh); ADD(Acosh); ADD(Atanh); ADD(Erf); ADD(Relu); ADD(Sigmoid);
  ADD(Tanh); ADD(Softsign); ADD(Softplus); ADD(HardSwish); ADD(Not); ADD(IsNaN); ADD(IsInf);
  ADD(Identity); ADD(LeakyRelu); ADD(Elu); ADD(Celu); ADD(Selu); ADD(HardSigmoid);
  ADD(ThresholdedRelu); ADD(PRelu); ADD(Add); ADD(Sub); ADD(Mul); ADD(Div); ADD(Pow); ADD(Mod);
  ADD(Equal); ADD(Less); ADD(Greater); ADD(LessOrEqual); ADD(GreaterOrEqual); ADD(And); ADD(Or);
  ADD(Xor); ADD(Max); ADD(Min); ADD(Sum); ADD(Mean); ADD(Where); ADD(Clip); ADD(Cast);
  ADD(CastLike); ADD(Dropout); ADD(Softmax); ADD(LogSoftmax); ADD(Hardmax);
#undef ADD
}

}  // namespace slipstream::ml::onnx_import
