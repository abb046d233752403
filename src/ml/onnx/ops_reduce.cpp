// Reductions: ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2,
// ReduceLogSum, ReduceLogSumExp, ReduceSumSquare (keepdims; axes an input of ReduceSum, an
// attribute of the others; no axes meaning every axis, or none with noop_with_empty_axes);
// ArgMax and ArgMin (axis, keepdims, select_last_index). Written for opsets 13-17.
#include <string_view>

#include "ml/onnx/emitter.hpp"

namespace slipstream::ml::onnx_import {
namespace {

// Axes given at run time (ReduceSum's input), an empty list meaning every axis.
constexpr char kAxes[] = R"(
def onnx_reduce_axes(self, x: Tensor, axes: Tensor) -> List[int]:
    values: List[int] = axes.to(4).reshape([-1]).tolist()
    if len(values) == 0:
        return list(range(x.dim()))
    return values
)";

// torch.prod reduces one dimension at a time.
constexpr char kProd[] = R"(
def onnx_reduce_prod(self, x: Tensor, axes: List[int], keepdims: bool) -> Tensor:
    rank = x.dim()
    dims: List[int] = []
    for a in axes:
        dims.append(a + rank if a < 0 else a)
    dtype = x.dtype
    for d in dims:
        x = torch.prod(x, d, True, dtype=dtype)
    if not keepdims:
        dims.sort(reverse=True)
        for d in dims:
            x = torch.squeeze(x, d)
    return x
)";

// torch.amax and amin refuse an empty set, where ONNX's maximum is minus infinity (the lowest
// value of an integer type) and its minimum plus infinity (the highest): c10::ScalarType numbers
// 0-4 are uint8, int8, int16, int32, int64.
constexpr char kExtreme[] = R"(
def onnx_reduce_extreme(self, x: Tensor, axes: List[int], keepdims: bool,
                        largest: bool) -> Tensor:
    rank = x.dim()
    dims: List[int] = []
    empty = False
    for a in axes:
        d = a + rank if a < 0 else a
        dims.append(d)
        empty = empty or x.size(d) == 0
    if not empty:
        return torch.amax(x, dims, keepdims) if largest else torch.amin(x, dims, keepdims)
    shape: List[int] = []
    for d in range(rank):
        if d not in dims:
            shape.append(x.size(d))
        elif keepdims:
            shape.append(1)
    if x.is_floating_point():
        return torch.full(shape, float('-inf') if largest else float('inf'), dtype=x.dtype,
                          device=x.device)
    lowest = [0, -128, -32768, -2147483648, -9223372036854775807 - 1]
    highest = [255, 127, 32767, 2147483647, 9223372036854775807]
    low = lowest[x.dtype]
    high = highest[x.dtype]
    return torch.full(shape, low if largest else high, dtype=x.dtype, device=x.device)
)";

// The first extreme of the reversed tensor is the last one.
constexpr char kArgLast[] = R"(
def onnx_reduce_arg_last(self, x: Tensor, axis: int, keepdims: bool, largest: bool) -> Tensor:
    if axis < 0:
        axis += x.dim()
    flipped = torch.flip(x, [axis])
    if largest:
        index = torch.argmax(flipped, axis, keepdims)
    else:
        index = torch.argmin(flipped, axis, keepdims)
    return x.size(axis) - 1 - index
)";

// How a reduction is written: `format` with {x} the input, {axes} the axes (a List[int]
// expression, every axis where the node names none) and {keepdims}. Some reduce a wider copy of
// the input and cast the result back: integers as float64 where the result is a mean, a root or
// a logarithm (truncated, as ONNX's reference does), float16 and bfloat16 as float32 where
// libtorch 1.13 has no CPU kernel for them (exp, log, sqrt, prod).
struct Reduction {
  std::string_view op_type;
  const char* format;
  bool widen_integers;
  bool widen_halves;
};

constexpr Reduction kReductions[] = {
    {"ReduceSum", "torch.sum({x}, {axes}, {keepdims}, dtype={x}.dtype)", false, false},
    {"ReduceMean", "torch.mean({x}, {axes}, {keepdims})", true, false},
    {"ReduceMax", "{extreme}({x}, {axes}, {keepdims}, True)", false, false},
    {"ReduceMin", "{extreme}({x}, {axes}, {keepdims}, False)", false, false},
    {"ReduceProd", "{prod}({x}, {axes}, {keepdims})", false, true},
    {"ReduceL1", "torch.sum(torch.abs({x}), {axes}, {keepdims}, dtype={x}.dtype)", false, false},
    {"ReduceL2", "torch.sqrt(torch.sum({x} * {x}, {axes}, {keepdims}))", true, true},
    {"ReduceLogSum", "torch.log(torch.sum({x}, {axes}, {keepdims}))", true, true},
    {"ReduceLogSumExp", "torch.logsumexp({x}, {axes}, {keepdims})", true, true},
    {"ReduceSumSquare", "torch.sum({x} * {x}, {axes}, {keepdims}, dtype={x}.dtype)", false, false},
};

void replace_all(std::string& text, std::string_view from, const std::string& to) {
  for (std::size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size()) {
    text.replace(at, from.size(), to);
  }
}

void lower_reduction(Emitter& e, const onnx::NodeProto& node) {
  const Reduction* reduction = nullptr;
  for (const Reduction& r : kReductions) {
    if (r.op_type == node.op_type()) reduction = &r;
  }
  const std::string x = e.in(node, 0);
  const bool keepdims = Emitter::attr_int(node, "keepdims", 1) != 0;
  const bool noop = Emitter::attr_int(node, "noop_with_empty_axes", 0) != 0;

  // The axes: a literal list where known while lowering, else read at run time (ReduceSum's
  // input from opset 13; `runtime` is then that input's variable).
  std::optional<std::vector<std::int64_t>> axes;
  std::string runtime;
  if (node.op_type() != "ReduceSum") {
    axes = Emitter::attr_ints(node, "axes");
  } else if (!Emitter::has_input(node, 1)) {
    axes.emplace();
  } else if (!(axes = e.constant_ints(node, 1))) {
    runtime = e.in(node, 1);
  }
  if (axes && axes->empty() && noop) {
    e.out(node, 0, x);
    return;
  }
  std::string axes_list;
  if (!runtime.empty()) {
    axes_list = e.helper("onnx_reduce_axes", kAxes) + "(" + x + ", " + runtime + ")";
  } else if (!axes->empty()) {
    axes_list = Emitter::ints(*axes);
  } else if (const int rank = e.input_rank(node, 0); rank >= 0) {
    for (int d = 0; d < rank; ++d) axes->push_back(d);
    axes_list = Emitter::ints(*axes);
  } else {
    axes_list = "list(range(" + x + ".dim()))";
  }

  const int type = e.input_type(node, 0);
  const bool half = type == onnx::TensorProto::FLOAT16 || type == onnx::TensorProto::BFLOAT16;
  const char* wide_type = reduction->widen_integers && is_integer_type(type) ? "7"
                          : reduction->widen_halves && half              ? "6"
                                                                         : nullptr;
  std::string input = x;
  if (wide_type != nullptr) {
    input = e.fresh();
    e.line(input + " = " + x + ".to(" + wide_type + ")");
  }
  std::string expression = reduction->format;
  if (expression.find("{extreme}") != std::string::npos) {
    replace_all(expression, "{extreme}", e.helper("onnx_reduce_extreme", kExtreme));
  }
  if (expression.find("{prod}") != std::string::npos) {
    replace_all(expression, "{prod}", e.helper("onnx_reduce_prod", kProd));
  }
  replace_all(expression, "{x}", input);
  replace_all(expression, "{axes}", axes_list);
  replace_all(expression, "{keepdims}", keepdims ? "True" : "False");
  if (wide_type != nullptr) expression += ".to(" + x + ".dtype)";
  if (!runtime.empty() && noop) {
    expression = x + " if " + runtime + ".numel() == 0 else " + expression;
  }
  e.out(node, 0, expression);
}

void lower_arg(Emitter& e, const onnx::NodeProto& node, bool largest) {
  const std::string x = e.in(node, 0);
  const std::string axis = std::to_string(Emitter::attr_int(node, "axis", 0));
  const std::string keepdims = Emitter::attr_int(node, "keepdims", 1) != 0 ? "True" : "False";
  if (Emitter::attr_int(node, "select_last_index", 0) != 0) {
    e.out(node, 0, e.helper("onnx_reduce_arg_last", kArgLast) + "(" + x + ", " + axis + ", " +
                       keepdims + ", " + (largest ? "True" : "False") + ")");
  } else {
    e.out(node, 0, std::string(largest ? "torch.argmax(" : "torch.argmin(") + x + ", " + axis +
                       ", " + keepdims + ")");
  }
}

void lower_ArgMax(Emitter& e, const onnx::NodeProto& node) { lower_arg(e, node, true); }
void lower_ArgMin(Emitter& e, const onnx::NodeProto& node) { lower_arg(e, node, false); }

}  // namespace

void add_reduce_ops(OpTable& table) {
  for (const Reduction& r : kReductions) table.add("", std::string(r.op_type), lower_reduction);
  table.add("", "ArgMax", lower_ArgMax);
  table.add("", "ArgMin", lower_ArgMin);
}

}  // namespace slipstream::ml::onnx_import
