// Tests for the key positions of RedisAI run commands (src/common/command_keys.hpp), which cluster
// routing uses on both sides.
#include "common/command_keys.hpp"

#include <gtest/gtest.h>

#include <string_view>
#include <vector>

namespace slipstream {
namespace {

std::vector<std::size_t> keys(std::vector<std::string_view> args) {
  return redisai_run_key_positions(args);
}

using Positions = std::vector<std::size_t>;

TEST(RedisAiRunKeys, ModelExecuteInputsAndOutputsNotTheModel) {
  EXPECT_EQ(keys({"AI.MODELEXECUTE", "m", "INPUTS", "2", "a", "b", "OUTPUTS", "1", "c"}),
            (Positions{4, 5, 8}));
  EXPECT_EQ(
      keys({"ai.modelexecute", "m", "INPUTS", "1", "a", "OUTPUTS", "1", "c", "TIMEOUT", "100"}),
      (Positions{4, 7}));
}

TEST(RedisAiRunKeys, ModelRunUncounted) {
  EXPECT_EQ(keys({"AI.MODELRUN", "m", "TIMEOUT", "5", "INPUTS", "a", "b", "OUTPUTS", "c"}),
            (Positions{5, 6, 8}));
}

TEST(RedisAiRunKeys, ScriptExecuteKeysInputsOutputsNotArgs) {
  EXPECT_EQ(keys({"AI.SCRIPTEXECUTE", "s", "fn", "KEYS", "1", "k", "INPUTS", "1", "a", "ARGS", "2",
                  "x", "y", "OUTPUTS", "1", "c"}),
            (Positions{5, 8, 15}));
  EXPECT_EQ(keys({"AI.SCRIPTRUN", "s", "fn", "INPUTS", "a", "$", "OUTPUTS", "c"}),
            (Positions{4, 7}));
}

TEST(RedisAiRunKeys, MalformedAndOtherCommands) {
  EXPECT_EQ(keys({"AI.MODELEXECUTE", "m", "INPUTS", "x", "a"}), Positions{});
  EXPECT_EQ(keys({"AI.MODELEXECUTE", "m", "INPUTS", "3", "a"}), (Positions{4}));
  EXPECT_EQ(keys({"AI.MODELSTORE", "m", "TORCH", "CPU", "BLOB", "x"}), Positions{});
  EXPECT_EQ(keys({"GET", "k"}), Positions{});
  EXPECT_EQ(keys({}), Positions{});
}

}  // namespace
}  // namespace slipstream
