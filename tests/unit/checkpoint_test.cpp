// Checkpoint files: round trips, and a torn, corrupted or foreign file is an error that names the
// file, never a half-read checkpoint; a missing one is "no checkpoint".
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "train/checkpoint.hpp"

namespace slipstream::train {
namespace {

namespace fs = std::filesystem;

class CheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("slipstream-ckpt-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static TrainerCheckpoint sample() {
    TrainerCheckpoint c;
    c.optimizer_steps = 120;
    c.published_version = 7;
    c.stream_step = 41;
    c.samples_seen = 5000;
    c.samples_trained = 7680;
    c.model = std::string("model\0bytes", 11);
    c.optimizer = "optimiser state";
    return c;
  }
  std::string read(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  void write(const fs::path& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  }
  std::string error_reading() {
    try {
      read_trainer_checkpoint(dir_);
    } catch (const CheckpointError& e) {
      return e.what();
    }
    return "no error";
  }

  fs::path dir_;
};

TEST_F(CheckpointTest, TrainerCheckpointRoundTripsAndReplacesTheLastOne) {
  EXPECT_FALSE(read_trainer_checkpoint(dir_).has_value());  // none yet (no directory either)
  TrainerCheckpoint c = sample();
  write_checkpoint(dir_, c);
  c.optimizer_steps = 140;
  c.published_version = 8;
  write_checkpoint(dir_, c);
  auto back = read_trainer_checkpoint(dir_);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->optimizer_steps, 140);
  EXPECT_EQ(back->published_version, 8);
  EXPECT_EQ(back->stream_step, 41);
  EXPECT_EQ(back->samples_seen, 5000);
  EXPECT_EQ(back->samples_trained, 7680);
  EXPECT_EQ(back->model, c.model);
  EXPECT_EQ(back->optimizer, c.optimizer);
  // Only the checkpoint is left: no temporary files.
  int files = 0;
  for (const auto& entry : fs::directory_iterator(dir_)) files += entry.is_regular_file();
  EXPECT_EQ(files, 1);
}

TEST_F(CheckpointTest, ReplayCheckpointRoundTripsPerRank) {
  ReplayCheckpoint r;
  r.optimizer_steps = 30;
  r.input_dtype = DType::kFloat32;
  r.input_shape = {2};
  r.target_dtype = DType::kFloat64;
  r.target_shape = {};
  r.count = 3;
  r.inputs = std::string(3 * 8, 'i');
  r.targets = std::string(3 * 8, 't');
  write_checkpoint(dir_, 1, r);
  EXPECT_FALSE(read_replay_checkpoint(dir_, 0).has_value());
  auto back = read_replay_checkpoint(dir_, 1);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->optimizer_steps, 30);
  EXPECT_EQ(back->input_shape, (std::vector<std::int64_t>{2}));
  EXPECT_EQ(back->target_dtype, DType::kFloat64);
  EXPECT_EQ(back->count, 3u);
  EXPECT_EQ(back->inputs, r.inputs);
  EXPECT_EQ(back->targets, r.targets);
  // Rows that do not match the shapes are refused.
  r.targets.pop_back();
  write_checkpoint(dir_, 2, r);
  EXPECT_THROW(read_replay_checkpoint(dir_, 2), CheckpointError);
}

TEST_F(CheckpointTest, TornCorruptedAndForeignFilesAreErrorsNamingTheFile) {
  write_checkpoint(dir_, sample());
  const fs::path path = trainer_checkpoint_path(dir_);
  const std::string whole = read(path);
  write(path, whole.substr(0, whole.size() / 2));  // torn
  EXPECT_NE(error_reading().find("checksum"), std::string::npos);
  EXPECT_NE(error_reading().find(path.string()), std::string::npos);
  std::string flipped = whole;
  flipped[whole.size() / 2] ^= 0x01;
  write(path, flipped);
  EXPECT_NE(error_reading().find("checksum"), std::string::npos);
  write(path, "not a checkpoint at all, just some text that is long enough");
  EXPECT_NE(error_reading().find("not a checkpoint"), std::string::npos);
  write(path, "");
  EXPECT_NE(error_reading().find("not a checkpoint"), std::string::npos);
  write(path, whole);
  EXPECT_EQ(read_trainer_checkpoint(dir_)->optimizer_steps, 120);
}

TEST_F(CheckpointTest, AnUnwritableDirectoryIsAnError) {
  fs::create_directories(dir_.parent_path());
  write(dir_, "a file where the directory should be");
  EXPECT_THROW(write_checkpoint(dir_ / "sub", sample()), CheckpointError);
  fs::remove(dir_);
}

}  // namespace
}  // namespace slipstream::train
