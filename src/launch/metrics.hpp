// What the launcher records while an experiment runs, for the report (docs/launcher.md, "The
// report"): every sampling interval it asks each server shard for INFO, the trainers' reports
// (SS.TRAIN.STATUS) and the streams those trainers read (SS.STREAM.INFO), and appends rows to
// RUN_DIR/metrics/{servers,models,streams,trainers}.csv. Rates (operations, bytes) and model
// calls (INFO's latency histogram of model runs) are differences between two samples.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace slipstream {
class Client;
}

namespace slipstream::launch {

class MetricsRecorder {
 public:
  struct Shard {
    std::string server;   ///< the server group
    std::string name;     ///< the shard's process name
    std::string address;  ///< host:port
  };
  /// Opens the four CSV files under `dir` (created; folder and files owner-only) and writes their
  /// headers. The shards are asked with `password` (AUTH) when given.
  MetricsRecorder(const std::string& dir, std::vector<Shard> shards,
                  std::optional<std::string> password = std::nullopt);
  ~MetricsRecorder();
  MetricsRecorder(const MetricsRecorder&) = delete;
  MetricsRecorder& operator=(const MetricsRecorder&) = delete;

  /// One sample at `time_s` seconds since the launcher started. A shard that does not answer
  /// is skipped this time (the launcher's heartbeat decides whether it is dead).
  void sample(double time_s);

  /// The latest figures in a line: each shard's operations per second and memory, each
  /// trainer's state, loss and published version ("" before the first sample).
  std::string summary() const;

 private:
  struct Previous {
    double time_s = -1;
    std::int64_t commands = 0, input = 0, output = 0;
    std::vector<std::int64_t> latency_counts;  // INFO's model_latency_us buckets
  };

  Client* client(std::size_t shard);
  void sample_shard(std::size_t shard, double time_s);

  double servers_rate_ = -1;  // the shard being sampled: its operations per second
  std::map<std::string, std::string> latest_;  // shard or trainer -> its part of summary()
  std::string dir_;
  std::vector<Shard> shards_;
  std::optional<std::string> password_;
  std::vector<std::unique_ptr<Client>> clients_;
  std::vector<Previous> previous_;
  struct Files;
  std::unique_ptr<Files> files_;
};

}  // namespace slipstream::launch
