// What online trainers report about themselves (SS.TRAIN.REPORT), for `slipstream train status`
// and INFO training. The server does not interpret the fields; it bounds them, since any client
// may report: names and fields are short, values at most 1 KiB, at most 64 fields per trainer and
// 256 trainers (the one reported least recently goes when a new one comes).
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace slipstream::server {

class TrainerReports {
 public:
  static constexpr std::size_t kMaxTrainers = 256;
  static constexpr std::size_t kMaxFields = 64;
  static constexpr std::size_t kMaxName = 256;
  static constexpr std::size_t kMaxField = 64;
  static constexpr std::size_t kMaxValue = 1024;

  using Fields = std::vector<std::pair<std::string, std::string>>;
  struct Report {
    std::string name;
    Fields fields;
    std::chrono::milliseconds age{0};  ///< since it was reported
  };

  /// Replaces trainer `name`'s report. Returns an error text (empty: stored) when a bound is
  /// exceeded; nothing is stored then.
  std::string put(std::string name, Fields fields);
  /// Every report (name order), or only `name`'s (empty when there is none).
  std::vector<Report> list(const std::string* name = nullptr) const;
  std::size_t size() const;

 private:
  using Clock = std::chrono::steady_clock;
  struct Entry {
    Fields fields;
    Clock::time_point updated;
  };
  mutable std::mutex mutex_;
  std::map<std::string, Entry, std::less<>> reports_;
};

}  // namespace slipstream::server
