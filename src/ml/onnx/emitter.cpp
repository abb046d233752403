// The Emitter (emitter.hpp): names, constants, attributes and literals of the lowering.
#include "ml/onnx/emitter.hpp"

#include <charconv>
#include <cmath>

namespace slipstream::ml::onnx_import {

std::string torch_dtype(int onnx_type, std::string_view where) {
  switch (onnx_type) {
    case onnx::TensorProto::FLOAT: return "6";
    case onnx::TensorProto::DOUBLE: return "7";
    case onnx::TensorProto::FLOAT16: return "5";
    case onnx::TensorProto::BFLOAT16: return "15";
    case onnx::TensorProto::INT8: return "1";
    case onnx::TensorProto::UINT8: return "0";
    case onnx::TensorProto::INT16: return "2";
    case onnx::TensorProto::INT32: return "3";
    case onnx::TensorProto::INT64: return "4";
    case onnx::TensorProto::BOOL: return "11";
    default: break;
  }
  const std::string name = onnx::TensorProto::DataType_IsValid(onnx_type)
                               ? onnx::TensorProto::DataType_Name(
                                     static_cast<onnx::TensorProto::DataType>(onnx_type))
                               : "type " + std::to_string(onnx_type);
  throw Refused(std::string(where) + ": tensors of " + name +
                " are not supported (supported: float, double, float16, bfloat16, int8-64, "
                "uint8, bool)");
}

bool is_integer_type(int onnx_type) {
  switch (onnx_type) {
    case onnx::TensorProto::INT8: case onnx::TensorProto::UINT8: case onnx::TensorProto::INT16:
    case onnx::TensorProto::INT32: case onnx::TensorProto::INT64:
      return true;
    default:
      return false;
  }
}

int Emitter::opset(const std::string& domain) const {
  auto it = opsets_.find(domain == "ai.onnx" ? std::string() : domain);
  return it == opsets_.end() ? 0 : it->second;
}

std::string Emitter::in(const onnx::NodeProto& node, int i) {
  if (!has_input(node, i)) refuse(node, "input " + std::to_string(i) + " is missing");
  auto it = names_.find(node.input(i));
  if (it == names_.end()) {
    refuse(node, "input '" + node.input(i) + "' is not computed before the node (the graph "
                 "must be in topological order)");
  }
  return it->second;
}

const onnx::TensorProto* Emitter::constant(const onnx::NodeProto& node, int i) const {
  if (!has_input(node, i)) return nullptr;
  auto it = constants_.find(node.input(i));
  return it == constants_.end() ? nullptr : it->second;
}

std::optional<std::vector<std::int64_t>> Emitter::constant_ints(const onnx::NodeProto& node,
                                                                int i) const {
  const onnx::TensorProto* value = constant(node, i);
  if (value == nullptr) return std::nullopt;
  std::vector<std::int64_t> out;
  if (value->data_type() == onnx::TensorProto::INT64) {
    if (!value->raw_data().empty()) {
      const std::string& raw = value->raw_data();
      if (raw.size() % 8 != 0) return std::nullopt;
      out.resize(raw.size() / 8);
      for (std::size_t k = 0; k < out.size(); ++k) {
        std::uint64_t bits = 0;
        for (int b = 7; b >= 0; --b) {
          bits = (bits << 8) | static_cast<unsigned char>(raw[k * 8 + static_cast<std::size_t>(b)]);
        }
        out[k] = static_cast<std::int64_t>(bits);
      }
    } else {
      out.assign(value->int64_data().begin(), value->int64_data().end());
    }
    return out;
  }
  if (value->data_type() == onnx::TensorProto::INT32) {
    if (!value->raw_data().empty()) {
      const std::string& raw = value->raw_data();
      if (raw.size() % 4 != 0) return std::nullopt;
      for (std::size_t k = 0; k < raw.size() / 4; ++k) {
        std::uint32_t bits = 0;
        for (int b = 3; b >= 0; --b) {
          bits = (bits << 8) | static_cast<unsigned char>(raw[k * 4 + static_cast<std::size_t>(b)]);
        }
        out.push_back(static_cast<std::int32_t>(bits));
      }
    } else {
      out.assign(value->int32_data().begin(), value->int32_data().end());
    }
    return out;
  }
  return std::nullopt;
}

int Emitter::input_type(const onnx::NodeProto& node, int i) const {
  if (!has_input(node, i)) return 0;
  if (const onnx::TensorProto* value = constant(node, i)) return value->data_type();
  auto it = types_.find(node.input(i));
  if (it == types_.end() || !it->second.has_tensor_type()) return 0;
  return it->second.tensor_type().elem_type();
}

int Emitter::input_rank(const onnx::NodeProto& node, int i) const {
  if (!has_input(node, i)) return -1;
  if (const onnx::TensorProto* value = constant(node, i)) return value->dims_size();
  auto it = types_.find(node.input(i));
  if (it == types_.end() || !it->second.has_tensor_type() ||
      !it->second.tensor_type().has_shape()) {
    return -1;
  }
  return it->second.tensor_type().shape().dim_size();
}

const onnx::AttributeProto* Emitter::attribute(const onnx::NodeProto& node, std::string_view name) {
  for (const onnx::AttributeProto& a : node.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

std::int64_t Emitter::attr_int(const onnx::NodeProto& node, std::string_view name,
                               std::int64_t fallback) {
  const onnx::AttributeProto* a = attribute(node, name);
  return a != nullptr ? a->i() : fallback;
}

float Emitter::attr_float(const onnx::NodeProto& node, std::string_view name, float fallback) {
  const onnx::AttributeProto* a = attribute(node, name);
  return a != nullptr ? a->f() : fallback;
}

std::string Emitter::attr_string(const onnx::NodeProto& node, std::string_view name,
                                 std::string fallback) {
  const onnx::AttributeProto* a = attribute(node, name);
  return a != nullptr ? a->s() : fallback;
}

std::vector<std::int64_t> Emitter::attr_ints(const onnx::NodeProto& node, std::string_view name) {
  const onnx::AttributeProto* a = attribute(node, name);
  if (a == nullptr) return {};
  return {a->ints().begin(), a->ints().end()};
}

std::vector<float> Emitter::attr_floats(const onnx::NodeProto& node, std::string_view name) {
  const onnx::AttributeProto* a = attribute(node, name);
  if (a == nullptr) return {};
  return {a->floats().begin(), a->floats().end()};
}

std::string Emitter::out(const onnx::NodeProto& node, int i, const std::string& expression) {
  const std::string name = fresh();
  line(name + " = " + expression);
  if (i < node.output_size() && !node.output(i).empty()) names_[node.output(i)] = name;
  return name;
}

std::string Emitter::fresh() { return "v" + std::to_string(next_variable_++); }

void Emitter::line(const std::string& statement) { statements_.push_back(statement); }

std::string Emitter::constant_tensor(const onnx::TensorProto& tensor) {
  buffers_.push_back(tensor);
  return "self.c" + std::to_string(buffers_.size() - 1);
}

std::string Emitter::helper(const std::string& name, const char* source) {
  helpers_.emplace(name, source);
  return "self." + name;
}

std::string Emitter::number(double value) {
  if (std::isnan(value)) return "float('nan')";
  if (std::isinf(value)) return value > 0 ? "float('inf')" : "float('-inf')";
  char text[64];
  auto [end, ec] = std::to_chars(text, text + sizeof text, value);
  std::string out(text, end);
  if (out.find_first_of(".eEn") == std::string::npos) out += ".0";
  return out;
}

std::string Emitter::ints(const std::vector<std::int64_t>& values) {
  std::string out = "[";
  for (std::size_t k = 0; k < values.size(); ++k) {
    if (k) out += ", ";
    out += std::to_string(values[k]);
  }
  return out + "]";
}

std::string Emitter::floats(const std::vector<float>& values) {
  std::string out = "[";
  for (std::size_t k = 0; k < values.size(); ++k) {
    if (k) out += ", ";
    out += number(values[k]);
  }
  return out + "]";
}

void Emitter::refuse(const onnx::NodeProto& node, const std::string& message) {
  throw Refused("node '" + node.name() + "' (" +
                (node.domain().empty() ? std::string() : node.domain() + ".") + node.op_type() +
                "): " + message);
}

std::vector<std::string> OpTable::names() const {
  std::vector<std::string> out;
  for (const auto& [key, lowering] : ops_) {
    const std::size_t colon = key.find(':');
    out.push_back(colon == 0 ? key.substr(1) : key.substr(0, colon) + "." + key.substr(colon + 1));
  }
  return out;
}

const OpTable& op_table() {
  static const OpTable table = [] {
    OpTable t;
    add_elementwise_ops(t);
    add_shape_ops(t);
    add_nn_ops(t);
    add_reduce_ops(t);
    add_resize_ops(t);
    add_rnn_ops(t);
    add_ml_ops(t);
    return t;
  }();
  return table;
}

}  // namespace slipstream::ml::onnx_import
