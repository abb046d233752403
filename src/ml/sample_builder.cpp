// SampleBuilder over libtorch: see sample_builder.hpp.
#include "ml/sample_builder.hpp"

#include <ATen/core/Dict.h>
#include <ATen/core/List.h>
#include <c10/core/GradMode.h>
#include <torch/csrc/jit/api/module.h>

#include "ml/torch_interop.hpp"

namespace slipstream::ml {

struct SampleBuilder::State {
  torch::jit::Module module;
};

SampleBuilder::SampleBuilder(std::unique_ptr<State> state) : state_(std::move(state)) {}
SampleBuilder::~SampleBuilder() = default;

std::unique_ptr<SampleBuilder> SampleBuilder::load(std::string_view archive) {
  auto state = std::make_unique<State>();
  try {
    state->module = load_checked_module(archive);
  } catch (const std::exception& e) {
    throw TrainError("the sample builder cannot be loaded: " + describe(e));
  }
  if (!state->module.find_method("forward")) {
    throw TrainError("the sample builder has no forward method");
  }
  state->module.eval();
  return std::unique_ptr<SampleBuilder>(new SampleBuilder(std::move(state)));
}

SampleRows SampleBuilder::build(std::span<const RecordPieces> records) {
  c10::NoGradGuard no_grad;
  c10::Dict<std::string, c10::List<at::Tensor>> dict;
  for (const RecordPieces& record : records) {
    std::vector<at::Tensor> tensors;
    if (Status s = wrap_inputs(record.pieces, c10::Device(c10::DeviceType::CPU), tensors); !s.ok) {
      throw TrainError("record " + record.name + ": " + s.message);
    }
    c10::List<at::Tensor> list;
    for (at::Tensor& t : tensors) list.push_back(std::move(t));
    dict.insert(record.name, std::move(list));
  }
  c10::IValue result;
  try {
    result = state_->module.forward({c10::IValue(dict)});
  } catch (const std::exception& e) {
    throw TrainError("the sample builder failed: " + describe(e));
  }
  if (!result.isTuple() || result.toTupleRef().elements().size() != 2 ||
      !result.toTupleRef().elements()[0].isTensor() ||
      !result.toTupleRef().elements()[1].isTensor()) {
    throw TrainError("the sample builder returned a " + std::string(result.tagKind()) +
                     "; it must return a tuple of two tensors (input, target)");
  }
  std::vector<OwnedTensor> outputs;
  if (Status s = copy_outputs(result, outputs); !s.ok) {
    throw TrainError("the sample builder's result: " + s.message);
  }
  SampleRows rows;
  rows.input = std::move(outputs[0]);
  rows.target = std::move(outputs[1]);
  if (rows.input.shape.empty() || rows.target.shape.empty()) {
    throw TrainError("the sample builder returned a scalar; input and target need a first "
                     "dimension that counts the samples");
  }
  if (rows.input.shape[0] != rows.target.shape[0]) {
    throw TrainError("the sample builder returned " + std::to_string(rows.input.shape[0]) +
                     " inputs and " + std::to_string(rows.target.shape[0]) +
                     " targets; the first dimensions must agree");
  }
  rows.samples = rows.input.shape[0];
  return rows;
}

}  // namespace slipstream::ml
