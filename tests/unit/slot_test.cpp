// Tests for Redis Cluster key slots (src/common/slot.hpp) against Redis's own test vectors.
#include "common/slot.hpp"

#include <gtest/gtest.h>

namespace slipstream {
namespace {

TEST(Crc16, CheckValue) {
  EXPECT_EQ(crc16("123456789"), 0x31C3);
  EXPECT_EQ(crc16(""), 0);
}

TEST(KeySlot, KnownSlots) {
  // Values as `CLUSTER KEYSLOT` reports them on Redis 7.
  EXPECT_EQ(key_slot("foo"), 12182);
  EXPECT_EQ(key_slot("bar"), 5061);
  EXPECT_EQ(key_slot("hello"), 866);
  EXPECT_EQ(key_slot(""), 0);
}

TEST(KeySlot, SlotsAreInRange) {
  for (int i = 0; i < 10000; ++i) {
    int slot = key_slot("key:" + std::to_string(i));
    EXPECT_GE(slot, 0);
    EXPECT_LT(slot, kSlotCount);
  }
}

TEST(HashTag, SameTagSameSlot) {
  EXPECT_EQ(key_slot("{user1000}.following"), key_slot("{user1000}.followers"));
  EXPECT_EQ(key_slot("{user1000}.following"), key_slot("user1000"));
  EXPECT_EQ(key_slot("prefix.{ds}.meta"), key_slot("{ds}.tensor"));
}

TEST(HashTag, Rules) {
  EXPECT_EQ(hash_tag("foo"), "foo");
  EXPECT_EQ(hash_tag("{user1000}.following"), "user1000");
  // An empty tag hashes the whole key, even when a later one is not empty.
  EXPECT_EQ(hash_tag("foo{}{bar}"), "foo{}{bar}");
  EXPECT_EQ(key_slot("foo{}{bar}"), crc16("foo{}{bar}") % kSlotCount);
  // The first '{' and the first '}' after it.
  EXPECT_EQ(hash_tag("foo{{bar}}zap"), "{bar");
  EXPECT_EQ(key_slot("foo{{bar}}zap"), key_slot("{bar"));
  EXPECT_EQ(hash_tag("foo{bar}{zap}"), "bar");
  EXPECT_EQ(key_slot("foo{bar}{zap}"), key_slot("bar"));
  // No closing brace: the whole key.
  EXPECT_EQ(hash_tag("foo{bar"), "foo{bar");
  EXPECT_EQ(hash_tag("}foo{"), "}foo{");
}

}  // namespace
}  // namespace slipstream
