// ChunkStrategy::assign and the public helpers: input validation, then the strategy's passes.
#include <algorithm>
#include <string>

#include "slipstream/stream_chunks.hpp"
#include "stream/strategies.hpp"

namespace slipstream::stream {
namespace {

std::string describe_chunk(std::size_t index, const Chunk& chunk) {
  return "chunk " + std::to_string(index) + " (source rank " + std::to_string(chunk.source_rank) +
         ")";
}

void check_readers(const RankTable& readers) {
  if (readers.empty()) {
    throw StrategyError(
        "the readers table is empty: a reader group needs at least one reader, with ranks 0..M-1");
  }
  std::uint32_t expected = 0;
  for (const auto& entry : readers) {
    if (entry.first != expected) {
      throw StrategyError("reader ranks must be exactly 0.." + std::to_string(readers.size() - 1) +
                          " for a group of " + std::to_string(readers.size()) +
                          " readers, but rank " + std::to_string(expected) + " is missing");
    }
    ++expected;
  }
}

void check_chunks(const Extent& global_extent, const ChunkTable& chunks) {
  std::uint64_t global_elements = 1;
  for (const auto length : global_extent) {
    if (__builtin_mul_overflow(global_elements, length, &global_elements)) {
      throw StrategyError("the global extent holds 2^64 elements or more; it must hold fewer");
    }
  }
  const std::size_t dimensions = global_extent.size();
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    const Chunk& chunk = chunks[i];
    if (chunk.offset.size() != dimensions || chunk.extent.size() != dimensions) {
      throw StrategyError(describe_chunk(i, chunk) + " has an offset of " +
                          std::to_string(chunk.offset.size()) + " and an extent of " +
                          std::to_string(chunk.extent.size()) +
                          " dimensions, but the global extent has " + std::to_string(dimensions));
    }
    for (std::size_t d = 0; d < dimensions; ++d) {
      if (chunk.offset[d] > global_extent[d] ||
          chunk.extent[d] > global_extent[d] - chunk.offset[d]) {
        throw StrategyError(
            describe_chunk(i, chunk) + " reaches past the global extent in dimension " +
            std::to_string(d) + ": offset " + std::to_string(chunk.offset[d]) + " + extent " +
            std::to_string(chunk.extent[d]) + " > " + std::to_string(global_extent[d]));
      }
    }
  }
}

void check_split_dimension(const std::string& name, std::size_t split_dimension,
                           std::size_t dimensions) {
  if (split_dimension < dimensions) return;
  throw StrategyError("chunk strategy '" + name + "' cuts along split_dimension " +
                      std::to_string(split_dimension) + ", but the global extent has " +
                      std::to_string(dimensions) + " dimensions (split_dimension must be below " +
                      std::to_string(dimensions) + ")");
}

void append(ReaderChunks parts, const RankTable& readers,
            std::map<std::uint32_t, ChunkTable>& by_reader) {
  for (const auto& [rank, host] : readers) {
    auto& target = by_reader[rank];
    for (auto& chunk : parts[rank]) target.push_back(std::move(chunk));
  }
}

}  // namespace

std::uint64_t Chunk::element_count() const noexcept {
  std::uint64_t count = 1;
  for (const auto length : extent) count *= length;
  return count;
}

StrategyError::~StrategyError() = default;

std::uint64_t block_begin(std::uint64_t length, std::uint64_t parts, std::uint64_t index) {
  const std::uint64_t whole = length / parts;
  const std::uint64_t remainder = length % parts;
  // remainder * index < parts^2 < 2^64 for parts < 2^32.
  return whole * index + (remainder * index + parts - 1) / parts;
}

std::string ChunkStrategy::name() const { return impl_->name; }

const StrategyOptions& ChunkStrategy::options() const noexcept { return impl_->options; }

// The chunks in canonical order: by source rank, then offset, then extent. Writers' chunks reach
// the server in whatever order their requests arrive, which changes from step to step; the
// strategies assign in table order, so the same layout must give the same table every step for
// each reader to keep its share (and its locality), and two components of the same layout the
// same shares.
namespace {
ChunkTable canonical_order(const ChunkTable& chunks) {
  ChunkTable sorted = chunks;
  std::stable_sort(sorted.begin(), sorted.end(), [](const Chunk& a, const Chunk& b) {
    if (a.source_rank != b.source_rank) return a.source_rank < b.source_rank;
    if (a.offset != b.offset) return a.offset < b.offset;
    return a.extent < b.extent;
  });
  return sorted;
}
}  // namespace

Assignment ChunkStrategy::assign(const std::vector<std::uint64_t>& global_extent,
                                 const ChunkTable& arrived, const RankTable& writers,
                                 const RankTable& readers) const {
  check_readers(readers);
  check_chunks(global_extent, arrived);
  const ChunkTable chunks = canonical_order(arrived);
  if (impl_->uses_split_dimension()) {
    check_split_dimension(impl_->name, impl_->options.split_dimension, global_extent.size());
  }
  const auto reader_count = static_cast<std::uint32_t>(readers.size());
  const std::size_t split_dimension = impl_->options.split_dimension;

  Assignment result;
  for (const auto& entry : readers) result.by_reader[entry.first];
  if (!impl_->by_hostname) {
    append(impl_->primary->assign(global_extent, chunks, reader_count, split_dimension), readers,
           result.by_reader);
  } else {
    ChunkTable leftover = assign_by_hostname(*impl_->primary, global_extent, chunks, writers,
                                             readers, split_dimension, result.by_reader);
    if (!leftover.empty()) {
      switch (impl_->leftover_policy) {
        case LeftoverPolicy::kAssign:
          append(impl_->fallback->assign(global_extent, leftover, reader_count, split_dimension),
                 readers, result.by_reader);
          break;
        case LeftoverPolicy::kDiscard:
          result.discarded = std::move(leftover);
          break;
        case LeftoverPolicy::kFail:
          throw StrategyError(describe_leftover(impl_->name, leftover, writers));
      }
    }
  }
  if (impl_->options.no_empty_readers) fill_empty_readers(result.by_reader);
  return result;
}

}  // namespace slipstream::stream
