// RedisAI script commands: AI.SCRIPTSTORE (and the older AI.SCRIPTSET), AI.SCRIPTGET,
// AI.SCRIPTDEL, AI.SCRIPTEXECUTE (and AI.SCRIPTRUN). TorchScript source is compiled on the
// executor; functions run there too.
#include "server/cluster/cluster.hpp"
#include "server/commands/command_util.hpp"
#include "server/commands/model_execution.hpp"
#include "server/net/reply.hpp"
#include "server/server.hpp"
#include "server/net/session.hpp"

namespace slipstream::server {
namespace {

constexpr std::string_view kScriptKeyEmpty = "ERR script key is empty";

ValuePtr lookup_script(CommandContext& c, std::string_view key) {
  return lookup_typed(c, key, ValueType::kScript, kScriptKeyEmpty);
}

// Compiles `script` on the executor and stores it under `key`, replying when done.
Outcome compile_and_store(CommandContext& c, ScriptEntry script, const ml::Device& device) {
  ml::Backend* backend = c.server.backend();
  if (backend == nullptr) {
    c.reply.error("ERR this server has no ML backend");
    return Outcome::kDone;
  }
  if (ml::Status usable = backend->check_device(device); !usable.ok) {
    c.reply.error("ERR " + usable.message);
    return Outcome::kDone;
  }
  if (c.server.keyspace().over_limit(script.source.size())) {
    c.reply.error(kOomError);
    return Outcome::kDone;
  }
  auto pending = std::make_shared<ScriptEntry>(std::move(script));
  std::weak_ptr<Session> weak = c.session.weak_session();
  Server& server = c.server;
  std::string key(c.arg(1));
  server.loader().post([pending, weak, &server, key, backend, device] {
    std::string error;
    pending->runtime = backend->load_script(pending->source, device, &error);
    std::string problem = pending->runtime ? "" : error;
    for (const auto& entry : pending->entry_points) {
      if (problem.empty() && !pending->runtime->has_function(entry)) {
        problem = "Function " + entry + " does not exist in the given script.";
      }
    }
    std::function<void(ReplyBuffer&)> reply;
    if (!problem.empty()) {
      reply = [problem](ReplyBuffer& r) { r.error("ERR " + problem); };
    } else {
      reply = store_next_version(server, key, std::move(*pending));
    }
    if (auto session = weak.lock()) session->resume(std::move(reply));
  });
  return Outcome::kParked;
}

// The part AI.SCRIPTSTORE and AI.SCRIPTSET share: key type, device and TAG. Leaves `i` at the
// next argument; writes the error and returns false on bad input.
bool parse_script_head(CommandContext& c, ScriptEntry& script, std::optional<ml::Device>& device,
                       std::size_t& i) {
  if (!type_allows(c, c.arg(1), ValueType::kScript)) return false;
  device = ml::parse_device(c.arg(2));
  if (!device) {
    c.reply.error("ERR Invalid DEVICE");
    return false;
  }
  script.device = std::string(c.arg(2));
  i = 3;
  if (i + 1 < c.argc() && equals_nocase(c.arg(i), "TAG")) {
    script.tag = std::string(c.arg(i + 1));
    i += 2;
  }
  return true;
}

// AI.SCRIPTSTORE key device [TAG tag] ENTRY_POINTS n fn ... SOURCE text
Outcome scriptstore(CommandContext& c) {
  ScriptEntry script;
  std::optional<ml::Device> device;
  std::size_t i = 0;
  if (!parse_script_head(c, script, device, i)) return Outcome::kDone;
  if (i >= c.argc() || !equals_nocase(c.arg(i), "ENTRY_POINTS")) {
    c.reply.error("ERR Insufficient arguments, missing script entry points");
    return Outcome::kDone;
  }
  auto count = i + 1 < c.argc() ? parse_int(c.arg(i + 1)) : std::nullopt;
  if (!count || *count <= 0) {
    c.reply.error("ERR Non numeric entry points number provided to AI.SCRIPTSTORE command");
    return Outcome::kDone;
  }
  i += 2;
  if (i + static_cast<std::size_t>(*count) > c.argc()) {
    c.reply.error("ERR Insufficient arguments, missing script entry points");
    return Outcome::kDone;
  }
  for (std::int64_t k = 0; k < *count; ++k) script.entry_points.emplace_back(c.arg(i++));
  if (i + 1 >= c.argc() || !equals_nocase(c.arg(i), "SOURCE")) {
    c.reply.error("ERR Insufficient arguments, missing script SOURCE");
    return Outcome::kDone;
  }
  script.source = std::string(c.arg(i + 1));
  return compile_and_store(c, std::move(script), *device);
}

// AI.SCRIPTSET key device [TAG tag] SOURCE text
Outcome scriptset(CommandContext& c) {
  ScriptEntry script;
  std::optional<ml::Device> device;
  std::size_t i = 0;
  if (!parse_script_head(c, script, device, i)) return Outcome::kDone;
  if (i + 2 != c.argc() || !equals_nocase(c.arg(i), "SOURCE")) {
    c.reply.error("ERR Insufficient arguments, missing script SOURCE");
    return Outcome::kDone;
  }
  script.source = std::string(c.arg(i + 1));
  return compile_and_store(c, std::move(script), *device);
}

Outcome scriptget(CommandContext& c) {
  ValuePtr value = lookup_script(c, c.arg(1));
  if (!value) return Outcome::kDone;
  bool meta = false, source = false;
  for (std::size_t i = 2; i < c.argc(); ++i) {
    if (equals_nocase(c.arg(i), "META")) meta = true;
    if (equals_nocase(c.arg(i), "SOURCE")) source = true;
  }
  if (!meta && !source) meta = source = true;
  const ScriptEntry& s = value->script();
  if (!meta) {
    c.reply.bulk(s.source);
    return Outcome::kDone;
  }
  c.reply.array(source ? 8 : 6);
  c.reply.bulk("device");
  c.reply.bulk(s.device);
  c.reply.bulk("tag");
  c.reply.bulk(s.tag);
  c.reply.bulk("Entry Points");
  c.reply.array(s.entry_points.size());
  for (const auto& name : s.entry_points) c.reply.bulk(name);
  if (source) {
    c.reply.bulk("source");
    c.reply.bulk(s.source);
  }
  return Outcome::kDone;
}

Outcome scriptdel(CommandContext& c) {
  if (!lookup_script(c, c.arg(1))) return Outcome::kDone;
  c.server.keyspace().update(c.arg(1), [](MutableSlot& slot) {
    if (slot.peek() && slot.peek()->type() == ValueType::kScript) slot.remove();
  });
  c.server.mark_dirty();
  c.reply.simple("OK");
  return Outcome::kDone;
}

Outcome run_script(CommandContext& c, const ValuePtr& value, std::string function,
                   std::vector<std::string> keys, std::vector<std::string> inputs,
                   std::vector<std::string> args, std::vector<std::string> outputs,
                   std::optional<std::chrono::milliseconds> timeout) {
  const ScriptEntry& script = value->script();
  if (!script.runtime) {
    c.reply.error("ERR script '" + std::string(c.arg(1)) + "' cannot run: " + script.load_error);
    return Outcome::kDone;
  }
  if (!script.runtime->has_function(function)) {
    c.reply.error("ERR function " + function + " does not exist in script '" +
                  std::string(c.arg(1)) + "'");
    return Outcome::kDone;
  }
  auto execution = std::make_shared<ml::Execution>();
  execution->script = script.runtime;
  execution->function = std::move(function);
  execution->keys = std::move(keys);
  execution->args = std::move(args);
  execution->stats = script.stats;
  execution->keep_alive.push_back(value);
  if (!collect_inputs(c, inputs, *execution) || !outputs_writable(c, outputs)) {
    return Outcome::kDone;
  }
  return execute_and_store(c, std::move(execution), std::move(outputs), timeout);
}

// AI.SCRIPTEXECUTE key fn [KEYS n ...] [INPUTS n ...] [ARGS n ...] [OUTPUTS m ...] [TIMEOUT ms]
Outcome scriptexecute(CommandContext& c) {
  ValuePtr value = lookup_script(c, c.arg(1));
  if (!value) return Outcome::kDone;
  std::vector<std::string> sections[4];  // KEYS, INPUTS, ARGS, OUTPUTS
  const char* names[4] = {"KEYS", "INPUTS", "ARGS", "OUTPUTS"};
  std::optional<std::chrono::milliseconds> timeout;
  std::size_t i = 3;
  bool scope_seen = false;
  while (i < c.argc()) {
    if (equals_nocase(c.arg(i), "TIMEOUT")) {
      if (!parse_execute_timeout(c, i, timeout, "AI.SCRIPTEXECUTE")) return Outcome::kDone;
      i += 2;
      continue;
    }
    int which = -1;
    for (int k = 0; k < 4; ++k) {
      if (equals_nocase(c.arg(i), names[k])) which = k;
    }
    if (which < 0) {
      c.reply.error("ERR Invalid arguments provided to AI.SCRIPTEXECUTE");
      return Outcome::kDone;
    }
    if (!scope_seen && (which == 2 || which == 3)) {
      c.reply.error("ERR KEYS or INPUTS scope must be provided first for AI.SCRIPTEXECUTE command");
      return Outcome::kDone;
    }
    scope_seen = true;
    if (i + 1 >= c.argc()) {
      c.reply.error(std::string("ERR Missing arguments after ") + names[which] + " keyword");
      return Outcome::kDone;
    }
    auto count = parse_int(c.arg(i + 1));
    if (!count || *count < 0) {
      c.reply.error(which == 0 ? std::string("ERR Invalid or negative value found in number of KEYS")
                               : std::string("ERR Invalid argument for ") +
                                     (which == 1 ? "inputs" : which == 2 ? "args" : "outputs") +
                                     " count in AI.SCRIPTEXECUTE");
      return Outcome::kDone;
    }
    i += 2;
    if (i + static_cast<std::size_t>(*count) > c.argc()) {
      c.reply.error(std::string("ERR Number of pre declared ") + names[which] +
                    " to be used in the command does not match the number of given arguments");
      return Outcome::kDone;
    }
    for (std::int64_t k = 0; k < *count; ++k) sections[which].emplace_back(c.arg(i++));
  }
  return run_script(c, value, std::string(c.arg(2)), std::move(sections[0]),
                    std::move(sections[1]), std::move(sections[2]), std::move(sections[3]),
                    timeout);
}

// AI.SCRIPTRUN key fn [TIMEOUT ms] INPUTS in ... OUTPUTS out ...: tensors passed positionally.
Outcome scriptrun(CommandContext& c) {
  ValuePtr value = lookup_script(c, c.arg(1));
  if (!value) return Outcome::kDone;
  std::size_t i = 3;
  std::optional<std::chrono::milliseconds> timeout;
  if (i < c.argc() && equals_nocase(c.arg(i), "TIMEOUT")) {
    if (!parse_execute_timeout(c, i, timeout, "AI.SCRIPTRUN")) return Outcome::kDone;
    i += 2;
  }
  std::vector<std::string> inputs, outputs;
  if (i < c.argc() && equals_nocase(c.arg(i), "INPUTS")) {
    for (++i; i < c.argc() && !equals_nocase(c.arg(i), "OUTPUTS"); ++i) {
      if (c.arg(i) == "$") {
        c.reply.error("ERR variable-size input lists ($) are not supported; use AI.SCRIPTEXECUTE");
        return Outcome::kDone;
      }
      inputs.emplace_back(c.arg(i));
    }
  }
  if (i < c.argc() && equals_nocase(c.arg(i), "OUTPUTS")) {
    for (++i; i < c.argc(); ++i) outputs.emplace_back(c.arg(i));
  } else if (i < c.argc()) {
    c.reply.error("ERR Unrecongnized parameter to SCRIPTRUN");
    return Outcome::kDone;
  }
  return run_script(c, value, std::string(c.arg(2)), {}, std::move(inputs), {},
                    std::move(outputs), timeout);
}

}  // namespace

void add_script_commands(std::vector<CommandSpec>& out) {
  out.insert(out.end(), {
    {"AI.SCRIPTSTORE", -8, kWrite | kDenyOom | kBlocking, 1, 1, 1, scriptstore, "script",
     "key device [TAG tag] ENTRY_POINTS n fn ... SOURCE text",
     "Compiles and stores a TorchScript script; every entry point must exist. +OK or the "
     "compiler's error.", no_routed_keys},
    {"AI.SCRIPTSET", -5, kWrite | kDenyOom | kBlocking, 1, 1, 1, scriptset, "script",
     "key device [TAG tag] SOURCE text", "Older form of AI.SCRIPTSTORE (no entry points).",
     no_routed_keys},
    {"AI.SCRIPTGET", -2, kReadOnly, 1, 1, 1, scriptget, "script", "key [META] [SOURCE]",
     "Device, tag, entry points and/or the source; both by default.", no_routed_keys},
    {"AI.SCRIPTDEL", 2, kWrite, 1, 1, 1, scriptdel, "script", "key", "Deletes a script: +OK.",
     no_routed_keys},
    {"AI.SCRIPTEXECUTE", -3, kWrite | kDenyOom | kBlocking, 1, 1, 1, scriptexecute, "script",
     "key fn [KEYS n k ...] [INPUTS n in ...] [ARGS n a ...] [OUTPUTS m out ...] [TIMEOUT ms]",
     "Calls fn(tensors, keys, args) on the executor and stores every output at once: +OK, "
     "TIMEDOUT, or the error with no output written.", redisai_run_keys},
    {"AI.SCRIPTRUN", -3, kWrite | kDenyOom | kBlocking, 1, 1, 1, scriptrun, "script",
     "key fn [TIMEOUT ms] INPUTS in ... OUTPUTS out ...",
     "Older form: fn called with the input tensors as positional arguments.", redisai_run_keys},
  });
}

}  // namespace slipstream::server
