// SmartRedis 0.6's C logging context (include/smartredis/c_logcontext.h): a handle holding a name
// that c_logger.cpp's log_* calls take as the context of their lines.
#include "c_logcontext.h"

#include <memory>
#include <string>

#include "c_common.hpp"
#include "logger.h"

using namespace slipstream::smartredis::c_api;

extern "C" {

SRError SmartRedisCLogContext(const char* context, const size_t context_length,
                              void** new_logcontext) {
  return guarded("SmartRedisCLogContext", [&] {
    require(new_logcontext, "new_logcontext");
    auto handle =
        std::make_unique<LogContextHandle>(std::string(text(context, context_length, "context")));
    SmartRedis::log_data(handle->log_context, LLDebug, "New LogContext created");
    *new_logcontext = to_void(handle.release());
  });
}

SRError DeallocateLogContext(void** logcontext) {
  return guarded("DeallocateLogContext", [&] {
    require(logcontext, "logcontext");
    if (*logcontext == nullptr) return;
    Handle* handle = handle_of(*logcontext);
    if (handle->kind != Handle::Kind::kLogContext) {
      parameter_error("the logcontext argument is another kind of object (a client or dataset?)");
    }
    delete static_cast<LogContextHandle*>(handle);
    *logcontext = nullptr;
  });
}

}  // extern "C"
