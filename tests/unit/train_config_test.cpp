// The trainer's TOML config: defaults, every option read, and errors that name the file, the
// line, the section and the key (missing, wrong type, out of range, unknown key or section).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "train/train_config.hpp"

namespace slipstream::train {
namespace {

constexpr const char* kMinimal = R"(
[stream]
name = "pic"
[model]
file = "model.pt"
samples = "samples.pt"
)";

// The error `text` gives, or "" when it parses.
std::string error_of(const std::string& text) {
  try {
    parse_train_config(text, "t.toml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(TrainConfig, AMinimalConfigGetsEveryDefault) {
  const TrainConfig c = parse_train_config(kMinimal, "t.toml");
  EXPECT_EQ(c.stream.name, "pic");
  EXPECT_EQ(c.stream.group, "trainer");
  EXPECT_EQ(c.stream.strategy, "roundrobin");
  EXPECT_FALSE(c.stream.start_newest);
  EXPECT_FALSE(c.stream.discard);
  EXPECT_EQ(c.model.file, "model.pt");
  EXPECT_EQ(c.model.publish_as, "model");
  EXPECT_EQ(c.train.options.optimizer, ml::OptimizerKind::kAdam);
  EXPECT_EQ(c.train.options.loss, ml::LossKind::kMse);
  EXPECT_DOUBLE_EQ(c.train.options.learning_rate, 1e-3);
  EXPECT_EQ(c.train.batch_size, 64);
  EXPECT_EQ(c.replay.policy, ReplayPolicy::kReservoir);
  EXPECT_EQ(c.replay.max_samples, 10000u);
  EXPECT_EQ(c.publish.every, 100);
  EXPECT_TRUE(c.checkpoint.dir.empty());
}

TEST(TrainConfig, EveryOptionIsRead) {
  const TrainConfig c = parse_train_config(R"(
[stream]
address = "unix:///run/ss.sock"
name = "pic"
group = "learners"
strategy = "hostname_binpacking_slicedataset"
start = "newest"
policy = "discard"
wait_seconds = 30
[model]
file = "m.pt"
samples = "s.pt"
publish_as = "surrogate"
[train]
optimizer = "sgd"
loss = "l1"
learning_rate = 0.05
momentum = 0.9
weight_decay = 1e-4
clip_grad_norm = 1
batch_size = 32
epochs_per_step = 2
scale_learning_rate = true
learning_rate_decay = 0.5
decay_every = 1000
steps_after_end = 200
validation_fraction = 0.1
validation_samples = 256
validate_every = 25
[replay]
policy = "firo"
max_samples = 500
max_bytes = 1048576
min_fill = 100
seed = 7
[publish]
every = 50
on_improvement = true
keep_versions = 3
[checkpoint]
dir = "ckpt"
every = 500
replay = true
[metrics]
csv = "m.csv"
json = "m.json"
print_every_seconds = 2.5
)", "t.toml");
  EXPECT_EQ(c.stream.address, "unix:///run/ss.sock");
  EXPECT_EQ(c.stream.strategy, "hostname_binpacking_slicedataset");
  EXPECT_TRUE(c.stream.start_newest);
  EXPECT_TRUE(c.stream.discard);
  EXPECT_DOUBLE_EQ(c.stream.wait_seconds, 30);
  EXPECT_EQ(c.model.publish_as, "surrogate");
  EXPECT_EQ(c.train.options.optimizer, ml::OptimizerKind::kSgd);
  EXPECT_EQ(c.train.options.loss, ml::LossKind::kL1);
  EXPECT_DOUBLE_EQ(c.train.options.momentum, 0.9);
  EXPECT_DOUBLE_EQ(c.train.options.clip_grad_norm, 1.0);
  EXPECT_EQ(c.train.epochs_per_step, 2);
  EXPECT_TRUE(c.train.scale_learning_rate);
  EXPECT_EQ(c.train.decay_every, 1000);
  EXPECT_EQ(c.train.steps_after_end, 200);
  EXPECT_DOUBLE_EQ(c.train.validation_fraction, 0.1);
  EXPECT_EQ(c.train.validation_samples, 256u);
  EXPECT_EQ(c.train.validate_every, 25);
  EXPECT_EQ(c.replay.policy, ReplayPolicy::kFiro);
  EXPECT_EQ(c.replay.max_bytes, 1048576u);
  EXPECT_EQ(c.replay.seed, 7u);
  EXPECT_TRUE(c.publish.on_improvement);
  EXPECT_EQ(c.publish.keep_versions, 3);
  EXPECT_TRUE(c.checkpoint.replay);
  EXPECT_DOUBLE_EQ(c.metrics.print_every_seconds, 2.5);
}

TEST(TrainConfig, ErrorsNameTheFileTheLineTheSectionAndTheKey) {
  EXPECT_EQ(error_of("[model]\nfile = \"m.pt\"\nsamples = \"s.pt\"\n"),
            "t.toml: [stream] name is required");
  const std::string base = kMinimal;
  EXPECT_EQ(error_of(base + "[train]\nlearning_rate = \"fast\"\n"),
            "t.toml:8: [train] learning_rate must be a number");
  EXPECT_EQ(error_of(base + "[train]\nlearning_rate = -1\n"),
            "t.toml:8: [train] learning_rate must be more than 0, got -1");
  EXPECT_EQ(error_of(base + "[train]\noptimizer = \"lbfgs\"\n"),
            "t.toml:8: [train] optimizer must be one of \"sgd\", \"adam\", \"adamw\", got \"lbfgs\"");
  EXPECT_EQ(error_of(base + "[train]\nbatch_size = 0\n"),
            "t.toml:8: [train] batch_size must be at least 1, got 0");
  EXPECT_NE(error_of(base + "[publish]\non_improvement = true\n")
                .find("[publish] on_improvement needs a validation loss"),
            std::string::npos);
  EXPECT_EQ(error_of(base + "[train]\nvalidation_fraction = 0.6\n"),
            "t.toml:8: [train] validation_fraction must be from 0 to 0.5, got 0.6");
  EXPECT_EQ(error_of(base + "[publish]\nkeep_versions = 65\n"),
            "t.toml:8: [publish] keep_versions must be from 0 to 64, got 65");
  const std::string typo = error_of(base + "[train]\nlearnig_rate = 0.1\n");
  EXPECT_EQ(typo.rfind("t.toml:8: [train] learnig_rate is not an option of [train] (expected ", 0),
            0u) << typo;
  EXPECT_NE(typo.find("learning_rate"), std::string::npos) << typo;
  EXPECT_NE(error_of(base + "[trainer]\nx = 1\n").find("'trainer' is not a section"),
            std::string::npos);
  EXPECT_NE(error_of(base + "[train]\noptimizer = \"adam\"\nmomentum = 0.9\n")
                .find("momentum is an option of optimizer = \"sgd\""),
            std::string::npos);
  EXPECT_NE(error_of(base + "[replay]\nmax_samples = 10\nmin_fill = 11\n").find("never start"),
            std::string::npos);
  EXPECT_NE(error_of(base + "[stream\n").find("cannot parse t.toml"), std::string::npos);
  // A TorchScript loss: "script" and its file go together.
  EXPECT_NE(error_of(base + "[train]\nloss = \"script\"\n").find("needs [model] loss"),
            std::string::npos);
  const std::string with_loss_file = base + "loss = \"loss.pt\"\n";  // in [model]
  EXPECT_NE(error_of(with_loss_file).find("set [train] loss = \"script\""), std::string::npos);
  EXPECT_EQ(error_of(with_loss_file + "[train]\nloss = \"script\"\n"), "");
  EXPECT_EQ(parse_train_config(with_loss_file + "[train]\nloss = \"script\"\n", "t.toml")
                .train.options.loss,
            ml::LossKind::kScript);
}

TEST(TrainConfig, RelativePathsAreResolvedAgainstTheConfigsDirectory) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("train-config-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  {
    std::ofstream out(dir / "run.toml");
    out << kMinimal << "[checkpoint]\ndir = \"ckpt\"\n[metrics]\ncsv = \"/abs/m.csv\"\n";
  }
  const TrainConfig c = load_train_config((dir / "run.toml").string());
  EXPECT_EQ(c.model.file, (dir / "model.pt").string());
  EXPECT_EQ(c.checkpoint.dir, (dir / "ckpt").string());
  EXPECT_EQ(c.metrics.csv, "/abs/m.csv");
  EXPECT_THROW(load_train_config((dir / "missing.toml").string()), ConfigError);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace slipstream::train
