// SmartRedis-compatible logging from C++: log_data / log_warning / log_error with a context (a
// name or an SRObject). Lines go to the file named by SR_LOG_FILE (appended; standard output
// when unset) as "<context>@<UTC time>:<text>", when their level is at most SR_LOG_LEVEL (QUIET,
// INFO, DEBUG or DEVELOPER; INFO when unset). Both variables are read once, at the first log
// call of the process. Writing is serialised between threads; a failure to write is ignored.
// Part of Slipstream's SmartRedis compatibility layer (docs/smartredis.md). Included from C (as
// SmartRedis's C logging example does), it gives c_logger.h's calls.
#ifndef SMARTREDIS_LOGGER_H
#define SMARTREDIS_LOGGER_H

#ifndef __cplusplus
#include "c_logger.h"
#else
#include <string>

#include "sr_enums.h"
#include "srobject.h"

namespace SmartRedis {

void log_data(const std::string& context, SRLoggingLevel level, const std::string& data);
void log_warning(const std::string& context, SRLoggingLevel level, const std::string& data);
void log_error(const std::string& context, SRLoggingLevel level, const std::string& data);
void log_data(const SRObject* context, SRLoggingLevel level, const std::string& data);
void log_warning(const SRObject* context, SRLoggingLevel level, const std::string& data);
void log_error(const SRObject* context, SRLoggingLevel level, const std::string& data);

}  // namespace SmartRedis

#endif  // __cplusplus
#endif  // SMARTREDIS_LOGGER_H
