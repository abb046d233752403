// Client model and script calls (RedisAI 1.2 commands): storing blobs in chunks, running models
// and scripts, the one-round-trip put/run/get of run_model_on, and AI.INFO statistics.
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <utility>

#include "client/client_impl.hpp"
#include "slipstream/client.hpp"

namespace slipstream {

using client::Request;
using std::chrono::milliseconds;
namespace {

/// RedisAI's MODEL_CHUNK_SIZE default (511 MiB), assumed for a server without AI.CONFIG GET.
constexpr std::int64_t kDefaultModelChunkSize = 511LL * 1024 * 1024;

std::string quoted(std::string_view what, std::string_view key) {
  return std::string(what) + " '" + std::string(key) + "'";
}

// As client::throw_server_error, plus RedisAI's "missing model / script / statistics" replies,
// which mean the key does not exist.
[[noreturn]] void throw_model_error(std::string_view server_text, std::string_view context) {
  client::throw_server_error(server_text, context);  // missing model/script: KeyNotFoundError
}

// Runs go to the shard that owns their tensors (inputs, or outputs when there are none); every
// shard holds the model.
Route execution_route(const std::vector<std::string>& inputs,
                      const std::vector<std::string>& outputs) {
  if (!inputs.empty()) return Route(inputs.front());
  if (!outputs.empty()) return Route(outputs.front());
  return Route::any();
}

// The reply to an execution: +OK, the simple string TIMEDOUT, or an error.
// +OK, or with VERSION the version that ran (stored in `version->ran`).
void check_execution_reply(const Reply& reply, std::string_view context, milliseconds timeout,
                           ModelVersion* version = nullptr) {
  if (reply.is_error()) throw_model_error(reply.string, context);
  if (reply.is_status("TIMEDOUT")) {
    throw TimeoutError(std::string(context) + ": the run did not start within its timeout of " +
                       std::to_string(timeout.count()) + " ms and was dropped by the server");
  }
  if (version && reply.is_integer() && reply.integer > 0) {
    version->ran = static_cast<std::uint64_t>(reply.integer);
    return;
  }
  if (version || !reply.is_status("OK")) {
    throw ProtocolError(std::string(context) + ": unexpected reply '" +
                        (reply.is_integer() ? std::to_string(reply.integer) : reply.string) +
                        "'" + (version ? " (a server without model versions?)" : ""));
  }
}

std::string read_file(const std::string& path, std::string_view what) {
  std::ifstream file(path, std::ios::binary);
  if (!file)
    throw InvalidArgumentError("cannot open " + std::string(what) + " file '" + path + "'");
  std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (file.bad())
    throw InvalidArgumentError("cannot read " + std::string(what) + " file '" + path + "'");
  return bytes;
}

void add_names(Request& request, std::string_view keyword, const std::vector<std::string>& names,
               bool counted) {
  request.arg(keyword);
  if (counted) request.arg(static_cast<std::int64_t>(names.size()));
  for (const auto& name : names) request.arg(name);
}

void check_model_options(const ModelOptions& o) {
  if (o.batch_size < 0 || o.min_batch_size < 0 || o.min_batch_timeout.count() < 0) {
    throw InvalidArgumentError(
        "model options: batch_size, min_batch_size and min_batch_timeout "
        "must not be negative");
  }
  if (o.min_batch_size > 0 && o.batch_size == 0) {
    throw InvalidArgumentError("model options: min_batch_size needs batch_size > 0");
  }
  if (o.min_batch_size > o.batch_size) {
    throw InvalidArgumentError("model options: min_batch_size (" +
                               std::to_string(o.min_batch_size) + ") exceeds batch_size (" +
                               std::to_string(o.batch_size) + ")");
  }
  if (o.min_batch_timeout.count() > 0 && o.min_batch_size == 0) {
    throw InvalidArgumentError("model options: min_batch_timeout needs min_batch_size > 0");
  }
  if (o.keep_versions < 0 || o.keep_versions > 64) {
    throw InvalidArgumentError("model options: keep_versions must be 0 to 64, got " +
                               std::to_string(o.keep_versions));
  }
}

// AI.MODELGET ... BLOB answers one bulk string, or an array of chunks when the model is at least
// MODEL_CHUNK_SIZE long. Chunks are read straight into the result.
std::string read_model_blob(client::Connection& c, std::string_view context) {
  std::string blob;
  std::string line;
  auto append_chunk = [&](char type) {
    if (type != '$') c.protocol_error("AI.MODELGET blob chunk is not a bulk string");
    std::int64_t size = c.parse_integer(line);
    if (size < 0) c.protocol_error("AI.MODELGET blob chunk is nil");
    std::size_t offset = blob.size();
    blob.resize(offset + static_cast<std::size_t>(size));
    c.read_bulk_body(blob.data() + offset, static_cast<std::size_t>(size));
  };
  char type = c.read_line(line);
  if (type == '-') throw_model_error(line, context);
  if (type != '*') {
    append_chunk(type);
    return blob;
  }
  std::int64_t chunks = c.parse_integer(line);
  if (chunks < 0) c.protocol_error("AI.MODELGET reply has a negative chunk count");
  for (std::int64_t k = 0; k < chunks; ++k) append_chunk(c.read_line(line));
  return blob;
}

std::int64_t info_integer(const Reply& value) {
  if (value.is_integer()) return value.integer;
  std::int64_t out = 0;
  std::from_chars(value.string.data(), value.string.data() + value.string.size(), out);
  return out;
}

// AI.INFO's flat name/value array; names this client does not know are skipped.
ModelInfo parse_info(const Reply& reply, std::string_view context) {
  if (!reply.is_array() || reply.elements.size() % 2 != 0) {
    throw ProtocolError(std::string(context) + ": AI.INFO reply is not a name/value array");
  }
  static constexpr std::pair<std::string_view, std::string ModelInfo::*> kStrings[] = {
      {"key", &ModelInfo::key},       {"type", &ModelInfo::type}, {"backend", &ModelInfo::backend},
      {"device", &ModelInfo::device}, {"tag", &ModelInfo::tag},
  };
  static constexpr std::pair<std::string_view, std::int64_t ModelInfo::*> kIntegers[] = {
      {"calls", &ModelInfo::calls},
      {"samples", &ModelInfo::samples},
      {"errors", &ModelInfo::errors},
      {"duration", &ModelInfo::duration_us},
      {"version", &ModelInfo::version},
      {"runs", &ModelInfo::runs},
      {"batches", &ModelInfo::batches},
      {"queue_wait_us", &ModelInfo::queue_wait_us},
      {"run_time_us", &ModelInfo::run_time_us},
  };
  ModelInfo info;
  for (std::size_t i = 0; i < reply.elements.size(); i += 2) {
    const std::string& name = reply.elements[i].string;
    const Reply& value = reply.elements[i + 1];
    for (const auto& [field, member] : kStrings) {
      if (name == field) info.*member = value.string;
    }
    for (const auto& [field, member] : kIntegers) {
      if (name == field) info.*member = info_integer(value);
    }
    if (name == "mean_batch_size") {
      info.mean_batch_size = value.is_integer() ? static_cast<double>(value.integer)
                                                : std::strtod(value.string.c_str(), nullptr);
    }
  }
  return info;
}

}  // namespace

std::string Client::Impl::model_key(std::string_view name, bool for_read) const {
  if (name.empty()) throw InvalidArgumentError("model or script name must not be empty");
  return prefixed(name, model_prefix(), for_read);
}

// ---- Models -------------------------------------------------------------------------------------

std::int64_t Client::model_chunk_size() {
  if (std::int64_t cached = impl_->model_chunk_size_.load(); cached > 0) return cached;
  Request request;
  request.command({"AI.CONFIG", "GET", "MODEL_CHUNK_SIZE"});
  Reply reply =
      impl_->exchange(Route::any(), request, [](client::Connection& c) { return c.read_reply(); });
  std::int64_t size = kDefaultModelChunkSize;  // an error reply: RedisAI before 1.2.7
  if (!reply.is_error()) {
    if (!reply.is_integer() || reply.integer < 1) {
      throw ProtocolError("AI.CONFIG GET MODEL_CHUNK_SIZE did not return a positive integer");
    }
    size = reply.integer;
  }
  impl_->model_chunk_size_ = size;
  return size;
}

void Client::set_model_chunk_size(std::int64_t bytes) {
  if (bytes < 1) {
    throw InvalidArgumentError("model chunk size must be at least 1 byte, not " +
                               std::to_string(bytes));
  }
  Request request;
  request.command(3);
  request.arg("AI.CONFIG");
  request.arg("MODEL_CHUNK_SIZE");
  request.arg(bytes);
  impl_->broadcast(request, "AI.CONFIG MODEL_CHUNK_SIZE");
  impl_->model_chunk_size_ = bytes;
}

void Client::set_model(std::string_view name, std::string_view model, std::string_view backend,
                       std::string_view device, const ModelOptions& options) {
  std::string key = impl_->model_key(name, false);
  if (model.empty()) throw InvalidArgumentError(quoted("set model", key) + ": model is empty");
  check_model_options(options);
  const auto chunk = static_cast<std::size_t>(model_chunk_size());
  const std::size_t chunks = (model.size() + chunk - 1) / chunk;

  std::size_t argc = 5 + chunks;  // AI.MODELSTORE key backend device ... BLOB chunks
  if (!options.tag.empty()) argc += 2;
  if (options.keep_versions > 0) argc += 2;
  if (options.batch_size > 0) argc += 2;
  if (options.min_batch_size > 0) argc += 2;
  if (options.min_batch_timeout.count() > 0) argc += 2;
  if (!options.inputs.empty()) argc += 2 + options.inputs.size();
  if (!options.outputs.empty()) argc += 2 + options.outputs.size();

  Request request;
  request.command(argc);
  request.arg("AI.MODELSTORE");
  request.arg(key);
  request.arg(backend);
  request.arg(device);
  if (!options.tag.empty()) {
    request.arg("TAG");
    request.arg(options.tag);
  }
  if (options.keep_versions > 0) {
    request.arg("KEEP");
    request.arg(options.keep_versions);
  }
  if (options.batch_size > 0) {
    request.arg("BATCHSIZE");
    request.arg(options.batch_size);
  }
  if (options.min_batch_size > 0) {
    request.arg("MINBATCHSIZE");
    request.arg(options.min_batch_size);
  }
  if (options.min_batch_timeout.count() > 0) {
    request.arg("MINBATCHTIMEOUT");
    request.arg(static_cast<std::int64_t>(options.min_batch_timeout.count()));
  }
  if (!options.inputs.empty()) add_names(request, "INPUTS", options.inputs, true);
  if (!options.outputs.empty()) add_names(request, "OUTPUTS", options.outputs, true);
  request.arg("BLOB");
  for (std::size_t offset = 0; offset < model.size(); offset += chunk) {
    request.arg_borrowed(model.data() + offset, std::min(chunk, model.size() - offset));
  }
  impl_->broadcast(request, quoted("set model", key));  // every shard holds a copy
}

void Client::set_model_from_file(std::string_view name, const std::string& path,
                                 std::string_view backend, std::string_view device,
                                 const ModelOptions& options) {
  std::string model = read_file(path, "model");
  set_model(name, model, backend, device, options);
}

std::string Client::get_model(std::string_view name) {
  std::string key = impl_->model_key(name, true);
  Request request;
  request.command({"AI.MODELGET", key, "BLOB"});
  return impl_->exchange(Route::any(), request, [&](client::Connection& c) {
    return read_model_blob(c, quoted("get model", key));
  });
}

// AI.MODELDEL / AI.SCRIPTDEL on every shard: false when the key does not exist. (A template so
// that the private Client::Impl need not be named here.)
template <typename Impl>
bool delete_everywhere(Impl& impl, std::string_view command, std::string_view name,
                       std::string_view what) {
  std::string key = impl.model_key(name, true);
  Request request;
  request.command({command, key});
  try {
    impl.broadcast(request, quoted(what, key));
  } catch (const KeyNotFoundError&) {
    return false;
  }
  return true;
}

bool Client::delete_model(std::string_view name) {
  return delete_everywhere(*impl_, "AI.MODELDEL", name, "delete model");
}

bool Client::model_exists(std::string_view name) {
  std::string key = impl_->model_key(name, true);
  Request request;
  request.command({"EXISTS", key});
  return impl_->call(Route(key), request, quoted("EXISTS", key)).integer > 0;
}

namespace {

// AI.MODELEXECUTE key INPUTS n ... OUTPUTS m ... [TIMEOUT ms] [VERSION v], with the keys already
// prefixed.
void add_model_execute(Request& request, std::string_view key, const std::vector<std::string>& in,
                       const std::vector<std::string>& out, milliseconds timeout,
                       const ModelVersion* version) {
  request.command(6 + in.size() + out.size() + (timeout.count() > 0 ? 2 : 0) + (version ? 2 : 0));
  request.arg("AI.MODELEXECUTE");
  request.arg(key);
  add_names(request, "INPUTS", in, true);
  add_names(request, "OUTPUTS", out, true);
  if (timeout.count() > 0) {
    request.arg("TIMEOUT");
    request.arg(static_cast<std::int64_t>(timeout.count()));
  }
  if (version) {
    request.arg("VERSION");
    request.arg(static_cast<std::int64_t>(version->pin));
  }
}

void check_names(const std::vector<std::string>& names, std::string_view what,
                 std::string_view context) {
  if (names.empty()) {
    throw InvalidArgumentError(std::string(context) + ": at least one " + std::string(what) +
                               " tensor name is needed");
  }
}

}  // namespace

void Client::run_model(std::string_view name, const std::vector<std::string>& inputs,
                       const std::vector<std::string>& outputs, milliseconds timeout,
                       ModelVersion* version) {
  std::string key = impl_->model_key(name, true);
  const std::string context = quoted("run model", key);
  check_names(inputs, "input", context);
  check_names(outputs, "output", context);
  std::vector<std::string> input_keys, output_keys;
  for (const auto& n : inputs) input_keys.push_back(impl_->tensor_key(n, true));
  for (const auto& n : outputs) output_keys.push_back(impl_->tensor_key(n, false));
  Request request;
  add_model_execute(request, key, input_keys, output_keys, timeout, version);
  // The reply is checked outside the exchange: a TIMEDOUT reply leaves the connection in step,
  // and a TimeoutError thrown inside would close it.
  Reply reply = impl_->exchange(
      execution_route(input_keys, output_keys), request,
      [](client::Connection& c) { return c.read_reply(); }, timeout);
  check_execution_reply(reply, context, timeout, version);
}

// Why one request: a simulation calls this every step, and each round trip costs tens of
// microseconds. The TENSORSETs, the MODELEXECUTE and the TENSORGETs are pipelined (inputs of
// shared-memory size excepted, below); the server runs them in order on the connection, so the
// execution sees the new inputs and the gets its outputs.
std::vector<Tensor> Client::run_model_on(std::string_view name, std::span<const TensorRef> inputs,
                                         const std::vector<std::string>& outputs,
                                         milliseconds timeout, ModelVersion* version) {
  std::string key = impl_->model_key(name, true);
  const std::string context = quoted("run model", key);
  if (inputs.empty()) {
    throw InvalidArgumentError(context + ": at least one input tensor is needed");
  }
  check_names(outputs, "output", context);
  // Scratch tensors of this client: written and read under the write prefix alike.
  std::vector<std::string> input_keys, output_keys;
  for (const auto& t : inputs) input_keys.push_back(impl_->tensor_key(t.name, false));
  for (const auto& n : outputs) output_keys.push_back(impl_->tensor_key(n, false));

  // Inputs large enough for shared memory (standalone, on the server's host) go first as a batch
  // of their own (two round trips: loans, then commits); the rest ride in the one request. The
  // outputs come back in it on the socket: their sizes are unknown until the run, and a lease per
  // output would add a descriptor passing and a release to every call of a small model.
  const bool inputs_first = impl_->shm_put_batch_applies(inputs);
  if (inputs_first) impl_->shm_put_batch(input_keys, inputs);
  const std::size_t sent_inputs = inputs_first ? 0 : inputs.size();  // TENSORSETs in the request
  Request request;
  for (std::size_t i = 0; i < sent_inputs; ++i) {
    Impl::add_tensor_set(request, input_keys[i], inputs[i]);
  }
  add_model_execute(request, key, input_keys, output_keys, timeout, version);
  for (const auto& k : output_keys) Impl::add_tensor_get(request, k);

  std::vector<Tensor> results(outputs.size());
  Reply execution;
  impl_->exchange(
      execution_route(input_keys, output_keys), request,
      [&](client::Connection& c) {
        // Every reply is read whatever fails, so that the stream stays in step; the first error
        // is thrown afterwards. Outputs are only read when the run succeeded (else discarded: the
        // keys may hold an earlier step's values).
        std::exception_ptr first;
        for (std::size_t i = 0; i < sent_inputs; ++i) {
          Reply reply = c.read_reply();
          if (reply.is_error() && !first) {
            try {
              client::throw_server_error(reply.string, quoted("put tensor", input_keys[i]));
            } catch (const Error&) {
              first = std::current_exception();
            }
          }
        }
        execution = c.read_reply();
        const bool ran = !first && (version ? execution.is_integer() : execution.is_status("OK"));
        for (std::size_t i = 0; i < outputs.size(); ++i) {
          std::string error;
          bool ok = Impl::read_tensor_reply(
              c,
              [&](const TensorReplyHeader& header) -> std::byte* {
                if (!ran) return nullptr;
                results[i] = Tensor::uninitialized(header.dtype, header.shape);
                return results[i].mutable_bytes().data();
              },
              &error);
          if (ran && !ok && !first) {
            try {
              client::throw_server_error(error, quoted("get tensor", output_keys[i]));
            } catch (const Error&) {
              first = std::current_exception();
            }
          }
        }
        if (first) std::rethrow_exception(first);
      },
      timeout);
  check_execution_reply(execution, context, timeout, version);
  return results;
}

// ---- Scripts ------------------------------------------------------------------------------------

void Client::set_script(std::string_view name, std::string_view device, std::string_view source,
                        const std::vector<std::string>& entry_points) {
  std::string key = impl_->model_key(name, false);
  Request request;
  if (entry_points.empty()) {
    request.command({"AI.SCRIPTSET", key, device, "SOURCE", source});
  } else {
    request.command(7 + entry_points.size());
    request.arg("AI.SCRIPTSTORE");
    request.arg(key);
    request.arg(device);
    add_names(request, "ENTRY_POINTS", entry_points, true);
    request.arg("SOURCE");
    request.arg(source);
  }
  impl_->broadcast(request, quoted("set script", key));  // every shard holds a copy
}

void Client::set_script_from_file(std::string_view name, std::string_view device,
                                  const std::string& path,
                                  const std::vector<std::string>& entry_points) {
  std::string source = read_file(path, "script");
  set_script(name, device, source, entry_points);
}

std::string Client::get_script(std::string_view name) {
  std::string key = impl_->model_key(name, true);
  Request request;
  request.command({"AI.SCRIPTGET", key, "SOURCE"});
  Reply reply =
      impl_->exchange(Route::any(), request, [](client::Connection& c) { return c.read_reply(); });
  if (reply.is_error()) throw_model_error(reply.string, quoted("get script", key));
  if (reply.kind != Reply::Kind::kString) {
    throw ProtocolError(quoted("get script", key) + ": AI.SCRIPTGET SOURCE is not a string");
  }
  return std::move(reply.string);
}

void Client::run_script(std::string_view name, std::string_view function,
                        const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, milliseconds timeout) {
  std::string key = impl_->model_key(name, true);
  const std::string context =
      quoted("run script", key) + " function '" + std::string(function) + "'";
  // Kept alive until the send: the request borrows long arguments.
  std::vector<std::string> input_keys, output_keys;
  for (const auto& n : inputs) input_keys.push_back(impl_->tensor_key(n, true));
  for (const auto& n : outputs) output_keys.push_back(impl_->tensor_key(n, false));
  Request request;
  request.command(5 + inputs.size() + outputs.size() + (timeout.count() > 0 ? 2 : 0));
  request.arg("AI.SCRIPTRUN");
  request.arg(key);
  request.arg(function);
  if (timeout.count() > 0) {
    request.arg("TIMEOUT");
    request.arg(static_cast<std::int64_t>(timeout.count()));
  }
  add_names(request, "INPUTS", input_keys, false);
  add_names(request, "OUTPUTS", output_keys, false);
  Reply reply = impl_->exchange(
      execution_route(input_keys, output_keys), request,
      [](client::Connection& c) { return c.read_reply(); }, timeout);
  check_execution_reply(reply, context, timeout);
}

void Client::run_script(std::string_view name, std::string_view function,
                        const std::vector<std::string>& keys,
                        const std::vector<std::string>& inputs,
                        const std::vector<std::string>& args,
                        const std::vector<std::string>& outputs, milliseconds timeout) {
  std::string key = impl_->model_key(name, true);
  const std::string context =
      quoted("run script", key) + " function '" + std::string(function) + "'";
  std::vector<std::string> input_keys, output_keys;
  for (const auto& n : inputs) input_keys.push_back(impl_->tensor_key(n, true));
  for (const auto& n : outputs) output_keys.push_back(impl_->tensor_key(n, false));
  Request request;
  request.command(3 + 8 + keys.size() + inputs.size() + args.size() + outputs.size() +
                  (timeout.count() > 0 ? 2 : 0));
  request.arg("AI.SCRIPTEXECUTE");
  request.arg(key);
  request.arg(function);
  add_names(request, "KEYS", keys, true);
  add_names(request, "INPUTS", input_keys, true);
  add_names(request, "ARGS", args, true);
  add_names(request, "OUTPUTS", output_keys, true);
  if (timeout.count() > 0) {
    request.arg("TIMEOUT");
    request.arg(static_cast<std::int64_t>(timeout.count()));
  }
  Reply reply = impl_->exchange(
      execution_route(input_keys, output_keys), request,
      [](client::Connection& c) { return c.read_reply(); }, timeout);
  check_execution_reply(reply, context, timeout);
}

bool Client::delete_script(std::string_view name) {
  return delete_everywhere(*impl_, "AI.SCRIPTDEL", name, "delete script");
}

// ---- Statistics ---------------------------------------------------------------------------------

ModelInfo Client::model_info(std::string_view name) {
  std::string key = impl_->model_key(name, true);
  Request request;
  request.command({"AI.INFO", key});
  const std::string context = quoted("AI.INFO", key);
  if (!impl_->clustered()) {
    Reply reply = impl_->exchange(Route::any(), request,
                                  [](client::Connection& c) { return c.read_reply(); });
    if (reply.is_error()) throw_model_error(reply.string, context);
    return parse_info(reply, context);
  }
  // Every shard holds its own copy and counts the runs it served: add them up.
  std::vector<Reply> replies = impl_->broadcast_all(request, context);
  ModelInfo total = parse_info(replies.front(), context);
  double batched_callers = total.mean_batch_size * static_cast<double>(total.batches);
  for (std::size_t k = 1; k < replies.size(); ++k) {
    const ModelInfo shard = parse_info(replies[k], context);
    total.calls += shard.calls;
    if (total.samples >= 0 && shard.samples >= 0) total.samples += shard.samples;
    total.errors += shard.errors;
    total.duration_us += shard.duration_us;
    total.version = std::max(total.version, shard.version);
    total.runs += shard.runs;
    total.batches += shard.batches;
    batched_callers += shard.mean_batch_size * static_cast<double>(shard.batches);
    total.queue_wait_us += shard.queue_wait_us;
    total.run_time_us += shard.run_time_us;
  }
  total.mean_batch_size =
      total.batches > 0 ? batched_callers / static_cast<double>(total.batches) : 0.0;
  return total;
}

void Client::reset_model_stats(std::string_view name) {
  std::string key = impl_->model_key(name, true);
  Request request;
  request.command({"AI.INFO", key, "RESETSTAT"});
  impl_->broadcast(request, quoted("AI.INFO RESETSTAT", key));
}

}  // namespace slipstream
