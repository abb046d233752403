// TrainerReports: see trainer_reports.hpp.
#include "server/train/trainer_reports.hpp"

#include <algorithm>

namespace slipstream::server {

std::string TrainerReports::put(std::string name, Fields fields) {
  if (name.empty() || name.size() > kMaxName) {
    return "trainer name must be 1 to " + std::to_string(kMaxName) + " bytes";
  }
  if (fields.size() > kMaxFields) {
    return "at most " + std::to_string(kMaxFields) + " fields per trainer";
  }
  for (const auto& [field, value] : fields) {
    if (field.empty() || field.size() > kMaxField) {
      return "field names must be 1 to " + std::to_string(kMaxField) + " bytes";
    }
    if (value.size() > kMaxValue) {
      return "field " + field + ": values must be at most " + std::to_string(kMaxValue) + " bytes";
    }
  }
  std::lock_guard lock(mutex_);
  auto it = reports_.find(name);
  if (it == reports_.end() && reports_.size() >= kMaxTrainers) {
    auto oldest = std::min_element(reports_.begin(), reports_.end(), [](const auto& a, const auto& b) {
      return a.second.updated < b.second.updated;
    });
    reports_.erase(oldest);
  }
  reports_[std::move(name)] = Entry{std::move(fields), Clock::now()};
  return {};
}

std::vector<TrainerReports::Report> TrainerReports::list(const std::string* name) const {
  std::lock_guard lock(mutex_);
  std::vector<Report> out;
  const auto now = Clock::now();
  for (const auto& [key, entry] : reports_) {
    if (name != nullptr && key != *name) continue;
    out.push_back(Report{key, entry.fields,
                         std::chrono::duration_cast<std::chrono::milliseconds>(now - entry.updated)});
  }
  return out;
}

std::size_t TrainerReports::size() const {
  std::lock_guard lock(mutex_);
  return reports_.size();
}

}  // namespace slipstream::server
