// The executor's batching with several worker threads: runs of one model that two threads take
// while a batch is being gathered end up in that one batch. Before, each thread gathered its own
// and, each short of MINBATCHSIZE, both waited: forever without MINBATCHTIMEOUT.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "ml/executor.hpp"

namespace slipstream::ml {
namespace {

using namespace std::chrono_literals;

// A model that returns its input and records the rows of every run.
class EchoModel final : public Model {
 public:
  Status run(std::span<const TensorView> inputs, std::vector<OwnedTensor>& outputs,
             const RunLimits& /*limits*/) override {
    const TensorView& x = inputs[0];
    OwnedTensor out;
    out.dtype = x.dtype;
    out.shape.assign(x.shape.begin(), x.shape.end());
    out.data = Buffer::copy_of(std::string_view(static_cast<const char*>(x.data), x.bytes));
    outputs.push_back(std::move(out));
    std::lock_guard lock(mutex_);
    rows_.push_back(x.shape[0]);
    return Status::success();
  }
  const Device& device() const override { return device_; }
  std::vector<std::int64_t> rows() {
    std::lock_guard lock(mutex_);
    return rows_;
  }

 private:
  Device device_;
  std::mutex mutex_;
  std::vector<std::int64_t> rows_;
};

// Two rows of one float each.
struct Request {
  float values[2];
  std::int64_t shape[2] = {2, 1};
};

TEST(ExecutorBatching, RunsTakenByTwoThreadsMeetInOneBatch) {
  // Repeated: which thread takes the second run is a race; each round must end in one batch.
  for (int round = 0; round < 20; ++round) {
    Executor executor(2);
    auto model = std::make_shared<EchoModel>();
    std::mutex mutex;
    std::condition_variable done_cv;
    int done = 0;
    std::vector<Request> requests(2);
    std::vector<std::shared_ptr<Execution>> executions;
    for (int k = 0; k < 2; ++k) {
      requests[k].values[0] = static_cast<float>(2 * k);
      requests[k].values[1] = static_cast<float>(2 * k + 1);
      auto e = std::make_shared<Execution>();
      e->model = model;
      e->batching.batch_size = 4;
      e->batching.min_batch_size = 4;  // both runs, and no timeout: wait for them
      e->inputs.push_back({DType::kFloat32, requests[k].shape, requests[k].values,
                           sizeof requests[k].values});
      e->done = [&, k](Status status, std::vector<OwnedTensor> outputs) {
        ASSERT_TRUE(status.ok) << status.message;
        ASSERT_EQ(outputs.size(), 1u);
        float got[2];
        std::memcpy(got, outputs[0].data.data(), sizeof got);
        EXPECT_EQ(got[0], requests[k].values[0]);  // each caller gets its own rows back
        EXPECT_EQ(got[1], requests[k].values[1]);
        std::lock_guard lock(mutex);
        ++done;
        done_cv.notify_all();
      };
      executions.push_back(e);
    }
    executor.submit(executions[0]);
    // The first is taken (one thread gathers its batch) before the second comes.
    for (int i = 0; i < 10000 && executor.queued() > 0; ++i) std::this_thread::sleep_for(1ms);
    executor.submit(executions[1]);
    std::unique_lock lock(mutex);
    ASSERT_TRUE(done_cv.wait_for(lock, 60s, [&] { return done == 2; }))
        << "round " << round << ": the two runs waited for each other in two batches";
    EXPECT_EQ(model->rows(), std::vector<std::int64_t>{4}) << "round " << round;
  }
}

}  // namespace
}  // namespace slipstream::ml
