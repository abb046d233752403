// RedisAI model commands: AI.MODELSTORE (and the older AI.MODELSET), AI.MODELGET, AI.MODELDEL,
// AI.MODELEXECUTE (and AI.MODELRUN), AI.INFO, AI.CONFIG. Arguments, replies and error texts
// follow RedisAI 1.2; models load and run on the executor, never on an I/O thread.
#include <cctype>

#include "server/cluster/cluster.hpp"
#include "server/commands/command_util.hpp"
#include "server/commands/model_execution.hpp"
#include "server/net/reply.hpp"
#include "server/server.hpp"
#include "server/net/session.hpp"

namespace slipstream::server {
namespace {

// AI.MODELSTORE ... KEEP n: earlier versions stay loaded, so this bounds what callers can pin.
constexpr std::size_t kMaxKeptVersions = 64;

constexpr std::string_view kModelKeyEmpty = "ERR model key is empty";

std::string upper(std::string_view text) {
  std::string out(text);
  for (char& ch : out) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return out;
}

// The model stored at `key`, or null with the RedisAI error written.
ValuePtr lookup_model(CommandContext& c, std::string_view key) {
  return lookup_typed(c, key, ValueType::kModel, kModelKeyEmpty);
}

// Reads an unsigned option value; writes "ERR Invalid argument for NAME" when malformed.
bool parse_count(CommandContext& c, std::size_t index, std::string_view name, std::size_t& out) {
  auto n = index < c.argc() ? parse_int(c.arg(index)) : std::nullopt;
  if (!n || *n < 0) {
    c.reply.error("ERR Invalid argument for " + std::string(name));
    return false;
  }
  out = static_cast<std::size_t>(*n);
  return true;
}

struct StoreRequest {
  ModelEntry model;
  ml::Device device;
  std::size_t blob_index = 0;
};

// Parses AI.MODELSTORE (counted INPUTS/OUTPUTS) or, with `legacy`, AI.MODELSET (uncounted).
bool parse_store(CommandContext& c, bool legacy, StoreRequest& request) {
  const std::optional<ml::ModelFormat> format = ml::parse_backend_name(c.arg(2));
  if (!format) {
    const std::string backend = upper(c.arg(2));
    if (backend == "TF" || backend == "TFLITE") {
      c.reply.error("ERR backend " + backend +
                    " is not available in slipstream: models are TorchScript (TORCH) or ONNX "
                    "(no TensorFlow runtime exists for this platform; export the model to ONNX)");
    } else {
      c.reply.error("ERR unsupported backend");
    }
    return false;
  }
  auto device = ml::parse_device(c.arg(3));
  if (!device) {
    c.reply.error("ERR Invalid DEVICE");
    return false;
  }
  request.device = *device;
  ModelEntry& m = request.model;
  m.backend = std::string(ml::backend_name(*format));
  m.device = std::string(c.arg(3));
  std::size_t i = 4;
  if (i + 1 < c.argc() && equals_nocase(c.arg(i), "TAG")) {
    m.tag = std::string(c.arg(i + 1));
    i += 2;
  }
  if (i < c.argc() && equals_nocase(c.arg(i), "KEEP")) {  // slipstream: earlier versions kept
    std::size_t keep = 0;
    if (!parse_count(c, i + 1, "KEEP", keep)) return false;
    if (keep > kMaxKeptVersions) {
      c.reply.error("ERR KEEP must be at most " + std::to_string(kMaxKeptVersions));
      return false;
    }
    m.keep = static_cast<std::uint32_t>(keep);
    i += 2;
  }
  std::size_t timeout_ms = 0;
  if (i < c.argc() && equals_nocase(c.arg(i), "BATCHSIZE")) {
    if (!parse_count(c, i + 1, "BATCHSIZE", m.batching.batch_size)) return false;
    i += 2;
  }
  if (i < c.argc() && equals_nocase(c.arg(i), "MINBATCHSIZE")) {
    if (!parse_count(c, i + 1, "MINBATCHSIZE", m.batching.min_batch_size)) return false;
    if (m.batching.batch_size == 0 && m.batching.min_batch_size > 0) {
      c.reply.error("ERR MINBATCHSIZE specified without BATCHSIZE");
      return false;
    }
    i += 2;
  }
  if (i < c.argc() && equals_nocase(c.arg(i), "MINBATCHTIMEOUT")) {
    if (!parse_count(c, i + 1, "MINBATCHTIMEOUT", timeout_ms)) return false;
    if (m.batching.min_batch_size == 0 && timeout_ms > 0) {
      c.reply.error("ERR MINBATCHTIMEOUT specified without MINBATCHSIZE");
      return false;
    }
    m.batching.min_batch_timeout = saturated_timeout(static_cast<std::int64_t>(timeout_ms));
    i += 2;
  }
  if (m.batching.min_batch_size > m.batching.batch_size) {
    c.reply.error("ERR MINBATCHSIZE must not be larger than BATCHSIZE");
    return false;
  }
  if (i >= c.argc()) {
    c.reply.error("ERR Insufficient arguments, missing model BLOB");
    return false;
  }
  // INPUTS/OUTPUTS name the model's tensors; TorchScript models do not need them, but clients
  // (SmartRedis) send them, so they are accepted and reported by AI.MODELGET.
  for (auto [keyword, names] : {std::pair{"INPUTS", &m.inputs}, std::pair{"OUTPUTS", &m.outputs}}) {
    if (i >= c.argc() || !equals_nocase(c.arg(i), keyword)) continue;
    ++i;
    if (legacy) {
      while (i < c.argc() && !equals_nocase(c.arg(i), "OUTPUTS") &&
             !equals_nocase(c.arg(i), "BLOB")) {
        names->emplace_back(c.arg(i++));
      }
      continue;
    }
    const bool is_inputs = std::string_view(keyword) == "INPUTS";
    auto count = i < c.argc() ? parse_int(c.arg(i)) : std::nullopt;
    if (!count || *count <= 0) {
      c.reply.error(std::string("ERR Invalid argument for ") +
                    (is_inputs ? "input_count" : "output_count"));
      return false;
    }
    ++i;
    if (i + static_cast<std::size_t>(*count) > c.argc()) {
      c.reply.error(std::string("ERR number of model ") + (is_inputs ? "inputs" : "outputs") +
                    " does not match the number of given arguments");
      return false;
    }
    for (std::int64_t k = 0; k < *count; ++k) names->emplace_back(c.arg(i++));
  }
  if (i >= c.argc() || !equals_nocase(c.arg(i), "BLOB")) {
    c.reply.error("ERR Invalid argument, expected BLOB");
    return false;
  }
  if (i + 1 >= c.argc()) {
    c.reply.error("ERR Insufficient arguments, missing model BLOB");
    return false;
  }
  request.blob_index = i + 1;
  return true;
}

Outcome store_model(CommandContext& c, bool legacy) {
  if (!type_allows(c, c.arg(1), ValueType::kModel)) return Outcome::kDone;
  StoreRequest request;
  if (!parse_store(c, legacy, request)) return Outcome::kDone;
  ml::Backend* backend = c.server.backend();
  if (backend == nullptr) {
    c.reply.error("ERR this server has no ML backend");
    return Outcome::kDone;
  }
  if (ml::Status usable = backend->check_device(request.device); !usable.ok) {
    c.reply.error("ERR " + usable.message);
    return Outcome::kDone;
  }
  request.model.blob = join_chunks(c.args, request.blob_index);
  if (c.server.keyspace().over_limit(request.model.blob.size())) {
    c.reply.error(kOomError);
    return Outcome::kDone;
  }
  // Loading a TorchScript archive takes milliseconds to seconds: do it on the executor.
  auto pending = std::make_shared<StoreRequest>(std::move(request));
  std::weak_ptr<Session> weak = c.session.weak_session();
  Server& server = c.server;
  std::string key(c.arg(1));
  server.loader().post([pending, weak, &server, key, backend] {
    std::string error;
    ModelEntry& model = pending->model;
    model.runtime = backend->load_model(model.blob.view(), model_format(model), pending->device,
                                        &error);
    std::function<void(ReplyBuffer&)> reply;
    if (!model.runtime) {
      reply = [error](ReplyBuffer& r) { r.error("ERR " + error); };
    } else {
      reply = store_next_version(server, key, std::move(model));
    }
    if (auto session = weak.lock()) session->resume(std::move(reply));
  });
  return Outcome::kParked;
}

Outcome modelstore(CommandContext& c) { return store_model(c, false); }
Outcome modelset(CommandContext& c) { return store_model(c, true); }

void reply_blob_chunks(CommandContext& c, const ValuePtr& value, const Buffer& blob) {
  const std::size_t chunk = std::max<std::size_t>(c.server.model_chunk_size(), 1);
  if (blob.size() < chunk) {
    c.reply.bulk_shared(value, blob.view());
    return;
  }
  // RedisAI's layout: len / chunk + 1 chunks, the last possibly empty.
  const std::size_t count = blob.size() / chunk + 1;
  c.reply.array(count);
  for (std::size_t k = 0; k < count; ++k) {
    std::size_t begin = k * chunk;
    std::size_t size = std::min(chunk, blob.size() - begin);
    c.reply.bulk_shared(value, blob.view().substr(begin, size));
  }
}

Outcome modelget(CommandContext& c) {
  if (c.argc() > 4) {
    c.reply.error("ERR wrong number of arguments for '" + std::string(c.arg(0)) + "' command");
    return Outcome::kDone;
  }
  ValuePtr value = lookup_model(c, c.arg(1));
  if (!value) return Outcome::kDone;
  bool meta = false, blob = false;
  for (std::size_t i = 2; i < c.argc(); ++i) {
    if (equals_nocase(c.arg(i), "META")) meta = true;
    if (equals_nocase(c.arg(i), "BLOB")) blob = true;
  }
  if (!meta && !blob) meta = blob = true;
  const ModelEntry& m = value->model();
  if (!meta) {
    reply_blob_chunks(c, value, m.blob);
    return Outcome::kDone;
  }
  c.reply.array(blob ? 18 : 16);
  c.reply.bulk("backend");
  c.reply.bulk(m.backend);
  c.reply.bulk("device");
  c.reply.bulk(m.device);
  c.reply.bulk("tag");
  c.reply.bulk(m.tag);
  c.reply.bulk("batchsize");
  c.reply.integer(static_cast<std::int64_t>(m.batching.batch_size));
  c.reply.bulk("minbatchsize");
  c.reply.integer(static_cast<std::int64_t>(m.batching.min_batch_size));
  c.reply.bulk("inputs");
  c.reply.array(m.inputs.size());
  for (const auto& name : m.inputs) c.reply.bulk(name);
  c.reply.bulk("outputs");
  c.reply.array(m.outputs.size());
  for (const auto& name : m.outputs) c.reply.bulk(name);
  c.reply.bulk("minbatchtimeout");
  c.reply.integer(m.batching.min_batch_timeout.count());
  if (blob) {
    c.reply.bulk("blob");
    reply_blob_chunks(c, value, m.blob);
  }
  return Outcome::kDone;
}

Outcome modeldel(CommandContext& c) {
  if (!lookup_model(c, c.arg(1))) return Outcome::kDone;
  bool removed = c.server.keyspace().update(c.arg(1), [](MutableSlot& slot) {
    if (!slot.peek() || slot.peek()->type() != ValueType::kModel) return false;
    slot.remove();
    return true;
  });
  if (removed) {
    c.server.mark_dirty();
    c.reply.simple("OK");
  } else {
    c.reply.error(kModelKeyEmpty);
  }
  return Outcome::kDone;
}

// Reads "WORD n k1 ... kn" at `i` for AI.MODELEXECUTE; writes RedisAI's errors.
bool parse_counted_keys(CommandContext& c, std::size_t& i, std::string_view word,
                        std::vector<std::string>& keys) {
  const bool inputs = word == "INPUTS";
  if (i >= c.argc() || !equals_nocase(c.arg(i), word)) {
    c.reply.error("ERR " + std::string(word) + " not specified");
    return false;
  }
  auto count = i + 1 < c.argc() ? parse_int(c.arg(i + 1)) : std::nullopt;
  if (!count) {
    c.reply.error(std::string("ERR Invalid argument for ") +
                  (inputs ? "input_count" : "output_count"));
    return false;
  }
  if (*count <= 0) {
    c.reply.error(std::string("ERR ") + (inputs ? "Input" : "Output") +
                  " count must be a positive integer");
    return false;
  }
  i += 2;
  if (i + static_cast<std::size_t>(*count) > c.argc()) {
    c.reply.error(std::string("ERR number of ") + (inputs ? "input" : "output") +
                  " keys to AI.MODELEXECUTE command does not match the number of given "
                  "arguments");
    return false;
  }
  for (std::int64_t k = 0; k < *count; ++k) keys.emplace_back(c.arg(i++));
  return true;
}

// `version`: run that version (0: the newest) and reply the version that ran instead of +OK.
Outcome run_model(CommandContext& c, const ValuePtr& value, std::vector<std::string> inputs,
                  std::vector<std::string> outputs,
                  std::optional<std::chrono::milliseconds> timeout,
                  std::optional<std::uint64_t> version = std::nullopt) {
  const ModelEntry& model = value->model();
  auto execution = std::make_shared<ml::Execution>();
  std::uint64_t ran = model.version;
  if (!version || *version == 0 || *version == model.version) {
    if (!model.runtime) {
      c.reply.error("ERR model '" + std::string(c.arg(1)) + "' cannot run: " + model.load_error);
      return Outcome::kDone;
    }
    execution->model = model.runtime;
    execution->batching = model.batching;
    execution->stats = model.stats;
  } else {
    auto kept = std::find_if(model.kept.begin(), model.kept.end(),
                             [&](const KeptModel& k) { return k.version == *version; });
    if (kept == model.kept.end()) {
      std::string held = std::to_string(model.version);
      for (const KeptModel& k : model.kept) held += ", " + std::to_string(k.version);
      c.reply.error("ERR model '" + std::string(c.arg(1)) + "' has no version " +
                    std::to_string(*version) + " (it holds " + held +
                    "; AI.MODELSTORE ... KEEP n keeps earlier versions)");
      return Outcome::kDone;
    }
    ran = kept->version;
    execution->model = kept->runtime;
    execution->batching = kept->batching;
    execution->stats = kept->stats;
  }
  execution->keep_alive.push_back(value);
  if (!collect_inputs(c, inputs, *execution) || !outputs_writable(c, outputs)) {
    return Outcome::kDone;
  }
  return execute_and_store(c, std::move(execution), std::move(outputs), timeout,
                           version ? std::optional<std::uint64_t>(ran) : std::nullopt);
}

Outcome modelexecute(CommandContext& c) {
  ValuePtr value = lookup_model(c, c.arg(1));
  if (!value) return Outcome::kDone;
  std::vector<std::string> inputs, outputs;
  std::size_t i = 2;
  if (!parse_counted_keys(c, i, "INPUTS", inputs)) return Outcome::kDone;
  if (!parse_counted_keys(c, i, "OUTPUTS", outputs)) return Outcome::kDone;
  // Then TIMEOUT ms (RedisAI) and VERSION v (slipstream), each at most once, in any order.
  std::optional<std::chrono::milliseconds> timeout;
  std::optional<std::uint64_t> version;
  for (; i < c.argc(); i += 2) {
    if (equals_nocase(c.arg(i), "TIMEOUT") && !timeout) {
      if (!parse_execute_timeout(c, i, timeout, "AI.MODELEXECUTE")) return Outcome::kDone;
    } else if (equals_nocase(c.arg(i), "VERSION") && !version) {
      auto v = i + 1 < c.argc() ? parse_int(c.arg(i + 1)) : std::nullopt;
      if (!v || *v < 0) {
        c.reply.error("ERR VERSION needs a model version (0: the newest)");
        return Outcome::kDone;
      }
      version = static_cast<std::uint64_t>(*v);
    } else {
      c.reply.error("Invalid argument: " + std::string(c.arg(i)));
      return Outcome::kDone;
    }
  }
  return run_model(c, value, std::move(inputs), std::move(outputs), timeout, version);
}

// AI.MODELRUN key [TIMEOUT t] INPUTS i1 ... OUTPUTS o1 ... (RedisAI 1.0 form, no counts).
Outcome modelrun(CommandContext& c) {
  ValuePtr value = lookup_model(c, c.arg(1));
  if (!value) return Outcome::kDone;
  std::size_t i = 2;
  std::optional<std::chrono::milliseconds> timeout;
  if (equals_nocase(c.arg(i), "TIMEOUT")) {
    if (!parse_execute_timeout(c, i, timeout, "AI.MODELRUN")) return Outcome::kDone;
    i += 2;
  }
  if (i >= c.argc() || !equals_nocase(c.arg(i), "INPUTS")) {
    c.reply.error("ERR INPUTS not specified");
    return Outcome::kDone;
  }
  std::vector<std::string> inputs, outputs;
  for (++i; i < c.argc() && !equals_nocase(c.arg(i), "OUTPUTS"); ++i) inputs.emplace_back(c.arg(i));
  if (i >= c.argc()) {
    c.reply.error("ERR OUTPUTS not specified");
    return Outcome::kDone;
  }
  for (++i; i < c.argc(); ++i) outputs.emplace_back(c.arg(i));
  return run_model(c, value, std::move(inputs), std::move(outputs), timeout);
}

Outcome ai_info(CommandContext& c) {
  if (c.argc() > 3) {
    c.reply.error("ERR wrong number of arguments for '" + std::string(c.arg(0)) + "' command");
    return Outcome::kDone;
  }
  ValuePtr value = c.server.keyspace().get(c.arg(1));
  if (!value || (value->type() != ValueType::kModel && value->type() != ValueType::kScript)) {
    c.reply.error("ERR cannot find run info for key");
    return Outcome::kDone;
  }
  const bool is_model = value->type() == ValueType::kModel;
  const auto& stats = is_model ? value->model().stats : value->script().stats;
  if (c.argc() == 3 && equals_nocase(c.arg(2), "RESETSTAT")) {
    stats->reset();
    c.reply.simple("OK");
    return Outcome::kDone;
  }
  const std::uint64_t runs = stats->runs.load();
  c.reply.array(30);
  c.reply.bulk("key");
  c.reply.bulk(c.arg(1));
  c.reply.bulk("type");
  c.reply.bulk(is_model ? "MODEL" : "SCRIPT");
  c.reply.bulk("backend");
  c.reply.bulk(is_model ? value->model().backend : std::string("TORCH"));
  c.reply.bulk("device");
  c.reply.bulk(is_model ? value->model().device : value->script().device);
  c.reply.bulk("tag");
  c.reply.bulk(is_model ? value->model().tag : value->script().tag);
  c.reply.bulk("duration");
  c.reply.integer(static_cast<std::int64_t>(stats->run_time_us.load()));
  c.reply.bulk("samples");
  c.reply.integer(is_model ? static_cast<std::int64_t>(stats->samples.load()) : -1);
  c.reply.bulk("calls");
  c.reply.integer(static_cast<std::int64_t>(stats->calls.load()));
  c.reply.bulk("errors");
  c.reply.integer(static_cast<std::int64_t>(stats->errors.load()));
  // Slipstream's additions after RedisAI's nine fields.
  c.reply.bulk("version");
  c.reply.integer(static_cast<std::int64_t>(is_model ? value->model().version
                                                     : value->script().version));
  c.reply.bulk("runs");
  c.reply.integer(static_cast<std::int64_t>(runs));
  c.reply.bulk("batches");
  c.reply.integer(static_cast<std::int64_t>(stats->batches.load()));
  c.reply.bulk("mean_batch_size");
  const std::uint64_t batches = stats->batches.load();
  c.reply.double_value(batches ? static_cast<double>(stats->batched_calls.load()) /
                                     static_cast<double>(batches)
                               : 0.0);
  c.reply.bulk("queue_wait_us");
  c.reply.integer(static_cast<std::int64_t>(stats->queue_wait_us.load()));
  c.reply.bulk("run_time_us");
  c.reply.integer(static_cast<std::int64_t>(stats->run_time_us.load()));
  return Outcome::kDone;
}

Outcome ai_config(CommandContext& c) {
  std::string_view sub = c.arg(1);
  if (equals_nocase(sub, "MODEL_CHUNK_SIZE")) {
    if (c.argc() < 3) {
      c.reply.error("ERR MODEL_CHUNK_SIZE: missing chunk size");
      return Outcome::kDone;
    }
    auto n = parse_int(c.arg(2));
    if (!n || *n < 1) {
      c.reply.error("ERR MODEL_CHUNK_SIZE: invalid chunk size");
      return Outcome::kDone;
    }
    c.server.set_model_chunk_size(static_cast<std::size_t>(*n));
    c.reply.simple("OK");
  } else if (equals_nocase(sub, "GET") && c.argc() == 3) {
    if (equals_nocase(c.arg(2), "MODEL_CHUNK_SIZE")) {
      c.reply.integer(static_cast<std::int64_t>(c.server.model_chunk_size()));
    } else if (equals_nocase(c.arg(2), "BACKENDSPATH")) {
      c.reply.bulk("");  // backends are built in
    } else {
      c.reply.null();
    }
  } else if (equals_nocase(sub, "BACKENDSPATH")) {
    if (c.argc() < 3) {
      c.reply.error("ERR BACKENDSPATH: missing path argument");
    } else {
      c.reply.simple("OK");  // accepted for compatibility: the TORCH backend is built in
    }
  } else if (equals_nocase(sub, "LOADBACKEND")) {
    if (c.argc() < 4) {
      c.reply.error("ERR wrong number of arguments for '" + std::string(c.arg(0)) + "' command");
    } else if (ml::parse_backend_name(c.arg(2))) {
      c.reply.simple("OK");  // built in
    } else if (upper(c.arg(2)) == "TF" || upper(c.arg(2)) == "TFLITE") {
      c.reply.error("ERR error loading backend");
    } else {
      c.reply.error("ERR unsupported backend");
    }
  } else {
    c.reply.error("ERR unsupported subcommand");
  }
  return Outcome::kDone;
}

}  // namespace

void add_model_commands(std::vector<CommandSpec>& out) {
  out.insert(out.end(), {
    {"AI.MODELSTORE", -6, kWrite | kDenyOom | kBlocking, 1, 1, 1, modelstore, "model",
     "key TORCH|ONNX device [TAG tag] [KEEP n] [BATCHSIZE n [MINBATCHSIZE m [MINBATCHTIMEOUT "
     "ms]]] [INPUTS n name ...] [OUTPUTS n name ...] BLOB chunk [chunk ...]",
     "Stores a TorchScript archive (TORCH) or an ONNX model (ONNX, lowered to TorchScript when "
     "stored; docs/models.md) (chunks are concatenated); replacing a key bumps its version "
     "while running executions finish on the old one. KEEP n (slipstream, at most 64) keeps the "
     "n versions before this one loaded, for AI.MODELEXECUTE ... VERSION (not in snapshots). "
     "+OK, or the backend's error.",
     no_routed_keys},
    {"AI.MODELSET", -6, kWrite | kDenyOom | kBlocking, 1, 1, 1, modelset, "model",
     "key TORCH|ONNX device [TAG tag] [BATCHSIZE n ...] [INPUTS name ...] [OUTPUTS name ...] "
     "BLOB chunk [chunk ...]",
     "Older form of AI.MODELSTORE (uncounted INPUTS/OUTPUTS).", no_routed_keys},
    {"AI.MODELGET", -2, kReadOnly, 1, 1, 1, modelget, "model", "key [META] [BLOB]",
     "Backend, device, tag, batching, inputs, outputs and/or the blob (chunked at "
     "MODEL_CHUNK_SIZE); both by default.", no_routed_keys},
    {"AI.MODELDEL", 2, kWrite, 1, 1, 1, modeldel, "model", "key", "Deletes a model: +OK.",
     no_routed_keys},
    {"AI.MODELEXECUTE", -8, kWrite | kDenyOom | kBlocking, 1, 1, 1, modelexecute, "model",
     "key INPUTS n in ... OUTPUTS m out ... [TIMEOUT ms] [VERSION v]",
     "Runs the model on the executor (batched with other callers when BATCHSIZE > 0) and stores "
     "every output at once: +OK; TIMEDOUT if not started within ms; the backend's error with "
     "no output written. VERSION v (slipstream) runs version v, the newest or one kept by "
     "KEEP (0: the newest), and replies the version that ran (an integer) instead of +OK.",
     redisai_run_keys},
    {"AI.MODELRUN", -6, kWrite | kDenyOom | kBlocking, 1, 1, 1, modelrun, "model",
     "key [TIMEOUT ms] INPUTS in ... OUTPUTS out ...", "Older form of AI.MODELEXECUTE.",
     redisai_run_keys},
    {"AI.INFO", -2, kReadOnly, 1, 1, 1, ai_info, "model", "key [RESETSTAT]",
     "Run statistics of a model or script: key, type, backend, device, tag, duration (us), "
     "samples, calls, errors, then version, runs, batches, mean_batch_size, queue_wait_us, "
     "run_time_us.", no_routed_keys},
    {"AI.CONFIG", -2, kAdmin, 0, 0, 0, ai_config, "model",
     "MODEL_CHUNK_SIZE n | GET MODEL_CHUNK_SIZE | BACKENDSPATH path | LOADBACKEND TORCH|ONNX path",
     "Model chunk size; backend paths are accepted for compatibility (TORCH and ONNX are built "
     "in)."},
  });
}

}  // namespace slipstream::server
