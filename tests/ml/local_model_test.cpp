// slipstream::LocalModel (libslipstream_local): loading, both run forms, buffer checks, Fortran
// order, errors; results equal the backend's.
#include "slipstream/local_model.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "ml/backend.hpp"
#include "support/message_of.hpp"
#include "test_models.hpp"

namespace slipstream {
namespace {

using ::testing::HasSubstr;
using slipstream::testing::message_of;

std::vector<float> features(std::int64_t cells) {
  std::vector<float> x(static_cast<std::size_t>(cells) * 4);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.11f * static_cast<float>(i % 17) - 0.8f;
  return x;
}


TEST(LocalModel, RunMatchesTheBackend) {
  const std::string bytes = ml::testing::mlp_model();
  const LocalModel model = LocalModel::from_bytes(bytes);
  EXPECT_EQ(model.device(), "CPU");

  const std::vector<float> x = features(50);
  const std::vector<std::int64_t> shape = {50, 4};
  const TensorRef input = TensorRef::of<float>("x", x, shape);
  const std::vector<Tensor> outputs = model.run({&input, 1});
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_THAT(outputs[0].shape(), ::testing::ElementsAre(50, 1));

  auto backend = ml::make_torch_backend();
  std::string error;
  auto direct = backend->load_model(bytes, ml::ModelFormat::kTorchScript, ml::Device{}, &error);
  ASSERT_NE(direct, nullptr) << error;
  const ml::TensorView view{DType::kFloat32, shape, x.data(), x.size() * sizeof(float)};
  std::vector<ml::OwnedTensor> expected;
  ASSERT_TRUE(direct->run({&view, 1}, expected).ok);
  ASSERT_EQ(outputs[0].byte_size(), expected[0].data.size());
  EXPECT_EQ(
      std::memcmp(outputs[0].bytes().data(), expected[0].data.data(), expected[0].data.size()), 0);

  const std::vector<float> reference = ml::testing::mlp_reference(x);
  const auto y = outputs[0].data<float>();
  for (std::size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], reference[i], 1e-5f);
}

TEST(LocalModel, LoadsFromAFile) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("slipstream_local_model_" + std::to_string(::getpid()) + ".pt");
  {
    std::ofstream file(path, std::ios::binary);
    file << ml::testing::mlp_model();
  }
  const LocalModel model = LocalModel::from_file(path.string(), "cpu");
  std::filesystem::remove(path);
  const std::vector<float> x = features(2);
  const std::vector<std::int64_t> shape = {2, 4};
  const TensorRef input = TensorRef::of<float>("x", x, shape);
  EXPECT_EQ(model.run({&input, 1}).size(), 1u);

  EXPECT_THAT(message_of<InvalidArgumentError>([] { LocalModel::from_file("/nonexistent/m.pt"); }),
              HasSubstr("cannot open model file '/nonexistent/m.pt'"));
}

TEST(LocalModel, RunsIntoCallerBuffers) {
  const LocalModel model = LocalModel::from_bytes(ml::testing::mlp_model());
  const std::vector<float> x = features(10);
  const std::vector<std::int64_t> shape = {10, 4}, out_shape = {10, 1};
  const TensorRef input = TensorRef::of<float>("x", x, shape);
  std::vector<float> y(12, -99.0f);  // two spare elements must stay untouched
  const MutableTensorRef output = MutableTensorRef::of<float>(y, out_shape);
  model.run({&input, 1}, {&output, 1});
  const std::vector<float> reference = ml::testing::mlp_reference(x);
  for (std::size_t i = 0; i < 10; ++i) EXPECT_NEAR(y[i], reference[i], 1e-5f);
  EXPECT_EQ(y[10], -99.0f);
  EXPECT_EQ(y[11], -99.0f);

  // An empty expected shape accepts whatever the model returns.
  std::vector<float> z(10);
  const MutableTensorRef any_shape = MutableTensorRef::of<float>(z);
  model.run({&input, 1}, {&any_shape, 1});
  EXPECT_EQ(std::vector<float>(y.begin(), y.begin() + 10), z);
}

TEST(LocalModel, OutputBufferErrorsLeaveEveryBufferUntouched) {
  const LocalModel model = LocalModel::from_bytes(ml::testing::two_outputs_model());
  const std::vector<float> a = {1, 2, 3, 4}, b = {5, 6, 7, 8};
  const std::vector<std::int64_t> shape = {2, 2};
  const TensorRef inputs[] = {TensorRef::of<float>("a", a, shape),
                              TensorRef::of<float>("b", b, shape)};
  std::vector<float> sum(4, -1.0f), product(3, -1.0f);
  std::vector<double> wrong_type(4, -1.0);

  {  // second buffer too small: the first is not written either
    const MutableTensorRef outputs[] = {MutableTensorRef::of<float>(sum),
                                        MutableTensorRef::of<float>(product)};
    EXPECT_THAT(message_of<BufferTooSmallError>([&] { model.run(inputs, outputs); }),
                HasSubstr("output 1 (FLOAT, shape [2, 2]) needs 16 bytes but its buffer has 12"));
    EXPECT_EQ(sum, std::vector<float>(4, -1.0f));
  }
  {  // wrong dtype
    const MutableTensorRef outputs[] = {MutableTensorRef::of<float>(sum),
                                        MutableTensorRef::of<double>(wrong_type)};
    EXPECT_THAT(message_of<InvalidArgumentError>([&] { model.run(inputs, outputs); }),
                HasSubstr("output 1 is FLOAT but its buffer is for DOUBLE"));
    EXPECT_EQ(sum, std::vector<float>(4, -1.0f));
  }
  {  // wrong expected shape
    const std::vector<std::int64_t> flat = {4};
    const MutableTensorRef outputs[] = {MutableTensorRef::of<float>(sum, flat),
                                        MutableTensorRef::of<float>(sum)};
    EXPECT_THAT(message_of<InvalidArgumentError>([&] { model.run(inputs, outputs); }),
                HasSubstr("output 0 has shape [2, 2] but its buffer expects [4]"));
  }
  {  // wrong number of buffers
    const MutableTensorRef outputs[] = {MutableTensorRef::of<float>(sum)};
    EXPECT_THAT(message_of<InvalidArgumentError>([&] { model.run(inputs, outputs); }),
                HasSubstr("the model returned 2 output(s) but 1 output buffer(s) were given"));
  }
}

TEST(LocalModel, InputErrors) {
  const LocalModel model = LocalModel::from_bytes(ml::testing::mlp_model());
  const std::vector<float> x(8);
  const std::vector<std::int64_t> shape = {2, 4}, wrong = {3, 4}, bad = {2, 3};
  {  // bytes do not match the shape: caught before torch
    const TensorRef input = TensorRef::of<float>("x", x, wrong);
    EXPECT_THAT(
        message_of<InvalidArgumentError>([&] {
          model.run({&input, 1});
        }),
        HasSubstr("input 0 ('x') has 32 bytes but a FLOAT tensor of shape [3, 4] needs 48"));
  }
  {  // a shape the model rejects: torch's message, code kBackend
    const TensorRef input = {"x", DType::kFloat32, x.data(), 24, bad};
    try {
      model.run({&input, 1});
      ADD_FAILURE() << "expected an error";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ErrorCode::kBackend);
      EXPECT_THAT(error.what(), HasSubstr("model run failed"));
      EXPECT_THAT(error.what(), HasSubstr("shapes cannot be multiplied"));
    }
  }
  {  // too many inputs
    const TensorRef inputs[] = {TensorRef::of<float>("x", x, shape),
                                TensorRef::of<float>("y", x, shape)};
    EXPECT_THAT(message_of<Error>([&] { model.run(inputs); }),
                HasSubstr("Expected at most 2 argument(s) for operator 'forward', but received 3"));
  }
  {  // UINT16
    const std::vector<std::uint16_t> u(8);
    const TensorRef input = TensorRef::of<std::uint16_t>("u", u, shape);
    EXPECT_THAT(message_of<InvalidArgumentError>([&] {
                  model.run({&input, 1});
                }),
                HasSubstr("UINT16"));
  }
}

TEST(LocalModel, LoadErrors) {
  EXPECT_THAT(message_of<InvalidArgumentError>(
                  [] { LocalModel::from_bytes(ml::testing::mlp_model(), "TPU"); }),
              HasSubstr("unknown device 'TPU'"));
  try {
    LocalModel::from_bytes("garbage");
    ADD_FAILURE() << "expected an error";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kBackend);
    EXPECT_THAT(error.what(), HasSubstr("neither a TorchScript archive (a zip file) nor an ONNX"));
  }
  try {  // a zip file is taken for TorchScript, and libtorch says what is wrong with it
    LocalModel::from_bytes(std::string("PK\x03\x04garbage"));
    ADD_FAILURE() << "expected an error";
  } catch (const Error& error) {
    EXPECT_THAT(error.what(), HasSubstr("cannot load the TorchScript model"));
    EXPECT_THAT(error.what(), HasSubstr("PytorchStreamReader"));
  }
  auto backend = ml::make_torch_backend();
  if (backend->check_device({ml::Device::Kind::kGpu, 0}).ok) return;
  EXPECT_THAT(message_of<InvalidArgumentError>(
                  [] { LocalModel::from_bytes(ml::testing::mlp_model(), "GPU"); }),
              HasSubstr("GPU:0 requested but"));
}

TEST(LocalModel, FortranOrderRoundTrip) {
  // forward(a, b) = (a + b, a * b) on a [2, 3] tensor given and received in Fortran order.
  const LocalModel model = LocalModel::from_bytes(ml::testing::two_outputs_model());
  const std::vector<std::int64_t> shape = {2, 3};
  // Logical a[i][j] = 10 i + j; column-major storage: a(1,1), a(2,1), a(1,2), ...
  const std::vector<double> a_fortran = {0, 10, 1, 11, 2, 12};
  const std::vector<double> b_c = {1, 1, 1, 2, 2, 2};  // b[i][j] = i + 1, row-major
  const TensorRef inputs[] = {TensorRef::of<double>("a", a_fortran, shape, MemoryOrder::kFortran),
                              TensorRef::of<double>("b", b_c, shape)};

  // Allocating form: results are row-major.
  const std::vector<Tensor> tensors = model.run(inputs);
  ASSERT_EQ(tensors.size(), 2u);
  EXPECT_THAT(tensors[0].data<double>(), ::testing::ElementsAre(1, 2, 3, 12, 13, 14));
  EXPECT_THAT(tensors[1].data<double>(), ::testing::ElementsAre(0, 1, 2, 20, 22, 24));

  // Caller buffers: the first in Fortran order, the second in C order.
  std::vector<double> sum_fortran(6), product_c(6);
  const MutableTensorRef outputs[] = {
      MutableTensorRef::of<double>(sum_fortran, shape, MemoryOrder::kFortran),
      MutableTensorRef::of<double>(product_c, shape)};
  model.run(inputs, outputs);
  EXPECT_EQ(sum_fortran, (std::vector<double>{1, 12, 2, 13, 3, 14}));
  EXPECT_EQ(product_c, (std::vector<double>{0, 1, 2, 20, 22, 24}));

  // Round trip: feeding the Fortran output back as a Fortran input gives the same logical tensor.
  const std::vector<double> zeros(6, 0.0);
  const TensorRef again[] = {TensorRef::of<double>("s", sum_fortran, shape, MemoryOrder::kFortran),
                             TensorRef::of<double>("z", zeros, shape)};
  std::vector<double> back(6);
  const MutableTensorRef back_out[] = {
      MutableTensorRef::of<double>(back, shape, MemoryOrder::kFortran),
      MutableTensorRef::of<double>(std::span<double>(product_c), shape)};
  model.run(again, back_out);
  EXPECT_EQ(back, sum_fortran);
}

TEST(LocalModel, FortranOrderThreeDimensions) {
  const LocalModel model = LocalModel::from_bytes(ml::testing::two_outputs_model());
  const std::vector<std::int64_t> shape = {2, 3, 4};
  std::vector<float> a_fortran(24), zeros(24, 0.0f);
  // Logical a[i][j][k] = 100 i + 10 j + k stored column-major.
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) {
      for (int k = 0; k < 4; ++k) a_fortran[i + 2 * j + 6 * k] = 100.0f * i + 10.0f * j + k;
    }
  }
  const TensorRef inputs[] = {TensorRef::of<float>("a", a_fortran, shape, MemoryOrder::kFortran),
                              TensorRef::of<float>("z", zeros, shape)};
  const std::vector<Tensor> tensors = model.run(inputs);
  const auto sum = tensors[0].data<float>();
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) {
      for (int k = 0; k < 4; ++k) EXPECT_EQ(sum[i * 12 + j * 4 + k], 100.0f * i + 10.0f * j + k);
    }
  }
  std::vector<float> out(24), product(24);
  const MutableTensorRef outputs[] = {
      MutableTensorRef::of<float>(out, shape, MemoryOrder::kFortran),
      MutableTensorRef::of<float>(product)};
  model.run(inputs, outputs);
  EXPECT_EQ(out, a_fortran);
}

TEST(LocalModel, ConcurrentRunsIntoCallerBuffers) {
  const LocalModel model = LocalModel::from_bytes(ml::testing::mlp_model());
  std::vector<std::thread> threads;
  std::vector<int> failures(8, 0);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      const std::vector<float> x = features(32 + t);
      const std::vector<std::int64_t> shape = {32 + t, 4};
      const TensorRef input = TensorRef::of<float>("x", x, shape);
      std::vector<float> first(32 + t), y(32 + t);
      const MutableTensorRef first_out = MutableTensorRef::of<float>(first);
      model.run({&input, 1}, {&first_out, 1});
      const MutableTensorRef out = MutableTensorRef::of<float>(y);
      for (int run = 0; run < 30; ++run) {
        model.run({&input, 1}, {&out, 1});
        if (y != first) ++failures[t];
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < 8; ++t) EXPECT_EQ(failures[t], 0) << t;
}

TEST(LocalModel, IsMovable) {
  LocalModel model = LocalModel::from_bytes(ml::testing::mlp_model());
  LocalModel moved = std::move(model);
  const std::vector<float> x = features(1);
  const std::vector<std::int64_t> shape = {1, 4};
  const TensorRef input = TensorRef::of<float>("x", x, shape);
  EXPECT_EQ(moved.run({&input, 1}).size(), 1u);
}

}  // namespace
}  // namespace slipstream
