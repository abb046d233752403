// SmartRedis::Client over slipstream::Client: arguments are converted, the call forwarded, and
// Slipstream's errors rethrown as SmartRedis's exceptions (sr_errors.hpp). Key prefixes are
// applied by slipstream::Client, whose rules are SmartRedis's (client.h).
#include "client.h"

#include <fstream>
#include <sstream>
#include <thread>

#include "cpp_dataset_access.hpp"
#include "cpp_tensors.hpp"
#include "slipstream/client.hpp"
#include "sr_environment.hpp"
#include "sr_errors.hpp"
#include "sr_types.hpp"

namespace SmartRedis {

namespace sr = slipstream::smartredis;
using sr::DataSetAccess;
using sr::translate_errors;

struct Client::Impl {
  explicit Impl(slipstream::ClientOptions client_options)
      : options(std::move(client_options)), client(options) {
    if (options.key_prefixes_in) {
      std::string first = options.key_prefixes_in->substr(0, options.key_prefixes_in->find(','));
      data_source = first;
    }
  }

  /// A connection to one server of `address` ("host:port"), for the administration calls.
  slipstream::Client& node(const std::string& address) {
    auto found = nodes.find(address);
    if (found != nodes.end()) return *found->second;
    slipstream::ClientOptions node_options = options;
    node_options.address = address;
    node_options.cluster = slipstream::ClusterMode::kStandalone;
    auto inserted = nodes.emplace(address, std::make_unique<slipstream::Client>(node_options));
    return *inserted.first->second;
  }

  /// The key of a model or script as the server holds it (for the raw AI.INFO call).
  std::string model_key(const std::string& name) const {
    if (!client.model_ensemble_prefix_enabled() || data_source.empty()) return name;
    return data_source + "." + name;
  }

  slipstream::ClientOptions options;
  mutable slipstream::Client client;
  std::string data_source;  ///< the SSKEYIN prefix reads use (mirrors the client's)
  std::unordered_map<std::string, std::unique_ptr<slipstream::Client>> nodes;
  sr::KeptMemory kept;  ///< memory handed out by get_tensor, get_model, get_script
};

namespace {

slipstream::ModelOptions model_options(int batch_size, int min_batch_size, int min_batch_timeout,
                                       const std::string& tag,
                                       const std::vector<std::string>& inputs,
                                       const std::vector<std::string>& outputs) {
  sr::check_batch_settings(batch_size, min_batch_size, min_batch_timeout);
  slipstream::ModelOptions options;
  options.batch_size = batch_size;
  options.min_batch_size = min_batch_size;
  options.min_batch_timeout = std::chrono::milliseconds(min_batch_timeout);
  options.tag = tag;
  options.inputs = inputs;
  options.outputs = outputs;
  return options;
}

void check_gpus(int first_gpu, int num_gpus) {
  if (first_gpu < 0) throw SRParameterException("first_gpu must be a non-negative integer");
  if (num_gpus < 1) throw SRParameterException("num_gpus must be a positive integer");
}

std::string gpu_device(int gpu) { return "GPU:" + std::to_string(gpu); }

std::string read_file(const std::string& path, const char* what) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw SRParameterException(std::string("cannot read the ") + what + " file " + path);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

// Waits by asking every poll_frequency_ms, up to num_tries times, as SmartRedis does.
template <typename Check>
bool poll(int poll_frequency_ms, int num_tries, Check&& exists) {
  for (int i = 0; i < num_tries; ++i) {
    if (exists()) return true;
    if (i + 1 < num_tries) {
      std::this_thread::sleep_for(std::chrono::milliseconds(std::max(poll_frequency_ms, 0)));
    }
  }
  return false;
}

std::string reply_text(const slipstream::Reply& reply) {
  if (reply.is_integer() || reply.kind == slipstream::Reply::Kind::kBool) {
    return std::to_string(reply.integer);
  }
  if (reply.is_array()) {
    std::string text;
    for (const auto& element : reply.elements) text += (text.empty() ? "" : " ") + reply_text(element);
    return text;
  }
  return reply.string;
}

// "key:value" lines, with "# Section" headers when `sections` (INFO), into maps.
parsed_reply_nested_map parse_info(const std::string& text) {
  parsed_reply_nested_map result;
  std::string section = "default";
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    if (line[0] == '#') {
      std::size_t start = line.find_first_not_of("# ");
      section = start == std::string::npos ? "" : line.substr(start);
      result[section];
      continue;
    }
    std::size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    result[section][line.substr(0, colon)] = line.substr(colon + 1);
  }
  return result;
}

// A flat reply of alternating names and values into a map.
parsed_reply_map pairs_of(const slipstream::Reply& reply) {
  parsed_reply_map result;
  for (std::size_t i = 0; i + 1 < reply.elements.size(); i += 2) {
    result[reply_text(reply.elements[i])] = reply_text(reply.elements[i + 1]);
  }
  return result;
}

}  // namespace

// ---- Construction ---------------------------------------------------------------------------

Client::Client(const char* logger_name) : Client(nullptr, logger_name ? logger_name : "") {}

Client::Client(const ConfigOptions* cfgopts, const std::string& logger_name)
    : SRObject(logger_name) {
  impl_ = translate_errors("Client", [&] {
    std::unique_ptr<ConfigOptions> options =
        cfgopts ? std::unique_ptr<ConfigOptions>(cfgopts->clone())
                : ConfigOptions::create_from_environment("");
    return std::make_unique<Impl>(sr::client_options(*options));
  });
  log_data(LLDebug, "New client created, connected to " + impl_->client.address());
}

Client::Client(bool cluster, const std::string& logger_name) : SRObject(logger_name) {
  impl_ = translate_errors("Client", [&] {
    return std::make_unique<Impl>(sr::client_options_from_environment(cluster));
  });
  log_data(LLDebug, "New client created, connected to " + impl_->client.address());
}

Client::Client(Client&&) noexcept = default;
Client& Client::operator=(Client&&) noexcept = default;
Client::~Client() = default;

// ---- Datasets -------------------------------------------------------------------------------

void Client::put_dataset(DataSet& dataset) {
  translate_errors("put_dataset", [&] { impl_->client.put_dataset(DataSetAccess::native(dataset)); });
}

DataSet Client::get_dataset(const std::string& name) {
  return translate_errors("get_dataset",
                          [&] { return DataSetAccess::wrap(impl_->client.get_dataset(name)); });
}

void Client::rename_dataset(const std::string& old_name, const std::string& new_name) {
  translate_errors("rename_dataset", [&] { impl_->client.rename_dataset(old_name, new_name); });
}

void Client::copy_dataset(const std::string& src_name, const std::string& dest_name) {
  translate_errors("copy_dataset", [&] { impl_->client.copy_dataset(src_name, dest_name); });
}

void Client::delete_dataset(const std::string& name) {
  translate_errors("delete_dataset", [&] { impl_->client.delete_dataset(name); });
}

// ---- Tensors --------------------------------------------------------------------------------

void Client::put_tensor(const std::string& name, const void* data, const std::vector<size_t>& dims,
                        const SRTensorType type, const SRMemoryLayout mem_layout) {
  translate_errors("put_tensor", [&] {
    sr::CallerTensor tensor = sr::caller_tensor(data, dims, type, mem_layout);
    impl_->client.put_tensor(name, tensor.dtype, tensor.data, tensor.bytes, tensor.shape);
  });
}

void Client::get_tensor(const std::string& name, void*& data, std::vector<size_t>& dims,
                        SRTensorType& type, const SRMemoryLayout mem_layout) {
  translate_errors("get_tensor", [&] {
    slipstream::Tensor tensor = impl_->client.get_tensor(name);
    type = sr::tensor_type_of(tensor.dtype());
    data = sr::hand_out_tensor(tensor, mem_layout, impl_->kept);
    dims = sr::dims_of(tensor.shape());
  });
}

void Client::get_tensor(const std::string& name, void*& data, size_t*& dims, size_t& n_dims,
                        SRTensorType& type, const SRMemoryLayout mem_layout) {
  translate_errors("get_tensor", [&] {
    slipstream::Tensor tensor = impl_->client.get_tensor(name);
    type = sr::tensor_type_of(tensor.dtype());
    data = sr::hand_out_tensor(tensor, mem_layout, impl_->kept);
    dims = sr::hand_out_dims(tensor.shape(), impl_->kept);
    n_dims = tensor.shape().size();
  });
}

void Client::unpack_tensor(const std::string& name, void* data, const std::vector<size_t>& dims,
                           const SRTensorType type, const SRMemoryLayout mem_layout) {
  translate_errors("unpack_tensor", [&] {
    // One copy through a Tensor: the caller's dims and type are checked against the stored
    // ones before anything is written to its memory.
    slipstream::Tensor tensor = impl_->client.get_tensor(name);
    sr::unpack_into(tensor, name, data, dims, type, mem_layout);
  });
}

void Client::rename_tensor(const std::string& old_name, const std::string& new_name) {
  translate_errors("rename_tensor", [&] { impl_->client.rename_tensor(old_name, new_name); });
}

void Client::delete_tensor(const std::string& name) {
  translate_errors("delete_tensor", [&] { impl_->client.delete_tensor(name); });
}

void Client::copy_tensor(const std::string& src_name, const std::string& dest_name) {
  translate_errors("copy_tensor", [&] { impl_->client.copy_tensor(src_name, dest_name); });
}

// ---- Models and scripts ---------------------------------------------------------------------

void Client::set_model_from_file(const std::string& name, const std::string& model_file,
                                 const std::string& backend, const std::string& device,
                                 int batch_size, int min_batch_size, int min_batch_timeout,
                                 const std::string& tag, const std::vector<std::string>& inputs,
                                 const std::vector<std::string>& outputs) {
  translate_errors("set_model_from_file", [&] {
    std::string model = read_file(model_file, "model");
    set_model(name, model, backend, device, batch_size, min_batch_size, min_batch_timeout, tag,
              inputs, outputs);
  });
}

void Client::set_model_from_file_multigpu(const std::string& name, const std::string& model_file,
                                          const std::string& backend, int first_gpu,
                                          int num_gpus, int batch_size, int min_batch_size,
                                          int min_batch_timeout, const std::string& tag,
                                          const std::vector<std::string>& inputs,
                                          const std::vector<std::string>& outputs) {
  translate_errors("set_model_from_file_multigpu", [&] {
    std::string model = read_file(model_file, "model");
    set_model_multigpu(name, model, backend, first_gpu, num_gpus, batch_size, min_batch_size,
                       min_batch_timeout, tag, inputs, outputs);
  });
}

void Client::set_model(const std::string& name, const std::string_view& model,
                       const std::string& backend, const std::string& device, int batch_size,
                       int min_batch_size, int min_batch_timeout, const std::string& tag,
                       const std::vector<std::string>& inputs,
                       const std::vector<std::string>& outputs) {
  translate_errors("set_model", [&] {
    impl_->client.set_model(name, model, backend, device,
                            model_options(batch_size, min_batch_size, min_batch_timeout, tag,
                                          inputs, outputs));
  });
}

void Client::set_model_multigpu(const std::string& name, const std::string_view& model,
                                const std::string& backend, int first_gpu, int num_gpus,
                                int batch_size, int min_batch_size, int min_batch_timeout,
                                const std::string& tag, const std::vector<std::string>& inputs,
                                const std::vector<std::string>& outputs) {
  translate_errors("set_model_multigpu", [&] {
    check_gpus(first_gpu, num_gpus);
    slipstream::ModelOptions options =
        model_options(batch_size, min_batch_size, min_batch_timeout, tag, inputs, outputs);
    for (int gpu = first_gpu; gpu < first_gpu + num_gpus; ++gpu) {
      impl_->client.set_model(name + "." + gpu_device(gpu), model, backend, gpu_device(gpu),
                              options);
    }
    impl_->client.set_model(name, model, backend, "GPU", options);
  });
}

std::string_view Client::get_model(const std::string& name) {
  return translate_errors("get_model", [&] {
    auto model = std::make_shared<std::string>(impl_->client.get_model(name));
    impl_->kept.push_back(model);
    return std::string_view(*model);
  });
}

void Client::set_script_from_file(const std::string& name, const std::string& device,
                                  const std::string& script_file) {
  translate_errors("set_script_from_file", [&] {
    impl_->client.set_script(name, device, read_file(script_file, "script"));
  });
}

void Client::set_script_from_file_multigpu(const std::string& name,
                                           const std::string& script_file, int first_gpu,
                                           int num_gpus) {
  translate_errors("set_script_from_file_multigpu", [&] {
    set_script_multigpu(name, read_file(script_file, "script"), first_gpu, num_gpus);
  });
}

void Client::set_script(const std::string& name, const std::string& device,
                        const std::string_view& script) {
  translate_errors("set_script", [&] { impl_->client.set_script(name, device, script); });
}

void Client::set_script_multigpu(const std::string& name, const std::string_view& script,
                                 int first_gpu, int num_gpus) {
  translate_errors("set_script_multigpu", [&] {
    check_gpus(first_gpu, num_gpus);
    for (int gpu = first_gpu; gpu < first_gpu + num_gpus; ++gpu) {
      impl_->client.set_script(name + "." + gpu_device(gpu), gpu_device(gpu), script);
    }
    impl_->client.set_script(name, "GPU", script);
  });
}

std::string_view Client::get_script(const std::string& name) {
  return translate_errors("get_script", [&] {
    auto script = std::make_shared<std::string>(impl_->client.get_script(name));
    impl_->kept.push_back(script);
    return std::string_view(*script);
  });
}

void Client::run_model(const std::string& name, std::vector<std::string> inputs,
                       std::vector<std::string> outputs) {
  translate_errors("run_model", [&] { impl_->client.run_model(name, inputs, outputs); });
}

void Client::run_model_multigpu(const std::string& name, std::vector<std::string> inputs,
                                std::vector<std::string> outputs, int offset, int first_gpu,
                                int num_gpus) {
  translate_errors("run_model_multigpu", [&] {
    check_gpus(first_gpu, num_gpus);
    int gpu = first_gpu + ((offset % num_gpus) + num_gpus) % num_gpus;
    impl_->client.run_model(name + "." + gpu_device(gpu), inputs, outputs);
  });
}

void Client::run_script(const std::string& name, const std::string& function,
                        std::vector<std::string> inputs, std::vector<std::string> outputs) {
  translate_errors("run_script",
                   [&] { impl_->client.run_script(name, function, inputs, outputs); });
}

void Client::run_script_multigpu(const std::string& name, const std::string& function,
                                 std::vector<std::string> inputs,
                                 std::vector<std::string> outputs, int offset, int first_gpu,
                                 int num_gpus) {
  translate_errors("run_script_multigpu", [&] {
    check_gpus(first_gpu, num_gpus);
    int gpu = first_gpu + ((offset % num_gpus) + num_gpus) % num_gpus;
    impl_->client.run_script(name + "." + gpu_device(gpu), function, inputs, outputs);
  });
}

void Client::delete_model(const std::string& name) {
  translate_errors("delete_model", [&] {
    if (!impl_->client.delete_model(name)) {
      throw SRRuntimeException("delete_model: there is no model named '" + name + "'");
    }
  });
}

void Client::delete_model_multigpu(const std::string& name, int first_gpu, int num_gpus) {
  translate_errors("delete_model_multigpu", [&] {
    check_gpus(first_gpu, num_gpus);
    for (int gpu = first_gpu; gpu < first_gpu + num_gpus; ++gpu) {
      delete_model(name + "." + gpu_device(gpu));
    }
    delete_model(name);
  });
}

void Client::delete_script(const std::string& name) {
  translate_errors("delete_script", [&] {
    if (!impl_->client.delete_script(name)) {
      throw SRRuntimeException("delete_script: there is no script named '" + name + "'");
    }
  });
}

void Client::delete_script_multigpu(const std::string& name, int first_gpu, int num_gpus) {
  translate_errors("delete_script_multigpu", [&] {
    check_gpus(first_gpu, num_gpus);
    for (int gpu = first_gpu; gpu < first_gpu + num_gpus; ++gpu) {
      delete_script(name + "." + gpu_device(gpu));
    }
    delete_script(name);
  });
}

// ---- Existence and waiting ------------------------------------------------------------------

bool Client::key_exists(const std::string& key) {
  return translate_errors("key_exists", [&] { return impl_->client.key_exists(key); });
}

bool Client::model_exists(const std::string& name) {
  return translate_errors("model_exists", [&] { return impl_->client.model_exists(name); });
}

bool Client::tensor_exists(const std::string& name) {
  return translate_errors("tensor_exists", [&] { return impl_->client.tensor_exists(name); });
}

bool Client::dataset_exists(const std::string& name) {
  return translate_errors("dataset_exists", [&] { return impl_->client.dataset_exists(name); });
}

bool Client::poll_key(const std::string& key, int poll_frequency_ms, int num_tries) {
  return translate_errors("poll_key", [&] {
    return impl_->client.poll_key(key, poll_frequency_ms, num_tries);
  });
}

bool Client::poll_tensor(const std::string& name, int poll_frequency_ms, int num_tries) {
  return translate_errors("poll_tensor", [&] {
    return impl_->client.poll_tensor(name, poll_frequency_ms, num_tries);
  });
}

bool Client::poll_dataset(const std::string& name, int poll_frequency_ms, int num_tries) {
  return translate_errors("poll_dataset", [&] {
    return impl_->client.poll_dataset(name, poll_frequency_ms, num_tries);
  });
}

bool Client::poll_model(const std::string& name, int poll_frequency_ms, int num_tries) {
  return translate_errors("poll_model", [&] {
    return poll(poll_frequency_ms, num_tries, [&] { return impl_->client.model_exists(name); });
  });
}

// ---- Ensemble prefixes ----------------------------------------------------------------------

void Client::set_data_source(std::string source_id) {
  try {
    impl_->client.set_data_source(source_id);
    impl_->data_source = source_id;
  } catch (const slipstream::Error& error) {
    throw SRRuntimeException(std::string("set_data_source: ") + error.what());
  }
}

void Client::use_model_ensemble_prefix(bool use_prefix) {
  impl_->client.use_model_ensemble_prefix(use_prefix);
}
void Client::use_tensor_ensemble_prefix(bool use_prefix) {
  impl_->client.use_tensor_ensemble_prefix(use_prefix);
}
void Client::use_dataset_ensemble_prefix(bool use_prefix) {
  impl_->client.use_dataset_ensemble_prefix(use_prefix);
}
void Client::use_list_ensemble_prefix(bool use_prefix) {
  impl_->client.use_list_ensemble_prefix(use_prefix);
}

// ---- Server administration ------------------------------------------------------------------

parsed_reply_nested_map Client::get_db_node_info(const std::string address) {
  return translate_errors("get_db_node_info", [&] {
    return parse_info(impl_->node(address).command({"INFO", "everything"}).string);
  });
}

parsed_reply_map Client::get_db_cluster_info(const std::string address) {
  return translate_errors("get_db_cluster_info", [&] {
    parsed_reply_nested_map parsed =
        parse_info(impl_->node(address).command({"CLUSTER", "INFO"}).string);
    return parsed["default"];
  });
}

parsed_reply_map Client::get_ai_info(const std::string& address, const std::string& key,
                                     const bool reset_stat) {
  return translate_errors("get_ai_info", [&] {
    std::string model_key = impl_->model_key(key);
    std::vector<std::string_view> command{"AI.INFO", model_key};
    if (reset_stat) command.push_back("RESETSTAT");
    return pairs_of(impl_->node(address).command(command));
  });
}

void Client::flush_db(const std::string address) {
  translate_errors("flush_db", [&] { impl_->node(address).command({"FLUSHDB"}); });
}

std::unordered_map<std::string, std::string> Client::config_get(const std::string expression,
                                                                const std::string address) {
  return translate_errors("config_get", [&] {
    return pairs_of(impl_->node(address).command({"CONFIG", "GET", expression}));
  });
}

void Client::config_set(const std::string config_param, const std::string value,
                        const std::string address) {
  translate_errors("config_set", [&] {
    impl_->node(address).command({"CONFIG", "SET", config_param, value});
  });
}

void Client::save(const std::string address) {
  translate_errors("save", [&] { impl_->node(address).command({"SAVE"}); });
}

void Client::set_model_chunk_size(int chunk_size) {
  translate_errors("set_model_chunk_size",
                   [&] { impl_->client.set_model_chunk_size(chunk_size); });
}

// ---- Aggregation lists ----------------------------------------------------------------------

void Client::append_to_list(const std::string& list_name, const DataSet& dataset) {
  translate_errors("append_to_list", [&] {
    impl_->client.append_to_list(list_name, DataSetAccess::native(dataset));
  });
}

void Client::delete_list(const std::string& list_name) {
  translate_errors("delete_list", [&] { impl_->client.delete_list(list_name); });
}

void Client::copy_list(const std::string& src_name, const std::string& dest_name) {
  translate_errors("copy_list", [&] { impl_->client.copy_list(src_name, dest_name); });
}

void Client::rename_list(const std::string& src_name, const std::string& dest_name) {
  translate_errors("rename_list", [&] { impl_->client.rename_list(src_name, dest_name); });
}

int Client::get_list_length(const std::string& list_name) {
  return translate_errors("get_list_length", [&] {
    return static_cast<int>(impl_->client.get_list_length(list_name));
  });
}

bool Client::poll_list_length(const std::string& name, int list_length, int poll_frequency_ms,
                              int num_tries) {
  return translate_errors("poll_list_length", [&] {
    return impl_->client.poll_list_length(name, list_length, poll_frequency_ms, num_tries);
  });
}

bool Client::poll_list_length_gte(const std::string& name, int list_length,
                                  int poll_frequency_ms, int num_tries) {
  return translate_errors("poll_list_length_gte", [&] {
    return impl_->client.poll_list_length_gte(name, list_length, poll_frequency_ms, num_tries);
  });
}

bool Client::poll_list_length_lte(const std::string& name, int list_length,
                                  int poll_frequency_ms, int num_tries) {
  return translate_errors("poll_list_length_lte", [&] {
    return impl_->client.poll_list_length_lte(name, list_length, poll_frequency_ms, num_tries);
  });
}

namespace {
std::vector<DataSet> wrap_all(std::vector<slipstream::DataSet> datasets) {
  std::vector<DataSet> result;
  result.reserve(datasets.size());
  for (auto& dataset : datasets) result.push_back(DataSetAccess::wrap(std::move(dataset)));
  return result;
}
}  // namespace

std::vector<DataSet> Client::get_datasets_from_list(const std::string& list_name) {
  return translate_errors("get_datasets_from_list", [&] {
    return wrap_all(impl_->client.get_datasets_from_list(list_name));
  });
}

std::vector<DataSet> Client::get_dataset_list_range(const std::string& list_name,
                                                    const int start_index, const int end_index) {
  return translate_errors("get_dataset_list_range", [&] {
    return wrap_all(impl_->client.get_dataset_list_range(list_name, start_index, end_index));
  });
}

std::string Client::to_string() const {
  std::ostringstream text;
  text << "Client (" << get_context() << "): connected to " << impl_->client.address()
       << "\n  write prefix (SSKEYOUT): '" << impl_->options.key_prefix_out.value_or("")
       << "'\n  read prefixes (SSKEYIN): '" << impl_->options.key_prefixes_in.value_or("")
       << "', data source '" << impl_->data_source << "'\n";
  return text.str();
}

std::ostream& operator<<(std::ostream& stream, const Client& client) {
  return stream << client.to_string();
}

}  // namespace SmartRedis
