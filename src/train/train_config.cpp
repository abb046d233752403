// The trainer's TOML configuration; see train_config.hpp.
#include "train/train_config.hpp"

#include <toml.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <vector>

namespace slipstream::train {
namespace {

// One [section] of the file: typed reads with defaults, and a check that nothing else is there.
class Section {
 public:
  Section(const toml::value* table, std::string name, std::string origin)
      : table_(table), name_(std::move(name)), origin_(std::move(origin)) {}

  void string(const char* key, std::string& out) {
    if (const toml::value* v = find(key)) {
      if (!v->is_string()) fail(*v, key, "must be a string");
      out = v->as_string().str;
    }
  }
  void boolean(const char* key, bool& out) {
    if (const toml::value* v = find(key)) {
      if (!v->is_boolean()) fail(*v, key, "must be true or false");
      out = v->as_boolean();
    }
  }
  // An integer of at least `minimum` (and at most `maximum`).
  void integer(const char* key, std::int64_t& out, std::int64_t minimum,
               std::int64_t maximum = std::numeric_limits<std::int64_t>::max()) {
    if (const toml::value* v = find(key)) {
      if (!v->is_integer()) fail(*v, key, "must be an integer");
      if (v->as_integer() < minimum || v->as_integer() > maximum) {
        fail(*v, key,
             "must be " +
                 (maximum == std::numeric_limits<std::int64_t>::max()
                      ? "at least " + std::to_string(minimum)
                      : "from " + std::to_string(minimum) + " to " + std::to_string(maximum)) +
                 ", got " + std::to_string(v->as_integer()));
      }
      out = v->as_integer();
    }
  }
  void size(const char* key, std::size_t& out, std::int64_t minimum) {
    std::int64_t value = static_cast<std::int64_t>(out);
    integer(key, value, minimum);
    out = static_cast<std::size_t>(value);
  }
  // A finite number (integers accepted) that `valid` accepts; `expected` says what it must be.
  void number(const char* key, double& out, const std::function<bool(double)>& valid,
              const char* expected) {
    if (const toml::value* v = find(key)) {
      double value = 0;
      if (v->is_floating()) {
        value = v->as_floating();
      } else if (v->is_integer()) {
        value = static_cast<double>(v->as_integer());
      } else {
        fail(*v, key, "must be a number");
      }
      if (!std::isfinite(value) || !valid(value)) {
        std::ostringstream text;
        text << "must be " << expected << ", got " << value;
        fail(*v, key, text.str());
      }
      out = value;
    }
  }
  // One of `choices` (lower case); returns the index.
  template <typename Out>
  void choice(const char* key, Out& out, const std::vector<std::pair<std::string, Out>>& choices) {
    if (const toml::value* v = find(key)) {
      if (!v->is_string()) fail(*v, key, "must be a string");
      std::string expected;
      for (const auto& [name, value] : choices) {
        if (name == v->as_string().str) {
          out = value;
          return;
        }
        expected += (expected.empty() ? "" : ", ") + ("\"" + name + "\"");
      }
      fail(*v, key, "must be one of " + expected + ", got \"" + v->as_string().str + "\"");
    }
  }
  // A string that must be there and not empty.
  void required(const char* key, std::string& out) {
    string(key, out);
    if (out.empty()) throw ConfigError(origin_ + ": [" + name_ + "] " + key + " is required");
  }
  // Every key of the section must have been read: anything else is a typo or an option this
  // trainer does not have.
  void finish() const {
    if (table_ == nullptr) return;
    for (const auto& [key, value] : table_->as_table()) {
      if (read_.count(key) == 0) {
        std::string known;
        for (const auto& k : read_) known += (known.empty() ? "" : ", ") + k;
        fail(value, key.c_str(),
             "is not an option of [" + name_ + "]" + (known.empty() ? "" : " (expected " + known + ")"));
      }
    }
  }

  std::set<std::string> read_;  // keys asked for (present or not)

 private:
  const toml::value* find(const char* key) {
    read_.insert(key);
    if (table_ == nullptr || !table_->contains(key)) return nullptr;
    return &table_->at(key);
  }
  [[noreturn]] void fail(const toml::value& v, const char* key, const std::string& what) const {
    const auto line = v.location().line();
    throw ConfigError(origin_ + ":" + std::to_string(line) + ": [" + name_ + "] " + key + " " + what);
  }

  const toml::value* table_;
  std::string name_;
  std::string origin_;
};

}  // namespace

TrainConfig parse_train_config(std::string_view text, std::string_view origin) {
  const std::string name(origin);
  toml::value root;
  try {
    std::istringstream in{std::string(text)};
    root = toml::parse(in, name);
  } catch (const std::exception& e) {
    throw ConfigError(std::string("cannot parse ") + name + ": " + e.what());
  }
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
    return Section(root.contains(key) ? &root.at(key) : nullptr, key, name);
  };
  TrainConfig c;

  Section stream = section("stream");
  stream.string("address", c.stream.address);
  stream.required("name", c.stream.name);
  stream.string("group", c.stream.group);
  stream.string("strategy", c.stream.strategy);
  stream.choice<bool>("start", c.stream.start_newest, {{"oldest", false}, {"newest", true}});
  stream.choice<bool>("policy", c.stream.discard, {{"block", false}, {"discard", true}});
  stream.number("wait_seconds", c.stream.wait_seconds, [](double v) { return v > 0; },
                "more than 0");
  stream.finish();

  Section model = section("model");
  model.required("file", c.model.file);
  model.required("samples", c.model.samples);
  model.string("publish_as", c.model.publish_as);
  model.string("loss", c.model.loss);
  model.finish();

  Section train = section("train");
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
  train.size("validation_samples", c.train.validation_samples, 1);
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

  Section replay = section("replay");
  replay.choice<ReplayPolicy>("policy", c.replay.policy,
                              {{"fifo", ReplayPolicy::kFifo},
                               {"firo", ReplayPolicy::kFiro},
                               {"reservoir", ReplayPolicy::kReservoir}});
  replay.size("max_samples", c.replay.max_samples, 1);
  replay.size("max_bytes", c.replay.max_bytes, 0);
  replay.size("min_fill", c.replay.min_fill, 0);
  std::int64_t seed = 0;
  replay.integer("seed", seed, 0);
  c.replay.seed = static_cast<std::uint64_t>(seed);
  replay.finish();
  if (c.replay.min_fill > c.replay.max_samples) {
    throw ConfigError(name + ": [replay] min_fill (" + std::to_string(c.replay.min_fill) +
                      ") is more than max_samples (" + std::to_string(c.replay.max_samples) +
                      "): training would never start");
  }

  Section publish = section("publish");
  publish.integer("every", c.publish.every, 0);
  publish.boolean("on_improvement", c.publish.on_improvement);
  publish.integer("keep_versions", c.publish.keep_versions, 0, 64);
  publish.finish();
  if (c.publish.on_improvement && c.train.validation_fraction <= 0) {
    throw ConfigError(name + ": [publish] on_improvement needs a validation loss: set [train] "
                      "validation_fraction (the share of each step's samples held out)");
  }

  Section checkpoint = section("checkpoint");
  checkpoint.string("dir", c.checkpoint.dir);
  checkpoint.integer("every", c.checkpoint.every, 0);
  checkpoint.boolean("replay", c.checkpoint.replay);
  checkpoint.finish();

  Section metrics = section("metrics");
  metrics.string("csv", c.metrics.csv);
  metrics.string("json", c.metrics.json);
  metrics.number("print_every_seconds", c.metrics.print_every_seconds,
                 [](double v) { return v >= 0; }, "0 (never) or more");
  metrics.finish();
  return c;
}

TrainConfig load_train_config(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError("cannot read trainer config " + path);
  std::ostringstream text;
  text << in.rdbuf();
  TrainConfig c = parse_train_config(text.str(), path);
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
