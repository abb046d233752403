// The ai.onnx.ml operators scikit-learn models export to (ai.onnx.ml opsets 1-3): LinearRegressor,
// LinearClassifier, TreeEnsembleRegressor, TreeEnsembleClassifier, Scaler, Normalizer. Outputs
// are float32 and class labels int64, as the specification says; string labels are refused
// (libtorch has no string tensors), and so is post_transform PROBIT. Where the specification is
// vague (a binary classifier given one score column, a target no tree weighs under MIN or MAX)
// the lowering follows ONNX's reference implementation, or onnxruntime where that has none.
//
// A tree ensemble becomes constant tensors of its flattened nodes and one vectorized walk: every
// row descends every tree at once, one level per step, for as many steps as the deepest tree
// (a leaf is its own child, so rows that arrive early stay put); then the leaves' weights are
// gathered and aggregated over the trees.
#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <set>
#include <utility>

#include "ml/onnx/emitter.hpp"

namespace slipstream::ml::onnx_import {
namespace {

// ---- Constants the lowerings build: host byte order in raw_data, as lower.cpp reads it.
template <typename T>
onnx::TensorProto constant_of(int data_type, const std::vector<std::int64_t>& dims,
                              const std::vector<T>& values, const std::string& what) {
  onnx::TensorProto tensor;
  tensor.set_name(what);
  tensor.set_data_type(data_type);
  for (std::int64_t d : dims) tensor.add_dims(d);
  tensor.set_raw_data(values.data(), values.size() * sizeof(T));
  return tensor;
}

std::int64_t size_of(const auto& values) { return static_cast<std::int64_t>(values.size()); }

std::string int64_constant(Emitter& e, const std::vector<std::int64_t>& values,
                           const std::string& what) {
  return e.constant_tensor(constant_of(onnx::TensorProto::INT64, {size_of(values)}, values, what));
}

std::string float_constant(Emitter& e, const std::vector<float>& values,
                           const std::vector<std::int64_t>& dims, const std::string& what) {
  return e.constant_tensor(constant_of(onnx::TensorProto::FLOAT, dims, values, what));
}

// Real numbers given either as floats or, in the `<name>_as_tensor` form (ai.onnx.ml opset 3),
// as a float or double tensor; `wide` when they are doubles, which the lowering then keeps.
struct Reals {
  std::vector<double> values;
  bool wide = false;
};

Reals reals(const onnx::NodeProto& node, const std::string& name) {
  Reals out;
  const onnx::AttributeProto* as_tensor = Emitter::attribute(node, name + "_as_tensor");
  if (as_tensor == nullptr) {
    for (float v : Emitter::attr_floats(node, name)) out.values.push_back(v);
    return out;
  }
  if (!Emitter::attr_floats(node, name).empty()) {
    Emitter::refuse(node, name + " and " + name + "_as_tensor are both given (one is expected)");
  }
  const onnx::TensorProto& tensor = as_tensor->t();
  const std::string& raw = tensor.raw_data();
  if (tensor.data_type() == onnx::TensorProto::DOUBLE) {
    out.wide = true;
    if (!raw.empty()) {
      if (raw.size() % sizeof(double) != 0) Emitter::refuse(node, name + "_as_tensor is cut");
      out.values.resize(raw.size() / sizeof(double));
      std::memcpy(out.values.data(), raw.data(), raw.size());
    } else {
      out.values.assign(tensor.double_data().begin(), tensor.double_data().end());
    }
  } else if (tensor.data_type() == onnx::TensorProto::FLOAT) {
    if (!raw.empty()) {
      if (raw.size() % sizeof(float) != 0) Emitter::refuse(node, name + "_as_tensor is cut");
      std::vector<float> floats(raw.size() / sizeof(float));
      std::memcpy(floats.data(), raw.data(), raw.size());
      out.values.assign(floats.begin(), floats.end());
    } else {
      out.values.assign(tensor.float_data().begin(), tensor.float_data().end());
    }
  } else {
    Emitter::refuse(node, name + "_as_tensor must hold floats or doubles");
  }
  return out;
}

// A buffer of `values`, double when `wide`, else float32, shaped `dims`.
std::string real_constant(Emitter& e, const std::vector<double>& values, bool wide,
                          const std::vector<std::int64_t>& dims, const std::string& what) {
  if (wide) return e.constant_tensor(constant_of(onnx::TensorProto::DOUBLE, dims, values, what));
  return float_constant(e, std::vector<float>(values.begin(), values.end()), dims, what);
}

std::vector<std::string> attr_strings(const onnx::NodeProto& node, std::string_view name) {
  const onnx::AttributeProto* a = Emitter::attribute(node, name);
  if (a == nullptr) return {};
  return {a->strings().begin(), a->strings().end()};
}

void refuse_string_labels(const onnx::NodeProto& node, const std::string& attribute) {
  if (!attr_strings(node, attribute).empty()) {
    Emitter::refuse(node, attribute +
                              ": string class labels are not supported (a stored model "
                              "answers with tensors, and there are no string tensors): train or "
                              "export the classifier with integer labels");
  }
}

// ---- post_transform, as the number onnx_ml_classify takes.
enum Transform { kNone = 0, kLogistic = 1, kSoftmax = 2, kSoftmaxZero = 3 };

Transform post_transform(const onnx::NodeProto& node) {
  const std::string name = Emitter::attr_string(node, "post_transform", "NONE");
  if (name == "NONE") return kNone;
  if (name == "LOGISTIC") return kLogistic;
  if (name == "SOFTMAX") return kSoftmax;
  if (name == "SOFTMAX_ZERO") return kSoftmaxZero;
  Emitter::refuse(node, "post_transform " + name +
                            " is not supported (supported: NONE, LOGISTIC, SOFTMAX, SOFTMAX_ZERO)");
}

// Regressors: ONNX's reference implementation defines only NONE for them.
void refuse_regressor_transform(const onnx::NodeProto& node) {
  const std::string name = Emitter::attr_string(node, "post_transform", "NONE");
  if (name != "NONE") {
    Emitter::refuse(node, "post_transform " + name +
                              " is not supported for a regressor "
                              "(supported: NONE)");
  }
}

// Scores, the post transform applied, and the label of each row: the first best class, as
// numpy's argmax. SOFTMAX_ZERO leaves zero scores out of the sum (they stay zero); a row of
// zeros gives 0.5 everywhere, as the reference implementation.
constexpr char kClassify[] = R"(
def onnx_ml_classify(self, scores: Tensor, labels: Tensor,
                     transform: int) -> Tuple[Tensor, Tensor]:
    if transform == 1:
        scores = torch.sigmoid(scores)
    elif transform == 2:
        scores = torch.softmax(scores, 1)
    elif transform == 3:
        top = torch.amax(scores, [1], keepdim=True)
        shifted = torch.where(torch.abs(scores) > 1e-07, torch.exp(scores - top),
                              scores * torch.exp(torch.neg(top)))
        total = torch.sum(shifted, [1], keepdim=True)
        scores = torch.where(total == 0.0, torch.full_like(shifted, 0.5), shifted / total)
    return torch.take(labels, torch.argmax(scores, 1)), scores.to(6)
)";

void classify(Emitter& e, const onnx::NodeProto& node, const std::string& scores,
              const std::vector<std::int64_t>& labels, Transform how) {
  const std::string result = e.fresh();
  e.line(result + " = " + e.helper("onnx_ml_classify", kClassify) + "(" + scores + ", " +
         int64_constant(e, labels, "class labels") + ", " + Emitter::integer(how) + ")");
  e.out(node, 0, result + "[0]");
  e.out(node, 1, result + "[1]");
}

// ---- Linear models and transforms of features.

// Rows of features as float32, as the operators compute: a 1-D input is one row.
constexpr char kRows[] = R"(
def onnx_ml_rows(self, x: Tensor) -> Tensor:
    if x.dim() == 1:
        x = x.unsqueeze(0)
    return x.to(6)
)";

// x times the transposed coefficient rows (`rows` of them), plus the intercepts when given.
std::string linear(Emitter& e, const onnx::NodeProto& node, const std::vector<float>& weights,
                   const std::vector<float>& intercepts, std::int64_t rows) {
  const std::int64_t features = size_of(weights) / rows;
  std::vector<float> transposed(weights.size());
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t f = 0; f < features; ++f) {
      transposed[static_cast<std::size_t>(f * rows + r)] =
          weights[static_cast<std::size_t>(r * features + f)];
    }
  }
  std::string expression = "torch.matmul(" + e.helper("onnx_ml_rows", kRows) + "(" + e.in(node, 0) +
                           "), " + float_constant(e, transposed, {features, rows}, "coefficients") +
                           ")";
  if (!intercepts.empty()) {
    expression += " + " + float_constant(e, intercepts, {rows}, "intercepts");
  }
  return expression;
}

void lower_LinearRegressor(Emitter& e, const onnx::NodeProto& node) {
  refuse_regressor_transform(node);
  const std::int64_t targets = Emitter::attr_int(node, "targets", 1);
  const std::vector<float> coefficients = Emitter::attr_floats(node, "coefficients");
  const std::vector<float> intercepts = Emitter::attr_floats(node, "intercepts");
  if (targets < 1 || coefficients.empty() || size_of(coefficients) % targets != 0) {
    Emitter::refuse(node, "coefficients must hold `targets` (" + std::to_string(targets) +
                              ") rows of one weight per feature; it holds " +
                              std::to_string(coefficients.size()) + " values");
  }
  if (!intercepts.empty() && size_of(intercepts) != targets) {
    Emitter::refuse(node, "intercepts must hold one value per target (" + std::to_string(targets) +
                              "); it holds " + std::to_string(intercepts.size()));
  }
  e.out(node, 0, linear(e, node, coefficients, intercepts, targets));
}

// One coefficient row per class; a single row with two labels is the binary case, its scores
// the row's negation and the row, as the reference implementation.
void lower_LinearClassifier(Emitter& e, const onnx::NodeProto& node) {
  refuse_string_labels(node, "classlabels_strings");
  const Transform how = post_transform(node);
  const std::vector<float> coefficients = Emitter::attr_floats(node, "coefficients");
  const std::vector<float> intercepts = Emitter::attr_floats(node, "intercepts");
  const std::vector<std::int64_t> labels = Emitter::attr_ints(node, "classlabels_ints");
  // The number of rows is the number of intercepts, as onnxruntime reads it: the coefficients
  // alone cannot tell rows from features.
  const std::int64_t rows = size_of(intercepts);
  if (rows == 0) {
    Emitter::refuse(node,
                    "intercepts are missing: one per coefficient row is needed to tell "
                    "the rows apart (zeros for a model without intercepts)");
  }
  if (coefficients.empty() || size_of(coefficients) % rows != 0) {
    Emitter::refuse(node, "coefficients must hold one row of weights per intercept (" +
                              std::to_string(rows) + "); it holds " +
                              std::to_string(coefficients.size()) + " values");
  }
  const bool binary = rows == 1 && labels.size() == 2;
  if (size_of(labels) != rows && !binary) {
    Emitter::refuse(node, "classlabels_ints must give one label per coefficient row (" +
                              std::to_string(rows) + ", or two for a single row); it gives " +
                              std::to_string(labels.size()));
  }
  std::string scores = linear(e, node, coefficients, intercepts, rows);
  if (binary) {
    const std::string row = e.fresh();
    e.line(row + " = " + scores);
    scores = "torch.cat([torch.neg(" + row + "), " + row + "], 1)";
  }
  classify(e, node, scores, labels, how);
}

// Y = (X - offset) * scale, each of one value or one per feature.
void lower_Scaler(Emitter& e, const onnx::NodeProto& node) {
  const std::vector<float> offset = Emitter::attr_floats(node, "offset");
  const std::vector<float> scale = Emitter::attr_floats(node, "scale");
  if (offset.empty() || scale.empty()) {
    Emitter::refuse(node, "offset and scale must both be given (one value, or one per feature)");
  }
  e.out(node, 0,
        "(" + e.in(node, 0) + ".to(6) - " + float_constant(e, offset, {size_of(offset)}, "offset") +
            ") * " + float_constant(e, scale, {size_of(scale)}, "scale"));
}

// Each row divided by its max (MAX), the sum of its magnitudes (L1) or its Euclidean norm (L2);
// left as it is where that divisor is zero.
constexpr char kNormalize[] = R"(
def onnx_ml_normalize(self, x: Tensor, norm: int) -> Tensor:
    x = x.to(6)
    axis = 0 if x.dim() == 1 else 1
    if norm == 0:
        divisor = torch.amax(x, [axis], keepdim=True)
    elif norm == 1:
        divisor = torch.sum(torch.abs(x), [axis], keepdim=True)
    else:
        divisor = torch.sqrt(torch.sum(x * x, [axis], keepdim=True))
    return torch.where(divisor == 0.0, x, x / divisor)
)";

void lower_Normalizer(Emitter& e, const onnx::NodeProto& node) {
  const std::string norm = Emitter::attr_string(node, "norm", "MAX");
  int code = 0;
  if (norm == "L1") {
    code = 1;
  } else if (norm == "L2") {
    code = 2;
  } else if (norm != "MAX") {
    Emitter::refuse(node, "norm " + norm + " is not one of MAX, L1, L2");
  }
  e.out(node, 0,
        e.helper("onnx_ml_normalize", kNormalize) + "(" + e.in(node, 0) + ", " +
            Emitter::integer(code) + ")");
}

// ---- Tree ensembles.

// Modes in the order onnx_ml_tree_leaves numbers them.
constexpr std::array<std::string_view, 7> kModes = {
    "BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ", "LEAF"};
constexpr std::int64_t kLeaf = 6;
constexpr std::int64_t kNeq = 5;

// The nodes of every tree, flattened in the model's order; children are flat indices, and a
// leaf is its own child.
struct Forest {
  std::vector<std::int64_t> feature, mode, true_child, false_child;
  std::vector<std::uint8_t> missing_true;
  Reals threshold;
  std::vector<std::int64_t> roots;  // the first node listed of each tree
  std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> index;  // (tree, node id)
  std::int64_t depth = 0;  // edges on the longest path from a root to a leaf
};

// The longest path below each root, refusing trees with a cycle (a walk that never ends).
std::int64_t longest_path(const onnx::NodeProto& node, const Forest& forest) {
  const std::size_t count = forest.mode.size();
  std::vector<std::int64_t> below(count, 0);
  std::vector<std::uint8_t> state(count, 0);  // 0 unseen, 1 on the current path, 2 done
  std::int64_t deepest = 0;
  for (std::int64_t root : forest.roots) {
    std::vector<std::pair<std::int64_t, bool>> stack{{root, false}};
    while (!stack.empty()) {
      const auto [at, finished] = stack.back();
      const auto i = static_cast<std::size_t>(at);
      stack.pop_back();
      const bool leaf = forest.mode[i] == kLeaf;
      if (finished) {
        if (!leaf) {
          below[i] = 1 + std::max(below[static_cast<std::size_t>(forest.true_child[i])],
                                  below[static_cast<std::size_t>(forest.false_child[i])]);
        }
        state[i] = 2;
        continue;
      }
      if (state[i] == 2) continue;
      // Everything above this node's `finished` entry descends from it.
      if (state[i] == 1) Emitter::refuse(node, "a tree has a cycle (a node is its own descendant)");
      state[i] = 1;
      stack.emplace_back(at, true);
      if (!leaf) {
        stack.emplace_back(forest.true_child[i], false);
        stack.emplace_back(forest.false_child[i], false);
      }
    }
    deepest = std::max(deepest, below[static_cast<std::size_t>(root)]);
  }
  return deepest;
}

Forest read_forest(const onnx::NodeProto& node) {
  Forest forest;
  const auto trees = Emitter::attr_ints(node, "nodes_treeids");
  const auto ids = Emitter::attr_ints(node, "nodes_nodeids");
  const auto features = Emitter::attr_ints(node, "nodes_featureids");
  const auto modes = attr_strings(node, "nodes_modes");
  const auto trues = Emitter::attr_ints(node, "nodes_truenodeids");
  const auto falses = Emitter::attr_ints(node, "nodes_falsenodeids");
  const auto missing = Emitter::attr_ints(node, "nodes_missing_value_tracks_true");
  forest.threshold = reals(node, "nodes_values");
  const std::size_t count = trees.size();
  if (count == 0) Emitter::refuse(node, "the ensemble has no nodes");
  if (ids.size() != count || features.size() != count || modes.size() != count ||
      trues.size() != count || falses.size() != count || forest.threshold.values.size() != count ||
      (!missing.empty() && missing.size() != count)) {
    Emitter::refuse(node, "the nodes_* attributes must all describe the same " +
                              std::to_string(count) + " nodes");
  }
  std::set<std::int64_t> seen_trees;
  for (std::size_t i = 0; i < count; ++i) {
    if (!forest.index.emplace(std::pair(trees[i], ids[i]), static_cast<std::int64_t>(i)).second) {
      Emitter::refuse(node, "node " + std::to_string(ids[i]) + " of tree " +
                                std::to_string(trees[i]) + " is listed twice");
    }
    if (seen_trees.insert(trees[i]).second) forest.roots.push_back(static_cast<std::int64_t>(i));
  }
  auto child_of = [&](std::size_t i, std::int64_t child) {
    auto found = forest.index.find({trees[i], child});
    if (found == forest.index.end()) {
      Emitter::refuse(node, "node " + std::to_string(ids[i]) + " of tree " +
                                std::to_string(trees[i]) + " has a child " + std::to_string(child) +
                                " that the tree does not have");
    }
    return found->second;
  };
  for (std::size_t i = 0; i < count; ++i) {
    const auto mode = std::find(kModes.begin(), kModes.end(), modes[i]);
    if (mode == kModes.end()) {
      Emitter::refuse(node, "node mode " + modes[i] +
                                " is not one of BRANCH_LEQ, BRANCH_LT, "
                                "BRANCH_GTE, BRANCH_GT, BRANCH_EQ, BRANCH_NEQ, LEAF");
    }
    forest.mode.push_back(mode - kModes.begin());
    const auto self = static_cast<std::int64_t>(i);
    if (forest.mode.back() == kLeaf) {
      forest.feature.push_back(0);  // any column: a leaf's comparison picks itself either way
      forest.true_child.push_back(self);
      forest.false_child.push_back(self);
    } else {
      if (features[i] < 0) Emitter::refuse(node, "a feature id is negative");
      forest.feature.push_back(features[i]);
      forest.true_child.push_back(child_of(i, trues[i]));
      forest.false_child.push_back(child_of(i, falses[i]));
    }
    forest.missing_true.push_back(!missing.empty() && missing[i] != 0 ? 1 : 0);
  }
  forest.depth = longest_path(node, forest);
  return forest;
}

// The flat index of the leaf each row reaches in each tree: [rows, trees]. `only_mode` is the
// one mode every branch has (else -1, and each node's mode is looked up); `nan_rule` sends NaN
// features where nodes_missing_value_tracks_true says (comparisons alone send them to the false
// child, but for BRANCH_NEQ).
constexpr char kTreeLeaves[] = R"(
def onnx_ml_tree_leaves(self, x: Tensor, roots: Tensor, feature: Tensor, threshold: Tensor,
                        mode: Tensor, true_child: Tensor, false_child: Tensor,
                        missing_true: Tensor, depth: int, only_mode: int,
                        nan_rule: bool) -> Tensor:
    if x.dim() == 1:
        x = x.unsqueeze(0)
    if x.dtype != 7:
        x = x.to(6)
    node = roots.unsqueeze(0).expand([x.size(0), roots.size(0)])
    for step in range(depth):
        value = torch.gather(x, 1, torch.take(feature, node))
        bound = torch.take(threshold, node)
        if only_mode == 0:
            hit = value <= bound
        elif only_mode == 1:
            hit = value < bound
        elif only_mode == 2:
            hit = value >= bound
        elif only_mode == 3:
            hit = value > bound
        elif only_mode == 4:
            hit = value == bound
        elif only_mode == 5:
            hit = value != bound
        else:
            kind = torch.take(mode, node)
            hit = (((kind == 0) & (value <= bound)) | ((kind == 1) & (value < bound)) |
                   ((kind == 2) & (value >= bound)) | ((kind == 3) & (value > bound)) |
                   ((kind == 4) & (value == bound)) | ((kind == 5) & (value != bound)))
        if nan_rule:
            hit = torch.where(torch.isnan(value), torch.take(missing_true, node), hit)
        node = torch.where(hit, torch.take(true_child, node), torch.take(false_child, node))
    return node
)";

// Leaf weights summed over the trees: [rows, targets].
constexpr char kTreeSum[] = R"(
def onnx_ml_tree_sum(self, leaves: Tensor, weights: Tensor) -> Tensor:
    picked = torch.index_select(weights, 0, leaves.reshape([-1]))
    return torch.sum(picked.reshape([leaves.size(0), leaves.size(1), weights.size(1)]), [1])
)";

// The smallest or largest leaf weight over the trees that give one; 0 where none does.
constexpr char kTreeExtreme[] = R"(
def onnx_ml_tree_extreme(self, leaves: Tensor, weights: Tensor, has_weight: Tensor,
                         smallest: bool) -> Tensor:
    flat = leaves.reshape([-1])
    shape = [leaves.size(0), leaves.size(1), weights.size(1)]
    picked = torch.index_select(weights, 0, flat).reshape(shape)
    present = torch.index_select(has_weight, 0, flat).reshape(shape)
    if smallest:
        filler = torch.full_like(picked, float('inf'))
        best = torch.amin(torch.where(present, picked, filler), [1])
    else:
        filler = torch.full_like(picked, float('-inf'))
        best = torch.amax(torch.where(present, picked, filler), [1])
    return torch.where(torch.any(present, 1), best, torch.zeros_like(best))
)";

// The leaves' weights (target_* or class_*), dense: one row per node, one column per target.
struct LeafWeights {
  std::vector<double> weights;
  std::vector<std::uint8_t> present;
  std::set<std::int64_t> ids_used;
  bool wide = false;
};

enum class Aggregate { kSum, kAverage, kMin, kMax };

LeafWeights read_weights(const onnx::NodeProto& node, const Forest& forest,
                         const std::string& prefix, const std::string& id_name,
                         std::int64_t targets, Aggregate how) {
  const auto trees = Emitter::attr_ints(node, prefix + "treeids");
  const auto nodes = Emitter::attr_ints(node, prefix + "nodeids");
  const auto ids = Emitter::attr_ints(node, prefix + id_name);
  const Reals weights = reals(node, prefix + "weights");
  if (nodes.size() != trees.size() || ids.size() != trees.size() ||
      weights.values.size() != trees.size()) {
    Emitter::refuse(node, "the " + prefix + "* attributes must all describe the same " +
                              std::to_string(trees.size()) + " weights");
  }
  LeafWeights out;
  out.wide = weights.wide;
  out.weights.assign(forest.mode.size() * static_cast<std::size_t>(targets), 0.0);
  out.present.assign(out.weights.size(), 0);
  for (std::size_t k = 0; k < trees.size(); ++k) {
    auto found = forest.index.find({trees[k], nodes[k]});
    if (found == forest.index.end() ||
        forest.mode[static_cast<std::size_t>(found->second)] != kLeaf) {
      Emitter::refuse(node, "a weight is given for node " + std::to_string(nodes[k]) + " of tree " +
                                std::to_string(trees[k]) + ", which is not a leaf of the ensemble");
    }
    if (ids[k] < 0 || ids[k] >= targets) {
      Emitter::refuse(node, prefix + id_name + " " + std::to_string(ids[k]) + " is outside the " +
                                std::to_string(targets) +
                                (prefix == "class_" ? " classes" : " targets"));
    }
    out.ids_used.insert(ids[k]);
    const auto at = static_cast<std::size_t>(found->second * targets + ids[k]);
    const double w = weights.values[k];
    // Several weights of one leaf for one target: summed, or the extreme one for MIN and MAX,
    // as the reference implementation aggregates them one by one.
    if (!out.present[at]) {
      out.weights[at] = w;
    } else if (how == Aggregate::kMin) {
      out.weights[at] = std::min(out.weights[at], w);
    } else if (how == Aggregate::kMax) {
      out.weights[at] = std::max(out.weights[at], w);
    } else {
      out.weights[at] += w;
    }
    out.present[at] = 1;
  }
  return out;
}

// Emits the walk and returns the variable holding the leaves reached: [rows, trees].
std::string walk(Emitter& e, const onnx::NodeProto& node, const Forest& forest) {
  std::set<std::int64_t> branch_modes;
  bool nan_rule = false;
  for (std::size_t i = 0; i < forest.mode.size(); ++i) {
    if (forest.mode[i] == kLeaf) continue;
    branch_modes.insert(forest.mode[i]);
    nan_rule = nan_rule || forest.missing_true[i] != 0 || forest.mode[i] == kNeq;
  }
  const std::int64_t only_mode = branch_modes.size() == 1 ? *branch_modes.begin() : -1;
  const auto count = size_of(forest.mode);
  std::string leaves = e.fresh();
  e.line(
      leaves + " = " + e.helper("onnx_ml_tree_leaves", kTreeLeaves) + "(" + e.in(node, 0) + ", " +
      int64_constant(e, forest.roots, "tree roots") + ", " +
      int64_constant(e, forest.feature, "node features") + ", " +
      real_constant(e, forest.threshold.values, forest.threshold.wide, {count}, "node thresholds") +
      ", " + int64_constant(e, forest.mode, "node modes") + ", " +
      int64_constant(e, forest.true_child, "true children") + ", " +
      int64_constant(e, forest.false_child, "false children") + ", " +
      e.constant_tensor(
          constant_of(onnx::TensorProto::BOOL, {count}, forest.missing_true, "missing")) +
      ", " + Emitter::integer(forest.depth) + ", " + Emitter::integer(only_mode) + ", " +
      (nan_rule ? "True" : "False") + ")");
  return leaves;
}

// `scores` plus base_values: none, one for every target (or class), or one per target.
std::string with_base(Emitter& e, const onnx::NodeProto& node, const std::string& scores,
                      std::int64_t targets, const std::string& target) {
  const Reals base = reals(node, "base_values");
  if (base.values.empty()) return scores;
  if (size_of(base.values) != 1 && size_of(base.values) != targets) {
    Emitter::refuse(node, "base_values must hold one value or one per " + target + " (" +
                              std::to_string(targets) + "); it holds " +
                              std::to_string(base.values.size()));
  }
  return scores + " + " +
         real_constant(e, base.values, base.wide, {size_of(base.values)}, "base values");
}

std::string leaf_weights(Emitter& e, const LeafWeights& leaf, std::int64_t nodes,
                         std::int64_t targets) {
  return real_constant(e, leaf.weights, leaf.wide, {nodes, targets}, "leaf weights");
}

void lower_TreeEnsembleRegressor(Emitter& e, const onnx::NodeProto& node) {
  refuse_regressor_transform(node);
  const std::string name = Emitter::attr_string(node, "aggregate_function", "SUM");
  const std::map<std::string, Aggregate> kinds = {{"SUM", Aggregate::kSum},
                                                  {"AVERAGE", Aggregate::kAverage},
                                                  {"MIN", Aggregate::kMin},
                                                  {"MAX", Aggregate::kMax}};
  auto kind = kinds.find(name);
  if (kind == kinds.end()) {
    Emitter::refuse(node, "aggregate_function " + name + " is not one of SUM, AVERAGE, MIN, MAX");
  }
  const Forest forest = read_forest(node);
  std::int64_t targets = Emitter::attr_int(node, "n_targets", 0);
  if (targets <= 0) {  // not given: as many as the weights name
    const auto ids = Emitter::attr_ints(node, "target_ids");
    targets = ids.empty() ? 1 : *std::max_element(ids.begin(), ids.end()) + 1;
  }
  const LeafWeights leaf = read_weights(node, forest, "target_", "ids", targets, kind->second);
  const std::string leaves = walk(e, node, forest);
  const std::int64_t nodes = size_of(forest.mode);
  std::string scores;
  if (kind->second == Aggregate::kSum || kind->second == Aggregate::kAverage) {
    scores = e.helper("onnx_ml_tree_sum", kTreeSum) + "(" + leaves + ", " +
             leaf_weights(e, leaf, nodes, targets) + ")";
    if (kind->second == Aggregate::kAverage) {
      scores += " / " + Emitter::number(static_cast<double>(forest.roots.size()));
    }
  } else {
    scores = e.helper("onnx_ml_tree_extreme", kTreeExtreme) + "(" + leaves + ", " +
             leaf_weights(e, leaf, nodes, targets) + ", " +
             e.constant_tensor(constant_of(onnx::TensorProto::BOOL, {nodes, targets}, leaf.present,
                                           "leaf has weight")) +
             ", " + (kind->second == Aggregate::kMin ? "True" : "False") + ")";
  }
  e.out(node, 0, "(" + with_base(e, node, scores, targets, "target") + ").to(6)");
}

// Scores summed over the trees, one column per class label. Two labels with weights for one
// class only is the binary case: that column's score s becomes the pair (1 - s, s), or (-s, s)
// before a post transform, as the reference implementation.
void lower_TreeEnsembleClassifier(Emitter& e, const onnx::NodeProto& node) {
  refuse_string_labels(node, "classlabels_strings");
  const Transform how = post_transform(node);
  const std::vector<std::int64_t> labels = Emitter::attr_ints(node, "classlabels_int64s");
  if (labels.size() < 2) {
    Emitter::refuse(node, "classlabels_int64s must name the classes (at least two); it names " +
                              std::to_string(labels.size()));
  }
  const auto classes = size_of(labels);
  const Forest forest = read_forest(node);
  const LeafWeights leaf = read_weights(node, forest, "class_", "ids", classes, Aggregate::kSum);
  const std::string leaves = walk(e, node, forest);
  const std::string sums = e.fresh();
  e.line(sums + " = " +
         with_base(e, node,
                   e.helper("onnx_ml_tree_sum", kTreeSum) + "(" + leaves + ", " +
                       leaf_weights(e, leaf, size_of(forest.mode), classes) + ")",
                   classes, "class"));
  std::string scores = sums;
  if (classes == 2 && leaf.ids_used.size() == 1) {
    const std::string positive = e.fresh();
    e.line(positive + " = " + sums + ".narrow(1, " + Emitter::integer(*leaf.ids_used.begin()) +
           ", 1)");
    scores = "torch.cat([" + (how == kNone ? "1.0 - " + positive : "torch.neg(" + positive + ")") +
             ", " + positive + "], 1)";
  }
  classify(e, node, scores, labels, how);
}

}  // namespace

void add_ml_ops(OpTable& t) {
  t.add("ai.onnx.ml", "LinearRegressor", lower_LinearRegressor);
  t.add("ai.onnx.ml", "LinearClassifier", lower_LinearClassifier);
  t.add("ai.onnx.ml", "Scaler", lower_Scaler);
  t.add("ai.onnx.ml", "Normalizer", lower_Normalizer);
  t.add("ai.onnx.ml", "TreeEnsembleRegressor", lower_TreeEnsembleRegressor);
  t.add("ai.onnx.ml", "TreeEnsembleClassifier", lower_TreeEnsembleClassifier);
}

}  // namespace slipstream::ml::onnx_import
