// The model executor: a pool of threads, separate from the I/O threads, that runs model and
// script executions and gathers concurrent executions of a batching model into one run.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ml/backend.hpp"

namespace slipstream::ml {

/// RedisAI's BATCHSIZE / MINBATCHSIZE / MINBATCHTIMEOUT.
struct BatchSettings {
  std::size_t batch_size = 0;      ///< 0: no batching
  std::size_t min_batch_size = 0;  ///< wait for at least this many rows (0: run what is queued)
  std::chrono::milliseconds min_batch_timeout{0};  ///< ... but no longer than this (0: forever)
};

/// Per-model counters for INFO and AI.INFO. Relaxed atomics: figures, not synchronisation.
struct ExecutionStats {
  std::atomic<std::uint64_t> calls{0};          ///< executions requested (one per caller)
  std::atomic<std::uint64_t> samples{0};        ///< rows (dimension 0) processed
  std::atomic<std::uint64_t> errors{0};
  std::atomic<std::uint64_t> runs{0};           ///< backend runs (a batch counts once)
  std::atomic<std::uint64_t> batches{0};        ///< runs that served more than one caller
  std::atomic<std::uint64_t> batched_calls{0};  ///< callers served by those runs
  std::atomic<std::uint64_t> run_time_us{0};
  std::atomic<std::uint64_t> queue_wait_us{0};
  void reset();
};

/// How long model runs took from the caller's request to the result (queue wait, batching and
/// the run), over the server's life, counted in buckets of powers of two microseconds: bucket k
/// holds latencies up to kFirstBoundUs << k, the last one all the longer ones. Relaxed atomics.
struct LatencyHistogram {
  static constexpr std::uint64_t kFirstBoundUs = 16;
  static constexpr std::size_t kBuckets = 22;  // up to 16 us << 20 (16.8 s), then the rest
  std::array<std::atomic<std::uint64_t>, kBuckets> counts{};
  void add(std::uint64_t micros) noexcept;
  /// "16=c,32=c,...,inf=c": each bucket's upper bound in microseconds and its count.
  std::string text() const;
};

/// One execution request. `inputs` borrow bytes kept alive by `keep_alive` until `done` runs.
struct Execution {
  std::shared_ptr<Model> model;    ///< set for a model run
  std::shared_ptr<Script> script;  ///< ... or for a script call
  std::string function;            ///< script function
  std::vector<std::string> keys, args;  ///< script KEYS and ARGS
  BatchSettings batching;
  std::vector<TensorView> inputs;
  std::vector<std::shared_ptr<const void>> keep_alive;
  std::shared_ptr<ExecutionStats> stats;
  /// The caller's own deadline (its TIMEOUT): queued past it, the execution is dropped by the
  /// caller's timer; running past it, a backend that can stop runs stops it (Status::timeout).
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  /// Called once on an executor thread: the outputs, or a failure. Not called if cancelled.
  std::function<void(Status, std::vector<OwnedTensor>)> done;

  /// Marks the execution cancelled if it has not started yet; returns true if it was (then
  /// `done` will not be called). Thread-safe. Prefer Executor::cancel, which also wakes a worker
  /// that holds the execution while gathering a batch.
  bool cancel() noexcept;

  enum State : int { kQueued, kRunning, kCancelled };
  std::atomic<int> state{kQueued};
  std::chrono::steady_clock::time_point enqueued;
};

class Executor {
 public:
  /// Starts `threads` worker threads (at least 1). Every run is given a deadline `run_limit`
  /// after it starts (zero: none), or the caller's own deadline if that comes first; a batch
  /// shared by several callers ends at the latest of theirs.
  explicit Executor(unsigned threads,
                    std::chrono::milliseconds run_limit = std::chrono::milliseconds::zero());
  /// Stops the workers; queued executions fail with "server shutting down".
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  /// Queues an execution. Thread-safe; never blocks on the run itself.
  void submit(std::shared_ptr<Execution> execution);
  /// Cancels `execution` if it has not started running (it may be queued or waiting in a batch
  /// being gathered); returns true if it was cancelled. Thread-safe.
  bool cancel(Execution& execution);
  /// What a run's outputs may take at most, asked when each run starts (the server: what
  /// --maxmemory leaves free). Set before the first submit.
  void set_output_budget(std::function<std::uint64_t()> budget) { output_budget_ = std::move(budget); }
  /// Runs `task` on a worker (model loading and other slow work kept off the I/O threads).
  void post(std::function<void()> task);
  unsigned threads() const noexcept { return static_cast<unsigned>(workers_.size()); }
  std::size_t queued() const;
  /// Model runs' latencies since the executor started (INFO models).
  const LatencyHistogram& latency() const noexcept { return latency_; }

 private:
  struct Item {
    std::shared_ptr<Execution> execution;  // or
    std::function<void()> task;
  };
  void work();
  // Collects queued executions that can share a run with the batch's first (mutex_ held). Drops
  // members cancelled meanwhile; the batch may come back empty.
  void gather_batch(std::vector<std::shared_ptr<Execution>>& batch,
                    std::unique_lock<std::mutex>& lock);
  // Adds `execution` to a batch another thread is gathering for the same model, if one has room
  // (mutex_ held); true when it did. Without this, two threads could each gather part of the
  // requests, each short of MINBATCHSIZE, and wait for each other (forever without a timeout).
  bool join_gathering(std::shared_ptr<Execution>& execution);
  void run_single(Execution& execution);
  void run_batch(std::vector<std::shared_ptr<Execution>>& batch, std::size_t rows);
  RunLimits limits_from(std::chrono::steady_clock::time_point start,
                        std::chrono::steady_clock::time_point caller_deadline) const;

  mutable std::mutex mutex_;
  std::condition_variable wake_;         // idle threads: something was queued
  std::condition_variable gather_wake_;  // threads gathering a batch: queued or cancelled
  unsigned gathering_ = 0;               // threads waiting on gather_wake_, guarded by mutex_
  // The batches being gathered (join_gathering), guarded by mutex_.
  std::vector<std::vector<std::shared_ptr<Execution>>*> gathering_batches_;
  std::deque<Item> queue_;  // guarded by mutex_
  bool stopping_ = false;   // guarded by mutex_
  std::vector<std::thread> workers_;
  const std::chrono::milliseconds run_limit_;
  std::function<std::uint64_t()> output_budget_;
  LatencyHistogram latency_;

  // Hands the outcome to the caller (counting errors, and a model run's latency).
  void finish(Execution& e, Status status, std::vector<OwnedTensor> outputs);
};

}  // namespace slipstream::ml
