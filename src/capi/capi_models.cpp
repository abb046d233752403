// C API: models and scripts (store, fetch, delete, run, run in one round trip, statistics).
#include <chrono>
#include <cstdlib>
#include <memory>

#include "capi/capi_internal.hpp"

using namespace slipstream::capi;
using slipstream::InvalidArgumentError;

namespace {

slipstream::ModelOptions model_options_arg(const slipstream_model_options_t* options) {
  slipstream::ModelOptions cpp;
  if (options == nullptr) return cpp;
  cpp.batch_size = options->batch_size;
  cpp.min_batch_size = options->min_batch_size;
  cpp.min_batch_timeout = std::chrono::milliseconds(options->min_batch_timeout_ms);
  cpp.tag = string_arg(options->tag, options->tag_length, "tag");
  cpp.inputs =
      string_list_arg(options->inputs, options->input_lengths, options->input_count, "inputs");
  cpp.outputs =
      string_list_arg(options->outputs, options->output_lengths, options->output_count, "outputs");
  cpp.keep_versions = options->keep_versions;
  return cpp;
}

// A string argument that defaults to `fallback` when NULL or empty.
std::string_view string_or(const char* data, std::size_t length, const char* what,
                           std::string_view fallback) {
  std::string_view value = string_arg(data, length, what);
  return value.empty() ? fallback : value;
}

std::chrono::milliseconds timeout_arg(int64_t timeout_ms) {
  if (timeout_ms < 0) {
    throw InvalidArgumentError("timeout_ms is " + std::to_string(timeout_ms) +
                               "; expected 0 (no limit) or a positive number of milliseconds");
  }
  return std::chrono::milliseconds(timeout_ms);
}

// Frees the strings of a model info on scope exit unless released (so a failure half-way through
// filling one leaks nothing).
struct ModelInfoStrings {
  slipstream_model_info_t* info;
  ~ModelInfoStrings() {
    if (info != nullptr) slipstream_model_info_clear(info);
  }
};

}  // namespace

extern "C" {

slipstream_status_t slipstream_model_options_init(slipstream_model_options_t* options) {
  return guarded([&] { deref(options, "options") = slipstream_model_options_t{}; });
}

slipstream_status_t slipstream_set_model(slipstream_client_t* client, const char* name,
                                         size_t name_length, const void* model, size_t model_length,
                                         const char* backend, size_t backend_length,
                                         const char* device, size_t device_length,
                                         const slipstream_model_options_t* options) {
  return guarded([&] {
    slipstream::Client& cpp = client_of(client);
    if (model == nullptr && model_length > 0) throw InvalidArgumentError("model is NULL");
    cpp.set_model(string_arg(name, name_length, "name"),
                  std::string_view(static_cast<const char*>(model), model_length),
                  string_or(backend, backend_length, "backend", "TORCH"),
                  string_or(device, device_length, "device", "CPU"), model_options_arg(options));
  });
}

slipstream_status_t slipstream_set_model_from_file(slipstream_client_t* client, const char* name,
                                                   size_t name_length, const char* path,
                                                   size_t path_length, const char* backend,
                                                   size_t backend_length, const char* device,
                                                   size_t device_length,
                                                   const slipstream_model_options_t* options) {
  return guarded([&] {
    client_of(client).set_model_from_file(
        string_arg(name, name_length, "name"), std::string(string_arg(path, path_length, "path")),
        string_or(backend, backend_length, "backend", "TORCH"),
        string_or(device, device_length, "device", "CPU"), model_options_arg(options));
  });
}

slipstream_status_t slipstream_get_model(slipstream_client_t* client, const char* name,
                                         size_t name_length, char** model, size_t* length) {
  return guarded([&] {
    slipstream::Client& cpp = client_of(client);
    deref(model, "model output pointer");
    string_out(cpp.get_model(string_arg(name, name_length, "name")), model, length, "model");
  });
}

slipstream_status_t slipstream_delete_model(slipstream_client_t* client, const char* name,
                                            size_t name_length, int* existed) {
  return guarded([&] {
    flag_out(client_of(client).delete_model(string_arg(name, name_length, "name")), existed);
  });
}

slipstream_status_t slipstream_model_exists(slipstream_client_t* client, const char* name,
                                            size_t name_length, int* exists) {
  return guarded([&] {
    slipstream::Client& cpp = client_of(client);
    deref(exists, "exists output pointer");
    flag_out(cpp.model_exists(string_arg(name, name_length, "name")), exists);
  });
}

slipstream_status_t slipstream_run_model(slipstream_client_t* client, const char* name,
                                         size_t name_length, const char* const* inputs,
                                         const size_t* input_lengths, size_t input_count,
                                         const char* const* outputs, const size_t* output_lengths,
                                         size_t output_count, int64_t timeout_ms) {
  return guarded([&] {
    client_of(client).run_model(string_arg(name, name_length, "name"),
                                string_list_arg(inputs, input_lengths, input_count, "inputs"),
                                string_list_arg(outputs, output_lengths, output_count, "outputs"),
                                timeout_arg(timeout_ms));
  });
}

slipstream_status_t slipstream_run_model_version(
    slipstream_client_t* client, const char* name, size_t name_length, const char* const* inputs,
    const size_t* input_lengths, size_t input_count, const char* const* outputs,
    const size_t* output_lengths, size_t output_count, int64_t timeout_ms, uint64_t version,
    uint64_t* ran) {
  return guarded([&] {
    slipstream::ModelVersion asked{version, 0};
    client_of(client).run_model(string_arg(name, name_length, "name"),
                                string_list_arg(inputs, input_lengths, input_count, "inputs"),
                                string_list_arg(outputs, output_lengths, output_count, "outputs"),
                                timeout_arg(timeout_ms), &asked);
    if (ran != nullptr) *ran = asked.ran;
  });
}

slipstream_status_t slipstream_run_model_on(slipstream_client_t* client, const char* name,
                                            size_t name_length,
                                            const slipstream_tensor_ref_t* inputs,
                                            size_t input_count, const char* const* outputs,
                                            const size_t* output_lengths, size_t output_count,
                                            int64_t timeout_ms, slipstream_tensor_t** results) {
  return slipstream_run_model_on_version(client, name, name_length, inputs, input_count, outputs,
                                         output_lengths, output_count, timeout_ms, 0, nullptr,
                                         results);
}

slipstream_status_t slipstream_run_model_on_version(
    slipstream_client_t* client, const char* name, size_t name_length,
    const slipstream_tensor_ref_t* inputs, size_t input_count, const char* const* outputs,
    const size_t* output_lengths, size_t output_count, int64_t timeout_ms, uint64_t version,
    uint64_t* ran, slipstream_tensor_t** results) {
  return guarded([&] {
    slipstream::Client& cpp = client_of(client);
    if (output_count > 0) deref(results, "results output array");
    const std::vector<slipstream::TensorRef> refs = tensor_refs(inputs, input_count);
    // Without a version asked the run is RedisAI's (+OK); with one, the server says which ran.
    slipstream::ModelVersion asked{version, 0};
    const bool versioned = ran != nullptr || version != 0;
    std::vector<slipstream::Tensor> tensors = cpp.run_model_on(
        string_arg(name, name_length, "name"), refs,
        string_list_arg(outputs, output_lengths, output_count, "outputs"), timeout_arg(timeout_ms),
        versioned ? &asked : nullptr);
    if (ran != nullptr) *ran = asked.ran;
    tensors_out(std::move(tensors), results);
  });
}

slipstream_status_t slipstream_get_model_chunk_size(slipstream_client_t* client, int64_t* bytes) {
  return guarded([&] {
    slipstream::Client& cpp = client_of(client);
    deref(bytes, "bytes output pointer") = cpp.model_chunk_size();
  });
}

slipstream_status_t slipstream_set_model_chunk_size(slipstream_client_t* client, int64_t bytes) {
  return guarded([&] { client_of(client).set_model_chunk_size(bytes); });
}

slipstream_status_t slipstream_set_script(slipstream_client_t* client, const char* name,
                                          size_t name_length, const char* device,
                                          size_t device_length, const char* source,
                                          size_t source_length, const char* const* entry_points,
                                          const size_t* entry_point_lengths, size_t entry_count) {
  return guarded([&] {
    client_of(client).set_script(
        string_arg(name, name_length, "name"), string_or(device, device_length, "device", "CPU"),
        string_arg(source, source_length, "source"),
        string_list_arg(entry_points, entry_point_lengths, entry_count, "entry_points"));
  });
}

slipstream_status_t slipstream_set_script_from_file(
    slipstream_client_t* client, const char* name, size_t name_length, const char* device,
    size_t device_length, const char* path, size_t path_length, const char* const* entry_points,
    const size_t* entry_point_lengths, size_t entry_count) {
  return guarded([&] {
    client_of(client).set_script_from_file(
        string_arg(name, name_length, "name"), string_or(device, device_length, "device", "CPU"),
        std::string(string_arg(path, path_length, "path")),
        string_list_arg(entry_points, entry_point_lengths, entry_count, "entry_points"));
  });
}

slipstream_status_t slipstream_get_script(slipstream_client_t* client, const char* name,
                                          size_t name_length, char** source, size_t* length) {
  return guarded([&] {
    slipstream::Client& cpp = client_of(client);
    deref(source, "source output pointer");
    string_out(cpp.get_script(string_arg(name, name_length, "name")), source, length, "source");
  });
}

slipstream_status_t slipstream_run_script(slipstream_client_t* client, const char* name,
                                          size_t name_length, const char* function,
                                          size_t function_length, const char* const* inputs,
                                          const size_t* input_lengths, size_t input_count,
                                          const char* const* outputs, const size_t* output_lengths,
                                          size_t output_count, int64_t timeout_ms) {
  return guarded([&] {
    client_of(client).run_script(
        string_arg(name, name_length, "name"), string_arg(function, function_length, "function"),
        string_list_arg(inputs, input_lengths, input_count, "inputs"),
        string_list_arg(outputs, output_lengths, output_count, "outputs"), timeout_arg(timeout_ms));
  });
}

slipstream_status_t slipstream_run_script_with_keys(
    slipstream_client_t* client, const char* name, size_t name_length, const char* function,
    size_t function_length, const char* const* keys, const size_t* key_lengths, size_t key_count,
    const char* const* inputs, const size_t* input_lengths, size_t input_count,
    const char* const* args, const size_t* arg_lengths, size_t arg_count,
    const char* const* outputs, const size_t* output_lengths, size_t output_count,
    int64_t timeout_ms) {
  return guarded([&] {
    client_of(client).run_script(
        string_arg(name, name_length, "name"), string_arg(function, function_length, "function"),
        string_list_arg(keys, key_lengths, key_count, "keys"),
        string_list_arg(inputs, input_lengths, input_count, "inputs"),
        string_list_arg(args, arg_lengths, arg_count, "args"),
        string_list_arg(outputs, output_lengths, output_count, "outputs"), timeout_arg(timeout_ms));
  });
}

slipstream_status_t slipstream_delete_script(slipstream_client_t* client, const char* name,
                                             size_t name_length, int* existed) {
  return guarded([&] {
    flag_out(client_of(client).delete_script(string_arg(name, name_length, "name")), existed);
  });
}

slipstream_status_t slipstream_model_info(slipstream_client_t* client, const char* name,
                                          size_t name_length, slipstream_model_info_t* info) {
  return guarded([&] {
    slipstream::Client& cpp = client_of(client);
    deref(info, "info output pointer");
    const slipstream::ModelInfo stats = cpp.model_info(string_arg(name, name_length, "name"));
    slipstream_model_info_t filled{};
    ModelInfoStrings cleanup{&filled};
    string_out(stats.key, &filled.key, &filled.key_length, "key");
    string_out(stats.type, &filled.type, &filled.type_length, "type");
    string_out(stats.backend, &filled.backend, &filled.backend_length, "backend");
    string_out(stats.device, &filled.device, &filled.device_length, "device");
    string_out(stats.tag, &filled.tag, &filled.tag_length, "tag");
    filled.calls = stats.calls;
    filled.samples = stats.samples;
    filled.errors = stats.errors;
    filled.duration_us = stats.duration_us;
    filled.version = stats.version;
    filled.runs = stats.runs;
    filled.batches = stats.batches;
    filled.mean_batch_size = stats.mean_batch_size;
    filled.queue_wait_us = stats.queue_wait_us;
    filled.run_time_us = stats.run_time_us;
    *info = filled;
    cleanup.info = nullptr;
  });
}

slipstream_status_t slipstream_model_info_clear(slipstream_model_info_t* info) {
  if (info == nullptr) return SLIPSTREAM_OK;
  std::free(info->key);
  std::free(info->type);
  std::free(info->backend);
  std::free(info->device);
  std::free(info->tag);
  *info = slipstream_model_info_t{};
  return SLIPSTREAM_OK;
}

slipstream_status_t slipstream_reset_model_stats(slipstream_client_t* client, const char* name,
                                                 size_t name_length) {
  return guarded(
      [&] { client_of(client).reset_model_stats(string_arg(name, name_length, "name")); });
}

}  // extern "C"
