// The error of a configuration file that cannot be used (the trainer's config, an experiment
// file): its message names the file, the line, the table and the key. Kept apart from
// config_section.hpp so that headers can name it without including toml11.
#pragma once

#include <stdexcept>
#include <string>

namespace slipstream {

class ConfigError : public std::runtime_error {
 public:
  explicit ConfigError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace slipstream
