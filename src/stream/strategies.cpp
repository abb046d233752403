// The full chunk strategies: each assigns every element of a chunk table among a number of
// readers, deterministically (every ordering has a total tie-breaker).
#include "stream/strategies.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <vector>

namespace slipstream::stream {
namespace {

/// Source rank -> reader, for the strategies that keep all chunks of a writer together.
using ReaderOfSource = std::map<std::uint32_t, std::uint32_t>;

std::vector<std::uint32_t> distinct_source_ranks(const ChunkTable& chunks) {
  std::vector<std::uint32_t> ranks;
  ranks.reserve(chunks.size());
  for (const auto& chunk : chunks) ranks.push_back(chunk.source_rank);
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  return ranks;
}

ReaderChunks distribute_by_source(const ChunkTable& chunks, std::uint32_t reader_count,
                                  const ReaderOfSource& reader_of_source) {
  ReaderChunks out(reader_count);
  for (const auto& chunk : chunks) out[reader_of_source.at(chunk.source_rank)].push_back(chunk);
  return out;
}

/// A piece of a chunk for bin packing, with its element count cached.
struct Piece {
  Chunk chunk;
  std::uint64_t size;
};

/// Total order for bin packing: larger first, then lower source rank, then lower offset, then
/// lower extent (identical pieces are interchangeable, so any order among them is the same).
bool packs_before(const Piece& a, const Piece& b) {
  if (a.size != b.size) return a.size > b.size;
  if (a.chunk.source_rank != b.chunk.source_rank) {
    return a.chunk.source_rank < b.chunk.source_rank;
  }
  if (a.chunk.offset != b.chunk.offset) return a.chunk.offset < b.chunk.offset;
  return a.chunk.extent < b.chunk.extent;
}

/// Cuts each chunk along `dimension` into pieces of max(1, ideal / slice) rows, slice being the
/// element count of one row. Chunks without elements are skipped: they carry no data.
std::vector<Piece> cut_for_packing(const ChunkTable& chunks, std::size_t dimension,
                                   std::uint64_t ideal) {
  std::vector<Piece> pieces;
  for (const auto& chunk : chunks) {
    const std::uint64_t elements = chunk.element_count();
    if (elements == 0) continue;
    const std::uint64_t rows = chunk.extent[dimension];
    const std::uint64_t slice = elements / rows;
    const std::uint64_t rows_per_piece = std::max<std::uint64_t>(1, ideal / slice);
    for (std::uint64_t start = 0; start < rows; start += rows_per_piece) {
      Piece piece{chunk, 0};
      const std::uint64_t piece_rows = std::min(rows_per_piece, rows - start);
      piece.chunk.offset[dimension] += start;
      piece.chunk.extent[dimension] = piece_rows;
      piece.size = piece_rows * slice;
      pieces.push_back(std::move(piece));
    }
  }
  return pieces;
}

}  // namespace

ReaderChunks assign_round_robin(const Extent&, const ChunkTable& chunks, std::uint32_t reader_count,
                                std::size_t) {
  ReaderChunks out(reader_count);
  for (std::size_t i = 0; i < chunks.size(); ++i) out[i % reader_count].push_back(chunks[i]);
  return out;
}

ReaderChunks assign_round_robin_of_source_ranks(const Extent&, const ChunkTable& chunks,
                                                std::uint32_t reader_count, std::size_t) {
  const auto sources = distinct_source_ranks(chunks);
  ReaderOfSource reader_of_source;
  for (std::size_t k = 0; k < sources.size(); ++k) {
    reader_of_source[sources[k]] = static_cast<std::uint32_t>(k % reader_count);
  }
  return distribute_by_source(chunks, reader_count, reader_of_source);
}

ReaderChunks assign_blocks(const Extent&, const ChunkTable& chunks, std::uint32_t reader_count,
                           std::size_t) {
  ReaderChunks out(reader_count);
  for (std::uint32_t reader = 0; reader < reader_count; ++reader) {
    const auto begin = block_begin(chunks.size(), reader_count, reader);
    const auto end = block_begin(chunks.size(), reader_count, reader + 1);
    out[reader].assign(chunks.begin() + static_cast<std::ptrdiff_t>(begin),
                       chunks.begin() + static_cast<std::ptrdiff_t>(end));
  }
  return out;
}

ReaderChunks assign_blocks_of_source_ranks(const Extent&, const ChunkTable& chunks,
                                           std::uint32_t reader_count, std::size_t) {
  const auto sources = distinct_source_ranks(chunks);
  ReaderOfSource reader_of_source;
  for (std::uint32_t reader = 0; reader < reader_count; ++reader) {
    const auto begin = block_begin(sources.size(), reader_count, reader);
    const auto end = block_begin(sources.size(), reader_count, reader + 1);
    for (auto k = begin; k < end; ++k) reader_of_source[sources[k]] = reader;
  }
  return distribute_by_source(chunks, reader_count, reader_of_source);
}

ReaderChunks assign_slice_dataset(const Extent& global_extent, const ChunkTable& chunks,
                                  std::uint32_t reader_count, std::size_t split_dimension) {
  ReaderChunks out(reader_count);
  const std::uint64_t length = global_extent[split_dimension];
  for (const auto& chunk : chunks) {
    if (chunk.element_count() == 0) continue;
    const std::uint64_t low = chunk.offset[split_dimension];
    const std::uint64_t high = low + chunk.extent[split_dimension];
    // Slabs are contiguous and ascending: find the first one ending past `low`, then walk on
    // while slabs begin before `high`.
    std::uint32_t first = 0;
    std::uint32_t last = reader_count;
    while (first < last) {
      const std::uint32_t middle = first + (last - first) / 2;
      if (block_begin(length, reader_count, middle + 1) > low) {
        last = middle;
      } else {
        first = middle + 1;
      }
    }
    for (std::uint32_t reader = first; reader < reader_count; ++reader) {
      const std::uint64_t slab_begin = block_begin(length, reader_count, reader);
      if (slab_begin >= high) break;
      const std::uint64_t slab_end = block_begin(length, reader_count, reader + 1);
      const std::uint64_t piece_begin = std::max(low, slab_begin);
      const std::uint64_t piece_end = std::min(high, slab_end);
      if (piece_begin >= piece_end) continue;  // an empty slab (fewer rows than readers)
      Chunk piece = chunk;
      piece.offset[split_dimension] = piece_begin;
      piece.extent[split_dimension] = piece_end - piece_begin;
      out[reader].push_back(std::move(piece));
    }
  }
  return out;
}

// Bin packing, after openPMD-api's BinPacking, in three steps:
//   1. Cut chunks into pieces of about ideal = total / M elements (see cut_for_packing).
//   2. Sort pieces largest first (packs_before) and make two passes over the readers. Each reader
//      starts with room for `ideal` elements and walks the remaining pieces in order: a piece of
//      at least `ideal` is taken alone and ends the reader's turn; a smaller piece is taken if it
//      fits the room left; otherwise it is skipped. So each pass gives a reader at most `ideal`
//      elements or one piece, hence at most 2 * ideal when every piece is <= ideal.
//   3. When every piece is <= ideal and ideal >= 1 nothing is left after two passes (each reader
//      takes the largest remaining piece each turn, and 2M + 1 pieces bigger than ideal / 2 + 1
//      would exceed the total). In the degenerate cases that remain (a single row larger than
//      ideal, or ideal == 0) the rest goes round robin from reader 0, so nothing is lost.
ReaderChunks assign_bin_packing(const Extent&, const ChunkTable& chunks, std::uint32_t reader_count,
                                std::size_t split_dimension) {
  std::uint64_t total = 0;
  for (const auto& chunk : chunks) total += chunk.element_count();
  const std::uint64_t ideal = total / reader_count;

  std::vector<Piece> pieces = cut_for_packing(chunks, split_dimension, ideal);
  std::stable_sort(pieces.begin(), pieces.end(), packs_before);

  ReaderChunks out(reader_count);
  std::vector<std::size_t> remaining(pieces.size());
  for (std::size_t i = 0; i < remaining.size(); ++i) remaining[i] = i;
  std::vector<std::size_t> kept;
  for (int pass = 0; pass < 2; ++pass) {
    for (std::uint32_t reader = 0; reader < reader_count && !remaining.empty(); ++reader) {
      std::uint64_t room = ideal;
      bool full = false;
      kept.clear();
      for (const std::size_t index : remaining) {
        const std::uint64_t size = pieces[index].size;
        if (!full && size >= ideal) {
          out[reader].push_back(std::move(pieces[index].chunk));
          full = true;
        } else if (!full && size <= room) {
          out[reader].push_back(std::move(pieces[index].chunk));
          room -= size;
        } else {
          kept.push_back(index);
        }
      }
      remaining.swap(kept);
    }
  }
  for (std::size_t i = 0; i < remaining.size(); ++i) {
    out[i % reader_count].push_back(std::move(pieces[remaining[i]].chunk));
  }
  return out;
}

std::span<const FullStrategyInfo> full_strategies() {
  static constexpr std::array<FullStrategyInfo, 6> kTable{{
      {"roundrobin", assign_round_robin, false},
      {"roundrobinofsourceranks", assign_round_robin_of_source_ranks, false},
      {"blocks", assign_blocks, false},
      {"blocksofsourceranks", assign_blocks_of_source_ranks, false},
      {"slicedataset", assign_slice_dataset, true},
      {"binpacking", assign_bin_packing, true},
  }};
  return kTable;
}

const FullStrategyInfo* find_full_strategy(std::string_view lower_case_name) {
  for (const auto& info : full_strategies()) {
    if (info.name == lower_case_name) return &info;
  }
  return nullptr;
}

}  // namespace slipstream::stream
