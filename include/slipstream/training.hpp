// slipstream::train: the online trainer's parts, for users who write their own training loop in
// C++ instead of running `slipstream train CONFIG`. The trainer itself (src/train/trainer.cpp) is
// built from exactly these parts:
//
//   SampleBuilder  a TorchScript module that turns this reader's share of a stream step into
//                  sample rows (input, target)
//   SampleMemory   a replay memory of sample rows (FIFO, FIRO, reservoir), drawing batches
//   Model          a TorchScript model trained data-parallel: one fused all-reduce of the
//                  gradients, the sample count and the loss per optimiser step, over a Collective
//   Publisher      stores the model in the server from its own thread, with increasing versions
//
// Library libslipstream_training (it links libtorch privately; no torch types here, so a file
// including this header compiles fast). The collectives: single_process() here, mpi_world() in
// libslipstream_training_mpi, or the user's own implementation of Collective.
//
// A loop (one rank or many; every rank makes the same collective calls in the same order):
//
//   auto world = slipstream::train::single_process();
//   auto model = slipstream::train::Model::from_file("model.pt", options, *world);
//   auto builder = slipstream::train::SampleBuilder::from_file("samples.pt");
//   slipstream::train::SampleMemory memory(replay);
//   slipstream::train::Publisher publisher(client_options, "surrogate");
//   slipstream::StreamReader reader(client_options, "pic", "trainer", 0, 1);
//   while (true) {
//     slipstream::StreamNext next = reader.next_step();
//     if (next.kind == slipstream::StreamNext::Kind::kEnd) break;
//     if (!next.step) continue;
//     memory.add(builder.build(*next.step));
//     next.step->release();
//     if (!memory.ready()) continue;
//     model.train_step(memory.draw(64));
//     if (model.steps() % 20 == 0) {
//       publisher.publish(model, {model.steps(), next.step->number(), model.last_loss()});
//     }
//   }
//   publisher.flush();
//
// Under MPI, ranks must also agree on when to stop and whether to train (a rank whose share was
// empty still calls train_step with an empty batch): the trainer does this with one sum per round.
//
// Thread safety: one thread per object, except Publisher, whose calls may come from any thread.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "slipstream/client.hpp"
#include "slipstream/collective.hpp"
#include "slipstream/error.hpp"
#include "slipstream/export.hpp"
#include "slipstream/replay_memory.hpp"
#include "slipstream/stream.hpp"
#include "slipstream/tensor_data.hpp"
#include "slipstream/train_options.hpp"

namespace slipstream::train {

/// A model or sample builder that cannot be loaded or run, or samples that do not fit: what()
/// says why (libtorch's own text, summarised, where it has one). Code ErrorCode::kBackend.
class SLIPSTREAM_API TrainingError : public Error {
 public:
  ~TrainingError() override;
  explicit TrainingError(const std::string& message) : Error(ErrorCode::kBackend, message) {}
};

/// Sample rows: `input` is [count, input row shape...], `target` [count, target row shape...].
/// With count 0 both are empty placeholder tensors.
struct Samples {
  Tensor input;
  Tensor target;
  std::int64_t count = 0;
};

/// The user's sample builder: a TorchScript module whose forward takes Dict[str, List[Tensor]]
/// (for each component of the step, "meshes/E/x" or "particles/e/position/x", this reader's
/// pieces of it in the strategy's order, each shaped by its extent) and returns
/// Tuple[Tensor, Tensor], (input, target), whose first dimensions count the samples.
class SLIPSTREAM_API SampleBuilder {
 public:
  /// Loads a torch.jit.save archive. Throws TrainingError when libtorch cannot load it or it has
  /// no forward method; InvalidArgumentError when the file cannot be read.
  static SampleBuilder from_file(const std::string& path);
  static SampleBuilder from_bytes(std::string_view archive);

  SampleBuilder(SampleBuilder&&) noexcept;
  SampleBuilder& operator=(SampleBuilder&&) noexcept;
  ~SampleBuilder();

  /// Loads this reader's pieces of every component of `step` and runs the builder on them. A
  /// share with no pieces gives no samples (count 0) without running it. Throws TrainingError
  /// when the builder fails or returns something else than two tensors with equal first
  /// dimensions (the step is bad; the next one may be fine), and the client's errors when the
  /// pieces cannot be loaded.
  Samples build(StreamStep& step);

 private:
  struct State;
  explicit SampleBuilder(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

/// A replay memory of sample rows (ReplayMemory's policies, bounds and statistics). Every row
/// of a memory has the dtypes and row shapes of the first rows added.
class SLIPSTREAM_API SampleMemory {
 public:
  /// Throws std::invalid_argument for max_samples 0 or min_fill > max_samples.
  explicit SampleMemory(const ReplayConfig& config);
  SampleMemory(SampleMemory&&) noexcept;
  SampleMemory& operator=(SampleMemory&&) noexcept;
  ~SampleMemory();

  /// Throws TrainingError, naming both, when `rows` have other dtypes or row shapes than the
  /// rows held before (nothing when the memory never held any, or `rows` is empty).
  void check(const Samples& rows) const;
  /// Offers row `row` of `rows` (checked first); false when the policy did not take it.
  bool add(const Samples& rows, std::int64_t row);
  /// Offers every row; returns how many were taken.
  std::int64_t add(const Samples& rows);
  /// `n` held rows drawn uniformly at random with replacement, as one batch (count 0 when
  /// nothing is held).
  Samples draw(std::size_t n);
  /// Every held row, in slot order, as one batch (validation sets, checkpoints).
  Samples all() const;

  bool ready() const noexcept;
  std::size_t size() const noexcept;
  ReplayStats stats() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

/// A loss over every rank's samples.
struct BatchLoss {
  std::int64_t samples = 0;  ///< summed over the ranks; 0: no rank had any (no step was made)
  double loss = 0;           ///< the mean loss over those samples
};

/// A TorchScript model (torch.jit.save, with trainable float parameters) trained in this
/// process, data-parallel over a Collective. On the CPU.
class SLIPSTREAM_API Model {
 public:
  /// Loads the module and sets up the optimiser on every rank of `collective`, then gives every
  /// rank rank 0's parameters (collective). `collective` must outlive the model. Throws
  /// TrainingError on every rank when any rank could not load it or the ranks' models differ in
  /// size; InvalidArgumentError (this rank only, before any collective) for an unreadable file.
  static Model from_file(const std::string& path, const TrainOptions& options,
                         Collective& collective);
  static Model from_bytes(std::string_view archive, const TrainOptions& options,
                          Collective& collective);

  Model(Model&&) noexcept;
  Model& operator=(Model&&) noexcept;
  ~Model();

  /// One optimiser step over every rank's batch (collective): each rank computes the gradients
  /// of its batch's loss weighted by its count, one fused all-reduce sums the gradients, the
  /// counts and the losses, and the optimiser applies the gradient of the mean loss over the
  /// union of the batches (the same update one process would make on all of them). An empty
  /// batch takes part with weight 0. Throws TrainingError on every rank when the model failed
  /// on any rank's batch (the parameters are then unchanged).
  BatchLoss train_step(const Samples& batch);
  /// The loss over every rank's `samples`, without gradients (collective). Throws TrainingError
  /// on every rank when the model failed on any rank's samples.
  BatchLoss evaluate(const Samples& samples);
  /// forward(input) on this rank, without gradients; one tensor per output. Throws
  /// TrainingError.
  std::vector<Tensor> predict(const Tensor& input);

  /// Optimiser steps made (by train_step, or restored by load_optimizer_state's caller).
  std::int64_t steps() const noexcept;
  /// The mean loss of the last train_step that made a step (0 before any).
  double last_loss() const noexcept;
  double learning_rate() const noexcept;
  /// Multiplies the learning rate (a schedule, or scaling with the number of ranks).
  void scale_learning_rate(double factor);

  /// The module with its current parameters (torch.jit.save bytes, for AI.MODELSTORE).
  std::string save() const;
  /// The optimiser's state (moments, step counts, the learning rate) as bytes, and back into a
  /// model loaded from save()'s bytes with the same options. load_optimizer_state throws
  /// TrainingError for bytes that are not such a state (the optimiser is then unchanged).
  std::string optimizer_state() const;
  void load_optimizer_state(std::string_view bytes, std::int64_t steps);

 private:
  struct State;
  explicit Model(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

/// What a published model was trained to (written into its tag).
struct PublishInfo {
  std::int64_t optimizer_step = 0;
  std::int64_t stream_step = -1;
  double loss = 0;
};

struct PublishOptions {
  /// Earlier versions the server keeps loaded (AI.MODELSTORE ... KEEP n), 0-64.
  std::int64_t keep_versions = 0;
  /// Versions already stored under the key (a trainer resuming from a checkpoint): the next
  /// publish is version published_before + 1.
  std::int64_t published_before = 0;
  /// Where failed publishes are reported (nullptr: nowhere; they are counted either way).
  std::ostream* log = nullptr;
};

/// Stores models in the server (AI.MODELSTORE on every shard, TORCH backend, CPU) from its own
/// thread and connection, so the training loop never waits while the server loads one. At most
/// one model waits: a newer one replaces a model not sent yet. Version n is the n-th model
/// actually stored (tag "version=n optimizer_step=... stream_step=... loss=..."), so it matches
/// the version the server reports to callers of run_model when this is the key's only writer.
class SLIPSTREAM_API Publisher {
 public:
  Publisher(ClientOptions server, std::string key, PublishOptions options = {});
  /// Stops the thread; a model not sent yet is dropped (call flush() first to keep it).
  ~Publisher();
  Publisher(const Publisher&) = delete;
  Publisher& operator=(const Publisher&) = delete;

  /// Serialises the model on the caller's thread and hands it over; returns at once.
  void publish(const Model& model, const PublishInfo& info);
  void publish(std::string archive, const PublishInfo& info);
  /// Waits until every model handed over was sent; returns the last attempt's error (empty:
  /// stored).
  std::string flush();
  /// Versions stored so far (published_before included), and publishes the server refused.
  std::int64_t published() const noexcept;
  std::int64_t failures() const noexcept;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace slipstream::train
