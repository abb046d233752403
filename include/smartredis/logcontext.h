// SmartRedis::LogContext: a named context for log lines that are not about a Client or DataSet.
// Part of Slipstream's SmartRedis compatibility layer (docs/smartredis.md). As SmartRedis's
// header, it may be included from C (where it declares nothing: C programs use c_logcontext.h).
#ifndef SMARTREDIS_LOGCONTEXT_H
#define SMARTREDIS_LOGCONTEXT_H

#ifdef __cplusplus
#include <string>

#include "srobject.h"

namespace SmartRedis {

/// A user-defined logging context: log_data / log_warning / log_error through it write lines
/// "<logging_name>@<UTC time>:<text>" (see logger.h). Copyable.
class LogContext : public SRObject {
 public:
  /// A context whose log lines carry `logging_name`; logs its creation at LLDebug, as
  /// SmartRedis does.
  explicit LogContext(const std::string& logging_name);
  ~LogContext() override = default;
};

}  // namespace SmartRedis

#endif  // __cplusplus
#endif  // SMARTREDIS_LOGCONTEXT_H
