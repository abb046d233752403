// What the ONNX backend refuses when a model is loaded, and what it says: bytes that are not a
// ModelProto, models that reference files (external data), operators of unknown domains or
// outside the supported set (named with their node), newer opsets, graphs the ONNX checker or
// shape inference refuses (a cycle, a shape that contradicts itself), initializers whose data
// does not match their shape, ZipMap (with the hint to export without it). Models are built here
// with libonnx's protobuf classes; each is first shown to load when the flaw is taken out, so a
// refusal is the flaw's and not the test model's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>

#include <string>

#include "ml/backend.hpp"

namespace slipstream::ml {
namespace {

using ::testing::HasSubstr;

// y = Relu(x + b), x and y float [2], b an initializer; opset `opset`.
onnx::ModelProto relu_model(int opset = 13) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  auto* id = model.add_opset_import();
  id->set_domain("");
  id->set_version(opset);
  onnx::GraphProto* graph = model.mutable_graph();
  graph->set_name("g");
  auto tensor_value = [](onnx::ValueInfoProto* value, const std::string& name) {
    value->set_name(name);
    auto* type = value->mutable_type()->mutable_tensor_type();
    type->set_elem_type(onnx::TensorProto::FLOAT);
    type->mutable_shape()->add_dim()->set_dim_value(2);
  };
  tensor_value(graph->add_input(), "x");
  tensor_value(graph->add_output(), "y");
  onnx::TensorProto* b = graph->add_initializer();
  b->set_name("b");
  b->set_data_type(onnx::TensorProto::FLOAT);
  b->add_dims(2);
  b->add_float_data(1.0F);
  b->add_float_data(-1.0F);
  onnx::NodeProto* add = graph->add_node();
  add->set_name("add");
  add->set_op_type("Add");
  add->add_input("x");
  add->add_input("b");
  add->add_output("s");
  onnx::NodeProto* relu = graph->add_node();
  relu->set_name("relu");
  relu->set_op_type("Relu");
  relu->add_input("s");
  relu->add_output("y");
  return model;
}

class OnnxBadInput : public ::testing::Test {
 protected:
  // "" when `model` loads, else the backend's message.
  std::string load(const std::string& bytes) {
    std::string error;
    auto loaded = backend_->load_model(bytes, ModelFormat::kOnnx, Device{}, &error);
    return loaded ? "" : error;
  }
  std::string load(const onnx::ModelProto& model) { return load(model.SerializeAsString()); }

  std::shared_ptr<Backend> backend_ = make_torch_backend({});
};

TEST_F(OnnxBadInput, TheTestModelLoadsAndRuns) {
  std::string error;
  auto model = backend_->load_model(relu_model().SerializeAsString(), ModelFormat::kOnnx,
                                    Device{}, &error);
  ASSERT_TRUE(model) << error;
  const float x[] = {-3.0F, 0.5F};
  const std::int64_t shape[] = {2};
  std::vector<OwnedTensor> out;
  TensorView input{DType::kFloat32, shape, x, sizeof x};
  ASSERT_TRUE(model->run({&input, 1}, out).ok);
  ASSERT_EQ(out.size(), 1u);
  const auto* y = reinterpret_cast<const float*>(out[0].data.data());
  EXPECT_EQ(y[0], 0.0F);  // relu(-3 + 1)
  EXPECT_EQ(y[1], 0.0F);  // relu(0.5 - 1)
}

TEST_F(OnnxBadInput, BytesThatAreNotAModelProto) {
  EXPECT_THAT(load("this is not an ONNX model"), HasSubstr("not an ONNX model"));
  EXPECT_THAT(load(""), HasSubstr("not an ONNX model"));
  const std::string good = relu_model().SerializeAsString();
  EXPECT_NE(load(good.substr(0, good.size() / 2)), "");  // truncated: refused, whatever it says
}

TEST_F(OnnxBadInput, ExternalDataIsRefused) {
  onnx::ModelProto model = relu_model();
  onnx::TensorProto* b = model.mutable_graph()->mutable_initializer(0);
  b->clear_float_data();
  b->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* location = b->add_external_data();
  location->set_key("location");
  location->set_value("/etc/passwd");
  EXPECT_THAT(load(model), HasSubstr("initializer 'b' keeps its data in an external file"));
}

TEST_F(OnnxBadInput, UnknownDomainsAndOperatorsAreNamed) {
  onnx::ModelProto foreign = relu_model();
  auto* id = foreign.add_opset_import();
  id->set_domain("com.example.custom");
  id->set_version(1);
  EXPECT_THAT(load(foreign), HasSubstr("domain 'com.example.custom', which is not supported"));

  onnx::ModelProto unsupported = relu_model();
  onnx::NodeProto* relu = unsupported.mutable_graph()->mutable_node(1);
  relu->set_op_type("Det");  // a real ONNX operator the lowering does not know
  EXPECT_THAT(load(unsupported), HasSubstr("node 'relu' (Det): operator Det is not supported"));
}

TEST_F(OnnxBadInput, NewerOpsetsAreRefusedAndOlderOnesConverted) {
  EXPECT_THAT(load(relu_model(18)), HasSubstr("the model uses opset 18; supported: 13-17"));
  EXPECT_EQ(load(relu_model(11)), "");  // converted to opset 13
  EXPECT_EQ(load(relu_model(17)), "");
}

TEST_F(OnnxBadInput, TheCheckerAndShapeInferenceRefuseBrokenGraphs) {
  onnx::ModelProto cycle = relu_model();
  cycle.mutable_graph()->mutable_node(0)->set_input(0, "y");  // add reads relu's output
  EXPECT_THAT(load(cycle), HasSubstr("the ONNX checker refuses the model"));

  onnx::ModelProto contradiction = relu_model();
  contradiction.mutable_graph()->mutable_initializer(0)->set_dims(0, 3);  // [3] + [2]
  contradiction.mutable_graph()->mutable_initializer(0)->add_float_data(0.0F);
  EXPECT_THAT(load(contradiction), HasSubstr("shape inference fails on the model"));
}

TEST_F(OnnxBadInput, InitializersMustHoldWhatTheirShapeSays) {
  onnx::ModelProto short_data = relu_model();
  short_data.mutable_graph()->mutable_initializer(0)->mutable_float_data()->RemoveLast();
  EXPECT_NE(load(short_data), "");  // the checker or the tensor conversion refuses it

  onnx::ModelProto huge = relu_model();
  onnx::TensorProto* b = huge.mutable_graph()->mutable_initializer(0);
  b->clear_dims();
  b->add_dims(1LL << 31);
  b->add_dims(1LL << 31);
  b->add_dims(1LL << 31);
  EXPECT_NE(load(huge), "");
}

TEST_F(OnnxBadInput, ZipMapGetsTheHintToExportWithoutIt) {
  onnx::ModelProto model = relu_model();
  auto* ml = model.add_opset_import();
  ml->set_domain("ai.onnx.ml");
  ml->set_version(1);
  onnx::NodeProto* relu = model.mutable_graph()->mutable_node(1);
  relu->set_op_type("ZipMap");
  relu->set_domain("ai.onnx.ml");
  EXPECT_THAT(load(model), HasSubstr("export the classifier without it"));
}

TEST_F(OnnxBadInput, ANonTensorGraphInputIsRefused) {
  onnx::ModelProto model = relu_model();
  onnx::ValueInfoProto* x = model.mutable_graph()->mutable_input(0);
  x->mutable_type()->clear_tensor_type();
  x->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()
      ->set_elem_type(onnx::TensorProto::FLOAT);
  EXPECT_NE(load(model), "");
}

}  // namespace
}  // namespace slipstream::ml
