// Internal to slipstream_stream: the full chunk strategies, the host-local first pass, and the
// parsed form of a strategy name that ChunkStrategy points to.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "slipstream/stream_chunks.hpp"

namespace slipstream::stream {

using Extent = std::vector<std::uint64_t>;

/// Chunk lists of readers 0..count-1 (local ranks when run among one host's readers).
using ReaderChunks = std::vector<ChunkTable>;

/// A full strategy: assigns every element of `chunks` among `reader_count` (>= 1) readers.
/// Inputs are already validated (chunks inside `global_extent`, `split_dimension` in range where
/// the strategy uses it). Pure and deterministic.
using FullStrategyFunction = ReaderChunks (*)(const Extent& global_extent, const ChunkTable& chunks,
                                              std::uint32_t reader_count,
                                              std::size_t split_dimension);

ReaderChunks assign_round_robin(const Extent& global_extent, const ChunkTable& chunks,
                                std::uint32_t reader_count, std::size_t split_dimension);
ReaderChunks assign_round_robin_of_source_ranks(const Extent& global_extent,
                                                const ChunkTable& chunks,
                                                std::uint32_t reader_count,
                                                std::size_t split_dimension);
ReaderChunks assign_blocks(const Extent& global_extent, const ChunkTable& chunks,
                           std::uint32_t reader_count, std::size_t split_dimension);
ReaderChunks assign_blocks_of_source_ranks(const Extent& global_extent, const ChunkTable& chunks,
                                           std::uint32_t reader_count, std::size_t split_dimension);
ReaderChunks assign_slice_dataset(const Extent& global_extent, const ChunkTable& chunks,
                                  std::uint32_t reader_count, std::size_t split_dimension);
ReaderChunks assign_bin_packing(const Extent& global_extent, const ChunkTable& chunks,
                                std::uint32_t reader_count, std::size_t split_dimension);

/// One row of the table of full strategies.
struct FullStrategyInfo {
  std::string_view name;  ///< lower case, no underscore (hostname_ names split at the last one)
  FullStrategyFunction assign;
  bool uses_split_dimension;  ///< assign() needs split_dimension < dimensionality
};

/// Every full strategy, in the order error messages list them.
std::span<const FullStrategyInfo> full_strategies();

/// The row called `lower_case_name`, or nullptr.
const FullStrategyInfo* find_full_strategy(std::string_view lower_case_name);

/// What a hostname_ strategy does with chunks its first pass could not place.
enum class LeftoverPolicy {
  kAssign,   ///< the fallback full strategy assigns them among all readers
  kDiscard,  ///< they go to Assignment::discarded
  kFail,     ///< assign() throws StrategyError
};

struct ChunkStrategy::Impl {
  std::string name;  ///< canonical lower-case name
  StrategyOptions options;
  /// The strategy itself, or <within> of a hostname_ strategy. Never null.
  const FullStrategyInfo* primary = nullptr;
  bool by_hostname = false;
  LeftoverPolicy leftover_policy = LeftoverPolicy::kAssign;
  /// <fallback> of a hostname_ strategy whose policy is kAssign; null otherwise.
  const FullStrategyInfo* fallback = nullptr;

  bool uses_split_dimension() const {
    return primary->uses_split_dimension || (fallback != nullptr && fallback->uses_split_dimension);
  }
};

/// First pass of hostname_<within>_<fallback>: every chunk whose writer's host (writers[rank])
/// has readers goes to those readers, split by `within` among them (local rank i is the i-th of
/// that host's readers by ascending global rank); hosts are taken in hostname order. The chunks
/// are appended to `by_reader` (keyed by global reader rank). Returns the chunks left over (hosts
/// without readers, source ranks missing from `writers`), in table order.
ChunkTable assign_by_hostname(const FullStrategyInfo& within, const Extent& global_extent,
                              const ChunkTable& chunks, const RankTable& writers,
                              const RankTable& readers, std::size_t split_dimension,
                              std::map<std::uint32_t, ChunkTable>& by_reader);

/// The message the `fail` fallback throws for `leftover`: how many chunks and elements, and from
/// which hosts (or writer ranks without a hostname).
std::string describe_leftover(std::string_view strategy_name, const ChunkTable& leftover,
                              const RankTable& writers);

/// The no_empty_readers pass (see StrategyOptions::no_empty_readers).
void fill_empty_readers(std::map<std::uint32_t, ChunkTable>& by_reader);

}  // namespace slipstream::stream
