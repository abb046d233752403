// The shared-memory pool's spares never cost a value its room, however the background thread
// that makes them is timed against the loan that needs the room.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "server/shm/shm.hpp"

namespace slipstream::server {
namespace {

using namespace std::chrono_literals;

constexpr std::size_t kMiB = std::size_t{1} << 20;

std::unique_ptr<ShmLoan> lend(SharedMemory& shm, std::size_t bytes, std::string* error) {
  ShmFailure failure = ShmFailure::kNone;
  return shm.lend(bytes, MemoryReservation(), &failure, error);
}

// Waits (bounded) until the thread has reserved room for `bytes` of spares, made or being made.
bool spares_counted(const ShmCounters& counters, std::size_t bytes) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (counters.spare_bytes.load() < bytes) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

// A loan that fits only without the spare the thread is making at that moment: the spare gives
// way (before, the room it had reserved was refused to the loan while the file was being made).
TEST(ShmSparePoolTest, ASpareBeingMadeGivesWayToALoanThatNeedsItsRoom) {
  const std::size_t capacity = 1024 * kMiB;
  for (int round = 0; round < 3; ++round) {
    SharedMemory shm(capacity);
    const ShmCounters& counters = *shm.counters();
    std::string error;
    // A first loan of 240 MiB teaches the class; the thread starts a 240 MiB spare at once
    // (a quarter of the pool at most, while the pool is under three quarters full).
    auto first = lend(shm, 240 * kMiB, &error);
    ASSERT_TRUE(first) << error;
    ASSERT_TRUE(spares_counted(counters, 1));
    // Everything else the pool holds: 1024 - 240 MiB.
    auto rest = lend(shm, capacity - 240 * kMiB, &error);
    ASSERT_TRUE(rest) << "round " << round << ": " << error;
    EXPECT_EQ(counters.used_bytes.load(), capacity);
    EXPECT_EQ(counters.spare_bytes.load(), 0u);
    EXPECT_EQ(counters.total_refusals.load(), 0u);
  }
}

// Spares dropped for a loan are not made again before the loan has its room, and whatever the
// thread makes afterwards fits beside the values.
TEST(ShmSparePoolTest, LoansThatNeedTheSparesRoomAlwaysGetIt) {
  const std::size_t capacity = 8 * kMiB;
  for (int round = 0; round < 50; ++round) {
    SharedMemory shm(capacity);
    const ShmCounters& counters = *shm.counters();
    std::string error;
    auto small = lend(shm, kMiB, &error);
    ASSERT_TRUE(small) << error;
    ASSERT_TRUE(spares_counted(counters, 2 * kMiB));  // a quarter of the pool
    auto big = lend(shm, 7 * kMiB, &error);  // fits only once every spare is gone
    ASSERT_TRUE(big) << "round " << round << ": " << error;
    EXPECT_LE(counters.used_bytes.load(), capacity);
    EXPECT_EQ(counters.total_refusals.load(), 0u);
  }
}

// Waits (bounded) until `count` spares are made and ready.
bool spares_ready(const ShmCounters& counters, std::uint64_t count) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (counters.spares_ready.load() < count) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

// Loans lent ahead with a commit (SS.SHM.COMMIT ... LEND) are spares already made, never files
// made on the spot, and together they hold at most a quarter of the pool: clients holding them
// between puts cannot take the room of values. Committing or dropping one gives its share back.
TEST(ShmSparePoolTest, LoansLentAheadComeFromSparesWithinAQuarterOfThePool) {
  SharedMemory shm(32 * kMiB);
  const ShmCounters& counters = *shm.counters();
  const std::size_t size = 4 * kMiB;  // whole huge pages: the file is the size either way
  EXPECT_FALSE(shm.lend_ahead(size, MemoryReservation()));  // no spare of the size yet
  EXPECT_EQ(counters.pool_misses.load(), 0u);               // and none was made on the spot
  EXPECT_EQ(counters.loans_ahead_bytes.load(), 0u);

  ASSERT_TRUE(spares_ready(counters, 2));  // the ask taught the class: the thread made two
  auto first = shm.lend_ahead(size, MemoryReservation());
  ASSERT_TRUE(first);
  EXPECT_EQ(first->size(), size);
  EXPECT_EQ(counters.loans_ahead.load(), 1u);
  EXPECT_EQ(counters.loans_ahead_bytes.load(), size);
  ASSERT_TRUE(spares_ready(counters, 2));
  auto second = shm.lend_ahead(size, MemoryReservation());
  ASSERT_TRUE(second);
  EXPECT_EQ(counters.loans_ahead_bytes.load(), 2 * size);

  // A third would pass a quarter of the pool (12 of 8 MiB): refused, though a spare is ready.
  ASSERT_TRUE(spares_ready(counters, 2));
  EXPECT_FALSE(shm.lend_ahead(size, MemoryReservation()));
  EXPECT_EQ(counters.spares_ready.load(), 2u);
  EXPECT_EQ(counters.loans_ahead.load(), 2u);

  first.reset();  // dropped (the client gave it back): its share is free again
  EXPECT_EQ(counters.loans_ahead_bytes.load(), size);
  auto third = shm.lend_ahead(size, MemoryReservation());
  ASSERT_TRUE(third);
  std::string error;
  std::optional<Buffer> stored = shm.seal(std::move(second), &error);  // committed
  ASSERT_TRUE(stored) << error;
  EXPECT_EQ(counters.loans_ahead.load(), 1u);
  EXPECT_EQ(counters.loans_ahead_bytes.load(), size);
  third.reset();
  EXPECT_EQ(counters.loans_ahead.load(), 0u);
  EXPECT_EQ(counters.loans_ahead_bytes.load(), 0u);
  EXPECT_EQ(counters.total_refusals.load(), 0u);
}

}  // namespace
}  // namespace slipstream::server
