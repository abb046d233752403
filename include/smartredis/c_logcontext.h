/* SmartRedis 0.6's C logging context (SmartRedisCLogContext, DeallocateLogContext): a named
 * context for c_logger.h's log_data / log_warning / log_error, for lines that are about neither a
 * client nor a dataset. Part of Slipstream's SmartRedis compatibility layer (docs/smartredis.md).
 */
#ifndef SMARTREDIS_C_LOGCONTEXT_H
#define SMARTREDIS_C_LOGCONTEXT_H

#include <stddef.h>

#include "sr_enums.h"
#include "srexception.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A new logging context whose lines carry `context` (context_length bytes, no NUL needed) in
 *  *new_logcontext; pass it as the `context` of c_logger.h's calls. SRParameterError if
 *  new_logcontext is NULL, or context is NULL with a nonzero length. */
SRError SmartRedisCLogContext(const char* context, const size_t context_length,
                              void** new_logcontext);

/** Frees the context and sets *logcontext to NULL (NULL is a no-op). SRParameterError if
 *  *logcontext is a client or dataset handle. */
SRError DeallocateLogContext(void** logcontext);

#ifdef __cplusplus
}
#endif

#endif /* SMARTREDIS_C_LOGCONTEXT_H */
