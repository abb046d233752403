// The environment a SmartRedis program configures its clients through, read the way SmartRedis
// reads it: SSDB, SR_DB_TYPE, SSKEYIN, SSKEYOUT, SR_CONN_TIMEOUT and SR_CMD_TIMEOUT (each
// optionally suffixed, see ConfigOptions) become slipstream::ClientOptions; SR_LOG_FILE and
// SR_LOG_LEVEL (never suffixed) configure logging. Shared by the C++, C and Fortran layers.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "configoptions.h"
#include "slipstream/client.hpp"
#include "sr_enums.h"

namespace slipstream::smartredis {

/// A non-empty environment variable's value; nullopt when it is unset or empty.
std::optional<std::string> environment_value(std::string_view name);

/// The first address of an SSDB value: entries are separated by ',' or ';' (SmartSim writes
/// both forms) and surrounded by optional blanks. Throws SmartRedis::ParameterException when it
/// holds no address.
std::string first_address(std::string_view ssdb);

/// Client options from `options` (SSDB required; SR_DB_TYPE "Clustered" or "Standalone",
/// case-insensitive, else the server is asked; SSKEYOUT; SSKEYIN; SR_CONN_TIMEOUT and
/// SR_CMD_TIMEOUT in milliseconds). `cluster`, when given (the deprecated Client(bool cluster)
/// constructors), takes the place of SR_DB_TYPE. Throws SmartRedis::RuntimeException when SSDB
/// is not set and ParameterException for a value that cannot be used.
ClientOptions client_options(SmartRedis::ConfigOptions& options,
                             std::optional<bool> cluster = std::nullopt);

/// client_options of the unsuffixed environment.
ClientOptions client_options_from_environment(std::optional<bool> cluster = std::nullopt);

/// Where log lines go and which are written, from SR_LOG_FILE and SR_LOG_LEVEL.
struct LogSettings {
  std::string file;                    ///< empty: standard output
  SRLoggingLevel level = LLInfo;       ///< lines of a higher level are dropped
  std::string problem;                 ///< a warning about a bad SR_LOG_LEVEL value, or ""
};
LogSettings log_settings_from_environment();

/// Parses an SR_LOG_LEVEL value (QUIET, INFO, DEBUG, DEVELOPER; case-insensitive).
std::optional<SRLoggingLevel> parse_log_level(std::string_view text);

}  // namespace slipstream::smartredis
