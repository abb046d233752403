// Test support: what a stream_peer reader reported (its stdout, parsed), and the checks the
// drivers make on it: how often each element was delivered, and whether a reader's pieces are the
// ones the group's strategy assigns it.
#pragma once

#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "peer_layout.hpp"
#include "slipstream/stream_chunks.hpp"

namespace slipstream::testing::stream_procs {

/// One step as a reader reported it.
struct StepReport {
  std::vector<std::uint32_t> readers;        // the group's readers for the step
  std::uint32_t index = 0;                   // this reader's index among them
  std::map<int, stream::ChunkTable> chunks;  // component -> every chunk, in the server's order
  std::map<int, stream::ChunkTable> pieces;  // component -> this reader's pieces
};

/// Everything one reader reported.
struct ReaderReport {
  std::map<std::int64_t, StepReport> steps;
  std::map<std::int64_t, std::string> skipped;  // step -> reason
  std::vector<std::string> bad;                 // wrong values or attributes, errors, timeouts
  bool end = false;
  bool holding = false;
};

inline std::vector<std::uint64_t> split_numbers(const std::string& text) {
  std::vector<std::uint64_t> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) out.push_back(std::stoull(item));
  return out;
}

inline ReaderReport parse_reader_report(const std::vector<std::string>& lines) {
  ReaderReport out;
  for (const std::string& line : lines) {
    std::istringstream in(line);
    std::string kind;
    in >> kind;
    if (kind == "step") {
      std::int64_t step = 0;
      std::string word, readers;
      StepReport report;
      in >> step >> word >> readers >> word >> report.index;
      for (std::uint64_t r : split_numbers(readers)) {
        report.readers.push_back(static_cast<std::uint32_t>(r));
      }
      out.steps[step] = report;
    } else if (kind == "chunk" || kind == "piece") {
      std::int64_t step = 0;
      int component = 0;
      std::string offset, extent;
      stream::Chunk chunk;
      in >> step >> component >> offset >> extent >> chunk.source_rank;
      chunk.offset = split_numbers(offset);
      chunk.extent = split_numbers(extent);
      auto& table = kind == "chunk" ? out.steps[step].chunks : out.steps[step].pieces;
      table[component].push_back(chunk);
    } else if (kind == "skipped") {
      std::int64_t step = 0;
      in >> step;
      std::string reason;
      std::getline(in >> std::ws, reason);
      out.skipped[step] = reason;
    } else if (kind == "end") {
      out.end = true;
    } else if (kind == "holding") {
      out.holding = true;
    } else if (kind == "bad" || kind == "error" || kind == "timeout") {
      out.bad.push_back(line);
    }
  }
  return out;
}

/// How often each element (row-major) of a component was delivered.
using Counts = std::vector<int>;

inline std::vector<std::uint64_t> component_extent(const Layout& layout, int component) {
  return component == 0 ? layout.mesh_extent() : layout.particle_extent();
}

inline Counts zero_counts(const Layout& layout, int component) {
  std::uint64_t elements = 1;
  for (std::uint64_t e : component_extent(layout, component)) elements *= e;
  return Counts(elements, 0);
}

/// Adds `delta` for every element of `piece`.
inline void add_piece(Counts& counts, const Layout& layout, int component,
                      const stream::Chunk& piece, int delta = 1) {
  const std::vector<std::uint64_t> global = component_extent(layout, component);
  const std::uint64_t elements = piece.element_count();
  std::vector<std::uint64_t> at(piece.extent.size(), 0);
  for (std::uint64_t n = 0; n < elements; ++n) {
    std::uint64_t linear = 0;
    for (std::size_t d = 0; d < global.size(); ++d) {
      linear = linear * global[d] + piece.offset[d] + at[d];
    }
    counts.at(linear) += delta;
    for (std::size_t d = piece.extent.size(); d-- > 0;) {
      if (++at[d] < piece.extent[d]) break;
      at[d] = 0;
    }
  }
}

/// What exactly-once delivery of `step` means: 1 for every element some live writer wrote, 0 for
/// the elements of writers that were gone.
inline Counts expected_counts(const Layout& layout, int component,
                              const std::vector<bool>& writer_alive) {
  Counts out = zero_counts(layout, component);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = writer_alive.at(layout.owner(component, i));
  return out;
}

/// The pieces `strategy` assigns to the reader at `index` of `readers` readers from `chunks`.
inline stream::ChunkTable assigned_pieces(const std::string& strategy, const Layout& layout,
                                          int component, const stream::ChunkTable& chunks,
                                          std::size_t readers, std::uint32_t index) {
  stream::RankTable writer_hosts, reader_hosts;
  for (std::uint32_t w = 0; w < layout.writers; ++w) writer_hosts[w] = "host";
  for (std::uint32_t r = 0; r < readers; ++r) reader_hosts[r] = "host";
  const stream::Assignment assignment = stream::ChunkStrategy::parse(strategy).assign(
      component_extent(layout, component), chunks, writer_hosts, reader_hosts);
  return assignment.by_reader.at(index);
}

}  // namespace slipstream::testing::stream_procs
