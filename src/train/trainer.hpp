// The online trainer (`slipstream train CONFIG`, one process per rank): reads a stream as a
// consumer group, turns each step into samples with the user's TorchScript sample builder, keeps
// them in a replay memory, trains the user's TorchScript model data-parallel over a Collective,
// and publishes it to the server (AI.MODELSTORE on every shard) for the simulation to call.
//
// The loop goes in rounds. In each round every rank asks its reader for the next step (waiting
// at most a fraction of a second), then all ranks exchange what they got in one sum: whether a
// rank got a step, saw the end, how many samples it added, whether its memory is ready. Every
// decision after that (stop, give up waiting for the first step, how many batches to train) is
// taken from those sums, so all ranks make the same collective calls in the same order: a rank
// whose share of a step was empty, or whose sample builder failed, still takes part with weight 0,
// and no rank can leave the others waiting in an all-reduce.
//
// One optimiser step: each ready rank draws `batch_size` samples from its memory, accumulates
// their gradients weighted by that count, and the gradients, the count and the weighted loss are
// summed in one fused all-reduce; dividing by the total count gives the gradient of the mean loss
// over every rank's batch, the same update one process would make on the union of the batches.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <stdexcept>
#include <string>

#include "slipstream/collective.hpp"
#include "slipstream/replay_memory.hpp"
#include "train/train_config.hpp"

namespace slipstream::train {

/// The trainer cannot go on: what() says why (a file that cannot be read, a model or sample
/// builder that cannot be loaded, no step within `wait_seconds`, the model failing on a batch on
/// any rank, the stream ending before any sample came). Every rank throws it in the same round.
class TrainerError : public std::runtime_error {
 public:
  explicit TrainerError(const std::string& message) : std::runtime_error(message) {}
};

/// Where a trainer stands. Counts marked "all ranks" are the same on every rank.
struct TrainerStatus {
  double seconds = 0;                  ///< since run() began
  std::int64_t stream_step = -1;       ///< the newest stream step this rank read
  std::int64_t steps_behind = 0;       ///< the writers' newest complete step minus stream_step
                                       ///< (rank 0, as of its last report; 0 when unknown)
  std::int64_t steps_read = 0;         ///< stream steps this rank read
  std::int64_t steps_skipped = 0;      ///< steps aborted by the stream (this rank was told)
  std::int64_t bad_steps = 0;          ///< steps whose samples could not be built (all ranks)
  std::int64_t samples_seen = 0;       ///< samples built from the stream (all ranks)
  std::int64_t samples_trained = 0;    ///< samples in the batches trained on (all ranks)
  std::int64_t optimizer_steps = 0;
  double train_loss = 0;               ///< mean loss of the last optimiser step's batches
  double validation_loss = -1;         ///< on the held-out samples, as last evaluated; -1: none
  double samples_per_second = 0;       ///< samples_trained per second over the whole run
  double learning_rate = 0;
  std::int64_t published_version = 0;  ///< 0: nothing published yet
  std::int64_t publish_failures = 0;   ///< publishes the server refused (rank 0)
  double final_publish_seconds = 0;    ///< rank 0's wait for the last model to be stored
  ReplayStats replay;                  ///< this rank's memory
};

class Trainer {
 public:
  /// Loads the model and the sample builder (files named by `config`), checks the options the
  /// trainer does not support yet, and gives every rank rank 0's parameters. `progress`: where
  /// rank 0 prints progress lines (nullptr: nowhere). Throws TrainerError.
  Trainer(TrainConfig config, Collective& collective, std::ostream* progress = nullptr);
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  /// Joins the stream's group and trains until the stream ends; then `steps_after_end` more
  /// optimiser steps from the replay memory and a final publish. Returns the final status.
  /// Throws TrainerError (on every rank alike) or the client's errors (server gone).
  TrainerStatus run();

 private:
  TrainerStatus run_loop();
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace slipstream::train
