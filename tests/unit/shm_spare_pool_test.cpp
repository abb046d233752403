// The shared-memory pool's spares never cost a value its room, however the background thread
// that makes them is timed against the loan that needs the room.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
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

}  // namespace
}  // namespace slipstream::server
