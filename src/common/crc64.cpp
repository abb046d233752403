// CRC-64/Jones with slicing-by-8 tables built at compile time; see crc64.hpp.
#include "common/crc64.hpp"

#include <array>
#include <cstddef>

namespace slipstream {
namespace {

// The Jones polynomial 0xad93d23594c935a9, bit-reversed because the CRC is reflected.
constexpr std::uint64_t kReflectedPolynomial = 0x95ac9329ac4bc9b5ULL;

using Tables = std::array<std::array<std::uint64_t, 256>, 8>;

// tables[0] is the classic byte-at-a-time table; tables[k][b] is the CRC of byte b followed by k
// zero bytes, which lets one round fold eight input bytes with eight independent lookups.
constexpr Tables make_tables() {
  Tables tables{};
  for (std::uint64_t byte = 0; byte < 256; ++byte) {
    std::uint64_t crc = byte;
    for (int bit = 0; bit < 8; ++bit) {
      crc = (crc & 1) != 0 ? (crc >> 1) ^ kReflectedPolynomial : crc >> 1;
    }
    tables[0][byte] = crc;
  }
  for (std::size_t k = 1; k < tables.size(); ++k) {
    for (std::size_t byte = 0; byte < 256; ++byte) {
      const std::uint64_t previous = tables[k - 1][byte];
      tables[k][byte] = (previous >> 8) ^ tables[0][previous & 0xff];
    }
  }
  return tables;
}

constexpr Tables kTables = make_tables();

}  // namespace

std::uint64_t crc64(std::uint64_t crc, std::string_view bytes) noexcept {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  std::size_t n = bytes.size();
  while (n >= 8) {
    // Assembled little-endian byte by byte so the result is the same on any host; compilers turn
    // this into a single load on little-endian machines.
    std::uint64_t word = 0;
    for (int i = 7; i >= 0; --i) word = (word << 8) | p[i];
    crc ^= word;
    crc = kTables[7][crc & 0xff] ^ kTables[6][(crc >> 8) & 0xff] ^ kTables[5][(crc >> 16) & 0xff] ^
          kTables[4][(crc >> 24) & 0xff] ^ kTables[3][(crc >> 32) & 0xff] ^
          kTables[2][(crc >> 40) & 0xff] ^ kTables[1][(crc >> 48) & 0xff] ^ kTables[0][crc >> 56];
    p += 8;
    n -= 8;
  }
  for (; n > 0; --n, ++p) crc = kTables[0][(crc ^ *p) & 0xff] ^ (crc >> 8);
  return crc;
}

}  // namespace slipstream
