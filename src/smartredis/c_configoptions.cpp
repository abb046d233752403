// SmartRedis's C ConfigOptions calls (include/smartredis/c_configoptions.h) over the C++ layer's
// SmartRedis::ConfigOptions. The objects are kept in a registry until the process ends, since
// SmartRedis's C API gives no call to free them.
#include "c_configoptions.h"

#include <cstring>
#include <mutex>
#include <vector>

#include "c_common.hpp"
#include "configoptions.h"

using namespace slipstream::smartredis::c_api;

namespace {

std::mutex registry_mutex;
std::vector<std::unique_ptr<ConfigOptionsHandle>> registry;  // GUARDED_BY(registry_mutex)

std::string name_of(const char* name, std::size_t length) {
  return std::string(text(name, length, "option_name"));
}

}  // namespace

extern "C" {

SRError create_configoptions_from_environment(const char* db_suffix, const size_t db_suffix_length,
                                              void** new_configoptions) {
  return guarded("create_configoptions_from_environment", [&] {
    require(new_configoptions, "new_configoptions");
    auto handle =
        std::make_unique<ConfigOptionsHandle>(SmartRedis::ConfigOptions::create_from_environment(
            std::string(text(db_suffix, db_suffix_length, "db_suffix"))));
    ConfigOptionsHandle* pointer = handle.get();
    {
      std::lock_guard lock(registry_mutex);
      registry.push_back(std::move(handle));
    }
    *new_configoptions = to_void(pointer);
  });
}

SRError get_integer_option(void* c_cfgopts, const char* option_name, size_t option_name_len,
                           int64_t* result) {
  return guarded("get_integer_option", [&] {
    require(result, "result");
    *result = configoptions_of(c_cfgopts).get_integer_option(name_of(option_name, option_name_len));
  });
}

SRError get_string_option(void* c_cfgopts, const char* option_name, size_t option_name_len,
                          char** result, size_t* result_len) {
  return guarded("get_string_option", [&] {
    require(result, "result");
    require(result_len, "result_len");
    std::string value =
        configoptions_of(c_cfgopts).get_string_option(name_of(option_name, option_name_len));
    auto* copy = reinterpret_cast<char*>(
        static_cast<ConfigOptionsHandle*>(handle_of(c_cfgopts))->kept.allocate(value.size() + 1));
    std::memcpy(copy, value.data(), value.size());
    *result = copy;
    *result_len = value.size();
  });
}

SRError is_configured(void* c_cfgopts, const char* option_name, size_t option_name_len,
                      bool* cfg_result) {
  return guarded("is_configured", [&] {
    require(cfg_result, "cfg_result");
    *cfg_result = configoptions_of(c_cfgopts).is_configured(name_of(option_name, option_name_len));
  });
}

SRError override_integer_option(void* c_cfgopts, const char* option_name, size_t option_name_len,
                                int64_t value) {
  return guarded("override_integer_option", [&] {
    configoptions_of(c_cfgopts).override_integer_option(name_of(option_name, option_name_len),
                                                        value);
  });
}

SRError override_string_option(void* c_cfgopts, const char* option_name, size_t option_name_len,
                               const char* value, size_t value_len) {
  return guarded("override_string_option", [&] {
    configoptions_of(c_cfgopts).override_string_option(
        name_of(option_name, option_name_len), std::string(text(value, value_len, "value")));
  });
}

}  // extern "C"
