// Tests for CRC-64/Jones (src/common/crc64.hpp): the published check value, chaining, and the
// slicing-by-8 path against a bit-at-a-time reference.
#include "common/crc64.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace slipstream {
namespace {

// The textbook definition, one bit at a time: slow but obviously right.
std::uint64_t reference_crc64(std::string_view bytes) {
  std::uint64_t crc = 0;
  for (unsigned char byte : bytes) {
    crc ^= byte;
    for (int bit = 0; bit < 8; ++bit) {
      crc = (crc & 1) != 0 ? (crc >> 1) ^ 0x95ac9329ac4bc9b5ULL : crc >> 1;
    }
  }
  return crc;
}

std::string pseudo_random_bytes(std::size_t size) {
  std::string bytes(size, '\0');
  std::uint64_t state = 0x9e3779b97f4a7c15ULL;
  for (char& c : bytes) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    c = static_cast<char>(state);
  }
  return bytes;
}

TEST(Crc64, CheckValueMatchesRedis) {
  // Redis's crc64.c asserts this value for CRC-64/Jones.
  EXPECT_EQ(crc64(0, "123456789"), 0xe9c6d914c4b8d9caULL);
}

TEST(Crc64, EmptyInputLeavesCrcUnchanged) {
  EXPECT_EQ(crc64(0, ""), 0u);
  EXPECT_EQ(crc64(0x1234, ""), 0x1234u);
}

TEST(Crc64, ChainsAcrossSplits) {
  const std::string data = pseudo_random_bytes(1000);
  const std::uint64_t whole = crc64(0, data);
  for (std::size_t split : {0, 1, 7, 8, 9, 500, 999, 1000}) {
    const std::string_view view(data);
    EXPECT_EQ(crc64(crc64(0, view.substr(0, split)), view.substr(split)), whole) << split;
  }
}

TEST(Crc64, MatchesBitwiseReferenceAtEveryLengthAndAlignment) {
  const std::string data = pseudo_random_bytes(300);
  for (std::size_t offset = 0; offset < 8; ++offset) {
    for (std::size_t length = 0; length + offset <= 80; ++length) {
      const std::string_view slice = std::string_view(data).substr(offset, length);
      ASSERT_EQ(crc64(0, slice), reference_crc64(slice)) << offset << "+" << length;
    }
  }
  EXPECT_EQ(crc64(0, data), reference_crc64(data));
}

}  // namespace
}  // namespace slipstream
