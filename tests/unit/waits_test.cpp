// Tests for the blocking-wait registry (src/server/waits.hpp): completion on notify, timeout and
// cancel, and exactly-once completion when notifiers and the timer race.
#include "server/store/waits.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace slipstream::server {
namespace {

// `prefix` followed by `n` in decimal. (Spelled out because GCC 12 warns falsely, -Wrestrict
// PR 105329, on "literal" + std::to_string(n).)
std::string numbered(std::string_view prefix, long long n) {
  std::string text(prefix);
  text += std::to_string(n);
  return text;
}

// A condition guarded by a mutex, as a key in the keyspace is guarded by its shard lock.
class Condition {
 public:
  void set(bool value) {
    std::lock_guard lock(mutex_);
    value_ = value;
  }
  bool get() const {
    std::lock_guard lock(mutex_);
    return value_;
  }

 private:
  mutable std::mutex mutex_;
  bool value_ = false;
};

// Records how a wait completed.
struct Outcome {
  std::atomic<int> completions{0};
  std::atomic<int> timeouts{0};
};

std::shared_ptr<Wait> make_wait(std::vector<std::string> keys, const Condition& condition,
                                Outcome& outcome) {
  auto wait = std::make_shared<Wait>();
  wait->keys = std::move(keys);
  wait->ready = [&condition] { return condition.get(); };
  wait->complete = [&outcome](bool timed_out) {
    outcome.completions.fetch_add(1);
    if (timed_out) outcome.timeouts.fetch_add(1);
  };
  return wait;
}

TEST(Waits, ReadyAtAddCompletesImmediatelyOnce) {
  WaitRegistry registry;
  Condition condition;
  condition.set(true);
  Outcome outcome;
  auto wait = make_wait({"k"}, condition, outcome);
  registry.add(wait);
  EXPECT_EQ(outcome.completions.load(), 1);
  EXPECT_EQ(outcome.timeouts.load(), 0);
  EXPECT_EQ(registry.parked(), 0u);
  EXPECT_TRUE(wait->finished.load());
  // Nothing afterwards completes it again.
  registry.notify("k");
  registry.expire(wait);
  registry.cancel(wait);
  EXPECT_EQ(outcome.completions.load(), 1);
  EXPECT_EQ(outcome.timeouts.load(), 0);
}

TEST(Waits, NotifyOnUnrelatedKeyDoesNothing) {
  WaitRegistry registry;
  Condition condition;
  Outcome outcome;
  auto wait = make_wait({"k"}, condition, outcome);
  registry.add(wait);
  EXPECT_EQ(registry.parked(), 1u);
  condition.set(true);
  registry.notify("other");
  registry.notify("k2");
  registry.notify("");
  EXPECT_EQ(outcome.completions.load(), 0);
  EXPECT_EQ(registry.parked(), 1u);
  EXPECT_FALSE(wait->finished.load());
}

TEST(Waits, NotifyChecksReadyAndCompletes) {
  WaitRegistry registry;
  Condition condition;
  Outcome outcome;
  auto wait = make_wait({"a", "b"}, condition, outcome);
  registry.add(wait);
  registry.notify("b");  // not ready yet
  EXPECT_EQ(outcome.completions.load(), 0);
  EXPECT_EQ(registry.parked(), 1u);
  condition.set(true);
  registry.notify("b");
  EXPECT_EQ(outcome.completions.load(), 1);
  EXPECT_EQ(outcome.timeouts.load(), 0);
  EXPECT_EQ(registry.parked(), 0u);
  registry.notify("a");
  registry.notify("b");
  registry.expire(wait);
  EXPECT_EQ(outcome.completions.load(), 1);
}

TEST(Waits, ExpireCompletesWithTimeout) {
  WaitRegistry registry;
  Condition condition;
  Outcome outcome;
  auto wait = make_wait({"k"}, condition, outcome);
  registry.add(wait);
  registry.expire(wait);
  EXPECT_EQ(outcome.completions.load(), 1);
  EXPECT_EQ(outcome.timeouts.load(), 1);
  EXPECT_EQ(registry.parked(), 0u);
  condition.set(true);
  registry.notify("k");
  registry.expire(wait);
  EXPECT_EQ(outcome.completions.load(), 1);
}

TEST(Waits, CancelNeverCompletes) {
  WaitRegistry registry;
  Condition condition;
  Outcome outcome;
  auto wait = make_wait({"k"}, condition, outcome);
  registry.add(wait);
  registry.cancel(wait);
  EXPECT_EQ(registry.parked(), 0u);
  condition.set(true);
  registry.notify("k");
  registry.expire(wait);
  registry.cancel(wait);
  EXPECT_EQ(outcome.completions.load(), 0);
}

TEST(Waits, ManyWaitsOnOneKeyAndDuplicateKeys) {
  WaitRegistry registry;
  Condition ready_one, ready_two;
  Outcome one, two, three;
  auto first = make_wait({"k"}, ready_one, one);
  auto second = make_wait({"k", "k", "j"}, ready_two, two);  // a key named twice
  auto third = make_wait({"k"}, ready_two, three);
  registry.add(first);
  registry.add(second);
  registry.add(third);
  EXPECT_EQ(registry.parked(), 3u);
  ready_two.set(true);
  registry.notify("k");
  EXPECT_EQ(one.completions.load(), 0);
  EXPECT_EQ(two.completions.load(), 1);
  EXPECT_EQ(three.completions.load(), 1);
  EXPECT_EQ(registry.parked(), 1u);
  ready_one.set(true);
  registry.notify("j");  // the finished wait's other key no longer reaches anything
  EXPECT_EQ(one.completions.load(), 0);
  registry.notify("k");
  EXPECT_EQ(one.completions.load(), 1);
  EXPECT_EQ(two.completions.load(), 1);
  EXPECT_EQ(registry.parked(), 0u);
}

TEST(Waits, WriteRacingWithAddIsNeverMissed) {
  for (int round = 0; round < 200; ++round) {
    WaitRegistry registry;
    Condition condition;
    Outcome outcome;
    auto wait = make_wait({"k"}, condition, outcome);
    std::thread writer([&] {
      condition.set(true);
      registry.notify("k");
    });
    registry.add(wait);
    writer.join();
    ASSERT_EQ(outcome.completions.load(), 1) << "round " << round;
    EXPECT_EQ(outcome.timeouts.load(), 0);
    EXPECT_EQ(registry.parked(), 0u);
  }
}

TEST(Waits, CompletesExactlyOnceUnderNotifyExpireRace) {
  constexpr int kWaits = 64;
  constexpr int kNotifiers = 3;
  for (int round = 0; round < 20; ++round) {
    WaitRegistry registry;
    Condition condition;
    std::vector<Outcome> outcomes(kWaits);
    std::vector<std::shared_ptr<Wait>> waits;
    for (int i = 0; i < kWaits; ++i) {
      waits.push_back(make_wait({numbered("k", i % 4), "all"}, condition, outcomes[i]));
      registry.add(waits.back());
    }
    ASSERT_EQ(registry.parked(), static_cast<std::size_t>(kWaits));
    std::atomic<bool> go{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < kNotifiers; ++t) {
      threads.emplace_back([&, t] {
        while (!go.load()) std::this_thread::yield();
        for (int i = 0; i < kWaits; ++i) registry.notify(numbered("k", (i + t) % 4));
        registry.notify("all");
      });
    }
    threads.emplace_back([&] {
      while (!go.load()) std::this_thread::yield();
      for (int i = kWaits - 1; i >= 0; --i) registry.expire(waits[i]);
    });
    condition.set(true);
    go.store(true);
    for (auto& thread : threads) thread.join();
    EXPECT_EQ(registry.parked(), 0u);
    for (int i = 0; i < kWaits; ++i) {
      EXPECT_EQ(outcomes[i].completions.load(), 1) << "wait " << i << ", round " << round;
    }
  }
}

}  // namespace
}  // namespace slipstream::server
