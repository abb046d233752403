// Model executor and cross-caller batching; see executor.hpp.
#include "ml/executor.hpp"

#include <cstring>

namespace slipstream::ml {
namespace {

using Clock = std::chrono::steady_clock;

std::uint64_t micros_since(Clock::time_point start) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count());
}

// Rows of dimension 0 shared by every input, or 0 when the inputs cannot be batched.
std::size_t batch_rows(const Execution& e) {
  if (e.inputs.empty()) return 0;
  std::size_t rows = 0;
  for (const auto& input : e.inputs) {
    if (input.shape.empty() || input.shape[0] <= 0) return 0;
    auto r = static_cast<std::size_t>(input.shape[0]);
    if (rows != 0 && r != rows) return 0;
    rows = r;
  }
  return rows;
}

// Two executions can share a run when they call the same model version with inputs that differ
// only in dimension 0.
bool compatible(const Execution& a, const Execution& b) {
  if (!a.model || a.model != b.model || a.inputs.size() != b.inputs.size()) return false;
  for (std::size_t i = 0; i < a.inputs.size(); ++i) {
    const TensorView& x = a.inputs[i];
    const TensorView& y = b.inputs[i];
    if (x.dtype != y.dtype || x.shape.size() != y.shape.size()) return false;
    for (std::size_t d = 1; d < x.shape.size(); ++d) {
      if (x.shape[d] != y.shape[d]) return false;
    }
  }
  return true;
}

}  // namespace

void LatencyHistogram::add(std::uint64_t micros) noexcept {
  std::size_t k = 0;
  while (k + 1 < kBuckets && micros > (kFirstBoundUs << k)) ++k;
  counts[k].fetch_add(1, std::memory_order_relaxed);
}

std::string LatencyHistogram::text() const {
  std::string out;
  for (std::size_t k = 0; k < kBuckets; ++k) {
    out += (k ? "," : "") +
           (k + 1 < kBuckets ? std::to_string(kFirstBoundUs << k) : std::string("inf")) + "=" +
           std::to_string(counts[k].load(std::memory_order_relaxed));
  }
  return out;
}

void Executor::finish(Execution& e, Status status, std::vector<OwnedTensor> outputs) {
  if (!status.ok && e.stats) e.stats->errors.fetch_add(1, std::memory_order_relaxed);
  if (e.model) {
    latency_.add(static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - e.enqueued).count()));
  }
  try {
    e.done(std::move(status), std::move(outputs));
  } catch (...) {
    // A completion must not take a worker down; the caller's reply is its own concern.
  }
}

void ExecutionStats::reset() {
  for (auto* counter : {&calls, &samples, &errors, &runs, &batches, &batched_calls, &run_time_us,
                        &queue_wait_us}) {
    counter->store(0);
  }
}

bool Execution::cancel() noexcept {
  int expected = kQueued;
  return state.compare_exchange_strong(expected, kCancelled);
}

Executor::Executor(unsigned threads, std::chrono::milliseconds run_limit) : run_limit_(run_limit) {
  threads = std::max(1u, threads);
  for (unsigned i = 0; i < threads; ++i) workers_.emplace_back([this] { work(); });
}

Executor::~Executor() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  gather_wake_.notify_all();
  for (auto& worker : workers_) worker.join();
  for (auto& item : queue_) {
    if (item.execution && item.execution->cancel()) {
      finish(*item.execution, Status::failure("server shutting down"), {});
    }
  }
}

void Executor::submit(std::shared_ptr<Execution> execution) {
  execution->enqueued = Clock::now();
  if (execution->stats) {
    execution->stats->calls.fetch_add(1, std::memory_order_relaxed);
  }
  bool gathering = false;
  {
    std::lock_guard lock(mutex_);
    queue_.push_back({std::move(execution), nullptr});
    gathering = gathering_ > 0;
  }
  // One idle thread takes it: waking them all costs every other one a wake-up and a sleep for
  // nothing, on the path of every single run.
  wake_.notify_one();
  // A thread gathering a batch may be waiting for exactly this one.
  if (gathering) gather_wake_.notify_all();
}

void Executor::post(std::function<void()> task) {
  {
    std::lock_guard lock(mutex_);
    queue_.push_back({nullptr, std::move(task)});
  }
  wake_.notify_one();
}

std::size_t Executor::queued() const {
  std::lock_guard lock(mutex_);
  return queue_.size();
}

bool Executor::cancel(Execution& execution) {
  if (!execution.cancel()) return false;
  { std::lock_guard lock(mutex_); }  // a gatherer is either waiting or will see the state
  gather_wake_.notify_all();  // idle threads skip cancelled executions when they take them
  return true;
}

namespace {

bool cancelled(const std::shared_ptr<Execution>& e) {
  return e->state.load() == Execution::kCancelled;
}

std::size_t total_rows(const std::vector<std::shared_ptr<Execution>>& batch) {
  std::size_t rows = 0;
  for (const auto& e : batch) rows += batch_rows(*e);
  return rows;
}

}  // namespace

bool Executor::join_gathering(std::shared_ptr<Execution>& execution) {
  if (!execution->model) return false;
  for (std::vector<std::shared_ptr<Execution>>* batch : gathering_batches_) {
    if (batch->empty()) continue;
    const Execution& first = *batch->front();
    if (batch_rows(*execution) > 0 && compatible(first, *execution) &&
        total_rows(*batch) + batch_rows(*execution) <= first.batching.batch_size) {
      batch->push_back(std::move(execution));
      gather_wake_.notify_all();
      return true;
    }
  }
  return false;
}

// Why members stay kQueued while gathering: a caller's TIMEOUT must still be able to drop a run
// that is only waiting for others to fill its batch. They are claimed (kRunning) just before the
// run, and any cancelled meanwhile are left out.
void Executor::gather_batch(std::vector<std::shared_ptr<Execution>>& batch,
                            std::unique_lock<std::mutex>& lock) {
  // Other threads add the runs they take for this model to this batch (join_gathering).
  gathering_batches_.push_back(&batch);
  struct Unregister {
    std::vector<std::vector<std::shared_ptr<Execution>>*>& batches;
    std::vector<std::shared_ptr<Execution>>* batch;
    ~Unregister() { std::erase(batches, batch); }
  } unregister{gathering_batches_, &batch};
  while (true) {
    std::erase_if(batch, cancelled);
    if (batch.empty()) return;
    const Execution& first = *batch.front();
    const BatchSettings& settings = first.batching;
    std::size_t rows = total_rows(batch);
    for (auto it = queue_.begin(); it != queue_.end() && rows < settings.batch_size;) {
      Execution* candidate = it->execution.get();
      if (candidate && candidate->state.load() == Execution::kCancelled) {
        it = queue_.erase(it);
        continue;
      }
      std::size_t r = candidate ? batch_rows(*candidate) : 0;
      if (r > 0 && rows + r <= settings.batch_size && compatible(first, *candidate)) {
        batch.push_back(std::move(it->execution));
        rows += r;
        it = queue_.erase(it);
      } else {
        ++it;
      }
    }
    if (rows >= settings.batch_size || stopping_) return;
    if (settings.min_batch_size == 0 || rows >= settings.min_batch_size) return;
    if (settings.min_batch_timeout.count() > 0) {
      const auto deadline = first.enqueued + settings.min_batch_timeout;
      if (Clock::now() >= deadline) return;
      ++gathering_;
      gather_wake_.wait_until(lock, deadline);
      --gathering_;
    } else {
      ++gathering_;
      gather_wake_.wait(lock);
      --gathering_;
    }
  }
}

void Executor::work() {
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    Item item = std::move(queue_.front());
    queue_.pop_front();
    if (item.task) {
      lock.unlock();
      item.task();
      lock.lock();
      continue;
    }
    if (cancelled(item.execution)) continue;
    if (join_gathering(item.execution)) continue;
    std::vector<std::shared_ptr<Execution>> batch{std::move(item.execution)};
    const Execution& first = *batch.front();
    if (first.model && first.batching.batch_size > 0 && batch_rows(first) > 0) {
      gather_batch(batch, lock);
    }
    // Claim the members; one cancelled at the last moment is left out.
    std::erase_if(batch, [](const std::shared_ptr<Execution>& e) {
      int expected = Execution::kQueued;
      return !e->state.compare_exchange_strong(expected, Execution::kRunning);
    });
    lock.unlock();
    if (batch.size() == 1) {
      run_single(*batch.front());
    } else if (!batch.empty()) {
      run_batch(batch, total_rows(batch));
    }
    batch.clear();  // release inputs before sleeping again
    lock.lock();
  }
}

RunLimits Executor::limits_from(Clock::time_point start, Clock::time_point caller_deadline) const {
  RunLimits limits;
  limits.deadline = caller_deadline;
  if (run_limit_.count() > 0) limits.deadline = std::min(limits.deadline, start + run_limit_);
  if (output_budget_) limits.max_output_bytes = output_budget_();
  return limits;
}

void Executor::run_single(Execution& e) {
  auto start = Clock::now();
  if (e.stats) {
    e.stats->queue_wait_us.fetch_add(std::chrono::duration_cast<std::chrono::microseconds>(
                                         start - e.enqueued).count(),
                                     std::memory_order_relaxed);
  }
  std::vector<OwnedTensor> outputs;
  const RunLimits limits = limits_from(start, e.deadline);
  Status status = e.model ? e.model->run(e.inputs, outputs, limits)
                          : e.script->run(e.function, e.inputs, e.keys, e.args, outputs, limits);
  if (e.stats) {
    e.stats->run_time_us.fetch_add(micros_since(start), std::memory_order_relaxed);
    e.stats->runs.fetch_add(1, std::memory_order_relaxed);
    e.stats->samples.fetch_add(batch_rows(e), std::memory_order_relaxed);
  }
  if (!status.ok) outputs.clear();
  finish(e, std::move(status), std::move(outputs));
}

// Why copy into one buffer: the backend takes one tensor per input, so the callers' rows must be
// contiguous. The copy is small next to the run it saves (one run instead of N).
void Executor::run_batch(std::vector<std::shared_ptr<Execution>>& batch, std::size_t rows) {
  auto start = Clock::now();
  const Execution& first = *batch.front();
  std::vector<Buffer> joined;
  std::vector<std::vector<std::int64_t>> shapes;
  std::vector<TensorView> inputs;
  for (std::size_t i = 0; i < first.inputs.size(); ++i) {
    std::size_t total = 0;
    for (const auto& e : batch) total += e->inputs[i].bytes;
    Buffer buffer = Buffer::uninitialized(total);
    std::size_t offset = 0;
    for (const auto& e : batch) {
      if (e->inputs[i].bytes > 0) {
        std::memcpy(buffer.data() + offset, e->inputs[i].data, e->inputs[i].bytes);
      }
      offset += e->inputs[i].bytes;
    }
    std::vector<std::int64_t> shape(first.inputs[i].shape.begin(), first.inputs[i].shape.end());
    shape[0] = static_cast<std::int64_t>(rows);
    joined.push_back(std::move(buffer));
    shapes.push_back(std::move(shape));
  }
  for (std::size_t i = 0; i < joined.size(); ++i) {
    inputs.push_back({first.inputs[i].dtype, shapes[i], joined[i].data(), joined[i].size()});
  }
  std::shared_ptr<ExecutionStats> stats = first.stats;
  if (stats) {
    for (const auto& e : batch) {
      stats->queue_wait_us.fetch_add(std::chrono::duration_cast<std::chrono::microseconds>(
                                         start - e->enqueued).count(),
                                     std::memory_order_relaxed);
    }
  }
  // One caller's short TIMEOUT must not stop a run that others still wait for.
  Clock::time_point latest = Clock::time_point::min();
  for (const auto& e : batch) latest = std::max(latest, e->deadline);
  std::vector<OwnedTensor> outputs;
  Status status = first.model->run(inputs, outputs, limits_from(start, latest));
  if (stats) {
    stats->run_time_us.fetch_add(micros_since(start), std::memory_order_relaxed);
    stats->runs.fetch_add(1, std::memory_order_relaxed);
    stats->batches.fetch_add(1, std::memory_order_relaxed);
    stats->batched_calls.fetch_add(batch.size(), std::memory_order_relaxed);
    stats->samples.fetch_add(rows, std::memory_order_relaxed);
  }
  if (status.ok) {
    for (const auto& output : outputs) {
      if (output.shape.empty() || output.shape[0] != static_cast<std::int64_t>(rows)) {
        status = Status::failure(
            "a batched run returned an output whose first dimension is not the batch size (" +
            std::to_string(rows) + "): the model cannot be batched; store it without BATCHSIZE");
        break;
      }
    }
  }
  if (!status.ok) {
    for (auto& e : batch) finish(*e, status, {});
    return;
  }
  // Split every output back by each caller's rows.
  std::size_t row_offset = 0;
  for (auto& e : batch) {
    const std::size_t r = batch_rows(*e);
    std::vector<OwnedTensor> mine;
    for (const auto& output : outputs) {
      const std::size_t row_bytes = output.data.size() / rows;
      OwnedTensor part{output.dtype, output.shape,
                       Buffer::copy_of(output.data.view().substr(row_offset * row_bytes,
                                                                 r * row_bytes))};
      part.shape[0] = static_cast<std::int64_t>(r);
      mine.push_back(std::move(part));
    }
    row_offset += r;
    finish(*e, Status::success(), std::move(mine));
  }
}

}  // namespace slipstream::ml
