/* SmartRedis 0.6's C logging calls (log_data, log_warning, log_error and their _string forms)
 * over the library's logger: lines go to SR_LOG_FILE (standard output when unset) when their
 * level is at most SR_LOG_LEVEL, as "<context>@<UTC time>:<text>". The context of the first
 * forms is a client, dataset or logging-context handle of c_client.h / c_dataset.h /
 * c_logcontext.h (its logger name, the dataset's name, the context's name); the _string forms
 * take the context as text. They never fail: a line that
 * cannot be written is dropped. */
#ifndef SMARTREDIS_C_LOGGER_H
#define SMARTREDIS_C_LOGGER_H

#include <stddef.h>

#include "sr_enums.h"

#ifdef __cplusplus
extern "C" {
#endif

/* As in SmartRedis, C programs call the exception-free variants by the short names. */
#ifndef __cplusplus
#define log_data log_data_noexcept
#define log_warning log_warning_noexcept
#define log_error log_error_noexcept
#define log_data_string log_data_noexcept_string
#define log_warning_string log_warning_noexcept_string
#define log_error_string log_error_noexcept_string
#endif

void log_data_noexcept(const void* context, SRLoggingLevel level, const char* data,
                       size_t data_len);
void log_warning_noexcept(const void* context, SRLoggingLevel level, const char* data,
                          size_t data_len);
void log_error_noexcept(const void* context, SRLoggingLevel level, const char* data,
                        size_t data_len);
void log_data_noexcept_string(const char* context, size_t context_len, SRLoggingLevel level,
                              const char* data, size_t data_len);
void log_warning_noexcept_string(const char* context, size_t context_len, SRLoggingLevel level,
                                 const char* data, size_t data_len);
void log_error_noexcept_string(const char* context, size_t context_len, SRLoggingLevel level,
                               const char* data, size_t data_len);

#ifdef __cplusplus
}
#endif

#endif /* SMARTREDIS_C_LOGGER_H */
