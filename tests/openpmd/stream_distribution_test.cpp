// SST's step distribution and precious first step through the openPMD layer, against a real
// server: readers of one group that each get whole iterations (StepsRoundRobin, StepsOnDemand),
// every element checked, none lost or seen twice; and a reader that joins after the writer has
// finished still reads the first iteration when the writer kept it (FirstTimestepPrecious).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "openPMD/openPMD.hpp"
#include "support/server_process.hpp"

namespace {

using namespace openPMD;

slipstream::testing::ServerProcess& server() {
  static slipstream::testing::ServerProcess process;
  return process;
}

constexpr std::uint64_t kElements = 1000;

std::string config(const std::string& parameters, const std::string& group = "readers") {
  return R"({"slipstream": {"address": ")" + server().unix_address() + R"(", "group": ")" + group +
         R"("}, "adios2": {"engine": {"parameters": {)" + parameters + "}}}}";
}

void write(const std::string& name, int iterations, const std::string& parameters) {
  Series series(name + ".sst", Access::CREATE, config(parameters));
  for (int i = 0; i < iterations; ++i) {
    Iteration it = series.writeIterations()[static_cast<std::uint64_t>(i)];
    MeshRecordComponent rho = it.meshes["rho"][RecordComponent::SCALAR];
    rho.resetDataset(Dataset(Datatype::DOUBLE, {kElements}));
    auto span = rho.storeChunk<double>({0}, {kElements}).currentBuffer();
    for (std::uint64_t k = 0; k < kElements; ++k) span[k] = i * 1000.0 + static_cast<double>(k);
    it.close();
  }
  series.close();
}

// Reader `rank` of `size` of the group: the iterations it got, each checked whole.
std::vector<std::uint64_t> read(const std::string& name, int rank, int size,
                                const std::string& parameters, const std::string& group) {
  Series series(name + ".sst", Access::READ_LINEAR, config(parameters, group), rank, size,
                nullptr);
  std::vector<std::uint64_t> seen;
  for (IndexedIteration it : series.readIterations()) {
    auto values = it.meshes["rho"][RecordComponent::SCALAR].loadChunk<double>();
    it.close();
    for (std::uint64_t k = 0; k < kElements; ++k) {
      EXPECT_EQ(values.get()[k], it.iterationIndex * 1000.0 + static_cast<double>(k))
          << name << " iteration " << it.iterationIndex << " element " << k;
    }
    seen.push_back(it.iterationIndex);
  }
  return seen;
}

class StreamDistribution : public ::testing::TestWithParam<const char*> {};

TEST_P(StreamDistribution, EachReaderGetsWholeIterationsAndEveryIterationOnce) {
  const std::string name = std::string("distribution_") + GetParam();
  const std::string parameters = std::string(R"("StepDistributionMode": ")") + GetParam() + "\"";
  std::vector<std::uint64_t> first, second;
  std::thread reader0([&] { first = read(name, 0, 2, parameters, "readers"); });
  std::thread reader1([&] { second = read(name, 1, 2, parameters, "readers"); });
  write(name, 10, "");
  reader0.join();
  reader1.join();
  std::vector<std::uint64_t> all(first);
  all.insert(all.end(), second.begin(), second.end());
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, (std::vector<std::uint64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  if (std::string(GetParam()) == "StepsRoundRobin") {
    EXPECT_EQ(first, (std::vector<std::uint64_t>{0, 2, 4, 6, 8}));
    EXPECT_EQ(second, (std::vector<std::uint64_t>{1, 3, 5, 7, 9}));
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, StreamDistribution,
                         ::testing::Values("StepsRoundRobin", "StepsOnDemand"));

TEST(StreamPrecious, AReaderThatJoinsAfterTheWriterStillReadsTheFirstIteration) {
  // The first group reads everything; the writer keeps iteration 0 for groups to come.
  std::vector<std::uint64_t> early;
  std::thread reader([&] { early = read("precious", 0, 1, "", "early"); });
  write("precious", 4, R"("FirstTimestepPrecious": "On")");
  reader.join();
  EXPECT_EQ(early, (std::vector<std::uint64_t>{0, 1, 2, 3}));
  EXPECT_EQ(read("precious", 0, 1, "", "late"), std::vector<std::uint64_t>{0});
}

// A long run's writer holds only the iterations still open: those it has sent leave the series
// (they stayed, each with its tree, and every flush walked them all: memory and time grew with
// the run). Going back to an iteration sent is refused.
TEST(StreamWriterMemory, ASeriesHoldsOnlyItsOpenIterations) {
  std::vector<std::uint64_t> seen;
  std::thread reader([&] { seen = read("bounded", 0, 1, "", "readers"); });
  {
    Series series("bounded.sst", Access::CREATE, config(""));
    for (std::uint64_t i = 0; i < 50; ++i) {
      Iteration it = series.writeIterations()[i];
      MeshRecordComponent rho = it.meshes["rho"][RecordComponent::SCALAR];
      rho.resetDataset(Dataset(Datatype::DOUBLE, {kElements}));
      std::vector<double> values(kElements);
      for (std::uint64_t k = 0; k < kElements; ++k) values[k] = i * 1000.0 + static_cast<double>(k);
      rho.storeChunk(values, {0}, {kElements});
      it.close();
      EXPECT_LE(series.iterations.size(), 1u) << "after iteration " << i;
      EXPECT_TRUE(it.closed());
    }
    EXPECT_THROW(series.writeIterations()[10], error::WrongAPIUsage);
    series.close();
  }
  reader.join();
  EXPECT_EQ(seen.size(), 50u);
}

// A stream reader updates the last iteration's tree in place when the next step has the same
// shape and nobody holds a part of it (fewer allocations a step). What a reader sees must not
// depend on that: every attribute is the step's own, whether it changed, stayed, or appeared
// with a new mesh; and a handle kept from an earlier iteration keeps showing that iteration.
TEST(StreamReaderTree, EveryStepShowsItsOwnAttributesAndKeptHandlesTheirIteration) {
  constexpr int kIterations = 8;
  auto note = [](int i) { return i % 3 == 0 ? std::string("same") : "note " + std::to_string(i); };
  std::thread writer([&] {
    Series series("reader_tree.sst", Access::CREATE, config(""));
    for (int i = 0; i < kIterations; ++i) {
      Iteration it = series.writeIterations()[static_cast<std::uint64_t>(i)];
      it.setTime(0.5 * i);
      it.setAttribute("note", note(i));
      MeshRecordComponent rho = it.meshes["rho"][RecordComponent::SCALAR];
      rho.resetDataset(Dataset(Datatype::DOUBLE, {kElements}));
      std::vector<double> values(kElements, static_cast<double>(i));
      rho.storeChunk(values, {0}, {kElements});
      std::vector<float> b_values{1.0f, 2.0f};  // stored at the close: alive until then
      if (i == 4) {  // another shape for one step
        MeshRecordComponent b = it.meshes["B"]["x"];
        b.resetDataset(Dataset(Datatype::FLOAT, {2}));
        b.storeChunk(b_values, {0}, {2});
      }
      if (i >= 6) it.setAttribute("late", i);  // an attribute from here on
      it.close();
    }
    series.close();
  });
  Series series("reader_tree.sst", Access::READ_LINEAR, config("", "tree"));
  std::optional<IndexedIteration> kept;
  std::optional<MeshRecordComponent> kept_rho;
  int count = 0;
  for (IndexedIteration it : series.readIterations()) {
    const int i = static_cast<int>(it.iterationIndex);
    EXPECT_EQ(i, count++);
    EXPECT_EQ(it.time<double>(), 0.5 * i);
    EXPECT_EQ(it.getAttribute("note").get<std::string>(), note(i));
    EXPECT_EQ(it.containsAttribute("late"), i >= 6) << i;
    if (i >= 6) {
      EXPECT_EQ(it.getAttribute("late").get<int>(), i);
    }
    EXPECT_EQ(it.meshes.contains("B"), i == 4) << i;
    MeshRecordComponent rho = it.meshes["rho"][RecordComponent::SCALAR];
    EXPECT_EQ(rho.getExtent(), Extent{kElements});
    auto values = rho.loadChunk<double>();
    it.close();
    EXPECT_EQ(values.get()[kElements - 1], static_cast<double>(i));
    if (i == 2) {
      kept = it;
      kept_rho = rho;
    }
    if (i > 2 && kept) {  // the kept handles still show iteration 2
      EXPECT_EQ(kept->time<double>(), 1.0) << "after iteration " << i;
      EXPECT_EQ(kept->getAttribute("note").get<std::string>(), note(2));
      EXPECT_TRUE(kept->closed());
      EXPECT_EQ(kept_rho->getExtent(), Extent{kElements});
    }
    if (i == 5) {  // dropped: the reader may reuse the tree again
      kept.reset();
      kept_rho.reset();
    }
  }
  writer.join();
  EXPECT_EQ(count, kIterations);
}

// adios2.dataset.operators, as openPMD-api users write them: the series' operator compresses
// every dataset it can (zfp: the floating-point ones; integer ids go raw), a Dataset's own options
// override it, and the reader gets decoded data (within zfp's accuracy, exact for the lossless
// operator and the raw ids). Bad operators are configuration errors naming the key path.
TEST(StreamOperators, SeriesAndDatasetOperatorsCompressAndReadersGetDecodedData) {
  constexpr double kAccuracy = 1e-3;
  constexpr int kIterations = 3;
  const std::string series_operators =
      R"(, "adios2": {"dataset": {"operators": [{"type": "zfp", "parameters": {"accuracy": 0.001}}]}})";
  auto with_operators = [&](const std::string& base) {
    return base.substr(0, base.size() - 1) + series_operators + "}";
  };
  auto field = [](int i, std::uint64_t k) { return std::sin(0.01 * static_cast<double>(k)) + i; };
  std::thread writer([&] {
    Series series("operators.sst", Access::CREATE, with_operators(config("")));
    for (int i = 0; i < kIterations; ++i) {
      Iteration it = series.writeIterations()[static_cast<std::uint64_t>(i)];
      MeshRecordComponent rho = it.meshes["rho"][RecordComponent::SCALAR];
      rho.resetDataset(Dataset(Datatype::DOUBLE, {kElements}));
      std::vector<double> values(kElements);
      for (std::uint64_t k = 0; k < kElements; ++k) values[k] = field(i, k);
      rho.storeChunk(values, {0}, {kElements});
      // Its own operator: lossless.
      MeshRecordComponent exact = it.meshes["exact"][RecordComponent::SCALAR];
      exact.resetDataset(Dataset(Datatype::DOUBLE, {kElements},
                                 R"({"adios2": {"dataset": {"operators": [{"type": "blosc", )"
                                 R"("parameters": {"clevel": 5, "doshuffle": "BLOSC_SHUFFLE"}}]}}})"));
      exact.storeChunk(values, {0}, {kElements});
      auto id = it.particles["e"]["id"][RecordComponent::SCALAR];
      id.resetDataset(Dataset(Datatype::ULONG, {kElements}));
      std::vector<std::uint64_t> ids(kElements);
      for (std::uint64_t k = 0; k < kElements; ++k) ids[k] = k * 1000003 + static_cast<std::uint64_t>(i);
      id.storeChunk(ids, {0}, {kElements});
      it.close();
    }
    series.close();
  });
  Series series("operators.sst", Access::READ_LINEAR, config("", "operators"));
  int seen = 0;
  for (IndexedIteration it : series.readIterations()) {
    const int i = static_cast<int>(it.iterationIndex);
    auto rho = it.meshes["rho"][RecordComponent::SCALAR].loadChunk<double>();
    auto exact = it.meshes["exact"][RecordComponent::SCALAR].loadChunk<double>();
    auto id = it.particles["e"]["id"][RecordComponent::SCALAR].loadChunk<std::uint64_t>();
    it.close();
    double worst = 0;
    for (std::uint64_t k = 0; k < kElements; ++k) {
      worst = std::max(worst, std::abs(rho.get()[k] - field(i, k)));
      ASSERT_EQ(exact.get()[k], field(i, k)) << "iteration " << i << " element " << k;
      ASSERT_EQ(id.get()[k], k * 1000003 + static_cast<std::uint64_t>(i));
    }
    EXPECT_LE(worst, kAccuracy);
    EXPECT_GT(worst, 0.0) << "rho went through zfp";
    ++seen;
  }
  writer.join();
  EXPECT_EQ(seen, kIterations);
}

TEST(StreamOperators, BadOperatorsAreConfigurationErrors) {
  auto opening = [&](const std::string& operators) {
    const std::string base = config("");
    Series series("bad_operators.sst", Access::CREATE,
                  base.substr(0, base.size() - 1) + R"(, "adios2": {"dataset": {"operators": )" +
                      operators + "}}}");
  };
  EXPECT_THROW(opening(R"([{"type": "sz", "parameters": {"accuracy": 0.1}}])"),
               error::BackendConfigSchema);
  EXPECT_THROW(opening(R"([{"type": "zfp", "parameters": {"accuracy": 0}}])"),
               error::BackendConfigSchema);
  EXPECT_THROW(opening(R"([{"type": "zstd"}, {"type": "blosc"}])"), error::BackendConfigSchema);
  EXPECT_THROW(opening(R"({"type": "zstd"})"), error::BackendConfigSchema);
  // A dataset's own: refused at the flush that declares it, naming the dataset.
  Series series("bad_dataset_operator.sst", Access::CREATE, config(""));
  Iteration it = series.writeIterations()[0];
  MeshRecordComponent rho = it.meshes["rho"][RecordComponent::SCALAR];
  rho.resetDataset(Dataset(Datatype::DOUBLE, {kElements},
                           R"({"adios2": {"dataset": {"operators": [{"type": "zstd", )"
                           R"("parameters": {"level": 99}}]}}})"));
  std::vector<double> values(kElements, 1.0);
  rho.storeChunk(values, {0}, {kElements});
  try {
    series.flush();
    ADD_FAILURE() << "level 99 was accepted";
  } catch (const error::BackendConfigSchema& e) {
    EXPECT_NE(std::string(e.what()).find("meshes/rho"), std::string::npos) << e.what();
  }
  MeshRecordComponent other = it.meshes["other"][RecordComponent::SCALAR];
  EXPECT_THROW(other.resetDataset(Dataset(Datatype::DOUBLE, {4}, "{not json")),
               error::BackendConfigSchema);
}

}  // namespace
