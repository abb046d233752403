// Series options as openPMD-api users write them (JSON or TOML, inline or @file), read into
// SeriesConfig; SST engine parameters that mean something for a Slipstream stream are mapped,
// the rest reported once as ignored.
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <toml.hpp>

#include "openPMD/Error.hpp"
#include "openpmd/config.hpp"

namespace openPMD::internal {
namespace {

using Json = nlohmann::json;

Json from_toml(const toml::value& value) {
  if (value.is_table()) {
    Json object = Json::object();
    for (const auto& [key, item] : value.as_table()) object[key] = from_toml(item);
    return object;
  }
  if (value.is_array()) {
    Json array = Json::array();
    for (const auto& item : value.as_array()) array.push_back(from_toml(item));
    return array;
  }
  if (value.is_boolean()) return value.as_boolean();
  if (value.is_integer()) return value.as_integer();
  if (value.is_floating()) return value.as_floating();
  if (value.is_string()) return value.as_string().str;
  return toml::format(value);
}

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

Json parse_text(const std::string& text, const std::string& origin) {
  std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return Json::object();
  if (text[first] == '{') {
    try {
      return Json::parse(text);
    } catch (const Json::exception& e) {
      throw error::BackendConfigSchema({}, "the JSON configuration " + origin +
                                               " does not parse: " + e.what());
    }
  }
  try {
    std::istringstream in(text);
    return from_toml(toml::parse(in, origin.empty() ? "options" : origin));
  } catch (const std::exception& e) {
    throw error::BackendConfigSchema({}, "the configuration " + origin +
                                             " is neither JSON nor TOML that parses: " + e.what());
  }
}

std::string as_text(const Json& value, const std::vector<std::string>& where) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_integer()) return std::to_string(value.get<long long>());
  if (value.is_number()) return std::to_string(value.get<double>());
  if (value.is_boolean()) return value.get<bool>() ? "true" : "false";
  throw error::BackendConfigSchema(where, "expected a string or a number");
}

std::uint64_t as_count(const Json& value, const std::vector<std::string>& where) {
  const std::string text = as_text(value, where);
  try {
    std::size_t used = 0;
    const unsigned long long number = std::stoull(text, &used);
    if (used != text.size()) throw std::invalid_argument(text);
    return number;
  } catch (const std::exception&) {
    throw error::BackendConfigSchema(where, "expected a non-negative integer, got '" + text + "'");
  }
}

bool as_flag(const Json& value, const std::vector<std::string>& where) {
  if (value.is_boolean()) return value.get<bool>();
  const std::string text = lower(as_text(value, where));
  if (text == "true" || text == "on" || text == "yes" || text == "1") return true;
  if (text == "false" || text == "off" || text == "no" || text == "0") return false;
  throw error::BackendConfigSchema(where, "expected true or false, not '" + text + "'");
}

// slipstream.reductions (`where` its path): [{"function": file, "inputs": [components],
// "output": component, "send_inputs": false}, ...].
std::vector<ReductionConfig> read_reductions(const Json& reductions,
                                             const std::vector<std::string>& where) {
  if (!reductions.is_array()) throw error::BackendConfigSchema(where, "expected a list of tables");
  std::vector<ReductionConfig> out;
  for (std::size_t i = 0; i < reductions.size(); ++i) {
    std::vector<std::string> at = where;
    at.push_back(std::to_string(i));
    const Json& entry = reductions[i];
    if (!entry.is_object()) throw error::BackendConfigSchema(at, "expected a table");
    ReductionConfig reduction;
    for (const auto& [key, value] : entry.items()) {
      std::vector<std::string> here = at;
      here.push_back(key);
      if (key == "function") {
        reduction.function = as_text(value, here);
      } else if (key == "output") {
        reduction.output = as_text(value, here);
      } else if (key == "send_inputs") {
        reduction.send_inputs = as_flag(value, here);
      } else if (key == "inputs") {
        if (!value.is_array()) throw error::BackendConfigSchema(here, "expected a list");
        for (const Json& input : value) reduction.inputs.push_back(as_text(input, here));
      } else {
        throw error::BackendConfigSchema(here, "unknown key: a reduction has function, inputs, "
                                               "output and send_inputs");
      }
    }
    for (const char* required : {"function", "output", "inputs"}) {
      if (!entry.contains(required)) {
        throw error::BackendConfigSchema(at, std::string("missing '") + required + "'");
      }
    }
    out.push_back(std::move(reduction));
  }
  return out;
}

// adios2.dataset.operators (`where` its path): [{"type": ..., "parameters": {...}}], one entry.
std::optional<DatasetOperator> read_operators(const Json& operators,
                                              const std::vector<std::string>& where) {
  if (!operators.is_array()) throw error::BackendConfigSchema(where, "expected a list of operators");
  if (operators.empty()) return std::nullopt;
  if (operators.size() > 1) {
    throw error::BackendConfigSchema(where, std::to_string(operators.size()) +
                                                " operators: chaining operators is not supported, "
                                                "give one");
  }
  const Json& entry = operators.front();
  if (!entry.is_object() || !entry.contains("type")) {
    throw error::BackendConfigSchema(where, "expected {\"type\": ..., \"parameters\": {...}}");
  }
  DatasetOperator op;
  for (const auto& [key, value] : entry.items()) {
    if (key == "type") {
      op.type = lower(as_text(value, where));
    } else if (key == "parameters") {
      if (!value.is_object()) throw error::BackendConfigSchema(where, "parameters: expected a table");
      for (const auto& [name, setting] : value.items()) {
        // Numbers as their shortest text (1e-07, not std::to_string's 0.000000).
        op.parameters.emplace_back(name, setting.is_string() ? setting.get<std::string>()
                                                             : setting.is_number() ? setting.dump()
                                                                                   : as_text(setting, where));
      }
    } else {
      throw error::BackendConfigSchema(where, "unknown key '" + key + "' of an operator");
    }
  }
  return op;
}

// The operators under `adios2` of a configuration, if any.
std::optional<DatasetOperator> adios2_operators(const Json& adios2) {
  if (!adios2.is_object() || !adios2.contains("dataset")) return std::nullopt;
  const Json& dataset = adios2["dataset"];
  if (!dataset.is_object() || !dataset.contains("operators")) return std::nullopt;
  return read_operators(dataset["operators"], {"adios2", "dataset", "operators"});
}

void read_sst_parameters(const Json& parameters, SeriesConfig& config) {
  std::vector<std::string> ignored;
  for (const auto& [key, value] : parameters.items()) {
    const std::vector<std::string> where = {"adios2", "engine", "parameters", key};
    const std::string name = lower(key);
    if (name == "queuelimit") {
      config.queue_limit = static_cast<std::size_t>(as_count(value, where));
    } else if (name == "queuefullpolicy") {
      const std::string policy = lower(as_text(value, where));
      if (policy != "block" && policy != "discard") {
        throw error::BackendConfigSchema(where, "QueueFullPolicy is Block or Discard, not '" +
                                                    as_text(value, where) + "'");
      }
      config.discard = policy == "discard";
    } else if (name == "rendezvousreadercount") {
      config.expected_groups = static_cast<std::uint32_t>(as_count(value, where));
    } else if (name == "stepdistributionmode") {
      const std::string mode = lower(as_text(value, where));
      if (mode == "alltoall" || mode == "stepsalltoall") {
        config.step_distribution = "all";
      } else if (mode == "roundrobin" || mode == "stepsroundrobin") {
        config.step_distribution = "round_robin";
      } else if (mode == "ondemand" || mode == "stepsondemand") {
        config.step_distribution = "on_demand";
      } else {
        throw error::BackendConfigSchema(
            where, "StepDistributionMode is StepsAllToAll, StepsRoundRobin or StepsOnDemand, not '" +
                       as_text(value, where) + "'");
      }
    } else if (name == "firsttimestepprecious") {
      config.first_step_precious = as_flag(value, where);
    } else if (name == "opentimeoutsecs") {
      config.open_timeout = std::chrono::milliseconds(as_count(value, where) * 1000);
    } else {
      ignored.push_back(key);
    }
  }
  if (!ignored.empty()) {
    std::string list;
    for (const std::string& key : ignored) list += (list.empty() ? "" : ", ") + key;
    config.warnings.push_back("ADIOS2 engine parameters with no meaning for a Slipstream stream "
                              "are ignored: " + list);
  }
}

}  // namespace

SeriesConfig parse_config(const std::string& options) {
  std::string text = options;
  std::string origin;
  if (!text.empty() && text[0] == '@') {
    origin = text.substr(1);
    std::ifstream in(origin);
    if (!in) {
      throw error::BackendConfigSchema({}, "cannot read the configuration file '" + origin + "'");
    }
    std::ostringstream content;
    content << in.rdbuf();
    text = content.str();
  }
  const Json json = parse_text(text, origin.empty() ? "" : "'" + origin + "'");
  if (!json.is_object()) {
    throw error::BackendConfigSchema({}, "the configuration must be a JSON object or TOML table");
  }
  SeriesConfig config;
  for (const auto& [key, value] : json.items()) {
    const std::string name = lower(key);
    if (name == "backend") {
      config.backend = lower(as_text(value, {key}));
    } else if (name == "iteration_encoding") {
      config.iteration_encoding = lower(as_text(value, {key}));
    } else if (name == "slipstream") {
      if (!value.is_object()) throw error::BackendConfigSchema({key}, "expected a table");
      for (const auto& [item, setting] : value.items()) {
        const std::vector<std::string> where = {key, item};
        if (item == "address") {
          config.address = as_text(setting, where);
        } else if (item == "group") {
          config.group = as_text(setting, where);
        } else if (item == "strategy" || item == "chunk_distribution") {
          config.strategy = as_text(setting, where);
        } else if (item == "step_distribution") {
          config.step_distribution = lower(as_text(setting, where));
          if (config.step_distribution != "all" && config.step_distribution != "round_robin" &&
              config.step_distribution != "on_demand") {
            throw error::BackendConfigSchema(where, "expected \"all\", \"round_robin\" or "
                                                    "\"on_demand\", not '" +
                                                        as_text(setting, where) + "'");
          }
        } else if (item == "on_aborted_step") {
          config.on_aborted_step = lower(as_text(setting, where));
          if (config.on_aborted_step != "skip" && config.on_aborted_step != "throw") {
            throw error::BackendConfigSchema(where, "expected \"skip\" or \"throw\", not '" +
                                                        as_text(setting, where) + "'");
          }
        } else if (item == "reductions") {
          config.reductions = read_reductions(setting, where);
        } else {
          config.warnings.push_back("unknown key 'slipstream." + item + "' (ignored)");
        }
      }
    } else if (name == "adios2") {
      if (!value.is_object()) throw error::BackendConfigSchema({key}, "expected a table");
      if (value.contains("engine") && value["engine"].is_object() &&
          value["engine"].contains("parameters")) {
        read_sst_parameters(value["engine"]["parameters"], config);
      }
      config.dataset_operator = adios2_operators(value);
    } else if (name == "hdf5" || name == "json" || name == "toml" ||
               name == "defer_iteration_parsing" || name == "rank_table" ||
               name == "resizable" || name == "dataset") {
      // openPMD-api's keys with nothing to do here.
    } else {
      config.warnings.push_back("unknown configuration key '" + key + "' (ignored)");
    }
  }
  if (config.strategy.empty()) {
    if (const char* strategy = std::getenv("OPENPMD_CHUNK_DISTRIBUTION")) config.strategy = strategy;
  }
  return config;
}

std::optional<DatasetOperator> dataset_operator(const std::string& options) {
  const Json json = parse_text(options, "of the dataset");
  if (!json.is_object()) {
    throw error::BackendConfigSchema({}, "a dataset's options must be a JSON object or TOML table");
  }
  for (const auto& [key, value] : json.items()) {
    if (lower(key) == "adios2") return adios2_operators(value);
  }
  return std::nullopt;
}

}  // namespace openPMD::internal
