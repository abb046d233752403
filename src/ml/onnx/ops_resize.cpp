// Resize (and Upsample, which the version converter turns into it): modes nearest (every
// nearest_mode), linear and cubic (cubic_coeff_a, exclude_outside), any rank, one axis after
// the other; coordinate transformations half_pixel, pytorch_half_pixel, align_corners,
// asymmetric, tf_crop_and_resize (roi, extrapolation_value) and opset 11's tf_half_pixel_for_nn;
// the output shape from `scales` or `sizes`. Written for opsets 13-17.
//
// Source coordinates, indices and weights are computed here in float64, as ONNX's reference
// implementation computes them: torch's interpolate rounds and transforms coordinates its own way.
#include <cstring>
#include <string_view>

#include "ml/onnx/emitter.hpp"

namespace slipstream::ml::onnx_import {
namespace {

// roi and scales, and sizes, read at run time where they are not constants.
constexpr char kFloats[] = R"(
def onnx_resize_floats(self, t: Tensor) -> List[float]:
    values: List[float] = t.to(7).reshape([-1]).tolist()
    return values
)";

constexpr char kInts[] = R"(
def onnx_resize_ints(self, t: Tensor) -> List[int]:
    values: List[int] = t.to(4).reshape([-1]).tolist()
    return values
)";

// The input coordinate of each output index along one axis, by coordinate_transformation_mode
// (numbered as kTransforms). `resized` is the output length as the scale gives it, fractional
// when the scale is: ONNX's reference divides by it for align_corners and tf_crop_and_resize.
// pytorch_half_pixel maps a single output to 0, as the specification says (the reference's -0.5
// reads the same edge but for cubic).
constexpr char kCoordinates[] = R"(
def onnx_resize_coordinates(self, out_size: int, in_size: int, scale: float, resized: float,
                            start: float, end: float, transform: int, device: Device) -> Tensor:
    x = torch.arange(out_size, dtype=7, device=device)
    if transform == 0:
        return (x + 0.5) / scale - 0.5
    if transform == 1:
        if resized > 1.0:
            return (x + 0.5) / scale - 0.5
        return torch.zeros_like(x)
    if transform == 2:
        if resized == 1.0:
            return torch.zeros_like(x)
        return x * (in_size - 1) / (resized - 1.0)
    if transform == 3:
        return x / scale
    if transform == 4:
        if resized == 1.0:
            return torch.full_like(x, (end - start) * (in_size - 1) / 2 + start * (in_size - 1))
        return x * (end - start) * (in_size - 1) / (resized - 1.0) + start * (in_size - 1)
    return (x + 0.5) / scale
)";

// Interpolates `x` along `axis` at the input coordinates `xo`. Nearest picks one index by
// nearest_mode (numbered as kNearestModes; 4 is Resize-10's: floor when upsampling, ceil when
// downsampling). Linear weighs the two indices around xo, cubic the four; as in ONNX's reference
// an integer xo is taken as the upper end of the interval below it (ratio 1), and an index past
// either end reads the edge, or for cubic with exclude_outside weighs nothing, the other weights
// renormalized.
constexpr char kAxis[] = R"(
def onnx_resize_axis(self, x: Tensor, axis: int, xo: Tensor, mode: int, nearest: int,
                     upsampling: bool, a: float, exclude_outside: bool) -> Tensor:
    last = x.size(axis) - 1
    if mode == 0:
        low = torch.floor(xo)
        fraction = xo - low
        if nearest == 0:
            index = torch.where(fraction > 0.5, low + 1, low)
        elif nearest == 1:
            index = torch.where(fraction >= 0.5, low + 1, low)
        elif nearest == 2 or (nearest == 4 and upsampling):
            index = low
        else:
            index = torch.ceil(xo)
        return torch.index_select(x, axis, torch.clamp(index, 0, last).to(4))
    base = torch.ceil(xo) - 1
    r = xo - base
    if mode == 1:
        taps = [0, 1]
        weights = [1 - r, r]
    else:
        s = 1 - r
        taps = [-1, 0, 1, 2]
        weights = [((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a,
                   ((a + 2) * r - (a + 3)) * r * r + 1,
                   ((a + 2) * s - (a + 3)) * s * s + 1,
                   ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a]
        if exclude_outside:
            total = torch.zeros_like(r)
            for k in range(4):
                outside = (base + taps[k] < 0) | (base + taps[k] > last)
                weights[k] = torch.where(outside, torch.zeros_like(r), weights[k])
                total = total + weights[k]
            for k in range(4):
                weights[k] = weights[k] / total
    shape: List[int] = [1] * x.dim()
    shape[axis] = xo.size(0)
    size: List[int] = x.shape
    size[axis] = xo.size(0)
    y = torch.zeros(size, dtype=x.dtype, device=x.device)
    for k in range(len(taps)):
        index = torch.clamp(base + taps[k], 0, last).to(4)
        y = y + torch.index_select(x, axis, index) * weights[k].to(x.dtype).reshape(shape)
    return y
)";

// The whole Resize: the output sizes (from `sizes`, else floor(input size * scale) in float32
// as ONNX's shape inference computes them), then each axis, last to first as ONNX's reference
// nests them; an axis at scale 1 is left as it is by the first four transformations, and
// skipped. Where tf_crop_and_resize maps an output index outside the input, the output is
// `extrapolation`. Linear and cubic weigh float16 and bfloat16 as float32, and integers as
// float64, truncated.
constexpr char kResize[] = R"(
def onnx_resize(self, x: Tensor, roi: List[float], scales: List[float], sizes: List[int],
                mode: int, transform: int, nearest: int, a: float, exclude_outside: bool,
                extrapolation: float) -> Tensor:
    rank = x.dim()
    by_sizes = len(sizes) > 0
    if not by_sizes:
        counts = torch.tensor(x.shape, dtype=6) * torch.tensor(scales, dtype=6)
        computed: List[int] = torch.floor(counts).to(4).tolist()
        sizes = computed
    y = x
    if mode != 0 and x.dtype != 6 and x.dtype != 7:
        y = x.to(6) if x.is_floating_point() else x.to(7)
    for d in range(rank - 1, -1, -1):
        n = x.size(d)
        m = sizes[d]
        if by_sizes:
            scale = m / n
            resized = float(m)
        else:
            scale = scales[d]
            resized = scale * n
        if scale == 1.0 and m == n and transform < 4:
            continue
        start = 0.0
        end = 1.0
        if transform == 4:
            start = roi[d]
            end = roi[rank + d]
        xo = self.onnx_resize_coordinates(m, n, scale, resized, start, end, transform, x.device)
        y = self.onnx_resize_axis(y, d, xo, mode, nearest, scale >= 1.0, a, exclude_outside)
        if transform == 4:
            shape: List[int] = [1] * rank
            shape[d] = m
            outside = ((xo < 0) | (xo > n - 1)).reshape(shape)
            y = torch.where(outside, torch.full_like(y, extrapolation), y)
    return y.to(x.dtype)
)";

// Attribute values as the helpers number them: their positions in these lists.
constexpr const char* kModes[] = {"nearest", "linear", "cubic"};
constexpr const char* kTransforms[] = {"half_pixel",  "pytorch_half_pixel", "align_corners",
                                       "asymmetric",  "tf_crop_and_resize",
                                       "tf_half_pixel_for_nn"};
constexpr int kAsymmetric = 3;
constexpr int kTfCropAndResize = 4;
constexpr const char* kNearestModes[] = {"round_prefer_floor", "round_prefer_ceil", "floor",
                                         "ceil"};
constexpr int kResize10Nearest = 4;  // not an attribute value: Resize-10's own rounding

// The position of `value` in `names`, refusing the node when it is none of them.
template <std::size_t N>
int choice(const onnx::NodeProto& node, std::string_view attribute, const std::string& value,
           const char* const (&names)[N]) {
  std::string known;
  for (std::size_t k = 0; k < N; ++k) {
    if (value == names[k]) return static_cast<int>(k);
    known += (k ? ", " : "") + std::string(names[k]);
  }
  Emitter::refuse(node, std::string(attribute) + " '" + value + "' is not supported (supported: " +
                            known + ")");
}

// The values of a constant float or double input, or nullopt when it is not one.
std::optional<std::vector<double>> constant_floats(const Emitter& e, const onnx::NodeProto& node,
                                                   int i) {
  const onnx::TensorProto* value = e.constant(node, i);
  if (value == nullptr) return std::nullopt;
  std::vector<double> out;
  const std::string& raw = value->raw_data();
  if (value->data_type() == onnx::TensorProto::FLOAT) {
    if (raw.empty()) return std::vector<double>(value->float_data().begin(),
                                                value->float_data().end());
    if (raw.size() % 4 != 0) return std::nullopt;
    for (std::size_t k = 0; k < raw.size(); k += 4) {
      float v = 0;
      std::memcpy(&v, raw.data() + k, 4);  // little-endian, as ONNX stores it and we run
      out.push_back(v);
    }
    return out;
  }
  if (value->data_type() == onnx::TensorProto::DOUBLE) {
    if (raw.empty()) return std::vector<double>(value->double_data().begin(),
                                                value->double_data().end());
    if (raw.size() % 8 != 0) return std::nullopt;
    out.resize(raw.size() / 8);
    std::memcpy(out.data(), raw.data(), raw.size());
    return out;
  }
  return std::nullopt;
}

std::string float_list(const std::vector<double>& values) {
  std::string out = "[";
  for (std::size_t k = 0; k < values.size(); ++k) {
    out += (k ? ", " : "") + Emitter::number(values[k]);
  }
  return out + "]";
}

// A constant input of `rank` values (when the rank is known) or of none, else refused.
void check_length(const onnx::NodeProto& node, const char* name, std::size_t length,
                  std::size_t expected, int rank) {
  if (length != 0 && rank >= 0 && length != expected) {
    Emitter::refuse(node, std::string(name) + " has " + std::to_string(length) +
                              " values where the input's rank needs " + std::to_string(expected));
  }
}

void lower_Resize(Emitter& e, const onnx::NodeProto& node) {
  const int mode = choice(node, "mode", Emitter::attr_string(node, "mode", "nearest"), kModes);
  int transform = choice(node, "coordinate_transformation_mode",
                         Emitter::attr_string(node, "coordinate_transformation_mode", "half_pixel"),
                         kTransforms);
  int nearest = choice(node, "nearest_mode",
                       Emitter::attr_string(node, "nearest_mode", "round_prefer_floor"),
                       kNearestModes);
  // Upsample and Resize-10 reach here converted, without the attributes that would keep their
  // meaning: asymmetric coordinates, floor when upsampling and ceil when downsampling.
  if (e.source_opset() != 0 && e.source_opset() < 11) {
    transform = kAsymmetric;
    nearest = kResize10Nearest;
  }
  const std::string x = e.in(node, 0);
  const int rank = e.input_rank(node, 0);
  const auto expected = static_cast<std::size_t>(rank < 0 ? 0 : rank);

  std::string roi = "[]";
  if (transform == kTfCropAndResize) {
    if (!Emitter::has_input(node, 1)) {
      Emitter::refuse(node, "tf_crop_and_resize needs the roi input");
    }
    if (auto values = constant_floats(e, node, 1)) {
      check_length(node, "roi", values->size(), 2 * expected, rank);
      if (values->empty()) Emitter::refuse(node, "tf_crop_and_resize needs a non-empty roi");
      roi = float_list(*values);
    } else {
      roi = e.helper("onnx_resize_floats", kFloats) + "(" + e.in(node, 1) + ")";
    }
  }
  std::string scales = "[]";
  bool given = false;
  if (Emitter::has_input(node, 2)) {
    if (auto values = constant_floats(e, node, 2)) {
      check_length(node, "scales", values->size(), expected, rank);
      for (double v : *values) {
        if (!(v > 0)) Emitter::refuse(node, "scales must be positive");
      }
      scales = float_list(*values);
      given = !values->empty();
    } else {
      scales = e.helper("onnx_resize_floats", kFloats) + "(" + e.in(node, 2) + ")";
      given = true;
    }
  }
  std::string sizes = "[]";
  if (Emitter::has_input(node, 3)) {
    if (auto values = e.constant_ints(node, 3)) {
      check_length(node, "sizes", values->size(), expected, rank);
      sizes = Emitter::ints(*values);
      given = given || !values->empty();
    } else {
      sizes = e.helper("onnx_resize_ints", kInts) + "(" + e.in(node, 3) + ")";
      given = true;
    }
  }
  if (!given) Emitter::refuse(node, "one of scales and sizes must be given");

  e.helper("onnx_resize_coordinates", kCoordinates);
  e.helper("onnx_resize_axis", kAxis);
  e.out(node, 0,
        e.helper("onnx_resize", kResize) + "(" + x + ", " + roi + ", " + scales + ", " + sizes +
            ", " + std::to_string(mode) + ", " + std::to_string(transform) + ", " +
            std::to_string(nearest) + ", " +
            Emitter::number(Emitter::attr_float(node, "cubic_coeff_a", -0.75F)) + ", " +
            (Emitter::attr_int(node, "exclude_outside", 0) != 0 ? "True" : "False") + ", " +
            Emitter::number(Emitter::attr_float(node, "extrapolation_value", 0.0F)) + ")");
}

}  // namespace

void add_resize_ops(OpTable& table) { table.add("", "Resize", lower_Resize); }

}  // namespace slipstream::ml::onnx_import
