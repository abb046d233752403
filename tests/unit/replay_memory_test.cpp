// Replay memories: what each policy keeps, the bounds, determinism, statistics, and a statistical
// test that reservoir sampling keeps every sample seen with equal probability (and that the same
// test rejects FIFO, so it can fail).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>
#include <vector>

#include "slipstream/replay_memory.hpp"

namespace slipstream::train {
namespace {

ReplayConfig config(ReplayPolicy policy, std::size_t max_samples, std::uint64_t seed = 1) {
  ReplayConfig c;
  c.policy = policy;
  c.max_samples = max_samples;
  c.seed = seed;
  return c;
}

std::set<int> held(const ReplayMemory<int>& memory) {
  std::set<int> out;
  memory.for_each([&](int v) { out.insert(v); });
  return out;
}

// Chi-square statistic of `counts` against a uniform expectation.
double chi_square(const std::vector<double>& counts) {
  double total = 0;
  for (double c : counts) total += c;
  const double expected = total / static_cast<double>(counts.size());
  double chi = 0;
  for (double c : counts) chi += (c - expected) * (c - expected) / expected;
  return chi;
}

// How often each of `n` samples is still held after all were offered, over `trials` memories of
// `capacity` with different seeds.
std::vector<double> retention(ReplayPolicy policy, int n, std::size_t capacity, int trials) {
  std::vector<double> kept(static_cast<std::size_t>(n), 0.0);
  for (int t = 0; t < trials; ++t) {
    ReplayMemory<int> memory(config(policy, capacity, static_cast<std::uint64_t>(t)));
    for (int i = 0; i < n; ++i) memory.add(i, 8);
    memory.for_each([&](int v) { kept[static_cast<std::size_t>(v)] += 1; });
  }
  return kept;
}

TEST(ReplayMemory, PoliciesParseByName) {
  EXPECT_EQ(parse_replay_policy("FIFO"), ReplayPolicy::kFifo);
  EXPECT_EQ(parse_replay_policy("firo"), ReplayPolicy::kFiro);
  EXPECT_EQ(parse_replay_policy("Reservoir"), ReplayPolicy::kReservoir);
  EXPECT_FALSE(parse_replay_policy("lru"));
  EXPECT_EQ(replay_policy_name(ReplayPolicy::kFiro), "firo");
}

TEST(ReplayMemory, BadConfigurationsAreRefusedWithTheReason) {
  EXPECT_THROW(ReplayIndex(config(ReplayPolicy::kFifo, 0)), std::invalid_argument);
  ReplayConfig c = config(ReplayPolicy::kFifo, 4);
  c.min_fill = 5;
  try {
    ReplayIndex index(c);
    FAIL() << "min_fill above max_samples was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("never be ready"), std::string::npos) << e.what();
  }
}

TEST(ReplayMemory, FifoKeepsTheMostRecentWindow) {
  ReplayMemory<int> memory(config(ReplayPolicy::kFifo, 5));
  for (int i = 0; i < 12; ++i) EXPECT_TRUE(memory.add(i, 8));
  EXPECT_EQ(held(memory), (std::set<int>{7, 8, 9, 10, 11}));
  const ReplayStats stats = memory.stats();
  EXPECT_EQ(stats.held, 5u);
  EXPECT_EQ(stats.bytes, 40u);
  EXPECT_EQ(stats.seen, 12u);
  EXPECT_EQ(stats.admitted, 12u);
  EXPECT_EQ(stats.evicted, 7u);
}

TEST(ReplayMemory, FiroAlwaysKeepsTheNewestAndEvictsAtRandom) {
  ReplayMemory<int> memory(config(ReplayPolicy::kFiro, 5));
  for (int i = 0; i < 100; ++i) {
    EXPECT_TRUE(memory.add(i, 8));
    const std::set<int> now = held(memory);
    EXPECT_TRUE(now.count(i)) << i;
    EXPECT_LE(now.size(), 5u);
  }
  // Random eviction: some old samples survive, unlike FIFO's window.
  const std::set<int> kept = held(memory);
  EXPECT_LT(*kept.begin(), 95);
  EXPECT_EQ(memory.stats().evicted, 95u);
}

TEST(ReplayMemory, ReservoirKeepsEverySampleSeenWithEqualProbability) {
  constexpr int kSamples = 200, kTrials = 4000;
  constexpr std::size_t kCapacity = 20;
  // Expected count per sample: trials * capacity / samples = 400. Chi-square with 199 degrees
  // of freedom has mean 199 and deviation 20; 6 deviations above is far beyond chance.
  const double threshold = 199 + 6 * std::sqrt(2.0 * 199);
  const std::vector<double> reservoir =
      retention(ReplayPolicy::kReservoir, kSamples, kCapacity, kTrials);
  EXPECT_LT(chi_square(reservoir), threshold);
  for (double kept : reservoir) EXPECT_NEAR(kept, 400, 120);
  // The same test rejects a memory that is not uniform.
  EXPECT_GT(chi_square(retention(ReplayPolicy::kFifo, kSamples, kCapacity, 50)), threshold);
}

TEST(ReplayMemory, DrawsAreUniformOverWhatIsHeldAndCounted) {
  ReplayMemory<int> memory(config(ReplayPolicy::kReservoir, 10, 7));
  for (int i = 0; i < 10; ++i) memory.add(i, 8);
  std::vector<double> counts(10, 0.0);
  constexpr int kDraws = 100000;
  for (const int* sample : memory.draw(kDraws)) counts[static_cast<std::size_t>(*sample)] += 1;
  EXPECT_LT(chi_square(counts), 9 + 6 * std::sqrt(18.0));  // 9 degrees of freedom
  const ReplayStats stats = memory.stats();
  EXPECT_EQ(stats.draws, static_cast<std::uint64_t>(kDraws));
  EXPECT_DOUBLE_EQ(stats.mean_uses, kDraws / 10.0);
  EXPECT_GE(stats.max_uses, static_cast<std::uint64_t>(kDraws / 10));
  // Every sample arrived before the draws; on average 4.5 samples came after the one drawn.
  EXPECT_NEAR(stats.mean_draw_age, 4.5, 0.1);
}

TEST(ReplayMemory, ByteBoundHoldsForEveryPolicyAndOversizedSamplesAreRefused) {
  for (ReplayPolicy policy : {ReplayPolicy::kFifo, ReplayPolicy::kFiro, ReplayPolicy::kReservoir}) {
    ReplayConfig c = config(policy, 100, 3);
    c.max_bytes = 500;
    ReplayMemory<int> memory(c);
    std::uint64_t size_seed = 12345;
    for (int i = 0; i < 1000; ++i) {
      size_seed = size_seed * 6364136223846793005ULL + 1442695040888963407ULL;
      memory.add(i, 1 + (size_seed >> 33) % 100);
      ASSERT_LE(memory.stats().bytes, 500u) << replay_policy_name(policy) << " after " << i;
      ASSERT_LE(memory.size(), 100u);
    }
    EXPECT_FALSE(memory.add(-1, 501)) << replay_policy_name(policy);
    EXPECT_FALSE(held(memory).count(-1));
    EXPECT_GE(memory.stats().refused, 1u);
  }
}

TEST(ReplayMemory, TheSameSeedGivesTheSameMemoryAndTheSameDraws) {
  auto run = [](std::uint64_t seed) {
    ReplayMemory<int> memory(config(ReplayPolicy::kReservoir, 16, seed));
    for (int i = 0; i < 500; ++i) memory.add(i, 8);
    std::vector<int> out;
    memory.for_each([&](int v) { out.push_back(v); });
    for (const int* sample : memory.draw(50)) out.push_back(*sample);
    return out;
  };
  EXPECT_EQ(run(42), run(42));
  EXPECT_NE(run(42), run(43));
}

TEST(ReplayMemory, ReadyOnceTheMinimumFillIsHeld) {
  ReplayConfig c = config(ReplayPolicy::kFiro, 8);
  c.min_fill = 3;
  ReplayMemory<int> memory(c);
  EXPECT_FALSE(memory.ready());
  EXPECT_TRUE(memory.draw(4).empty());
  memory.add(1, 8);
  memory.add(2, 8);
  EXPECT_FALSE(memory.ready());
  memory.add(3, 8);
  EXPECT_TRUE(memory.ready());
  EXPECT_EQ(memory.draw(4).size(), 4u);
}

}  // namespace
}  // namespace slipstream::train
