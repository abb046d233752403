// Redis Cluster hash slots: CRC16 (XMODEM) of a key, or of its {hash tag}, modulo 16384. Shared by
// the server (MOVED / CROSSSLOT checks, CLUSTER KEYSLOT) and the client (request routing).
#pragma once

#include <cstdint>
#include <string_view>

namespace slipstream {

/// Number of hash slots, as in Redis Cluster.
inline constexpr int kSlotCount = 16384;

/// CRC-16/XMODEM (polynomial 0x1021, initial value 0, no reflection, no final xor), the checksum
/// Redis Cluster hashes keys with. The check value for "123456789" is 0x31C3. Thread-safe (pure).
std::uint16_t crc16(std::string_view bytes) noexcept;

/// The part of `key` that is hashed: the content of the first `{...}` when it is not empty (the
/// first '{' and the first '}' after it), else the whole key. Redis Cluster's rules exactly.
std::string_view hash_tag(std::string_view key) noexcept;

/// The slot of `key`, in [0, kSlotCount): crc16(hash_tag(key)) mod 16384.
int key_slot(std::string_view key) noexcept;

}  // namespace slipstream
