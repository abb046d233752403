// The stream queue state machine: visibility of whole steps, the queue limit counted from
// begin-step, block and discard groups, late groups, writer and reader faults, end of stream,
// step distribution (all, round robin, on demand) and the precious first step.
#include "stream/step_queue.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

namespace slipstream::stream {
namespace {

using Kind = Delivery::Kind;

GroupConfig block_group(std::uint32_t size, StartAt start = StartAt::kOldest) {
  return GroupConfig{size, QueuePolicy::kBlock, start};
}
GroupConfig discard_group(std::uint32_t size) {
  return GroupConfig{size, QueuePolicy::kDiscard, StartAt::kOldest};
}
GroupConfig distributed_group(std::uint32_t size, StepDistribution distribution,
                              QueuePolicy policy = QueuePolicy::kBlock,
                              StartAt start = StartAt::kOldest) {
  return GroupConfig{size, policy, start, distribution};
}
StreamConfig precious_stream(std::uint32_t writers, std::size_t limit) {
  StreamConfig config{writers, limit};
  config.first_step_precious = true;
  return config;
}

// Every writer begins and ends `step`; true when all begins got a slot.
bool write_step(StepQueue& queue, std::int64_t step) {
  for (std::uint32_t w = 0; w < queue.config().writers; ++w) {
    if (!queue.begin(w, step)) return false;
  }
  for (std::uint32_t w = 0; w < queue.config().writers; ++w) queue.end(w, step);
  return true;
}

// Reader takes the next step and releases it; returns the step (or -1 when none).
std::int64_t read_step(StepQueue& queue, const std::string& group, std::uint32_t rank) {
  Delivery d = queue.next(group, rank);
  if (d.kind != Kind::kStep) return -1;
  queue.release(group, rank, d.step);
  return d.step;
}

TEST(StepQueue, StepIsVisibleOnlyWhenEveryWriterEndedIt) {
  StepQueue queue(StreamConfig{3, 2});
  queue.join("g", 0, block_group(1));
  for (std::uint32_t w = 0; w < 3; ++w) ASSERT_TRUE(queue.begin(w, 0));
  EXPECT_FALSE(queue.end(0, 0));
  EXPECT_FALSE(queue.end(2, 0));
  EXPECT_EQ(queue.next("g", 0).kind, Kind::kWait);
  EXPECT_FALSE(queue.is_complete(0));
  EXPECT_TRUE(queue.end(1, 0));
  Delivery d = queue.next("g", 0);
  ASSERT_EQ(d.kind, Kind::kStep);
  EXPECT_EQ(d.step, 0);
  EXPECT_EQ(d.readers, std::vector<std::uint32_t>{0});
}

TEST(StepQueue, GroupStartsOnceAllItsReadersHaveJoined) {
  StepQueue queue(StreamConfig{1, 2});
  queue.join("g", 1, block_group(2));
  ASSERT_TRUE(write_step(queue, 0));
  EXPECT_EQ(queue.next("g", 1).kind, Kind::kWait);  // reader 0 has not joined yet
  queue.join("g", 0, block_group(2));
  Delivery d = queue.next("g", 1);
  ASSERT_EQ(d.kind, Kind::kStep);
  EXPECT_EQ(d.readers, (std::vector<std::uint32_t>{0, 1}));
}

TEST(StepQueue, LimitIsCountedFromBeginStep) {
  // L = 1: one step in memory. The writer cannot begin step 1 while step 0 is held.
  StepQueue queue(StreamConfig{1, 1});
  queue.join("g", 0, block_group(1));
  ASSERT_TRUE(write_step(queue, 0));
  EXPECT_FALSE(queue.begin(0, 1));
  EXPECT_EQ(queue.held_steps(), std::vector<std::int64_t>{0});
  Delivery d = queue.next("g", 0);
  ASSERT_EQ(d.kind, Kind::kStep);
  EXPECT_FALSE(queue.begin(0, 1));  // being read: still held
  queue.release("g", 0, 0);
  EXPECT_EQ(queue.take_freed(), std::vector<std::int64_t>{0});
  EXPECT_TRUE(queue.begin(0, 1));
  EXPECT_EQ(queue.stats().steps_held, 1u);
}

TEST(StepQueue, BlockGroupSeesEveryStepInOrderAndHoldsWriters) {
  StepQueue queue(StreamConfig{2, 2});
  queue.join("g", 0, block_group(2));
  queue.join("g", 1, block_group(2));
  ASSERT_TRUE(write_step(queue, 10));
  ASSERT_TRUE(write_step(queue, 11));
  EXPECT_FALSE(queue.begin(0, 12));  // two steps held, nobody read them
  // Both readers get step 10 with the same reader table, then 11.
  Delivery a = queue.next("g", 0), b = queue.next("g", 1);
  ASSERT_EQ(a.kind, Kind::kStep);
  EXPECT_EQ(a.step, 10);
  EXPECT_EQ(b.step, 10);
  EXPECT_EQ(a.readers, (std::vector<std::uint32_t>{0, 1}));
  EXPECT_EQ(a.readers, b.readers);
  queue.release("g", 0, 10);
  EXPECT_FALSE(queue.begin(0, 12));  // reader 1 still reads step 10
  queue.release("g", 1, 10);
  EXPECT_TRUE(queue.begin(0, 12));
  EXPECT_EQ(read_step(queue, "g", 0), 11);
  EXPECT_EQ(read_step(queue, "g", 1), 11);
}

TEST(StepQueue, DiscardGroupSkipsTheNewestStepWhenBehindAndNeverHoldsWriters) {
  StepQueue queue(StreamConfig{1, 2});
  queue.join("fast", 0, block_group(1));
  queue.join("slow", 0, discard_group(1));
  for (std::int64_t step = 0; step < 10; ++step) {
    ASSERT_TRUE(write_step(queue, step)) << step;
    EXPECT_EQ(read_step(queue, "fast", 0), step);
    EXPECT_LE(queue.stats().steps_held, 2u);
  }
  // The slow group kept the step it had not started and skipped the ones begun while behind.
  QueueStats stats = queue.stats();
  EXPECT_EQ(stats.groups.at("slow").discarded, 9u);
  EXPECT_EQ(stats.groups.at("fast").delivered, 10u);
  EXPECT_EQ(read_step(queue, "slow", 0), 0);
  EXPECT_EQ(queue.next("slow", 0).kind, Kind::kWait);
}

TEST(StepQueue, DiscardGroupsUnstartedStepIsTakenWhenAWriterNeedsTheSlot) {
  StepQueue queue(StreamConfig{1, 1});
  queue.join("fast", 0, block_group(1));
  queue.join("slow", 0, discard_group(1));
  ASSERT_TRUE(write_step(queue, 0));
  EXPECT_EQ(read_step(queue, "fast", 0), 0);
  // Step 0 is held only by the slow group, which has not started it: the writer takes the slot.
  ASSERT_TRUE(write_step(queue, 1));
  EXPECT_EQ(queue.stats().groups.at("slow").discarded, 1u);
  EXPECT_EQ(queue.held_steps(), std::vector<std::int64_t>{1});
  // A step the slow group is reading is not taken from it.
  Delivery d = queue.next("slow", 0);
  ASSERT_EQ(d.step, 1);
  EXPECT_EQ(read_step(queue, "fast", 0), 1);
  EXPECT_FALSE(queue.begin(0, 2));
  queue.release("slow", 0, 1);
  EXPECT_TRUE(queue.begin(0, 2));
}

TEST(StepQueue, LateGroupsStartAtTheOldestHeldStepOrTheNextOne) {
  StepQueue queue(StreamConfig{1, 3});
  ASSERT_TRUE(write_step(queue, 0));
  ASSERT_TRUE(write_step(queue, 1));
  queue.join("old", 0, block_group(1, StartAt::kOldest));
  queue.join("new", 0, block_group(1, StartAt::kNewest));
  ASSERT_TRUE(write_step(queue, 2));
  EXPECT_EQ(read_step(queue, "old", 0), 0);
  EXPECT_EQ(read_step(queue, "old", 0), 1);
  EXPECT_EQ(read_step(queue, "old", 0), 2);
  EXPECT_EQ(read_step(queue, "new", 0), 2);
  EXPECT_EQ(queue.next("new", 0).kind, Kind::kWait);
}

TEST(StepQueue, StepsNobodyWantsAreDroppedOnlyAfterTheExpectedGroupsJoined) {
  StreamConfig config{1, 2};
  config.expected_groups = 1;
  StepQueue queue(config);
  ASSERT_TRUE(write_step(queue, 0));
  ASSERT_TRUE(write_step(queue, 1));
  EXPECT_FALSE(queue.begin(0, 2));  // kept for the group still to come: the writer waits
  queue.join("g", 0, block_group(1));
  EXPECT_EQ(read_step(queue, "g", 0), 0);
  EXPECT_TRUE(queue.begin(0, 2));

  StepQueue eager(StreamConfig{1, 2});  // expected_groups = 0: the oldest is dropped, counted
  ASSERT_TRUE(write_step(eager, 0));
  ASSERT_TRUE(write_step(eager, 1));
  ASSERT_TRUE(write_step(eager, 2));
  EXPECT_EQ(eager.stats().steps_dropped_unread, 1u);
  EXPECT_EQ(eager.held_steps(), (std::vector<std::int64_t>{1, 2}));
}

// Each expected group sees the steps from the first, whichever joins first and however fast it
// reads: what the groups so far released is kept for the ones still to come.
TEST(StepQueue, EveryExpectedGroupSeesTheStepsFromTheFirst) {
  for (const StartAt last_start : {StartAt::kOldest, StartAt::kNewest}) {
    StreamConfig config{1, 2};
    config.expected_groups = 2;
    StepQueue queue(config);
    ASSERT_TRUE(write_step(queue, 0));
    ASSERT_TRUE(write_step(queue, 1));
    queue.join("early", 0, block_group(1));
    EXPECT_EQ(read_step(queue, "early", 0), 0);
    EXPECT_EQ(read_step(queue, "early", 0), 1);
    EXPECT_EQ(queue.next("early", 0).kind, Kind::kWait);
    EXPECT_EQ(queue.held_steps(), (std::vector<std::int64_t>{0, 1}));  // kept for the second
    EXPECT_FALSE(queue.begin(0, 2));                                    // the writer waits
    queue.join("late", 0, block_group(1, last_start));
    if (last_start == StartAt::kOldest) {
      EXPECT_EQ(read_step(queue, "late", 0), 0);
      EXPECT_EQ(read_step(queue, "late", 0), 1);
    } else {  // it wants only what comes: the kept steps go as it joins
      EXPECT_TRUE(queue.held_steps().empty());
    }
    ASSERT_TRUE(queue.begin(0, 2));
    queue.end(0, 2);
    EXPECT_EQ(read_step(queue, "late", 0), 2);
    EXPECT_EQ(read_step(queue, "early", 0), 2);
  }
}

TEST(StepQueue, WriterFailureAbortsItsStepAndTheStreamGoesOnWithTheOthers) {
  StepQueue queue(StreamConfig{2, 2});
  queue.join("g", 0, block_group(1));
  ASSERT_TRUE(write_step(queue, 0));
  ASSERT_TRUE(queue.begin(0, 1));
  ASSERT_TRUE(queue.begin(1, 1));
  queue.end(0, 1);
  queue.fail_writer(1, "writer 1 disconnected during step 1");
  EXPECT_EQ(read_step(queue, "g", 0), 0);
  Delivery skipped = queue.next("g", 0);
  ASSERT_EQ(skipped.kind, Kind::kSkipped);
  EXPECT_EQ(skipped.step, 1);
  EXPECT_EQ(skipped.reason, "writer 1 disconnected during step 1");
  // Writer 0 alone completes the next step.
  ASSERT_TRUE(queue.begin(0, 2));
  EXPECT_TRUE(queue.end(0, 2));
  EXPECT_EQ(read_step(queue, "g", 0), 2);
  EXPECT_THROW(queue.begin(1, 3), QueueError);
  QueueStats stats = queue.stats();
  EXPECT_EQ(stats.steps_aborted, 1u);
  EXPECT_EQ(stats.groups.at("g").aborted, 1u);
}

TEST(StepQueue, WriterFailureCanEndTheStream) {
  StreamConfig config{2, 2};
  config.end_on_writer_failure = true;
  StepQueue queue(config);
  queue.join("g", 0, block_group(1));
  ASSERT_TRUE(write_step(queue, 0));
  ASSERT_TRUE(queue.begin(0, 1));
  queue.fail_writer(1, "killed");
  EXPECT_TRUE(queue.ended());
  EXPECT_EQ(read_step(queue, "g", 0), 0);
  EXPECT_EQ(queue.next("g", 0).kind, Kind::kSkipped);
  EXPECT_EQ(queue.next("g", 0).kind, Kind::kEnd);
}

TEST(StepQueue, ReaderThatLeavesGivesBackItsShareAndTheGroupShrinks) {
  StepQueue queue(StreamConfig{1, 2});
  for (std::uint32_t r = 0; r < 3; ++r) queue.join("g", r, block_group(3));
  ASSERT_TRUE(write_step(queue, 0));
  for (std::uint32_t r = 0; r < 3; ++r) ASSERT_EQ(queue.next("g", r).kind, Kind::kStep);
  queue.release("g", 0, 0);
  queue.release("g", 2, 0);
  queue.leave("g", 1);  // died while holding step 0
  EXPECT_EQ(queue.take_freed(), std::vector<std::int64_t>{0});
  ASSERT_TRUE(write_step(queue, 1));
  Delivery d = queue.next("g", 2);
  ASSERT_EQ(d.kind, Kind::kStep);
  EXPECT_EQ(d.readers, (std::vector<std::uint32_t>{0, 2}));
}

TEST(StepQueue, ClosedWritersEndTheStreamAfterTheQueuedSteps) {
  StepQueue queue(StreamConfig{2, 2});
  queue.join("g", 0, block_group(1));
  ASSERT_TRUE(write_step(queue, 0));
  queue.close_writer(0);
  EXPECT_FALSE(queue.ended());
  ASSERT_TRUE(queue.begin(1, 1));  // the other writer goes on alone
  EXPECT_TRUE(queue.end(1, 1));
  queue.close_writer(1);
  EXPECT_TRUE(queue.ended());
  EXPECT_EQ(read_step(queue, "g", 0), 0);
  EXPECT_EQ(read_step(queue, "g", 0), 1);
  EXPECT_EQ(queue.next("g", 0).kind, Kind::kEnd);
}

TEST(StepQueue, ClosingAfterEndingDoesNotCompleteOthersSteps) {
  StepQueue queue(StreamConfig{3, 2});
  for (std::uint32_t w = 0; w < 3; ++w) ASSERT_TRUE(queue.begin(w, 0));
  queue.end(0, 0);
  queue.close_writer(0);
  EXPECT_FALSE(queue.end(1, 0));  // writer 2 has not ended it
  EXPECT_TRUE(queue.end(2, 0));
}

TEST(StepQueue, MisuseIsAnErrorThatSaysWhatWasExpected) {
  StepQueue queue(StreamConfig{2, 2});
  EXPECT_THROW(StepQueue(StreamConfig{0, 2}), QueueError);
  EXPECT_THROW(StepQueue(StreamConfig{1, 0}), QueueError);
  EXPECT_THROW(queue.begin(2, 0), QueueError);
  ASSERT_TRUE(queue.begin(0, 5));
  try {
    queue.begin(0, 6);
    FAIL() << "began a step with one open";
  } catch (const QueueError& e) {
    EXPECT_NE(std::string(e.what()).find("has not ended step 5"), std::string::npos) << e.what();
  }
  queue.end(0, 5);
  EXPECT_THROW(queue.end(0, 5), QueueError);
  EXPECT_THROW(queue.begin(0, 4), QueueError);
  EXPECT_THROW(queue.end(1, 5), QueueError);  // not begun
  queue.join("g", 0, block_group(2));
  EXPECT_THROW(queue.join("g", 0, block_group(2)), QueueError);
  EXPECT_THROW(queue.join("g", 1, block_group(3)), QueueError);
  EXPECT_THROW(queue.join("g", 1, discard_group(2)), QueueError);
  EXPECT_THROW(queue.join("h", 4, block_group(2)), QueueError);
  EXPECT_THROW(queue.next("g", 1), QueueError);  // not a member
  queue.join("g", 1, block_group(2));
  ASSERT_TRUE(queue.begin(1, 5));
  queue.end(1, 5);
  ASSERT_EQ(queue.next("g", 0).step, 5);
  EXPECT_THROW(queue.next("g", 0), QueueError);  // holds step 5
  EXPECT_THROW(queue.release("g", 0, 4), QueueError);
}

// Random interleavings of 3 writers, a blocking group of 3 and a discarding group of 1, with a
// writer failure and a reader leaving: the queue never holds more than L steps, no step is seen
// before it is complete, blocking readers see every complete step in order, and everything is
// freed at the end.
TEST(StepQueue, RandomInterleavingsKeepTheInvariants) {
  for (std::uint32_t seed = 1; seed <= 200; ++seed) {
    std::mt19937 rng(seed);
    const std::size_t limit = 1 + rng() % 3;
    StepQueue queue(StreamConfig{3, limit});
    for (std::uint32_t r = 0; r < 3; ++r) queue.join("block", r, block_group(3));
    queue.join("discard", 0, discard_group(1));
    std::vector<std::int64_t> next_step(3, 0);    // per writer: next step to begin
    std::vector<bool> open(3, false), dead(3, false);
    std::vector<bool> reader_gone(3, false);
    std::vector<std::int64_t> holding(4, -1);     // readers 0..2 of block, 3 = discard
    std::vector<std::int64_t> last_seen(4, -1);
    std::set<std::int64_t> completed;
    const int steps = 12;
    for (int op = 0; op < 2000; ++op) {
      if (op == 1000) {
        queue.fail_writer(2, "killed");
        dead[2] = true;
      }
      if (op == 1500) {
        queue.leave("block", 1);
        reader_gone[1] = true;
        holding[1] = -1;
      }
      const unsigned choice = rng() % 9;
      const std::uint32_t who = rng() % 3;
      if (choice < 4) {  // a writer moves
        if (dead[who] || next_step[who] >= steps) continue;
        if (!open[who]) {
          open[who] = queue.begin(who, next_step[who]);
        } else {
          if (queue.end(who, next_step[who])) completed.insert(next_step[who]);
          open[who] = false;
          ++next_step[who];
        }
      } else {  // a reader moves
        const std::uint32_t reader = rng() % 4;
        const std::string group = reader < 3 ? "block" : "discard";
        const std::uint32_t rank = reader < 3 ? reader : 0;
        if (reader < 3 && reader_gone[reader]) continue;
        if (holding[reader] >= 0) {
          queue.release(group, rank, holding[reader]);
          holding[reader] = -1;
          continue;
        }
        Delivery d = queue.next(group, rank);
        if (d.kind == Kind::kStep) {
          ASSERT_TRUE(completed.count(d.step)) << "seed " << seed << ": step " << d.step;
          ASSERT_GT(d.step, last_seen[reader]) << "seed " << seed;
          if (reader < 3 && !dead[0] && !dead[1] && !dead[2]) {
            // No failure yet: a blocking reader sees every step, none skipped.
            ASSERT_EQ(d.step, last_seen[reader] + 1) << "seed " << seed;
          }
          last_seen[reader] = d.step;
          holding[reader] = d.step;
        } else if (d.kind == Kind::kSkipped) {
          last_seen[reader] = d.step;
        }
      }
      ASSERT_LE(queue.stats().steps_held, limit) << "seed " << seed;
    }
  }
}

TEST(StepQueue, ReservationTakesAFreeSlotAndIsUsedByEndOrBegin) {
  StepQueue queue(StreamConfig{2, 2});
  queue.join("g", 0, block_group(1));
  ASSERT_TRUE(write_step(queue, 0));
  // Writer 0 reserves step 1 at the end of step 0; writer 1 reserves it too (it is held).
  EXPECT_TRUE(queue.reserve(0, 1));
  EXPECT_TRUE(queue.reserve(1, 1));
  EXPECT_EQ(queue.reservation(0), 1);
  EXPECT_EQ(queue.held_steps(), (std::vector<std::int64_t>{0, 1}));
  // The queue is full (limit 2): step 2 cannot be reserved, and reserving never makes room.
  EXPECT_FALSE(queue.reserve(0, 2));
  // Writer 0 uses its reservation by ending the step, writer 1 by a plain begin.
  EXPECT_TRUE(queue.begin(1, 1));
  EXPECT_FALSE(queue.reservation(1).has_value());
  EXPECT_FALSE(queue.end(0, 1));
  EXPECT_FALSE(queue.reservation(0).has_value());
  EXPECT_TRUE(queue.end(1, 1));
  EXPECT_EQ(read_step(queue, "g", 0), 0);
  EXPECT_EQ(read_step(queue, "g", 0), 1);
}

TEST(StepQueue, AWithdrawnReservationLeavesNoTrace) {
  StepQueue queue(StreamConfig{1, 3});
  queue.join("fast", 0, block_group(1));
  queue.join("slow", 0, discard_group(1));
  ASSERT_TRUE(write_step(queue, 0));
  ASSERT_TRUE(write_step(queue, 2));  // "slow" has read neither: it is behind, and skipped step 2
  EXPECT_EQ(read_step(queue, "fast", 0), 0);
  EXPECT_EQ(queue.stats().groups.at("slow").discarded, 1u);
  ASSERT_TRUE(queue.reserve(0, 4));  // guessed the next step: 4 (skipped by "slow" too)
  EXPECT_EQ(queue.stats().groups.at("slow").discarded, 2u);
  queue.withdraw(0, 4);              // the writer began 3 instead
  EXPECT_EQ(queue.stats().groups.at("slow").discarded, 1u);
  EXPECT_EQ(queue.held_steps(), (std::vector<std::int64_t>{0, 2}));
  EXPECT_FALSE(queue.reservation(0).has_value());
  ASSERT_TRUE(queue.begin(0, 3));    // 3 < 4 is still a new step: 4 never existed
  queue.end(0, 3);
  EXPECT_EQ(read_step(queue, "fast", 0), 2);
  EXPECT_EQ(read_step(queue, "fast", 0), 3);
  EXPECT_THROW(queue.withdraw(0, 3), QueueError);  // no reservation
  EXPECT_EQ(queue.stats().groups.at("slow").discarded, 2u);  // 2 and 3, not the phantom 4
  // A begin of another step than the one reserved withdraws the reservation first.
  ASSERT_TRUE(queue.reserve(0, 4));
  ASSERT_TRUE(queue.begin(0, 5));
  queue.end(0, 5);
  EXPECT_EQ(read_step(queue, "fast", 0), 5);
}

TEST(StepQueue, ClosingWithAReservationAbortsNothing) {
  StepQueue queue(StreamConfig{2, 2});
  queue.join("g", 0, block_group(1));
  ASSERT_TRUE(write_step(queue, 0));
  ASSERT_TRUE(queue.reserve(0, 1));
  ASSERT_TRUE(queue.reserve(1, 1));
  queue.close_writer(0);
  queue.close_writer(1);
  EXPECT_TRUE(queue.ended());
  EXPECT_EQ(read_step(queue, "g", 0), 0);
  const Delivery last = queue.next("g", 0);
  EXPECT_EQ(last.kind, Kind::kEnd);  // no skipped step 1: it never began
  EXPECT_EQ(queue.stats().steps_aborted, 0u);
}

// A writer's begin of the step it reserved sends nothing, so a writer that fails holding a
// reservation may have died inside that step: the step is aborted, never completed by the
// survivors alone (a step with a hole where the dead writer's chunks belong).
TEST(StepQueue, FailingWithAReservationAbortsTheReservedStep) {
  StepQueue queue(StreamConfig{2, 2});
  queue.join("g", 0, block_group(1));
  ASSERT_TRUE(write_step(queue, 0));
  ASSERT_TRUE(queue.reserve(0, 1));
  ASSERT_TRUE(queue.reserve(1, 1));
  queue.confirm(0, 1);  // the survivor's first chunk of step 1 came
  queue.fail_writer(1, "writer 1 disconnected");
  EXPECT_FALSE(queue.ended());
  EXPECT_THROW(queue.end(0, 1), QueueError);  // aborted: the survivor is told
  EXPECT_EQ(read_step(queue, "g", 0), 0);
  const Delivery skipped = queue.next("g", 0);
  EXPECT_EQ(skipped.kind, Kind::kSkipped);
  EXPECT_EQ(skipped.step, 1);
  EXPECT_EQ(skipped.reason, "writer 1 disconnected");
  EXPECT_EQ(queue.stats().steps_aborted, 1u);
  // The survivor goes on alone with the next step.
  ASSERT_TRUE(queue.begin(0, 2));
  EXPECT_TRUE(queue.end(0, 2));
  EXPECT_EQ(read_step(queue, "g", 0), 2);
}

TEST(StepQueue, AReservationUsedIsAnOrdinaryStepWhenItsWriterCloses) {
  StepQueue queue(StreamConfig{1, 2});
  queue.join("g", 0, block_group(1));
  ASSERT_TRUE(write_step(queue, 0));
  ASSERT_TRUE(queue.reserve(0, 1));
  queue.confirm(0, 1);  // its first chunk came
  queue.close_writer(0);
  EXPECT_EQ(read_step(queue, "g", 0), 0);
  EXPECT_EQ(queue.next("g", 0).kind, Kind::kSkipped);  // closed during step 1
}

TEST(StepQueue, AWrongGuessHoldsNoSlotABeginNeeds) {
  // Two writers in one thread (a test, or writers that wait for each other): both reserved 1,
  // the steps go 0, 10, 20. Writer 0's begin of 10 withdraws both reservations, so the slot
  // is free for it at once instead of waiting for writer 1 to begin 10.
  StepQueue queue(StreamConfig{2, 2});
  queue.join("g", 0, block_group(1));
  ASSERT_TRUE(write_step(queue, 0));
  ASSERT_TRUE(queue.reserve(0, 1));
  ASSERT_TRUE(queue.reserve(1, 1));
  ASSERT_TRUE(queue.begin(0, 10));
  EXPECT_FALSE(queue.reservation(1).has_value());
  ASSERT_TRUE(queue.begin(1, 10));
  queue.end(0, 10);
  EXPECT_TRUE(queue.end(1, 10));
  EXPECT_EQ(queue.held_steps(), (std::vector<std::int64_t>{0, 10}));
}

// ---- Step distribution --------------------------------------------------------------------------

// 3 readers, 9 steps: reader r gets steps r, r + 3 and r + 6, each whole (its reader table is r
// alone), never another's, however the readers' requests interleave; then each gets the end.
TEST(StepQueue, RoundRobinHandsEachReaderItsTurnsWhole) {
  for (const bool readers_first : {false, true}) {
    StepQueue queue(StreamConfig{2, 9});
    for (std::uint32_t r = 0; r < 3; ++r) {
      queue.join("g", r, distributed_group(3, StepDistribution::kRoundRobin));
    }
    std::map<std::uint32_t, std::vector<std::int64_t>> seen;
    auto drain = [&](std::uint32_t r) {
      for (;;) {
        Delivery d = queue.next("g", r);
        if (d.kind != Kind::kStep) return d.kind;
        EXPECT_EQ(d.readers, std::vector<std::uint32_t>{r}) << "step " << d.step;
        seen[r].push_back(d.step);
        queue.release("g", r, d.step);
      }
    };
    for (std::int64_t step = 0; step < 9; ++step) {
      ASSERT_TRUE(write_step(queue, step));
      if (readers_first) {
        // The reader whose turn comes last asks first, every time.
        for (std::uint32_t r = 3; r-- > 0;) drain(r);
      }
    }
    queue.close_writer(0);
    queue.close_writer(1);
    // The end comes once no step is left that could still be a reader's (a reader that leaves
    // gives its turns to the next): reader 2 waits while the others' steps are not taken.
    EXPECT_EQ(drain(2), readers_first ? Kind::kEnd : Kind::kWait);
    for (std::uint32_t r : {0u, 1u}) drain(r);
    for (std::uint32_t r = 0; r < 3; ++r) EXPECT_EQ(queue.next("g", r).kind, Kind::kEnd);
    for (std::uint32_t r = 0; r < 3; ++r) {
      EXPECT_EQ(seen[r], (std::vector<std::int64_t>{r, r + 3, r + 6})) << "reader " << r;
    }
    EXPECT_EQ(queue.stats().groups.at("g").delivered, 9u);
    EXPECT_TRUE(queue.held_steps().empty());
  }
}

// A round-robin step is done for the group once its one reader releases it: the writers need not
// wait for the others. A reader that asks for a step that is another's turn waits.
TEST(StepQueue, RoundRobinStepIsDoneWhenItsReaderReleasesIt) {
  StepQueue queue(StreamConfig{1, 2});
  for (std::uint32_t r = 0; r < 2; ++r) {
    queue.join("g", r, distributed_group(2, StepDistribution::kRoundRobin));
  }
  ASSERT_TRUE(write_step(queue, 0));
  EXPECT_EQ(queue.next("g", 1).kind, Kind::kWait);  // step 0 is reader 0's
  ASSERT_TRUE(write_step(queue, 1));
  EXPECT_FALSE(queue.begin(0, 2));
  EXPECT_EQ(read_step(queue, "g", 1), 1);
  EXPECT_EQ(queue.take_freed(), std::vector<std::int64_t>{1});
  ASSERT_TRUE(write_step(queue, 2));  // reader 0 still has step 0 to read
  EXPECT_EQ(read_step(queue, "g", 0), 0);
  EXPECT_EQ(read_step(queue, "g", 0), 2);
}

// The turns of a reader that leaves before taking them go to the next member in rank order; the
// steps it was handed are done for the group (given back, not reread, as its share would be).
TEST(StepQueue, RoundRobinTurnsOfAReaderThatLeftGoToTheNextInTurn) {
  StepQueue queue(StreamConfig{1, 9});
  for (std::uint32_t r = 0; r < 3; ++r) {
    queue.join("g", r, distributed_group(3, StepDistribution::kRoundRobin));
  }
  for (std::int64_t step = 0; step < 6; ++step) ASSERT_TRUE(write_step(queue, step));
  EXPECT_EQ(read_step(queue, "g", 0), 0);  // turns given: 0 1 2 0 1 2
  const Delivery held = queue.next("g", 1);
  ASSERT_EQ(held.step, 1);
  queue.leave("g", 1);  // holding step 1; step 4 was its turn too
  EXPECT_EQ(queue.take_freed(), (std::vector<std::int64_t>{0, 1}));
  EXPECT_EQ(read_step(queue, "g", 2), 2);
  EXPECT_EQ(read_step(queue, "g", 2), 4);  // reader 1's turn, now reader 2's
  EXPECT_EQ(read_step(queue, "g", 2), 5);
  EXPECT_EQ(read_step(queue, "g", 0), 3);
  // From now on the turns go round the members left, 0 and 2.
  for (std::int64_t step = 6; step < 10; ++step) ASSERT_TRUE(write_step(queue, step));
  EXPECT_EQ(read_step(queue, "g", 0), 6);
  EXPECT_EQ(read_step(queue, "g", 0), 8);
  EXPECT_EQ(read_step(queue, "g", 2), 7);
  EXPECT_EQ(read_step(queue, "g", 2), 9);
  EXPECT_TRUE(queue.held_steps().empty());
}

// Each step goes to exactly one reader, whichever asks first: none twice, none lost, also when a
// reader leaves mid-way (between steps) and with a blocking queue of 2 that holds the writers.
TEST(StepQueue, OnDemandHandsEachStepToExactlyOneReader) {
  for (std::uint32_t seed = 1; seed <= 50; ++seed) {
    std::mt19937 rng(seed);
    StepQueue queue(StreamConfig{2, 2});
    for (std::uint32_t r = 0; r < 3; ++r) {
      queue.join("g", r, distributed_group(3, StepDistribution::kOnDemand));
    }
    constexpr std::int64_t kSteps = 30;
    std::int64_t next_step = 0;
    std::vector<std::int64_t> holding(3, -1);
    std::vector<bool> gone(3, false), ended(3, false);
    std::map<std::int64_t, int> handed;  // step -> times handed
    std::vector<std::int64_t> order;     // steps in the order they were handed
    for (int op = 0; op < 3000 && !(ended[0] && ended[2]); ++op) {
      if (order.size() >= 10 && !gone[1] && holding[1] < 0) {  // mid-way, between its steps
        queue.leave("g", 1);
        gone[1] = true;
      }
      if (rng() % 3 == 0) {
        if (next_step < kSteps && write_step(queue, next_step)) ++next_step;
        if (next_step == kSteps && !queue.ended()) {
          queue.close_writer(0);
          queue.close_writer(1);
        }
        continue;
      }
      const std::uint32_t r = rng() % 3;
      if (gone[r] || ended[r]) continue;
      if (holding[r] >= 0) {
        queue.release("g", r, holding[r]);
        holding[r] = -1;
        continue;
      }
      const Delivery d = queue.next("g", r);
      if (d.kind == Kind::kEnd) ended[r] = true;
      if (d.kind != Kind::kStep) continue;
      ASSERT_EQ(d.readers, std::vector<std::uint32_t>{r});
      ++handed[d.step];
      order.push_back(d.step);
      holding[r] = d.step;
    }
    ASSERT_TRUE(gone[1]) << "seed " << seed;
    ASSERT_TRUE(ended[0] && ended[2]) << "seed " << seed;
    ASSERT_EQ(handed.size(), static_cast<std::size_t>(kSteps)) << "seed " << seed;
    for (const auto& [step, times] : handed) EXPECT_EQ(times, 1) << "seed " << seed;
    EXPECT_TRUE(std::is_sorted(order.begin(), order.end())) << "seed " << seed;
    EXPECT_TRUE(queue.held_steps().empty()) << "seed " << seed;
  }
}

// Random interleavings of 3 writers, a blocking round-robin group of 3 and a discarding on-demand
// group of 2, with a writer failure and a reader of each group leaving: no more than L steps are
// held, no step is seen before it is complete, no step is handed twice within a group, and until
// the failure the round-robin group's step s goes to reader s % 3.
TEST(StepQueue, RandomInterleavingsOfWholeStepGroupsKeepTheInvariants) {
  for (std::uint32_t seed = 1; seed <= 200; ++seed) {
    std::mt19937 rng(seed);
    const std::size_t limit = 1 + rng() % 3;
    StepQueue queue(StreamConfig{3, limit});
    for (std::uint32_t r = 0; r < 3; ++r) {
      queue.join("rr", r, distributed_group(3, StepDistribution::kRoundRobin));
    }
    for (std::uint32_t r = 0; r < 2; ++r) {
      queue.join("od", r, distributed_group(2, StepDistribution::kOnDemand, QueuePolicy::kDiscard));
    }
    std::vector<std::int64_t> next_step(3, 0);
    std::vector<bool> open(3, false), dead(3, false);
    // Readers 0..2 of "rr", 3..4 of "od".
    std::vector<std::int64_t> holding(5, -1);
    std::vector<bool> gone(5, false);
    std::set<std::int64_t> completed;
    std::map<std::string, std::set<std::int64_t>> handed;
    bool failed = false;
    for (int op = 0; op < 2000; ++op) {
      if (op == 1000) {
        queue.fail_writer(2, "killed");
        dead[2] = failed = true;
      }
      for (const std::uint32_t leaver : {1u, 4u}) {
        if (op == 1500) {
          queue.leave(leaver < 3 ? "rr" : "od", leaver < 3 ? leaver : leaver - 3);
          gone[leaver] = true;
        }
      }
      const std::uint32_t who = rng() % 3;
      if (rng() % 9 < 4) {
        if (dead[who] || next_step[who] >= 12) continue;
        if (!open[who]) {
          open[who] = queue.begin(who, next_step[who]);
        } else {
          if (queue.end(who, next_step[who])) completed.insert(next_step[who]);
          open[who] = false;
          ++next_step[who];
        }
        continue;
      }
      const std::uint32_t reader = rng() % 5;
      if (gone[reader]) continue;
      const std::string group = reader < 3 ? "rr" : "od";
      const std::uint32_t rank = reader < 3 ? reader : reader - 3;
      if (holding[reader] >= 0) {
        queue.release(group, rank, holding[reader]);
        holding[reader] = -1;
        continue;
      }
      const Delivery d = queue.next(group, rank);
      if (d.kind != Kind::kStep) continue;
      ASSERT_TRUE(completed.count(d.step)) << "seed " << seed << ": step " << d.step;
      ASSERT_EQ(d.readers, std::vector<std::uint32_t>{rank}) << "seed " << seed;
      ASSERT_TRUE(handed[group].insert(d.step).second)
          << "seed " << seed << ": step " << d.step << " handed twice in " << group;
      if (group == "rr" && !failed) {
        ASSERT_EQ(static_cast<std::uint32_t>(d.step % 3), rank) << "seed " << seed;
      }
      holding[reader] = d.step;
      ASSERT_LE(queue.stats().steps_held, limit) << "seed " << seed;
    }
  }
}

// A reader that leaves holding an on-demand step gives it back: done for the group, freed.
TEST(StepQueue, OnDemandStepOfAReaderThatLeavesIsDoneForTheGroup) {
  StepQueue queue(StreamConfig{1, 2});
  for (std::uint32_t r = 0; r < 2; ++r) {
    queue.join("g", r, distributed_group(2, StepDistribution::kOnDemand));
  }
  ASSERT_TRUE(write_step(queue, 0));
  ASSERT_TRUE(write_step(queue, 1));
  ASSERT_EQ(queue.next("g", 1).step, 0);  // the first to ask gets the oldest
  const Delivery second = queue.next("g", 0);
  ASSERT_EQ(second.step, 1);
  EXPECT_EQ(second.readers, std::vector<std::uint32_t>{0});
  queue.leave("g", 1);
  EXPECT_EQ(queue.take_freed(), std::vector<std::int64_t>{0});
  queue.release("g", 0, 1);
  ASSERT_TRUE(write_step(queue, 2));
  EXPECT_EQ(read_step(queue, "g", 0), 2);
}

// Every reader of a group that hands steps whole is told of every aborted step, once, as in an
// "all" group, whichever steps it was handed around it.
TEST(StepQueue, EveryReaderOfAWholeStepGroupIsToldOfAbortedSteps) {
  for (const StepDistribution distribution :
       {StepDistribution::kRoundRobin, StepDistribution::kOnDemand}) {
    StepQueue queue(StreamConfig{1, 4});
    for (std::uint32_t r = 0; r < 2; ++r) queue.join("g", r, distributed_group(2, distribution));
    ASSERT_TRUE(write_step(queue, 0));
    ASSERT_TRUE(queue.begin(0, 1));
    queue.abort_step(1, "step 1 timed out");
    ASSERT_TRUE(write_step(queue, 2));
    ASSERT_TRUE(write_step(queue, 3));
    std::map<std::uint32_t, std::vector<std::int64_t>> steps, skipped;
    for (int round = 0; round < 4; ++round) {
      for (std::uint32_t r = 0; r < 2; ++r) {
        const Delivery d = queue.next("g", r);
        if (d.kind == Kind::kSkipped) {
          EXPECT_EQ(d.reason, "step 1 timed out");
          skipped[r].push_back(d.step);
        } else if (d.kind == Kind::kStep) {
          steps[r].push_back(d.step);
          queue.release("g", r, d.step);
        }
      }
    }
    EXPECT_EQ(skipped[0], std::vector<std::int64_t>{1});
    EXPECT_EQ(skipped[1], std::vector<std::int64_t>{1});
    std::vector<std::int64_t> all = steps[0];
    all.insert(all.end(), steps[1].begin(), steps[1].end());
    std::sort(all.begin(), all.end());
    EXPECT_EQ(all, (std::vector<std::int64_t>{0, 2, 3}));
    if (distribution == StepDistribution::kRoundRobin) {
      EXPECT_EQ(steps[0], (std::vector<std::int64_t>{0, 3}));
      EXPECT_EQ(steps[1], (std::vector<std::int64_t>{2}));
    }
    EXPECT_EQ(queue.stats().groups.at("g").aborted, 1u);
  }
}

// A discard group that hands steps whole is behind as an "all" group is: writers never wait for
// it, and the steps it falls behind on are skipped for it.
TEST(StepQueue, WholeStepDiscardGroupNeverHoldsWriters) {
  StepQueue queue(StreamConfig{1, 2});
  queue.join("fast", 0, block_group(1));
  for (std::uint32_t r = 0; r < 2; ++r) {
    queue.join("slow", r, distributed_group(2, StepDistribution::kOnDemand, QueuePolicy::kDiscard));
  }
  for (std::int64_t step = 0; step < 6; ++step) {
    ASSERT_TRUE(write_step(queue, step)) << step;
    EXPECT_EQ(read_step(queue, "fast", 0), step);
  }
  EXPECT_EQ(queue.stats().groups.at("slow").discarded, 5u);
  EXPECT_EQ(read_step(queue, "slow", 1), 0);
  EXPECT_EQ(queue.next("slow", 0).kind, Kind::kWait);
}

TEST(StepQueue, ReadersOfAGroupMustAgreeOnItsDistribution) {
  StepQueue queue(StreamConfig{1, 2});
  queue.join("g", 0, distributed_group(2, StepDistribution::kRoundRobin));
  try {
    queue.join("g", 1, distributed_group(2, StepDistribution::kOnDemand));
    FAIL() << "joined with another distribution";
  } catch (const QueueError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("step distribution round_robin"), std::string::npos) << message;
    EXPECT_NE(message.find("on_demand"), std::string::npos) << message;
  }
  EXPECT_THROW(queue.join("g", 1, block_group(2)), QueueError);  // all
  queue.join("g", 1, distributed_group(2, StepDistribution::kRoundRobin));
  queue.join("h", 0, block_group(1));
  EXPECT_THROW(queue.join("h", 1, distributed_group(1, StepDistribution::kOnDemand)), QueueError);
  EXPECT_STREQ(distribution_name(StepDistribution::kAll), "all");
  EXPECT_STREQ(distribution_name(StepDistribution::kRoundRobin), "round_robin");
  EXPECT_STREQ(distribution_name(StepDistribution::kOnDemand), "on_demand");
}

// ---- Precious first step ------------------------------------------------------------------------

// A group that joins after 5 steps (all read and released by the first group) is handed step 0
// first, then goes on as its start says: from the next step begun (newest) or the oldest held.
TEST(StepQueue, APreciousFirstStepGoesFirstToEveryLateGroup) {
  for (const StartAt start : {StartAt::kNewest, StartAt::kOldest}) {
    StepQueue queue(precious_stream(1, 2));
    queue.join("early", 0, block_group(1));
    for (std::int64_t step = 0; step < 5; ++step) {
      ASSERT_TRUE(write_step(queue, step));
      EXPECT_EQ(read_step(queue, "early", 0), step);
    }
    EXPECT_TRUE(queue.held_steps().empty());  // step 0 is kept aside: no slot
    EXPECT_EQ(queue.precious_step(), 0);
    EXPECT_EQ(queue.stats().precious_step, 0);
    EXPECT_EQ(queue.stats().steps_held, 0u);
    const std::vector<std::int64_t> freed = queue.take_freed();
    EXPECT_EQ(freed, (std::vector<std::int64_t>{1, 2, 3, 4}));  // never step 0
    ASSERT_TRUE(write_step(queue, 5));                          // held for the early group
    queue.join("late", 0, block_group(1, start));
    EXPECT_EQ(read_step(queue, "late", 0), 0);
    if (start == StartAt::kOldest) {
      EXPECT_EQ(read_step(queue, "late", 0), 5);
    }
    EXPECT_EQ(queue.next("late", 0).kind, Kind::kWait);
    EXPECT_EQ(read_step(queue, "early", 0), 5);
    ASSERT_TRUE(write_step(queue, 6));
    EXPECT_EQ(read_step(queue, "late", 0), 6);
    EXPECT_EQ(read_step(queue, "early", 0), 6);
    // Later groups too, and with any distribution.
    for (std::uint32_t r = 0; r < 2; ++r) {
      queue.join(
          "later", r,
          distributed_group(2, StepDistribution::kOnDemand, QueuePolicy::kBlock, StartAt::kNewest));
    }
    const Delivery first = queue.next("later", 1);
    ASSERT_EQ(first.kind, Kind::kStep);
    EXPECT_EQ(first.step, 0);
    queue.release("later", 1, 0);
    EXPECT_EQ(queue.next("later", 0).kind, Kind::kWait);
    EXPECT_EQ(queue.precious_step(), 0);
  }
}

// With a queue limit of 1 the writers do not wait because of the precious step once every group
// that held it has released it (nor when no group ever held it); a group that joins later takes a
// slot with it until it releases it.
TEST(StepQueue, APreciousStepTakesNoSlotOnceReleased) {
  StepQueue queue(precious_stream(1, 1));
  queue.join("g", 0, block_group(1));
  ASSERT_TRUE(write_step(queue, 0));
  EXPECT_FALSE(queue.begin(0, 1));  // g has not read it yet: it takes the slot
  EXPECT_EQ(read_step(queue, "g", 0), 0);
  for (std::int64_t step = 1; step < 10; ++step) {
    ASSERT_TRUE(write_step(queue, step)) << step;
    EXPECT_EQ(read_step(queue, "g", 0), step);
  }
  EXPECT_EQ(queue.stats().steps_held, 0u);
  queue.join("late", 0, block_group(1, StartAt::kNewest));
  EXPECT_FALSE(queue.begin(0, 10));  // the late group holds step 0
  EXPECT_EQ(read_step(queue, "late", 0), 0);
  ASSERT_TRUE(write_step(queue, 10));
  EXPECT_EQ(read_step(queue, "late", 0), 10);
  EXPECT_EQ(read_step(queue, "g", 0), 10);

  StepQueue alone(precious_stream(1, 1));  // no group: step 0 kept, later ones dropped unread
  for (std::int64_t step = 0; step < 4; ++step) ASSERT_TRUE(write_step(alone, step)) << step;
  EXPECT_EQ(alone.held_steps(), std::vector<std::int64_t>{3});
  EXPECT_EQ(alone.stats().steps_dropped_unread, 2u);
  alone.join("g", 0, block_group(1));
  EXPECT_EQ(read_step(alone, "g", 0), 0);
  EXPECT_EQ(read_step(alone, "g", 0), 3);
  alone.close_writer(0);
  EXPECT_EQ(alone.next("g", 0).kind, Kind::kEnd);
  EXPECT_TRUE(alone.held_steps().empty());  // an ended run with the precious step kept aside
  EXPECT_EQ(alone.precious_step(), 0);
}

// The precious step is the first that completes: an aborted step before it is not.
TEST(StepQueue, ThePreciousStepIsTheFirstThatCompletes) {
  StepQueue queue(precious_stream(1, 2));
  ASSERT_TRUE(queue.begin(0, 0));
  queue.abort_step(0, "timed out");
  EXPECT_FALSE(queue.precious_step().has_value());
  ASSERT_TRUE(write_step(queue, 1));
  EXPECT_EQ(queue.precious_step(), 1);
  StepQueue plain(StreamConfig{1, 2});
  ASSERT_TRUE(write_step(plain, 0));
  EXPECT_FALSE(plain.precious_step().has_value());
  EXPECT_EQ(plain.stats().precious_step, -1);
}

// A discard group never holds the writers, also with the precious step: taken from it, the step
// stays kept aside for later groups.
TEST(StepQueue, APreciousStepIsTakenFromADiscardGroupButKept) {
  StepQueue queue(precious_stream(1, 1));
  queue.join("slow", 0, discard_group(1));
  ASSERT_TRUE(write_step(queue, 0));
  ASSERT_TRUE(write_step(queue, 1));  // step 0 taken from the slow group
  EXPECT_EQ(queue.stats().groups.at("slow").discarded, 1u);
  EXPECT_EQ(queue.precious_step(), 0);
  EXPECT_EQ(read_step(queue, "slow", 0), 1);
  queue.join("late", 0, block_group(1, StartAt::kNewest));
  EXPECT_EQ(read_step(queue, "late", 0), 0);
}

}  // namespace
}  // namespace slipstream::stream
