// ChunkStore (colocated chunks on a writer's shard): segments are lent again only after their
// step was freed, never after the bound pushed a step out (readers may still map it); a freed step
// leaves the writer's window; drops free a failed writer's chunks without refusing a later run's;
// ids start at random; names are bounded.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "server/shm/shm.hpp"
#include "server/stream/chunk_store.hpp"
#include "server/stream/stream_error.hpp"
#include "segment_creator.hpp"

namespace slipstream::server {
namespace {

class ChunkStoreTest : public ::testing::Test {
 protected:
  // Segments of `size` bytes for `step` of writer 0 of stream "s" on session 1.
  std::vector<ChunkStore::Lent> lend(std::int64_t step, std::size_t limit, std::size_t size = 4096) {
    const std::size_t sizes[] = {size};
    std::vector<std::uint64_t> dropped;
    return store_.lend(writer_, step, limit, sizes, create_, &dropped);
  }
  std::uint64_t put(std::int64_t step, std::size_t limit, const std::string& stream = "s") {
    ChunkStore::Writer writer = writer_;
    writer.stream = stream;
    return store_.put(writer, step, limit, Buffer::copy_of("bytes"), MemoryReservation());
  }
  bool held(std::uint64_t id) {
    try {
      const std::uint64_t ids[] = {id};
      store_.get(ids);
      return true;
    } catch (const StreamError&) {
      return false;
    }
  }

  SharedMemory shm_{64 << 20};
  SegmentPool::Create create_ = segment_creator(shm_);
  ChunkStore store_;
  ChunkStore::Writer writer_{1, "s", 0};
};

TEST_F(ChunkStoreTest, AFreedStepsSegmentsAreLentAgain) {
  const auto first = lend(1, 2);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_TRUE(first[0].lent.fresh);
  const std::uint64_t ids[] = {first[0].id};
  EXPECT_EQ(store_.free(ids), 1u);
  const auto second = lend(2, 2);
  EXPECT_FALSE(second[0].lent.fresh);
  EXPECT_EQ(second[0].lent.segment, first[0].lent.segment);
  EXPECT_NE(second[0].id, first[0].id);  // a new chunk id for the new step
}

// Limit 2: steps 1 and 2 are held (their frees have not come); asking for step 3 pushes step 1
// out. Its segment must never be lent again, since a reader of step 1 may still map it.
TEST_F(ChunkStoreTest, TheBoundNeverLendsAnEvictedStepsSegmentAgain) {
  const auto one = lend(1, 2), two = lend(2, 2);
  const auto three = lend(3, 2);
  EXPECT_FALSE(held(one[0].id));
  EXPECT_TRUE(held(two[0].id));
  EXPECT_TRUE(three[0].lent.fresh);
  const auto four = lend(4, 2);  // pushes step 2 out
  EXPECT_TRUE(four[0].lent.fresh);
  for (const auto& lent : {three, four}) {
    EXPECT_NE(lent[0].lent.segment, one[0].lent.segment);
    EXPECT_NE(lent[0].lent.segment, two[0].lent.segment);
  }
}

// A step whose chunks were all freed (aborted, or freed late) no longer counts against the bound.
TEST_F(ChunkStoreTest, AFreedStepLeavesTheWindow) {
  const std::uint64_t one = put(1, 2), two = put(2, 2);
  const std::uint64_t ids[] = {one};
  store_.free(ids);
  const std::uint64_t three = put(3, 2);
  EXPECT_TRUE(held(two));  // still within the last 2 steps with chunks
  EXPECT_TRUE(held(three));
  put(4, 2);
  EXPECT_FALSE(held(two));
}

TEST_F(ChunkStoreTest, DropsFreeAFailedWritersChunksAndDoNotRefuseALaterRun) {
  const std::uint64_t a = put(5, 4), b = put(6, 4), c = put(5, 4, "other");
  const std::int64_t steps[] = {5, 6};
  EXPECT_EQ(store_.drop("s", 0, steps), 2u);
  EXPECT_FALSE(held(a));
  EXPECT_FALSE(held(b));
  EXPECT_TRUE(held(c));  // another stream's
  EXPECT_TRUE(held(put(5, 4)));  // a new run reaching step 5 again is taken
}

TEST_F(ChunkStoreTest, IdsStartAtRandomAndNamesAreBounded) {
  ChunkStore other;
  ChunkStore::Writer writer = writer_;
  const std::uint64_t mine = put(1, 2);
  const std::uint64_t theirs =
      other.put(writer, 1, 2, Buffer::copy_of("x"), MemoryReservation());
  EXPECT_NE(mine, theirs);
  EXPECT_GT(mine, 1u << 20);
  EXPECT_THROW(put(1, 2, std::string(ChunkStore::kMaxStreamName + 1, 'n')), StreamError);
}

}  // namespace
}  // namespace slipstream::server
