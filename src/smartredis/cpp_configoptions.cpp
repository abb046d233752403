// SmartRedis::ConfigOptions: options from (suffixed) environment variables with overrides.
#include <charconv>

#include "configoptions.h"
#include "sr_environment.hpp"
#include "srexception.h"

namespace SmartRedis {

std::unique_ptr<ConfigOptions> ConfigOptions::create_from_environment(
    const std::string& db_suffix) {
  for (char c : db_suffix) {
    bool allowed = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                   c == '_';
    if (!allowed) {
      throw SRParameterException("invalid database suffix '" + db_suffix +
                                 "': use letters, digits and '_' only");
    }
  }
  return std::unique_ptr<ConfigOptions>(new ConfigOptions(db_suffix));
}

std::unique_ptr<ConfigOptions> ConfigOptions::create_from_environment(const char* db_suffix) {
  return create_from_environment(std::string(db_suffix == nullptr ? "" : db_suffix));
}

ConfigOptions* ConfigOptions::clone() const { return new ConfigOptions(*this); }

std::string ConfigOptions::suffixed(const std::string& option_name) const {
  return suffix_.empty() ? option_name : option_name + "_" + suffix_;
}

int64_t ConfigOptions::get_integer_option(const std::string& option_name) {
  if (auto found = integer_overrides_.find(option_name); found != integer_overrides_.end()) {
    return found->second;
  }
  std::string text = get_string_option(option_name);
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) {
    throw SRParameterException("option " + suffixed(option_name) + " = '" + text +
                               "' is not an integer");
  }
  return value;
}

std::string ConfigOptions::get_string_option(const std::string& option_name) {
  if (auto found = string_overrides_.find(option_name); found != string_overrides_.end()) {
    return found->second;
  }
  if (auto found = integer_overrides_.find(option_name); found != integer_overrides_.end()) {
    return std::to_string(found->second);
  }
  if (auto value = slipstream::smartredis::environment_value(suffixed(option_name))) {
    return *value;
  }
  throw SRKeyException("configuration option " + suffixed(option_name) + " is not set");
}

bool ConfigOptions::is_configured(const std::string& option_name) {
  return string_overrides_.count(option_name) != 0 ||
         integer_overrides_.count(option_name) != 0 ||
         slipstream::smartredis::environment_value(suffixed(option_name)).has_value();
}

void ConfigOptions::override_integer_option(const std::string& option_name, int64_t value) {
  string_overrides_.erase(option_name);
  integer_overrides_[option_name] = value;
}

void ConfigOptions::override_string_option(const std::string& option_name,
                                           const std::string& value) {
  integer_overrides_.erase(option_name);
  string_overrides_[option_name] = value;
}

int64_t ConfigOptions::_resolve_integer_option(const std::string& option_name,
                                               int64_t default_value) {
  return is_configured(option_name) ? get_integer_option(option_name) : default_value;
}

std::string ConfigOptions::_resolve_string_option(const std::string& option_name,
                                                  const std::string& default_value) {
  return is_configured(option_name) ? get_string_option(option_name) : default_value;
}

}  // namespace SmartRedis
