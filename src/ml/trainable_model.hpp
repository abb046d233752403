// A TorchScript model trained in process: the core the online trainer (src/train) drives. The
// user's module (torch.jit.save bytes) brings its trainable parameters; this class adds the loss,
// the optimiser, gradient clipping, and the flat views of gradients and parameters that a fused
// all-reduce and a broadcast from rank 0 need. No torch types in this header (pimpl).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "ml/backend.hpp"
#include "ml/train_options.hpp"

namespace slipstream::ml {

/// A model that cannot be loaded or trained as asked; what() says why (libtorch's own text,
/// summarised, where it has one).
class TrainError : public std::runtime_error {
 public:
  explicit TrainError(const std::string& message) : std::runtime_error(message) {}
};

/// Not thread-safe: one trainer thread owns one. On the CPU.
class TrainableModel {
 public:
  /// Loads a serialized TorchScript module (and the script loss module of `options`) onto the
  /// CPU after the checks the server applies to a model it stores (its pickles' bounds, then the
  /// operator policy), and sets up the optimiser over its parameters. Throws TrainError for an
  /// archive those checks refuse or libtorch cannot load, a module without trainable float
  /// parameters, or bad options.
  static std::unique_ptr<TrainableModel> load(std::string_view archive,
                                              const TrainOptions& options);
  ~TrainableModel();
  TrainableModel(const TrainableModel&) = delete;
  TrainableModel& operator=(const TrainableModel&) = delete;

  /// forward(inputs), the loss against `target` (mean over elements), and its gradients added
  /// to the accumulated ones, scaled by `weight` (0: the gradients do not change, as for a rank
  /// with no data this step that still takes part in the all-reduce). Returns the unscaled loss.
  /// Throws TrainError (forward failed, the output is not one tensor, shapes disagree); the
  /// accumulated gradients are then unchanged.
  double accumulate(std::span<const TensorView> inputs, const TensorView& target,
                    double weight = 1.0);
  /// The loss without gradients (validation data). Throws TrainError as accumulate.
  double evaluate(std::span<const TensorView> inputs, const TensorView& target);
  /// forward(inputs) without gradients. Throws TrainError.
  std::vector<OwnedTensor> predict(std::span<const TensorView> inputs);

  /// Trainable scalars in all parameters: the length of the flat views below.
  std::size_t parameter_count() const noexcept;
  /// The accumulated gradients, parameter after parameter, as one flat buffer (for one fused
  /// all-reduce); set_gradients replaces them (with the reduced ones).
  void gradients(std::span<float> out) const;
  void set_gradients(std::span<const float> in);
  /// The parameters as one flat buffer (for a broadcast from rank 0), and back.
  void parameters(std::span<float> out) const;
  void set_parameters(std::span<const float> in);
  /// The global L2 norm of the accumulated gradients.
  double gradient_norm() const;

  /// Clips (when asked), applies the optimiser to the accumulated gradients and zeroes them.
  void step();
  /// Multiplies the learning rate (a schedule, or scaling with the number of ranks).
  void scale_learning_rate(double factor);
  double learning_rate() const noexcept;

  /// The module with its current parameters, serialized for AI.MODELSTORE (TORCH backend).
  std::string save() const;
  /// The optimiser's state (its moments and step counts, and the learning rate) as bytes, for a
  /// checkpoint; load_optimizer_state() restores it into a model loaded from save()'s bytes with
  /// the same options. Throws TrainError for bytes that are not such a state (the model's
  /// optimiser is then unchanged).
  std::string optimizer_state() const;
  void load_optimizer_state(std::string_view bytes);

 private:
  struct State;
  explicit TrainableModel(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace slipstream::ml
