// The ONNX import (lower.hpp): checks of the ModelProto, opset conversion, shape inference, the
// walk over the graph that the operator lowerings (ops_*.cpp) write through, and the compiled
// TorchScript module.
#include "ml/onnx/lower.hpp"

#include <ATen/ops/empty.h>
#include <ATen/ops/from_blob.h>
#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>
#include <onnx/version_converter/convert.h>

#include <climits>
#include <cstring>
#include <map>
#include <sstream>

#include "ml/onnx/emitter.hpp"

namespace slipstream::ml::onnx_import {
namespace {

// Opsets the lowerings are written for; older models are converted to the first of them.
constexpr int kFirstOpset = 13;
constexpr int kLastOpset = 17;
constexpr int kMaxNodes = 100000;

const char* const kKnownDomains[] = {"", "ai.onnx", "ai.onnx.ml"};

bool external(const onnx::TensorProto& tensor) {
  return tensor.data_location() == onnx::TensorProto::EXTERNAL || tensor.external_data_size() > 0;
}

// Refuses tensors that name files (external data), anywhere in the graph: initializers and the
// tensors of node attributes (Constant's value), subgraphs included.
void refuse_external_data(const onnx::GraphProto& graph) {
  for (const onnx::TensorProto& tensor : graph.initializer()) {
    if (external(tensor)) {
      throw Refused("initializer '" + tensor.name() +
                    "' keeps its data in an external file, which a stored model may not "
                    "reference: save the model with its data inside (onnx.save_model(..., "
                    "save_as_external_data=False))");
    }
  }
  if (graph.sparse_initializer_size() > 0) {
    throw Refused("sparse initializers are not supported");
  }
  for (const onnx::NodeProto& node : graph.node()) {
    for (const onnx::AttributeProto& attribute : node.attribute()) {
      if (attribute.has_t() && external(attribute.t())) {
        Emitter::refuse(node, "attribute '" + attribute.name() +
                                  "' keeps its data in an external file, which a stored model "
                                  "may not reference");
      }
      for (const onnx::TensorProto& tensor : attribute.tensors()) {
        if (external(tensor)) Emitter::refuse(node, "a tensor keeps its data in an external file");
      }
      if (attribute.has_g()) refuse_external_data(attribute.g());
      for (const onnx::GraphProto& sub : attribute.graphs()) refuse_external_data(sub);
    }
  }
}

std::size_t element_size(int type) {
  switch (type) {
    case onnx::TensorProto::FLOAT: case onnx::TensorProto::INT32: return 4;
    case onnx::TensorProto::DOUBLE: case onnx::TensorProto::INT64: return 8;
    case onnx::TensorProto::FLOAT16: case onnx::TensorProto::BFLOAT16:
    case onnx::TensorProto::INT16: return 2;
    case onnx::TensorProto::INT8: case onnx::TensorProto::UINT8: case onnx::TensorProto::BOOL:
      return 1;
    default: return 0;
  }
}

at::ScalarType scalar_type(int type) {
  switch (type) {
    case onnx::TensorProto::FLOAT: return at::kFloat;
    case onnx::TensorProto::DOUBLE: return at::kDouble;
    case onnx::TensorProto::FLOAT16: return at::kHalf;
    case onnx::TensorProto::BFLOAT16: return at::kBFloat16;
    case onnx::TensorProto::INT8: return at::kChar;
    case onnx::TensorProto::UINT8: return at::kByte;
    case onnx::TensorProto::INT16: return at::kShort;
    case onnx::TensorProto::INT32: return at::kInt;
    case onnx::TensorProto::INT64: return at::kLong;
    case onnx::TensorProto::BOOL: return at::kBool;
    default: return at::kFloat;
  }
}

// A TensorProto's values as a tensor of its own, checked against its dims.
at::Tensor tensor_of(const onnx::TensorProto& proto) {
  const std::string where = "tensor '" + proto.name() + "'";
  torch_dtype(proto.data_type(), where);  // refuses types libtorch has no tensors of
  std::vector<std::int64_t> dims;
  std::uint64_t count = 1;
  for (std::int64_t d : proto.dims()) {
    if (d < 0 || (d > 0 && count > (std::uint64_t{1} << 40) / static_cast<std::uint64_t>(d))) {
      throw Refused(where + " has an impossible shape");
    }
    count *= static_cast<std::uint64_t>(d);
    dims.push_back(d);
  }
  const std::size_t size = element_size(proto.data_type());
  at::Tensor out = at::empty(dims, at::TensorOptions().dtype(scalar_type(proto.data_type())));
  auto* bytes = static_cast<char*>(out.data_ptr());
  auto mismatch = [&](std::size_t have) {
    return Refused(where + " holds " + std::to_string(have) + " values where its shape needs " +
                   std::to_string(count));
  };
  if (proto.has_raw_data()) {
    if (proto.raw_data().size() != count * size) throw mismatch(proto.raw_data().size() / size);
    std::memcpy(bytes, proto.raw_data().data(), proto.raw_data().size());
    return out;
  }
  auto copy_each = [&](const auto& values, auto convert) {
    if (static_cast<std::uint64_t>(values.size()) != count) throw mismatch(values.size());
    for (std::uint64_t k = 0; k < count; ++k) convert(bytes + k * size, values[static_cast<int>(k)]);
  };
  switch (proto.data_type()) {
    case onnx::TensorProto::FLOAT:
      copy_each(proto.float_data(), [](char* to, float v) { std::memcpy(to, &v, 4); });
      break;
    case onnx::TensorProto::DOUBLE:
      copy_each(proto.double_data(), [](char* to, double v) { std::memcpy(to, &v, 8); });
      break;
    case onnx::TensorProto::INT64:
      copy_each(proto.int64_data(), [](char* to, std::int64_t v) { std::memcpy(to, &v, 8); });
      break;
    default:  // int32_data holds the narrower types (float16 and bfloat16 as their bits)
      copy_each(proto.int32_data(), [size](char* to, std::int32_t v) {
        if (size == 4) std::memcpy(to, &v, 4);
        if (size == 2) {
          const auto narrow = static_cast<std::uint16_t>(v);
          std::memcpy(to, &narrow, 2);
        }
        if (size == 1) *to = static_cast<char>(v);
      });
      break;
  }
  return out;
}

// Refuses the first node whose operator no lowering knows, before shape inference (which would
// fail on it with a less useful message, or not at all).
void refuse_unknown_operators(const onnx::GraphProto& graph) {
  for (const onnx::NodeProto& node : graph.node()) {
    if (op_table().find(node.domain(), node.op_type()) != nullptr) continue;
    if (node.op_type() == "ZipMap") {
      Emitter::refuse(node, "ZipMap (a list of maps of class probabilities) is not supported: "
                            "export the classifier without it (skl2onnx: options={id(model): "
                            "{'zipmap': False}})");
    }
    Emitter::refuse(node, "operator " +
                              (node.domain().empty() ? std::string() : node.domain() + ".") +
                              node.op_type() + " is not supported (docs/models.md lists the "
                              "operators the ONNX backend lowers)");
  }
}

// The model, refused or checked and brought to an opset the lowerings know; `source_opset` is
// its ai.onnx opset before conversion.
onnx::ModelProto checked_model(std::string_view bytes, int* source_opset = nullptr) {
  if (bytes.size() > static_cast<std::size_t>(INT_MAX)) {
    throw Refused("ONNX models over 2 GiB are not supported (protobuf's limit)");
  }
  onnx::ModelProto model;
  if (bytes.empty() || !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    throw Refused("not an ONNX model: the bytes do not parse as an ONNX ModelProto");
  }
  if (!model.has_graph()) throw Refused("the ONNX model has no graph");
  if (model.graph().node_size() > kMaxNodes) {
    throw Refused("the graph has " + std::to_string(model.graph().node_size()) +
                  " nodes (at most " + std::to_string(kMaxNodes) + ")");
  }
  if (model.functions_size() > 0) throw Refused("model-local functions are not supported");
  int opset = 0;
  for (const onnx::OperatorSetIdProto& id : model.opset_import()) {
    bool known = false;
    for (const char* domain : kKnownDomains) known = known || id.domain() == domain;
    if (!known) {
      throw Refused("the model imports operators of domain '" + id.domain() +
                    "', which is not supported (supported: ai.onnx, ai.onnx.ml)");
    }
    if (id.domain().empty() || id.domain() == "ai.onnx") opset = static_cast<int>(id.version());
  }
  refuse_external_data(model.graph());
  if (source_opset != nullptr) *source_opset = opset;
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    throw Refused(std::string("the ONNX checker refuses the model: ") + e.what());
  }
  if (opset > kLastOpset) {
    throw Refused("the model uses opset " + std::to_string(opset) + "; supported: " +
                  std::to_string(kFirstOpset) + "-" + std::to_string(kLastOpset) +
                  " (older ones are converted): export with opset_version=" +
                  std::to_string(kLastOpset));
  }
  if (opset != 0 && opset < kFirstOpset) {
    try {
      model = onnx::version_conversion::ConvertVersion(model, kFirstOpset);
    } catch (const std::exception& e) {
      throw Refused("the model uses opset " + std::to_string(opset) +
                    ", which ONNX's version converter cannot bring to opset " +
                    std::to_string(kFirstOpset) + ": " + e.what());
    }
  }
  refuse_unknown_operators(model.graph());
  try {
    onnx::ShapeInferenceOptions options(/*check_type=*/true, /*strict_mode=*/1);
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception& e) {
    throw Refused(std::string("shape inference fails on the model: ") + e.what());
  }
  return model;
}

// The module's source and buffers for `model`.
struct Lowered {
  std::string source;
  std::vector<onnx::TensorProto> buffers;
};

Lowered lower_graph(const onnx::ModelProto& model, int source_opset) {
  std::map<std::string, int> opsets;
  for (const onnx::OperatorSetIdProto& id : model.opset_import()) {
    opsets[id.domain() == "ai.onnx" ? std::string() : id.domain()] = static_cast<int>(id.version());
  }
  const onnx::GraphProto& graph = model.graph();
  Emitter e(opsets);
  e.set_source_opset(source_opset);
  for (const onnx::ValueInfoProto& info : graph.value_info()) e.set_value_info(info.name(), info.type());
  for (const onnx::ValueInfoProto& info : graph.input()) e.set_value_info(info.name(), info.type());
  for (const onnx::ValueInfoProto& info : graph.output()) e.set_value_info(info.name(), info.type());

  // Initializers become buffers; graph inputs that are not initializers, forward's parameters.
  for (const onnx::TensorProto& tensor : graph.initializer()) {
    e.bind(tensor.name(), e.constant_tensor(tensor));
    e.bind_constant(tensor.name(), &tensor);
  }
  std::string signature = "def forward(self";
  int parameter = 0;
  for (const onnx::ValueInfoProto& input : graph.input()) {
    if (e.bound(input.name())) continue;  // an initializer listed as an input (IR < 4)
    if (!input.type().has_tensor_type()) {
      throw Refused("graph input '" + input.name() + "' is not a tensor (sequences and maps are "
                    "not supported)");
    }
    torch_dtype(input.type().tensor_type().elem_type(), "graph input '" + input.name() + "'");
    const std::string variable = "x" + std::to_string(parameter++);
    e.bind(input.name(), variable);
    signature += ", " + variable + ": Tensor";
  }
  signature += "):";

  const OpTable& table = op_table();
  for (const onnx::NodeProto& node : graph.node()) {
    table.find(node.domain(), node.op_type())(e, node);  // known: refuse_unknown_operators
    for (const std::string& output : node.output()) {
      if (!output.empty() && !e.bound(output)) {
        Emitter::refuse(node, "output '" + output + "' was not produced (optional outputs "
                              "of this operator are not supported)");
      }
    }
  }

  std::vector<std::string> results;
  for (const onnx::ValueInfoProto& output : graph.output()) {
    if (!e.bound(output.name())) {
      throw Refused("graph output '" + output.name() + "' is computed by no node");
    }
    results.push_back(e.variable(output.name()));
  }
  if (results.empty()) throw Refused("the graph has no outputs");

  std::ostringstream source;
  source << signature << "\n";
  for (const std::string& statement : e.statements()) source << "    " << statement << "\n";
  source << "    return ";
  if (results.size() == 1) {
    source << results[0] << "\n";
  } else {
    source << "(";
    for (std::size_t k = 0; k < results.size(); ++k) source << (k ? ", " : "") << results[k];
    source << ")\n";
  }
  for (const auto& [name, helper] : e.helpers()) source << helper;
  return {source.str(), e.buffers()};
}

}  // namespace

torch::jit::Module lower_model(std::string_view bytes) {
  int source_opset = 0;
  const onnx::ModelProto model = checked_model(bytes, &source_opset);
  Lowered lowered = lower_graph(model, source_opset);
  torch::jit::Module module("__torch__.OnnxModel");
  for (std::size_t k = 0; k < lowered.buffers.size(); ++k) {
    module.register_buffer("c" + std::to_string(k), tensor_of(lowered.buffers[k]));
  }
  try {
    module.define(lowered.source);
  } catch (const std::exception& e) {
    // A lowering wrote something TorchScript refuses: the lowering's bug, said plainly.
    throw std::invalid_argument(std::string("lowering the ONNX graph to TorchScript failed "
                                            "(a bug of the ONNX backend; please report it): ") +
                                e.what());
  }
  return module;
}

std::string lowered_source(std::string_view bytes) {
  int source_opset = 0;
  const onnx::ModelProto model = checked_model(bytes, &source_opset);
  return lower_graph(model, source_opset).source;
}

std::vector<std::string> supported_operators() { return op_table().names(); }

}  // namespace slipstream::ml::onnx_import
