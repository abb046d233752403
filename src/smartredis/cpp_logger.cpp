// SmartRedis-style logging: one process-wide sink configured from SR_LOG_FILE and SR_LOG_LEVEL
// at first use; SRObject, LogContext and the free log_* functions write through it.
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <mutex>

#include "logcontext.h"
#include "logger.h"
#include "sr_environment.hpp"
#include "srobject.h"

namespace slipstream::smartredis {

namespace {

class LogSink {
 public:
  LogSink() : settings_(log_settings_from_environment()) {
    if (!settings_.file.empty()) {
      file_.open(settings_.file, std::ios::app);
      if (!file_) {
        std::cerr << "SmartRedis compatibility layer: cannot open SR_LOG_FILE '" << settings_.file
                  << "' for appending; logging to standard output\n";
      }
    }
    if (!settings_.problem.empty()) write("SmartRedis", "WARNING: " + settings_.problem);
  }

  void log(std::string_view context, SRLoggingLevel level, std::string_view text) {
    if (level == LLInvalid || level > settings_.level || settings_.level == LLQuiet) return;
    write(context, text);
  }

 private:
  void write(std::string_view context, std::string_view text) {
    std::lock_guard lock(mutex_);
    std::ostream& out = file_.is_open() ? static_cast<std::ostream&>(file_) : std::cout;
    out << context << '@' << timestamp() << ':' << text << '\n';
    out.flush();
  }

  static std::string timestamp() {
    auto now = std::chrono::system_clock::now();
    std::time_t seconds = std::chrono::system_clock::to_time_t(now);
    auto micros = std::chrono::duration_cast<std::chrono::microseconds>(
                      now.time_since_epoch()).count() % 1000000;
    std::tm utc{};
    gmtime_r(&seconds, &utc);
    char text[48];
    std::size_t length = std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S", &utc);
    std::snprintf(text + length, sizeof(text) - length, ".%06lldZ",
                  static_cast<long long>(micros));
    return text;
  }

  LogSettings settings_;
  std::mutex mutex_;
  std::ofstream file_;
};

void write_log(std::string_view context, SRLoggingLevel level, std::string_view text) noexcept {
  try {
    static LogSink sink;
    sink.log(context, level, text);
  } catch (...) {
    // Logging never fails a call.
  }
}

}  // namespace

}  // namespace slipstream::smartredis

namespace SmartRedis {

using slipstream::smartredis::write_log;

SRObject::SRObject(const std::string& logging_name) : logging_name_(logging_name) {}

void SRObject::log_data(SRLoggingLevel level, const std::string& data) const {
  write_log(get_context(), level, data);
}
void SRObject::log_warning(SRLoggingLevel level, const std::string& data) const {
  write_log(get_context(), level, "WARNING: " + data);
}
void SRObject::log_error(SRLoggingLevel level, const std::string& data) const {
  write_log(get_context(), level, "ERROR: " + data);
}

LogContext::LogContext(const std::string& logging_name) : SRObject(logging_name) {
  log_data(LLDebug, "New LogContext created");
}

void log_data(const std::string& context, SRLoggingLevel level, const std::string& data) {
  write_log(context, level, data);
}
void log_warning(const std::string& context, SRLoggingLevel level, const std::string& data) {
  write_log(context, level, "WARNING: " + data);
}
void log_error(const std::string& context, SRLoggingLevel level, const std::string& data) {
  write_log(context, level, "ERROR: " + data);
}
void log_data(const SRObject* context, SRLoggingLevel level, const std::string& data) {
  if (context != nullptr) context->log_data(level, data);
}
void log_warning(const SRObject* context, SRLoggingLevel level, const std::string& data) {
  if (context != nullptr) context->log_warning(level, data);
}
void log_error(const SRObject* context, SRLoggingLevel level, const std::string& data) {
  if (context != nullptr) context->log_error(level, data);
}

}  // namespace SmartRedis
