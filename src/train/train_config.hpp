// The trainer's configuration (`slipstream train CONFIG`), read from TOML. Every option has a
// default except the stream's name and the two model files; a wrong value, a value of the wrong
// type, or a key the trainer does not know (a typo) is a ConfigError naming the file, the line,
// the section and the key. Reference: docs/training.md, "Configuration".
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "common/config_error.hpp"
#include "ml/train_options.hpp"
#include "slipstream/replay_memory.hpp"

namespace slipstream::train {

using ConfigError = slipstream::ConfigError;

struct TrainConfig {
  struct Stream {
    std::string address;                 ///< empty: SSDB from the environment
    std::string name;                    ///< required
    std::string group = "trainer";
    std::string strategy = "roundrobin"; ///< a chunk distribution strategy (docs/streams.md)
    bool start_newest = false;           ///< start = "oldest" | "newest"
    bool discard = false;                ///< policy = "block" | "discard"
    double wait_seconds = 600;           ///< how long to wait for the first step (progress shown)
  } stream;
  struct Model {
    std::string file;            ///< required: the TorchScript module to train
    std::string samples;         ///< required: TorchScript sample builder (step -> input, target)
    std::string publish_as = "model";  ///< the model's key on the server
    std::string loss;            ///< TorchScript loss module, for [train] loss = "script"
  } model;
  struct Train {
    ml::TrainOptions options;
    std::int64_t batch_size = 64;
    std::int64_t epochs_per_step = 1;    ///< batches drawn per stream step = this x held / batch
    bool scale_learning_rate = false;    ///< multiply the learning rate by the number of ranks
    double learning_rate_decay = 1.0;    ///< multiplied in every `decay_every` optimiser steps
    std::int64_t decay_every = 0;        ///< 0: constant learning rate
    std::int64_t steps_after_end = 0;    ///< optimiser steps from replay once the stream ends
    double validation_fraction = 0;      ///< share of each step's samples held out (0 to 0.5)
    std::size_t validation_samples = 1024;  ///< held-out samples kept (a reservoir), per rank
    std::int64_t validate_every = 50;    ///< optimiser steps between validation losses
  } train;
  ReplayConfig replay;
  struct Publish {
    std::int64_t every = 100;   ///< optimiser steps between publishes (0: only at the end)
    bool on_improvement = false;  ///< also whenever the validation loss improves (needs
                                  ///< [train] validation_fraction > 0)
    std::int64_t keep_versions = 0;  ///< earlier versions the server keeps for pinning (0-64)
  } publish;
  struct Checkpoint {
    std::string dir;            ///< empty: no checkpoints
    std::int64_t every = 0;     ///< optimiser steps between checkpoints (0: only at the end)
    bool replay = false;        ///< include the replay memory
  } checkpoint;
  struct Metrics {
    std::string csv, json;      ///< files to write (empty: none)
    double print_every_seconds = 5;
  } metrics;
};

/// Parses TOML `text`; `origin` names it in errors (the file name). File paths are kept as
/// written.
TrainConfig parse_train_config(std::string_view text, std::string_view origin);
/// Reads and parses the file; relative paths in it are resolved against its directory.
TrainConfig load_train_config(const std::string& path);

}  // namespace slipstream::train
