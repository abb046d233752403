// The host-local first pass of hostname_<within>_<fallback> strategies, and the message the
// `fail` fallback throws for what that pass could not place.
#include <map>
#include <string>
#include <vector>

#include "stream/strategies.hpp"

namespace slipstream::stream {

ChunkTable assign_by_hostname(const FullStrategyInfo& within, const Extent& global_extent,
                              const ChunkTable& chunks, const RankTable& writers,
                              const RankTable& readers, std::size_t split_dimension,
                              std::map<std::uint32_t, ChunkTable>& by_reader) {
  // `readers` iterates in ascending rank, so each host's list is in ascending global rank.
  std::map<std::string, std::vector<std::uint32_t>> readers_on_host;
  for (const auto& [rank, host] : readers) readers_on_host[host].push_back(rank);

  std::map<std::string, ChunkTable> chunks_on_host;
  ChunkTable leftover;
  for (const auto& chunk : chunks) {
    const auto writer = writers.find(chunk.source_rank);
    if (writer == writers.end() || !readers_on_host.contains(writer->second)) {
      leftover.push_back(chunk);
    } else {
      chunks_on_host[writer->second].push_back(chunk);
    }
  }

  for (const auto& [host, host_chunks] : chunks_on_host) {
    const auto& local_readers = readers_on_host.at(host);
    ReaderChunks parts =
        within.assign(global_extent, host_chunks, static_cast<std::uint32_t>(local_readers.size()),
                      split_dimension);
    for (std::size_t local = 0; local < local_readers.size(); ++local) {
      auto& target = by_reader[local_readers[local]];
      for (auto& chunk : parts[local]) target.push_back(std::move(chunk));
    }
  }
  return leftover;
}

std::string describe_leftover(std::string_view strategy_name, const ChunkTable& leftover,
                              const RankTable& writers) {
  struct Tally {
    std::uint64_t chunks = 0;
    std::uint64_t elements = 0;
  };
  std::map<std::string, Tally> by_host;
  std::map<std::uint32_t, Tally> by_unknown_rank;
  Tally total;
  for (const auto& chunk : leftover) {
    const auto writer = writers.find(chunk.source_rank);
    Tally& tally =
        writer == writers.end() ? by_unknown_rank[chunk.source_rank] : by_host[writer->second];
    const std::uint64_t elements = chunk.element_count();
    tally.chunks += 1;
    tally.elements += elements;
    total.chunks += 1;
    total.elements += elements;
  }

  auto counts = [](const Tally& tally) {
    return std::to_string(tally.chunks) + (tally.chunks == 1 ? " chunk, " : " chunks, ") +
           std::to_string(tally.elements) + (tally.elements == 1 ? " element" : " elements");
  };
  std::string message =
      "chunk strategy '" + std::string(strategy_name) + "' left " + counts(total) + " unassigned:";
  if (!by_host.empty()) {
    message += " from hosts without readers";
    const char* separator = " ";
    for (const auto& [host, tally] : by_host) {
      message += separator + ("'" + host + "' (" + counts(tally) + ")");
      separator = ", ";
    }
    if (!by_unknown_rank.empty()) message += ";";
  }
  if (!by_unknown_rank.empty()) {
    message += " from writer ranks missing from the writers table";
    const char* separator = " ";
    for (const auto& [rank, tally] : by_unknown_rank) {
      message += separator + (std::to_string(rank) + " (" + counts(tally) + ")");
      separator = ", ";
    }
  }
  message += "; use a fallback other than 'fail' to assign or discard them";
  return message;
}

}  // namespace slipstream::stream
