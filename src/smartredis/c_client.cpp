// SmartRedis 0.6's C client functions (include/smartredis/c_client.h) over the Slipstream C API:
// each checks SmartRedis's arguments, calls its slipstream_* counterpart and maps the status to
// an SRError, keeping the message for SRGetLastError().
#include "c_client.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <new>
#include <thread>

#include "c_common.hpp"
#include "logger.h"
#include "sr_environment.hpp"
#include "sr_types.hpp"

using namespace slipstream::smartredis::c_api;
using slipstream::smartredis::client_options_from_environment;

namespace {

slipstream_client_t* native(void* c_client) { return client_of(c_client).client; }

SRError create_client(const char* location, void* config_options, const char* logger_name,
                      std::size_t length, void** new_client) {
  return guarded(location, [&] {
    require(new_client, "new_client");
    auto handle =
        std::make_unique<ClientHandle>(std::string(text(logger_name, length, "logger_name")));
    // The environment as the C++ layer reads it: SSDB (required), SR_DB_TYPE, SSKEYOUT, SSKEYIN,
    // SR_CONN_TIMEOUT, SR_CMD_TIMEOUT. The mode reaches the client through SR_DB_TYPE, which it
    // reads itself (the C options have no field for it).
    slipstream::ClientOptions options =
        config_options != nullptr
            ? slipstream::smartredis::client_options(configoptions_of(config_options))
            : client_options_from_environment(std::nullopt);
    slipstream_client_options_t c_options;
    check(slipstream_client_options_init(&c_options));
    c_options.address = options.address.data();
    c_options.address_length = options.address.size();
    if (options.password) {
      c_options.password = options.password->data();
      c_options.password_length = options.password->size();
    }
    c_options.connect_timeout_ms = options.connect_timeout.count();
    c_options.command_timeout_ms = options.command_timeout.count();
    if (options.key_prefix_out) {
      c_options.key_prefix_out = options.key_prefix_out->data();
      c_options.key_prefix_out_length = options.key_prefix_out->size();
    }
    if (options.key_prefixes_in) {
      c_options.key_prefixes_in = options.key_prefixes_in->data();
      c_options.key_prefixes_in_length = options.key_prefixes_in->size();
    }
    check(slipstream_client_create_with_options(&c_options, &handle->client));
    SmartRedis::log_data(handle->log_context, LLDebug,
                         "New client created, connected to " + options.address);
    *new_client = to_void(handle.release());
  });
}

// Model options as SmartRedis passes them; the strings are borrowed from the caller.
slipstream_model_options_t model_options(int batch_size, int min_batch_size, int min_batch_timeout,
                                         const char* tag, std::size_t tag_length,
                                         const char** inputs, const std::size_t* input_lengths,
                                         std::size_t n_inputs, const char** outputs,
                                         const std::size_t* output_lengths, std::size_t n_outputs) {
  slipstream::smartredis::check_batch_settings(batch_size, min_batch_size, min_batch_timeout);
  require_strings(inputs, n_inputs, "inputs");
  require_strings(outputs, n_outputs, "outputs");
  slipstream_model_options_t options;
  check(slipstream_model_options_init(&options));
  options.batch_size = batch_size;
  options.min_batch_size = min_batch_size;
  options.min_batch_timeout_ms = min_batch_timeout;
  if (tag != nullptr && tag_length > 0) {
    options.tag = tag;
    options.tag_length = tag_length;
  }
  options.inputs = inputs;
  options.input_lengths = input_lengths;
  options.input_count = n_inputs;
  options.outputs = outputs;
  options.output_lengths = output_lengths;
  options.output_count = n_outputs;
  return options;
}

// The GPUs of a *_multigpu call, checked: first_gpu >= 0, num_gpus >= 1.
void check_gpus(int first_gpu, int num_gpus) {
  if (first_gpu < 0)
    parameter_error("first_gpu is " + std::to_string(first_gpu) + "; expected >= 0");
  if (num_gpus < 1) parameter_error("num_gpus is " + std::to_string(num_gpus) + "; expected >= 1");
}

// SmartRedis's names for the per-GPU copies of a model or script: "name.GPU:i".
std::string gpu_name(std::string_view name, int gpu) {
  return std::string(name) + ".GPU:" + std::to_string(gpu);
}
std::string gpu_device(int gpu) { return "GPU:" + std::to_string(gpu); }

// Calls store(copy's name, device) for each GPU of a *_multigpu call, first_gpu onwards.
template <typename Store>
void for_each_gpu(const char* name, std::size_t name_length, int first_gpu, int num_gpus,
                  Store&& store) {
  check_gpus(first_gpu, num_gpus);
  std::string_view base = text(name, name_length, "name");
  for (int gpu = first_gpu; gpu < first_gpu + num_gpus; ++gpu) {
    store(gpu_name(base, gpu), gpu_device(gpu));
  }
}

// The GPU a multi-GPU run uses: first_gpu + offset mod num_gpus (offset: an MPI rank ...).
int run_gpu(int offset, int first_gpu, int num_gpus) {
  check_gpus(first_gpu, num_gpus);
  if (offset < 0) parameter_error("offset is " + std::to_string(offset) + "; expected >= 0");
  return first_gpu + offset % num_gpus;
}

// Polls `exists` up to num_tries times, poll_ms apart, for the calls the C API has no poll for.
template <typename Exists>
bool poll(int poll_ms, int num_tries, Exists&& exists) {
  if (poll_ms < 0 || num_tries < 1) {
    parameter_error("poll_frequency_ms must be >= 0 and num_tries >= 1");
  }
  for (int attempt = 0; attempt < num_tries; ++attempt) {
    if (exists()) return true;
    if (attempt + 1 < num_tries) std::this_thread::sleep_for(std::chrono::milliseconds(poll_ms));
  }
  return false;
}

void set_flag(bool* out, int flag) {
  require(out, "exists");
  *out = flag != 0;
}

// The calls that differ only in the Slipstream function they forward to.
using ExistsFunction = slipstream_status_t (*)(slipstream_client_t*, const char*, size_t, int*);
using PollFunction = slipstream_status_t (*)(slipstream_client_t*, const char*, size_t, int, int,
                                             int*);
using PollLengthFunction = slipstream_status_t (*)(slipstream_client_t*, const char*, size_t,
                                                   int64_t, int, int, int*);
using TwoNamesFunction = slipstream_status_t (*)(slipstream_client_t*, const char*, size_t,
                                                 const char*, size_t);
using FlagFunction = slipstream_status_t (*)(slipstream_client_t*, int);

SRError exists_call(const char* location, ExistsFunction function, void* c_client, const char* name,
                    size_t name_length, bool* exists) {
  return guarded(location, [&] {
    int flag = 0;
    check(function(native(c_client), name, name_length, &flag));
    set_flag(exists, flag);
  });
}

SRError poll_call(const char* location, PollFunction function, void* c_client, const char* name,
                  size_t name_length, int poll_ms, int num_tries, bool* exists) {
  return guarded(location, [&] {
    int flag = 0;
    check(function(native(c_client), name, name_length, poll_ms, num_tries, &flag));
    set_flag(exists, flag);
  });
}

SRError poll_length_call(const char* location, PollLengthFunction function, void* c_client,
                         const char* name, size_t name_length, int length, int poll_ms,
                         int num_tries, bool* reached) {
  return guarded(location, [&] {
    int flag = 0;
    check(function(native(c_client), name, name_length, length, poll_ms, num_tries, &flag));
    set_flag(reached, flag);
  });
}

SRError two_names_call(const char* location, TwoNamesFunction function, void* c_client,
                       const char* source, size_t source_length, const char* destination,
                       size_t destination_length) {
  return guarded(location, [&] {
    check(function(native(c_client), source, source_length, destination, destination_length));
  });
}

SRError flag_call(const char* location, FlagFunction function, void* c_client, bool flag) {
  return guarded(location, [&] { check(function(native(c_client), flag ? 1 : 0)); });
}

void kept_datasets_out(ClientHandle& client, slipstream_dataset_t** datasets, std::size_t count,
                       void*** out, std::size_t* num_datasets) {
  // Every slipstream handle goes into a DataSetHandle at once, so none leaks on a failure.
  std::vector<std::unique_ptr<DataSetHandle>> handles;
  for (std::size_t i = 0; i < count; ++i) {
    auto handle = std::make_unique<DataSetHandle>("");
    handle->dataset = datasets[i];
    const char* name = nullptr;
    std::size_t length = 0;
    if (slipstream_dataset_name(handle->dataset, &name, &length) == SLIPSTREAM_OK) {
      handle->log_context.assign(name, length);
    }
    datasets[i] = nullptr;
    handles.push_back(std::move(handle));
  }
  auto** array = reinterpret_cast<void**>(client.kept.allocate(count * sizeof(void*)));
  for (std::size_t i = 0; i < count; ++i) array[i] = to_void(handles[i].release());
  *out = array;
  *num_datasets = count;
}

// get_datasets_from_list and get_dataset_list_range: `fetch(array, count)` is the Slipstream call.
template <typename Fetch>
SRError datasets_from_list(const char* location, void* c_client, void*** datasets,
                           std::size_t* num_datasets, Fetch&& fetch) {
  return guarded(location, [&] {
    ClientHandle& client = client_of(c_client);
    require(datasets, "datasets");
    require(num_datasets, "num_datasets");
    slipstream_dataset_t** array = nullptr;
    std::size_t count = 0;
    check(fetch(client.client, &array, &count));
    struct ArrayGuard {
      slipstream_dataset_t** array;
      std::size_t count;
      ~ArrayGuard() { slipstream_dataset_array_destroy(&array, count); }
    } guard{array, count};
    kept_datasets_out(client, array, count, datasets, num_datasets);
  });
}

}  // namespace

extern "C" {

SRError SimpleCreateClient(const char* logger_name, const size_t logger_name_length,
                           void** new_client) {
  return create_client("SimpleCreateClient", nullptr, logger_name, logger_name_length, new_client);
}

SRError SmartRedisCClient(bool /*cluster: found from the server's replies*/,
                          const char* logger_name, const size_t logger_name_length,
                          void** new_client) {
  return create_client("SmartRedisCClient", nullptr, logger_name, logger_name_length, new_client);
}

SRError CreateClient(void* config_options, const char* logger_name, const size_t logger_name_length,
                     void** new_client) {
  if (config_options == nullptr) {
    set_last_error("config_options is NULL", "CreateClient");
    return SRParameterError;
  }
  return create_client("CreateClient", config_options, logger_name, logger_name_length, new_client);
}

SRError DeleteCClient(void** c_client) {
  return guarded("DeleteCClient", [&] {
    require(c_client, "c_client");
    if (*c_client != nullptr) {
      ClientHandle* handle = &client_of(*c_client);
      slipstream_client_destroy(&handle->client);
      delete handle;
    }
    *c_client = nullptr;
  });
}

// ---- Datasets -----------------------------------------------------------------------------------

SRError put_dataset(void* c_client, void* dataset) {
  return guarded("put_dataset", [&] {
    check(slipstream_put_dataset(native(c_client), dataset_of(dataset).dataset));
  });
}

SRError get_dataset(void* c_client, const char* name, const size_t name_length, void** dataset) {
  return guarded("get_dataset", [&] {
    require(dataset, "dataset");
    auto handle = std::make_unique<DataSetHandle>(std::string(text(name, name_length, "name")));
    check(slipstream_get_dataset(native(c_client), name, name_length, &handle->dataset));
    *dataset = to_void(handle.release());
  });
}

SRError rename_dataset(void* c_client, const char* old_name, const size_t old_name_length,
                       const char* new_name, const size_t new_name_length) {
  return two_names_call("rename_dataset", slipstream_rename_dataset, c_client, old_name,
                        old_name_length, new_name, new_name_length);
}

SRError copy_dataset(void* c_client, const char* src_name, const size_t src_name_length,
                     const char* dest_name, const size_t dest_name_length) {
  return two_names_call("copy_dataset", slipstream_copy_dataset, c_client, src_name,
                        src_name_length, dest_name, dest_name_length);
}

SRError delete_dataset(void* c_client, const char* name, const size_t name_length) {
  return guarded("delete_dataset",
                 [&] { check(slipstream_delete_dataset(native(c_client), name, name_length)); });
}

// ---- Tensors ------------------------------------------------------------------------------------

SRError put_tensor(void* c_client, const char* name, const size_t name_length, void* data,
                   const size_t* dims, const size_t n_dims, SRTensorType type,
                   SRMemoryLayout mem_layout) {
  return guarded("put_tensor", [&] {
    slipstream_client_t* client = native(c_client);
    put_from(data, dims, n_dims, type, mem_layout,
             [&](const void* bytes, const std::vector<std::int64_t>& shape,
                 slipstream_dtype_t dtype, slipstream_memory_order_t order) {
               return slipstream_put_tensor(client, name, name_length, bytes, shape.data(),
                                            shape.size(), dtype, order);
             });
  });
}

SRError get_tensor(void* c_client, const char* name, const size_t name_length, void** data,
                   size_t** dims, size_t* n_dims, SRTensorType* type, SRMemoryLayout mem_layout) {
  return guarded("get_tensor", [&] {
    ClientHandle& client = client_of(c_client);
    Layout layout = layout_of(mem_layout);
    slipstream_tensor_t* tensor = nullptr;
    check(slipstream_get_tensor(client.client, name, name_length, &tensor));
    struct TensorGuard {
      slipstream_tensor_t* tensor;
      ~TensorGuard() { slipstream_tensor_destroy(&tensor); }
    } guard{tensor};
    tensor_out(tensor, layout, client.kept, data, dims, n_dims, type);
  });
}

SRError unpack_tensor(void* c_client, const char* name, const size_t name_length, void* result,
                      const size_t* dims, const size_t n_dims, SRTensorType type,
                      SRMemoryLayout mem_layout) {
  return guarded("unpack_tensor", [&] {
    slipstream_client_t* client = native(c_client);
    unpack_into(result, dims, n_dims, type, mem_layout,
                [&](void* buffer, std::size_t bytes, const std::vector<std::int64_t>& shape,
                    slipstream_dtype_t dtype, slipstream_memory_order_t order) {
                  return slipstream_unpack_tensor(client, name, name_length, buffer, bytes,
                                                  shape.data(), shape.size(), dtype, order);
                });
  });
}

SRError rename_tensor(void* c_client, const char* old_name, const size_t old_name_length,
                      const char* new_name, const size_t new_name_length) {
  return two_names_call("rename_tensor", slipstream_rename_tensor, c_client, old_name,
                        old_name_length, new_name, new_name_length);
}

SRError delete_tensor(void* c_client, const char* name, const size_t name_length) {
  return guarded("delete_tensor", [&] {
    // As in SmartRedis, deleting a tensor that does not exist is not an error.
    check(slipstream_delete_tensor(native(c_client), name, name_length, nullptr));
  });
}

SRError copy_tensor(void* c_client, const char* src_name, const size_t src_name_length,
                    const char* dest_name, const size_t dest_name_length) {
  return two_names_call("copy_tensor", slipstream_copy_tensor, c_client, src_name, src_name_length,
                        dest_name, dest_name_length);
}

// ---- Models and scripts -------------------------------------------------------------------------

SRError set_model_from_file(void* c_client, const char* name, const size_t name_length,
                            const char* model_file, const size_t model_file_length,
                            const char* backend, const size_t backend_length, const char* device,
                            const size_t device_length, const int batch_size,
                            const int min_batch_size, const int min_batch_timeout, const char* tag,
                            const size_t tag_length, const char** inputs,
                            const size_t* input_lengths, const size_t n_inputs,
                            const char** outputs, const size_t* output_lengths,
                            const size_t n_outputs) {
  return guarded("set_model_from_file", [&] {
    slipstream_model_options_t options =
        model_options(batch_size, min_batch_size, min_batch_timeout, tag, tag_length, inputs,
                      input_lengths, n_inputs, outputs, output_lengths, n_outputs);
    check(slipstream_set_model_from_file(native(c_client), name, name_length, model_file,
                                         model_file_length, backend, backend_length, device,
                                         device_length, &options));
  });
}

SRError set_model_from_file_multigpu(void* c_client, const char* name, const size_t name_length,
                                     const char* model_file, const size_t model_file_length,
                                     const char* backend, const size_t backend_length,
                                     const int first_gpu, const int num_gpus, const int batch_size,
                                     const int min_batch_size, const int min_batch_timeout,
                                     const char* tag, const size_t tag_length, const char** inputs,
                                     const size_t* input_lengths, const size_t n_inputs,
                                     const char** outputs, const size_t* output_lengths,
                                     const size_t n_outputs) {
  return guarded("set_model_from_file_multigpu", [&] {
    slipstream_model_options_t options =
        model_options(batch_size, min_batch_size, min_batch_timeout, tag, tag_length, inputs,
                      input_lengths, n_inputs, outputs, output_lengths, n_outputs);
    for_each_gpu(name, name_length, first_gpu, num_gpus,
                 [&](const std::string& copy, const std::string& device) {
                   check(slipstream_set_model_from_file(
                       native(c_client), copy.data(), copy.size(), model_file, model_file_length,
                       backend, backend_length, device.data(), device.size(), &options));
                 });
  });
}

SRError set_model(void* c_client, const char* name, const size_t name_length, const char* model,
                  const size_t model_length, const char* backend, const size_t backend_length,
                  const char* device, const size_t device_length, const int batch_size,
                  const int min_batch_size, const int min_batch_timeout, const char* tag,
                  const size_t tag_length, const char** inputs, const size_t* input_lengths,
                  const size_t n_inputs, const char** outputs, const size_t* output_lengths,
                  const size_t n_outputs) {
  return guarded("set_model", [&] {
    slipstream_model_options_t options =
        model_options(batch_size, min_batch_size, min_batch_timeout, tag, tag_length, inputs,
                      input_lengths, n_inputs, outputs, output_lengths, n_outputs);
    check(slipstream_set_model(native(c_client), name, name_length, model, model_length, backend,
                               backend_length, device, device_length, &options));
  });
}

SRError set_model_multigpu(void* c_client, const char* name, const size_t name_length,
                           const char* model, const size_t model_length, const char* backend,
                           const size_t backend_length, const int first_gpu, const int num_gpus,
                           const int batch_size, const int min_batch_size,
                           const int min_batch_timeout, const char* tag, const size_t tag_length,
                           const char** inputs, const size_t* input_lengths, const size_t n_inputs,
                           const char** outputs, const size_t* output_lengths,
                           const size_t n_outputs) {
  return guarded("set_model_multigpu", [&] {
    slipstream_model_options_t options =
        model_options(batch_size, min_batch_size, min_batch_timeout, tag, tag_length, inputs,
                      input_lengths, n_inputs, outputs, output_lengths, n_outputs);
    for_each_gpu(name, name_length, first_gpu, num_gpus,
                 [&](const std::string& copy, const std::string& device) {
                   check(slipstream_set_model(native(c_client), copy.data(), copy.size(), model,
                                              model_length, backend, backend_length, device.data(),
                                              device.size(), &options));
                 });
  });
}

SRError get_model(void* c_client, const char* name, const size_t name_length, size_t* model_length,
                  const char** model) {
  return guarded("get_model", [&] {
    ClientHandle& client = client_of(c_client);
    require(model_length, "model_length");
    require(model, "model");
    char* bytes = nullptr;
    std::size_t length = 0;
    check(slipstream_get_model(client.client, name, name_length, &bytes, &length));
    std::byte* kept = client.kept.allocate(length + 1);
    std::copy_n(reinterpret_cast<const std::byte*>(bytes), length, kept);
    slipstream_free(bytes);
    *model = reinterpret_cast<const char*>(kept);
    *model_length = length;
  });
}

SRError set_script_from_file(void* c_client, const char* name, const size_t name_length,
                             const char* device, const size_t device_length,
                             const char* script_file, const size_t script_file_length) {
  return guarded("set_script_from_file", [&] {
    check(slipstream_set_script_from_file(native(c_client), name, name_length, device,
                                          device_length, script_file, script_file_length, nullptr,
                                          nullptr, 0));
  });
}

SRError set_script_from_file_multigpu(void* c_client, const char* name, const size_t name_length,
                                      const char* script_file, const size_t script_file_length,
                                      const int first_gpu, const int num_gpus) {
  return guarded("set_script_from_file_multigpu", [&] {
    for_each_gpu(name, name_length, first_gpu, num_gpus,
                 [&](const std::string& copy, const std::string& device) {
                   check(slipstream_set_script_from_file(native(c_client), copy.data(), copy.size(),
                                                         device.data(), device.size(), script_file,
                                                         script_file_length, nullptr, nullptr, 0));
                 });
  });
}

SRError set_script(void* c_client, const char* name, const size_t name_length, const char* device,
                   const size_t device_length, const char* script, const size_t script_length) {
  return guarded("set_script", [&] {
    check(slipstream_set_script(native(c_client), name, name_length, device, device_length, script,
                                script_length, nullptr, nullptr, 0));
  });
}

SRError set_script_multigpu(void* c_client, const char* name, const size_t name_length,
                            const char* script, const size_t script_length, const int first_gpu,
                            const int num_gpus) {
  return guarded("set_script_multigpu", [&] {
    for_each_gpu(
        name, name_length, first_gpu, num_gpus,
        [&](const std::string& copy, const std::string& device) {
          check(slipstream_set_script(native(c_client), copy.data(), copy.size(), device.data(),
                                      device.size(), script, script_length, nullptr, nullptr, 0));
        });
  });
}

SRError get_script(void* c_client, const char* name, const size_t name_length, const char** script,
                   size_t* script_length) {
  return guarded("get_script", [&] {
    ClientHandle& client = client_of(c_client);
    require(script, "script");
    require(script_length, "script_length");
    char* source = nullptr;
    std::size_t length = 0;
    check(slipstream_get_script(client.client, name, name_length, &source, &length));
    std::byte* kept = client.kept.allocate(length + 1);
    std::copy_n(reinterpret_cast<const std::byte*>(source), length, kept);
    slipstream_free(source);
    *script = reinterpret_cast<const char*>(kept);
    *script_length = length;
  });
}

SRError run_script(void* c_client, const char* name, const size_t name_length, const char* function,
                   const size_t function_length, const char** inputs, const size_t* input_lengths,
                   const size_t n_inputs, const char** outputs, const size_t* output_lengths,
                   const size_t n_outputs) {
  return guarded("run_script", [&] {
    require_strings(inputs, n_inputs, "inputs");
    require_strings(outputs, n_outputs, "outputs");
    check(slipstream_run_script(native(c_client), name, name_length, function, function_length,
                                inputs, input_lengths, n_inputs, outputs, output_lengths, n_outputs,
                                0));
  });
}

SRError run_script_multigpu(void* c_client, const char* name, const size_t name_length,
                            const char* function, const size_t function_length, const char** inputs,
                            const size_t* input_lengths, const size_t n_inputs,
                            const char** outputs, const size_t* output_lengths,
                            const size_t n_outputs, const int offset, const int first_gpu,
                            const int num_gpus) {
  return guarded("run_script_multigpu", [&] {
    require_strings(inputs, n_inputs, "inputs");
    require_strings(outputs, n_outputs, "outputs");
    std::string copy =
        gpu_name(text(name, name_length, "name"), run_gpu(offset, first_gpu, num_gpus));
    check(slipstream_run_script(native(c_client), copy.data(), copy.size(), function,
                                function_length, inputs, input_lengths, n_inputs, outputs,
                                output_lengths, n_outputs, 0));
  });
}

SRError run_model(void* c_client, const char* name, const size_t name_length, const char** inputs,
                  const size_t* input_lengths, const size_t n_inputs, const char** outputs,
                  const size_t* output_lengths, const size_t n_outputs) {
  return guarded("run_model", [&] {
    require_strings(inputs, n_inputs, "inputs");
    require_strings(outputs, n_outputs, "outputs");
    check(slipstream_run_model(native(c_client), name, name_length, inputs, input_lengths, n_inputs,
                               outputs, output_lengths, n_outputs, 0));
  });
}

SRError run_model_multigpu(void* c_client, const char* name, const size_t name_length,
                           const char** inputs, const size_t* input_lengths, const size_t n_inputs,
                           const char** outputs, const size_t* output_lengths,
                           const size_t n_outputs, const int offset, const int first_gpu,
                           const int num_gpus) {
  return guarded("run_model_multigpu", [&] {
    require_strings(inputs, n_inputs, "inputs");
    require_strings(outputs, n_outputs, "outputs");
    std::string copy =
        gpu_name(text(name, name_length, "name"), run_gpu(offset, first_gpu, num_gpus));
    check(slipstream_run_model(native(c_client), copy.data(), copy.size(), inputs, input_lengths,
                               n_inputs, outputs, output_lengths, n_outputs, 0));
  });
}

SRError delete_model(void* c_client, const char* name, const size_t name_length) {
  return guarded("delete_model", [&] {
    check(slipstream_delete_model(native(c_client), name, name_length, nullptr));
  });
}

SRError delete_model_multigpu(void* c_client, const char* name, const size_t name_length,
                              const int first_gpu, const int num_gpus) {
  return guarded("delete_model_multigpu", [&] {
    for_each_gpu(
        name, name_length, first_gpu, num_gpus, [&](const std::string& copy, const std::string&) {
          check(slipstream_delete_model(native(c_client), copy.data(), copy.size(), nullptr));
        });
  });
}

SRError delete_script(void* c_client, const char* name, const size_t name_length) {
  return guarded("delete_script", [&] {
    check(slipstream_delete_script(native(c_client), name, name_length, nullptr));
  });
}

SRError delete_script_multigpu(void* c_client, const char* name, const size_t name_length,
                               const int first_gpu, const int num_gpus) {
  return guarded("delete_script_multigpu", [&] {
    for_each_gpu(
        name, name_length, first_gpu, num_gpus, [&](const std::string& copy, const std::string&) {
          check(slipstream_delete_script(native(c_client), copy.data(), copy.size(), nullptr));
        });
  });
}

// ---- Existence and polling ----------------------------------------------------------------------

SRError key_exists(void* c_client, const char* key, const size_t key_length, bool* exists) {
  return exists_call("key_exists", slipstream_key_exists, c_client, key, key_length, exists);
}

SRError tensor_exists(void* c_client, const char* name, const size_t name_length, bool* exists) {
  return exists_call("tensor_exists", slipstream_tensor_exists, c_client, name, name_length,
                     exists);
}

SRError model_exists(void* c_client, const char* name, const size_t name_length, bool* exists) {
  return exists_call("model_exists", slipstream_model_exists, c_client, name, name_length, exists);
}

SRError dataset_exists(void* c_client, const char* name, const size_t name_length, bool* exists) {
  return exists_call("dataset_exists", slipstream_dataset_exists, c_client, name, name_length,
                     exists);
}

SRError poll_key(void* c_client, const char* key, const size_t key_length,
                 const int poll_frequency_ms, const int num_tries, bool* exists) {
  return poll_call("poll_key", slipstream_poll_key, c_client, key, key_length, poll_frequency_ms,
                   num_tries, exists);
}

SRError poll_model(void* c_client, const char* name, const size_t name_length,
                   const int poll_frequency_ms, const int num_tries, bool* exists) {
  return guarded("poll_model", [&] {
    slipstream_client_t* client = native(c_client);
    require(exists, "exists");
    *exists = poll(poll_frequency_ms, num_tries, [&] {
      int flag = 0;
      check(slipstream_model_exists(client, name, name_length, &flag));
      return flag != 0;
    });
  });
}

SRError poll_tensor(void* c_client, const char* name, const size_t name_length,
                    const int poll_frequency_ms, const int num_tries, bool* exists) {
  return poll_call("poll_tensor", slipstream_poll_tensor, c_client, name, name_length,
                   poll_frequency_ms, num_tries, exists);
}

SRError poll_dataset(void* c_client, const char* name, const size_t name_length,
                     const int poll_frequency_ms, const int num_tries, bool* exists) {
  return poll_call("poll_dataset", slipstream_poll_dataset, c_client, name, name_length,
                   poll_frequency_ms, num_tries, exists);
}

// ---- Ensemble prefixes --------------------------------------------------------------------------

SRError set_data_source(void* c_client, const char* source_id, const size_t source_id_length) {
  return guarded("set_data_source", [&] {
    check(slipstream_set_data_source(native(c_client), source_id, source_id_length));
  });
}

SRError use_tensor_ensemble_prefix(void* c_client, bool use_prefix) {
  return flag_call("use_tensor_ensemble_prefix", slipstream_use_tensor_ensemble_prefix, c_client,
                   use_prefix);
}

SRError use_dataset_ensemble_prefix(void* c_client, bool use_prefix) {
  return flag_call("use_dataset_ensemble_prefix", slipstream_use_dataset_ensemble_prefix, c_client,
                   use_prefix);
}

SRError use_model_ensemble_prefix(void* c_client, bool use_prefix) {
  return flag_call("use_model_ensemble_prefix", slipstream_use_model_ensemble_prefix, c_client,
                   use_prefix);
}

SRError use_list_ensemble_prefix(void* c_client, bool use_prefix) {
  return flag_call("use_list_ensemble_prefix", slipstream_use_list_ensemble_prefix, c_client,
                   use_prefix);
}

// ---- Aggregation lists --------------------------------------------------------------------------

SRError append_to_list(void* c_client, const char* list_name, const size_t list_name_length,
                       const void* dataset) {
  return guarded("append_to_list", [&] {
    check(slipstream_append_to_list(native(c_client), list_name, list_name_length,
                                    dataset_of(dataset).dataset));
  });
}

SRError delete_list(void* c_client, const char* list_name, const size_t list_name_length) {
  return guarded("delete_list", [&] {
    check(slipstream_delete_list(native(c_client), list_name, list_name_length));
  });
}

SRError copy_list(void* c_client, const char* src_name, const size_t src_name_length,
                  const char* dest_name, const size_t dest_name_length) {
  return two_names_call("copy_list", slipstream_copy_list, c_client, src_name, src_name_length,
                        dest_name, dest_name_length);
}

SRError rename_list(void* c_client, const char* src_name, const size_t src_name_length,
                    const char* dest_name, const size_t dest_name_length) {
  return two_names_call("rename_list", slipstream_rename_list, c_client, src_name, src_name_length,
                        dest_name, dest_name_length);
}

SRError get_list_length(void* c_client, const char* list_name, const size_t list_name_length,
                        int* result_length) {
  return guarded("get_list_length", [&] {
    require(result_length, "result_length");
    int64_t length = 0;
    check(slipstream_get_list_length(native(c_client), list_name, list_name_length, &length));
    if (length > std::numeric_limits<int>::max()) {
      throw Failure{SRRuntimeError,
                    "the list has " + std::to_string(length) + " entries, more than an int holds"};
    }
    *result_length = static_cast<int>(length);
  });
}

SRError poll_list_length(void* c_client, const char* name, const size_t name_length,
                         int list_length, int poll_frequency_ms, int num_tries, bool* poll_result) {
  return poll_length_call("poll_list_length", slipstream_poll_list_length, c_client, name,
                          name_length, list_length, poll_frequency_ms, num_tries, poll_result);
}

SRError poll_list_length_gte(void* c_client, const char* name, const size_t name_length,
                             int list_length, int poll_frequency_ms, int num_tries,
                             bool* poll_result) {
  return poll_length_call("poll_list_length_gte", slipstream_poll_list_length_gte, c_client, name,
                          name_length, list_length, poll_frequency_ms, num_tries, poll_result);
}

SRError poll_list_length_lte(void* c_client, const char* name, const size_t name_length,
                             int list_length, int poll_frequency_ms, int num_tries,
                             bool* poll_result) {
  return poll_length_call("poll_list_length_lte", slipstream_poll_list_length_lte, c_client, name,
                          name_length, list_length, poll_frequency_ms, num_tries, poll_result);
}

SRError get_datasets_from_list(void* c_client, const char* list_name, const size_t list_name_length,
                               void*** datasets, size_t* num_datasets) {
  return datasets_from_list(
      "get_datasets_from_list", c_client, datasets, num_datasets,
      [&](slipstream_client_t* client, slipstream_dataset_t*** array, std::size_t* count) {
        return slipstream_get_datasets_from_list(client, list_name, list_name_length, array, count);
      });
}

SRError get_dataset_list_range(void* c_client, const char* list_name, const size_t list_name_length,
                               const int start_index, const int end_index, void*** datasets,
                               size_t* num_datasets) {
  return datasets_from_list(
      "get_dataset_list_range", c_client, datasets, num_datasets,
      [&](slipstream_client_t* client, slipstream_dataset_t*** array, std::size_t* count) {
        return slipstream_get_dataset_list_range(client, list_name, list_name_length, start_index,
                                                 end_index, array, count);
      });
}

const char* client_to_string(void* c_client) {
  thread_local std::string description;
  SRError code = guarded("client_to_string", [&] {
    ClientHandle& client = client_of(c_client);
    const char* address = nullptr;
    std::size_t length = 0;
    check(slipstream_client_address(client.client, &address, &length));
    description =
        "Client (" + client.log_context + "): Slipstream server at " + std::string(address, length);
  });
  if (code != SRNoError) description = SRGetLastError();
  return description.c_str();
}

}  // extern "C"
