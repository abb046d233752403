// Lowering an ONNX graph to TorchScript, one node at a time: the Emitter every operator's lowering
// writes through, and the table of lowerings (one file per operator family: ops_*.cpp).
//
// The lowering writes the source of a TorchScript module: one statement per ONNX node in
// `forward`, every ONNX value a Tensor variable (shapes too, as int64 tensors, as in ONNX), the
// initializers and constant tensors as buffers of the module. The text is the lowering's own:
// variable names are numbered (v0, v1, ...), numbers are formatted here and strings from the
// model (modes, names) are only compared, never written into the source. No libtorch here: the
// module is compiled in lower.cpp.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <onnx/onnx_pb.h>

namespace slipstream::ml::onnx_import {

/// Why a model cannot be lowered: what the server answers a store with.
class Refused : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// The TorchScript dtype of an ONNX tensor element type, as the number TorchScript takes for a
/// dtype (c10::ScalarType: 6 is float32; a module compiled without Python cannot name
/// `torch.float32`); throws Refused for types libtorch 1.13 has no tensors of (strings, unsigned
/// 16/32/64-bit, complex). kInt64 and kBool are the two the lowerings write themselves.
std::string torch_dtype(int onnx_type, std::string_view where);
/// True for the signed and unsigned integer element types the lowering carries (int8-64, uint8).
bool is_integer_type(int onnx_type);
inline constexpr const char* kInt64 = "4";
inline constexpr const char* kBool = "11";

class Emitter {
 public:
  explicit Emitter(std::map<std::string, int> opsets) : opsets_(std::move(opsets)) {}

  /// The opset version the model imports for `domain` ("" is ai.onnx), 0 if none.
  int opset(const std::string& domain = "") const;
  /// The ai.onnx opset the model was written for, before the version converter brought it to
  /// opset 13 (where a converter adapter leaves an older meaning in place).
  int source_opset() const { return source_opset_; }
  void set_source_opset(int opset) { source_opset_ = opset; }

  // ---- Inputs of a node.
  /// True when input `i` is given (ONNX marks a skipped optional input with an empty name).
  static bool has_input(const onnx::NodeProto& node, int i) {
    return i < node.input_size() && !node.input(i).empty();
  }
  /// The variable that holds input `i`; refuses the node when it is missing.
  std::string in(const onnx::NodeProto& node, int i);
  /// The value of input `i` when it is known while lowering (an initializer or a Constant
  /// node's output), else nullptr.
  const onnx::TensorProto* constant(const onnx::NodeProto& node, int i) const;
  /// The integers of a constant int32/int64 input, or nullopt when it is not constant.
  std::optional<std::vector<std::int64_t>> constant_ints(const onnx::NodeProto& node, int i) const;
  /// The element type of input `i` (onnx::TensorProto::DataType), 0 when unknown.
  int input_type(const onnx::NodeProto& node, int i) const;
  /// The rank of input `i`, or -1 when shape inference did not find it.
  int input_rank(const onnx::NodeProto& node, int i) const;

  // ---- Attributes of a node (ONNX's defaults given by the caller).
  static const onnx::AttributeProto* attribute(const onnx::NodeProto& node, std::string_view name);
  static std::int64_t attr_int(const onnx::NodeProto& node, std::string_view name,
                               std::int64_t fallback);
  static float attr_float(const onnx::NodeProto& node, std::string_view name, float fallback);
  static std::string attr_string(const onnx::NodeProto& node, std::string_view name,
                                 std::string fallback);
  static std::vector<std::int64_t> attr_ints(const onnx::NodeProto& node, std::string_view name);
  static std::vector<float> attr_floats(const onnx::NodeProto& node, std::string_view name);

  // ---- Writing.
  /// Emits `vN = expression` for output `i` of `node` and returns vN. Outputs that the graph
  /// never uses are still assigned (TorchScript drops what is unused).
  std::string out(const onnx::NodeProto& node, int i, const std::string& expression);
  /// A fresh local variable name for a temporary.
  std::string fresh();
  /// Emits one statement of `forward` (indentation added).
  void line(const std::string& statement);
  /// A buffer of the module holding `tensor`; returns `self.cN`.
  std::string constant_tensor(const onnx::TensorProto& tensor);
  /// Keeps `tensor` for the rest of the lowering (a constant a lowering made) and returns it.
  const onnx::TensorProto* keep(onnx::TensorProto tensor) {
    kept_.push_back(std::move(tensor));
    return &kept_.back();
  }
  /// A helper method of the module, `source` being its TorchScript definition
  /// (`def name(self, ...) -> ...:` and its body, indented by 4); compiled once with the module
  /// when some node uses it. Returns `self.name`.
  std::string helper(const std::string& name, const char* source);

  /// Number literals as TorchScript reads them: 2.5, 1e-05, float('inf'); lists [1, 2].
  static std::string number(double value);
  static std::string integer(std::int64_t value) { return std::to_string(value); }
  static std::string ints(const std::vector<std::int64_t>& values);
  static std::string floats(const std::vector<float>& values);

  /// Refuses the model at this node: "node 'name' (Op): message".
  [[noreturn]] static void refuse(const onnx::NodeProto& node, const std::string& message);

  // ---- Used by lower.cpp.
  /// Binds ONNX value `name` to the TorchScript expression `variable` (a graph input, an
  /// initializer's buffer).
  void bind(const std::string& name, const std::string& variable) { names_[name] = variable; }
  void bind_constant(const std::string& name, const onnx::TensorProto* value) {
    constants_[name] = value;
  }
  void set_value_info(const std::string& name, const onnx::TypeProto& type) { types_[name] = type; }
  bool bound(const std::string& name) const { return names_.count(name) != 0; }
  const std::string& variable(const std::string& name) const { return names_.at(name); }
  const std::vector<std::string>& statements() const { return statements_; }
  const std::vector<onnx::TensorProto>& buffers() const { return buffers_; }
  const std::map<std::string, const char*>& helpers() const { return helpers_; }

 private:
  std::map<std::string, int> opsets_;
  std::map<std::string, std::string> names_;
  std::map<std::string, const onnx::TensorProto*> constants_;
  std::map<std::string, onnx::TypeProto> types_;
  std::vector<std::string> statements_;
  std::vector<onnx::TensorProto> buffers_;
  std::map<std::string, const char*> helpers_;
  std::deque<onnx::TensorProto> kept_;
  int next_variable_ = 0;
  int source_opset_ = 0;
};

/// Lowers one node: reads its inputs and attributes through the Emitter, emits its statements,
/// binds its outputs (Emitter::out), or refuses it (Emitter::refuse).
using OpLowering = void (*)(Emitter& e, const onnx::NodeProto& node);

/// The operators the lowering knows, by domain ("" or "ai.onnx.ml") and type.
class OpTable {
 public:
  void add(const std::string& domain, const std::string& op_type, OpLowering lowering) {
    ops_[domain + ":" + op_type] = lowering;
  }
  OpLowering find(const std::string& domain, const std::string& op_type) const {
    auto it = ops_.find((domain == "ai.onnx" ? std::string() : domain) + ":" + op_type);
    return it == ops_.end() ? nullptr : it->second;
  }
  /// "Abs, Add, ..." for messages and docs.
  std::vector<std::string> names() const;

 private:
  std::map<std::string, OpLowering> ops_;
};

/// Every lowering, registered once (one add_*_ops per operator family).
const OpTable& op_table();

void add_elementwise_ops(OpTable& table);  // ops_elementwise.cpp
void add_shape_ops(OpTable& table);        // ops_shape.cpp
void add_nn_ops(OpTable& table);           // ops_nn.cpp
void add_reduce_ops(OpTable& table);       // ops_reduce.cpp
void add_resize_ops(OpTable& table);       // ops_resize.cpp
void add_rnn_ops(OpTable& table);          // ops_rnn.cpp
void add_ml_ops(OpTable& table);           // ops_ml.cpp (domain ai.onnx.ml)

}  // namespace slipstream::ml::onnx_import
