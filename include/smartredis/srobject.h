// SmartRedis::SRObject: the base of the objects that can be a logging context (Client, DataSet,
// LogContext). Part of Slipstream's SmartRedis compatibility layer (docs/smartredis.md). As
// SmartRedis's header, it may be included from C, where it declares nothing.
#ifndef SMARTREDIS_OBJECT_H
#define SMARTREDIS_OBJECT_H

#ifdef __cplusplus
#include <string>

#include "sr_enums.h"

namespace SmartRedis {

/// An object whose name prefixes the log lines written through it (see logger.h for where they
/// go). Copyable.
class SRObject {
 public:
  explicit SRObject(const std::string& logging_name);
  virtual ~SRObject() = default;

  /// Writes `data` to the log when `level` is at most SR_LOG_LEVEL. Never throws.
  virtual void log_data(SRLoggingLevel level, const std::string& data) const;
  /// log_data with "WARNING: " / "ERROR: " before the text.
  virtual void log_warning(SRLoggingLevel level, const std::string& data) const;
  virtual void log_error(SRLoggingLevel level, const std::string& data) const;
  /// The name log lines carry.
  virtual std::string get_context() const { return logging_name_; }

 private:
  std::string logging_name_;
};

}  // namespace SmartRedis

#endif  // __cplusplus
#endif  // SMARTREDIS_OBJECT_H
