// Reading SmartRedis's environment variables into client options and log settings.
#include "sr_environment.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>

#include "srexception.h"

namespace slipstream::smartredis {

namespace {

std::string lower(std::string_view text) {
  std::string result(text);
  std::transform(result.begin(), result.end(), result.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return result;
}

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
    text.remove_prefix(1);
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
    text.remove_suffix(1);
  }
  return text;
}

std::optional<std::chrono::milliseconds> milliseconds_option(SmartRedis::ConfigOptions& options,
                                                              const std::string& name) {
  if (!options.is_configured(name)) return std::nullopt;
  std::int64_t value = options.get_integer_option(name);
  if (value < 0) {
    throw SRParameterException(name + " must be a number of milliseconds >= 0, got " +
                               std::to_string(value));
  }
  return std::chrono::milliseconds(value);
}

}  // namespace

std::optional<std::string> environment_value(std::string_view name) {
  const char* value = std::getenv(std::string(name).c_str());
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

std::string first_address(std::string_view ssdb) {
  std::string_view rest = ssdb;
  while (!rest.empty()) {
    std::size_t end = rest.find_first_of(",;");
    std::string_view entry = trimmed(rest.substr(0, end));
    if (!entry.empty()) return std::string(entry);
    if (end == std::string_view::npos) break;
    rest.remove_prefix(end + 1);
  }
  throw SRParameterException("SSDB holds no database address: '" + std::string(ssdb) +
                             "' (expected host:port, tcp://host:port or unix:///path, several "
                             "separated by commas)");
}

ClientOptions client_options(SmartRedis::ConfigOptions& options, std::optional<bool> cluster) {
  ClientOptions result;
  if (!options.is_configured("SSDB")) {
    std::string name = options.suffix().empty() ? "SSDB" : "SSDB_" + options.suffix();
    throw SRRuntimeException("no database address: " + name +
                             " is not set (set it to host:port, e.g. 127.0.0.1:6379, or "
                             "unix:///path/to/socket)");
  }
  result.address = first_address(options.get_string_option("SSDB"));

  if (cluster) {
    result.cluster = *cluster ? ClusterMode::kClustered : ClusterMode::kStandalone;
  } else if (options.is_configured("SR_DB_TYPE")) {
    std::string type = options.get_string_option("SR_DB_TYPE");
    if (lower(type) == "clustered") {
      result.cluster = ClusterMode::kClustered;
    } else if (lower(type) == "standalone") {
      result.cluster = ClusterMode::kStandalone;
    } else {
      throw SRParameterException("SR_DB_TYPE must be Clustered or Standalone, got '" + type +
                                 "'");
    }
  } else {
    result.cluster = ClusterMode::kAuto;
  }

  // Explicit (possibly empty) prefixes, so that the client does not read the unsuffixed
  // variables itself.
  result.key_prefix_out = options._resolve_string_option("SSKEYOUT", "");
  result.key_prefixes_in = options._resolve_string_option("SSKEYIN", "");

  if (auto timeout = milliseconds_option(options, "SR_CONN_TIMEOUT")) {
    result.connect_timeout = *timeout;
  }
  if (auto timeout = milliseconds_option(options, "SR_CMD_TIMEOUT")) {
    result.command_timeout = *timeout;
  }
  return result;
}

ClientOptions client_options_from_environment(std::optional<bool> cluster) {
  auto options = SmartRedis::ConfigOptions::create_from_environment("");
  return client_options(*options, cluster);
}

std::optional<SRLoggingLevel> parse_log_level(std::string_view text) {
  std::string level = lower(trimmed(text));
  if (level == "quiet") return LLQuiet;
  if (level == "info") return LLInfo;
  if (level == "debug") return LLDebug;
  if (level == "developer") return LLDeveloper;
  return std::nullopt;
}

LogSettings log_settings_from_environment() {
  LogSettings settings;
  settings.file = environment_value("SR_LOG_FILE").value_or("");
  if (auto text = environment_value("SR_LOG_LEVEL")) {
    if (auto level = parse_log_level(*text)) {
      settings.level = *level;
    } else {
      settings.problem = "SR_LOG_LEVEL '" + *text +
                         "' is not QUIET, INFO, DEBUG or DEVELOPER; logging at INFO";
    }
  }
  return settings;
}

}  // namespace slipstream::smartredis
