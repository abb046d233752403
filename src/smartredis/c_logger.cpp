// SmartRedis's C logging calls (include/smartredis/c_logger.h) over the C++ layer's logger
// (SmartRedis::log_data / log_warning / log_error), with the context taken from a C handle.
#include "c_logger.h"

#include <string>

#include "c_common.hpp"
#include "logger.h"

using namespace slipstream::smartredis::c_api;

namespace {

using LogFunction = void (*)(const std::string&, SRLoggingLevel, const std::string&);

// Writes one line; a failure (no memory, a NULL text with a length) drops it silently, as the
// noexcept forms promise.
void log_line(LogFunction function, const char* context, std::size_t context_length,
              SRLoggingLevel level, const char* data, std::size_t data_length) noexcept {
  try {
    function(std::string(text(context, context_length, "context")), level,
             std::string(text(data, data_length, "data")));
  } catch (...) {
  }
}

void log_handle(LogFunction function, const void* context, SRLoggingLevel level, const char* data,
                std::size_t data_length) noexcept {
  const std::string* name = context != nullptr ? &handle_of(context)->log_context : nullptr;
  log_line(function, name != nullptr ? name->data() : nullptr, name != nullptr ? name->size() : 0,
           level, data, data_length);
}

// SmartRedis::log_* are overloaded (a name or an SRObject as context): these pick the first.
void data_line(const std::string& c, SRLoggingLevel l, const std::string& d) {
  SmartRedis::log_data(c, l, d);
}
void warning_line(const std::string& c, SRLoggingLevel l, const std::string& d) {
  SmartRedis::log_warning(c, l, d);
}
void error_line(const std::string& c, SRLoggingLevel l, const std::string& d) {
  SmartRedis::log_error(c, l, d);
}

}  // namespace

extern "C" {

void log_data_noexcept(const void* context, SRLoggingLevel level, const char* data,
                       size_t data_len) {
  log_handle(data_line, context, level, data, data_len);
}
void log_warning_noexcept(const void* context, SRLoggingLevel level, const char* data,
                          size_t data_len) {
  log_handle(warning_line, context, level, data, data_len);
}
void log_error_noexcept(const void* context, SRLoggingLevel level, const char* data,
                        size_t data_len) {
  log_handle(error_line, context, level, data, data_len);
}
void log_data_noexcept_string(const char* context, size_t context_len, SRLoggingLevel level,
                              const char* data, size_t data_len) {
  log_line(data_line, context, context_len, level, data, data_len);
}
void log_warning_noexcept_string(const char* context, size_t context_len, SRLoggingLevel level,
                                 const char* data, size_t data_len) {
  log_line(warning_line, context, context_len, level, data, data_len);
}
void log_error_noexcept_string(const char* context, size_t context_len, SRLoggingLevel level,
                               const char* data, size_t data_len) {
  log_line(error_line, context, context_len, level, data, data_len);
}

}  // extern "C"
