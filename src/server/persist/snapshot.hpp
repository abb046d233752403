// Snapshot persistence: writes the whole keyspace to one checksummed file (SAVE, shutdown) and
// loads it back at startup.
//
// File format, version 1. Every integer is little-endian; a "blob" is a u64 length then the bytes.
//
//   header   "SLIPSNAP" | u32 format version (1) | u64 key count
//   entry    u8 type tag | blob key | payload, one entry per key, in no particular order
//              tag 0 string: blob value
//              tag 1 tensor: u8 dtype (DType's value) | u32 rank | i64 dims[rank] | blob data
//                            (data is row-major, exactly prod(dims) * dtype_size(dtype) bytes)
//              tag 2 hash:   u64 field count | (blob field, blob value) per field, insertion order
//              tag 3 list:   u64 item count | blob item per item, head first
//              tag 4 model:  blob backend | blob device | blob tag | u64 batch size |
//                            u64 min batch size | u64 min batch timeout (ms) | names inputs |
//                            names outputs | u64 version | blob serialized model
//              tag 5 script: blob device | blob tag | names entry points | u64 version |
//                            blob source
//              (names: u64 count | blob name per name)
//   trailer  u64 CRC-64/Jones (Redis's RDB checksum, see common/crc64.hpp) of every byte before it
//
// A change to this layout must bump kSnapshotFormatVersion: older servers then refuse the file by
// name instead of misreading it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <stdexcept>

#include "server/store/keyspace.hpp"

namespace slipstream::server {

inline constexpr std::uint32_t kSnapshotFormatVersion = 1;

struct SnapshotStats {
  std::size_t keys = 0;   ///< keys written or loaded
  std::size_t bytes = 0;  ///< size of the snapshot file, trailer included
};

/// Why a snapshot could not be written or read; what() names the file and the cause.
class SnapshotError : public std::runtime_error {
 public:
  using runtime_error::runtime_error;
};

/// Writes every key of `keyspace` to `path` atomically: a temporary file in the same directory
/// (`<name>.tmp-<pid>-<n>`, mode 0600, as the snapshot), fsync, rename over `path`, fsync of the
/// directory. A crash at any
/// point leaves the previous snapshot intact (a crash may leave the temporary file behind; it is
/// never read). Keys written concurrently may or may not be included; each value is saved as one
/// consistent version. Blocks for the whole write and does not hold keyspace locks meanwhile.
/// Throws SnapshotError with a message naming the path and the OS error; the temporary file is
/// removed and `path` is unchanged, except when only the final directory fsync fails (then the
/// new snapshot is in place but its durability is unknown).
SnapshotStats save_snapshot(const Keyspace& keyspace, const std::filesystem::path& path);

/// Removes the temporary files that saves of `path` killed mid-write left behind
/// (`<name>.tmp-<pid>-<n>` beside it), except those of a save still running in another live
/// process. Call at start-up, before this process saves. Returns how many were removed; files
/// that cannot be removed are skipped (the next start tries again).
std::size_t remove_stale_temp_files(const std::filesystem::path& path);

/// Models and scripts are loaded without a runtime (load_error "not loaded yet"): the caller
/// compiles them with its backend.
/// Loads the snapshot at `path` into `keyspace` (normally empty; existing keys with the same
/// names are replaced). Checks the magic, the format version and the CRC-64 over the whole file,
/// then parses and validates every entry (type tags, dtypes, tensor sizes) before inserting
/// anything. A missing, truncated, corrupt or foreign file throws SnapshotError and leaves
/// `keyspace` untouched. Peak memory is about the loaded data: the file is read in a streaming
/// pass for the checksum and a second one that reads tensor bytes straight into their buffers.
SnapshotStats load_snapshot(Keyspace& keyspace, const std::filesystem::path& path);

}  // namespace slipstream::server
