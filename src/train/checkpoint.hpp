// The trainer's checkpoints: what a trainer killed at any moment (SIGKILL included) needs to go on
// where its last checkpoint was. Written atomically (a temporary file, fsync, rename, directory
// fsync), so a checkpoint file is either the previous one or the new one, never a torn one, and
// checked with a CRC-64 when read. No torch here: the model and the optimiser state are bytes.
//
// Files in the checkpoint directory:
//   trainer.ckpt        rank 0's: the model, the optimiser state and the counters
//   replay-<rank>.ckpt  each rank's replay memory (when [checkpoint] replay = true), tagged with
//                       the optimiser step of the checkpoint it belongs to
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "slipstream/tensor.hpp"

namespace slipstream::train {

class CheckpointError : public std::runtime_error {
 public:
  explicit CheckpointError(const std::string& message) : std::runtime_error(message) {}
};

struct TrainerCheckpoint {
  std::int64_t optimizer_steps = 0;
  std::int64_t published_version = 0;
  std::int64_t stream_step = -1;      ///< the newest stream step trained on
  std::int64_t samples_seen = 0;
  std::int64_t samples_trained = 0;
  std::string model;                  ///< the TorchScript module with its parameters
  std::string optimizer;              ///< the optimiser's state
};

/// A rank's replay memory: `count` samples of fixed row layouts, rows back to back.
struct ReplayCheckpoint {
  std::int64_t optimizer_steps = 0;   ///< of the TrainerCheckpoint it goes with
  DType input_dtype = DType::kFloat32, target_dtype = DType::kFloat32;
  std::vector<std::int64_t> input_shape, target_shape;  ///< one row's, without the sample dim
  std::uint64_t count = 0;
  std::string inputs, targets;        ///< count rows each
};

std::filesystem::path trainer_checkpoint_path(const std::filesystem::path& dir);
std::filesystem::path replay_checkpoint_path(const std::filesystem::path& dir, int rank);

/// Writes atomically (creating `dir` if needed). Throws CheckpointError.
void write_checkpoint(const std::filesystem::path& dir, const TrainerCheckpoint& checkpoint);
void write_checkpoint(const std::filesystem::path& dir, int rank,
                      const ReplayCheckpoint& checkpoint);
/// nullopt when there is no such file; CheckpointError when it is not a whole checkpoint of
/// this format (truncated, corrupted, another kind of file).
std::optional<TrainerCheckpoint> read_trainer_checkpoint(const std::filesystem::path& dir);
std::optional<ReplayCheckpoint> read_replay_checkpoint(const std::filesystem::path& dir, int rank);

}  // namespace slipstream::train
