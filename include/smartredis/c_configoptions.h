/* SmartRedis 0.6's C ConfigOptions calls over the C++ layer's SmartRedis::ConfigOptions: the
 * settings of one database read from the environment, each variable suffixed with
 * "_{db_suffix}" when a suffix is given (SSDB_{suffix}, SR_DB_TYPE_{suffix}, ...), and
 * overridden per object. Pass the object to CreateClient (c_client.h). Conventions as in
 * c_client.h. The objects live until the process ends (SmartRedis's C API has no call to free
 * them); strings a getter returns live as long as the object. */
#ifndef SMARTREDIS_C_CONFIGOPTIONS_H
#define SMARTREDIS_C_CONFIGOPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sr_enums.h"
#include "srexception.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A new ConfigOptions reading the environment with `db_suffix` ("" or NULL: no suffix). */
SRError create_configoptions_from_environment(const char* db_suffix, const size_t db_suffix_length,
                                              void** new_configoptions);
/** An integer option: the override, else the (suffixed) environment variable. SRKeyError if
 *  neither is set, SRParameterError if the value is not an integer. */
SRError get_integer_option(void* c_cfgopts, const char* option_name, size_t option_name_len,
                           int64_t* result);
/** A string option (kept by the object). SRKeyError if it is not set. */
SRError get_string_option(void* c_cfgopts, const char* option_name, size_t option_name_len,
                          char** result, size_t* result_len);
/** Whether an option is overridden or set in the environment. */
SRError is_configured(void* c_cfgopts, const char* option_name, size_t option_name_len,
                      bool* cfg_result);
/** Overrides an option for this object only. */
SRError override_integer_option(void* c_cfgopts, const char* option_name, size_t option_name_len,
                                int64_t value);
SRError override_string_option(void* c_cfgopts, const char* option_name, size_t option_name_len,
                               const char* value, size_t value_len);

#ifdef __cplusplus
}
#endif

#endif /* SMARTREDIS_C_CONFIGOPTIONS_H */
