// The no_empty_readers pass: gives every reader without elements part of another reader's work
// by cutting pieces in two, never losing or duplicating an element.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "stream/strategies.hpp"

namespace slipstream::stream {
namespace {

/// Where a piece sits in the assignment.
struct PieceRef {
  std::uint32_t reader;
  std::size_t position;
  std::uint64_t size;
};

/// True when `a` is to be cut before `b`: more elements first, then lower source rank, lower
/// offset, lower extent, and last lower reader rank and position (a total order).
bool cut_before(const PieceRef& a, const PieceRef& b,
                const std::map<std::uint32_t, ChunkTable>& by_reader) {
  if (a.size != b.size) return a.size > b.size;
  const Chunk& ca = by_reader.at(a.reader)[a.position];
  const Chunk& cb = by_reader.at(b.reader)[b.position];
  if (ca.source_rank != cb.source_rank) return ca.source_rank < cb.source_rank;
  if (ca.offset != cb.offset) return ca.offset < cb.offset;
  if (ca.extent != cb.extent) return ca.extent < cb.extent;
  if (a.reader != b.reader) return a.reader < b.reader;
  return a.position < b.position;
}

std::uint64_t element_total(const ChunkTable& chunks) {
  std::uint64_t total = 0;
  for (const auto& chunk : chunks) total += chunk.element_count();
  return total;
}

/// Halves `chunk` along its longest dimension (the lowest such index on ties); `chunk` keeps the
/// lower half and the upper half is returned. The chunk must hold more than one element.
Chunk cut_in_two(Chunk& chunk) {
  std::size_t longest = 0;
  for (std::size_t d = 1; d < chunk.extent.size(); ++d) {
    if (chunk.extent[d] > chunk.extent[longest]) longest = d;
  }
  Chunk upper = chunk;
  const std::uint64_t lower_rows = chunk.extent[longest] / 2;
  chunk.extent[longest] = lower_rows;
  upper.offset[longest] += lower_rows;
  upper.extent[longest] -= lower_rows;
  return upper;
}

}  // namespace

// Each round fills the lowest-ranked empty reader and empties none, so there are at most M
// rounds. Usually the largest piece is halved (the holder keeps the lower half). When no piece
// has more than one element, a one-element piece moves from the reader with the most elements
// (lowest rank on ties), provided that reader has at least two; otherwise nothing can be done
// without emptying someone and the pass stops.
void fill_empty_readers(std::map<std::uint32_t, ChunkTable>& by_reader) {
  for (;;) {
    std::optional<std::uint32_t> empty_reader;
    std::optional<PieceRef> largest;
    std::uint32_t richest_reader = 0;
    std::uint64_t richest_load = 0;
    for (const auto& [reader, chunks] : by_reader) {
      const std::uint64_t load = element_total(chunks);
      if (load == 0 && !empty_reader) empty_reader = reader;
      if (load > richest_load) {
        richest_load = load;
        richest_reader = reader;
      }
      for (std::size_t position = 0; position < chunks.size(); ++position) {
        const PieceRef piece{reader, position, chunks[position].element_count()};
        if (!largest || cut_before(piece, *largest, by_reader)) largest = piece;
      }
    }
    if (!empty_reader || !largest || largest->size == 0) return;

    auto& receiver = by_reader[*empty_reader];
    if (largest->size > 1) {
      Chunk& piece = by_reader[largest->reader][largest->position];
      receiver.push_back(cut_in_two(piece));
      continue;
    }
    if (richest_load < 2) return;
    auto& donor = by_reader[richest_reader];
    std::size_t position = donor.size();
    while (donor[position - 1].element_count() == 0) --position;  // the last non-empty piece
    receiver.push_back(std::move(donor[position - 1]));
    donor.erase(donor.begin() + static_cast<std::ptrdiff_t>(position - 1));
  }
}

}  // namespace slipstream::stream
