// stream_mpi_check: the reader side of the MPI test. Two reader groups read what the
// stream_mpi_writer job writes: "pairs" (2 readers, binpacking) and "whole" (1 reader,
// slicedataset), each reader a thread with its own connection. Every element of every component
// of every step is checked against mpi_layout.hpp, each group must get each element exactly once
// per step, and openPMD's standard attributes must arrive as written. The server address comes
// from SLIPSTREAM_ADDRESS.
// Usage: stream_mpi_check STREAM WRITERS STEPS   (exit status 0: everything as expected)
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "mpi_layout.hpp"
#include "slipstream/stream.hpp"

namespace {

using namespace slipstream::testing::mpi_stream;

struct Group {
  std::string name;
  std::string strategy;
  std::uint32_t size;
};

// What the readers found; shared by the reader threads.
class Findings {
 public:
  void problem(const std::string& text) {
    std::lock_guard lock(mutex_);
    if (problems_++ < 20) std::fprintf(stderr, "stream_mpi_check: %s\n", text.c_str());
  }
  // Counts one delivery to `group` of each element (row-major index) in `indices`.
  void delivered(const std::string& group, std::int64_t step, const std::string& component,
                 const std::vector<std::uint64_t>& indices) {
    std::lock_guard lock(mutex_);
    std::vector<int>& counts = counts_[group][step][component];
    for (std::uint64_t index : indices) {
      if (index >= counts.size()) counts.resize(index + 1, 0);
      ++counts[index];
    }
  }
  int problems() const { return problems_; }
  const auto& counts() const { return counts_; }

 private:
  std::mutex mutex_;
  int problems_ = 0;
  std::map<std::string, std::map<std::int64_t, std::map<std::string, std::vector<int>>>> counts_;
};

const slipstream::AttributeValue* find_attribute(const slipstream::StreamStep& step,
                                                 std::int64_t at, const std::string& path,
                                                 const std::string& name) {
  for (const slipstream::StreamAttribute& a : step.attributes()) {
    if (a.step == at && a.path == path && a.name == name) return &a.value;
  }
  return nullptr;
}

template <typename T>
void expect_attribute(Findings& findings, const slipstream::StreamStep& step, std::int64_t at,
                      const std::string& path, const std::string& name, const T& expected) {
  const slipstream::AttributeValue* value = find_attribute(step, at, path, name);
  const T* typed = value == nullptr ? nullptr : std::get_if<T>(value);
  if (typed == nullptr || *typed != expected) {
    findings.problem("step " + std::to_string(step.number()) + ": attribute " + path + " " + name +
                     (value == nullptr   ? " is missing"
                      : typed == nullptr ? " has another type"
                                         : " differs"));
  }
}

void check_attributes(Findings& findings, const slipstream::StreamStep& step) {
  const std::int64_t n = step.number();
  expect_attribute(findings, step, -1, "/", "openPMD", std::string("1.1.0"));
  expect_attribute(findings, step, -1, "/", "openPMDextension", std::int64_t{0});
  expect_attribute(findings, step, -1, "/", "basePath", std::string("/data/%T/"));
  expect_attribute(findings, step, -1, "/", "meshesPath", std::string("meshes/"));
  expect_attribute(findings, step, -1, "/", "particlesPath", std::string("particles/"));
  expect_attribute(findings, step, -1, "/", "iterationEncoding", std::string("variableBased"));
  expect_attribute(findings, step, n, "/", "time", kDt * static_cast<double>(n));
  expect_attribute(findings, step, n, "/", "dt", kDt);
  expect_attribute(findings, step, n, "/", "timeUnitSI", 1.0);
  expect_attribute(findings, step, n, "meshes/B", "unitDimension", kTesla);
  expect_attribute(findings, step, n, "meshes/B", "geometry", std::string("cartesian"));
  expect_attribute(findings, step, n, "meshes/B", "dataOrder", std::string("C"));
  expect_attribute(findings, step, n, "meshes/B", "axisLabels", std::vector<std::string>{"y", "x"});
  expect_attribute(findings, step, n, "meshes/B", "gridSpacing", std::vector<double>{1.0, 0.5});
  expect_attribute(findings, step, n, "meshes/B", "gridGlobalOffset", std::vector<double>{0, 0});
  expect_attribute(findings, step, n, "meshes/B", "gridUnitSI", 1e-6);
  expect_attribute(findings, step, n, std::string(kField), "position",
                   std::vector<double>{0.5, 0.5});
  expect_attribute(findings, step, n, std::string(kField), "unitSI", 1.0);
  expect_attribute(findings, step, n, "particles/electrons/position", "unitDimension", kMetre);
  expect_attribute(findings, step, n, std::string(kPositionX), "unitSI", 1e-6);
}

// Checks one piece's values and source rank, and counts its elements.
void check_piece(Findings& findings, const std::string& group, std::int64_t step,
                 const std::string& component, const slipstream::StreamPiece& piece) {
  const slipstream::stream::Chunk& p = piece.piece;
  const std::string where = group + " step " + std::to_string(step) + " " + component;
  if (component == kField) {
    const auto values = piece.as<double>();
    const std::uint64_t rows = p.extent[0], columns = p.extent[1];
    if (values.size() != rows * columns) return findings.problem(where + ": wrong size");
    std::vector<std::uint64_t> indices;
    for (std::uint64_t r = 0; r < rows; ++r) {
      const std::uint64_t row = p.offset[0] + r;
      if (row / (2 * kRowsPerChunk) != p.source_rank) {
        findings.problem(where + ": row " + std::to_string(row) + " from the wrong writer");
      }
      for (std::uint64_t c = 0; c < columns; ++c) {
        const std::uint64_t index = row * kColumns + p.offset[1] + c;
        if (values[r * columns + c] != field_value(step, index)) {
          return findings.problem(where + ": element " + std::to_string(index) + " differs");
        }
        indices.push_back(index);
      }
    }
    findings.delivered(group, step, component, indices);
    return;
  }
  const std::uint64_t first = p.offset[0], count = p.extent[0];
  std::vector<std::uint64_t> indices;
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::uint64_t particle = first + i;
    const bool right = component == kId ? piece.as<std::int64_t>()[i] == id_value(step, particle)
                                        : piece.as<double>()[i] == position_value(step, particle);
    if (!right)
      return findings.problem(where + ": particle " + std::to_string(particle) + " differs");
    if (particle < first_particle(p.source_rank) ||
        particle >= first_particle(p.source_rank) + particles_of(p.source_rank)) {
      findings.problem(where + ": particle " + std::to_string(particle) + " from the wrong writer");
    }
    indices.push_back(particle);
  }
  findings.delivered(group, step, component, indices);
}

void read_as_member(const std::string& stream, const Group& group, std::uint32_t rank,
                    Findings& findings) {
  try {
    slipstream::ClientOptions client;  // SLIPSTREAM_ADDRESS
    slipstream::StreamReaderOptions options;
    options.strategy = group.strategy;
    options.next_timeout = std::chrono::milliseconds(60000);
    slipstream::StreamReader reader(client, stream, group.name, rank, group.size, options);
    for (;;) {
      slipstream::StreamNext next = reader.next_step();
      if (next.kind == slipstream::StreamNext::Kind::kEnd) return;
      if (next.kind != slipstream::StreamNext::Kind::kStep) {
        return findings.problem(
            group.name + " reader " + std::to_string(rank) +
            (next.kind == slipstream::StreamNext::Kind::kTimeout
                 ? ": no step within 60 s"
                 : ": step " + std::to_string(next.skipped_step) + " skipped: " + next.reason));
      }
      slipstream::StreamStep& step = *next.step;
      check_attributes(findings, step);
      for (const char* component : {kField, kPositionX, kId}) {
        if (step.component(component) == nullptr) {
          findings.problem("step " + std::to_string(step.number()) + " has no " + component);
          continue;
        }
        for (const slipstream::StreamPiece& piece : step.load(component)) {
          check_piece(findings, group.name, step.number(), component, piece);
        }
      }
      step.release();
    }
  } catch (const std::exception& e) {
    findings.problem(group.name + " reader " + std::to_string(rank) + ": " + e.what());
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: stream_mpi_check STREAM WRITERS STEPS\n");
    return 2;
  }
  const std::string stream = argv[1];
  const auto writers = static_cast<std::uint64_t>(std::atoll(argv[2]));
  const int steps = std::atoi(argv[3]);
  const std::vector<Group> groups = {{"pairs", "binpacking", 2}, {"whole", "slicedataset", 1}};
  Findings findings;
  std::vector<std::thread> readers;
  for (const Group& group : groups) {
    for (std::uint32_t rank = 0; rank < group.size; ++rank) {
      readers.emplace_back(read_as_member, stream, group, rank, std::ref(findings));
    }
  }
  for (std::thread& reader : readers) reader.join();

  const std::map<std::string, std::uint64_t> elements = {
      {kField, field_extent(writers)[0] * kColumns},
      {kPositionX, particle_count(writers)},
      {kId, particle_count(writers)}};
  for (const Group& group : groups) {
    for (int step = 0; step < steps; ++step) {
      for (const auto& [component, count] : elements) {
        std::vector<int> seen;
        auto g = findings.counts().find(group.name);
        if (g != findings.counts().end() && g->second.count(step) &&
            g->second.at(step).count(component)) {
          seen = g->second.at(step).at(component);
        }
        seen.resize(count, 0);
        const std::vector<int> once(count, 1);
        if (seen != once) {
          findings.problem(group.name + " step " + std::to_string(step) + " " + component +
                           ": not every element exactly once");
        }
      }
    }
  }
  if (findings.problems() > 0) return 1;
  std::printf("stream_mpi_check: %d steps of %llu writers, every element once per group\n", steps,
              static_cast<unsigned long long>(writers));
  return 0;
}
