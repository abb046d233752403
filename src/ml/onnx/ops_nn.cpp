// Neural-network operators: Gemm and MatMul; the convolutions (Conv, ConvTranspose) and pools
// (MaxPool with its Indices, AveragePool, GlobalAveragePool, GlobalMaxPool, LRN); the
// normalizations (BatchNormalization for inference, InstanceNormalization, LayerNormalization
// with its Mean and InvStdDev, MeanVarianceNormalization); DepthToSpace and SpaceToDepth.
// Written for opsets 13-17.
#include <algorithm>

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
  // A dense layer as PyTorch exports it (B transposed, a bias row): aten::linear, which is what
  // the TorchScript model runs. An addmm over B's transposed view instead took 1.5x as long for
  // 65536 rows (libtorch 1.13, CPU; measured in TorchScript from Python).
  if (Emitter::attr_int(node, "transA", 0) == 0 && Emitter::attr_int(node, "transB", 0) != 0 &&
      Emitter::has_input(node, 2) && e.input_rank(node, 2) == 1 && alpha == 1.0 && beta == 1.0) {
    e.out(node, 0, "torch.linear(" + e.in(node, 0) + ", " + e.in(node, 1) + ", " + e.in(node, 2) +
                       ")");
    return;
  }
  // Otherwise one addmm where it applies (the multiply and the bias in one kernel) instead of a
  // matmul and a separate add over its result.
  if (Emitter::has_input(node, 2) && alpha == 1.0 && beta == 1.0) {
    e.out(node, 0, "torch.addmm(" + e.in(node, 2) + ", " + a + ", " + b + ")");
    return;
  }
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

// ---- Windows of the convolutions and pools.

// The window of a convolution or pool over `rank` spatial dimensions, ONNX's defaults filled in.
// auto_pad VALID is read as zero pads; SAME_UPPER and SAME_LOWER pads depend on the input's size
// and are computed when the model runs (onnx_nn_same_pads).
struct Window {
  std::size_t rank = 0;
  std::vector<std::int64_t> strides, dilations;
  std::vector<std::int64_t> pads;  // the begin of each dimension, then the end of each
  bool same = false;
  bool same_upper = false;  // with `same`: an odd padding's extra element goes at the end
};

// The `count` integers of attribute `name`, each at least `least`; `fallback` repeated when the
// attribute is absent.
std::vector<std::int64_t> attr_ints_or(const onnx::NodeProto& node, std::string_view name,
                                       std::size_t count, std::int64_t fallback,
                                       std::int64_t least) {
  std::vector<std::int64_t> values = Emitter::attr_ints(node, name);
  if (Emitter::attribute(node, name) == nullptr) values.assign(count, fallback);
  if (values.size() != count) {
    Emitter::refuse(node, std::string(name) + " has " + std::to_string(values.size()) +
                              " values where " + std::to_string(count) + " are expected");
  }
  for (std::int64_t v : values) {
    if (v < least) {
      Emitter::refuse(node, std::string(name) + " holds " + std::to_string(v) + " (at least " +
                                std::to_string(least) + " expected)");
    }
  }
  return values;
}

Window read_window(const onnx::NodeProto& node, std::size_t rank) {
  Window w;
  w.rank = rank;
  w.strides = attr_ints_or(node, "strides", rank, 1, 1);
  w.dilations = attr_ints_or(node, "dilations", rank, 1, 1);
  const std::string auto_pad = Emitter::attr_string(node, "auto_pad", "NOTSET");
  if (auto_pad == "NOTSET") {
    w.pads = attr_ints_or(node, "pads", 2 * rank, 0, 0);
  } else if (auto_pad == "VALID" || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    w.pads.assign(2 * rank, 0);
    w.same = auto_pad != "VALID";
    w.same_upper = auto_pad == "SAME_UPPER";
  } else {
    Emitter::refuse(node, "auto_pad must be NOTSET, SAME_UPPER, SAME_LOWER or VALID");
  }
  return w;
}

std::vector<std::int64_t> begins(const Window& w) {
  return {w.pads.begin(), w.pads.begin() + static_cast<std::ptrdiff_t>(w.rank)};
}

std::vector<std::int64_t> ends(const Window& w) {
  return {w.pads.begin() + static_cast<std::ptrdiff_t>(w.rank), w.pads.end()};
}

// True when torch's own padding (the same on both sides of each dimension) is the window's.
bool symmetric(const Window& w) { return !w.same && begins(w) == ends(w); }

// Torch's pools pad at most half the kernel on each side.
bool within_half_kernel(const Window& w, const std::vector<std::int64_t>& kernel) {
  for (std::size_t i = 0; i < w.rank; ++i) {
    if (w.pads[i] > kernel[i] / 2) return false;
  }
  return true;
}

// ONNX's SAME pads: the output has ceil(size / stride) elements, the padding split evenly
// with the odd element at the end (SAME_UPPER) or at the begin (SAME_LOWER).
constexpr char kSamePads[] = R"(
def onnx_nn_same_pads(self, x: Tensor, kernel: List[int], strides: List[int],
                      dilations: List[int], upper: bool) -> List[int]:
    n = len(kernel)
    begins: List[int] = []
    ends: List[int] = []
    for i in range(n):
        size = x.size(x.dim() - n + i)
        reach = (kernel[i] - 1) * dilations[i] + 1
        total = max(((size + strides[i] - 1) // strides[i] - 1) * strides[i] + reach - size, 0)
        if upper:
            begins.append(total // 2)
            ends.append(total - total // 2)
        else:
            begins.append(total - total // 2)
            ends.append(total // 2)
    return begins + ends
)";

// The window's pads as a List[int] expression: a literal, or computed from `x` for SAME.
std::string pads_argument(Emitter& e, const Window& w, const std::string& x,
                          const std::string& kernel) {
  if (!w.same) return Emitter::ints(w.pads);
  return e.helper("onnx_nn_same_pads", kSamePads) + "(" + x + ", " + kernel + ", " +
         Emitter::ints(w.strides) + ", " + Emitter::ints(w.dilations) + ", " +
         (w.same_upper ? "True" : "False") + ")";
}

// ONNX's pads (begins, then ends) in the order of torch.constant_pad_nd (the last dimension's
// begin and end first).
constexpr char kTorchPads[] = R"(
def onnx_nn_torch_pads(self, pads: List[int]) -> List[int]:
    n = len(pads) // 2
    out: List[int] = []
    for i in range(n - 1, -1, -1):
        out.append(pads[i])
        out.append(pads[n + i])
    return out
)";

// The number of spatial dimensions of a Conv or ConvTranspose: from kernel_shape, else the
// weight's rank, else the input's.
std::size_t conv_rank(const Emitter& e, const onnx::NodeProto& node) {
  int rank = -1;
  if (Emitter::attribute(node, "kernel_shape") != nullptr) {
    rank = static_cast<int>(Emitter::attr_ints(node, "kernel_shape").size());
  } else if (e.input_rank(node, 1) >= 0) {
    rank = e.input_rank(node, 1) - 2;
  } else if (e.input_rank(node, 0) >= 0) {
    rank = e.input_rank(node, 0) - 2;
  }
  if (rank < 0) Emitter::refuse(node, "the rank of the convolution's weight is not known");
  if (rank < 1 || rank > 3) {
    Emitter::refuse(node, "only 1-D, 2-D and 3-D convolutions are supported (this one has " +
                              std::to_string(rank) + " spatial dimensions)");
  }
  return static_cast<std::size_t>(rank);
}

// ---- Convolutions.

std::string conv_group(const onnx::NodeProto& node) {
  const std::int64_t group = Emitter::attr_int(node, "group", 1);
  if (group < 1) Emitter::refuse(node, "group must be at least 1");
  return Emitter::integer(group);
}

// Conv with pads torch cannot take: the part common to both sides goes to torch's own padding,
// the rest is padded with zeros first.
constexpr char kConv[] = R"(
def onnx_nn_conv(self, x: Tensor, w: Tensor, b: Optional[Tensor], strides: List[int],
                 pads: List[int], dilations: List[int], group: int) -> Tensor:
    n = len(strides)
    common: List[int] = []
    rest: List[int] = []
    for i in range(n):
        common.append(min(pads[i], pads[n + i]))
    for i in range(2 * n):
        rest.append(pads[i] - common[i % n])
    if rest != [0] * (2 * n):
        x = torch.constant_pad_nd(x, self.onnx_nn_torch_pads(rest), 0.0)
    if n == 1:
        return torch.conv1d(x, w, b, strides, common, dilations, group)
    if n == 2:
        return torch.conv2d(x, w, b, strides, common, dilations, group)
    return torch.conv3d(x, w, b, strides, common, dilations, group)
)";

void lower_Conv(Emitter& e, const onnx::NodeProto& node) {
  const std::string x = e.in(node, 0), w = e.in(node, 1);
  const std::string b = Emitter::has_input(node, 2) ? e.in(node, 2) : "None";
  const Window window = read_window(node, conv_rank(e, node));
  const std::string group = conv_group(node);
  if (symmetric(window)) {
    e.out(node, 0, "torch.conv" + std::to_string(window.rank) + "d(" + x + ", " + w + ", " + b +
                       ", " + Emitter::ints(window.strides) + ", " +
                       Emitter::ints(begins(window)) + ", " + Emitter::ints(window.dilations) +
                       ", " + group + ")");
    return;
  }
  e.helper("onnx_nn_torch_pads", kTorchPads);
  e.out(node, 0, e.helper("onnx_nn_conv", kConv) + "(" + x + ", " + w + ", " + b + ", " +
                     Emitter::ints(window.strides) + ", " +
                     pads_argument(e, window, x, w + ".size()[2:]") + ", " +
                     Emitter::ints(window.dilations) + ", " + group + ")");
}

// ConvTranspose beyond what torch takes (pads that differ by side, output_padding at least the
// stride and dilation, output_shape, SAME): the full transposed convolution, then its pads cut
// off and output_padding zeros added at the end, as ONNX defines it. With output_shape (or
// SAME, whose output is the input's size times the stride) the pads are those that give that
// size, an odd total's extra element at the begin unless SAME_UPPER; a negative total adds zeros.
// `same`: 0 no, 1 SAME_UPPER, 2 SAME_LOWER.
constexpr char kConvTranspose[] = R"(
def onnx_nn_conv_transpose(self, x: Tensor, w: Tensor, b: Optional[Tensor], strides: List[int],
                           pads: List[int], dilations: List[int], output_padding: List[int],
                           output_shape: List[int], group: int, same: int) -> Tensor:
    n = len(strides)
    if len(output_shape) > 0 or same != 0:
        begins: List[int] = []
        ends: List[int] = []
        for i in range(n):
            size = x.size(x.dim() - n + i)
            reach = (w.size(2 + i) - 1) * dilations[i] + 1
            full = strides[i] * (size - 1) + output_padding[i] + reach
            target = size * strides[i]
            if len(output_shape) > 0:
                target = output_shape[len(output_shape) - n + i]
            total = full - target
            if same == 1:
                begins.append(total // 2)
                ends.append(total - total // 2)
            else:
                begins.append(total - total // 2)
                ends.append(total // 2)
        pads = begins + ends
    zeros = [0] * n
    if n == 1:
        y = torch.conv_transpose1d(x, w, None, strides, zeros, zeros, group, dilations)
    elif n == 2:
        y = torch.conv_transpose2d(x, w, None, strides, zeros, zeros, group, dilations)
    else:
        y = torch.conv_transpose3d(x, w, None, strides, zeros, zeros, group, dilations)
    cut: List[int] = []
    for i in range(n):
        cut.append(-pads[i])
    for i in range(n):
        cut.append(output_padding[i] - pads[n + i])
    y = torch.constant_pad_nd(y, self.onnx_nn_torch_pads(cut), 0.0)
    if b is not None:
        y = y + b.reshape([-1] + [1] * n)
    return y
)";

void lower_ConvTranspose(Emitter& e, const onnx::NodeProto& node) {
  const std::string x = e.in(node, 0), w = e.in(node, 1);
  const std::string b = Emitter::has_input(node, 2) ? e.in(node, 2) : "None";
  const Window window = read_window(node, conv_rank(e, node));
  const std::vector<std::int64_t> output_padding =
      attr_ints_or(node, "output_padding", window.rank, 0, 0);
  const std::vector<std::int64_t> output_shape = Emitter::attr_ints(node, "output_shape");
  if (!output_shape.empty() && output_shape.size() != window.rank &&
      output_shape.size() != window.rank + 2) {
    Emitter::refuse(node, "output_shape has " + std::to_string(output_shape.size()) +
                              " values where " + std::to_string(window.rank) + " (or " +
                              std::to_string(window.rank + 2) + ") are expected");
  }
  const std::string group = conv_group(node);
  bool native = symmetric(window) && output_shape.empty();
  for (std::size_t i = 0; i < window.rank; ++i) {  // torch's limit on output_padding
    native = native && output_padding[i] < std::max(window.strides[i], window.dilations[i]);
  }
  if (native) {
    e.out(node, 0, "torch.conv_transpose" + std::to_string(window.rank) + "d(" + x + ", " + w +
                       ", " + b + ", " + Emitter::ints(window.strides) + ", " +
                       Emitter::ints(begins(window)) + ", " + Emitter::ints(output_padding) +
                       ", " + group + ", " + Emitter::ints(window.dilations) + ")");
    return;
  }
  e.helper("onnx_nn_torch_pads", kTorchPads);
  const char* same = !window.same ? "0" : window.same_upper ? "1" : "2";
  e.out(node, 0, e.helper("onnx_nn_conv_transpose", kConvTranspose) + "(" + x + ", " + w + ", " +
                     b + ", " + Emitter::ints(window.strides) + ", " +
                     Emitter::ints(window.pads) + ", " + Emitter::ints(window.dilations) + ", " +
                     Emitter::ints(output_padding) + ", " + Emitter::ints(output_shape) + ", " +
                     group + ", " + same + ")");
}

// ---- Pools.

std::vector<std::int64_t> pool_kernel(const onnx::NodeProto& node) {
  const std::vector<std::int64_t> kernel = Emitter::attr_ints(node, "kernel_shape");
  if (kernel.empty() || kernel.size() > 3) {
    Emitter::refuse(node, "only 1-D, 2-D and 3-D pools are supported (kernel_shape has " +
                              std::to_string(kernel.size()) + " values)");
  }
  for (std::int64_t k : kernel) {
    if (k < 1) {
      Emitter::refuse(node, "kernel_shape holds " + std::to_string(k) + " (at least 1 expected)");
    }
  }
  return kernel;
}

// ceil_mode as torch's pools (and later ONNX) count windows: a last window that would start in
// the end padding is dropped. The general pools pad x themselves, which hides that padding from
// torch, so their outputs are cut to this count.
constexpr char kCeilWindows[] = R"(
def onnx_nn_ceil_windows(self, y: Tensor, x: Tensor, kernel: List[int], strides: List[int],
                         pads: List[int], dilations: List[int]) -> Tensor:
    n = len(kernel)
    for i in range(n):
        size = x.size(x.dim() - n + i)
        reach = (kernel[i] - 1) * dilations[i] + 1
        count = (size + pads[i] + pads[n + i] - reach + strides[i] - 1) // strides[i] + 1
        if (count - 1) * strides[i] >= size + pads[i]:
            count -= 1
        dim = y.dim() - n + i
        y = y.narrow(dim, 0, min(count, y.size(dim)))
    return y
)";

// MaxPool with pads torch cannot take (more than half the kernel, or differing by side): the
// rest padded with -inf first. The Indices output (with_indices) counts in x, without pads,
// over the whole tensor, in row-major order or column-major (storage_order 1).
constexpr char kMaxPool[] = R"(
def onnx_nn_max_pool(self, x: Tensor, kernel: List[int], strides: List[int], pads: List[int],
                     dilations: List[int], ceil_mode: bool, with_indices: bool,
                     column_major: bool) -> Tuple[Tensor, Tensor]:
    n = len(kernel)
    native: List[int] = []
    rest: List[int] = []
    for i in range(n):
        native.append(min(pads[i], pads[n + i], kernel[i] // 2))
    for i in range(2 * n):
        rest.append(pads[i] - native[i % n])
    padded = x
    if rest != [0] * (2 * n):
        padded = torch.constant_pad_nd(x, self.onnx_nn_torch_pads(rest), float('-inf'))
    if n == 1:
        y, where = torch.max_pool1d_with_indices(padded, kernel, strides, native, dilations,
                                                 ceil_mode)
    elif n == 2:
        y, where = torch.max_pool2d_with_indices(padded, kernel, strides, native, dilations,
                                                 ceil_mode)
    else:
        y, where = torch.max_pool3d_with_indices(padded, kernel, strides, native, dilations,
                                                 ceil_mode)
    if ceil_mode:
        y = self.onnx_nn_ceil_windows(y, x, kernel, strides, pads, dilations)
        where = self.onnx_nn_ceil_windows(where, x, kernel, strides, pads, dilations)
    if not with_indices:
        return y, where
    coordinates: List[Tensor] = []
    for i in range(n - 1, -1, -1):
        extent = padded.size(2 + i)
        c = torch.remainder(where, extent) - rest[i]
        where = torch.div(where, extent, rounding_mode='floor')
        # A window of -inf keeps its first position, which may lie in the padding added here;
        # torch's own padding would have kept the window's first element of x.
        step = dilations[i]
        ahead = torch.div(step - 1 - c, step, rounding_mode='floor') * step
        coordinates.insert(0, torch.where(c < 0, c + ahead, c))
    order = list(range(n - 1, -1, -1)) if column_major else list(range(n))
    index = torch.zeros_like(coordinates[0])
    plane = 1
    for i in order:
        index = index * x.size(2 + i) + coordinates[i]
        plane *= x.size(2 + i)
    planes = torch.arange(x.size(0) * x.size(1), device=x.device) * plane
    return y, index + planes.reshape([x.size(0), x.size(1)] + [1] * n)
)";

bool is_byte_type(int type) {
  return type == onnx::TensorProto::INT8 || type == onnx::TensorProto::UINT8;
}

void lower_MaxPool(Emitter& e, const onnx::NodeProto& node) {
  const std::vector<std::int64_t> kernel = pool_kernel(node);
  const Window window = read_window(node, kernel.size());
  const bool ceil_mode = Emitter::attr_int(node, "ceil_mode", 0) != 0;
  const bool with_indices = node.output_size() > 1 && !node.output(1).empty();
  const std::int64_t storage_order = Emitter::attr_int(node, "storage_order", 0);
  if (storage_order != 0 && storage_order != 1) {
    Emitter::refuse(node, "storage_order must be 0 (row major) or 1 (column major)");
  }
  // Torch pools no 8-bit integers: their values are exact in float32.
  const std::string input = e.in(node, 0);
  const int type = e.input_type(node, 0);
  const std::string x = is_byte_type(type) ? input + ".to(6)" : input;
  const auto back = [&](const std::string& y) {
    return is_byte_type(type) ? y + ".to(" + torch_dtype(type, "MaxPool") + ")" : y;
  };
  if (!with_indices && symmetric(window) && within_half_kernel(window, kernel)) {
    e.out(node, 0, back("torch.max_pool" + std::to_string(kernel.size()) + "d(" + x + ", " +
                        Emitter::ints(kernel) + ", " + Emitter::ints(window.strides) + ", " +
                        Emitter::ints(begins(window)) + ", " + Emitter::ints(window.dilations) +
                        ", " + (ceil_mode ? "True" : "False") + ")"));
    return;
  }
  e.helper("onnx_nn_torch_pads", kTorchPads);
  e.helper("onnx_nn_ceil_windows", kCeilWindows);
  const std::string pooled = e.fresh();
  e.line(pooled + " = " + e.helper("onnx_nn_max_pool", kMaxPool) + "(" + x + ", " +
         Emitter::ints(kernel) + ", " + Emitter::ints(window.strides) + ", " +
         pads_argument(e, window, input, Emitter::ints(kernel)) + ", " +
         Emitter::ints(window.dilations) + ", " + (ceil_mode ? "True" : "False") + ", " +
         (with_indices ? "True" : "False") + ", " + (storage_order == 1 ? "True" : "False") +
         ")");
  e.out(node, 0, back(pooled + "[0]"));
  if (with_indices) e.out(node, 1, pooled + "[1]");
}

// AveragePool with pads torch cannot take: the sum of each window of x padded with zeros over
// the count of its elements (of x, or of x and the pads with count_include_pad), both pooled
// with torch's divisor_override = 1 (which avg_pool1d lacks: the 1-D case is pooled as 2-D).
constexpr char kAveragePool[] = R"(
def onnx_nn_average_pool(self, x: Tensor, kernel: List[int], strides: List[int],
                         pads: List[int], ceil_mode: bool, count_include_pad: bool) -> Tensor:
    one_d = len(kernel) == 1
    if one_d:
        x = x.unsqueeze(-2)
        kernel = [1, kernel[0]]
        strides = [1, strides[0]]
        pads = [0, pads[0], 0, pads[1]]
    n = len(kernel)
    torch_pads = self.onnx_nn_torch_pads(pads)
    ones = torch.ones([1, 1] + x.size()[2:], dtype=x.dtype, device=x.device)
    padded = torch.constant_pad_nd(x, torch_pads, 0.0)
    counted = torch.constant_pad_nd(ones, torch_pads, 1.0 if count_include_pad else 0.0)
    zeros = [0] * n
    if n == 2:
        sums = torch.avg_pool2d(padded, kernel, strides, zeros, ceil_mode, True, 1)
        counts = torch.avg_pool2d(counted, kernel, strides, zeros, ceil_mode, True, 1)
    else:
        sums = torch.avg_pool3d(padded, kernel, strides, zeros, ceil_mode, True, 1)
        counts = torch.avg_pool3d(counted, kernel, strides, zeros, ceil_mode, True, 1)
    y = sums / counts
    if ceil_mode:
        y = self.onnx_nn_ceil_windows(y, x, kernel, strides, pads, [1] * n)
    if one_d:
        y = y.squeeze(-2)
    return y
)";

void lower_AveragePool(Emitter& e, const onnx::NodeProto& node) {
  const std::vector<std::int64_t> kernel = pool_kernel(node);
  const Window window = read_window(node, kernel.size());
  const std::string x = e.in(node, 0);
  const std::string ceil_mode = Emitter::attr_int(node, "ceil_mode", 0) != 0 ? "True" : "False";
  const std::string count_include_pad =
      Emitter::attr_int(node, "count_include_pad", 0) != 0 ? "True" : "False";
  if (symmetric(window) && within_half_kernel(window, kernel)) {
    e.out(node, 0, "torch.avg_pool" + std::to_string(kernel.size()) + "d(" + x + ", " +
                       Emitter::ints(kernel) + ", " + Emitter::ints(window.strides) + ", " +
                       Emitter::ints(begins(window)) + ", " + ceil_mode + ", " +
                       count_include_pad + ")");
    return;
  }
  e.helper("onnx_nn_torch_pads", kTorchPads);
  e.helper("onnx_nn_ceil_windows", kCeilWindows);
  e.out(node, 0, e.helper("onnx_nn_average_pool", kAveragePool) + "(" + x + ", " +
                     Emitter::ints(kernel) + ", " + Emitter::ints(window.strides) + ", " +
                     pads_argument(e, window, x, Emitter::ints(kernel)) + ", " + ceil_mode +
                     ", " + count_include_pad + ")");
}

// Over every spatial dimension; a tensor without any is its own pool.
constexpr char kGlobalPool[] = R"(
def onnx_nn_global_pool(self, x: Tensor, maximum: bool) -> Tensor:
    dims = list(range(2, x.dim()))
    if len(dims) == 0:
        return x
    if maximum:
        return torch.amax(x, dims, keepdim=True)
    return torch.mean(x, dims, keepdim=True)
)";

void lower_GlobalAveragePool(Emitter& e, const onnx::NodeProto& node) {
  e.out(node, 0, e.helper("onnx_nn_global_pool", kGlobalPool) + "(" + e.in(node, 0) + ", False)");
}

void lower_GlobalMaxPool(Emitter& e, const onnx::NodeProto& node) {
  e.out(node, 0, e.helper("onnx_nn_global_pool", kGlobalPool) + "(" + e.in(node, 0) + ", True)");
}

// LRN: each element over (bias + alpha / size * the sum of the squares of `size` channels
// around it, fewer at the edges) ** beta; the sums pooled over the channels.
constexpr char kLrn[] = R"(
def onnx_nn_lrn(self, x: Tensor, size: int, alpha: float, beta: float, bias: float) -> Tensor:
    squares = (x * x).reshape([x.size(0), 1, x.size(1), -1])
    before = (size - 1) // 2
    squares = torch.constant_pad_nd(squares, [0, 0, before, size - 1 - before], 0.0)
    sums = torch.avg_pool2d(squares, [size, 1], [1, 1], [0, 0], False, True, 1)
    return x / torch.pow(bias + alpha / size * sums.reshape(x.size()), beta)
)";

void lower_LRN(Emitter& e, const onnx::NodeProto& node) {
  const std::int64_t size = Emitter::attr_int(node, "size", 0);
  if (size < 1) Emitter::refuse(node, "size must be at least 1");
  e.out(node, 0, e.helper("onnx_nn_lrn", kLrn) + "(" + e.in(node, 0) + ", " +
                     Emitter::integer(size) + ", " +
                     Emitter::number(Emitter::attr_float(node, "alpha", 0.0001F)) + ", " +
                     Emitter::number(Emitter::attr_float(node, "beta", 0.75F)) + ", " +
                     Emitter::number(Emitter::attr_float(node, "bias", 1.0F)) + ")");
}

// ---- Normalizations.

// Input `i` in the input's dtype: opset 15 lets the statistics of a float16 tensor be float.
std::string as_input_type(Emitter& e, const onnx::NodeProto& node, int i) {
  const std::string value = e.in(node, i);
  const int type = e.input_type(node, i);
  return type == e.input_type(node, 0) ? value : value + ".to(" + e.in(node, 0) + ".dtype)";
}

void lower_BatchNormalization(Emitter& e, const onnx::NodeProto& node) {
  if (Emitter::attr_int(node, "training_mode", 0) != 0) {
    Emitter::refuse(node, "training_mode=1 is not supported: models run for inference");
  }
  e.out(node, 0, "torch.batch_norm(" + e.in(node, 0) + ", " + as_input_type(e, node, 1) + ", " +
                     as_input_type(e, node, 2) + ", " + as_input_type(e, node, 3) + ", " +
                     as_input_type(e, node, 4) + ", False, 0.0, " +
                     Emitter::number(Emitter::attr_float(node, "epsilon", 1e-5F)) + ", False)");
}

void lower_InstanceNormalization(Emitter& e, const onnx::NodeProto& node) {
  e.out(node, 0, "torch.instance_norm(" + e.in(node, 0) + ", " + e.in(node, 1) + ", " +
                     e.in(node, 2) + ", None, None, True, 0.0, " +
                     Emitter::number(Emitter::attr_float(node, "epsilon", 1e-5F)) + ", False)");
}

// LayerNormalization, computed in float32 (stash_type 1) whatever the input's type: Y in the
// input's, Mean and InvStdDev in float32 with the normalized dimensions kept as 1. Scale and B
// that only broadcast to the normalized shape (torch's layer_norm takes that shape exactly) are
// applied after.
constexpr char kLayerNorm[] = R"(
def onnx_nn_layer_norm(self, x: Tensor, scale: Tensor, bias: Optional[Tensor], axis: int,
                       epsilon: float) -> Tuple[Tensor, Tensor, Tensor]:
    if axis < 0:
        axis += x.dim()
    shape = x.size()[axis:]
    stash = x.to(6)
    weight = scale.to(6)
    shift: Optional[Tensor] = None
    exact = scale.size() == shape
    if bias is not None:
        shift = bias.to(6)
        exact = exact and bias.size() == shape
    if exact:
        y, mean, inverse = torch.native_layer_norm(stash, shape, weight, shift, epsilon)
    else:
        y, mean, inverse = torch.native_layer_norm(stash, shape, None, None, epsilon)
        y = y * weight
        if shift is not None:
            y = y + shift
    return y.to(x.dtype), mean, inverse
)";

void lower_LayerNormalization(Emitter& e, const onnx::NodeProto& node) {
  if (Emitter::attr_int(node, "stash_type", 1) != 1) {
    Emitter::refuse(node, "only stash_type 1 (computing in float32) is supported");
  }
  const std::string normalized = e.fresh();
  e.line(normalized + " = " + e.helper("onnx_nn_layer_norm", kLayerNorm) + "(" + e.in(node, 0) +
         ", " + e.in(node, 1) + ", " + (Emitter::has_input(node, 2) ? e.in(node, 2) : "None") +
         ", " + Emitter::integer(Emitter::attr_int(node, "axis", -1)) + ", " +
         Emitter::number(Emitter::attr_float(node, "epsilon", 1e-5F)) + ")");
  for (int i = 0; i < std::min(node.output_size(), 3); ++i) {
    if (!node.output(i).empty()) e.out(node, i, normalized + "[" + std::to_string(i) + "]");
  }
}

// (x - mean) / (standard deviation + 1e-9) over `axes`, as ONNX's function defines it.
constexpr char kMeanVarianceNormalization[] = R"(
def onnx_nn_mean_variance_normalization(self, x: Tensor, axes: List[int]) -> Tensor:
    variance, mean = torch.var_mean(x, axes, False, True)
    return (x - mean) / (torch.sqrt(variance) + 1e-9)
)";

void lower_MeanVarianceNormalization(Emitter& e, const onnx::NodeProto& node) {
  std::vector<std::int64_t> axes = Emitter::attr_ints(node, "axes");
  if (Emitter::attribute(node, "axes") == nullptr) axes = {0, 2, 3};
  e.out(node, 0, e.helper("onnx_nn_mean_variance_normalization", kMeanVarianceNormalization) +
                     "(" + e.in(node, 0) + ", " + Emitter::ints(axes) + ")");
}

// ---- Moving blocks between depth and space (4-D tensors).

std::string blocksize(const onnx::NodeProto& node) {
  const std::int64_t block = Emitter::attr_int(node, "blocksize", 0);
  if (block < 1) Emitter::refuse(node, "blocksize must be at least 1");
  return Emitter::integer(block);
}

// DCR: the channels are read as (block row, block column, channel).
constexpr char kDepthToSpace[] = R"(
def onnx_nn_depth_to_space(self, x: Tensor, block: int) -> Tensor:
    n, c, h, w = x.size(0), x.size(1), x.size(2), x.size(3)
    channels = c // (block * block)
    y = x.reshape([n, block, block, channels, h, w]).permute([0, 3, 4, 1, 5, 2])
    return y.reshape([n, channels, h * block, w * block])
)";

void lower_DepthToSpace(Emitter& e, const onnx::NodeProto& node) {
  const std::string mode = Emitter::attr_string(node, "mode", "DCR");
  const std::string block = blocksize(node);
  if (mode == "CRD") {  // (channel, block row, block column): torch's pixel shuffle
    e.out(node, 0, "torch.pixel_shuffle(" + e.in(node, 0) + ", " + block + ")");
  } else if (mode == "DCR") {
    e.out(node, 0, e.helper("onnx_nn_depth_to_space", kDepthToSpace) + "(" + e.in(node, 0) +
                       ", " + block + ")");
  } else {
    Emitter::refuse(node, "mode must be DCR or CRD");
  }
}

// The inverse of DepthToSpace's DCR: the channels become (block row, block column, channel).
constexpr char kSpaceToDepth[] = R"(
def onnx_nn_space_to_depth(self, x: Tensor, block: int) -> Tensor:
    n, c, h, w = x.size(0), x.size(1), x.size(2), x.size(3)
    y = x.reshape([n, c, h // block, block, w // block, block]).permute([0, 3, 5, 1, 2, 4])
    return y.reshape([n, c * block * block, h // block, w // block])
)";

void lower_SpaceToDepth(Emitter& e, const onnx::NodeProto& node) {
  e.out(node, 0, e.helper("onnx_nn_space_to_depth", kSpaceToDepth) + "(" + e.in(node, 0) + ", " +
                     blocksize(node) + ")");
}

}  // namespace

void add_nn_ops(OpTable& t) {
#define ADD(NAME) t.add("", #NAME, lower_##NAME)
  ADD(Gemm); ADD(MatMul); ADD(Conv); ADD(ConvTranspose); ADD(MaxPool); ADD(AveragePool);
  ADD(GlobalAveragePool); ADD(GlobalMaxPool); ADD(LRN); ADD(BatchNormalization);
  ADD(InstanceNormalization); ADD(LayerNormalization); ADD(MeanVarianceNormalization);
  ADD(DepthToSpace); ADD(SpaceToDepth);
#undef ADD
}

}  // namespace slipstream::ml::onnx_import
