// The trainer's public parts (slipstream/training.hpp) over the TorchScript core of src/ml
// (ml::SampleBuilder, ml::TrainableModel: torch stays behind their pimpls) and the client.
#include "slipstream/training.hpp"

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <optional>
#include <ostream>
#include <sstream>
#include <thread>

#include "ml/sample_builder.hpp"
#include "ml/trainable_model.hpp"
#include "train/input_file.hpp"

namespace slipstream::train {
namespace {

// A regular file of at most kMaxArchiveBytes (input_file.hpp): a FIFO, a device or a directory
// is refused before it is read. The archive itself is checked when it is loaded (src/ml).
std::string read_archive(const std::string& path, const char* what) {
  try {
    return read_input_file(path, what, kMaxArchiveBytes);
  } catch (const InputFileError& e) {
    throw InvalidArgumentError(e.what());
  }
}

ml::TensorView view_of(const Tensor& t) {
  return {t.dtype(), t.shape(), t.bytes().data(), t.byte_size()};
}

Tensor tensor_of(const ml::OwnedTensor& t) {
  try {
    return Tensor::copy_of(t.dtype, t.data.data(), t.data.size(), t.shape);
  } catch (const InvalidArgumentError& e) {
    throw TrainingError(std::string("a result slipstream tensors cannot hold: ") + e.what());
  }
}

// The dtype and shape of one row (without the sample dimension) of a batch's tensor.
struct RowLayout {
  DType dtype = DType::kFloat32;
  std::vector<std::int64_t> shape;
  std::size_t bytes = 0;

  static RowLayout of(const Tensor& rows) {
    RowLayout layout;
    layout.dtype = rows.dtype();
    layout.shape.assign(rows.shape().begin() + 1, rows.shape().end());
    layout.bytes = rows.byte_size() / static_cast<std::size_t>(rows.shape()[0]);
    return layout;
  }
  bool operator==(const RowLayout& o) const { return dtype == o.dtype && shape == o.shape; }
  std::string text() const { return std::string(dtype_name(dtype)) + " " + shape_text(shape); }

  // `count` rows gathered from `row(i)` into one [count, shape...] tensor.
  template <typename Row>
  Tensor gather(std::size_t count, Row&& row) const {
    std::vector<std::int64_t> full{static_cast<std::int64_t>(count)};
    full.insert(full.end(), shape.begin(), shape.end());
    Tensor out = Tensor::uninitialized(dtype, full);
    std::byte* to = out.mutable_bytes().data();
    for (std::size_t i = 0; i < count; ++i) std::memcpy(to + i * bytes, row(i), bytes);
    return out;
  }
};

}  // namespace

TrainingError::~TrainingError() = default;

// ---- SampleBuilder --------------------------------------------------------------------------

struct SampleBuilder::State {
  std::unique_ptr<ml::SampleBuilder> builder;
};

SampleBuilder::SampleBuilder(std::unique_ptr<State> state) : state_(std::move(state)) {}
SampleBuilder::SampleBuilder(SampleBuilder&&) noexcept = default;
SampleBuilder& SampleBuilder::operator=(SampleBuilder&&) noexcept = default;
SampleBuilder::~SampleBuilder() = default;

SampleBuilder SampleBuilder::from_file(const std::string& path) {
  const std::string archive = read_archive(path, "sample builder");
  try {
    return from_bytes(archive);
  } catch (const TrainingError& e) {
    throw TrainingError("sample builder " + path + ": " + e.what());
  }
}

SampleBuilder SampleBuilder::from_bytes(std::string_view archive) {
  auto state = std::make_unique<State>();
  try {
    state->builder = ml::SampleBuilder::load(archive);
  } catch (const ml::TrainError& e) {
    throw TrainingError(e.what());
  }
  return SampleBuilder(std::move(state));
}

Samples SampleBuilder::build(StreamStep& step) {
  std::vector<std::vector<StreamPiece>> loaded;  // keeps the bytes alive
  std::size_t pieces = 0;
  for (const StreamComponent& component : step.components()) {
    loaded.push_back(step.load(component.name));
    pieces += loaded.back().size();
  }
  Samples samples;
  if (pieces == 0) return samples;  // nothing of this step is this reader's
  std::vector<ml::RecordPieces> records;
  std::vector<std::vector<std::int64_t>> shapes;
  shapes.reserve(pieces);  // the views below point into it
  for (std::size_t c = 0; c < loaded.size(); ++c) {
    const StreamComponent& component = step.components()[c];
    ml::RecordPieces& record = records.emplace_back();
    record.name = component.name;
    for (const StreamPiece& piece : loaded[c]) {
      auto& shape = shapes.emplace_back(piece.piece.extent.begin(), piece.piece.extent.end());
      record.pieces.push_back(
          ml::TensorView{component.dtype, shape, piece.bytes.data(), piece.bytes.size()});
    }
  }
  ml::SampleRows rows;
  try {
    rows = state_->builder->build(records);
  } catch (const ml::TrainError& e) {
    throw TrainingError(e.what());
  }
  if (rows.samples == 0) return samples;
  samples.input = tensor_of(rows.input);
  samples.target = tensor_of(rows.target);
  samples.count = rows.samples;
  return samples;
}

// ---- SampleMemory ---------------------------------------------------------------------------

struct SampleMemory::State {
  struct Row {
    std::vector<std::byte> input, target;
  };
  explicit State(const ReplayConfig& config) : memory(config) {}
  ReplayMemory<Row> memory;
  std::optional<RowLayout> input, target;

  Samples batch(const std::vector<const Row*>& rows) const {
    Samples out;
    if (rows.empty()) return out;
    out.count = static_cast<std::int64_t>(rows.size());
    out.input = input->gather(rows.size(), [&](std::size_t i) { return rows[i]->input.data(); });
    out.target =
        target->gather(rows.size(), [&](std::size_t i) { return rows[i]->target.data(); });
    return out;
  }
};

SampleMemory::SampleMemory(const ReplayConfig& config)
    : state_(std::make_unique<State>(config)) {}
SampleMemory::SampleMemory(SampleMemory&&) noexcept = default;
SampleMemory& SampleMemory::operator=(SampleMemory&&) noexcept = default;
SampleMemory::~SampleMemory() = default;

void SampleMemory::check(const Samples& rows) const {
  if (rows.count == 0 || !state_->input) return;
  const RowLayout in = RowLayout::of(rows.input), out = RowLayout::of(rows.target);
  if (!(in == *state_->input) || !(out == *state_->target)) {
    throw TrainingError("these samples are " + in.text() + " -> " + out.text() +
                        ", earlier ones " + state_->input->text() + " -> " +
                        state_->target->text() + "; every step must give the same shapes");
  }
}

bool SampleMemory::add(const Samples& rows, std::int64_t row) {
  if (row < 0 || row >= rows.count) {
    throw InvalidArgumentError("row " + std::to_string(row) + " of " +
                               std::to_string(rows.count) + " samples");
  }
  check(rows);
  if (!state_->input) {
    state_->input = RowLayout::of(rows.input);
    state_->target = RowLayout::of(rows.target);
  }
  const std::size_t in = state_->input->bytes, out = state_->target->bytes;
  const std::byte* from_in = rows.input.bytes().data() + static_cast<std::size_t>(row) * in;
  const std::byte* from_out = rows.target.bytes().data() + static_cast<std::size_t>(row) * out;
  State::Row sample{{from_in, from_in + in}, {from_out, from_out + out}};
  return state_->memory.add(std::move(sample), in + out);
}

std::int64_t SampleMemory::add(const Samples& rows) {
  check(rows);
  std::int64_t taken = 0;
  for (std::int64_t i = 0; i < rows.count; ++i) taken += add(rows, i) ? 1 : 0;
  return taken;
}

Samples SampleMemory::draw(std::size_t n) { return state_->batch(state_->memory.draw(n)); }

Samples SampleMemory::all() const {
  std::vector<const State::Row*> rows;
  state_->memory.for_each([&](const State::Row& row) { rows.push_back(&row); });
  return state_->batch(rows);
}

bool SampleMemory::ready() const noexcept { return state_->memory.ready(); }
std::size_t SampleMemory::size() const noexcept { return state_->memory.size(); }
ReplayStats SampleMemory::stats() const { return state_->memory.stats(); }

// ---- Model ----------------------------------------------------------------------------------

struct Model::State {
  Collective* collective = nullptr;
  std::unique_ptr<ml::TrainableModel> model;
  std::vector<float> fused;  // gradients, count, count x loss, failed
  std::int64_t steps = 0;
  double last_loss = 0;
};

Model::Model(std::unique_ptr<State> state) : state_(std::move(state)) {}
Model::Model(Model&&) noexcept = default;
Model& Model::operator=(Model&&) noexcept = default;
Model::~Model() = default;

Model Model::from_file(const std::string& path, const TrainOptions& options,
                       Collective& collective) {
  const std::string archive = read_archive(path, "model");
  try {
    return from_bytes(archive, options, collective);
  } catch (const TrainingError& e) {
    throw TrainingError("model " + path + ": " + e.what());
  }
}

Model Model::from_bytes(std::string_view archive, const TrainOptions& options,
                        Collective& collective) {
  auto state = std::make_unique<State>();
  state->collective = &collective;
  std::string error;
  try {
    state->model = ml::TrainableModel::load(archive, options);
  } catch (const ml::TrainError& e) {
    error = e.what();
  }
  if (!collective.all(error.empty())) {
    throw TrainingError(error.empty() ? "another rank could not load the model" : error);
  }
  const auto count = static_cast<std::int64_t>(state->model->parameter_count());
  const bool same = collective.sum(count) == count * collective.size();
  if (!collective.all(same)) {
    throw TrainingError("the ranks' models differ in size (this rank's has " +
                        std::to_string(count) + " parameters)");
  }
  std::vector<float> parameters(static_cast<std::size_t>(count));
  state->model->parameters(parameters);
  collective.broadcast(parameters, 0);
  state->model->set_parameters(parameters);
  return Model(std::move(state));
}

BatchLoss Model::train_step(const Samples& batch) {
  ml::TrainableModel& model = *state_->model;
  const std::size_t params = model.parameter_count();
  std::vector<float>& fused = state_->fused;
  fused.assign(params + 3, 0.0f);
  double local_loss = 0;
  std::string error;
  if (batch.count > 0) {
    const ml::TensorView input = view_of(batch.input), target = view_of(batch.target);
    try {
      local_loss = model.accumulate({&input, 1}, target, static_cast<double>(batch.count));
      model.gradients({fused.data(), params});
      fused[params] = static_cast<float>(batch.count);
      fused[params + 1] = static_cast<float>(local_loss * static_cast<double>(batch.count));
    } catch (const ml::TrainError& e) {
      error = e.what();
      std::fill(fused.begin(), fused.end(), 0.0f);
    }
  }
  fused[params + 2] = error.empty() ? 0.0f : 1.0f;
  state_->collective->sum(std::span<float>(fused));
  if (fused[params + 2] > 0) {
    // No step: every rank drops what it accumulated, so the next step starts from zero.
    std::fill(fused.begin(), fused.end(), 0.0f);
    model.set_gradients({fused.data(), params});
    throw TrainingError(error.empty()
                            ? "the model failed on another rank's batch (its log says why)"
                            : "the model failed on a batch: " + error);
  }
  const double total = fused[params];
  if (total <= 0) return {};
  const auto scale = static_cast<float>(1.0 / total);
  for (std::size_t i = 0; i < params; ++i) fused[i] *= scale;
  model.set_gradients({fused.data(), params});
  model.step();
  ++state_->steps;
  state_->last_loss = fused[params + 1] / total;
  return {static_cast<std::int64_t>(total), state_->last_loss};
}

BatchLoss Model::evaluate(const Samples& samples) {
  std::vector<double> sums(3, 0.0);  // loss x count, count, failed
  std::string error;
  if (samples.count > 0) {
    const ml::TensorView input = view_of(samples.input), target = view_of(samples.target);
    try {
      sums[0] = state_->model->evaluate({&input, 1}, target) * static_cast<double>(samples.count);
      sums[1] = static_cast<double>(samples.count);
    } catch (const ml::TrainError& e) {
      error = e.what();
      sums = {0, 0, 1};
    }
  }
  state_->collective->sum(std::span<double>(sums));
  if (sums[2] > 0) {
    throw TrainingError(error.empty() ? "the model failed on another rank's samples"
                                      : "the model failed on the samples: " + error);
  }
  if (sums[1] <= 0) return {};
  return {static_cast<std::int64_t>(sums[1]), sums[0] / sums[1]};
}

std::vector<Tensor> Model::predict(const Tensor& input) {
  const ml::TensorView view = view_of(input);
  std::vector<ml::OwnedTensor> outputs;
  try {
    outputs = state_->model->predict({&view, 1});
  } catch (const ml::TrainError& e) {
    throw TrainingError(e.what());
  }
  std::vector<Tensor> out;
  for (const ml::OwnedTensor& t : outputs) out.push_back(tensor_of(t));
  return out;
}

std::int64_t Model::steps() const noexcept { return state_->steps; }
double Model::last_loss() const noexcept { return state_->last_loss; }
double Model::learning_rate() const noexcept { return state_->model->learning_rate(); }
void Model::scale_learning_rate(double factor) { state_->model->scale_learning_rate(factor); }
std::string Model::save() const { return state_->model->save(); }
std::string Model::optimizer_state() const { return state_->model->optimizer_state(); }

void Model::load_optimizer_state(std::string_view bytes, std::int64_t steps) {
  try {
    state_->model->load_optimizer_state(bytes);
  } catch (const ml::TrainError& e) {
    throw TrainingError(e.what());
  }
  state_->steps = steps;
}

// ---- Publisher ------------------------------------------------------------------------------

struct Publisher::State {
  struct Job {
    std::string model;
    PublishInfo info;
  };

  State(ClientOptions server_options, std::string model_key, PublishOptions publish_options)
      : server(std::move(server_options)), key(std::move(model_key)),
        options(publish_options), published(publish_options.published_before),
        thread([this] { loop(); }) {}

  void loop() {
    std::unique_lock lock(mutex);
    while (true) {
      wake.wait(lock, [&] { return stop || pending; });
      if (stop) return;
      Job job = std::move(*pending);
      pending.reset();
      busy = true;
      lock.unlock();
      std::string error = send(job);
      lock.lock();
      busy = false;
      last_error = std::move(error);
      idle.notify_all();
    }
  }

  std::string send(const Job& job) {
    const std::int64_t version = published.load() + 1;
    std::ostringstream tag;
    tag << "version=" << version << " optimizer_step=" << job.info.optimizer_step
        << " stream_step=" << job.info.stream_step << " loss=" << job.info.loss;
    ModelOptions model_options;
    model_options.tag = tag.str();
    model_options.keep_versions = options.keep_versions;
    try {
      if (!client) client = std::make_unique<Client>(server);
      client->set_model(key, job.model, "TORCH", "CPU", model_options);
      published.store(version);
      return {};
    } catch (const std::exception& e) {
      ++failures;
      client.reset();  // reconnect next time
      if (options.log) {
        *options.log << "publishing version " << version << " of " << key
                     << " failed: " << e.what() << "\n" << std::flush;
      }
      return e.what();
    }
  }

  ClientOptions server;
  std::string key;
  PublishOptions options;
  std::unique_ptr<Client> client;  // the publisher thread's
  std::atomic<std::int64_t> published;
  std::atomic<std::int64_t> failures{0};
  std::mutex mutex;
  std::condition_variable wake, idle;
  std::optional<Job> pending;
  bool busy = false, stop = false;
  std::string last_error;
  std::thread thread;  // last: started once the rest is set up
};

Publisher::Publisher(ClientOptions server, std::string key, PublishOptions options)
    : state_(std::make_unique<State>(std::move(server), std::move(key), options)) {}

Publisher::~Publisher() {
  {
    std::lock_guard lock(state_->mutex);
    state_->stop = true;
  }
  state_->wake.notify_all();
  state_->thread.join();
}

void Publisher::publish(const Model& model, const PublishInfo& info) {
  publish(model.save(), info);
}

void Publisher::publish(std::string archive, const PublishInfo& info) {
  {
    std::lock_guard lock(state_->mutex);
    state_->pending = State::Job{std::move(archive), info};
  }
  state_->wake.notify_all();
}

std::string Publisher::flush() {
  std::unique_lock lock(state_->mutex);
  state_->idle.wait(lock, [&] { return !state_->pending && !state_->busy; });
  return state_->last_error;
}

std::int64_t Publisher::published() const noexcept { return state_->published.load(); }
std::int64_t Publisher::failures() const noexcept { return state_->failures.load(); }

}  // namespace slipstream::train
