// Client model and script calls against a real server: storing (chunked) and fetching models,
// running them against results computed here by hand, one-round-trip run_model_on, errors,
// timeouts, scripts in both forms, AI.INFO statistics, replacement under load and batching.
//
// The TorchScript models are written at test time by Debian's python3-torch (/usr/bin/python3,
// not whatever python3 is first on PATH) from fixed weights that the expectations below repeat.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include "client/client_fixture.hpp"

namespace slipstream {
namespace {

using namespace std::chrono_literals;
using ::slipstream::testing::numbered;
using ::slipstream::testing::ServerProcess;
using ::slipstream::testing::Transport;
using ::slipstream::testing::unique;

// eke.pt: the EKE-shaped MLP, Linear(4, 8) + ReLU + Linear(8, 1), weights from the formulas of
// eke_reference below, and eke.onnx: the same module exported to ONNX (opset 17, a dynamic
// batch). two_io.pt: forward(a, b) -> (a + b, a * b).
constexpr const char* kMakeModels = R"PY(
import sys, torch
out = sys.argv[1]
class Eke(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = torch.nn.Linear(4, 8)
        self.output = torch.nn.Linear(8, 1)
    def forward(self, x):
        return self.output(torch.relu(self.hidden(x)))
m = Eke()
with torch.no_grad():
    for o in range(8):
        m.hidden.bias[o] = ((o % 3) - 1) * 0.125
        for i in range(4):
            m.hidden.weight[o, i] = (((o * 4 + i) % 7) - 3) * 0.25
        m.output.weight[0, o] = ((o % 5) - 2) * 0.5
    m.output.bias[0] = 0.375
torch.jit.save(torch.jit.script(m), out + '/eke.pt')
torch.onnx.export(m, torch.zeros(1, 4), out + '/eke.onnx', opset_version=17, input_names=['x'],
                  output_names=['y'], dynamic_axes={'x': {0: 'n'}, 'y': {0: 'n'}})
class TwoInTwoOut(torch.nn.Module):
    def forward(self, a, b):
        return a + b, a * b
torch.jit.save(torch.jit.script(TwoInTwoOut()), out + '/two_io.pt')
)PY";

/// The EKE MLP on one cell of 4 features, computed by hand from the weights above.
double eke_reference(const float* x) {
  double out = 0.375;
  for (int o = 0; o < 8; ++o) {
    double h = ((o % 3) - 1) * 0.125;
    for (int i = 0; i < 4; ++i) h += (((o * 4 + i) % 7) - 3) * 0.25 * x[i];
    out += ((o % 5) - 2) * 0.5 * std::max(h, 0.0);
  }
  return out;
}

std::string read_all(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

/// The generated models. CTest runs each test in its own process, so the archives are made once
/// per version of kMakeModels into /tmp and reused (made in a private directory, then renamed).
struct Models {
  std::filesystem::path directory;
  std::string eke, eke_onnx, two_io;
  std::string error;  // why generation failed; empty on success
};

const Models& models() {
  static const Models made = [] {
    Models m;
    m.directory =
        std::filesystem::temp_directory_path() /
        ("slipstream-client-models-" + std::to_string(std::hash<std::string_view>{}(kMakeModels)));
    if (!std::filesystem::exists(m.directory / "two_io.pt")) {
      char pattern[] = "/tmp/slipstream-models-XXXXXX";
      if (::mkdtemp(pattern) == nullptr) {
        m.error = "mkdtemp failed";
        return m;
      }
      std::filesystem::path scratch = pattern;
      std::ofstream(scratch / "make_models.py") << kMakeModels;
      std::string command = "/usr/bin/python3 " + (scratch / "make_models.py").string() + " " +
                            scratch.string() + " > " + (scratch / "log").string() + " 2>&1";
      if (std::system(command.c_str()) != 0) {
        m.error =
            "/usr/bin/python3 could not make the test models (is python3-torch "
            "installed?):\n" +
            read_all(scratch / "log");
        std::filesystem::remove_all(scratch);
        return m;
      }
      std::error_code ignored;  // another test process may have renamed its copy first
      std::filesystem::rename(scratch, m.directory, ignored);
      if (ignored) std::filesystem::remove_all(scratch, ignored);
    }
    m.eke = read_all(m.directory / "eke.pt");
    m.eke_onnx = read_all(m.directory / "eke.onnx");
    m.two_io = read_all(m.directory / "two_io.pt");
    if (m.eke.empty() || m.eke_onnx.empty() || m.two_io.empty()) m.error = "model files are empty";
    return m;
  }();
  return made;
}

/// One server per test program with a single executor thread, so that batching and queueing are
/// deterministic.
ServerProcess& model_server() {
  static ServerProcess& server = []() -> ServerProcess& {
    static ServerProcess started({"--executor-threads", "1"});
    // ServerProcess only waits for the TCP port; the Unix socket may come up a moment later.
    for (int attempt = 0; attempt < 500; ++attempt) {
      try {
        Client probe(started.unix_address());
        break;
      } catch (const ConnectionError&) {
        std::this_thread::sleep_for(10ms);
      }
    }
    return started;
  }();
  return server;
}

/// Model options with a tag (GCC warns on designated initializers that skip members).
ModelOptions tagged(std::string tag) {
  ModelOptions options;
  options.tag = std::move(tag);
  return options;
}

ModelOptions batching(std::int64_t batch_size, std::int64_t min_batch_size = 0,
                      std::chrono::milliseconds min_batch_timeout = 0ms) {
  ModelOptions options;
  options.batch_size = batch_size;
  options.min_batch_size = min_batch_size;
  options.min_batch_timeout = min_batch_timeout;
  return options;
}

/// `rows` cells of 4 features with varied values of both signs (so ReLU matters).
std::vector<float> eke_inputs(std::int64_t rows, int seed) {
  std::vector<float> x(static_cast<std::size_t>(rows) * 4);
  for (std::size_t k = 0; k < x.size(); ++k) {
    x[k] = static_cast<float>(static_cast<int>((k * 37 + seed * 101) % 41) - 20) / 8.0f;
  }
  return x;
}

void expect_eke_outputs(const Tensor& y, const std::vector<float>& x, const std::string& where) {
  const std::int64_t rows = static_cast<std::int64_t>(x.size() / 4);
  ASSERT_EQ(y.dtype(), DType::kFloat32) << where;
  ASSERT_EQ(std::vector<std::int64_t>(y.shape().begin(), y.shape().end()),
            (std::vector<std::int64_t>{rows, 1}))
      << where;
  auto values = y.data<float>();
  for (std::int64_t r = 0; r < rows; ++r) {
    double expected = eke_reference(&x[static_cast<std::size_t>(r) * 4]);
    ASSERT_NEAR(values[static_cast<std::size_t>(r)], expected, 1e-5 * (1 + std::abs(expected)))
        << where << ", row " << r;
  }
}

class ModelTest : public ::testing::TestWithParam<Transport> {
 protected:
  void SetUp() override {
    ASSERT_TRUE(models().error.empty()) << models().error;
    client_ = std::make_unique<Client>(address());
  }
  std::string address() const {
    return GetParam() == Transport::kTcp ? model_server().tcp_address()
                                         : model_server().unix_address();
  }
  Client& client() { return *client_; }

  /// Stores `x` as a {rows, 4} FLOAT tensor.
  void put_cells(const std::string& name, const std::vector<float>& x) {
    std::vector<std::int64_t> shape{static_cast<std::int64_t>(x.size() / 4), 4};
    client().put_tensor<float>(name, x, shape);
  }

 private:
  std::unique_ptr<Client> client_;
};

SLIPSTREAM_INSTANTIATE_TRANSPORTS(ModelTest);

// The same model exported to ONNX and stored with backend ONNX runs like its TorchScript form,
// and AI.INFO and AI.MODELGET say ONNX and give back the bytes as stored.
TEST_P(ModelTest, OnnxModelsRunLikeTorchScript) {
  const std::string name = unique("onnx"), x_name = unique("x"), y_name = unique("y");
  client().set_model(name, models().eke_onnx, "ONNX", "CPU");
  const std::vector<float> x = eke_inputs(5, 3);
  put_cells(x_name, x);
  client().run_model(name, {x_name}, {y_name});
  expect_eke_outputs(client().get_tensor(y_name), x, "ONNX");
  EXPECT_EQ(client().model_info(name).backend, "ONNX");
  EXPECT_EQ(client().get_model(name), models().eke_onnx);
}

// Model versions: a run can ask which version ran and pin an earlier one while the model keeps
// it (KEEP); the pinned run uses that version's own runtime, not just its number.
TEST_P(ModelTest, PinnedVersionsRunTheKeptVersionAndReportWhichRan) {
  const std::string name = unique("versions");
  const std::string x = unique("x"), y = unique("y"), a = unique("a"), b = unique("b");
  ModelOptions keep_one;
  keep_one.keep_versions = 1;
  client().set_model(name, models().eke);                             // version 1: eke
  client().set_model(name, models().two_io, "TORCH", "CPU", keep_one);  // 2: a + b, a * b
  const std::vector<float> cells = eke_inputs(3, 1);
  put_cells(x, cells);
  ModelVersion first{1, 0};
  client().run_model(name, {x}, {y}, 0ms, &first);
  EXPECT_EQ(first.ran, 1u);
  expect_eke_outputs(client().get_tensor(y), cells, "pinned version 1");
  const std::vector<std::int64_t> pair{2};
  client().put_tensor<float>(a, std::vector<float>{1, 2}, pair);
  client().put_tensor<float>(b, std::vector<float>{3, 4}, pair);
  ModelVersion newest;  // pin 0: the newest
  client().run_model(name, {a, b}, {x, y}, 0ms, &newest);
  EXPECT_EQ(newest.ran, 2u);
  EXPECT_EQ(client().get_tensor(x).data<float>()[1], 6.0f);
  client().run_model(name, {a, b}, {x, y});  // no version asked: +OK as RedisAI
  // run_model_on, in one round trip, pinned too.
  const std::vector<std::int64_t> shape{3, 4};
  const TensorRef input = TensorRef::of<float>(x, cells, shape);
  ModelVersion again{1, 0};
  std::vector<Tensor> out = client().run_model_on(name, {&input, 1}, {y}, 0ms, &again);
  EXPECT_EQ(again.ran, 1u);
  expect_eke_outputs(out[0], cells, "run_model_on pinned to version 1");
  // Version 3 keeps one: 2. Version 4 keeps none.
  client().set_model(name, models().eke, "TORCH", "CPU", keep_one);
  ModelVersion gone{1, 0};
  try {
    client().run_model(name, {x}, {y}, 0ms, &gone);
    ADD_FAILURE() << "version 1 ran after it was dropped";
  } catch (const ServerError& e) {
    EXPECT_NE(std::string(e.what()).find("has no version 1 (it holds 3, 2;"), std::string::npos)
        << e.what();
  }
  client().set_model(name, models().eke);
  ModelVersion second{2, 0};
  EXPECT_THROW(client().run_model(name, {x}, {y}, 0ms, &second), ServerError);
  const Reply info = client().command({"AI.INFO", name});
  for (std::size_t i = 0; i + 1 < info.elements.size(); i += 2) {
    if (info.elements[i].string == "version") {
      EXPECT_EQ(info.elements[i + 1].integer, 4);
    }
  }
  ModelOptions too_many;
  too_many.keep_versions = 65;
  EXPECT_THROW(client().set_model(name, models().eke, "TORCH", "CPU", too_many),
               InvalidArgumentError);
  EXPECT_THROW(client().command({"AI.MODELEXECUTE", name, "INPUTS", "1", x, "OUTPUTS", "1", y,
                                 "VERSION", "-1"}),
               ServerError);
}

TEST_P(ModelTest, StoreGetExistsDelete) {
  const std::string name = unique("eke");
  EXPECT_FALSE(client().model_exists(name));
  client().set_model(name, models().eke, "TORCH", "CPU", tagged("v1.0"));
  EXPECT_TRUE(client().model_exists(name));
  EXPECT_EQ(client().get_model(name), models().eke);
  EXPECT_EQ(client().command({"TYPE", name}).string, "AI__MODEL");
  Reply meta = client().command({"AI.MODELGET", name, "META"});
  ASSERT_TRUE(meta.is_array());
  ASSERT_GE(meta.elements.size(), 6u);
  EXPECT_EQ(meta.elements[5].string, "v1.0");  // backend, TORCH, device, CPU, tag, v1.0

  EXPECT_TRUE(client().delete_model(name));
  EXPECT_FALSE(client().model_exists(name));
  EXPECT_FALSE(client().delete_model(name));
  EXPECT_THROW(client().get_model(name), KeyNotFoundError);
}

TEST_P(ModelTest, FromFileAndBadArguments) {
  const std::string name = unique("eke");
  client().set_model_from_file(name, (models().directory / "eke.pt").string());
  EXPECT_EQ(client().get_model(name), models().eke);
  EXPECT_THROW(client().set_model_from_file(name, "/nonexistent/model.pt"), InvalidArgumentError);
  EXPECT_THROW(client().set_model(name, ""), InvalidArgumentError);
  EXPECT_THROW(client().set_model(name, models().eke, "TORCH", "CPU", batching(0, 4)),
               InvalidArgumentError);
  EXPECT_THROW(client().set_model(name, models().eke, "TORCH", "CPU", batching(4, 8)),
               InvalidArgumentError);
  EXPECT_THROW(client().set_model("", models().eke), InvalidArgumentError);
  EXPECT_THROW(client().set_model_chunk_size(0), InvalidArgumentError);
}

// A model longer than MODEL_CHUNK_SIZE goes up as many BLOB arguments and comes back as an
// array of chunks; both directions must give back the identical bytes.
TEST_P(ModelTest, ChunkedUploadAndDownload) {
  const std::int64_t original = client().model_chunk_size();
  EXPECT_GT(original, 0);
  client().set_model_chunk_size(1000);
  EXPECT_EQ(client().model_chunk_size(), 1000);
  Client fresh(address());  // asks the server, has no cached value
  EXPECT_EQ(fresh.model_chunk_size(), 1000);

  const std::string name = unique("eke");
  ASSERT_GT(models().eke.size(), 3000u);
  fresh.set_model(name, models().eke);
  Reply raw = client().command({"AI.MODELGET", name, "BLOB"});
  ASSERT_TRUE(raw.is_array());
  EXPECT_EQ(raw.elements.size(), models().eke.size() / 1000 + 1);
  EXPECT_EQ(fresh.get_model(name), models().eke);

  // It still runs: the chunks were joined in order.
  std::vector<float> x = eke_inputs(3, 1);
  put_cells(unique("x"), x);
  fresh.run_model(name, {unique("x")}, {unique("y")});
  expect_eke_outputs(client().get_tensor(unique("y")), x, "chunked model");
  client().set_model_chunk_size(original);
}

TEST_P(ModelTest, RunModelEqualsHandComputation) {
  const std::string name = unique("eke");
  client().set_model(name, models().eke);
  for (std::int64_t rows : {1, 7, 1000}) {
    std::vector<float> x = eke_inputs(rows, static_cast<int>(rows));
    put_cells(unique("x"), x);
    client().run_model(name, {unique("x")}, {unique("y")});
    expect_eke_outputs(client().get_tensor(unique("y")), x, numbered("rows ", rows));
  }
  // With a generous timeout the run starts in time and succeeds.
  client().run_model(name, {unique("x")}, {unique("y2")}, 10s);
  EXPECT_TRUE(client().tensor_exists(unique("y2")));
}

TEST_P(ModelTest, RunModelOnPutsRunsAndGetsInOneCall) {
  const std::string eke = unique("eke"), two = unique("two");
  client().set_model(eke, models().eke);
  client().set_model(two, models().two_io);

  std::vector<float> x = eke_inputs(64, 3);
  std::vector<std::int64_t> shape{64, 4};
  // TensorRef borrows its name: the strings must outlive the refs.
  const std::string x_name = unique("x"), a_name = unique("a"), b_name = unique("b");
  const std::string bad_name = unique("bad");
  std::vector<TensorRef> inputs{TensorRef::of<float>(x_name, x, shape)};
  for (int step = 0; step < 3; ++step) {
    for (float& v : x) v += 0.5f;  // new inputs every step, as a simulation sends
    std::vector<Tensor> y = client().run_model_on(eke, inputs, {unique("y")});
    ASSERT_EQ(y.size(), 1u);
    expect_eke_outputs(y[0], x, numbered("step ", step));
  }

  std::vector<double> a{1, 2, 3, 4, 5, 6}, b{0.5, -1, 2, -2, 3, 0};
  std::vector<std::int64_t> ab_shape{2, 3};
  std::vector<TensorRef> two_inputs{TensorRef::of<double>(a_name, a, ab_shape),
                                    TensorRef::of<double>(b_name, b, ab_shape)};
  std::vector<Tensor> out = client().run_model_on(two, two_inputs, {unique("sum"), unique("prod")});
  ASSERT_EQ(out.size(), 2u);
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(out[0].data<double>()[i], a[i] + b[i]);
    EXPECT_EQ(out[1].data<double>()[i], a[i] * b[i]);
  }
  EXPECT_EQ(std::vector<std::int64_t>(out[1].shape().begin(), out[1].shape().end()), ab_shape);

  // A failing run throws and returns nothing; the connection stays usable.
  std::vector<float> bad(6, 1.0f);
  std::vector<std::int64_t> bad_shape{2, 3};
  std::vector<TensorRef> bad_inputs{TensorRef::of<float>(bad_name, bad, bad_shape)};
  try {
    client().run_model_on(eke, bad_inputs, {unique("never")});
    ADD_FAILURE() << "a 2x3 input to a 4-feature model should fail";
  } catch (const ServerError& e) {
    EXPECT_NE(e.server_text().find("mat1 and mat2 shapes cannot be multiplied"), std::string::npos)
        << e.server_text();
  }
  EXPECT_FALSE(client().tensor_exists(unique("never")));
  EXPECT_TRUE(client().model_exists(eke));
}

// Inputs of shared-memory size go through shared memory on a Unix socket (the small one with
// them, on the socket, in the same batch); the outputs come back with the run.
TEST_P(ModelTest, RunModelOnSendsLargeInputsThroughSharedMemory) {
  ClientOptions options;
  options.address = address();
  options.shared_memory_min_bytes = 64 << 10;
  options.shared_memory_put_min_bytes = 64 << 10;
  Client shm(options);
  const std::string two = unique("two");
  shm.set_model(two, models().two_io);
  const std::string a_name = unique("big_a"), b_name = unique("big_b");
  std::vector<std::int64_t> shape{128, 128};
  std::vector<double> a(128 * 128), b(128 * 128);
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<double>(i % 1000) * 0.5;
    b[i] = static_cast<double>(i % 7) - 3.0;
  }
  std::vector<TensorRef> inputs{TensorRef::of<double>(a_name, a, shape),
                                TensorRef::of<double>(b_name, b, shape)};
  for (int step = 0; step < 2; ++step) {
    for (double& v : a) v += 1.0;
    const ClientStats before = shm.stats();
    std::vector<Tensor> out = shm.run_model_on(two, inputs, {unique("sum"), unique("prod")});
    const ClientStats after = shm.stats();
    EXPECT_EQ(after.shm_puts - before.shm_puts, GetParam() == Transport::kUnix ? 2u : 0u);
    ASSERT_EQ(out.size(), 2u);
    for (std::size_t i = 0; i < a.size(); ++i) {
      ASSERT_EQ(out[0].data<double>()[i], a[i] + b[i]) << "step " << step << ", " << i;
      ASSERT_EQ(out[1].data<double>()[i], a[i] * b[i]) << "step " << step << ", " << i;
    }
  }
}

// Models get the ensemble prefix only when asked; run_model's tensors follow the tensor prefix
// (inputs: data source, outputs: SSKEYOUT).
TEST_P(ModelTest, EnsemblePrefixes) {
  const std::string name = unique("eke");
  ClientOptions options;
  options.address = address();
  options.key_prefix_out = "ens0";
  options.key_prefixes_in = "ens1";
  Client producer(options);
  producer.set_model(name, models().eke);
  EXPECT_TRUE(client().key_exists(name));  // no prefix by default

  std::vector<float> x = eke_inputs(2, 5);
  client().put_tensor<float>("ens1." + unique("x"), x, std::vector<std::int64_t>{2, 4});
  producer.run_model(name, {unique("x")}, {unique("y")});
  EXPECT_TRUE(client().key_exists("ens0." + unique("y")));

  producer.use_model_ensemble_prefix(true);
  producer.set_model(name, models().eke);
  EXPECT_TRUE(client().key_exists("ens0." + name));
  EXPECT_FALSE(producer.model_exists(name));  // reads use the data source, ens1
  EXPECT_THROW(producer.run_model(name, {unique("x")}, {unique("y")}), KeyNotFoundError);
}

TEST_P(ModelTest, ErrorsLeaveNoOutput) {
  const std::string name = unique("eke");
  const std::string y = unique("y");
  client().set_model(name, models().eke);
  std::vector<float> x = eke_inputs(2, 2);
  put_cells(unique("x"), x);

  EXPECT_THROW(client().run_model(unique("missing"), {unique("x")}, {y}), KeyNotFoundError);
  EXPECT_THROW(client().run_model(name, {unique("no_input")}, {y}), KeyNotFoundError);
  try {
    client().run_model(name, {unique("x"), unique("x")}, {y});
    ADD_FAILURE() << "two inputs to a one-input model should fail";
  } catch (const ServerError& e) {
    // libtorch's own message, quoted by the server.
    EXPECT_NE(e.server_text().find("Expected at most 2 argument(s) for operator 'forward', but "
                                   "received 3 argument(s)"),
              std::string::npos)
        << e.server_text();
    EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
  }
  try {
    client().run_model(name, {unique("x")}, {y, unique("y_extra")});
    ADD_FAILURE() << "two outputs from a one-output model should fail";
  } catch (const ServerError& e) {
    EXPECT_NE(e.server_text().find("nothing was stored"), std::string::npos) << e.server_text();
  }
  EXPECT_FALSE(client().tensor_exists(y));
  EXPECT_FALSE(client().tensor_exists(unique("y_extra")));

  client().put_bytes(unique("string"), "not a model");
  EXPECT_THROW(client().run_model(unique("string"), {unique("x")}, {y}), WrongTypeError);
  EXPECT_THROW(client().set_model(unique("string"), models().eke), WrongTypeError);
  EXPECT_THROW(client().run_model(name, {}, {y}), InvalidArgumentError);
}

TEST_P(ModelTest, BadModelBytesAreRefusedWithTheBackendsMessage) {
  const std::string name = unique("bad");
  try {
    client().set_model(name, "this is not a TorchScript archive");
    ADD_FAILURE() << "bad bytes should be refused";
  } catch (const ServerError& e) {
    EXPECT_NE(e.server_text().find("PytorchStreamReader"), std::string::npos) << e.server_text();
  }
  EXPECT_FALSE(client().model_exists(name));
  try {
    client().set_model(name, models().eke, "TORCH", "NPU");
    ADD_FAILURE() << "an unknown device should be refused";
  } catch (const ServerError& e) {
    EXPECT_EQ(e.server_text(), "ERR Invalid DEVICE");
  }
  EXPECT_THROW(client().set_model(name, models().eke, "ONNX"), ServerError);
  EXPECT_FALSE(client().model_exists(name));
}

// TIMEOUT bounds the time before a run starts. With one executor thread, a run of a model that
// waits for a batch (MINBATCHSIZE not reached until MINBATCHTIMEOUT) holds the executor; a run
// of another model queued behind it with a short TIMEOUT is dropped: TimeoutError, no output,
// and the connection stays usable.
TEST_P(ModelTest, TimeoutWhileQueuedThrowsTimeoutError) {
  const std::string waiting = unique("waiting"), eke = unique("eke");
  client().set_model(waiting, models().eke, "TORCH", "CPU", batching(1000, 1000, 8000ms));
  client().set_model(eke, models().eke);
  std::vector<float> x = eke_inputs(1, 4);
  put_cells(unique("x"), x);

  Client other(address());
  std::thread holder([&] { other.run_model(waiting, {unique("x")}, {unique("held")}); });
  // The waiting model's run holds the executor once it is submitted (calls counts submissions):
  // waited for, not slept for, since a loaded machine may take longer than any fixed pause.
  for (int i = 0; i < 3000 && client().model_info(waiting).calls < 1; ++i) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(client().model_info(waiting).calls, 1) << "the holder's run never came";
  auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(client().run_model(eke, {unique("x")}, {unique("y")}, 100ms), TimeoutError);
  // At its own timeout, not once the batch gave up waiting (8 s after the holder's run came): the
  // bound sits between the two, with room for a loaded machine.
  EXPECT_LT(std::chrono::steady_clock::now() - start, 4000ms);
  EXPECT_FALSE(client().tensor_exists(unique("y")));
  EXPECT_TRUE(client().model_exists(eke));  // same connection, still in step
  holder.join();
  EXPECT_TRUE(client().tensor_exists(unique("held")));
  // After the batch has run, the same call succeeds.
  client().run_model(eke, {unique("x")}, {unique("y")}, 5000ms);
  expect_eke_outputs(client().get_tensor(unique("y")), x, "after the timeout");
}

constexpr std::string_view kScript = R"TS(
def add_two(a, b):
    return a + b

def scale(tensors: List[Tensor], keys: List[str], args: List[str]):
    return tensors[0] * float(args[0]), tensors[1] + float(len(keys))
)TS";

TEST_P(ModelTest, ScriptsInBothForms) {
  const std::string old_style = unique("old"), new_style = unique("new");
  std::vector<float> a{1, 2, 3}, b{10, 20, 30};
  std::vector<std::int64_t> shape{3};
  client().put_tensor<float>(unique("a"), a, shape);
  client().put_tensor<float>(unique("b"), b, shape);

  // AI.SCRIPTSET + AI.SCRIPTRUN (what SmartRedis sends): positional tensors.
  client().set_script(old_style, "CPU", kScript);
  EXPECT_EQ(client().get_script(old_style), kScript);
  EXPECT_EQ(client().command({"TYPE", old_style}).string, "AI_SCRIPT");
  client().run_script(old_style, "add_two", {unique("a"), unique("b")}, {unique("sum")});
  Tensor sum = client().get_tensor(unique("sum"));
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(sum.data<float>()[i], a[i] + b[i]);

  // AI.SCRIPTSTORE + AI.SCRIPTEXECUTE: f(tensors, keys, args).
  client().set_script(new_style, "CPU", kScript, {"scale"});
  client().run_script(new_style, "scale", {"k1", "k2"}, {unique("a"), unique("b")}, {"2.5"},
                      {unique("scaled"), unique("shifted")});
  Tensor scaled = client().get_tensor(unique("scaled"));
  Tensor shifted = client().get_tensor(unique("shifted"));
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(scaled.data<float>()[i], a[i] * 2.5f);
    EXPECT_EQ(shifted.data<float>()[i], b[i] + 2.0f);
  }

  try {
    client().run_script(old_style, "no_such_function", {unique("a")}, {unique("z")});
    ADD_FAILURE() << "an unknown function should fail";
  } catch (const ServerError& e) {
    EXPECT_NE(e.server_text().find("no_such_function"), std::string::npos) << e.server_text();
  }
  EXPECT_FALSE(client().tensor_exists(unique("z")));
  EXPECT_THROW(client().set_script(unique("broken"), "CPU", "def f(a):\n    return a +\n"),
               ServerError);
  EXPECT_THROW(client().set_script(unique("noentry"), "CPU", kScript, {"missing"}), ServerError);

  ModelInfo info = client().model_info(new_style);
  EXPECT_EQ(info.type, "SCRIPT");
  EXPECT_EQ(info.calls, 1);
  EXPECT_EQ(info.samples, -1);

  EXPECT_TRUE(client().delete_script(old_style));
  EXPECT_FALSE(client().delete_script(old_style));
  EXPECT_THROW(client().get_script(old_style), KeyNotFoundError);
  EXPECT_THROW(client().run_script(old_style, "add_two", {unique("a"), unique("b")}, {"s"}),
               KeyNotFoundError);

  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / (unique("script") + ".py");
  std::ofstream(file) << kScript;
  client().set_script_from_file(old_style, "CPU", file.string());
  EXPECT_EQ(client().get_script(old_style), kScript);
  std::filesystem::remove(file);
}

TEST_P(ModelTest, ModelInfoCountsCallsSamplesErrorsAndVersions) {
  const std::string name = unique("eke");
  client().set_model(name, models().eke, "TORCH", "CPU", tagged("t"));
  std::vector<float> x = eke_inputs(5, 6);
  put_cells(unique("x"), x);
  for (int i = 0; i < 3; ++i) client().run_model(name, {unique("x")}, {unique("y")});
  EXPECT_THROW(client().run_model(name, {unique("x"), unique("x")}, {unique("y")}), ServerError);

  ModelInfo info = client().model_info(name);
  EXPECT_EQ(info.key, name);
  EXPECT_EQ(info.type, "MODEL");
  EXPECT_EQ(info.backend, "TORCH");
  EXPECT_EQ(info.device, "CPU");
  EXPECT_EQ(info.tag, "t");
  EXPECT_EQ(info.calls, 4);
  EXPECT_GE(info.samples, 15);
  EXPECT_EQ(info.errors, 1);
  EXPECT_EQ(info.version, 1);
  EXPECT_EQ(info.batches, 0);
  EXPECT_GT(info.run_time_us, 0);
  EXPECT_EQ(info.duration_us, info.run_time_us);

  client().reset_model_stats(name);
  info = client().model_info(name);
  EXPECT_EQ(info.calls, 0);
  EXPECT_EQ(info.errors, 0);
  EXPECT_EQ(info.version, 1);
  client().set_model(name, models().eke);
  EXPECT_EQ(client().model_info(name).version, 2);
  EXPECT_THROW(client().model_info(unique("missing")), KeyNotFoundError);
  EXPECT_THROW(client().reset_model_stats(unique("missing")), KeyNotFoundError);
}

// Storing over a model while another client runs it in a loop: every run succeeds (on the old
// or the new version) and each store bumps the version.
TEST_P(ModelTest, ReplacementWhileExecutionsRun) {
  const std::string name = unique("eke");
  client().set_model(name, models().eke);
  std::vector<float> x = eke_inputs(16, 7);
  put_cells(unique("x"), x);

  std::atomic<bool> stop{false};
  std::atomic<int> runs{0};
  std::atomic<bool> failed{false};
  std::string failure;  // written by the runner before it sets `failed`
  std::thread runner([&] {
    try {
      Client own(address());
      while (!stop) {
        own.run_model(name, {unique("x")}, {unique("y")});
        Tensor y = own.get_tensor(unique("y"));
        if (std::abs(y.data<float>()[3] - eke_reference(&x[12])) > 1e-4) {
          throw std::runtime_error("wrong result after a replacement");
        }
        ++runs;
      }
    } catch (const std::exception& e) {
      failure = e.what();
      failed = true;
    }
  });
  for (int store = 0; store < 5; ++store) {
    while (runs < (store + 1) * 3 && !failed) std::this_thread::sleep_for(1ms);
    client().set_model(name, models().eke);
  }
  stop = true;
  runner.join();
  EXPECT_EQ(failure, "");
  EXPECT_GE(runs, 15);
  EXPECT_EQ(client().model_info(name).version, 6);
}

// Eight clients call a batching model at once with different inputs: the server gathers their
// rows into shared runs (MINBATCHSIZE makes it wait for all 64 rows, so batches surely form), and
// every caller gets exactly the rows an unbatched run would give it.
TEST_P(ModelTest, BatchedResultsEqualUnbatched) {
  const std::string name = unique("eke");
  constexpr int kCallers = 8, kRows = 8, kRounds = 10;
  client().set_model(name, models().eke, "TORCH", "CPU",
                     batching(kCallers * kRows, kCallers * kRows, 2000ms));
  std::vector<std::string> failures(kCallers);
  std::vector<std::thread> callers;
  for (int caller = 0; caller < kCallers; ++caller) {
    callers.emplace_back([&, caller] {
      try {
        Client own(address());
        std::vector<std::int64_t> shape{kRows, 4};
        const std::string input = numbered(unique("x"), caller);
        for (int round = 0; round < kRounds; ++round) {
          std::vector<float> x = eke_inputs(kRows, caller * 1000 + round);
          std::vector<TensorRef> inputs{TensorRef::of<float>(input, x, shape)};
          std::vector<Tensor> y = own.run_model_on(name, inputs, {numbered(unique("y"), caller)});
          for (int r = 0; r < kRows; ++r) {
            double expected = eke_reference(&x[static_cast<std::size_t>(r) * 4]);
            if (std::abs(y.at(0).data<float>()[r] - expected) > 1e-5 * (1 + std::abs(expected))) {
              throw std::runtime_error("caller " + std::to_string(caller) + " round " +
                                       std::to_string(round) + " row " + std::to_string(r) +
                                       ": wrong value");
            }
          }
        }
      } catch (const std::exception& e) {
        failures[caller] = e.what();
      }
    });
  }
  for (auto& thread : callers) thread.join();
  for (const auto& failure : failures) EXPECT_EQ(failure, "");
  ModelInfo info = client().model_info(name);
  EXPECT_EQ(info.calls, kCallers * kRounds);
  EXPECT_EQ(info.samples, kCallers * kRounds * kRows);
  EXPECT_GT(info.batches, 0);
  EXPECT_GT(info.mean_batch_size, 1.0);
  EXPECT_LT(info.runs, info.calls);
}

}  // namespace
}  // namespace slipstream
