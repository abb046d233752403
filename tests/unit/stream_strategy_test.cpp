// Tests for the stream chunk distribution strategies (include/slipstream/stream_chunks.hpp):
// hand-checked assignments per strategy, name parsing, input validation, seeded property tests
// (every element exactly once, provenance, determinism, bin-packing bound, fail, no empty
// readers) and a scale run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "slipstream/stream_chunks.hpp"

namespace slipstream::stream {
namespace {

using Extent = std::vector<std::uint64_t>;

}  // namespace

// Readable failure output: {offset}+{extent}@source_rank.
void PrintTo(const Chunk& chunk, std::ostream* out) {
  auto print = [out](const Extent& values) {
    *out << '{';
    for (std::size_t i = 0; i < values.size(); ++i) *out << (i ? "," : "") << values[i];
    *out << '}';
  };
  print(chunk.offset);
  *out << '+';
  print(chunk.extent);
  *out << '@' << chunk.source_rank;
}

namespace {

Chunk make_chunk(Extent offset, Extent extent, std::uint32_t source_rank) {
  return Chunk{std::move(offset), std::move(extent), source_rank};
}

/// One-dimensional unit chunks: chunk i covers element i and was written by sources[i].
ChunkTable unit_chunks(const std::vector<std::uint32_t>& sources) {
  ChunkTable chunks;
  for (std::size_t i = 0; i < sources.size(); ++i)
    chunks.push_back(make_chunk({i}, {1}, sources[i]));
  return chunks;
}

RankTable ranks_on(const std::vector<std::string>& hosts) {
  RankTable table;
  for (std::size_t rank = 0; rank < hosts.size(); ++rank) {
    table[static_cast<std::uint32_t>(rank)] = hosts[rank];
  }
  return table;
}

RankTable readers_on_one_host(std::size_t count) {
  return ranks_on(std::vector<std::string>(count, "node"));
}

Assignment run(std::string_view name, const Extent& global, const ChunkTable& chunks,
               std::size_t reader_count, StrategyOptions options = {}) {
  return ChunkStrategy::parse(name, options)
      .assign(global, chunks, {}, readers_on_one_host(reader_count));
}

ChunkTable pick(const ChunkTable& chunks, const std::vector<std::size_t>& indices) {
  ChunkTable picked;
  for (const auto i : indices) picked.push_back(chunks[i]);
  return picked;
}

std::uint64_t load(const ChunkTable& chunks) {
  std::uint64_t total = 0;
  for (const auto& chunk : chunks) total += chunk.element_count();
  return total;
}

TEST(StreamChunk, ElementCountAndEquality) {
  EXPECT_EQ(make_chunk({0, 0}, {3, 4}, 0).element_count(), 12u);
  EXPECT_EQ(make_chunk({1}, {0}, 0).element_count(), 0u);
  EXPECT_EQ(make_chunk({}, {}, 0).element_count(), 1u);
  EXPECT_EQ(make_chunk({1}, {2}, 3), make_chunk({1}, {2}, 3));
  EXPECT_NE(make_chunk({1}, {2}, 3), make_chunk({1}, {2}, 4));
}

TEST(StreamChunk, BlockBeginFollowsOpenPmdNthBlock) {
  auto sizes = [](std::uint64_t length, std::uint64_t parts) {
    std::vector<std::uint64_t> out;
    for (std::uint64_t i = 0; i < parts; ++i) {
      out.push_back(block_begin(length, parts, i + 1) - block_begin(length, parts, i));
    }
    EXPECT_EQ(block_begin(length, parts, 0), 0u);
    EXPECT_EQ(block_begin(length, parts, parts), length);
    return out;
  };
  using Sizes = std::vector<std::uint64_t>;
  EXPECT_EQ(sizes(10, 4), (Sizes{3, 2, 3, 2}));
  EXPECT_EQ(sizes(3, 5), (Sizes{1, 1, 0, 1, 0}));
  EXPECT_EQ(sizes(5, 2), (Sizes{3, 2}));
  EXPECT_EQ(sizes(8, 4), (Sizes{2, 2, 2, 2}));
  EXPECT_EQ(sizes(0, 3), (Sizes{0, 0, 0}));
  EXPECT_EQ(sizes(7, 1), (Sizes{7}));
}

TEST(StreamStrategy, RoundRobin) {
  const auto chunks = unit_chunks({0, 1, 2, 3, 4});
  auto result = run("roundrobin", {5}, chunks, 2);
  EXPECT_EQ(result.by_reader[0], pick(chunks, {0, 2, 4}));
  EXPECT_EQ(result.by_reader[1], pick(chunks, {1, 3}));
  result = run("roundrobin", {5}, pick(chunks, {0, 1}), 3);
  ASSERT_EQ(result.by_reader.size(), 3u);  // every reader is a key, even with nothing
  EXPECT_TRUE(result.by_reader[2].empty());
  EXPECT_TRUE(result.discarded.empty());
}

TEST(StreamStrategy, RoundRobinOfSourceRanks) {
  const auto chunks = unit_chunks({5, 2, 5, 9, 2});
  auto result = run("roundrobinofsourceranks", {5}, chunks, 2);  // sources 2->0, 5->1, 9->0
  EXPECT_EQ(result.by_reader[0], pick(chunks, {1, 4, 3}));  // canonical: by source, then offset
  EXPECT_EQ(result.by_reader[1], pick(chunks, {0, 2}));
}

TEST(StreamStrategy, Blocks) {
  const auto chunks = unit_chunks({0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  auto result = run("blocks", {10}, chunks, 4);
  EXPECT_EQ(result.by_reader[0], pick(chunks, {0, 1, 2}));
  EXPECT_EQ(result.by_reader[1], pick(chunks, {3, 4}));
  EXPECT_EQ(result.by_reader[2], pick(chunks, {5, 6, 7}));
  EXPECT_EQ(result.by_reader[3], pick(chunks, {8, 9}));
}

TEST(StreamStrategy, BlocksOfSourceRanks) {
  const auto chunks = unit_chunks({3, 1, 2, 3, 4, 1});
  auto result = run("blocksofsourceranks", {6}, chunks, 3);  // sources {1,2} {3} {4}
  EXPECT_EQ(result.by_reader[0], pick(chunks, {1, 5, 2}));  // canonical: by source, then offset
  EXPECT_EQ(result.by_reader[1], pick(chunks, {0, 3}));
  EXPECT_EQ(result.by_reader[2], pick(chunks, {4}));
}

TEST(StreamStrategy, SliceDatasetAlongEachDimension) {
  const ChunkTable chunks{make_chunk({0, 0}, {6, 4}, 0), make_chunk({6, 0}, {4, 4}, 1)};
  auto rows = run("slicedataset", {10, 4}, chunks, 3);  // slabs [0,4) [4,7) [7,10)
  EXPECT_EQ(rows.by_reader[0], (ChunkTable{make_chunk({0, 0}, {4, 4}, 0)}));
  EXPECT_EQ(rows.by_reader[1],
            (ChunkTable{make_chunk({4, 0}, {2, 4}, 0), make_chunk({6, 0}, {1, 4}, 1)}));
  EXPECT_EQ(rows.by_reader[2], (ChunkTable{make_chunk({7, 0}, {3, 4}, 1)}));

  auto columns =
      run("slicedataset", {10, 4}, chunks, 3, {.split_dimension = 1});  // [0,2) [2,3) [3,4)
  EXPECT_EQ(columns.by_reader[0],
            (ChunkTable{make_chunk({0, 0}, {6, 2}, 0), make_chunk({6, 0}, {4, 2}, 1)}));
  EXPECT_EQ(columns.by_reader[1],
            (ChunkTable{make_chunk({0, 2}, {6, 1}, 0), make_chunk({6, 2}, {4, 1}, 1)}));
  EXPECT_EQ(columns.by_reader[2],
            (ChunkTable{make_chunk({0, 3}, {6, 1}, 0), make_chunk({6, 3}, {4, 1}, 1)}));

  auto narrow = run("slicedataset", {2}, {make_chunk({0}, {2}, 0)}, 3);   // more readers than rows
  EXPECT_EQ(narrow.by_reader[0], (ChunkTable{make_chunk({0}, {1}, 0)}));  // slabs 1, 1, 0
  EXPECT_EQ(narrow.by_reader[1], (ChunkTable{make_chunk({1}, {1}, 0)}));
  EXPECT_TRUE(narrow.by_reader[2].empty());
}

TEST(StreamStrategy, BinPacking) {
  const ChunkTable whole{make_chunk({0}, {10}, 0), make_chunk({10}, {6}, 1),
                         make_chunk({16}, {4}, 2)};
  auto result = run("binpacking", {20}, whole, 2);  // ideal 10: 10 | 6 + 4
  EXPECT_EQ(result.by_reader[0], pick(whole, {0}));
  EXPECT_EQ(result.by_reader[1], pick(whole, {1, 2}));

  // ideal 4, rows of 3 elements: one row per piece; the second pass gives reader 0 the last row.
  result = run("binpacking", {4, 3}, {make_chunk({0, 0}, {4, 3}, 0)}, 3);
  EXPECT_EQ(result.by_reader[0],
            (ChunkTable{make_chunk({0, 0}, {1, 3}, 0), make_chunk({3, 0}, {1, 3}, 0)}));
  EXPECT_EQ(result.by_reader[1], (ChunkTable{make_chunk({1, 0}, {1, 3}, 0)}));
  EXPECT_EQ(result.by_reader[2], (ChunkTable{make_chunk({2, 0}, {1, 3}, 0)}));

  // Equal sizes: lower source rank first, then lower offset.
  const ChunkTable ties{make_chunk({4}, {2}, 1), make_chunk({0}, {2}, 1), make_chunk({2}, {2}, 0)};
  result = run("binpacking", {6}, ties, 3);
  EXPECT_EQ(result.by_reader[0], pick(ties, {2}));
  EXPECT_EQ(result.by_reader[1], pick(ties, {1}));
  EXPECT_EQ(result.by_reader[2], pick(ties, {0}));

  // ideal 0 (fewer elements than readers): one-row pieces, nothing lost, chunks without elements
  // skipped.
  result =
      run("binpacking", {2, 1}, {make_chunk({0, 0}, {2, 1}, 0), make_chunk({0, 0}, {2, 0}, 1)}, 3);
  EXPECT_EQ(result.by_reader[0], (ChunkTable{make_chunk({0, 0}, {1, 1}, 0)}));
  EXPECT_EQ(result.by_reader[1], (ChunkTable{make_chunk({1, 0}, {1, 1}, 0)}));
  EXPECT_TRUE(result.by_reader[2].empty());
}

class StreamHostnameStrategy : public ::testing::Test {
 protected:
  Assignment run_hostname(std::string_view name) const {
    return ChunkStrategy::parse(name).assign({6}, chunks_, writers_, readers_);
  }
  // Writers 0,1 on a, 2 on b, 3 on c (no readers); rank 7 is missing from the writers table.
  const ChunkTable chunks_ = unit_chunks({0, 1, 2, 3, 0, 7});
  const RankTable writers_ = ranks_on({"a", "a", "b", "c"});
  const RankTable readers_ = ranks_on({"b", "a", "a"});
};

TEST_F(StreamHostnameStrategy, WithinHostThenDiscard) {
  auto result = run_hostname("hostname_roundrobin_discard");
  // Host a's chunks in canonical order (by source, then offset): 0, 4 (source 0), 1 (source 1).
  EXPECT_EQ(result.by_reader[0], pick(chunks_, {2}));     // host b
  EXPECT_EQ(result.by_reader[1], pick(chunks_, {0, 1}));  // host a, local reader 0
  EXPECT_EQ(result.by_reader[2], pick(chunks_, {4}));     // host a, local reader 1
  EXPECT_EQ(result.discarded, pick(chunks_, {3, 5}));
}

TEST_F(StreamHostnameStrategy, FallbackAppendsAmongAllReaders) {
  auto result = run_hostname("hostname_blocks_roundrobin");
  EXPECT_EQ(result.by_reader[0], pick(chunks_, {2, 3}));
  EXPECT_EQ(result.by_reader[1], pick(chunks_, {0, 4, 5}));  // blocks on a: {0,4} | {1}
  EXPECT_EQ(result.by_reader[2], pick(chunks_, {1}));
  EXPECT_TRUE(result.discarded.empty());
}

TEST_F(StreamHostnameStrategy, FailNamesWhatWasLeftOver) {
  try {
    run_hostname("hostname_binpacking_fail");
    FAIL() << "expected StrategyError";
  } catch (const StrategyError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("2 chunks, 2 elements"), std::string::npos) << message;
    EXPECT_NE(message.find("'c' (1 chunk, 1 element)"), std::string::npos) << message;
    EXPECT_NE(message.find("7 (1 chunk"), std::string::npos) << message;
  }
  const RankTable readers_everywhere{{0, "a"}, {1, "b"}, {2, "c"}};
  const ChunkTable known = pick(chunks_, {0, 1, 2, 3});
  EXPECT_NO_THROW(ChunkStrategy::parse("hostname_roundrobin_fail")
                      .assign({6}, known, writers_, readers_everywhere));
}

TEST(StreamStrategy, NoEmptyReadersHalvesTheLargestPiece) {
  const StrategyOptions options{.no_empty_readers = true};
  auto result = run("roundrobin", {4, 2}, {make_chunk({0, 0}, {4, 2}, 5)}, 3, options);
  EXPECT_EQ(result.by_reader[0], (ChunkTable{make_chunk({0, 0}, {1, 2}, 5)}));
  EXPECT_EQ(result.by_reader[1], (ChunkTable{make_chunk({2, 0}, {2, 2}, 5)}));
  EXPECT_EQ(result.by_reader[2], (ChunkTable{make_chunk({1, 0}, {1, 2}, 5)}));

  // Only one-element pieces: one moves from the reader holding two.
  result = run("roundrobinofsourceranks", {2}, unit_chunks({0, 0}), 2, options);
  EXPECT_EQ(result.by_reader[0], (ChunkTable{make_chunk({0}, {1}, 0)}));
  EXPECT_EQ(result.by_reader[1], (ChunkTable{make_chunk({1}, {1}, 0)}));

  // Fewer elements than readers: some stay empty, nothing is duplicated.
  result = run("roundrobin", {1}, unit_chunks({0}), 3, options);
  EXPECT_EQ(result.by_reader[0], unit_chunks({0}));
  EXPECT_TRUE(result.by_reader[1].empty());
}

TEST(StreamStrategyNames, EveryNameParsesCaseInsensitively) {
  const std::vector<std::string> full{"roundrobin",   "roundrobinofsourceranks",
                                      "blocks",       "blocksofsourceranks",
                                      "slicedataset", "binpacking"};
  std::vector<std::string> fallbacks = full;
  fallbacks.push_back("discard");
  fallbacks.push_back("fail");
  for (const auto& name : full) {
    EXPECT_EQ(ChunkStrategy::parse(name).name(), name);
    for (const auto& fallback : fallbacks) {
      const std::string composed = "hostname_" + name + "_" + fallback;
      EXPECT_EQ(ChunkStrategy::parse(composed).name(), composed);
    }
  }
  EXPECT_EQ(ChunkStrategy::parse("RoundRobin").name(), "roundrobin");
  EXPECT_EQ(ChunkStrategy::parse("HostName_BinPacking_DISCARD").name(),
            "hostname_binpacking_discard");
  const StrategyOptions options{.split_dimension = 2, .no_empty_readers = true};
  const auto strategy = ChunkStrategy::parse("blocks", options);
  EXPECT_EQ(strategy.options().split_dimension, 2u);
  EXPECT_TRUE(strategy.options().no_empty_readers);
}

TEST(StreamStrategyNames, BadNamesListTheValidOnes) {
  for (const std::string bad :
       {"", "round robin", "roundrobin2", "hostname", "hostname_", "hostname_roundrobin",
        "hostname_foo_discard", "hostname_roundrobin_bar", "hostname_hostname_blocks_fail",
        "discard", "fail"}) {
    try {
      ChunkStrategy::parse(bad);
      ADD_FAILURE() << "'" << bad << "' parsed";
    } catch (const StrategyError& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find("'" + bad + "'"), std::string::npos) << message;
      for (const char* valid :
           {"roundrobin", "roundrobinofsourceranks", "blocks", "blocksofsourceranks",
            "slicedataset", "binpacking", "hostname_<within>_<fallback>", "discard", "fail"}) {
        EXPECT_NE(message.find(valid), std::string::npos) << message;
      }
    }
  }
  try {
    ChunkStrategy::parse("hostname_foo_discard");
  } catch (const StrategyError& error) {
    EXPECT_NE(std::string(error.what()).find("<within> 'foo'"), std::string::npos);
  }
}

/// what() of the StrategyError that `call` throws, or "" when it throws nothing.
template <typename Call>
std::string error_of(Call call) {
  try {
    call();
  } catch (const StrategyError& error) {
    return error.what();
  }
  return "";
}

TEST(StreamStrategyValidation, BadInputsSayWhatIsWrong) {
  const auto strategy = ChunkStrategy::parse("roundrobin");
  const ChunkTable ok{make_chunk({0, 0}, {2, 2}, 0)};
  auto message = [&](const Extent& global, const ChunkTable& chunks, const RankTable& readers) {
    return error_of([&] { strategy.assign(global, chunks, {}, readers); });
  };
  EXPECT_NE(message({2, 2}, ok, {}).find("at least one reader"), std::string::npos);
  EXPECT_NE(message({2, 2}, ok, {{0, "a"}, {2, "a"}}).find("rank 1 is missing"), std::string::npos);
  EXPECT_NE(message({2, 2}, ok, {{1, "a"}}).find("rank 0 is missing"), std::string::npos);
  const RankTable one = readers_on_one_host(1);
  EXPECT_NE(message({2, 2, 1}, ok, one).find("chunk 0 (source rank 0) has an offset of 2"),
            std::string::npos);
  const ChunkTable outside{make_chunk({0, 0}, {2, 2}, 0), make_chunk({1, 1}, {1, 2}, 4)};
  EXPECT_NE(message({2, 2}, outside, one)
                .find("chunk 1 (source rank 4) reaches past the global extent in dimension 1: "
                      "offset 1 + extent 2 > 2"),
            std::string::npos);
  const ChunkTable huge_offset{make_chunk({UINT64_MAX}, {2}, 0)};
  EXPECT_NE(message({4}, huge_offset, one).find("reaches past"), std::string::npos);
  EXPECT_NE(message({UINT64_MAX, 2}, {}, one).find("2^64"), std::string::npos);
  EXPECT_EQ(message({}, {make_chunk({}, {}, 0)}, one), "");  // a scalar component

  const auto sliced =
      ChunkStrategy::parse("hostname_roundrobin_slicedataset", {.split_dimension = 2});
  EXPECT_NE(error_of([&] {
              sliced.assign({2, 2}, ok, {}, one);
            }).find("split_dimension 2"),
            std::string::npos);
  EXPECT_EQ(error_of([&] {
              ChunkStrategy::parse("blocks", {.split_dimension = 2}).assign({2, 2}, ok, {}, one);
            }),
            "");
}

// ---------------------------------------------------------------------------------------------
// Property tests over seeded random cases.

std::uint64_t uniform(std::mt19937& rng, std::uint64_t low, std::uint64_t high) {
  return low + rng() % (high - low + 1);  // modulo bias is irrelevant here; portable results
}

struct RandomCase {
  Extent global;
  ChunkTable chunks;
  RankTable writers;
  RankTable readers;
  std::size_t split_dimension = 0;
};

void tile(const Chunk& box, int depth, std::mt19937& rng, ChunkTable& out) {
  std::vector<std::size_t> splittable;
  for (std::size_t d = 0; d < box.extent.size(); ++d) {
    if (box.extent[d] >= 2) splittable.push_back(d);
  }
  if (depth == 0 || splittable.empty() || uniform(rng, 0, 3) == 0) {
    out.push_back(box);
    return;
  }
  const std::size_t d = splittable[uniform(rng, 0, splittable.size() - 1)];
  const std::uint64_t cut = uniform(rng, 1, box.extent[d] - 1);
  Chunk low = box, high = box;
  low.extent[d] = cut;
  high.offset[d] += cut;
  high.extent[d] -= cut;
  tile(low, depth - 1, rng, out);
  tile(high, depth - 1, rng, out);
}

RandomCase random_case(std::mt19937& rng) {
  RandomCase c;
  const auto dimensions = uniform(rng, 1, 3);
  for (std::uint64_t d = 0; d < dimensions; ++d) c.global.push_back(uniform(rng, 1, 6));
  c.split_dimension = uniform(rng, 0, dimensions - 1);
  ChunkTable tiles;
  tile(Chunk{Extent(dimensions, 0), c.global, 0}, 5, rng, tiles);
  const bool partial = uniform(rng, 0, 2) == 0;
  const auto writer_count = uniform(rng, 1, 6);
  const auto rank_stride = uniform(rng, 1, 3);  // sparse source ranks sometimes
  for (auto& chunk : tiles) {
    if (partial && uniform(rng, 0, 3) == 0) continue;
    chunk.source_rank = static_cast<std::uint32_t>(uniform(rng, 0, writer_count - 1) * rank_stride);
    c.chunks.push_back(chunk);
  }
  if (uniform(rng, 0, 4) == 0) {  // a chunk without elements
    Chunk empty{Extent(dimensions, 0), Extent(dimensions, 1), 0};
    empty.extent[uniform(rng, 0, dimensions - 1)] = 0;
    c.chunks.insert(
        c.chunks.begin() + static_cast<std::ptrdiff_t>(uniform(rng, 0, c.chunks.size())), empty);
  }
  std::shuffle(c.chunks.begin(), c.chunks.end(), rng);
  const auto host_count = uniform(rng, 1, 4);
  for (std::uint64_t w = 0; w < writer_count; ++w) {
    if (uniform(rng, 0, 9) == 0) continue;  // a writer missing from the table
    c.writers[static_cast<std::uint32_t>(w * rank_stride)] =
        "h" + std::to_string(uniform(rng, 0, host_count - 1));
  }
  const auto reader_count = uniform(rng, 1, 7);
  for (std::uint32_t r = 0; r < reader_count; ++r) {
    c.readers[r] = "h" + std::to_string(uniform(rng, 0, host_count - 1));
  }
  return c;
}

std::vector<std::string> every_strategy_name() {
  const std::vector<std::string> full{"roundrobin",   "roundrobinofsourceranks",
                                      "blocks",       "blocksofsourceranks",
                                      "slicedataset", "binpacking"};
  std::vector<std::string> names = full;
  for (const auto& within : full) {
    for (const auto& fallback : full) names.push_back("hostname_" + within + "_" + fallback);
    names.push_back("hostname_" + within + "_discard");
    names.push_back("hostname_" + within + "_fail");
  }
  return names;
}

/// Adds one to every cell of `grid` (row-major over `global`) covered by `box`.
void count_cells(const Extent& global, const Chunk& box, std::vector<int>& grid) {
  if (box.element_count() == 0) return;
  std::vector<std::uint64_t> at = box.offset;
  for (;;) {
    std::uint64_t index = 0;
    for (std::size_t d = 0; d < global.size(); ++d) index = index * global[d] + at[d];
    ++grid[index];
    std::size_t d = global.size();
    while (d > 0) {
      --d;
      if (++at[d] < box.offset[d] + box.extent[d]) break;
      at[d] = box.offset[d];
      if (d == 0) return;
    }
    if (global.empty()) return;
  }
}

bool inside(const Chunk& piece, const Chunk& source) {
  if (piece.source_rank != source.source_rank) return false;
  for (std::size_t d = 0; d < piece.offset.size(); ++d) {
    if (piece.offset[d] < source.offset[d] ||
        piece.offset[d] + piece.extent[d] > source.offset[d] + source.extent[d]) {
      return false;
    }
  }
  return true;
}

bool has_leftover(const RandomCase& c) {
  for (const auto& chunk : c.chunks) {
    const auto writer = c.writers.find(chunk.source_rank);
    if (writer == c.writers.end()) return true;
    bool host_has_reader = false;
    for (const auto& [rank, host] : c.readers) host_has_reader |= host == writer->second;
    if (!host_has_reader) return true;
  }
  return false;
}

void check_case(const RandomCase& c, const std::string& name, bool no_empty_readers) {
  const StrategyOptions options{.split_dimension = c.split_dimension,
                                .no_empty_readers = no_empty_readers};
  const auto strategy = ChunkStrategy::parse(name, options);
  const bool fails = name.ends_with("_fail");
  if (fails && has_leftover(c)) {  // (d)
    EXPECT_THROW(strategy.assign(c.global, c.chunks, c.writers, c.readers), StrategyError);
    return;
  }
  const Assignment result = strategy.assign(c.global, c.chunks, c.writers, c.readers);

  // (a) every element exactly once, every piece inside a source chunk of the same rank.
  std::uint64_t cells = 1;
  for (const auto length : c.global) cells *= length;
  std::vector<int> expected(cells, 0), got(cells, 0);
  for (const auto& chunk : c.chunks) count_cells(c.global, chunk, expected);
  auto account = [&](const Chunk& piece) {
    count_cells(c.global, piece, got);
    EXPECT_TRUE(std::any_of(c.chunks.begin(), c.chunks.end(),
                            [&](const Chunk& source) { return inside(piece, source); }));
  };
  ASSERT_EQ(result.by_reader.size(), c.readers.size());
  std::uint64_t assigned = 0;
  for (const auto& [reader, pieces] : result.by_reader) {
    for (const auto& piece : pieces) account(piece);
    assigned += load(pieces);
  }
  for (const auto& piece : result.discarded) account(piece);
  ASSERT_EQ(got, expected);
  if (!name.ends_with("_discard")) {
    EXPECT_TRUE(result.discarded.empty());
  }

  // (b) deterministic, also from a copy, and whatever order the chunks arrive in (issue 26.A4:
  // the same layout gives every reader the same share every step).
  const ChunkStrategy copy = strategy;
  EXPECT_EQ(copy.assign(c.global, c.chunks, c.writers, c.readers), result);
  EXPECT_EQ(strategy.assign(c.global, c.chunks, c.writers, c.readers), result);
  ChunkTable arrived = c.chunks;
  std::reverse(arrived.begin(), arrived.end());
  EXPECT_EQ(strategy.assign(c.global, arrived, c.writers, c.readers), result) << "reversed";
  std::mt19937 rng(static_cast<std::uint32_t>(c.chunks.size()));
  std::shuffle(arrived.begin(), arrived.end(), rng);
  EXPECT_EQ(strategy.assign(c.global, arrived, c.writers, c.readers), result) << "shuffled";

  // (c) bin packing: at most twice the ideal share when every piece fits the share.
  if (name == "binpacking" && !no_empty_readers) {
    const std::uint64_t ideal = assigned / c.readers.size();
    bool pieces_fit = ideal > 0;
    for (const auto& [reader, pieces] : result.by_reader) {
      for (const auto& piece : pieces) pieces_fit &= piece.element_count() <= ideal;
    }
    if (pieces_fit) {
      for (const auto& [reader, pieces] : result.by_reader) EXPECT_LE(load(pieces), 2 * ideal);
    }
  }

  // (e) nobody empty when there is enough to go round.
  if (no_empty_readers && assigned >= c.readers.size()) {
    for (const auto& [reader, pieces] : result.by_reader) EXPECT_GT(load(pieces), 0u) << reader;
  }
}

TEST(StreamStrategyProperties, RandomCasesKeepEveryElementOnceAndAreDeterministic) {
  const auto names = every_strategy_name();
  for (std::uint32_t seed = 1; seed <= 300; ++seed) {
    std::mt19937 rng(seed);
    const RandomCase c = random_case(rng);
    for (const auto& name : names) {
      for (const bool no_empty_readers : {false, true}) {
        SCOPED_TRACE("seed " + std::to_string(seed) + " strategy " + name +
                     (no_empty_readers ? " no_empty_readers" : ""));
        check_case(c, name, no_empty_readers);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

TEST(StreamStrategyProperties, BinPackingBoundHoldsOnFineTilings) {
  // Many small chunks, so that pieces fit the ideal share and the 2x bound is exercised.
  int checked = 0;
  for (std::uint32_t seed = 1; seed <= 200; ++seed) {
    std::mt19937 rng(seed);
    const Extent global{uniform(rng, 8, 40), uniform(rng, 1, 3)};
    ChunkTable chunks;
    tile(Chunk{{0, 0}, global, 0}, 6, rng, chunks);
    for (auto& chunk : chunks) chunk.source_rank = static_cast<std::uint32_t>(uniform(rng, 0, 5));
    const auto readers = readers_on_one_host(uniform(rng, 1, 7));
    const auto result = ChunkStrategy::parse("binpacking").assign(global, chunks, {}, readers);
    const std::uint64_t ideal = global[0] * global[1] / readers.size();
    for (const auto& [reader, pieces] : result.by_reader) {
      EXPECT_LE(load(pieces), 2 * ideal) << "seed " << seed;  // rows (<= 3) always fit here
    }
    ++checked;
  }
  EXPECT_EQ(checked, 200);
}

TEST(StreamStrategyScale, TenThousandChunksSixtyFourReaders) {
  const Extent global{10000, 16};
  ChunkTable chunks;
  RankTable writers;
  for (std::uint32_t i = 0; i < 10000; ++i) chunks.push_back(make_chunk({i, 0}, {1, 16}, i / 100));
  for (std::uint32_t w = 0; w < 100; ++w) writers[w] = "h" + std::to_string(w % 8);
  RankTable readers;
  for (std::uint32_t r = 0; r < 64; ++r) readers[r] = "h" + std::to_string(r % 9);  // h8: none
  for (const auto& name : every_strategy_name()) {
    if (name.ends_with("_fail")) continue;
    const auto result = ChunkStrategy::parse(name, {.no_empty_readers = true})
                            .assign(global, chunks, writers, readers);
    std::uint64_t total = load(result.discarded);
    for (const auto& [reader, pieces] : result.by_reader) total += load(pieces);
    EXPECT_EQ(total, 160000u) << name;
  }
}

}  // namespace
}  // namespace slipstream::stream
