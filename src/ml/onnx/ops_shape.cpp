// Shape operators: Constant, Shape, Reshape, Flatten, Transpose, Concat, Squeeze, Unsqueeze,
// Gather. Shapes are int64 tensors, as in ONNX; where one is known while lowering (an
// initializer, a Constant) it is written as a literal list instead. Written for opsets 13-17.
#include "ml/onnx/emitter.hpp"

namespace slipstream::ml::onnx_import {
namespace {

// A shape or axes input as a TorchScript List[int]: a literal when constant, else converted
// from its tensor at run time.
constexpr char kInts[] = R"(
def onnx_ints(self, t: Tensor) -> List[int]:
    values: List[int] = t.to(4).reshape([-1]).tolist()
    return values
)";

std::string int_list(Emitter& e, const onnx::NodeProto& node, int i) {
  if (auto constant = e.constant_ints(node, i)) return Emitter::ints(*constant);
  return e.helper("onnx_ints", kInts) + "(" + e.in(node, i) + ")";
}

// Constant: one of value (a tensor), value_float(s), value_int(s).
void lower_Constant(Emitter& e, const onnx::NodeProto& node) {
  onnx::TensorProto tensor;
  if (const onnx::AttributeProto* a = Emitter::attribute(node, "value"); a && a->has_t()) {
    tensor = a->t();
  } else if (const onnx::AttributeProto* f = Emitter::attribute(node, "value_float")) {
    tensor.set_data_type(onnx::TensorProto::FLOAT);
    tensor.add_float_data(f->f());
  } else if (const onnx::AttributeProto* fs = Emitter::attribute(node, "value_floats")) {
    tensor.set_data_type(onnx::TensorProto::FLOAT);
    tensor.add_dims(fs->floats_size());
    for (float v : fs->floats()) tensor.add_float_data(v);
  } else if (const onnx::AttributeProto* i = Emitter::attribute(node, "value_int")) {
    tensor.set_data_type(onnx::TensorProto::INT64);
    tensor.add_int64_data(i->i());
  } else if (const onnx::AttributeProto* is = Emitter::attribute(node, "value_ints")) {
    tensor.set_data_type(onnx::TensorProto::INT64);
    tensor.add_dims(is->ints_size());
    for (std::int64_t v : is->ints()) tensor.add_int64_data(v);
  } else {
    Emitter::refuse(node, "only tensor, float and int values are supported (no strings or "
                          "sparse tensors)");
  }
  tensor.set_name(node.output(0));
  const onnx::TensorProto* kept = e.keep(std::move(tensor));
  e.out(node, 0, e.constant_tensor(*kept));
  e.bind_constant(node.output(0), kept);
}

// Shape, with start and end (opset 15) clamped as ONNX says.
constexpr char kShape[] = R"(
def onnx_shape(self, x: Tensor, start: int, end: int, whole: bool) -> Tensor:
    rank = x.dim()
    if whole:
        end = rank
    if start < 0:
        start += rank
    if end < 0:
        end += rank
    start = min(max(start, 0), rank)
    end = min(max(end, 0), rank)
    dims: List[int] = []
    for d in range(start, end):
        dims.append(x.size(d))
    return torch.tensor(dims, dtype=4)
)";

void lower_Shape(Emitter& e, const onnx::NodeProto& node) {
  const bool whole = Emitter::attribute(node, "end") == nullptr;
  e.out(node, 0, e.helper("onnx_shape", kShape) + "(" + e.in(node, 0) + ", " +
                     std::to_string(Emitter::attr_int(node, "start", 0)) + ", " +
                     std::to_string(Emitter::attr_int(node, "end", 0)) + ", " +
                     (whole ? "True" : "False") + ")");
}

void lower_Size(Emitter& e, const onnx::NodeProto& node) {
  e.out(node, 0, "torch.tensor(" + e.in(node, 0) + ".numel(), dtype=4)");
}

// Reshape: 0 copies the input's dimension (unless allowzero), -1 is inferred.
constexpr char kReshape[] = R"(
def onnx_reshape(self, x: Tensor, shape: List[int], allowzero: bool) -> Tensor:
    dims: List[int] = []
    for i in range(len(shape)):
        if shape[i] == 0 and not allowzero:
            dims.append(x.size(i))
        else:
            dims.append(shape[i])
    return x.reshape(dims)
)";

void lower_Reshape(Emitter& e, const onnx::NodeProto& node) {
  const bool allowzero = Emitter::attr_int(node, "allowzero", 0) != 0;
  const std::string x = e.in(node, 0);
  if (auto shape = e.constant_ints(node, 1)) {
    bool plain = true;  // no 0 to copy: torch's reshape means the same
    for (std::int64_t d : *shape) plain = plain && (d != 0 || allowzero);
    if (plain) {
      e.out(node, 0, x + ".reshape(" + Emitter::ints(*shape) + ")");
      return;
    }
  }
  e.out(node, 0, e.helper("onnx_reshape", kReshape) + "(" + x + ", " + int_list(e, node, 1) +
                     ", " + (allowzero ? "True" : "False") + ")");
}

// Flatten: to 2-D, the dimensions before `axis` in the first.
constexpr char kFlatten[] = R"(
def onnx_flatten(self, x: Tensor, axis: int) -> Tensor:
    if axis < 0:
        axis += x.dim()
    outer = 1
    for d in range(axis):
        outer *= x.size(d)
    inner = 1
    for d in range(axis, x.dim()):
        inner *= x.size(d)
    return x.reshape([outer, inner])
)";

void lower_Flatten(Emitter& e, const onnx::NodeProto& node) {
  e.out(node, 0, e.helper("onnx_flatten", kFlatten) + "(" + e.in(node, 0) + ", " +
                     std::to_string(Emitter::attr_int(node, "axis", 1)) + ")");
}

void lower_Transpose(Emitter& e, const onnx::NodeProto& node) {
  const std::vector<std::int64_t> perm = Emitter::attr_ints(node, "perm");
  const std::string x = e.in(node, 0);
  if (perm.empty()) {  // reversed dimensions
    e.out(node, 0, x + ".permute(list(range(" + x + ".dim() - 1, -1, -1)))");
  } else {
    e.out(node, 0, x + ".permute(" + Emitter::ints(perm) + ")");
  }
}

void lower_Concat(Emitter& e, const onnx::NodeProto& node) {
  std::string list = "[";
  for (int i = 0; i < node.input_size(); ++i) list += (i ? ", " : "") + e.in(node, i);
  e.out(node, 0, "torch.cat(" + list + "], " +
                     std::to_string(Emitter::attr_int(node, "axis", 0)) + ")");
}

// Squeeze / Unsqueeze: axes are an input from opset 13.
constexpr char kSqueeze[] = R"(
def onnx_squeeze(self, x: Tensor, axes: List[int]) -> Tensor:
    if len(axes) == 0:
        return torch.squeeze(x)
    rank = x.dim()
    order: List[int] = []
    for a in axes:
        order.append(a + rank if a < 0 else a)
    order.sort(reverse=True)
    for a in order:
        x = torch.squeeze(x, a)
    return x
)";

void lower_Squeeze(Emitter& e, const onnx::NodeProto& node) {
  const std::string axes = Emitter::has_input(node, 1) ? int_list(e, node, 1) : "[]";
  e.out(node, 0, e.helper("onnx_squeeze", kSqueeze) + "(" + e.in(node, 0) + ", " + axes + ")");
}

constexpr char kUnsqueeze[] = R"(
def onnx_unsqueeze(self, x: Tensor, axes: List[int]) -> Tensor:
    rank = x.dim() + len(axes)
    order: List[int] = []
    for a in axes:
        order.append(a + rank if a < 0 else a)
    order.sort()
    for a in order:
        x = torch.unsqueeze(x, a)
    return x
)";

void lower_Unsqueeze(Emitter& e, const onnx::NodeProto& node) {
  e.out(node, 0, e.helper("onnx_unsqueeze", kUnsqueeze) + "(" + e.in(node, 0) + ", " +
                     int_list(e, node, 1) + ")");
}

// Gather along `axis`, negative indices counting from the end; the output's shape is the data's
// with the axis replaced by the indices' shape.
constexpr char kGather[] = R"(
def onnx_gather(self, x: Tensor, indices: Tensor, axis: int) -> Tensor:
    if axis < 0:
        axis += x.dim()
    size = x.size(axis)
    flat = indices.to(4).reshape([-1])
    flat = torch.where(flat < 0, flat + size, flat)
    picked = torch.index_select(x, axis, flat)
    shape: List[int] = []
    for d in range(axis):
        shape.append(x.size(d))
    for d in range(indices.dim()):
        shape.append(indices.size(d))
    for d in range(axis + 1, x.dim()):
        shape.append(x.size(d))
    return picked.reshape(shape)
)";

void lower_Gather(Emitter& e, const onnx::NodeProto& node) {
  e.out(node, 0, e.helper("onnx_gather", kGather) + "(" + e.in(node, 0) + ", " + e.in(node, 1) +
                     ", " + std::to_string(Emitter::attr_int(node, "axis", 0)) + ")");
}

}  // namespace

void add_shape_ops(OpTable& t) {
  t.add("", "Constant", lower_Constant);
  t.add("", "Shape", lower_Shape);
  t.add("", "Size", lower_Size);
  t.add("", "Reshape", lower_Reshape);
  t.add("", "Flatten", lower_Flatten);
  t.add("", "Transpose", lower_Transpose);
  t.add("", "Concat", lower_Concat);
  t.add("", "Squeeze", lower_Squeeze);
  t.add("", "Unsqueeze", lower_Unsqueeze);
  t.add("", "Gather", lower_Gather);
}

}  // namespace slipstream::ml::onnx_import
