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

#include "slipstream/client.hpp"
#include "slipstream/stream.hpp"
#include "slipstream/training.hpp"
#include "train/checkpoint.hpp"
#include "train/input_file.hpp"

namespace slipstream::train {
namespace {

using Clock = std::chrono::steady_clock;


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

}  // namespace

struct Trainer::State {
  TrainConfig config;
  Collective& collective;
  std::ostream* progress;
  std::optional<Model> model;
  std::optional<SampleBuilder> builder;
  SampleMemory memory;
  SampleMemory validation;  // held-out samples: a reservoir of validation_samples
  std::mt19937_64 split;    // which samples are held out
  double best_validation = std::numeric_limits<double>::infinity();
  std::unique_ptr<Client> reporter;      // rank 0: progress reports
  std::unique_ptr<Publisher> publisher;  // rank 0: model publishing
  std::ofstream csv, json;
  TrainerStatus status;
  Clock::time_point started = Clock::now();
  Clock::time_point last_print = Clock::now();
  std::string failure;  // this rank's reader error, shared through kFailed
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

  // Builds this rank's share of the step into samples and adds them to the memories. Returns
  // how many were built; throws TrainingError for a bad step (nothing is added then).
  std::int64_t take_samples(StreamStep& step) {
    const Samples rows = builder->build(step);
    if (rows.count == 0) return 0;
    memory.check(rows);
    validation.check(rows);
    const double fraction = config.train.validation_fraction;
    for (std::int64_t i = 0; i < rows.count; ++i) {
      if (fraction > 0 && std::uniform_real_distribution<double>(0, 1)(split) < fraction) {
        validation.add(rows, i);
      } else {
        memory.add(rows, i);
      }
    }
    return rows.count;
  }

  // ---- Training -----------------------------------------------------------------------------

  // One optimiser step over every rank's batch (a collective call on every rank).
  void train_batch(bool ready) {
    Samples batch;
    if (ready && memory.size() > 0) {
      batch = memory.draw(static_cast<std::size_t>(config.train.batch_size));
    }
    BatchLoss loss;
    try {
      loss = model->train_step(batch);
    } catch (const TrainingError& e) {
      throw TrainerError(e.what());
    }
    if (loss.samples == 0) return;
    ++status.optimizer_steps;
    status.samples_trained += loss.samples;
    status.train_loss = loss.loss;
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
    BatchLoss loss;
    try {
      loss = model->evaluate(validation.all());
    } catch (const TrainingError& e) {
      throw TrainerError(std::string("validation: ") + e.what());
    }
    if (loss.samples == 0) return;
    status.validation_loss = loss.loss;
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
    const Samples held = memory.all();
    if (held.count == 0) return c;
    c.count = static_cast<std::uint64_t>(held.count);
    c.input_dtype = held.input.dtype();
    c.input_shape.assign(held.input.shape().begin() + 1, held.input.shape().end());
    c.target_dtype = held.target.dtype();
    c.target_shape.assign(held.target.shape().begin() + 1, held.target.shape().end());
    c.inputs.assign(reinterpret_cast<const char*>(held.input.bytes().data()),
                    held.input.byte_size());
    c.targets.assign(reinterpret_cast<const char*>(held.target.bytes().data()),
                     held.target.byte_size());
    return c;
  }

  // Rank 0's checkpoint, which every rank reads (nullopt: none). Throws TrainerError for one
  // that cannot be read.
  std::optional<TrainerCheckpoint> read_checkpoint() const {
    try {
      return read_trainer_checkpoint(config.checkpoint.dir);
    } catch (const CheckpointError& e) {
      throw TrainerError(e.what());
    }
  }

  // Continues from checkpoint `c` (the model was loaded from it): the optimiser, the counters,
  // and this rank's replay memory when it belongs to that checkpoint. Returns a line saying what
  // was resumed.
  std::string resume(const TrainerCheckpoint& c) {
    const std::filesystem::path dir = config.checkpoint.dir;
    model->load_optimizer_state(c.optimizer, c.optimizer_steps);  // the learning rate as it was
    status.optimizer_steps = c.optimizer_steps;
    status.published_version = c.published_version;
    status.samples_seen = c.samples_seen;
    status.samples_trained = c.samples_trained;
    resumed_stream_step = status.stream_step = c.stream_step;
    published_at = checkpointed_at = c.optimizer_steps;
    std::string replay = "";
    if (config.checkpoint.replay) {
      std::optional<ReplayCheckpoint> r;
      try {
        r = read_replay_checkpoint(dir, collective.rank());
        if (r && r->optimizer_steps == c.optimizer_steps && r->count > 0) {
          const auto count = static_cast<std::int64_t>(r->count);
          std::vector<std::int64_t> in{count}, out{count};
          in.insert(in.end(), r->input_shape.begin(), r->input_shape.end());
          out.insert(out.end(), r->target_shape.begin(), r->target_shape.end());
          Samples rows;
          rows.input = Tensor::copy_of(r->input_dtype, r->inputs.data(), r->inputs.size(), in);
          rows.target =
              Tensor::copy_of(r->target_dtype, r->targets.data(), r->targets.size(), out);
          rows.count = count;
          memory.add(rows);
          replay = "; replay memory: " + std::to_string(memory.size()) + " samples";
        } else if (r) {
          replay = "; replay memory not restored: it belongs to another checkpoint";
        }
      } catch (const std::exception& e) {  // a bad file, or rows that do not fit their shapes
        replay = "; replay memory not restored: " + std::string(e.what());
      }
    }
    return "resumed from " + trainer_checkpoint_path(dir).string() + " at optimiser step " +
           std::to_string(c.optimizer_steps) + " (published version " +
           std::to_string(c.published_version) + ", stream step " +
           std::to_string(c.stream_step) + ")" + replay;
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
      PublishOptions publish;
      publish.keep_versions = config.publish.keep_versions;
      publish.published_before = status.published_version;
      publish.log = progress;
      publisher = std::make_unique<Publisher>(options, config.model.publish_as, publish);
    }
    publisher->publish(*model, {status.optimizer_steps, status.stream_step, status.train_loss});
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
  state_ = std::make_unique<State>(std::move(config), collective, progress);
  State& s = *state_;
  const std::optional<TrainerCheckpoint> checkpoint =
      s.config.checkpoint.dir.empty() ? std::nullopt : s.read_checkpoint();
  std::string resumed;
  if (s.config.train.options.loss == LossKind::kScript) {
    try {
      s.config.train.options.loss_module =
          read_input_file(s.config.model.loss, "loss module", kMaxArchiveBytes);
    } catch (const InputFileError& e) {
      throw TrainerError(e.what());
    }
  }
  try {
    s.builder = SampleBuilder::from_file(s.config.model.samples);
    // A checkpoint's model, or the model file as configured. Collective: every rank loads one,
    // and every rank gets rank 0's parameters.
    s.model = checkpoint ? Model::from_bytes(checkpoint->model, s.config.train.options, collective)
                         : Model::from_file(s.config.model.file, s.config.train.options, collective);
    if (checkpoint) {
      resumed = s.resume(*checkpoint);
    } else if (s.config.train.scale_learning_rate) {
      s.model->scale_learning_rate(collective.size());
    }
  } catch (const Error& e) {  // TrainingError, or a file that cannot be read
    throw TrainerError(e.what());
  }
  if (!resumed.empty()) s.print(resumed);
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
            } catch (const TrainingError& e) {
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
          std::to_string(s.status.train_loss) +
          (s.status.validation_loss >= 0
               ? " (validation " + std::to_string(s.status.validation_loss) + ")"
               : std::string()) +
          ", published version " + std::to_string(s.status.published_version));
  return s.status;
}

}  // namespace slipstream::train
