// The online trainer's loop: see trainer.hpp.
#include "train/trainer.hpp"

#include <algorithm>
#include <random>
#include <limits>
#include <thread>
#include <mutex>
#include <condition_variable>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <optional>
#include <ostream>
#include <sstream>
#include <vector>

#include "ml/sample_builder.hpp"
#include "train/checkpoint.hpp"
#include "ml/trainable_model.hpp"
#include "slipstream/client.hpp"
#include "slipstream/stream.hpp"

namespace slipstream::train {
namespace {

using Clock = std::chrono::steady_clock;

std::string read_file(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw TrainerError(std::string("cannot read the ") + what + " " + path);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// The shape and dtype every sample of a run has (set by the first step that brings samples).
struct RowLayout {
  DType dtype = DType::kFloat32;
  std::vector<std::int64_t> shape;  // without the sample dimension
  std::size_t bytes = 0;

  static RowLayout of(DType dtype, std::vector<std::int64_t> shape) {
    RowLayout layout;
    layout.dtype = dtype;
    layout.shape = std::move(shape);
    std::size_t n = 1;
    for (std::int64_t d : layout.shape) n *= static_cast<std::size_t>(d);
    layout.bytes = n * dtype_size(dtype);
    return layout;
  }
  static RowLayout of(const ml::OwnedTensor& rows) {
    return of(rows.dtype, std::vector<std::int64_t>(rows.shape.begin() + 1, rows.shape.end()));
  }
  bool operator==(const RowLayout&) const = default;
  std::string text() const { return std::string(dtype_name(dtype)) + " " + ml::shape_text(shape); }
};

struct Sample {
  std::vector<std::byte> input;
  std::vector<std::byte> target;
};

// Samples gathered into one input and one target tensor ([count, row shape...]).
struct Batch {
  Batch(const std::vector<const Sample*>& samples, const RowLayout& in, const RowLayout& out)
      : count(samples.size()), in_layout(in), out_layout(out), inputs(count * in.bytes),
        targets(count * out.bytes) {
    for (std::size_t i = 0; i < count; ++i) {
      std::memcpy(inputs.data() + i * in.bytes, samples[i]->input.data(), in.bytes);
      std::memcpy(targets.data() + i * out.bytes, samples[i]->target.data(), out.bytes);
    }
    in_shape.push_back(static_cast<std::int64_t>(count));
    in_shape.insert(in_shape.end(), in.shape.begin(), in.shape.end());
    out_shape.push_back(static_cast<std::int64_t>(count));
    out_shape.insert(out_shape.end(), out.shape.begin(), out.shape.end());
  }
  ml::TensorView input() const { return {in_layout.dtype, in_shape, inputs.data(), inputs.size()}; }
  ml::TensorView target() const {
    return {out_layout.dtype, out_shape, targets.data(), targets.size()};
  }

  std::size_t count;
  const RowLayout& in_layout;
  const RowLayout& out_layout;
  std::vector<std::byte> inputs, targets;
  std::vector<std::int64_t> in_shape, out_shape;
};

// What one rank brings to a round, summed over the ranks in one call.
enum Field : std::size_t {
  kGot,         // a step (or a skipped step's notice) came
  kEnded,       // this rank's reader saw the end of the stream
  kNewSamples,  // samples added to the memory
  kBadStep,     // the sample builder failed on this rank's share
  kReady,       // the memory holds min_fill samples
  kWaitedOut,   // no first step within wait_seconds (this rank's clock)
  kFailed,      // the reader failed (the server went away)
  kFields
};

void write_csv_header(std::ostream& out) {
  out << "seconds,stream_step,steps_behind,steps_read,optimizer_steps,samples_seen,"
         "samples_trained,samples_per_second,train_loss,validation_loss,learning_rate,replay_held,"
         "replay_bytes,published_version\n";
}

// Publishes models on its own thread and connection, so that the trainer never waits while the
// server loads one. At most one model waits: a newer one replaces a model not sent yet (the
// newest is what callers want). Versions count the models actually stored, so they match the
// server's count of stores under the key.
class BackgroundPublisher {
 public:
  struct Job {
    std::string model;
    std::int64_t optimizer_step = 0, stream_step = -1;
    double loss = 0;
  };

  BackgroundPublisher(ClientOptions options, std::string key, std::int64_t keep_versions,
                      std::int64_t published, std::ostream* progress)
      : options_(std::move(options)), key_(std::move(key)), keep_(keep_versions),
        progress_(progress), published_(published), thread_([this] { loop(); }) {}
  ~BackgroundPublisher() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  BackgroundPublisher(const BackgroundPublisher&) = delete;
  BackgroundPublisher& operator=(const BackgroundPublisher&) = delete;

  void submit(Job job) {
    {
      std::lock_guard lock(mutex_);
      pending_ = std::move(job);
    }
    wake_.notify_all();
  }
  /// Waits until every submitted model was sent; the last attempt's error (empty: stored).
  std::string flush() {
    std::unique_lock lock(mutex_);
    idle_.wait(lock, [&] { return !pending_ && !busy_; });
    return last_error_;
  }
  std::int64_t published() const { return published_.load(); }
  std::int64_t failures() const { return failures_.load(); }

 private:
  void loop() {
    std::unique_lock lock(mutex_);
    while (true) {
      wake_.wait(lock, [&] { return stop_ || pending_; });
      if (stop_) return;
      Job job = std::move(*pending_);
      pending_.reset();
      busy_ = true;
      lock.unlock();
      std::string error = send(job);
      lock.lock();
      busy_ = false;
      last_error_ = std::move(error);
      idle_.notify_all();
    }
  }
  std::string send(const Job& job) {
    const std::int64_t version = published_.load() + 1;
    std::ostringstream tag;
    tag << "version=" << version << " optimizer_step=" << job.optimizer_step
        << " stream_step=" << job.stream_step << " loss=" << job.loss;
    ModelOptions options;
    options.tag = tag.str();
    options.keep_versions = keep_;
    try {
      if (!client_) client_ = std::make_unique<Client>(options_);
      client_->set_model(key_, job.model, "TORCH", "CPU", options);
      published_.store(version);
      return {};
    } catch (const std::exception& e) {
      ++failures_;
      client_.reset();  // reconnect next time
      if (progress_) {
        *progress_ << "trainer: publishing version " << version << " failed: " << e.what()
                   << "\n" << std::flush;
      }
      return e.what();
    }
  }

  ClientOptions options_;
  std::string key_;
  std::int64_t keep_;
  std::ostream* progress_;
  std::unique_ptr<Client> client_;
  std::atomic<std::int64_t> published_;
  std::atomic<std::int64_t> failures_{0};
  std::mutex mutex_;
  std::condition_variable wake_, idle_;
  std::optional<Job> pending_;
  bool busy_ = false, stop_ = false;
  std::string last_error_;
  std::thread thread_;  // last: started once the rest is set up
};

}  // namespace

struct Trainer::State {
  TrainConfig config;
  Collective& collective;
  std::ostream* progress;
  std::unique_ptr<ml::TrainableModel> model;
  std::unique_ptr<ml::SampleBuilder> builder;
  ReplayMemory<Sample> memory;
  ReplayMemory<Sample> validation;  // held-out samples: a reservoir of validation_samples
  std::mt19937_64 split;            // which samples are held out
  double best_validation = std::numeric_limits<double>::infinity();
  std::optional<RowLayout> input_layout, target_layout;
  std::unique_ptr<Client> reporter;                // rank 0: progress reports
  std::unique_ptr<BackgroundPublisher> publisher;  // rank 0: model publishing
  std::ofstream csv, json;
  TrainerStatus status;
  Clock::time_point started = Clock::now();
  Clock::time_point last_print = Clock::now();
  std::string failure;  // this rank's reader error, shared through kFailed
  std::vector<float> fused;
  std::int64_t published_at = -1;  // the optimiser step of the last publish
  std::int64_t checkpointed_at = -1;  // the optimiser step of the last checkpoint
  std::int64_t resumed_stream_step = -1;  // steps up to this one were trained on before a restart

  State(TrainConfig c, Collective& coll, std::ostream* out)
      : config(std::move(c)), collective(coll), progress(out), memory(config.replay),
        validation(validation_config(config)), split(config.replay.seed ^ 0x5eedf00dULL) {}

  static ReplayConfig validation_config(const TrainConfig& c) {
    ReplayConfig v;
    v.policy = ReplayPolicy::kReservoir;
    v.max_samples = c.train.validation_samples;
    v.seed = c.replay.seed + 1;
    return v;
  }

  bool leader() const { return collective.rank() == 0; }

  // ---- Samples ------------------------------------------------------------------------------

  // Loads every component of this rank's share and runs the sample builder; the samples go into
  // the memory. Returns how many were added; throws ml::TrainError for a bad step.
  std::int64_t take_samples(StreamStep& step) {
    std::vector<std::vector<StreamPiece>> loaded;  // keeps the bytes alive
    std::vector<ml::RecordPieces> records;
    std::vector<std::vector<std::int64_t>> shapes;
    std::size_t pieces = 0;
    for (const StreamComponent& component : step.components()) {
      loaded.push_back(step.load(component.name));
      pieces += loaded.back().size();
    }
    if (pieces == 0) return 0;  // nothing of this step is this rank's
    shapes.reserve(pieces);
    for (std::size_t c = 0; c < loaded.size(); ++c) {
      const StreamComponent& component = step.components()[c];
      ml::RecordPieces& record = records.emplace_back();
      record.name = component.name;
      for (const StreamPiece& piece : loaded[c]) {
        auto& shape = shapes.emplace_back(piece.piece.extent.begin(), piece.piece.extent.end());
        record.pieces.push_back(ml::TensorView{component.dtype, shape, piece.bytes.data(),
                                               piece.bytes.size()});
      }
    }
    ml::SampleRows rows = builder->build(records);
    if (rows.samples == 0) return 0;
    const RowLayout in = RowLayout::of(rows.input), out = RowLayout::of(rows.target);
    if (!input_layout) {
      input_layout = in;
      target_layout = out;
    } else if (!(in == *input_layout) || !(out == *target_layout)) {
      throw ml::TrainError("this step's samples are " + in.text() + " -> " + out.text() +
                           ", earlier steps' " + input_layout->text() + " -> " +
                           target_layout->text() + "; every step must give the same shapes");
    }
    const auto* input = reinterpret_cast<const std::byte*>(rows.input.data.data());
    const auto* target = reinterpret_cast<const std::byte*>(rows.target.data.data());
    for (std::int64_t i = 0; i < rows.samples; ++i) {
      Sample sample;
      sample.input.assign(input + i * in.bytes, input + (i + 1) * in.bytes);
      sample.target.assign(target + i * out.bytes, target + (i + 1) * out.bytes);
      const double fraction = config.train.validation_fraction;
      if (fraction > 0 && std::uniform_real_distribution<double>(0, 1)(split) < fraction) {
        validation.add(std::move(sample), in.bytes + out.bytes);
      } else {
        memory.add(std::move(sample), in.bytes + out.bytes);
      }
    }
    return rows.samples;
  }

  // ---- Training -----------------------------------------------------------------------------

  // One optimiser step over every rank's batch (a collective call on every rank).
  void train_batch(bool ready) {
    const std::size_t params = model->parameter_count();
    fused.assign(params + 3, 0.0f);
    double local_loss = 0;
    std::size_t count = 0;
    std::string error;
    if (ready && memory.size() > 0) {
      const Batch batch(memory.draw(static_cast<std::size_t>(config.train.batch_size)),
                        *input_layout, *target_layout);
      count = batch.count;
      const ml::TensorView input = batch.input(), target = batch.target();
      try {
        local_loss = model->accumulate({&input, 1}, target, static_cast<double>(count));
        model->gradients({fused.data(), params});
      } catch (const ml::TrainError& e) {
        error = e.what();
        count = 0;
        local_loss = 0;
      }
    }
    fused[params] = static_cast<float>(count);
    fused[params + 1] = static_cast<float>(local_loss * static_cast<double>(count));
    fused[params + 2] = error.empty() ? 0.0f : 1.0f;
    collective.sum(std::span<float>(fused));
    if (fused[params + 2] > 0) {
      throw TrainerError(error.empty()
                             ? "the model failed on another rank's batch (its log says why)"
                             : "the model failed on a batch: " + error);
    }
    const double total = fused[params];
    if (total <= 0) return;
    const auto scale = static_cast<float>(1.0 / total);
    for (std::size_t i = 0; i < params; ++i) fused[i] *= scale;
    model->set_gradients({fused.data(), params});
    model->step();
    ++status.optimizer_steps;
    status.samples_trained += static_cast<std::int64_t>(total);
    status.train_loss = fused[params + 1] / total;
    const auto& t = config.train;
    if (t.decay_every > 0 && status.optimizer_steps % t.decay_every == 0) {
      model->scale_learning_rate(t.learning_rate_decay);
    }
    if (config.train.validation_fraction > 0 &&
        status.optimizer_steps % config.train.validate_every == 0) {
      validate();
    }
    if (config.publish.every > 0 && status.optimizer_steps % config.publish.every == 0 &&
        published_at != status.optimizer_steps) {
      publish(false);
    }
    if (!config.checkpoint.dir.empty() && config.checkpoint.every > 0 &&
        status.optimizer_steps % config.checkpoint.every == 0) {
      checkpoint(false);
    }
  }

  // The loss on every rank's held-out samples (collective): each rank evaluates what it holds,
  // and the losses are summed weighted by their counts. With [publish] on_improvement, a loss
  // lower than any before publishes the model.
  void validate() {
    std::vector<double> sums(3, 0.0);  // loss x count, count, failed
    std::string error;
    if (validation.size() > 0 && input_layout) {
      std::vector<const Sample*> held;
      validation.for_each([&](const Sample& sample) { held.push_back(&sample); });
      const Batch batch(held, *input_layout, *target_layout);
      const ml::TensorView input = batch.input(), target = batch.target();
      try {
        sums[0] = model->evaluate({&input, 1}, target) * static_cast<double>(batch.count);
        sums[1] = static_cast<double>(batch.count);
      } catch (const ml::TrainError& e) {
        error = e.what();
        sums[2] = 1;
      }
    }
    collective.sum(std::span<double>(sums));
    if (sums[2] > 0) {
      throw TrainerError(error.empty() ? "the model failed on another rank's validation samples"
                                       : "the model failed on the validation samples: " + error);
    }
    if (sums[1] <= 0) return;
    status.validation_loss = sums[0] / sums[1];
    if (status.validation_loss < best_validation) {
      best_validation = status.validation_loss;
      if (config.publish.on_improvement && published_at != status.optimizer_steps) publish(false);
    }
  }

  // ---- Checkpoints --------------------------------------------------------------------------

  // Every rank writes its replay memory (when asked), then rank 0 the model, the optimiser and
  // the counters: a trainer killed between the two resumes from the previous checkpoint, whose
  // replay files no longer match it and are not used. Collective. A periodic checkpoint that
  // fails is reported and training goes on; the final one throws.
  void checkpoint(bool final) {
    const std::filesystem::path dir = config.checkpoint.dir;
    std::string error;
    if (config.checkpoint.replay) {
      try {
        write_checkpoint(dir, collective.rank(), replay_snapshot());
      } catch (const CheckpointError& e) {
        error = e.what();
      }
    }
    bool ok = collective.all(error.empty());
    if (ok && leader()) {
      try {
        TrainerCheckpoint c;
        c.optimizer_steps = status.optimizer_steps;
        if (publisher) publisher->flush();  // the version recorded is the server's count
        c.published_version = publisher ? publisher->published() : status.published_version;
        c.stream_step = status.stream_step;
        c.samples_seen = status.samples_seen;
        c.samples_trained = status.samples_trained;
        c.model = model->save();
        c.optimizer = model->optimizer_state();
        write_checkpoint(dir, c);
      } catch (const CheckpointError& e) {
        error = e.what();
      }
    }
    ok = collective.all(error.empty()) && ok;
    if (ok) {
      checkpointed_at = status.optimizer_steps;
      return;
    }
    const std::string why = error.empty() ? "another rank could not write its part" : error;
    if (final) throw TrainerError("the final checkpoint failed: " + why);
    if (progress) *progress << "trainer (rank " << collective.rank() << "): checkpoint failed: " << why << "\n";
  }

  ReplayCheckpoint replay_snapshot() const {
    ReplayCheckpoint c;
    c.optimizer_steps = status.optimizer_steps;
    if (!input_layout) return c;
    c.input_dtype = input_layout->dtype;
    c.input_shape = input_layout->shape;
    c.target_dtype = target_layout->dtype;
    c.target_shape = target_layout->shape;
    memory.for_each([&](const Sample& sample) {
      c.inputs.append(reinterpret_cast<const char*>(sample.input.data()), sample.input.size());
      c.targets.append(reinterpret_cast<const char*>(sample.target.data()), sample.target.size());
      ++c.count;
    });
    return c;
  }

  // Rank 0's checkpoint (every rank reads it), and this rank's replay memory when it belongs to
  // that checkpoint. Returns a line saying what was resumed, or empty when there was nothing.
  std::string resume() {
    const std::filesystem::path dir = config.checkpoint.dir;
    std::optional<TrainerCheckpoint> c;
    try {
      c = read_trainer_checkpoint(dir);
    } catch (const CheckpointError& e) {
      throw TrainerError(e.what());
    }
    if (!c) return {};
    model = ml::TrainableModel::load(c->model, config.train.options);
    model->load_optimizer_state(c->optimizer);  // the learning rate as it was (scaled, decayed)
    status.optimizer_steps = c->optimizer_steps;
    status.published_version = c->published_version;
    status.samples_seen = c->samples_seen;
    status.samples_trained = c->samples_trained;
    resumed_stream_step = status.stream_step = c->stream_step;
    published_at = checkpointed_at = c->optimizer_steps;
    std::string replay = "";
    if (config.checkpoint.replay) {
      std::optional<ReplayCheckpoint> r;
      try {
        r = read_replay_checkpoint(dir, collective.rank());
      } catch (const CheckpointError& e) {
        replay = "; replay memory not restored: " + std::string(e.what());
      }
      if (r && r->optimizer_steps == c->optimizer_steps && r->count > 0) {
        input_layout = RowLayout::of(r->input_dtype, r->input_shape);
        target_layout = RowLayout::of(r->target_dtype, r->target_shape);
        for (std::uint64_t i = 0; i < r->count; ++i) {
          Sample sample;
          const auto* in = reinterpret_cast<const std::byte*>(r->inputs.data()) + i * input_layout->bytes;
          const auto* out = reinterpret_cast<const std::byte*>(r->targets.data()) + i * target_layout->bytes;
          sample.input.assign(in, in + input_layout->bytes);
          sample.target.assign(out, out + target_layout->bytes);
          memory.add(std::move(sample), input_layout->bytes + target_layout->bytes);
        }
        replay = "; replay memory: " + std::to_string(memory.size()) + " samples";
      } else if (r) {
        replay = "; replay memory not restored: it belongs to another checkpoint";
      }
    }
    return "resumed from " + trainer_checkpoint_path(dir).string() + " at optimiser step " +
           std::to_string(c->optimizer_steps) + " (published version " +
           std::to_string(c->published_version) + ", stream step " +
           std::to_string(c->stream_step) + ")" + replay;
  }

  // ---- Publishing and progress --------------------------------------------------------------

  // Rank 0 hands the model to the publisher, which stores it under publish_as on every shard
  // with a tag naming its version while training goes on. A periodic publish that fails is
  // reported (and the next one tried); the final one waits for every publish and throws.
  void publish(bool final) {
    if (!leader()) return;
    if (!publisher) {
      ClientOptions options;
      options.address = config.stream.address;
      publisher = std::make_unique<BackgroundPublisher>(
          options, config.model.publish_as, config.publish.keep_versions,
          status.published_version, progress);
    }
    publisher->submit({model->save(), status.optimizer_steps, status.stream_step,
                       status.train_loss});
    published_at = status.optimizer_steps;
    if (!final) return;
    const std::string error = publisher->flush();
    status.published_version = publisher->published();
    if (!error.empty()) throw TrainerError("the final publish failed: " + error);
  }

  // The end: the last model is published (or the one in flight finished) before the trainer is
  // done; an error is the final publish's.
  void finish_publishing() {
    if (!leader() || status.optimizer_steps == 0) return;
    const auto start = Clock::now();
    if (status.optimizer_steps != published_at || !publisher) {
      publish(true);
    } else {
      const std::string error = publisher->flush();
      status.published_version = publisher->published();
      if (!error.empty()) throw TrainerError("the final publish failed: " + error);
    }
    status.final_publish_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  }

  void refresh() {
    if (publisher) {
      status.published_version = publisher->published();
      status.publish_failures = publisher->failures();
    }
    status.seconds = std::chrono::duration<double>(Clock::now() - started).count();
    status.samples_per_second = status.seconds > 0 ? status.samples_trained / status.seconds : 0;
    status.learning_rate = model->learning_rate();
    status.replay = memory.stats();
  }

  void record() {
    if (!leader()) return;
    refresh();
    const TrainerStatus& s = status;
    if (csv.is_open()) {
      csv << std::setprecision(6) << s.seconds << ',' << s.stream_step << ',' << s.steps_behind
          << ',' << s.steps_read
          << ',' << s.optimizer_steps << ',' << s.samples_seen << ',' << s.samples_trained << ','
          << s.samples_per_second << ',' << s.train_loss << ',' << s.validation_loss << ','
          << s.learning_rate << ','
          << s.replay.held << ',' << s.replay.bytes << ',' << s.published_version << '\n'
          << std::flush;
    }
    if (json.is_open()) {
      json << std::setprecision(6) << "{\"seconds\":" << s.seconds
           << ",\"stream_step\":" << s.stream_step << ",\"steps_behind\":" << s.steps_behind
           << ",\"steps_read\":" << s.steps_read
           << ",\"optimizer_steps\":" << s.optimizer_steps
           << ",\"samples_seen\":" << s.samples_seen << ",\"samples_trained\":" << s.samples_trained
           << ",\"samples_per_second\":" << s.samples_per_second
           << ",\"train_loss\":" << (std::isfinite(s.train_loss) ? s.train_loss : 0)
           << ",\"validation_loss\":" << s.validation_loss
           << ",\"learning_rate\":" << s.learning_rate << ",\"replay_held\":" << s.replay.held
           << ",\"replay_bytes\":" << s.replay.bytes
           << ",\"published_version\":" << s.published_version << "}\n"
           << std::flush;
    }
  }

  void print(const std::string& line) {
    if (leader() && progress) *progress << "trainer: " << line << "\n" << std::flush;
  }

  Client& client() {
    if (!reporter) {
      ClientOptions options;
      options.address = config.stream.address;
      reporter = std::make_unique<Client>(options);
    }
    return *reporter;
  }

  // Rank 0 tells the server where it stands (SS.TRAIN.REPORT, for `slipstream train status` and
  // INFO training), after asking the stream how far the writers are. Best effort: a server that
  // cannot be reached costs this report only.
  void report_to_server(std::string_view state, const std::string& reason = {}) {
    if (!leader()) return;
    refresh();
    try {
      Client& c = client();
      try {  // a stream that is gone (ended and collected) leaves steps_behind as it was
        const Reply info = c.command({"SS.STREAM.INFO", config.stream.name});
        for (std::size_t i = 0; i + 1 < info.elements.size(); i += 2) {
          if (info.elements[i].string == "newest_complete" && status.stream_step >= 0) {
            status.steps_behind = std::max<std::int64_t>(
                0, info.elements[i + 1].integer - status.stream_step);
          }
        }
      } catch (const ServerError&) {
      }
      const TrainerStatus& st = status;
      auto text = [](auto v) {
        std::ostringstream out;
        out << std::setprecision(6) << v;
        return out.str();
      };
      std::vector<std::string> fields = {
          "SS.TRAIN.REPORT", config.stream.name + "/" + config.stream.group,
          "state", std::string(state),
          "stream", config.stream.name,
          "group", config.stream.group,
          "ranks", text(collective.size()),
          "model", config.model.publish_as,
          "stream_step", text(st.stream_step),
          "steps_behind", text(st.steps_behind),
          "optimizer_steps", text(st.optimizer_steps),
          "samples_seen", text(st.samples_seen),
          "samples_per_second", text(st.samples_per_second),
          "train_loss", text(st.train_loss),
          "validation_loss", text(st.validation_loss),
          "learning_rate", text(st.learning_rate),
          "replay_held", text(st.replay.held),
          "published_version", text(st.published_version),
          "seconds", text(st.seconds)};
      if (!reason.empty()) {
        fields.push_back("reason");
        fields.push_back(reason.substr(0, 1000));
      }
      std::vector<std::string_view> args(fields.begin(), fields.end());
      c.command(args);
    } catch (const std::exception&) {
      reporter.reset();  // reconnect at the next report
    }
  }

  // A progress line and a metrics row every print_every_seconds.
  void maybe_report(bool waiting) {
    const double every = config.metrics.print_every_seconds;
    if (!leader() || every <= 0) return;
    if (Clock::now() - last_print < std::chrono::duration<double>(every)) return;
    last_print = Clock::now();
    report_to_server(waiting ? "waiting" : "training");
    std::ostringstream line;
    if (waiting) {
      line << "waiting for the first step of stream '" << config.stream.name << "' ("
           << static_cast<long>(status.seconds) << " s of "
           << static_cast<long>(config.stream.wait_seconds) << ")";
    } else {
      line << "stream step " << status.stream_step << " (" << status.steps_behind
           << " behind) | " << status.optimizer_steps
           << " optimiser steps | loss " << std::setprecision(4) << status.train_loss
           << (status.validation_loss >= 0
                   ? " (validation " + std::to_string(status.validation_loss) + ")"
                   : std::string())
           << " | "
           << static_cast<long>(status.samples_per_second) << " samples/s | replay "
           << status.replay.held << "/" << config.replay.max_samples << " | published v"
           << status.published_version;
    }
    print(line.str());
    record();
  }
};

Trainer::Trainer(TrainConfig config, Collective& collective, std::ostream* progress) {
  const std::string model_bytes = read_file(config.model.file, "model");
  const std::string builder_bytes = read_file(config.model.samples, "sample builder");
  state_ = std::make_unique<State>(std::move(config), collective, progress);
  State& s = *state_;
  std::string resumed;
  try {
    s.builder = ml::SampleBuilder::load(builder_bytes);
    if (!s.config.checkpoint.dir.empty()) resumed = s.resume();
    if (!s.model) {  // no checkpoint: the model file, as configured
      s.model = ml::TrainableModel::load(model_bytes, s.config.train.options);
      if (s.config.train.scale_learning_rate) s.model->scale_learning_rate(collective.size());
    }
  } catch (const ml::TrainError& e) {
    throw TrainerError(e.what());
  }
  if (!resumed.empty()) s.print(resumed);
  std::vector<float> parameters(s.model->parameter_count());
  s.model->parameters(parameters);
  collective.broadcast(parameters, 0);
  s.model->set_parameters(parameters);
  if (s.leader()) {
    if (!s.config.metrics.csv.empty()) {
      s.csv.open(s.config.metrics.csv, std::ios::trunc);
      if (!s.csv) throw TrainerError("cannot write the metrics file " + s.config.metrics.csv);
      write_csv_header(s.csv);
    }
    if (!s.config.metrics.json.empty()) {
      s.json.open(s.config.metrics.json, std::ios::trunc);
      if (!s.json) throw TrainerError("cannot write the metrics file " + s.config.metrics.json);
    }
  }
}

Trainer::~Trainer() = default;

TrainerStatus Trainer::run() {
  try {
    return run_loop();
  } catch (const std::exception& e) {
    state_->report_to_server("failed", e.what());
    throw;
  }
}

TrainerStatus Trainer::run_loop() {
  State& s = *state_;
  const TrainConfig& config = s.config;
  s.started = s.last_print = Clock::now();
  ClientOptions client;
  client.address = config.stream.address;
  StreamReaderOptions options;
  options.policy = config.stream.discard ? StreamReaderOptions::Policy::kDiscard
                                         : StreamReaderOptions::Policy::kBlock;
  options.start = config.stream.start_newest ? StreamReaderOptions::Start::kNewest
                                             : StreamReaderOptions::Start::kOldest;
  options.strategy = config.stream.strategy;
  options.next_timeout = std::chrono::milliseconds(250);
  std::optional<StreamReader> reader;
  std::string join_error;
  try {
    reader.emplace(client, config.stream.name, config.stream.group,
                   static_cast<std::uint32_t>(s.collective.rank()),
                   static_cast<std::uint32_t>(s.collective.size()), options);
  } catch (const std::exception& e) {
    join_error = e.what();
  }
  if (!s.collective.all(join_error.empty())) {
    throw TrainerError(join_error.empty() ? "another rank could not join the stream"
                                          : "cannot join stream '" + config.stream.name +
                                                "': " + join_error);
  }
  s.print("joined stream '" + config.stream.name + "' as group '" + config.stream.group +
          "' with " + std::to_string(s.collective.size()) + " rank(s)");

  bool first_step = false, ended = false;
  std::vector<double> round(kFields);
  while (true) {
    std::fill(round.begin(), round.end(), 0.0);
    if (ended) {
      round[kEnded] = 1;
    } else {
      try {
        StreamNext next = reader->next_step();
        switch (next.kind) {
          case StreamNext::Kind::kStep: {
            round[kGot] = 1;
            if (next.step->number() <= s.resumed_stream_step) {
              next.step->release();  // trained on before the restart
              break;
            }
            ++s.status.steps_read;
            s.status.stream_step = next.step->number();
            try {
              round[kNewSamples] = static_cast<double>(s.take_samples(*next.step));
            } catch (const ml::TrainError& e) {
              round[kBadStep] = 1;
              if (s.progress) {
                *s.progress << "trainer (rank " << s.collective.rank() << "): stream step "
                            << next.step->number() << " gave no samples: " << e.what() << "\n";
              }
            }
            next.step->release();
            break;
          }
          case StreamNext::Kind::kSkipped:
            round[kGot] = 1;
            ++s.status.steps_skipped;
            break;
          case StreamNext::Kind::kEnd:
            ended = true;
            round[kEnded] = 1;
            break;
          case StreamNext::Kind::kTimeout:
            break;
        }
      } catch (const std::exception& e) {
        s.failure = e.what();
        round[kFailed] = 1;
      }
    }
    round[kReady] = s.memory.ready() ? 1 : 0;
    if (!first_step && std::chrono::duration<double>(Clock::now() - s.started).count() >
                           config.stream.wait_seconds) {
      round[kWaitedOut] = 1;
    }
    s.collective.sum(std::span<double>(round));
    if (round[kFailed] > 0) {
      throw TrainerError(s.failure.empty() ? "another rank lost its stream reader"
                                           : "reading the stream failed: " + s.failure);
    }
    s.status.bad_steps += static_cast<std::int64_t>(round[kBadStep]);
    s.status.samples_seen += static_cast<std::int64_t>(round[kNewSamples]);
    if (round[kGot] > 0) first_step = true;
    if (round[kEnded] >= s.collective.size()) break;
    if (!first_step && round[kWaitedOut] > 0) {
      throw TrainerError("no step of stream '" + config.stream.name + "' came within " +
                         std::to_string(config.stream.wait_seconds) + " s ([stream] wait_seconds)");
    }
    if (round[kNewSamples] > 0 && round[kReady] > 0) {
      // epochs_per_step passes over what the ready ranks hold, at least one batch.
      double held = static_cast<double>(s.memory.ready() ? s.memory.size() : 0);
      std::vector<double> total{held};
      s.collective.sum(std::span<double>(total));
      const double batch = static_cast<double>(config.train.batch_size) * round[kReady];
      const auto batches = std::max<std::int64_t>(
          1, std::llround(static_cast<double>(config.train.epochs_per_step) * total[0] / batch));
      for (std::int64_t b = 0; b < batches; ++b) s.train_batch(s.memory.ready());
    }
    s.maybe_report(!first_step);
  }
  s.print("the stream ended after step " + std::to_string(s.status.stream_step));
  if (s.status.samples_seen == 0) {
    throw TrainerError("stream '" + config.stream.name + "' ended before any sample was built");
  }
  const bool ready = s.collective.sum(s.memory.size() > 0 ? 1 : 0) > 0;
  for (std::int64_t b = 0; ready && b < config.train.steps_after_end; ++b) {
    s.train_batch(s.memory.size() > 0);
    s.maybe_report(false);
  }
  s.finish_publishing();
  if (!config.checkpoint.dir.empty() && s.status.optimizer_steps != s.checkpointed_at) {
    s.checkpoint(true);
  }
  s.record();
  s.report_to_server("done");
  s.print("done: " + std::to_string(s.status.optimizer_steps) + " optimiser steps, loss " +
          std::to_string(s.status.train_loss) + ", published version " +
          std::to_string(s.status.published_version));
  return s.status;
}

}  // namespace slipstream::train
