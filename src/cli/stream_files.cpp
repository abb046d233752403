// `slipstream stream dump` and `replay`: the loops between a stream (StreamReader, StreamWriter)
// and an openPMD HDF5 series (cli/openpmd).
#include "cli/stream_files.hpp"

#include <pwd.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <deque>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <vector>

#include "openpmd/format/series_reader.hpp"
#include "openpmd/format/series_writer.hpp"
#include "slipstream/stream.hpp"

#ifndef SLIPSTREAM_VERSION
#define SLIPSTREAM_VERSION "unknown"
#endif

namespace slipstream::cli {
namespace {

std::string human_bytes(std::uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, unit == 0 ? "%.0f %s" : "%.1f %s", value, units[unit]);
  return text;
}

// openPMD's date format: "YYYY-MM-DD HH:mm:ss tz".
std::string now_for_openpmd() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char text[64];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S %z", &local);
  return text;
}

std::string login_name() {
  std::vector<char> buffer(16384);
  passwd entry{};
  passwd* found = nullptr;
  if (getpwuid_r(getuid(), &entry, buffer.data(), buffer.size(), &found) == 0 && found) {
    return found->pw_name;
  }
  return "unknown";
}

// Refuses, before its bytes are fetched or its dataset created, a component whose dataset would
// be far larger than what its chunks carry (one chunk at offset 2^40 would otherwise make a
// sparse file of a terabyte) or than an explicit limit.
void check_dataset_size(const StreamComponent& component, std::uint64_t max_dataset_bytes) {
  const std::uint64_t element_size = dtype_size(component.dtype);
  std::uint64_t declared = element_size;
  bool overflow = false;
  for (std::uint64_t e : component.global_extent) {
    overflow = overflow || __builtin_mul_overflow(declared, e, &declared);
  }
  std::uint64_t carried = 0;
  for (const stream::Chunk& chunk : component.chunks) {
    std::uint64_t bytes = 0;
    if (__builtin_mul_overflow(chunk.element_count(), element_size, &bytes) ||
        __builtin_add_overflow(carried, bytes, &carried)) {
      carried = UINT64_MAX;
    }
  }
  const bool explicit_limit = max_dataset_bytes > 0;
  std::uint64_t limit = max_dataset_bytes;
  if (!explicit_limit &&
      (__builtin_mul_overflow(carried, kMaxSparseness, &limit) ||
       __builtin_add_overflow(limit, kSparseAllowance, &limit))) {
    limit = UINT64_MAX;
  }
  if (!overflow && declared <= limit) return;
  std::string extent;
  for (std::uint64_t e : component.global_extent) {
    extent += (extent.empty() ? "" : " x ") + std::to_string(e);
  }
  throw std::invalid_argument(
      "'" + component.name + "' would be a dataset of " +
      (overflow ? std::string("more than 2^64") : std::to_string(declared)) + " bytes (extent " +
      extent + ") but its chunks carry " + std::to_string(carried) + " bytes; the limit is " +
      (explicit_limit ? "--max-dataset-bytes, " + std::to_string(limit) + " bytes"
                      : std::to_string(limit) + " bytes (" + std::to_string(kMaxSparseness) +
                            " times what the chunks carry plus " +
                            std::to_string(kSparseAllowance) + "; --max-dataset-bytes sets it)"));
}

ClientOptions client_options(const std::string& address) {
  ClientOptions options;
  options.address = address;
  return options;
}

}  // namespace

bool have_hdf5() noexcept { return true; }

int run_dump(const DumpSettings& settings) {
  openpmd::silence_hdf5_errors();
  int problems = 0;
  auto report = [&](const std::string& problem) {
    std::cerr << "slipstream stream dump: " << problem << "\n";
    ++problems;
  };
  openpmd::Encoding encoding = openpmd::FilePattern::parse(settings.output)
                                   ? openpmd::Encoding::kFileBased
                                   : openpmd::Encoding::kGroupBased;
  if (settings.encoding == "groupBased") encoding = openpmd::Encoding::kGroupBased;
  if (settings.encoding == "fileBased") encoding = openpmd::Encoding::kFileBased;
  openpmd::SeriesWriter series(settings.output, encoding,
                               {login_name(), "slipstream", SLIPSTREAM_VERSION, now_for_openpmd()},
                               report);

  StreamReaderOptions reader_options;
  reader_options.strategy = "roundrobin";  // one reader: every chunk, whole
  reader_options.next_timeout = settings.timeout;
  StreamReader reader(client_options(settings.address), settings.stream, settings.group, 0, 1,
                      reader_options);
  std::int64_t written = 0, skipped = 0;
  for (;;) {
    StreamNext next = reader.next_step();
    if (next.kind == StreamNext::Kind::kEnd) break;
    if (next.kind == StreamNext::Kind::kTimeout) {
      report("no step within " + std::to_string(settings.timeout.count()) + " ms: stopped");
      break;
    }
    if (next.kind == StreamNext::Kind::kSkipped) {
      std::cerr << "slipstream stream dump: step " << next.skipped_step
                << " skipped, left out: " << next.reason << "\n";
      ++skipped;
      continue;
    }
    StreamStep& step = *next.step;
    series.begin_iteration(step.number(), step.attributes());
    std::uint64_t bytes = 0;
    std::size_t components = 0;
    for (const StreamComponent& component : step.components()) {
      try {
        // Checked before the bytes are fetched: a refused name or size costs no transfer.
        openpmd::split_object_path(component.name);
        check_dataset_size(component, settings.max_dataset_bytes);
        const std::vector<StreamPiece> pieces = step.load(component.name);
        series.write_component(component.name, component.dtype, component.global_extent,
                               pieces);
        for (const StreamPiece& piece : pieces) bytes += piece.bytes.size();
        ++components;
      } catch (const std::invalid_argument& e) {
        report("step " + std::to_string(step.number()) + ": component refused: " + e.what());
      } catch (const openpmd::FileError& e) {
        report("step " + std::to_string(step.number()) + ": component left out: " + e.what());
      }
    }
    series.end_iteration();
    step.release();
    ++written;
    std::cerr << "slipstream stream dump: step " << step.number() << " -> "
              << series.file_of(step.number()) << " (" << components << " components, "
              << human_bytes(bytes) << ")\n";
  }
  std::cerr << "slipstream stream dump: " << written << " steps written, " << skipped
            << " skipped\n";
  return problems == 0 ? 0 : 1;
}

int run_replay(const ReplaySettings& settings) {
  openpmd::silence_hdf5_errors();
  int problems = 0;
  auto report = [&](const std::string& problem) {
    std::cerr << "slipstream stream replay: " << problem << "\n";
    ++problems;
  };
  // Every dataset is checked before any writer joins the stream: a refused series publishes
  // nothing.
  std::optional<openpmd::SeriesReader> opened;
  try {
    opened.emplace(settings.input, report, openpmd::ReadLimits{settings.max_bytes});
  } catch (const openpmd::FileError& e) {
    report(e.what());
    return 1;
  }
  const openpmd::SeriesReader& series = *opened;

  StreamWriterOptions writer_options;
  writer_options.queue_limit = settings.queue_limit;
  writer_options.expected_groups = settings.expected_groups;
  std::vector<StreamWriter> writers;
  for (std::uint32_t rank = 0; rank < settings.writers; ++rank) {
    writers.emplace_back(client_options(settings.address), settings.stream, rank,
                         settings.writers, writer_options);
  }
  for (const openpmd::NamedAttribute& a : series.root_attributes()) {
    writers[0].set_stream_attribute("/", a.name, a.value);
  }
  const std::uint64_t ranks = settings.writers;
  for (std::int64_t number : series.iterations()) {
    const openpmd::IterationData iteration = series.read(number);
    // All writers begin before any ends: one thread plays every rank, and a step is complete
    // only once each of them has ended it.
    for (StreamWriter& writer : writers) writer.begin_step(number);
    std::deque<std::vector<std::uint64_t>> boxes;  // borrowed by put_chunk until end_step
    std::uint64_t bytes = 0;
    for (const openpmd::ComponentData& component : iteration.components) {
      // Writer k gets the k-th of `ranks` near-equal runs of rows (rank 0 an empty dataset).
      const std::uint64_t rows = component.extent[0];
      const std::uint64_t row_bytes = rows == 0 ? 0 : component.bytes.size() / rows;
      for (std::uint64_t k = 0; k < ranks; ++k) {
        const std::uint64_t begin = stream::block_begin(rows, ranks, k);
        const std::uint64_t end = stream::block_begin(rows, ranks, k + 1);
        if (end == begin && !(rows == 0 && k == 0)) continue;
        auto& offset = boxes.emplace_back(component.extent.size(), 0);
        auto& extent = boxes.emplace_back(component.extent);
        offset[0] = begin;
        extent[0] = end - begin;
        writers[k].put_chunk(component.name, component.dtype, component.extent, offset, extent,
                             component.bytes.data() + begin * row_bytes,
                             (end - begin) * row_bytes);
      }
      bytes += component.bytes.size();
    }
    for (const StreamAttribute& a : iteration.attributes) {
      writers[0].set_attribute(a.path, a.name, a.value);
    }
    for (StreamWriter& writer : writers) writer.end_step();
    std::cerr << "slipstream stream replay: step " << number << " ("
              << iteration.components.size() << " components, " << human_bytes(bytes) << ")\n";
  }
  for (StreamWriter& writer : writers) writer.close();
  std::cerr << "slipstream stream replay: " << series.iterations().size()
            << " steps published to '" << settings.stream << "'\n";
  return problems == 0 ? 0 : 1;
}

}  // namespace slipstream::cli
