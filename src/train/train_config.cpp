// The trainer's TOML configuration; see train_config.hpp.
#include "train/train_config.hpp"

#include "common/config_section.hpp"
#include "train/input_file.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <vector>

namespace slipstream::train {

TrainConfig parse_train_config(std::string_view text, std::string_view origin) {
  const std::string name(origin);
  const toml::value root = parse_config_text(std::string(text), name);
  static const std::vector<std::string> kSections = {"stream", "model", "train", "replay",
                                                     "publish", "checkpoint", "metrics"};
  for (const auto& [key, value] : root.as_table()) {
    if (std::find(kSections.begin(), kSections.end(), key) == kSections.end() || !value.is_table()) {
      throw ConfigError(name + ":" + std::to_string(value.location().line()) + ": '" + key +
                        "' is not a section of a trainer config (expected [stream], [model], "
                        "[train], [replay], [publish], [checkpoint] or [metrics])");
    }
  }
  auto section = [&](const char* key) {
    return ConfigSection(root.contains(key) ? &root.at(key) : nullptr, key, name);
  };
  TrainConfig c;

  ConfigSection stream = section("stream");
  stream.string("address", c.stream.address);
  stream.required("name", c.stream.name);
  stream.string("group", c.stream.group);
  stream.string("strategy", c.stream.strategy);
  stream.choice<bool>("start", c.stream.start_newest, {{"oldest", false}, {"newest", true}});
  stream.choice<bool>("policy", c.stream.discard, {{"block", false}, {"discard", true}});
  stream.number("wait_seconds", c.stream.wait_seconds, [](double v) { return v > 0; },
                "more than 0");
  stream.finish();

  ConfigSection model = section("model");
  model.required("file", c.model.file);
  model.required("samples", c.model.samples);
  model.string("publish_as", c.model.publish_as);
  model.string("loss", c.model.loss);
  model.finish();

  ConfigSection train = section("train");
  ml::TrainOptions& o = c.train.options;
  train.choice<ml::OptimizerKind>("optimizer", o.optimizer,
                                  {{"sgd", ml::OptimizerKind::kSgd},
                                   {"adam", ml::OptimizerKind::kAdam},
                                   {"adamw", ml::OptimizerKind::kAdamW}});
  train.choice<ml::LossKind>("loss", o.loss, {{"mse", ml::LossKind::kMse}, {"l1", ml::LossKind::kL1},
                                             {"script", ml::LossKind::kScript}});
  train.number("learning_rate", o.learning_rate, [](double v) { return v > 0; }, "more than 0");
  train.number("momentum", o.momentum, [](double v) { return v >= 0; }, "0 or more");
  train.number("weight_decay", o.weight_decay, [](double v) { return v >= 0; }, "0 or more");
  train.number("clip_grad_norm", o.clip_grad_norm, [](double v) { return v >= 0; },
               "0 (off) or more");
  train.integer("batch_size", c.train.batch_size, 1);
  train.integer("epochs_per_step", c.train.epochs_per_step, 1);
  train.boolean("scale_learning_rate", c.train.scale_learning_rate);
  train.number("learning_rate_decay", c.train.learning_rate_decay,
               [](double v) { return v > 0 && v <= 1; }, "in (0, 1]");
  train.integer("decay_every", c.train.decay_every, 0);
  train.integer("steps_after_end", c.train.steps_after_end, 0);
  train.number("validation_fraction", c.train.validation_fraction,
               [](double v) { return v >= 0 && v <= 0.5; }, "from 0 to 0.5");
  train.integer("validation_samples", c.train.validation_samples, 1);
  train.integer("validate_every", c.train.validate_every, 1);
  train.finish();
  if (o.loss == ml::LossKind::kScript && c.model.loss.empty()) {
    throw ConfigError(name + ": [train] loss = \"script\" needs [model] loss, the file of the "
                      "TorchScript loss module (forward(output, target) -> loss)");
  }
  if (o.loss != ml::LossKind::kScript && !c.model.loss.empty()) {
    throw ConfigError(name + ": [model] loss names a TorchScript loss module: set [train] loss = "
                      "\"script\" to use it");
  }
  if (o.momentum > 0 && o.optimizer != ml::OptimizerKind::kSgd) {
    throw ConfigError(name + ": [train] momentum is an option of optimizer = \"sgd\" (adam and "
                      "adamw keep their own moments)");
  }

  ConfigSection replay = section("replay");
  replay.choice<ReplayPolicy>("policy", c.replay.policy,
                              {{"fifo", ReplayPolicy::kFifo},
                               {"firo", ReplayPolicy::kFiro},
                               {"reservoir", ReplayPolicy::kReservoir}});
  replay.integer("max_samples", c.replay.max_samples, 1);
  replay.integer("max_bytes", c.replay.max_bytes, 0);
  replay.integer("min_fill", c.replay.min_fill, 0);
  std::int64_t seed = 0;
  replay.integer("seed", seed, 0);
  c.replay.seed = static_cast<std::uint64_t>(seed);
  replay.finish();
  if (c.replay.min_fill > c.replay.max_samples) {
    throw ConfigError(name + ": [replay] min_fill (" + std::to_string(c.replay.min_fill) +
                      ") is more than max_samples (" + std::to_string(c.replay.max_samples) +
                      "): training would never start");
  }

  ConfigSection publish = section("publish");
  publish.integer("every", c.publish.every, 0);
  publish.boolean("on_improvement", c.publish.on_improvement);
  publish.integer("keep_versions", c.publish.keep_versions, 0, 64);
  publish.finish();
  if (c.publish.on_improvement && c.train.validation_fraction <= 0) {
    throw ConfigError(name + ": [publish] on_improvement needs a validation loss: set [train] "
                      "validation_fraction (the share of each step's samples held out)");
  }

  ConfigSection checkpoint = section("checkpoint");
  checkpoint.string("dir", c.checkpoint.dir);
  checkpoint.integer("every", c.checkpoint.every, 0);
  checkpoint.boolean("replay", c.checkpoint.replay);
  checkpoint.finish();

  ConfigSection metrics = section("metrics");
  metrics.string("csv", c.metrics.csv);
  metrics.string("json", c.metrics.json);
  metrics.number("print_every_seconds", c.metrics.print_every_seconds,
                 [](double v) { return v >= 0; }, "0 (never) or more");
  metrics.finish();
  return c;
}

TrainConfig load_train_config(const std::string& path) {
  std::string text;
  try {
    text = read_input_file(path, "trainer config", kMaxConfigBytes);
  } catch (const InputFileError& e) {
    throw ConfigError(e.what());
  }
  TrainConfig c = parse_train_config(text, path);
  const std::filesystem::path base = std::filesystem::path(path).parent_path();
  for (std::string* file : {&c.model.file, &c.model.samples, &c.model.loss, &c.checkpoint.dir,
                            &c.metrics.csv, &c.metrics.json}) {
    if (!file->empty() && std::filesystem::path(*file).is_relative()) {
      *file = (base / *file).lexically_normal().string();
    }
  }
  return c;
}

}  // namespace slipstream::train
