// Reading TOML configuration files (toml11) with errors a user can act on: every wrong value, value
// of the wrong type, missing key or unknown key (a typo, an option that does not exist) is a
// ConfigError naming the file, the line, the table and the key. Used by the trainer's config
// (src/train) and the launcher's experiment files (src/launch); header-only, so only the files
// that read a config include toml11.
#pragma once

#include <toml.hpp>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "common/config_error.hpp"

namespace slipstream {

/// "FILE:LINE: " for a value of a parsed file.
inline std::string config_where(const std::string& origin, const toml::value& v) {
  return origin + ":" + std::to_string(v.location().line()) + ": ";
}

/// Parses TOML text; a syntax error is a ConfigError with toml11's message (which names the line).
inline toml::value parse_config_text(const std::string& text, const std::string& origin) {
  try {
    std::istringstream in(text);
    return toml::parse(in, origin);
  } catch (const std::exception& e) {
    throw ConfigError("cannot parse " + origin + ": " + e.what());
  }
}

/// One table of a config file (`[name]`, or one entry of `[[name]]`): typed reads with defaults,
/// then finish() checks that nothing else is there. A missing table (nullptr) reads as empty.
class ConfigSection {
 public:
  ConfigSection(const toml::value* table, std::string name, std::string origin)
      : table_(table), name_(std::move(name)), origin_(std::move(origin)) {}

  bool has(const char* key) const { return table_ != nullptr && table_->contains(key); }
  const std::string& name() const { return name_; }
  const std::string& origin() const { return origin_; }
  /// The line of the table (0 when it is missing), for errors about the table as a whole.
  int line() const { return table_ == nullptr ? 0 : static_cast<int>(table_->location().line()); }

  void string(const char* key, std::string& out) {
    if (const toml::value* v = find(key)) {
      if (!v->is_string()) fail(*v, key, "must be a string");
      out = v->as_string().str;
    }
  }
  void boolean(const char* key, bool& out) {
    if (const toml::value* v = find(key)) {
      if (!v->is_boolean()) fail(*v, key, "must be true or false");
      out = v->as_boolean();
    }
  }
  // An integer from `minimum` to `maximum`.
  template <typename Int>
  void integer(const char* key, Int& out, std::int64_t minimum,
               std::int64_t maximum = std::numeric_limits<std::int64_t>::max()) {
    if (const toml::value* v = find(key)) {
      if (!v->is_integer()) fail(*v, key, "must be an integer");
      const std::int64_t value = v->as_integer();
      if (value < minimum || value > maximum) {
        fail(*v, key,
             "must be " +
                 (maximum == std::numeric_limits<std::int64_t>::max()
                      ? "at least " + std::to_string(minimum)
                      : "from " + std::to_string(minimum) + " to " + std::to_string(maximum)) +
                 ", got " + std::to_string(value));
      }
      out = static_cast<Int>(value);
    }
  }
  // A finite number (integers accepted) that `valid` accepts; `expected` says what it must be.
  void number(const char* key, double& out, const std::function<bool(double)>& valid,
              const char* expected) {
    if (const toml::value* v = find(key)) {
      double value = 0;
      if (v->is_floating()) {
        value = v->as_floating();
      } else if (v->is_integer()) {
        value = static_cast<double>(v->as_integer());
      } else {
        fail(*v, key, "must be a number");
      }
      if (!std::isfinite(value) || !valid(value)) {
        std::ostringstream text;
        text << "must be " << expected << ", got " << value;
        fail(*v, key, text.str());
      }
      out = value;
    }
  }
  // One of `choices`; returns through `out` the value paired with the name given.
  template <typename Out>
  void choice(const char* key, Out& out, const std::vector<std::pair<std::string, Out>>& choices) {
    if (const toml::value* v = find(key)) {
      if (!v->is_string()) fail(*v, key, "must be a string");
      std::string expected;
      for (const auto& [name, value] : choices) {
        if (name == v->as_string().str) {
          out = value;
          return;
        }
        expected += (expected.empty() ? "" : ", ") + ("\"" + name + "\"");
      }
      fail(*v, key, "must be one of " + expected + ", got \"" + v->as_string().str + "\"");
    }
  }
  // A string that must be there and not empty.
  void required(const char* key, std::string& out) {
    string(key, out);
    if (out.empty()) {
      throw ConfigError(origin_ + (line() ? ":" + std::to_string(line()) : std::string()) + ": [" +
                        name_ + "] " + key + " is required");
    }
  }
  // An array of strings (a single string is taken as an array of one).
  void strings(const char* key, std::vector<std::string>& out) {
    if (const toml::value* v = find(key)) {
      if (v->is_string()) {
        out = {v->as_string().str};
        return;
      }
      if (!v->is_array()) fail(*v, key, "must be an array of strings");
      out.clear();
      for (const toml::value& item : v->as_array()) {
        if (!item.is_string()) fail(item, key, "must be an array of strings");
        out.push_back(item.as_string().str);
      }
    }
  }
  // A table of strings (integers, floats and booleans are written as text, as a shell would see
  // them), such as an environment.
  void string_table(const char* key, std::map<std::string, std::string>& out) {
    if (const toml::value* v = find(key)) {
      if (!v->is_table()) fail(*v, key, "must be a table of strings (KEY = \"value\")");
      for (const auto& [k, item] : v->as_table()) out[k] = scalar_text(item, key);
    }
  }
  // The raw value of a key for readers of structured values (tables, arrays of tables), or nullptr.
  const toml::value* value(const char* key) { return find(key); }

  // Every key of the table must have been read: anything else is a typo or an option that does
  // not exist.
  void finish() const {
    if (table_ == nullptr) return;
    for (const auto& [key, value] : table_->as_table()) {
      if (read_.count(key) == 0) {
        std::string known;
        for (const auto& k : read_) known += (known.empty() ? "" : ", ") + k;
        fail(value, key.c_str(),
             "is not an option of [" + name_ + "]" + (known.empty() ? "" : " (expected " + known + ")"));
      }
    }
  }

  [[noreturn]] void fail(const toml::value& v, const char* key, const std::string& what) const {
    throw ConfigError(config_where(origin_, v) + "[" + name_ + "] " + key + " " + what);
  }
  // A scalar as text: strings as they are, numbers and booleans as TOML writes them.
  std::string scalar_text(const toml::value& v, const char* key) const {
    if (v.is_string()) return v.as_string().str;
    if (v.is_integer()) return std::to_string(v.as_integer());
    if (v.is_boolean()) return v.as_boolean() ? "true" : "false";
    if (v.is_floating()) {  // the shortest text that reads back as the same number
      char text[64];
      const auto end = std::to_chars(text, text + sizeof text, v.as_floating()).ptr;
      return std::string(text, end);
    }
    fail(v, key, "must hold strings, numbers or booleans");
  }

 private:
  const toml::value* find(const char* key) {
    read_.insert(key);
    if (table_ == nullptr || !table_->contains(key)) return nullptr;
    return &table_->at(key);
  }

  const toml::value* table_;
  std::string name_;
  std::string origin_;
  std::set<std::string> read_;  // keys asked for (present or not)
};

}  // namespace slipstream
