// SmartRedis::LogContext: a named context for log lines that are not about a Client or DataSet.
// Part of Slipstream's SmartRedis compatibility layer (docs/smartredis.md).
#ifndef SMARTREDIS_LOGCONTEXT_H
#define SMARTREDIS_LOGCONTEXT_H

#ifndef __cplusplus
#error "C programs include c_logcontext.h, not the C++ header logcontext.h"
#endif

#include <string>

#include "srobject.h"

namespace SmartRedis {

class LogContext : public SRObject {
 public:
  explicit LogContext(const std::string& context) : SRObject(context) {}
};

}  // namespace SmartRedis

#endif  // SMARTREDIS_LOGCONTEXT_H
