// The openPMD layer's answers to bad input: each a typed exception whose message names the
// series, the iteration and the component, with nothing half-written (against a real server for
// streams and real files).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "openPMD/openPMD.hpp"
#include "support/server_process.hpp"

namespace {

using namespace openPMD;
namespace fs = std::filesystem;

slipstream::testing::ServerProcess& server() {
  static slipstream::testing::ServerProcess process;
  return process;
}

class OpenPmdBadInput : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("openpmd-bad-" + std::to_string(getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string file(const std::string& name) const { return (dir_ / name).string(); }
  std::string stream_config() const {
    return R"({"slipstream": {"address": ")" + server().unix_address() + R"("}})";
  }

  fs::path dir_;
};

// The text of what `body` throws as E (fails the test when it throws nothing or something else).
template <typename E, typename Body>
std::string message_of(Body&& body) {
  try {
    body();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw another type: " << e.what();
    return "";
  }
  ADD_FAILURE() << "threw nothing";
  return "";
}

TEST_F(OpenPmdBadInput, AnUnknownEndingSaysWhatIsSupported) {
  const std::string text =
      message_of<error::WrongAPIUsage>([&] { Series(file("data.xyz"), Access::CREATE); });
  EXPECT_NE(text.find("data.xyz"), std::string::npos) << text;
  EXPECT_NE(text.find(".sst"), std::string::npos) << text;
  EXPECT_NE(text.find(".h5"), std::string::npos) << text;
  const std::string bp =
      message_of<error::WrongAPIUsage>([&] { Series(file("data.bp5"), Access::CREATE); });
  EXPECT_NE(bp.find("ADIOS2 files"), std::string::npos) << bp;
  EXPECT_FALSE(fs::exists(file("data.xyz")));
}

TEST_F(OpenPmdBadInput, AConfigurationThatDoesNotParseIsRefused) {
  EXPECT_NE(message_of<error::BackendConfigSchema>([&] {
              Series(file("a.h5"), Access::CREATE, R"({"backend": })");
            }).find("JSON"),
            std::string::npos);
  EXPECT_NE(message_of<error::BackendConfigSchema>([&] {
              Series(file("a.h5"), Access::CREATE, "backend = = 3");
            }).find("TOML"),
            std::string::npos);
  EXPECT_NE(message_of<error::BackendConfigSchema>([&] {
              Series(file("a.h5"), Access::CREATE,
                     R"({"adios2": {"engine": {"parameters": {"QueueFullPolicy": "Sometimes"}}}})");
            }).find("QueueFullPolicy"),
            std::string::npos);
  EXPECT_NE(message_of<error::BackendConfigSchema>([&] {
              Series(file("a.h5"), Access::CREATE, "@" + file("missing.toml"));
            }).find("missing.toml"),
            std::string::npos);
  EXPECT_FALSE(fs::exists(file("a.h5")));
}

// slipstream.reductions: malformed entries are refused where they are; a function file that
// cannot be loaded is refused when the series opens, naming the reduction (nothing is sent).
TEST_F(OpenPmdBadInput, BadReductionsAreNamedByTheirPlaceInTheConfiguration) {
  auto refused = [&](const std::string& reductions) {
    return message_of<error::BackendConfigSchema>([&] {
      Series("reduced.sst", Access::CREATE,
             R"({"slipstream": {"address": ")" + server().unix_address() +
                 R"(", "reductions": )" + reductions + "}}");
    });
  };
  std::string text = refused(R"({"function": "f.pt"})");
  EXPECT_NE(text.find("slipstream.reductions"), std::string::npos) << text;
  text = refused(R"([{"function": "f.pt", "inputs": ["a"]}])");
  EXPECT_NE(text.find("missing 'output'"), std::string::npos) << text;
  text = refused(R"([{"function": "f.pt", "inputs": ["a"], "output": "b", "colour": 1}])");
  EXPECT_NE(text.find("colour"), std::string::npos) << text;
  text = refused(R"([{"function": ")" + file("absent.pt") +
                 R"(", "inputs": ["particles/e/position/x"], "output": "meshes/h"}])");
  EXPECT_NE(text.find("reduction to 'meshes/h'"), std::string::npos) << text;
  EXPECT_NE(text.find("absent.pt"), std::string::npos) << text;
}

TEST_F(OpenPmdBadInput, DatasetsMayOnlyGrowAndKeepTheirType) {
  Series series(file("grow.h5"), Access::CREATE);
  MeshRecordComponent rho = series.iterations[3].meshes["rho"][RecordComponent::SCALAR];
  rho.resetDataset(Dataset(Datatype::DOUBLE, {10}));
  std::vector<double> values(10, 1.0);
  rho.storeChunk(values, {0}, {10});
  series.flush();
  const std::string type = message_of<error::WrongAPIUsage>(
      [&] { rho.resetDataset(Dataset(Datatype::FLOAT, {10})); });
  EXPECT_NE(type.find("grow.h5"), std::string::npos) << type;
  EXPECT_NE(type.find("iteration 3"), std::string::npos) << type;
  EXPECT_NE(type.find("meshes/rho"), std::string::npos) << type;
  const std::string shrink = message_of<error::WrongAPIUsage>(
      [&] { rho.resetDataset(Dataset(Datatype::DOUBLE, {5})); });
  EXPECT_NE(shrink.find("only grow"), std::string::npos) << shrink;
  const std::string rank = message_of<error::WrongAPIUsage>(
      [&] { rho.resetDataset(Dataset(Datatype::DOUBLE, {10, 2})); });
  EXPECT_NE(rank.find("dimensionality"), std::string::npos) << rank;
  rho.resetDataset(Dataset(Datatype::DOUBLE, {20}));  // growing is allowed
  EXPECT_EQ(rho.getExtent(), Extent{20});
}

TEST_F(OpenPmdBadInput, ChunksOutsideTheExtentOrOfAnotherTypeAreRefusedWhenStored) {
  Series series(file("chunks.h5"), Access::CREATE);
  MeshRecordComponent ex = series.iterations[0].meshes["E"]["x"];
  ex.resetDataset(Dataset(Datatype::DOUBLE, {4, 4}));
  std::vector<double> values(8, 1.0);
  const std::string outside =
      message_of<error::WrongAPIUsage>([&] { ex.storeChunk(values, {3, 0}, {2, 4}); });
  EXPECT_NE(outside.find("meshes/E/x"), std::string::npos) << outside;
  EXPECT_NE(outside.find("iteration 0"), std::string::npos) << outside;
  std::vector<float> floats(8, 1.0f);
  const std::string type =
      message_of<error::WrongAPIUsage>([&] { ex.storeChunk(floats, {0, 0}, {2, 4}); });
  EXPECT_NE(type.find("FLOAT"), std::string::npos) << type;
  const std::string size =
      message_of<error::WrongAPIUsage>([&] { ex.storeChunk(values, {0, 0}, {1, 4}); });
  EXPECT_NE(size.find("8 elements"), std::string::npos) << size;
  MeshRecordComponent ey = series.iterations[0].meshes["E"]["y"];
  const std::string undeclared =
      message_of<error::WrongAPIUsage>([&] { ey.storeChunk(values, {0}, {8}); });
  EXPECT_NE(undeclared.find("resetDataset"), std::string::npos) << undeclared;
}

TEST_F(OpenPmdBadInput, AMissingComponentAndASecondCloseAreNamed) {
  {
    Series series(file("read.h5"), Access::CREATE);
    MeshRecordComponent rho = series.iterations[7].meshes["rho"][RecordComponent::SCALAR];
    rho.resetDataset(Dataset(Datatype::INT, {3}));
    rho.makeConstant(5);
    series.iterations[7].close();
    const std::string twice =
        message_of<error::WrongAPIUsage>([&] { series.iterations[7].close(); });
    EXPECT_NE(twice.find("iteration 7"), std::string::npos) << twice;
    EXPECT_NE(twice.find("closed already"), std::string::npos) << twice;
    const std::string closed = message_of<error::WrongAPIUsage>(
        [&] { series.iterations[7].meshes["rho"][RecordComponent::SCALAR].setUnitSI(2.0); });
    EXPECT_NE(closed.find("closed"), std::string::npos) << closed;
  }
  Series series(file("read.h5"), Access::READ_ONLY);
  Iteration it = series.iterations.at(7);
  const std::string missing = message_of<std::out_of_range>([&] { it.meshes["E"]; });
  EXPECT_NE(missing.find("'E'"), std::string::npos) << missing;
  EXPECT_NE(missing.find("read.h5"), std::string::npos) << missing;
  EXPECT_NE(missing.find("iteration 7"), std::string::npos) << missing;
  auto values = it.meshes["rho"][RecordComponent::SCALAR].loadChunk<int>();
  it.close();
  EXPECT_EQ(values.get()[0], 5);
  EXPECT_EQ(values.get()[2], 5);
}

TEST_F(OpenPmdBadInput, AReaderWithNoWriterGivesUpAfterOpenTimeoutSecs) {
  const std::string config =
      R"({"slipstream": {"address": ")" + server().unix_address() +
      R"("}, "adios2": {"engine": {"parameters": {"OpenTimeoutSecs": "1"}}}})";
  Series series("nobody_writes.sst", Access::READ_LINEAR, config);
  const std::string text = message_of<error::ReadError>([&] { series.readIterations().begin(); });
  EXPECT_NE(text.find("nobody_writes.sst"), std::string::npos) << text;
  EXPECT_NE(text.find("OpenTimeoutSecs"), std::string::npos) << text;
}

TEST_F(OpenPmdBadInput, AStreamRefusesTypesItCannotCarryBeforeSendingAnything) {
  Series series("wrong_types.sst", Access::CREATE, stream_config() + "");
  Iteration it = series.writeIterations()[0];
  RecordComponent numbers = it.particles["e"]["n"][RecordComponent::SCALAR];
  numbers.resetDataset(Dataset(Datatype::CDOUBLE, {4}));
  const std::string text =
      message_of<error::OperationUnsupportedInBackend>([&] { it.close(); });
  EXPECT_NE(text.find("particles/e/n"), std::string::npos) << text;
  EXPECT_NE(text.find("CDOUBLE"), std::string::npos) << text;
}

}  // namespace
