// SmartRedis::ConfigOptions: the settings a Client is created from, read from environment
// variables (SSDB, SR_DB_TYPE, SSKEYIN, SSKEYOUT, SR_CONN_TIMEOUT, SR_CMD_TIMEOUT, ...), each
// optionally suffixed ("SSDB_mydb" for the suffix "mydb") so that one program can reach several
// databases, with per-object overrides. Part of Slipstream's SmartRedis compatibility layer
// (docs/smartredis.md).
#ifndef SMARTREDIS_CONFIGOPTIONS_H
#define SMARTREDIS_CONFIGOPTIONS_H

#ifndef __cplusplus
#error "C programs include c_configoptions.h, not the C++ header configoptions.h"
#endif

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include "srobject.h"

namespace SmartRedis {

/// Option values come from the environment when asked (so a variable set after creation is
/// seen), unless overridden on this object. Copyable; not synchronised.
class ConfigOptions {
 public:
  /// Options from environment variables named `NAME_db_suffix`, or `NAME` when the suffix is
  /// empty. Throws ParameterException if the suffix contains characters other than letters,
  /// digits and '_'.
  static std::unique_ptr<ConfigOptions> create_from_environment(const std::string& db_suffix);
  static std::unique_ptr<ConfigOptions> create_from_environment(const char* db_suffix);

  ConfigOptions(const ConfigOptions&) = default;
  ConfigOptions& operator=(const ConfigOptions&) = default;
  virtual ~ConfigOptions() = default;

  /// A copy of this object (overrides included).
  ConfigOptions* clone() const;

  /// The option's value. Throws KeyException if it is neither set nor overridden,
  /// ParameterException if an integer option does not hold an integer.
  int64_t get_integer_option(const std::string& option_name);
  std::string get_string_option(const std::string& option_name);
  /// Whether the option is set (a non-empty environment variable) or overridden.
  bool is_configured(const std::string& option_name);

  /// Override an option on this object only.
  void override_integer_option(const std::string& option_name, int64_t value);
  void override_string_option(const std::string& option_name, const std::string& value);

  /// The suffix given at creation ("" for none).
  const std::string& suffix() const { return suffix_; }

  /// The option's value, or `default_value` when it is not configured (SmartRedis's internal
  /// resolvers, public there too).
  int64_t _resolve_integer_option(const std::string& option_name, int64_t default_value);
  std::string _resolve_string_option(const std::string& option_name,
                                     const std::string& default_value);

 private:
  explicit ConfigOptions(std::string suffix) : suffix_(std::move(suffix)) {}
  std::string suffixed(const std::string& option_name) const;

  std::string suffix_;
  std::unordered_map<std::string, std::string> string_overrides_;
  std::unordered_map<std::string, int64_t> integer_overrides_;
};

}  // namespace SmartRedis

#endif  // SMARTREDIS_CONFIGOPTIONS_H
