// SampleBuilder: a TorchScript module turns a step's records into (input, target) rows, and every
// way it can go wrong is a TrainError that says what (the trainer then skips that step).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "ml/sample_builder.hpp"
#include "test_models.hpp"

namespace slipstream::ml {
namespace {

std::unique_ptr<SampleBuilder> builder(const std::string& body) {
  return SampleBuilder::load(testing::module_from_source(
      "Samples", "def forward(self, records: Dict[str, List[Tensor]]) -> Tuple[Tensor, Tensor]:\n" +
                     body));
}

std::string error_of(SampleBuilder& b, std::span<const RecordPieces> records) {
  try {
    b.build(records);
  } catch (const TrainError& e) {
    return e.what();
  }
  return "no error";
}

struct Pieces {
  // Two pieces of "particles/e/position/x" (3 and 2 values) and one of "meshes/T" (2 x 2).
  std::vector<float> a{1, 2, 3}, b{4, 5}, t{10, 20, 30, 40};
  std::vector<std::int64_t> a_shape{3}, b_shape{2}, t_shape{2, 2};
  std::vector<RecordPieces> records() const {
    return {{"particles/e/position/x",
             {{DType::kFloat32, a_shape, a.data(), a.size() * 4},
              {DType::kFloat32, b_shape, b.data(), b.size() * 4}}},
            {"meshes/T", {{DType::kFloat32, t_shape, t.data(), t.size() * 4}}}};
  }
};

TEST(SampleBuilder, BuildsRowsFromEveryPieceOfEveryRecord) {
  auto b = builder(
      "  x = torch.cat(records['particles/e/position/x']).reshape(-1, 1)\n"
      "  t = records['meshes/T'][0].reshape(-1)[:5].reshape(-1, 1)\n"
      "  t = torch.cat([t, torch.zeros(1, 1)])\n"
      "  return x, t * 2.0\n");
  const Pieces p;
  const auto records = p.records();
  SampleRows rows = b->build(records);
  ASSERT_EQ(rows.samples, 5);
  EXPECT_EQ(rows.input.shape, (std::vector<std::int64_t>{5, 1}));
  EXPECT_EQ(rows.target.shape, (std::vector<std::int64_t>{5, 1}));
  std::vector<float> x(5), y(5);
  std::memcpy(x.data(), rows.input.data.data(), 20);
  std::memcpy(y.data(), rows.target.data.data(), 20);
  EXPECT_EQ(x, (std::vector<float>{1, 2, 3, 4, 5}));
  EXPECT_EQ(y, (std::vector<float>{20, 40, 60, 80, 0}));
}

TEST(SampleBuilder, ErrorsSayWhatIsWrong) {
  const Pieces p;
  const auto records = p.records();
  auto refuses = builder(
      "  assert len(records) == 0, 'no electrons here'\n"
      "  return torch.zeros(1), torch.zeros(1)\n");
  EXPECT_NE(error_of(*refuses, records).find("no electrons here"), std::string::npos);
  EXPECT_NE(error_of(*builder("  x = records['missing'][0]\n  return x, x\n"), records)
                .find("the sample builder failed"),
            std::string::npos);
  EXPECT_NE(error_of(*builder("  return torch.zeros(3, 1), torch.zeros(2, 1)\n"), records)
                .find("3 inputs and 2 targets"),
            std::string::npos);
  EXPECT_NE(error_of(*builder("  return torch.zeros(()), torch.zeros(())\n"), records)
                .find("first dimension"),
            std::string::npos);
  EXPECT_NE(error_of(*builder("  return torch.zeros(2, 1).half(), torch.zeros(2, 1)\n"), records)
                .find("dtype"),
            std::string::npos);
  // A builder that returns one tensor is refused when it is compiled or when it runs.
  try {
    auto one = SampleBuilder::load(testing::module_from_source(
        "One", "def forward(self, records: Dict[str, List[Tensor]]) -> Tensor:\n"
               "  return torch.zeros(2)\n"));
    EXPECT_NE(error_of(*one, records).find("tuple of two tensors"), std::string::npos);
  } catch (const TrainError& e) {
    ADD_FAILURE() << e.what();
  }
  try {
    SampleBuilder::load("not a TorchScript archive");
    ADD_FAILURE() << "loaded garbage";
  } catch (const TrainError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot be loaded"), std::string::npos);
  }
}

TEST(SampleBuilder, NoRecordsGiveAnEmptyDictionary) {
  auto b = builder("  n = len(records)\n  return torch.zeros(n, 2), torch.zeros(n, 1)\n");
  SampleRows rows = b->build({});
  EXPECT_EQ(rows.samples, 0);
  EXPECT_EQ(rows.input.shape, (std::vector<std::int64_t>{0, 2}));
}

}  // namespace
}  // namespace slipstream::ml
