// The TorchScript backend (src/ml/torch_backend.cpp): loading, running, scripts, devices, errors
// and concurrent use, on models built by test_models.cpp.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>

#include <cstring>
#include <thread>

#include "ml/backend.hpp"
#include "test_models.hpp"

namespace slipstream::ml {
namespace {

constexpr ModelFormat kTorch = ModelFormat::kTorchScript;

using ::testing::HasSubstr;
using ::testing::Not;

template <typename T>
TensorView view_of(const std::vector<T>& values, const std::vector<std::int64_t>& shape) {
  return {dtype_of<T>, shape, values.data(), values.size() * sizeof(T)};
}

template <typename T>
std::vector<T> values_of(const OwnedTensor& tensor) {
  EXPECT_EQ(tensor.dtype, dtype_of<T>);
  std::vector<T> values(tensor.data.size() / sizeof(T));
  std::memcpy(values.data(), tensor.data.data(), tensor.data.size());
  return values;
}

std::vector<float> eke_features(std::int64_t cells, float offset = 0.0f) {
  std::vector<float> x(static_cast<std::size_t>(cells) * 4);
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = offset + 0.37f * static_cast<float>(i % 13) - 1.5f + 0.01f * static_cast<float>(i / 4);
  }
  return x;
}

class TorchBackendTest : public ::testing::Test {
 protected:
  std::shared_ptr<Model> load(const std::string& bytes) {
    std::string error;
    auto model = backend_->load_model(bytes, kTorch, Device{}, &error);
    EXPECT_NE(model, nullptr) << error;
    return model;
  }
  std::shared_ptr<Script> compile(const std::string& source) {
    std::string error;
    auto script = backend_->load_script(source, Device{}, &error);
    EXPECT_NE(script, nullptr) << error;
    return script;
  }

  std::shared_ptr<Backend> backend_ = make_torch_backend({.intra_op_threads = 2});
};

TEST_F(TorchBackendTest, NameIsTorch) { EXPECT_EQ(backend_->name(), "TORCH"); }

TEST_F(TorchBackendTest, RunsTheEkeMlp) {
  auto model = load(testing::mlp_model());
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(model->device(), Device{});
  for (std::int64_t cells : {1, 64, 1000}) {
    const std::vector<float> x = eke_features(cells);
    const std::vector<std::int64_t> shape = {cells, 4};
    const TensorView input = view_of(x, shape);
    std::vector<OwnedTensor> outputs;
    const Status status = model->run({&input, 1}, outputs);
    ASSERT_TRUE(status.ok) << status.message;
    ASSERT_EQ(outputs.size(), 1u);
    EXPECT_EQ(outputs[0].shape, (std::vector<std::int64_t>{cells, 1}));
    const std::vector<float> y = values_of<float>(outputs[0]);
    const std::vector<float> expected = testing::mlp_reference(x);
    ASSERT_EQ(y.size(), expected.size());
    for (std::size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], expected[i], 1e-5f) << i;
  }
}

TEST_F(TorchBackendTest, RunsTheCnn) {
  auto model = load(testing::cnn_model());
  ASSERT_NE(model, nullptr);
  const std::int64_t n = 3;
  std::vector<float> x(static_cast<std::size_t>(n) * 64);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.3f * static_cast<float>(i));
  const std::vector<std::int64_t> shape = {n, 1, 8, 8};
  const TensorView input = view_of(x, shape);
  std::vector<OwnedTensor> outputs;
  const Status status = model->run({&input, 1}, outputs);
  ASSERT_TRUE(status.ok) << status.message;
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0].shape, (std::vector<std::int64_t>{n, 2}));
  const std::vector<float> y = values_of<float>(outputs[0]);
  const std::vector<float> expected = testing::cnn_reference(x, n);
  for (std::size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], expected[i], 1e-4f) << i;
}

TEST_F(TorchBackendTest, FlattensTupleOutputs) {
  auto model = load(testing::two_outputs_model());
  ASSERT_NE(model, nullptr);
  const std::vector<double> a = {1, 2, 3, 4, 5, 6}, b = {10, 20, 30, 40, 50, 60};
  const std::vector<std::int64_t> shape = {2, 3};
  const TensorView inputs[] = {view_of(a, shape), view_of(b, shape)};
  std::vector<OwnedTensor> outputs;
  const Status status = model->run(inputs, outputs);
  ASSERT_TRUE(status.ok) << status.message;
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_EQ(outputs[0].shape, shape);
  EXPECT_EQ(outputs[1].shape, shape);
  EXPECT_EQ(values_of<double>(outputs[0]), (std::vector<double>{11, 22, 33, 44, 55, 66}));
  EXPECT_EQ(values_of<double>(outputs[1]), (std::vector<double>{10, 40, 90, 160, 250, 360}));
}

TEST_F(TorchBackendTest, MapsBoolIntegerAndDoubleOutputsThroughNestedContainers) {
  auto model = load(testing::mixed_dtypes_model());
  ASSERT_NE(model, nullptr);
  const std::vector<float> x = {-1.5f, 0.0f, 2.25f, 3.0f};
  const std::vector<std::int64_t> shape = {4};
  const TensorView input = view_of(x, shape);
  std::vector<OwnedTensor> outputs;
  const Status status = model->run({&input, 1}, outputs);
  ASSERT_TRUE(status.ok) << status.message;
  ASSERT_EQ(outputs.size(), 3u);
  EXPECT_EQ(outputs[0].dtype, DType::kBool);
  ASSERT_EQ(outputs[0].data.size(), 4u);
  EXPECT_EQ(std::vector<char>(outputs[0].data.data(), outputs[0].data.data() + 4),
            (std::vector<char>{0, 0, 1, 1}));
  EXPECT_EQ(values_of<std::int32_t>(outputs[1]), (std::vector<std::int32_t>{-3, 0, 4, 6}));
  EXPECT_EQ(values_of<double>(outputs[2]), (std::vector<double>{-1.5, 0.0, 2.25, 3.0}));
}

TEST_F(TorchBackendTest, AcceptsEveryInputDtypeTorchHas) {
  // Integer and bool inputs through the two-output model (a + b, a * b).
  auto model = load(testing::two_outputs_model());
  ASSERT_NE(model, nullptr);
  const std::vector<std::int64_t> shape = {3};
  {
    const std::vector<std::int8_t> a = {1, -2, 3}, b = {4, 5, -6};
    const TensorView inputs[] = {view_of(a, shape), view_of(b, shape)};
    std::vector<OwnedTensor> outputs;
    ASSERT_TRUE(model->run(inputs, outputs).ok);
    EXPECT_EQ(values_of<std::int8_t>(outputs[0]), (std::vector<std::int8_t>{5, 3, -3}));
  }
  {
    const std::vector<std::int16_t> a = {1, -2, 3}, b = {4, 5, -6};
    const TensorView inputs[] = {view_of(a, shape), view_of(b, shape)};
    std::vector<OwnedTensor> outputs;
    ASSERT_TRUE(model->run(inputs, outputs).ok);
    EXPECT_EQ(values_of<std::int16_t>(outputs[1]), (std::vector<std::int16_t>{4, -10, -18}));
  }
  {
    const std::vector<std::int64_t> a = {1LL << 40, 2, 3}, b = {1, 1, 1};
    const TensorView inputs[] = {view_of(a, shape), view_of(b, shape)};
    std::vector<OwnedTensor> outputs;
    ASSERT_TRUE(model->run(inputs, outputs).ok);
    EXPECT_EQ(values_of<std::int64_t>(outputs[0]),
              (std::vector<std::int64_t>{(1LL << 40) + 1, 3, 4}));
  }
  {
    const std::vector<std::uint8_t> a = {200, 2, 3}, b = {50, 1, 1};
    const TensorView inputs[] = {view_of(a, shape), view_of(b, shape)};
    std::vector<OwnedTensor> outputs;
    ASSERT_TRUE(model->run(inputs, outputs).ok);
    EXPECT_EQ(values_of<std::uint8_t>(outputs[0]), (std::vector<std::uint8_t>{250, 3, 4}));
  }
  {
    const std::vector<std::uint8_t> a = {1, 0, 1}, b = {1, 1, 0};  // BOOL bytes
    const TensorView inputs[] = {{DType::kBool, shape, a.data(), 3},
                                 {DType::kBool, shape, b.data(), 3}};
    std::vector<OwnedTensor> outputs;
    const Status status = model->run(inputs, outputs);
    ASSERT_TRUE(status.ok) << status.message;
    EXPECT_EQ(outputs[1].dtype, DType::kBool);  // a * b is logical and
    EXPECT_EQ(std::vector<char>(outputs[1].data.data(), outputs[1].data.data() + 3),
              (std::vector<char>{1, 0, 0}));
  }
}

TEST_F(TorchBackendTest, RefusesUint16Inputs) {
  auto model = load(testing::two_outputs_model());
  ASSERT_NE(model, nullptr);
  const std::vector<std::uint16_t> a = {1, 2};
  const std::vector<std::int64_t> shape = {2};
  const TensorView inputs[] = {view_of(a, shape), view_of(a, shape)};
  std::vector<OwnedTensor> outputs;
  const Status status = model->run(inputs, outputs);
  EXPECT_FALSE(status.ok);
  EXPECT_THAT(status.message, HasSubstr("UINT16"));
  EXPECT_TRUE(outputs.empty());
}

TEST_F(TorchBackendTest, RefusesOutputsOfUnsupportedDtype) {
  auto model = load(testing::half_output_model());
  ASSERT_NE(model, nullptr);
  const std::vector<float> x = {1, 2};
  const std::vector<std::int64_t> shape = {2};
  const TensorView input = view_of(x, shape);
  std::vector<OwnedTensor> outputs;
  const Status status = model->run({&input, 1}, outputs);
  EXPECT_FALSE(status.ok);
  EXPECT_THAT(status.message, HasSubstr("Half"));
  EXPECT_TRUE(outputs.empty());
}

TEST_F(TorchBackendTest, RefusesNonTensorOutputs) {
  auto model = load(testing::int_output_model());
  ASSERT_NE(model, nullptr);
  const std::vector<float> x = {1};
  const std::vector<std::int64_t> shape = {1};
  const TensorView input = view_of(x, shape);
  std::vector<OwnedTensor> outputs;
  const Status status = model->run({&input, 1}, outputs);
  EXPECT_FALSE(status.ok);
  EXPECT_THAT(status.message, HasSubstr("Int"));
}

TEST_F(TorchBackendTest, RefusesABadBlobWithTorchsMessage) {
  std::string error;
  EXPECT_EQ(backend_->load_model("this is not a TorchScript archive", kTorch, Device{}, &error),
            nullptr);
  EXPECT_THAT(error, HasSubstr("PytorchStreamReader"));
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;

  // A truncated archive is refused too.
  const std::string good = testing::mlp_model();
  EXPECT_EQ(
      backend_->load_model(std::string_view(good).substr(0, good.size() / 2), kTorch, Device{},
                           &error),
      nullptr);
  EXPECT_FALSE(error.empty());
  EXPECT_EQ(backend_->load_model("", kTorch, Device{}, nullptr), nullptr);  // error may be null
}

// A pickle in the archive that declares a string longer than the record is refused before
// libtorch unpickles it (which allocated and zero-filled the declared length, up to 4 GiB, before
// failing); the same archive with its own pickles loads.
TEST_F(TorchBackendTest, RefusesPicklesThatDeclareMoreBytesThanTheyHold) {
  const std::string good = testing::mlp_model();
  ASSERT_NE(load(testing::with_record(good, "constants.pkl", std::string("\x80\x02)." , 4))),
            nullptr);
  // BINUNICODE of 0xF0000000 bytes, then STOP.
  const std::string huge("\x80\x02X\x00\x00\x00\xf0.", 8);
  std::string error;
  // Refused by the check that reads the pickles before libtorch does (its message, below), not
  // by libtorch after the allocation; how long it took is not a measure of that on a loaded
  // machine.
  EXPECT_EQ(
      backend_->load_model(testing::with_record(good, "data.pkl", huge), kTorch, Device{}, &error),
      nullptr);
  EXPECT_THAT(error, HasSubstr("invalid model archive: data.pkl: pickle declares 4026531840"));
  EXPECT_EQ(backend_->load_model(testing::with_record(good, "constants.pkl", "\x80\x02)"),
                                 kTorch, Device{}, &error),
            nullptr);
  EXPECT_THAT(error, HasSubstr("constants.pkl: pickle ends without STOP"));
}

TEST_F(TorchBackendTest, WrongNumberOfInputsQuotesTorch) {
  auto model = load(testing::mlp_model());
  ASSERT_NE(model, nullptr);
  const std::vector<float> x = eke_features(2);
  const std::vector<std::int64_t> shape = {2, 4};
  const TensorView inputs[] = {view_of(x, shape), view_of(x, shape)};
  std::vector<OwnedTensor> outputs;
  Status status = model->run(inputs, outputs);
  EXPECT_FALSE(status.ok);
  EXPECT_THAT(status.message,
              HasSubstr("Expected at most 2 argument(s) for operator 'forward', but received 3"));
  EXPECT_TRUE(outputs.empty());

  status = model->run({}, outputs);
  EXPECT_FALSE(status.ok);
  EXPECT_THAT(status.message, HasSubstr("forward() is missing value for argument 'x'"));
}

TEST_F(TorchBackendTest, WrongShapeQuotesTorch) {
  auto model = load(testing::mlp_model());
  ASSERT_NE(model, nullptr);
  const std::vector<float> x(15, 1.0f);
  const std::vector<std::int64_t> shape = {3, 5};
  const TensorView input = view_of(x, shape);
  std::vector<OwnedTensor> outputs;
  const Status status = model->run({&input, 1}, outputs);
  EXPECT_FALSE(status.ok);
  EXPECT_THAT(status.message, HasSubstr("shapes cannot be multiplied (3x5 and 4x8)"));
  EXPECT_THAT(status.message, Not(HasSubstr("Traceback")));
  EXPECT_EQ(status.message.find('\n'), std::string::npos) << status.message;
}

TEST_F(TorchBackendTest, WrongDtypeQuotesTorch) {
  auto model = load(testing::mlp_model());
  ASSERT_NE(model, nullptr);
  const std::vector<double> x(8, 1.0);
  const std::vector<std::int64_t> shape = {2, 4};
  const TensorView input = view_of(x, shape);
  std::vector<OwnedTensor> outputs;
  const Status status = model->run({&input, 1}, outputs);
  EXPECT_FALSE(status.ok);
  EXPECT_THAT(status.message,
              HasSubstr("RuntimeError: expected scalar type Double but found Float"));
  EXPECT_THAT(status.message, HasSubstr("line 3, in forward"));
}

TEST_F(TorchBackendTest, InputBytesMustMatchShape) {
  auto model = load(testing::mlp_model());
  ASSERT_NE(model, nullptr);
  const std::vector<float> x(8, 1.0f);
  const std::vector<std::int64_t> shape = {3, 4};
  const TensorView input = view_of(x, shape);  // 32 bytes for 12 floats
  std::vector<OwnedTensor> outputs;
  const Status status = model->run({&input, 1}, outputs);
  EXPECT_FALSE(status.ok);
  EXPECT_THAT(status.message, HasSubstr("input 0 has 32 bytes"));
  EXPECT_THAT(status.message, HasSubstr("needs 48"));
}

TEST_F(TorchBackendTest, ConcurrentRunsMatchSequentialRuns) {
  auto model = load(testing::mlp_model());
  ASSERT_NE(model, nullptr);
  constexpr int kThreads = 8;
  constexpr int kRunsPerThread = 40;
  std::vector<std::vector<float>> inputs;
  std::vector<std::vector<float>> expected;
  for (int t = 0; t < kThreads; ++t) {
    inputs.push_back(eke_features(64 + t, 0.1f * static_cast<float>(t)));
    const std::vector<std::int64_t> shape = {64 + t, 4};
    const TensorView input = view_of(inputs.back(), shape);
    std::vector<OwnedTensor> outputs;
    ASSERT_TRUE(model->run({&input, 1}, outputs).ok);
    expected.push_back(values_of<float>(outputs[0]));
  }
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::vector<std::int64_t> shape = {64 + t, 4};
      const TensorView input = view_of(inputs[t], shape);
      for (int run = 0; run < kRunsPerThread; ++run) {
        std::vector<OwnedTensor> outputs;
        const Status status = model->run({&input, 1}, outputs);
        if (!status.ok || outputs.size() != 1 ||
            outputs[0].data.size() != expected[t].size() * sizeof(float) ||
            std::memcmp(outputs[0].data.data(), expected[t].data(), outputs[0].data.size()) != 0) {
          ++mismatches[t];
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(mismatches[t], 0) << "thread " << t;
}

TEST_F(TorchBackendTest, CpuInputsAreNotCopiedOrModified) {
  // An identity-like model returning its input: the output is a copy, and the input is intact.
  std::string error;
  auto model = load(testing::two_outputs_model());
  ASSERT_NE(model, nullptr);
  std::vector<float> a = {1, 2}, b = {0, 0};
  const std::vector<std::int64_t> shape = {2};
  const TensorView inputs[] = {view_of(a, shape), view_of(b, shape)};
  std::vector<OwnedTensor> outputs;
  ASSERT_TRUE(model->run(inputs, outputs).ok);
  EXPECT_NE(static_cast<const void*>(outputs[0].data.data()), static_cast<const void*>(a.data()));
  EXPECT_EQ(a, (std::vector<float>{1, 2}));
}

// ---- Devices ----------------------------------------------------------------------------------

TEST_F(TorchBackendTest, CpuIsAlwaysUsable) { EXPECT_TRUE(backend_->check_device(Device{}).ok); }

TEST_F(TorchBackendTest, GpuRequestWithoutCudaIsAClearError) {
  const Device gpu{Device::Kind::kGpu, 1};
  const Status status = backend_->check_device(gpu);
  if (status.ok) GTEST_SKIP() << "this libtorch has CUDA and a GPU:1";
  EXPECT_THAT(status.message, HasSubstr("GPU:1 requested but"));
  EXPECT_THAT(status.message,
              ::testing::AnyOf(HasSubstr("no CUDA support"), HasSubstr("no CUDA device"),
                               HasSubstr("GPU is present"), HasSubstr("GPUs are present")));
  std::string error;
  EXPECT_EQ(backend_->load_model(testing::mlp_model(), kTorch, gpu, &error), nullptr);
  EXPECT_EQ(error, status.message);
  EXPECT_EQ(backend_->load_script("def f(x):\n    return x\n", gpu, &error), nullptr);
  EXPECT_EQ(error, status.message);
}

TEST_F(TorchBackendTest, RunsOnAGpuWhenOneIsPresent) {
  const Device gpu{Device::Kind::kGpu, 0};
  if (!backend_->check_device(gpu).ok) GTEST_SKIP() << backend_->check_device(gpu).message;
  std::string error;
  auto model = backend_->load_model(testing::mlp_model(), kTorch, gpu, &error);
  ASSERT_NE(model, nullptr) << error;
  EXPECT_EQ(model->device(), gpu);
  const std::vector<float> x = eke_features(100);
  const std::vector<std::int64_t> shape = {100, 4};
  const TensorView input = view_of(x, shape);
  std::vector<OwnedTensor> outputs;
  const Status status = model->run({&input, 1}, outputs);
  ASSERT_TRUE(status.ok) << status.message;
  const std::vector<float> y = values_of<float>(outputs[0]);
  const std::vector<float> expected = testing::mlp_reference(x);
  for (std::size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], expected[i], 1e-4f) << i;
}

// ---- Scripts ----------------------------------------------------------------------------------

constexpr const char* kScriptSource = R"(
def scale_and_shift(tensors: List[Tensor], keys: List[str], args: List[str]):
    return tensors[0] * float(args[0]) + float(len(keys)), tensors[1]

def add(a, b):
    return a + b

def helper(x: int) -> int:
    return x + 1
)";

TEST_F(TorchBackendTest, ScriptListsItsFunctions) {
  auto script = compile(kScriptSource);
  ASSERT_NE(script, nullptr);
  EXPECT_TRUE(script->has_function("scale_and_shift"));
  EXPECT_TRUE(script->has_function("add"));
  EXPECT_FALSE(script->has_function("missing"));
  EXPECT_FALSE(script->has_function(""));
  EXPECT_THAT(script->functions(),
              ::testing::UnorderedElementsAre("scale_and_shift", "add", "helper"));
}

TEST_F(TorchBackendTest, ScriptRunsRedisAi12StyleFunctions) {
  auto script = compile(kScriptSource);
  ASSERT_NE(script, nullptr);
  const std::vector<float> a = {1, 2, 3}, b = {7, 8, 9};
  const std::vector<std::int64_t> shape = {3};
  const TensorView inputs[] = {view_of(a, shape), view_of(b, shape)};
  const std::string keys[] = {"{tag}key1", "{tag}key2"};
  const std::string args[] = {"10"};
  std::vector<OwnedTensor> outputs;
  const Status status = script->run("scale_and_shift", inputs, keys, args, outputs);
  ASSERT_TRUE(status.ok) << status.message;
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_EQ(values_of<float>(outputs[0]), (std::vector<float>{12, 22, 32}));
  EXPECT_EQ(values_of<float>(outputs[1]), b);
}

TEST_F(TorchBackendTest, ScriptRunsPositionalFunctions) {
  auto script = compile(kScriptSource);
  ASSERT_NE(script, nullptr);
  const std::vector<std::int32_t> a = {1, 2}, b = {30, 40};
  const std::vector<std::int64_t> shape = {2, 1};
  const TensorView inputs[] = {view_of(a, shape), view_of(b, shape)};
  std::vector<OwnedTensor> outputs;
  const Status status = script->run("add", inputs, {}, {}, outputs);
  ASSERT_TRUE(status.ok) << status.message;
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0].shape, shape);
  EXPECT_EQ(values_of<std::int32_t>(outputs[0]), (std::vector<std::int32_t>{31, 42}));

  // Wrong arity is torch's error.
  const Status wrong = script->run("add", {inputs, 1}, {}, {}, outputs);
  EXPECT_FALSE(wrong.ok);
  EXPECT_THAT(wrong.message, HasSubstr("add() is missing value for argument 'b'"));
}

TEST_F(TorchBackendTest, ScriptUnknownFunctionIsAnError) {
  auto script = compile(kScriptSource);
  ASSERT_NE(script, nullptr);
  std::vector<OwnedTensor> outputs;
  const Status status = script->run("nope", {}, {}, {}, outputs);
  EXPECT_FALSE(status.ok);
  EXPECT_THAT(status.message, HasSubstr("no function 'nope'"));
}

TEST_F(TorchBackendTest, ScriptErrorAtRunTimeQuotesTorch) {
  auto script = compile(kScriptSource);
  ASSERT_NE(script, nullptr);
  const std::vector<float> a = {1, 2, 3};
  const std::vector<std::int64_t> shape = {3};
  const TensorView input = view_of(a, shape);
  const std::string args[] = {"not a number"};
  std::vector<OwnedTensor> outputs;
  const Status status = script->run("scale_and_shift", {&input, 1}, {}, args, outputs);
  EXPECT_FALSE(status.ok);
  EXPECT_THAT(status.message, HasSubstr("RuntimeError: stod"));
  EXPECT_TRUE(outputs.empty());
}

TEST_F(TorchBackendTest, ScriptCompileErrorQuotesTorch) {
  std::string error;
  EXPECT_EQ(backend_->load_script("def f(x):\n    return undefined_thing(x)\n", Device{}, &error),
            nullptr);
  EXPECT_THAT(error, HasSubstr("undefined value undefined_thing"));
  EXPECT_THAT(error, HasSubstr("(at line 2)"));
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;

  EXPECT_EQ(backend_->load_script("def f(x:\n", Device{}, &error), nullptr);
  EXPECT_FALSE(error.empty());
}

TEST_F(TorchBackendTest, ScriptRunsConcurrently) {
  auto script = compile(kScriptSource);
  ASSERT_NE(script, nullptr);
  std::vector<std::thread> threads;
  std::vector<int> failures(8, 0);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      const std::vector<float> a(16, static_cast<float>(t)), b(16, 1.0f);
      const std::vector<std::int64_t> shape = {16};
      const TensorView inputs[] = {view_of(a, shape), view_of(b, shape)};
      for (int run = 0; run < 30; ++run) {
        std::vector<OwnedTensor> outputs;
        const Status status = script->run("add", inputs, {}, {}, outputs);
        if (!status.ok || values_of<float>(outputs[0]) != std::vector<float>(16, t + 1.0f)) {
          ++failures[t];
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < 8; ++t) EXPECT_EQ(failures[t], 0) << t;
}

}  // namespace
}  // namespace slipstream::ml
