// SmartRedis::Client: SmartRedis 0.6's C++ client, as a thin layer over slipstream::Client, so
// that SmartRedis programs compile unchanged and relink against libslipstream_smartredis.
// Part of Slipstream's SmartRedis compatibility layer (docs/smartredis.md).
//
// Key names follow SmartRedis: with SSKEYOUT=out, put_tensor("x") writes "out.x"; with
// SSKEYIN=a,b reads use "a." (set_data_source picks another); tensors, datasets and lists are
// prefixed by default, models and scripts after use_model_ensemble_prefix(true).
//
// Errors: every method throws a SmartRedis::Exception subclass (srexception.h): KeyException
// for a missing key, TimeoutException, DatabaseException when the server cannot be reached,
// ParameterException for a bad argument, RuntimeException when the server refuses the request
// (its message quoted). Blocking: every call waits for the server's reply. A Client may be used
// by one thread at a time.
#ifndef SMARTREDIS_CPP_CLIENT_H
#define SMARTREDIS_CPP_CLIENT_H

#ifndef __cplusplus
#error "C programs include c_client.h, not the C++ header client.h"
#endif

#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "configoptions.h"
#include "dataset.h"
#include "sr_enums.h"
#include "srexception.h"
#include "srobject.h"

namespace SmartRedis {

/// Replies of INFO / CLUSTER INFO / AI.INFO as maps.
typedef std::unordered_map<std::string, std::string> parsed_reply_map;
typedef std::unordered_map<std::string, parsed_reply_map> parsed_reply_nested_map;

class Client : public SRObject {
 public:
  /// Connects as configured by the (unsuffixed) environment: SSDB, SR_DB_TYPE, SSKEYIN,
  /// SSKEYOUT. Throws RuntimeException if SSDB is not set, DatabaseException if the server
  /// cannot be reached.
  explicit Client(const char* logger_name);
  /// Connects as configured by `cfgopts` (ConfigOptions::create_from_environment(suffix)); a
  /// null pointer means the unsuffixed environment.
  explicit Client(const ConfigOptions* cfgopts, const std::string& logger_name = "default_client");
  /// Deprecated SmartRedis form: `cluster` instead of SR_DB_TYPE, the rest from the environment.
  explicit Client(bool cluster, const std::string& logger_name = "default_client");
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;
  Client(Client&&) noexcept;
  Client& operator=(Client&&) noexcept;
  ~Client() override;

  // ---- Datasets ------------------------------------------------------------------------------
  void put_dataset(DataSet& dataset);
  /// Throws KeyException if the dataset does not exist.
  DataSet get_dataset(const std::string& name);
  void rename_dataset(const std::string& old_name, const std::string& new_name);
  void copy_dataset(const std::string& src_name, const std::string& dest_name);
  void delete_dataset(const std::string& name);

  // ---- Tensors -------------------------------------------------------------------------------
  void put_tensor(const std::string& name, const void* data, const std::vector<size_t>& dims,
                  const SRTensorType type, const SRMemoryLayout mem_layout);
  /// The tensor in memory owned by this Client (valid until it is destroyed; use
  /// unpack_tensor for repeated large reads).
  void get_tensor(const std::string& name, void*& data, std::vector<size_t>& dims,
                  SRTensorType& type, const SRMemoryLayout mem_layout);
  void get_tensor(const std::string& name, void*& data, size_t*& dims, size_t& n_dims,
                  SRTensorType& type, const SRMemoryLayout mem_layout);
  /// Reads a tensor into the caller's memory; `dims` and `type` must match the stored tensor
  /// (ParameterException naming both otherwise).
  void unpack_tensor(const std::string& name, void* data, const std::vector<size_t>& dims,
                     const SRTensorType type, const SRMemoryLayout mem_layout);
  void rename_tensor(const std::string& old_name, const std::string& new_name);
  void delete_tensor(const std::string& name);
  void copy_tensor(const std::string& src_name, const std::string& dest_name);

  // ---- Models and scripts --------------------------------------------------------------------
  void set_model_from_file(const std::string& name, const std::string& model_file,
                           const std::string& backend, const std::string& device,
                           int batch_size = 0, int min_batch_size = 0, int min_batch_timeout = 0,
                           const std::string& tag = "",
                           const std::vector<std::string>& inputs = std::vector<std::string>(),
                           const std::vector<std::string>& outputs = std::vector<std::string>());
  /// Stores the model once per GPU (key "<name>.GPU:<n>", n = first_gpu ... first_gpu +
  /// num_gpus - 1) and once under <name> on "GPU", as SmartRedis does. Fails with
  /// RuntimeException quoting the server when it has no CUDA device.
  void set_model_from_file_multigpu(
      const std::string& name, const std::string& model_file, const std::string& backend,
      int first_gpu, int num_gpus, int batch_size = 0, int min_batch_size = 0,
      int min_batch_timeout = 0, const std::string& tag = "",
      const std::vector<std::string>& inputs = std::vector<std::string>(),
      const std::vector<std::string>& outputs = std::vector<std::string>());
  void set_model(const std::string& name, const std::string_view& model,
                 const std::string& backend, const std::string& device, int batch_size = 0,
                 int min_batch_size = 0, int min_batch_timeout = 0, const std::string& tag = "",
                 const std::vector<std::string>& inputs = std::vector<std::string>(),
                 const std::vector<std::string>& outputs = std::vector<std::string>());
  void set_model_multigpu(const std::string& name, const std::string_view& model,
                          const std::string& backend, int first_gpu, int num_gpus,
                          int batch_size = 0, int min_batch_size = 0, int min_batch_timeout = 0,
                          const std::string& tag = "",
                          const std::vector<std::string>& inputs = std::vector<std::string>(),
                          const std::vector<std::string>& outputs = std::vector<std::string>());
  /// The stored model's bytes, valid until this Client is destroyed.
  std::string_view get_model(const std::string& name);
  void set_script_from_file(const std::string& name, const std::string& device,
                            const std::string& script_file);
  void set_script_from_file_multigpu(const std::string& name, const std::string& script_file,
                                     int first_gpu, int num_gpus);
  void set_script(const std::string& name, const std::string& device,
                  const std::string_view& script);
  void set_script_multigpu(const std::string& name, const std::string_view& script,
                           int first_gpu, int num_gpus);
  /// The stored script's source, valid until this Client is destroyed.
  std::string_view get_script(const std::string& name);
  void run_model(const std::string& name, std::vector<std::string> inputs,
                 std::vector<std::string> outputs);
  /// Runs "<name>.GPU:<first_gpu + offset mod num_gpus>".
  void run_model_multigpu(const std::string& name, std::vector<std::string> inputs,
                          std::vector<std::string> outputs, int offset, int first_gpu,
                          int num_gpus);
  void run_script(const std::string& name, const std::string& function,
                  std::vector<std::string> inputs, std::vector<std::string> outputs);
  void run_script_multigpu(const std::string& name, const std::string& function,
                           std::vector<std::string> inputs, std::vector<std::string> outputs,
                           int offset, int first_gpu, int num_gpus);
  void delete_model(const std::string& name);
  void delete_model_multigpu(const std::string& name, int first_gpu, int num_gpus);
  void delete_script(const std::string& name);
  void delete_script_multigpu(const std::string& name, int first_gpu, int num_gpus);

  // ---- Existence and waiting -----------------------------------------------------------------
  /// The raw key (no prefix).
  bool key_exists(const std::string& key);
  bool model_exists(const std::string& name);
  bool tensor_exists(const std::string& name);
  bool dataset_exists(const std::string& name);
  /// Wait up to poll_frequency_ms * num_tries ms; true as soon as it exists.
  bool poll_key(const std::string& key, int poll_frequency_ms, int num_tries);
  bool poll_tensor(const std::string& name, int poll_frequency_ms, int num_tries);
  bool poll_dataset(const std::string& name, int poll_frequency_ms, int num_tries);
  bool poll_model(const std::string& name, int poll_frequency_ms, int num_tries);

  // ---- Ensemble prefixes ---------------------------------------------------------------------
  /// Selects one of the SSKEYIN prefixes for reads (RuntimeException if it is not one).
  void set_data_source(std::string source_id);
  void use_model_ensemble_prefix(bool use_prefix);
  void use_tensor_ensemble_prefix(bool use_prefix);
  void use_dataset_ensemble_prefix(bool use_prefix);
  void use_list_ensemble_prefix(bool use_prefix);

  // ---- Server administration (`address` is "host:port" of one server) ------------------------
  parsed_reply_nested_map get_db_node_info(const std::string address);
  /// CLUSTER INFO; RuntimeException when the server is not a cluster.
  parsed_reply_map get_db_cluster_info(const std::string address);
  parsed_reply_map get_ai_info(const std::string& address, const std::string& key,
                               const bool reset_stat);
  void flush_db(const std::string address);
  std::unordered_map<std::string, std::string> config_get(const std::string expression,
                                                          const std::string address);
  void config_set(const std::string config_param, const std::string value,
                  const std::string address);
  void save(const std::string address);
  /// AI.CONFIG MODEL_CHUNK_SIZE (for every client of the server).
  void set_model_chunk_size(int chunk_size);

  // ---- Aggregation lists ---------------------------------------------------------------------
  void append_to_list(const std::string& list_name, const DataSet& dataset);
  void delete_list(const std::string& list_name);
  void copy_list(const std::string& src_name, const std::string& dest_name);
  void rename_list(const std::string& src_name, const std::string& dest_name);
  int get_list_length(const std::string& list_name);
  bool poll_list_length(const std::string& name, int list_length, int poll_frequency_ms,
                        int num_tries);
  bool poll_list_length_gte(const std::string& name, int list_length, int poll_frequency_ms,
                            int num_tries);
  bool poll_list_length_lte(const std::string& name, int list_length, int poll_frequency_ms,
                            int num_tries);
  std::vector<DataSet> get_datasets_from_list(const std::string& list_name);
  std::vector<DataSet> get_dataset_list_range(const std::string& list_name, const int start_index,
                                              const int end_index);

  /// A summary: the address, the prefixes in use.
  std::string to_string() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

std::ostream& operator<<(std::ostream& stream, const Client& client);

}  // namespace SmartRedis

#endif  // SMARTREDIS_CPP_CLIENT_H
