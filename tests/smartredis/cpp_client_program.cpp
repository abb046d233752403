// A SmartRedis 0.6 C++ program, written against SmartRedis's documented API only (headers
// "client.h", "dataset.h", "configoptions.h", "logcontext.h", "logger.h"), run unchanged against
// a Slipstream server through libslipstream_smartredis. It expects SSDB to name the server and
// checks every result; it exits non-zero, saying which check failed, on the first mismatch.
// Environment for the prefix checks is set by the program itself (setenv before creating the
// clients that use it), as SmartSim would set it for an ensemble member.
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "client.h"
#include "configoptions.h"
#include "dataset.h"
#include "logcontext.h"
#include "logger.h"

namespace {

int failures = 0;

void check(bool ok, const std::string& what) {
  if (!ok) {
    std::cerr << "FAILED: " << what << "\n";
    ++failures;
  }
}

template <typename Exception, typename Call>
void check_throws(Call&& call, const std::string& what, const std::string& message_part = "") {
  try {
    call();
    check(false, what + " (no exception)");
  } catch (const Exception& e) {
    check(message_part.empty() || std::string(e.what()).find(message_part) != std::string::npos,
          what + " (message: " + e.what() + ")");
  } catch (const std::exception& e) {
    check(false, what + " (wrong exception: " + e.what() + ")");
  }
}

void tensors(SmartRedis::Client& client) {
  // put / get / unpack of a contiguous 2-D double tensor
  std::vector<double> values(3 * 4);
  for (size_t i = 0; i < values.size(); ++i) values[i] = 0.5 * i;
  std::vector<size_t> dims = {3, 4};
  client.put_tensor("cpp_tensor", values.data(), dims, SRTensorTypeDouble, SRMemLayoutContiguous);
  check(client.tensor_exists("cpp_tensor"), "tensor_exists after put_tensor");
  check(client.key_exists("cpp_tensor"), "key_exists on the unprefixed key");

  void* data = nullptr;
  std::vector<size_t> got_dims;
  SRTensorType type = SRTensorTypeInvalid;
  client.get_tensor("cpp_tensor", data, got_dims, type, SRMemLayoutContiguous);
  check(type == SRTensorTypeDouble, "get_tensor type");
  check(got_dims == dims, "get_tensor dims");
  check(std::memcmp(data, values.data(), values.size() * sizeof(double)) == 0,
        "get_tensor values");

  // nested layout: double** rows
  double** nested = nullptr;
  client.get_tensor("cpp_tensor", data, got_dims, type, SRMemLayoutNested);
  nested = static_cast<double**>(data);
  check(nested[2][3] == values[11] && nested[1][0] == values[4], "get_tensor nested values");

  std::vector<double> unpacked(12, -1.0);
  client.unpack_tensor("cpp_tensor", unpacked.data(), {12}, SRTensorTypeDouble,
                       SRMemLayoutContiguous);
  check(unpacked == values, "unpack_tensor contiguous");
  std::vector<double> rows_storage(12, 0.0);
  std::vector<double*> rows = {&rows_storage[0], &rows_storage[4], &rows_storage[8]};
  client.unpack_tensor("cpp_tensor", rows.data(), dims, SRTensorTypeDouble, SRMemLayoutNested);
  check(rows_storage == values, "unpack_tensor nested");

  // put from nested memory
  float row0[2] = {1.0f, 2.0f}, row1[2] = {3.0f, 4.0f};
  float* float_rows[2] = {row0, row1};
  client.put_tensor("cpp_nested", float_rows, {2, 2}, SRTensorTypeFloat, SRMemLayoutNested);
  float flat[4] = {};
  client.unpack_tensor("cpp_nested", flat, {2, 2}, SRTensorTypeFloat, SRMemLayoutContiguous);
  check(flat[0] == 1.0f && flat[3] == 4.0f, "put_tensor from nested memory");

  // wrong type or shape: ParameterException naming the stored shape
  check_throws<SmartRedis::ParameterException>(
      [&] {
        std::vector<float> wrong(12);
        client.unpack_tensor("cpp_tensor", wrong.data(), dims, SRTensorTypeFloat,
                             SRMemLayoutContiguous);
      },
      "unpack_tensor with the wrong type", "DOUBLE");
  check_throws<SmartRedis::ParameterException>(
      [&] {
        std::vector<double> small(6);
        client.unpack_tensor("cpp_tensor", small.data(), {2, 3}, SRTensorTypeDouble,
                             SRMemLayoutContiguous);
      },
      "unpack_tensor with the wrong dims", "[3, 4]");

  client.copy_tensor("cpp_tensor", "cpp_tensor_copy");
  client.rename_tensor("cpp_tensor_copy", "cpp_tensor_renamed");
  check(!client.tensor_exists("cpp_tensor_copy") && client.tensor_exists("cpp_tensor_renamed"),
        "copy_tensor + rename_tensor");
  client.delete_tensor("cpp_tensor_renamed");
  check(!client.tensor_exists("cpp_tensor_renamed"), "delete_tensor");
  check(client.poll_tensor("cpp_tensor", 10, 3), "poll_tensor of an existing tensor");
  check(!client.poll_key("cpp_never_there", 5, 2), "poll_key of a missing key");

  check_throws<SmartRedis::KeyException>(
      [&] { client.get_tensor("cpp_missing", data, got_dims, type, SRMemLayoutContiguous); },
      "get_tensor of a missing tensor", "cpp_missing");
}

void datasets(SmartRedis::Client& client) {
  SmartRedis::DataSet dataset("cpp_dataset");
  std::vector<int32_t> ints = {1, 2, 3, 4, 5, 6};
  dataset.add_tensor("ints", ints.data(), {2, 3}, SRTensorTypeInt32, SRMemLayoutContiguous);
  double time = 12.5;
  dataset.add_meta_scalar("time", &time, SRMetadataTypeDouble);
  int64_t step = 7;
  dataset.add_meta_scalar("step", &step, SRMetadataTypeInt64);
  dataset.add_meta_string("units", "m/s");
  client.put_dataset(dataset);
  check(client.dataset_exists("cpp_dataset"), "dataset_exists after put_dataset");
  check(client.poll_dataset("cpp_dataset", 10, 3), "poll_dataset");

  SmartRedis::DataSet got = client.get_dataset("cpp_dataset");
  check(got.get_name() == "cpp_dataset", "get_dataset name");
  check(got.get_tensor_names() == std::vector<std::string>{"ints"}, "get_tensor_names");
  check(got.get_tensor_type("ints") == SRTensorTypeInt32, "get_tensor_type");
  check(got.get_tensor_dims("ints") == std::vector<size_t>{2, 3}, "get_tensor_dims");
  std::vector<int32_t> back(6);
  got.unpack_tensor("ints", back.data(), {2, 3}, SRTensorTypeInt32, SRMemLayoutContiguous);
  check(back == ints, "DataSet::unpack_tensor");
  void* scalars = nullptr;
  size_t length = 0;
  SRMetaDataType meta_type = SRMetadataTypeInvalid;
  got.get_meta_scalars("time", scalars, length, meta_type);
  check(length == 1 && meta_type == SRMetadataTypeDouble &&
            *static_cast<double*>(scalars) == 12.5,
        "get_meta_scalars double");
  got.get_meta_scalars("step", scalars, length, meta_type);
  check(length == 1 && meta_type == SRMetadataTypeInt64 && *static_cast<int64_t*>(scalars) == 7,
        "get_meta_scalars int64");
  check(got.get_meta_strings("units") == std::vector<std::string>{"m/s"}, "get_meta_strings");
  check(got.get_metadata_field_type("units") == SRMetadataTypeString, "metadata field type");

  client.copy_dataset("cpp_dataset", "cpp_dataset_copy");
  client.rename_dataset("cpp_dataset_copy", "cpp_dataset_moved");
  check(!client.dataset_exists("cpp_dataset_copy") && client.dataset_exists("cpp_dataset_moved"),
        "copy_dataset + rename_dataset");
  client.delete_dataset("cpp_dataset_moved");
  check(!client.dataset_exists("cpp_dataset_moved"), "delete_dataset");

  // aggregation lists
  client.delete_list("cpp_list");
  for (int i = 0; i < 3; ++i) {
    SmartRedis::DataSet member("cpp_member_" + std::to_string(i));
    member.add_tensor("value", &i, {1}, SRTensorTypeInt32, SRMemLayoutContiguous);
    client.put_dataset(member);
    client.append_to_list("cpp_list", member);
  }
  check(client.get_list_length("cpp_list") == 3, "get_list_length");
  check(client.poll_list_length("cpp_list", 3, 10, 3), "poll_list_length");
  check(client.poll_list_length_gte("cpp_list", 2, 10, 3), "poll_list_length_gte");
  check(!client.poll_list_length_lte("cpp_list", 1, 5, 2), "poll_list_length_lte");
  std::vector<SmartRedis::DataSet> members = client.get_datasets_from_list("cpp_list");
  check(members.size() == 3 && members[2].get_name() == "cpp_member_2",
        "get_datasets_from_list");
  std::vector<SmartRedis::DataSet> range = client.get_dataset_list_range("cpp_list", 1, 2);
  check(range.size() == 2 && range[0].get_name() == "cpp_member_1", "get_dataset_list_range");
  client.copy_list("cpp_list", "cpp_list_copy");
  check(client.get_list_length("cpp_list_copy") == 3, "copy_list");
  client.rename_list("cpp_list_copy", "cpp_list_moved");
  check(client.get_list_length("cpp_list_moved") == 3 && client.get_list_length("cpp_list_copy") == 0,
        "rename_list");
}

void scripts(SmartRedis::Client& client) {
  const std::string script =
      "def add_one(x):\n"
      "    return x + 1\n";
  client.set_script("cpp_script", "CPU", script);
  check(client.model_exists("cpp_script"), "model_exists of a script");
  check(std::string(client.get_script("cpp_script")) == script, "get_script");
  float in[3] = {1, 2, 3};
  client.put_tensor("cpp_script_in", in, {3}, SRTensorTypeFloat, SRMemLayoutContiguous);
  client.run_script("cpp_script", "add_one", {"cpp_script_in"}, {"cpp_script_out"});
  float out[3] = {};
  client.unpack_tensor("cpp_script_out", out, {3}, SRTensorTypeFloat, SRMemLayoutContiguous);
  check(out[0] == 2 && out[2] == 4, "run_script result");
  client.delete_script("cpp_script");
  check(!client.model_exists("cpp_script"), "delete_script");
  check_throws<SmartRedis::RuntimeException>([&] { client.delete_script("cpp_script"); },
                                             "delete_script of a missing script", "cpp_script");
}

// SmartRedis's checks of set_model's batching arguments, made before anything is sent (so that
// bytes that are no model never reach the server).
void batching(SmartRedis::Client& client) {
  const std::string_view not_a_model("not a model");
  check_throws<SmartRedis::RuntimeException>(
      [&] { client.set_model("cpp_batched", not_a_model, "TORCH", "CPU", 0, 0, 5); },
      "min_batch_timeout without batch_size", "batch_size must be non-zero");
  check_throws<SmartRedis::RuntimeException>(
      [&] { client.set_model("cpp_batched", not_a_model, "TORCH", "CPU", 0, 2, 0); },
      "min_batch_size without batch_size", "batch_size must be non-zero");
  check_throws<SmartRedis::RuntimeException>(
      [&] { client.set_model("cpp_batched", not_a_model, "TORCH", "CPU", 4, 0, 5); },
      "min_batch_timeout without min_batch_size", "min_batch_size must be non-zero");
  check_throws<SmartRedis::ParameterException>(
      [&] { client.set_model("cpp_batched", not_a_model, "TORCH", "CPU", -1, 0, 0); },
      "a negative batch_size", "negative");
  check_throws<SmartRedis::RuntimeException>(
      [&] { client.set_model_multigpu("cpp_batched", not_a_model, "TORCH", 0, 1, 0, 0, 5); },
      "set_model_multigpu: min_batch_timeout without batch_size", "batch_size");
  check(!client.model_exists("cpp_batched"), "nothing stored by refused set_model calls");
}

void administration(SmartRedis::Client& client, const std::string& address) {
  SmartRedis::parsed_reply_nested_map info = client.get_db_node_info(address);
  check(!info.empty(), "get_db_node_info");
  client.config_set("lua-time-limit", "5000", address);  // sent by SmartSim's set-up
  std::unordered_map<std::string, std::string> config = client.config_get("maxmemory", address);
  check(config.count("maxmemory") == 1, "config_get maxmemory");
}

void prefixes(const std::string& address) {
  // An ensemble member writing under SSKEYOUT and reading two sources through SSKEYIN.
  setenv("SSKEYOUT", "member_0", 1);
  setenv("SSKEYIN", "member_1,member_0", 1);
  SmartRedis::Client member(false, "cpp_member");
  float value = 3.5f;
  member.put_tensor("field", &value, {1}, SRTensorTypeFloat, SRMemLayoutContiguous);

  unsetenv("SSKEYOUT");
  unsetenv("SSKEYIN");
  SmartRedis::Client plain("cpp_plain");
  check(plain.key_exists("member_0.field"), "SSKEYOUT prefixes puts with '.'");
  check(!member.tensor_exists("field"), "reads use the first SSKEYIN prefix (member_1)");
  member.set_data_source("member_0");
  check(member.tensor_exists("field"), "set_data_source selects another SSKEYIN prefix");
  check_throws<SmartRedis::RuntimeException>([&] { member.set_data_source("member_9"); },
                                             "set_data_source of an unknown prefix", "member_9");
  member.use_tensor_ensemble_prefix(false);
  member.put_tensor("raw_field", &value, {1}, SRTensorTypeFloat, SRMemLayoutContiguous);
  check(plain.key_exists("raw_field"), "use_tensor_ensemble_prefix(false)");

  SmartRedis::DataSet dataset("member_data");
  dataset.add_meta_string("origin", "member_0");
  member.put_dataset(dataset);
  check(plain.key_exists("member_0.{member_data}.meta"), "datasets: prefix.{name}.meta");
  (void)address;
}

void configuration(const std::string& address) {
  // A second database reached through suffixed variables, as SmartSim's multi-database set-up.
  setenv("SSDB_second", address.c_str(), 1);
  setenv("SR_DB_TYPE_second", "Standalone", 1);
  std::unique_ptr<SmartRedis::ConfigOptions> options =
      SmartRedis::ConfigOptions::create_from_environment("second");
  check(options->is_configured("SSDB"), "ConfigOptions reads SSDB_second");
  check(options->get_string_option("SR_DB_TYPE") == "Standalone", "get_string_option");
  check_throws<SmartRedis::KeyException>([&] { options->get_integer_option("SR_NOT_SET"); },
                                         "get_integer_option of an unset option");
  options->override_integer_option("SR_CONN_TIMEOUT", 2000);
  check(options->get_integer_option("SR_CONN_TIMEOUT") == 2000, "override_integer_option");
  SmartRedis::Client client(options.get(), "cpp_second");
  int one = 1;
  client.put_tensor("cpp_through_second", &one, {1}, SRTensorTypeInt32, SRMemLayoutContiguous);
  check(client.tensor_exists("cpp_through_second"), "Client(ConfigOptions*)");

  setenv("SSDB_broken", "", 1);
  auto broken = SmartRedis::ConfigOptions::create_from_environment("broken");
  check_throws<SmartRedis::RuntimeException>(
      [&] { SmartRedis::Client failing(broken.get(), "cpp_broken"); },
      "Client without an address", "SSDB_broken");
}

}  // namespace

int main() {
  const char* ssdb = std::getenv("SSDB");
  if (ssdb == nullptr) {
    std::cerr << "SSDB must name the server\n";
    return 2;
  }
  std::string address = ssdb;
  try {
    SmartRedis::LogContext context("cpp_program");
    SmartRedis::log_data(&context, LLInfo, "starting");
    // A LogContext is an SRObject: used, and destroyed, through the base class.
    std::unique_ptr<SmartRedis::SRObject> owned =
        std::make_unique<SmartRedis::LogContext>("cpp_owned_context");
    check(owned->get_context() == "cpp_owned_context", "LogContext::get_context");
    SmartRedis::log_error(owned.get(), LLInfo, "through the base class");
    owned.reset();
    SmartRedis::Client client(false, "cpp_program");
    client.log_data(LLInfo, "client created");
    tensors(client);
    datasets(client);
    scripts(client);
    batching(client);
    administration(client, address);
    prefixes(address);
    configuration(address);
    SmartRedis::log_warning(&context, LLInfo, "finished");
    std::cout << client << "\n";
  } catch (const SmartRedis::Exception& e) {
    std::cerr << "FAILED: unexpected " << e.exception_class() << ": " << e.what() << "\n";
    return 1;
  }
  if (failures > 0) {
    std::cerr << failures << " check(s) failed\n";
    return 1;
  }
  std::cout << "all SmartRedis C++ checks passed\n";
  return 0;
}
