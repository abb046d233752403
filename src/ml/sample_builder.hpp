// The trainer's sample builder: a user's TorchScript module that turns a stream step's records
// (this reader's share of them) into training samples, so that what is learned changes without
// recompiling. No torch types in this header (pimpl).
//
// The module's forward takes one argument, Dict[str, List[Tensor]]: for each component the
// trainer loaded ("meshes/E/x", "particles/e/position/x"), this reader's pieces of it in the
// order the strategy gave them, each shaped by its extent. It returns Tuple[Tensor, Tensor]:
// (input, target), whose first dimension counts the samples (equal in both; 0 is allowed).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ml/backend.hpp"
#include "ml/trainable_model.hpp"  // TrainError

namespace slipstream::ml {

/// One record component's pieces as given to the builder.
struct RecordPieces {
  std::string name;
  std::vector<TensorView> pieces;
};

/// What the builder made of one step: `input` and `target` with `samples` rows each.
struct SampleRows {
  OwnedTensor input;
  OwnedTensor target;
  std::int64_t samples = 0;
};

/// Not thread-safe: one trainer thread owns one. On the CPU.
class SampleBuilder {
 public:
  /// Loads the serialized module (torch.jit.save) onto the CPU after the checks the server
  /// applies to a model it stores (its pickles' bounds, then the operator policy). Throws
  /// TrainError when those checks refuse it, libtorch cannot load it or it has no forward method.
  static std::unique_ptr<SampleBuilder> load(std::string_view archive);
  ~SampleBuilder();
  SampleBuilder(const SampleBuilder&) = delete;
  SampleBuilder& operator=(const SampleBuilder&) = delete;

  /// Runs forward on the records. Throws TrainError naming what was wrong: forward failed (the
  /// TorchScript error, summarised), it did not return two tensors, they have no first dimension
  /// or disagree on it, or a dtype slipstream tensors cannot hold.
  SampleRows build(std::span<const RecordPieces> records);

 private:
  struct State;
  explicit SampleBuilder(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace slipstream::ml
