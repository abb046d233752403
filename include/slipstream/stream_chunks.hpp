// Stream data model: the chunk table of one record component in one step, and the strategies by
// which a group of readers splits that table among themselves (after openPMD-api's ChunkInfo).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "slipstream/export.hpp"

namespace slipstream::stream {

/// A box of a record component: `extent[d]` elements from `offset[d]` in each dimension d, written
/// by writer rank `source_rank`. Both vectors have one entry per dimension of the component.
struct Chunk {
  std::vector<std::uint64_t> offset;
  std::vector<std::uint64_t> extent;
  std::uint32_t source_rank = 0;

  /// The product of `extent` (1 for zero dimensions, 0 when any extent is 0). The caller keeps
  /// the product below 2^64; validated chunks (see ChunkStrategy::assign) always do.
  SLIPSTREAM_API std::uint64_t element_count() const noexcept;

  friend bool operator==(const Chunk&, const Chunk&) = default;
};

/// The chunks of one record component in one step, in the order the writers registered them.
using ChunkTable = std::vector<Chunk>;

/// Rank -> hostname, for the writers or for the readers of a group.
using RankTable = std::map<std::uint32_t, std::string>;

/// The result of a strategy for a whole reader group.
struct Assignment {
  /// Reader rank -> its chunks. Every reader rank 0..M-1 is a key, possibly with no chunks.
  std::map<std::uint32_t, ChunkTable> by_reader;
  /// Chunks no reader got (only the `discard` fallback puts chunks here).
  ChunkTable discarded;

  friend bool operator==(const Assignment&, const Assignment&) = default;
};

/// A bad strategy name, bad options, or inputs that break assign()'s contract; also thrown by the
/// `fail` fallback when chunks were left over. what() says what was wrong and what was expected.
/// Derives from std::runtime_error rather than slipstream::Error because this library links
/// nothing but the standard library (slipstream::Error lives in the client library).
class SLIPSTREAM_API StrategyError : public std::runtime_error {
 public:
  explicit StrategyError(const std::string& message) : std::runtime_error(message) {}
  ~StrategyError() override;
};

/// Options shared by all strategies.
struct StrategyOptions {
  /// The dimension along which `slicedataset` cuts the global extent and `binpacking` cuts chunks.
  /// Must be below the component's dimensionality when one of those strategies is used.
  std::size_t split_dimension = 0;
  /// After the strategy, give every reader that got no elements a piece of another reader's work,
  /// by halving the largest piece along its longest dimension (or, when no piece has more than one
  /// element, by moving a one-element piece from a reader that has several elements). This
  /// changes chunk boundaries but never loses or duplicates elements and keeps source ranks.
  /// Afterwards no reader is empty when the assigned chunks hold at least M elements.
  bool no_empty_readers = false;
};

/// Where block `index` of `length` items split into `parts` near-equal contiguous blocks begins:
/// (length / parts) * index + ceil((length % parts) * index / parts), so block_begin(L, M, M) == L.
/// Block sizes differ by at most one (10 over 4 gives 3, 2, 3, 2). `parts` must be >= 1 and
/// `index` <= `parts`; `parts` must be below 2^32. This is how `blocks`, `blocksofsourceranks` and
/// `slicedataset` split their lists and extents, so a reader can compute its own slab with it.
SLIPSTREAM_API std::uint64_t block_begin(std::uint64_t length, std::uint64_t parts,
                                         std::uint64_t index);

/// A chunk distribution strategy: a pure, deterministic function from (global extent, chunk
/// table, writers' hosts, readers' hosts) to an Assignment, so that every reader of a group
/// computes the same assignment locally and takes its own entry.
///
/// Names (case-insensitive; name() returns the lower-case form):
///   Full strategies, which assign every chunk:
///     roundrobin              chunk i of the table goes to reader i % M.
///     roundrobinofsourceranks the k-th distinct source rank (ascending) goes, with all its
///                             chunks, to reader k % M.
///     blocks                  the table is cut into M contiguous runs (see block_begin).
///     blocksofsourceranks     the sorted distinct source ranks are cut into M runs; a reader
///                             gets every chunk of its sources.
///     slicedataset            the global extent is cut into M slabs along split_dimension (see
///                             block_begin); each chunk's intersection with slab r goes to r.
///     binpacking              chunks are cut along split_dimension into pieces of about
///                             total/M elements and packed, largest first, so that no reader gets
///                             more than twice the ideal share when every piece fits the share.
///   Two-pass strategies:
///     hostname_<within>_<fallback>  chunks go to readers on their writer's host, split there by
///                             the full strategy <within>; what is left (hosts without readers,
///                             writers missing from the writers table) is then assigned among all
///                             readers by the full strategy <fallback>, or put in
///                             Assignment::discarded (`discard`), or makes assign() throw (`fail`).
///
/// Unlike openPMD-api, chunks keep their source rank, all readers are assigned at once, and every
/// ordering has a total tie-breaker, so results never depend on the standard library.
///
/// Thread safety: a ChunkStrategy is immutable; copies share state, and assign() may be called
/// from many threads at once.
class SLIPSTREAM_API ChunkStrategy {
 public:
  /// The strategy called `name` (see above) with `options`. Throws StrategyError for an unknown
  /// name; the message lists every valid name.
  static ChunkStrategy parse(std::string_view name, const StrategyOptions& options = {});

  /// The canonical (lower-case) name, e.g. "hostname_binpacking_discard".
  std::string name() const;

  /// The options given to parse().
  const StrategyOptions& options() const noexcept;

  /// Assigns `chunks` of a component of `global_extent` among the readers in `readers`.
  /// Contract, checked (StrategyError otherwise): `readers` has exactly the keys 0..M-1 with
  /// M >= 1; every chunk's offset and extent have as many entries as `global_extent` and lie
  /// within it; the global extent holds fewer than 2^64 elements; split_dimension is below the
  /// dimensionality when the strategy cuts along it. `writers` is only read by hostname_
  /// strategies. Chunks are not checked for overlap. Every element of every chunk ends up exactly
  /// once in the result, with its chunk's source rank; chunks without elements may be dropped by
  /// the strategies that cut chunks (slicedataset, binpacking). With the `fail` fallback, throws
  /// StrategyError naming the chunks, elements and hosts left over. The chunks are taken in
  /// canonical order (source rank, then offset, then extent) whatever order they come in, so the
  /// same layout gives every reader the same share every step, and every component of that layout
  /// the same shares.
  Assignment assign(const std::vector<std::uint64_t>& global_extent, const ChunkTable& chunks,
                    const RankTable& writers, const RankTable& readers) const;

 private:
  struct Impl;  // defined in src/stream/strategies.hpp
  explicit ChunkStrategy(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

  std::shared_ptr<const Impl> impl_;
};

}  // namespace slipstream::stream
