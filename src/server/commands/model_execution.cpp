// Running models and scripts on the executor and storing their outputs; see model_execution.hpp.
#include "server/commands/model_execution.hpp"

#include <cstring>

#include "server/commands/command_util.hpp"
#include "server/net/reply.hpp"
#include "server/server.hpp"
#include "server/net/session.hpp"
#include "common/sealed_file.hpp"
#include "server/shm/shm.hpp"
#include "server/store/tensor_codec.hpp"

namespace slipstream::server {

ValuePtr lookup_typed(CommandContext& c, std::string_view key, ValueType type,
                      std::string_view missing_error) {
  ValuePtr value = c.server.keyspace().get(key);
  if (!value) {
    c.reply.error(missing_error);
    return nullptr;
  }
  if (value->type() != type) {
    c.reply.error(kWrongType);
    return nullptr;
  }
  return value;
}

bool type_allows(CommandContext& c, std::string_view key, ValueType type) {
  ValuePtr existing = c.server.keyspace().get(key);
  if (existing && existing->type() != type) {
    c.reply.error(kWrongType);
    return false;
  }
  return true;
}

bool collect_inputs(CommandContext& c, std::span<const std::string> keys,
                    ml::Execution& execution) {
  for (const auto& key : keys) {
    ValuePtr value = c.server.keyspace().get(key);
    if (!value) {
      // Named, so a run with several inputs says which one is missing. In cluster mode a run's
      // keys were already checked to be in one slot of this shard: missing means missing.
      constexpr std::size_t kShown = 64;
      const std::string shown = key.size() <= kShown ? key : key.substr(0, kShown) + "...";
      c.reply.error("ERR no such key: input tensor '" + shown + "' does not exist");
      return false;
    }
    if (value->type() != ValueType::kTensor) {
      c.reply.error(kWrongType);
      return false;
    }
    const Tensor& tensor = value->tensor();
    if (tensor.encoded) {  // a compressed tensor: the model gets its elements
      std::string error;
      std::shared_ptr<const DecodedTensor> decoded =
          decode_tensor(c.server.keyspace(), tensor, &error);
      if (!decoded) {
        c.reply.error(error);
        return false;
      }
      execution.inputs.push_back(
          {tensor.dtype, tensor.shape, decoded->data.data(), decoded->data.size()});
      execution.keep_alive.push_back(std::move(decoded));  // counted until the run is over
      continue;
    }
    ml::TensorView input{tensor.dtype, tensor.shape, tensor.data.data(), tensor.data.size()};
    // A tensor in a sealed shared-memory segment: a worker may map the segment instead of
    // receiving a copy (the segment's descriptor stays open while the value is kept alive).
    if (const auto* segment = dynamic_cast<const ShmSegment*>(tensor.data.storage())) {
      input.file = segment->fd();
      input.file_offset = static_cast<std::uint64_t>(tensor.data.data() - segment->data());
    }
    execution.inputs.push_back(input);
    execution.keep_alive.push_back(value);  // the bytes stay valid even if the key is replaced
  }
  return true;
}

bool outputs_writable(CommandContext& c, std::span<const std::string> keys) {
  for (const auto& key : keys) {
    ValuePtr value = c.server.keyspace().get(key);
    if (value && value->type() != ValueType::kTensor) {
      c.reply.error(kWrongType);
      return false;
    }
  }
  return true;
}

bool parse_execute_timeout(CommandContext& c, std::size_t index,
                           std::optional<std::chrono::milliseconds>& timeout,
                           std::string_view command) {
  if (index + 1 >= c.argc()) {
    c.reply.error(std::string("ERR No value provided for TIMEOUT") +
                  (command == "AI.SCRIPTEXECUTE" ? " in AI.SCRIPTEXECUTE" : ""));
    return false;
  }
  auto ms = parse_int(c.arg(index + 1));
  if (!ms || *ms <= 0) {
    c.reply.error("ERR Invalid value for TIMEOUT");
    return false;
  }
  timeout = saturated_timeout(*ms);
  return true;
}

namespace {

template <typename Entry>
std::function<void(ReplyBuffer&)> store_versioned(Server& server, const std::string& key,
                                                  Entry entry, ValueType type) {
  bool stored = server.keyspace().update(key, [&](MutableSlot& slot) {
    const Value* current = slot.peek();
    if (current && current->type() != type) return false;
    if constexpr (std::is_same_v<Entry, ModelEntry>) {
      entry.version = current ? current->model().version + 1 : 1;
      if (current && entry.keep > 0) {  // the version replaced, then the ones it kept
        const ModelEntry& old = current->model();
        if (old.runtime) {
          entry.kept.push_back(
              KeptModel{old.version, old.tag, old.batching, old.runtime, old.stats});
        }
        for (const KeptModel& k : old.kept) {
          if (entry.kept.size() >= entry.keep) break;
          entry.kept.push_back(k);
        }
      }
    } else {
      entry.version = current ? current->script().version + 1 : 1;
    }
    slot.assign(std::make_shared<Value>(std::move(entry)));
    return true;
  });
  if (!stored) return [](ReplyBuffer& reply) { reply.error(kWrongType); };
  server.mark_dirty();
  return [](ReplyBuffer& reply) { reply.simple("OK"); };
}

}  // namespace

std::function<void(ReplyBuffer&)> store_next_version(Server& server, const std::string& key,
                                                     ModelEntry entry) {
  return store_versioned(server, key, std::move(entry), ValueType::kModel);
}

std::function<void(ReplyBuffer&)> store_next_version(Server& server, const std::string& key,
                                                     ScriptEntry entry) {
  return store_versioned(server, key, std::move(entry), ValueType::kScript);
}

Buffer join_chunks(std::vector<Buffer>& args, std::size_t first) {
  if (first + 1 == args.size()) return std::move(args[first]);
  std::size_t total = 0;
  for (std::size_t i = first; i < args.size(); ++i) total += args[i].size();
  Buffer joined = Buffer::uninitialized(total);
  std::size_t offset = 0;
  for (std::size_t i = first; i < args.size(); ++i) {
    if (!args[i].empty()) std::memcpy(joined.data() + offset, args[i].data(), args[i].size());
    offset += args[i].size();
  }
  return joined;
}

namespace {

constexpr std::size_t kShmOutputMinBytes = 64 * 1024;

// Stores the outputs (all or nothing) and returns the reply to send.
std::function<void(ReplyBuffer&)> store_outputs(Server& server,
                                                const std::vector<std::string>& keys,
                                                std::vector<ml::OwnedTensor> outputs,
                                                std::optional<std::uint64_t> ran_version) {
  if (outputs.size() != keys.size()) {
    std::string text = "ERR the run returned " + std::to_string(outputs.size()) +
                       " output tensor(s) but " + std::to_string(keys.size()) +
                       " OUTPUTS key(s) were given; nothing was stored";
    return [text](ReplyBuffer& reply) { reply.error(text); };
  }
  std::size_t bytes = 0;
  for (const auto& output : outputs) bytes += output.data.size();
  if (server.keyspace().over_limit(bytes)) {
    return [](ReplyBuffer& reply) { reply.error(kOomError); };
  }
  std::vector<std::pair<std::string, std::shared_ptr<Value>>> entries;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    ml::OwnedTensor& out = outputs[i];
    // Outputs of a useful size go to shared memory, so local clients view them without a copy:
    // a worker's output that came as a sealed file becomes the segment itself; others are copied
    // in (once, here on the executor's thread). If the pool is full they stay on the heap.
    SharedMemory& shm = server.shared_memory();
    const bool in_file = dynamic_cast<const SealedFile*>(out.data.storage()) != nullptr;
    std::optional<Buffer> moved;
    if (shm.enabled() && (in_file || out.data.size() >= kShmOutputMinBytes)) {
      ShmFailure failure;
      std::string error;
      moved = in_file ? shm.adopt_sealed(out.data, &failure, &error)
                      : shm.copy_in(out.data.view(), &failure, &error);
    }
    if (moved) {
      out.data = std::move(*moved);
    } else if (in_file) {
      out.data = out.data.clone();  // a file the pool could not take: its bytes on the heap
    }
    entries.emplace_back(keys[i], std::make_shared<Value>(Tensor{out.dtype, std::move(out.shape),
                                                                 std::move(out.data)}));
  }
  server.mark_dirty(entries.size());
  server.keyspace().set_many(std::move(entries));
  if (ran_version) {
    return [v = *ran_version](ReplyBuffer& reply) { reply.integer(static_cast<std::int64_t>(v)); };
  }
  return [](ReplyBuffer& reply) { reply.simple("OK"); };
}

}  // namespace

Outcome execute_and_store(CommandContext& c, std::shared_ptr<ml::Execution> execution,
                          std::vector<std::string> output_keys,
                          std::optional<std::chrono::milliseconds> timeout,
                          std::optional<std::uint64_t> ran_version) {
  std::weak_ptr<Session> weak = c.session.weak_session();
  Server& server = c.server;
  if (timeout) execution->deadline = std::chrono::steady_clock::now() + *timeout;
  const bool caller_timeout = timeout.has_value();
  execution->done = [weak, &server, keys = std::move(output_keys), caller_timeout, ran_version,
                     deadline = execution->deadline](ml::Status status,
                                                     std::vector<ml::OwnedTensor> outputs) {
    auto session = weak.lock();
    if (!session) return;  // the client left: nothing to store for it
    // Stopped at the caller's own TIMEOUT: RedisAI's reply. Stopped at the server's
    // --run-timeout: an error that says so.
    if (status.timed_out && caller_timeout && std::chrono::steady_clock::now() >= deadline) {
      session->resume([](ReplyBuffer& reply) { reply.simple("TIMEDOUT"); });
      return;
    }
    if (!status.ok) {
      std::string text = "ERR " + status.message;
      if (status.timed_out) text += " (the server's --run-timeout)";
      session->resume([text](ReplyBuffer& reply) { reply.error(text); });
      return;
    }
    session->resume(store_outputs(server, keys, std::move(outputs), ran_version));
  };
  std::weak_ptr<ml::Execution> weak_execution = execution;
  ml::Executor& executor = server.executor();
  c.session.on_close_while_parked([weak_execution, &executor] {
    if (auto e = weak_execution.lock()) executor.cancel(*e);
  });
  if (timeout) {
    c.session.arm_timer(*timeout, [weak, weak_execution, &executor] {
      auto e = weak_execution.lock();
      auto session = weak.lock();
      if (e && session && executor.cancel(*e)) {
        session->resume([](ReplyBuffer& reply) { reply.simple("TIMEDOUT"); });
      }
    });
  }
  server.executor().submit(std::move(execution));
  return Outcome::kParked;
}

}  // namespace slipstream::server
