// Shape and indexing operators: Constant, ConstantOfShape, EyeLike, Range, Shape, Size, Reshape,
// Flatten, Transpose, Concat, Split, Squeeze, Unsqueeze, Slice, Expand, Tile, Pad, Gather,
// GatherElements, GatherND, ScatterElements, ScatterND, OneHot, CumSum, Trilu, TopK and NonZero.
// Shapes are int64 tensors, as in ONNX; where one is known while lowering (an initializer, a
// Constant) it is written as a literal list instead. Written for opsets 13-17.
#include <algorithm>
#include <cstdint>

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

// A scalar integer input (an axis, k, a count) as a TorchScript int: a literal when constant.
std::string int_scalar(Emitter& e, const onnx::NodeProto& node, int i) {
  if (auto constant = e.constant_ints(node, i); constant && constant->size() == 1) {
    return Emitter::integer(constant->front());
  }
  return "int(" + e.in(node, i) + ")";
}

// ConstantOfShape: the value (a one-element tensor, float 0 when absent) is kept as a buffer, so
// it keeps its exact type and bits and lives on the model's device; the output is that value
// broadcast to the shape.
void lower_ConstantOfShape(Emitter& e, const onnx::NodeProto& node) {
  onnx::TensorProto value;
  if (const onnx::AttributeProto* a = Emitter::attribute(node, "value"); a && a->has_t()) {
    value = a->t();
    std::int64_t count = 1;
    for (std::int64_t d : value.dims()) count *= d;
    if (count != 1) Emitter::refuse(node, "the value attribute must hold exactly one element");
  } else {
    value.set_data_type(onnx::TensorProto::FLOAT);
    value.add_float_data(0.0F);
  }
  value.set_name(node.output(0));
  torch_dtype(value.data_type(), "ConstantOfShape's value");
  const std::string buffer = e.constant_tensor(*e.keep(std::move(value)));
  e.out(node, 0, buffer + ".reshape([]).expand(" + int_list(e, node, 0) + ")");
}

// EyeLike: ones where column - row == k, in `dtype` (the input's type when absent).
constexpr char kEyeLike[] = R"(
def onnx_shape_eye_like(self, x: Tensor, k: int, dtype: int) -> Tensor:
    rows = torch.arange(x.size(0), device=x.device).unsqueeze(1)
    columns = torch.arange(x.size(1), device=x.device)
    return (columns - rows == k).to(dtype)
)";

void lower_EyeLike(Emitter& e, const onnx::NodeProto& node) {
  if (const int rank = e.input_rank(node, 0); rank != -1 && rank != 2) {
    Emitter::refuse(node, "the input must be 2-D");
  }
  const std::string x = e.in(node, 0);
  const onnx::AttributeProto* dtype = Emitter::attribute(node, "dtype");
  e.out(node, 0, e.helper("onnx_shape_eye_like", kEyeLike) + "(" + x + ", " +
                     Emitter::integer(Emitter::attr_int(node, "k", 0)) + ", " +
                     (dtype ? torch_dtype(static_cast<int>(dtype->i()), "EyeLike's dtype")
                            : x + ".dtype") +
                     ")");
}

// Range: start + i * delta for i below max(ceil((limit - start) / delta), 0), in the inputs'
// type. Computed from the count, as ONNX defines it, since torch.arange refuses a delta whose
// sign disagrees with limit - start (where ONNX gives an empty tensor).
constexpr char kRange[] = R"(
def onnx_shape_range(self, start: Tensor, limit: Tensor, delta: Tensor) -> Tensor:
    steps = torch.ceil((limit.double() - start.double()) / delta.double())
    count = int(torch.clamp(steps, min=0))
    return torch.arange(count, device=start.device).to(start.dtype) * delta + start
)";

void lower_Range(Emitter& e, const onnx::NodeProto& node) {
  e.out(node, 0, e.helper("onnx_shape_range", kRange) + "(" + e.in(node, 0) + ", " +
                     e.in(node, 1) + ", " + e.in(node, 2) + ")");
}

// Split along `axis`: by the sizes of the `split` input, or into as many equal parts as there
// are outputs.
void lower_Split(Emitter& e, const onnx::NodeProto& node) {
  const std::string x = e.in(node, 0);
  const std::string axis = Emitter::integer(Emitter::attr_int(node, "axis", 0));
  const std::string parts = e.fresh();
  if (Emitter::has_input(node, 1)) {
    e.line(parts + " = torch.split_with_sizes(" + x + ", " + int_list(e, node, 1) + ", " +
           axis + ")");
  } else {
    e.line(parts + " = torch.tensor_split(" + x + ", " + std::to_string(node.output_size()) +
           ", " + axis + ")");
  }
  for (int i = 0; i < node.output_size(); ++i) {
    e.out(node, i, parts + "[" + std::to_string(i) + "]");
  }
}

// Slice, clamped as ONNX says: a start or end below zero counts from the end, then both are
// clamped to [0, size] for positive steps and to [0, size - 1] (start) and [-1, size - 1]
// (end) for negative ones. Negative steps take the same elements with a positive step and
// flip them.
constexpr char kSlice[] = R"(
def onnx_shape_slice(self, x: Tensor, starts: List[int], ends: List[int], axes: List[int],
                     steps: List[int]) -> Tensor:
    for i in range(len(starts)):
        axis = axes[i] if len(axes) > 0 else i
        if axis < 0:
            axis += x.dim()
        step = steps[i] if len(steps) > 0 else 1
        size = x.size(axis)
        start = starts[i]
        end = ends[i]
        if start < 0:
            start += size
        if end < 0:
            end += size
        if step > 0:
            x = x.slice(axis, min(max(start, 0), size), min(max(end, 0), size), step)
        else:
            start = min(max(start, 0), size - 1)
            end = min(max(end, -1), size - 1)
            if start > end:
                count = (start - end - 1) // -step + 1
                x = x.slice(axis, start + (count - 1) * step, start + 1, -step).flip([axis])
            else:
                x = x.narrow(axis, 0, 0)
    return x
)";

// libtorch 1.13 takes an int below -2^62 given to slice for a symbolic size and fails. Constant
// starts and ends (where INT64_MIN and INT64_MAX are common) are clamped into range first, which
// changes nothing since no dimension is that long.
constexpr std::int64_t kSliceBound = std::int64_t{1} << 62;

void lower_Slice(Emitter& e, const onnx::NodeProto& node) {
  const std::string x = e.in(node, 0);
  auto starts = e.constant_ints(node, 1);
  auto ends = e.constant_ints(node, 2);
  auto axes = Emitter::has_input(node, 3) ? e.constant_ints(node, 3) : std::nullopt;
  auto steps = Emitter::has_input(node, 4) ? e.constant_ints(node, 4) : std::nullopt;
  for (auto* bounds : {&starts, &ends}) {
    if (!*bounds) continue;
    for (std::int64_t& v : **bounds) v = std::clamp(v, -kSliceBound, kSliceBound);
  }
  std::optional<std::size_t> count;
  for (const auto* known : {&starts, &ends, &axes, &steps}) {
    if (!*known) continue;
    if (count && (*known)->size() != *count) {
      Emitter::refuse(node, "starts, ends, axes and steps must have the same length");
    }
    count = (*known)->size();
  }
  if (steps && std::find(steps->begin(), steps->end(), 0) != steps->end()) {
    Emitter::refuse(node, "a step of 0 is not allowed");
  }
  const bool constant = starts && ends && (axes || !Emitter::has_input(node, 3)) &&
                        (steps || !Emitter::has_input(node, 4));
  const bool forward =
      !steps || std::all_of(steps->begin(), steps->end(), [](std::int64_t s) { return s > 0; });
  if (constant && forward) {
    // torch's slice clamps positive steps' starts and ends exactly as ONNX does.
    std::string expression = x;
    for (std::size_t i = 0; i < starts->size(); ++i) {
      expression += ".slice(" + Emitter::integer(axes ? (*axes)[i] : std::int64_t(i)) + ", " +
                    Emitter::integer((*starts)[i]) + ", " + Emitter::integer((*ends)[i]) + ", " +
                    Emitter::integer(steps ? (*steps)[i] : 1) + ")";
    }
    e.out(node, 0, expression);
    return;
  }
  auto list = [&](int i, const std::optional<std::vector<std::int64_t>>& known) {
    if (!Emitter::has_input(node, i)) return std::string("[]");
    return known ? Emitter::ints(*known) : int_list(e, node, i);
  };
  e.out(node, 0, e.helper("onnx_shape_slice", kSlice) + "(" + x + ", " + list(1, starts) + ", " +
                     list(2, ends) + ", " + list(3, axes) + ", " + list(4, steps) + ")");
}

// Expand: numpy broadcasting of the input and the shape, where torch's expand would refuse a 1
// in the shape against a longer dimension of the input.
constexpr char kExpand[] = R"(
def onnx_shape_expand(self, x: Tensor, shape: List[int]) -> Tensor:
    rank = max(x.dim(), len(shape))
    dims: List[int] = []
    for d in range(rank):
        have = x.size(d - rank + x.dim()) if d >= rank - x.dim() else 1
        want = shape[d - rank + len(shape)] if d >= rank - len(shape) else 1
        dims.append(have if want == 1 else want)
    return x.expand(dims)
)";

void lower_Expand(Emitter& e, const onnx::NodeProto& node) {
  e.out(node, 0, e.helper("onnx_shape_expand", kExpand) + "(" + e.in(node, 0) + ", " +
                     int_list(e, node, 1) + ")");
}

void lower_Tile(Emitter& e, const onnx::NodeProto& node) {
  e.out(node, 0, e.in(node, 0) + ".repeat(" + int_list(e, node, 1) + ")");
}

// Pad. ONNX's pads are [begin of each axis..., end of each axis...], torch's constant_pad_nd
// takes (begin, end) pairs from the last axis back; negative pads crop in both.
constexpr char kTorchPads[] = R"(
def onnx_shape_torch_pads(self, pads: List[int]) -> List[int]:
    rank = len(pads) // 2
    out: List[int] = []
    for axis in range(rank - 1, -1, -1):
        out.append(pads[axis])
        out.append(pads[axis + rank])
    return out
)";

// Reflect and edge padding gather each axis through an index: torch's own reflection and
// replication pads take floating tensors only, pad the last 1-3 axes only, and reflect by less
// than the axis' size only. Reflecting is periodic (period 2 * (size - 1)), as numpy's reflect
// pad that ONNX follows.
constexpr char kPadIndexed[] = R"(
def onnx_shape_pad_indexed(self, x: Tensor, pads: List[int], reflect: bool) -> Tensor:
    rank = x.dim()
    for axis in range(rank):
        begin = pads[axis]
        end = pads[axis + rank]
        if begin == 0 and end == 0:
            continue
        size = x.size(axis)
        index = torch.arange(-begin, size + end, device=x.device)
        if not reflect:
            index = torch.clamp(index, 0, size - 1)
        elif size == 1:
            index = torch.zeros_like(index)
        else:
            period = 2 * (size - 1)
            index = torch.remainder(index, period)
            index = torch.where(index >= size, period - index, index)
        x = torch.index_select(x, axis, index)
    return x
)";

void lower_Pad(Emitter& e, const onnx::NodeProto& node) {
  const std::string mode = Emitter::attr_string(node, "mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge") {
    Emitter::refuse(node, "mode '" + mode + "' is not supported (supported: constant, reflect, "
                          "edge)");
  }
  const std::string x = e.in(node, 0);
  if (mode != "constant") {
    e.out(node, 0, e.helper("onnx_shape_pad_indexed", kPadIndexed) + "(" + x + ", " +
                       int_list(e, node, 1) + ", " + (mode == "reflect" ? "True" : "False") +
                       ")");
    return;
  }
  std::string pads;
  if (auto onnx_pads = e.constant_ints(node, 1)) {
    const std::size_t rank = onnx_pads->size() / 2;
    std::vector<std::int64_t> torch_pads;
    for (std::size_t axis = rank; axis-- > 0;) {
      torch_pads.push_back((*onnx_pads)[axis]);
      torch_pads.push_back((*onnx_pads)[axis + rank]);
    }
    pads = Emitter::ints(torch_pads);
  } else {
    pads = e.helper("onnx_shape_torch_pads", kTorchPads) + "(" + int_list(e, node, 1) + ")";
  }
  const std::string value = Emitter::has_input(node, 2) ? e.in(node, 2) + ".item()" : "0";
  e.out(node, 0, "torch.constant_pad_nd(" + x + ", " + pads + ", " + value + ")");
}

// GatherElements and ScatterElements: indices as torch takes them (int64, none negative).
constexpr char kElementIndex[] = R"(
def onnx_shape_element_index(self, x: Tensor, indices: Tensor, axis: int) -> Tensor:
    index = indices.to(4)
    return torch.where(index < 0, index + x.size(axis), index)
)";

std::string element_index(Emitter& e, const onnx::NodeProto& node, const std::string& axis) {
  return e.helper("onnx_shape_element_index", kElementIndex) + "(" + e.in(node, 0) + ", " +
         e.in(node, 1) + ", " + axis + ")";
}

void lower_GatherElements(Emitter& e, const onnx::NodeProto& node) {
  const std::string axis = Emitter::integer(Emitter::attr_int(node, "axis", 0));
  e.out(node, 0, "torch.gather(" + e.in(node, 0) + ", " + axis + ", " +
                     element_index(e, node, axis) + ")");
}

// The reduction of ScatterElements and ScatterND as torch.scatter's `reduce` argument: empty for
// none (the updates replace), refused for what opsets 13-17 do not define.
std::string scatter_reduction(const onnx::NodeProto& node) {
  const std::string reduction = Emitter::attr_string(node, "reduction", "none");
  if (reduction == "none") return "";
  if (reduction == "add") return "'add'";
  if (reduction == "mul") return "'multiply'";
  Emitter::refuse(node, "reduction '" + reduction + "' is not supported (supported: none, add, "
                        "mul)");
}

void lower_ScatterElements(Emitter& e, const onnx::NodeProto& node) {
  const std::string axis = Emitter::integer(Emitter::attr_int(node, "axis", 0));
  const std::string reduce = scatter_reduction(node);
  e.out(node, 0, "torch.scatter(" + e.in(node, 0) + ", " + axis + ", " +
                     element_index(e, node, axis) + ", " + e.in(node, 2) +
                     (reduce.empty() ? "" : ", reduce=" + reduce) + ")");
}

// GatherND: each index tuple (the last axis of `indices`, `depth` long) addresses a slice of the
// data after the batch axes. The tuples become offsets into the data flattened to
// [batch * block, rest...], where block counts the elements the tuples address in one batch.
constexpr char kGatherNd[] = R"(
def onnx_shape_gather_nd(self, x: Tensor, indices: Tensor, batch_dims: int) -> Tensor:
    depth = indices.size(-1)
    batch = 1
    for d in range(batch_dims):
        batch *= x.size(d)
    count = 1
    for d in range(batch_dims, indices.dim() - 1):
        count *= indices.size(d)
    block = 1
    strides: List[int] = []
    for d in range(batch_dims + depth - 1, batch_dims - 1, -1):
        strides.insert(0, block)
        block *= x.size(d)
    addressed: List[int] = x.shape[batch_dims:batch_dims + depth]
    rest: List[int] = x.shape[batch_dims + depth:]
    index = indices.to(4).reshape([batch, count, depth])
    index = torch.where(index < 0, index + torch.tensor(addressed, device=x.device), index)
    offsets = (index * torch.tensor(strides, device=x.device)).sum(-1)
    offsets = offsets + torch.arange(batch, device=x.device).unsqueeze(1) * block
    picked = torch.index_select(x.reshape([batch * block] + rest), 0, offsets.reshape([-1]))
    shape: List[int] = indices.shape[:-1]
    return picked.reshape(shape + rest)
)";

void lower_GatherND(Emitter& e, const onnx::NodeProto& node) {
  e.out(node, 0, e.helper("onnx_shape_gather_nd", kGatherNd) + "(" + e.in(node, 0) + ", " +
                     e.in(node, 1) + ", " +
                     Emitter::integer(Emitter::attr_int(node, "batch_dims", 0)) + ")");
}

// ScatterND: as GatherND without batch axes, the updates scattered along the flattened first
// axis; `reduce` is torch.scatter's ('' for none).
constexpr char kScatterNd[] = R"(
def onnx_shape_scatter_nd(self, x: Tensor, indices: Tensor, updates: Tensor,
                          reduce: str) -> Tensor:
    depth = indices.size(-1)
    count = 1
    for d in range(indices.dim() - 1):
        count *= indices.size(d)
    block = 1
    strides: List[int] = []
    for d in range(depth - 1, -1, -1):
        strides.insert(0, block)
        block *= x.size(d)
    addressed: List[int] = x.shape[:depth]
    rest: List[int] = x.shape[depth:]
    index = indices.to(4).reshape([count, depth])
    index = torch.where(index < 0, index + torch.tensor(addressed, device=x.device), index)
    offsets = (index * torch.tensor(strides, device=x.device)).sum(-1)
    source = updates.reshape([count] + rest)
    offsets = offsets.reshape([count] + [1 for _ in rest]).expand(source.shape)
    flat = x.reshape([block] + rest)
    if reduce == '':
        flat = torch.scatter(flat, 0, offsets, source)
    else:
        flat = torch.scatter(flat, 0, offsets, source, reduce=reduce)
    return flat.reshape(x.shape)
)";

void lower_ScatterND(Emitter& e, const onnx::NodeProto& node) {
  const std::string reduce = scatter_reduction(node);
  e.out(node, 0, e.helper("onnx_shape_scatter_nd", kScatterNd) + "(" + e.in(node, 0) + ", " +
                     e.in(node, 1) + ", " + e.in(node, 2) + ", " +
                     (reduce.empty() ? "''" : reduce) + ")");
}

// OneHot: `values` = [off, on]; indices in [-depth, depth) count negative ones from the end, the
// others are all off. The output has a new axis of `depth` classes at `axis`.
constexpr char kOneHot[] = R"(
def onnx_shape_one_hot(self, indices: Tensor, depth: Tensor, values: Tensor,
                       axis: int) -> Tensor:
    classes = int(depth)
    index = indices.to(4)
    index = torch.where(index < 0, index + classes, index)
    if axis < 0:
        axis += indices.dim() + 1
    shape: List[int] = [classes]
    for _ in range(indices.dim() - axis):
        shape.append(1)
    hot = index.unsqueeze(axis) == torch.arange(classes, device=indices.device).reshape(shape)
    flat = values.reshape([-1])
    return torch.where(hot, flat[1], flat[0])
)";

void lower_OneHot(Emitter& e, const onnx::NodeProto& node) {
  e.out(node, 0, e.helper("onnx_shape_one_hot", kOneHot) + "(" + e.in(node, 0) + ", " +
                     e.in(node, 1) + ", " + e.in(node, 2) + ", " +
                     Emitter::integer(Emitter::attr_int(node, "axis", -1)) + ")");
}

// CumSum in the input's type (torch would widen integers to int64). Exclusive sums shift by one
// (a zero first), reverse ones run on the flipped axis.
constexpr char kCumSum[] = R"(
def onnx_shape_cumsum(self, x: Tensor, axis: int, exclusive: bool, reverse: bool) -> Tensor:
    if reverse:
        x = x.flip([axis])
    y = torch.cumsum(x, axis, dtype=x.dtype)
    if exclusive:
        size = x.size(axis)
        zero = torch.zeros_like(y.narrow(axis, 0, min(size, 1)))
        y = torch.cat([zero, y.narrow(axis, 0, max(size - 1, 0))], axis)
    if reverse:
        y = y.flip([axis])
    return y
)";

void lower_CumSum(Emitter& e, const onnx::NodeProto& node) {
  e.out(node, 0, e.helper("onnx_shape_cumsum", kCumSum) + "(" + e.in(node, 0) + ", " +
                     int_scalar(e, node, 1) + ", " +
                     (Emitter::attr_int(node, "exclusive", 0) ? "True" : "False") + ", " +
                     (Emitter::attr_int(node, "reverse", 0) ? "True" : "False") + ")");
}

void lower_Trilu(Emitter& e, const onnx::NodeProto& node) {
  const std::string k = Emitter::has_input(node, 1) ? int_scalar(e, node, 1) : "0";
  e.out(node, 0, std::string(Emitter::attr_int(node, "upper", 1) ? "torch.triu(" : "torch.tril(") +
                     e.in(node, 0) + ", " + k + ")");
}

// TopK by a stable sort, so that equal values come in the order of their indices, as ONNX
// expects (torch.topk leaves ties in any order). `sorted` = 0 allows any order: sorted is one.
constexpr char kTopK[] = R"(
def onnx_shape_top_k(self, x: Tensor, k: int, axis: int,
                     largest: bool) -> Tuple[Tensor, Tensor]:
    values, indices = torch.sort(x, stable=True, dim=axis, descending=largest)
    return values.narrow(axis, 0, k), indices.narrow(axis, 0, k)
)";

void lower_TopK(Emitter& e, const onnx::NodeProto& node) {
  const std::string both = e.fresh();
  e.line(both + " = " + e.helper("onnx_shape_top_k", kTopK) + "(" + e.in(node, 0) + ", " +
         int_scalar(e, node, 1) + ", " + Emitter::integer(Emitter::attr_int(node, "axis", -1)) +
         ", " + (Emitter::attr_int(node, "largest", 1) ? "True" : "False") + ")");
  e.out(node, 0, both + "[0]");
  e.out(node, 1, both + "[1]");
}

// NonZero: [rank, count] indices; a scalar counts as one element, as numpy's nonzero does.
void lower_NonZero(Emitter& e, const onnx::NodeProto& node) {
  e.out(node, 0, "torch.nonzero(torch.atleast_1d(" + e.in(node, 0) + ")).transpose(0, 1)");
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
  t.add("", "ConstantOfShape", lower_ConstantOfShape);
  t.add("", "EyeLike", lower_EyeLike);
  t.add("", "Range", lower_Range);
  t.add("", "Split", lower_Split);
  t.add("", "Slice", lower_Slice);
  t.add("", "Expand", lower_Expand);
  t.add("", "Tile", lower_Tile);
  t.add("", "Pad", lower_Pad);
  t.add("", "GatherElements", lower_GatherElements);
  t.add("", "ScatterElements", lower_ScatterElements);
  t.add("", "GatherND", lower_GatherND);
  t.add("", "ScatterND", lower_ScatterND);
  t.add("", "OneHot", lower_OneHot);
  t.add("", "CumSum", lower_CumSum);
  t.add("", "Trilu", lower_Trilu);
  t.add("", "TopK", lower_TopK);
  t.add("", "NonZero", lower_NonZero);
}

}  // namespace slipstream::ml::onnx_import
