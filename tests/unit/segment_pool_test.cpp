// SegmentPool (the segments a stream lends its writers): a writer keeps enough free segments for
// the steps its stream may hold, so steady writing never makes a new segment, however far ahead of
// the freed steps the queue limit lets it run; segments of sizes it no longer asks for, and more
// than the limit's worth of one size, go and are reported as dropped.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "server/shm/shm.hpp"
#include "server/stream/segment_pool.hpp"
#include "server/stream/stream_error.hpp"
#include "segment_creator.hpp"

namespace slipstream::server {
namespace {

class SegmentPoolTest : public ::testing::Test {
 protected:
  // Writer 0's segments for `step`, one per size, for a stream that holds `held` steps.
  std::vector<SegmentPool::Lent> lend(std::int64_t step, std::size_t held,
                                      std::vector<std::size_t> sizes = {4096}) {
    dropped_.clear();
    return pool_.lend(0, step, sizes, held, create_, &dropped_);
  }
  static std::size_t fresh(const std::vector<SegmentPool::Lent>& lent) {
    return static_cast<std::size_t>(
        std::count_if(lent.begin(), lent.end(), [](const auto& l) { return l.fresh; }));
  }

  SharedMemory shm_{64 << 20};
  SegmentPool::Create create_ = segment_creator(shm_);
  SegmentPool pool_;
  std::vector<std::uint64_t> dropped_;
};

// Queue limit 3: steps 1-3 are held, then 1 and 2 are freed together (readers released two
// steps between the writer's requests). Steps 4 and 5 reuse both freed segments: before, lending
// step 4 destroyed the second free one and step 5 had to make (and its readers map) a new one,
// at every step of a writer running two steps ahead.
TEST_F(SegmentPoolTest, AWriterAheadOfTheFreedStepsReusesEveryFreeSegment) {
  std::vector<std::shared_ptr<ShmWriterSegment>> made;
  for (std::int64_t step = 1; step <= 3; ++step) {
    const auto lent = lend(step, 3);
    EXPECT_EQ(fresh(lent), 1u);
    made.push_back(lent[0].segment);
  }
  pool_.step_freed(1);
  pool_.step_freed(2);
  const auto four = lend(4, 3);
  EXPECT_EQ(fresh(four), 0u);
  EXPECT_TRUE(dropped_.empty());
  const auto five = lend(5, 3);
  EXPECT_EQ(fresh(five), 0u);
  EXPECT_TRUE(dropped_.empty());
  EXPECT_NE(four[0].segment, five[0].segment);
  for (const auto& lent : {four, five}) {
    EXPECT_TRUE(lent[0].segment == made[0] || lent[0].segment == made[1]);
  }
  EXPECT_EQ(pool_.count(), 3u);

  // Steady writing from here makes nothing new.
  for (std::int64_t step = 6; step <= 40; ++step) {
    pool_.step_freed(step - 3);
    EXPECT_EQ(fresh(lend(step, 3)), 0u) << "step " << step;
  }
  EXPECT_EQ(pool_.count(), 3u);
  EXPECT_EQ(pool_.bytes(), 3u * 4096);
}

// One step of three chunks of a size, then steps of one: with a queue limit of 2 the writer keeps
// at most two of that size; the third is destroyed and reported as dropped, so that its mapping
// goes too.
TEST_F(SegmentPoolTest, SegmentsPastTheLimitsWorthOfASizeGo) {
  const auto first = lend(1, 2, {4096, 4096, 4096});
  EXPECT_EQ(fresh(first), 3u);
  pool_.step_freed(1);
  const auto second = lend(2, 2);
  EXPECT_EQ(fresh(second), 0u);
  EXPECT_EQ(dropped_.size(), 1u);
  EXPECT_EQ(pool_.count(), 2u);
  pool_.step_freed(2);
  EXPECT_EQ(fresh(lend(3, 2)), 0u);
  EXPECT_TRUE(dropped_.empty());
  EXPECT_EQ(pool_.count(), 2u);
}

// A writer whose chunks change size gives back its free segments of the old size.
TEST_F(SegmentPoolTest, FreeSegmentsOfASizeNoLongerAskedForGo) {
  lend(1, 3);
  lend(2, 3);
  pool_.step_freed(1);
  pool_.step_freed(2);
  const auto bigger = lend(3, 3, {8192});
  EXPECT_EQ(fresh(bigger), 1u);
  EXPECT_EQ(dropped_.size(), 2u);
  EXPECT_EQ(pool_.count(), 1u);
  EXPECT_EQ(pool_.bytes(), 8192u);
}

// A busy segment (its step not freed yet) is never lent again nor destroyed by a lend.
TEST_F(SegmentPoolTest, BusySegmentsStayOut) {
  const auto one = lend(1, 1);
  const auto two = lend(2, 1);  // the stream's queue would not allow this; the pool must not care
  EXPECT_EQ(fresh(two), 1u);
  EXPECT_NE(one[0].segment, two[0].segment);
  EXPECT_TRUE(dropped_.empty());
  EXPECT_EQ(pool_.count(), 2u);
  pool_.step_freed(1);
  pool_.step_freed(2);
  lend(3, 1);
  EXPECT_EQ(dropped_.size(), 1u);  // one step's worth is kept
  EXPECT_EQ(pool_.count(), 1u);
}

// A size class holds the chunk, at most an eighth more (and a page), is a whole number of pages,
// and is its own class (a writer that asks again with the size it was lent gets the same class).
// BUG (issue 26.C3): lending was cubic in the segments reused (8,000 reused segments stalled the
// server's other clients for 14 s). It is linear now: a writer of 4,800
// chunks a step reuses every segment, each once, step after step, in a blink.
TEST(SegmentPoolScale, ThousandsOfSegmentsAreReusedEachOnce) {
  SharedMemory shm{std::size_t{160} << 20};
  const SegmentPool::Create create = segment_creator(shm);
  SegmentPool pool;
  std::vector<std::uint64_t> dropped;
  const std::vector<std::size_t> sizes(4800, 4096);  // two steps: within the pool's 10,000
  std::set<std::uint64_t> first;
  for (std::int64_t step = 1; step <= 4; ++step) {
    const auto lent = pool.lend(0, step, sizes, 2, create, &dropped);
    ASSERT_EQ(lent.size(), sizes.size());
    std::set<std::uint64_t> ids;
    for (const auto& one : lent) {
      ids.insert(one.segment->id());
      pool.use(0, step, one.segment->id(), 4096);
    }
    EXPECT_EQ(ids.size(), sizes.size()) << "a segment was lent twice in step " << step;
    if (step <= 2) {
      for (const auto& one : lent) EXPECT_TRUE(one.fresh);
      first.insert(ids.begin(), ids.end());
    } else {
      for (const auto& one : lent) ASSERT_FALSE(one.fresh) << "step " << step;
      EXPECT_TRUE(std::includes(first.begin(), first.end(), ids.begin(), ids.end()));
    }
    EXPECT_TRUE(dropped.empty());
    if (step >= 2) pool.step_freed(step - 1);  // a queue of two steps
  }
  EXPECT_EQ(pool.made(), 2 * sizes.size());
}

TEST(SegmentSizeClass, HoldsTheChunkWithLittleWasteInWholePages) {
  EXPECT_EQ(SegmentPool::size_class(0), 4096u);
  EXPECT_EQ(SegmentPool::size_class(1), 4096u);
  EXPECT_EQ(SegmentPool::size_class(4096), 4096u);
  EXPECT_EQ(SegmentPool::size_class(4097), 8192u);
  EXPECT_EQ(SegmentPool::size_class(40000), 40960u);
  EXPECT_EQ(SegmentPool::size_class(1u << 20), 1u << 20);
  EXPECT_EQ(SegmentPool::size_class((1u << 20) + 1), (1u << 20) + (1u << 17));
  std::uint64_t state = 42;
  for (int i = 0; i < 100000; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const std::size_t bytes = static_cast<std::size_t>(state >> (20 + state % 30));
    const std::size_t size = SegmentPool::size_class(bytes);
    ASSERT_GE(size, bytes);
    ASSERT_EQ(size % 4096, 0u) << bytes;
    ASSERT_LE(size, bytes + bytes / 8 + 4096) << bytes;
    ASSERT_EQ(SegmentPool::size_class(size), size) << bytes;
  }
}

// Particle records change size from step to step: a chunk within the class of a freed segment
// reuses it (and may be smaller than it); a chunk larger than its segment is refused. A pool
// without size classes (a cluster member's, whose chunks are their whole segments) makes each
// segment exactly the size asked for.
TEST_F(SegmentPoolTest, ChunksOfChangingSizeReuseTheSegmentsOfTheirSizeClass) {
  const std::size_t first = 100000, second = 101000, third = 99000;
  ASSERT_EQ(SegmentPool::size_class(first), SegmentPool::size_class(second));
  ASSERT_EQ(SegmentPool::size_class(first), SegmentPool::size_class(third));
  const auto one = lend(1, 2, {first});
  EXPECT_EQ(one[0].segment->size(), SegmentPool::size_class(first));
  EXPECT_NO_THROW(pool_.use(0, 1, one[0].segment->id(), first));
  pool_.step_freed(1);
  const auto two = lend(2, 2, {second});
  EXPECT_EQ(fresh(two), 0u);
  EXPECT_EQ(two[0].segment, one[0].segment);
  EXPECT_THROW(pool_.use(0, 2, two[0].segment->id(), two[0].segment->size() + 1), StreamError);
  EXPECT_NO_THROW(pool_.use(0, 2, two[0].segment->id(), third));
  EXPECT_EQ(pool_.made(), 1u);

  SegmentPool exact(/*size_classes=*/false);
  std::vector<std::uint64_t> dropped;
  const std::size_t sizes[] = {first};
  const auto lent = exact.lend(0, 1, sizes, 2, create_, &dropped);
  EXPECT_EQ(lent[0].segment->size(), first);
  EXPECT_THROW(exact.use(0, 1, lent[0].segment->id(), third), StreamError);
  EXPECT_NO_THROW(exact.use(0, 1, lent[0].segment->id(), first));
}

}  // namespace
}  // namespace slipstream::server
