// Shared by AI.MODELEXECUTE and AI.SCRIPTEXECUTE: gathering input tensors, handing the run to the
// executor, and storing every output at once (or none) when it finishes.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ml/executor.hpp"
#include "server/commands/command_table.hpp"
#include "server/store/value.hpp"

namespace slipstream::server {

/// The value at `key` if it has `type`; otherwise null, with `missing_error` (no such key) or
/// WRONGTYPE written. For AI.MODEL* (missing: "ERR model key is empty") and AI.SCRIPT*.
ValuePtr lookup_typed(CommandContext& c, std::string_view key, ValueType type,
                      std::string_view missing_error);

/// Writes WRONGTYPE and returns false when `key` exists with a type other than `type`.
bool type_allows(CommandContext& c, std::string_view key, ValueType type);

/// Adds the tensors at `keys` as inputs of `execution` (zero-copy views kept alive with it).
/// Writes the RedisAI error and returns false for a missing or non-tensor key.
bool collect_inputs(CommandContext& c, std::span<const std::string> keys,
                    ml::Execution& execution);

/// Returns false (with WRONGTYPE written) if an output key holds something other than a tensor.
bool outputs_writable(CommandContext& c, std::span<const std::string> keys);

/// Parses "TIMEOUT ms" (ms > 0). Writes the RedisAI error and returns false when malformed.
bool parse_execute_timeout(CommandContext& c, std::size_t index,
                           std::optional<std::chrono::milliseconds>& timeout,
                           std::string_view command);

/// Submits `execution`, parks the connection, and on completion stores the outputs under
/// `output_keys` atomically and replies +OK, or replies the backend's error with no output
/// written. With a timeout, a run that has not started in time is dropped, and one still running
/// at it is stopped: reply TIMEDOUT. A run stopped at the server's --run-timeout gets an error.
/// With `ran_version`, success replies that integer (the model version that ran) instead of +OK.
Outcome execute_and_store(CommandContext& c, std::shared_ptr<ml::Execution> execution,
                          std::vector<std::string> output_keys,
                          std::optional<std::chrono::milliseconds> timeout,
                          std::optional<std::uint64_t> ran_version = std::nullopt);

/// Stores `entry` under `key` as the next version (1 for a new key) and returns the reply to send:
/// +OK, or WRONGTYPE when the key holds another type (nothing stored). Executions already running
/// keep the runtime they hold. For AI.MODELSTORE and AI.SCRIPTSTORE/SET, once loaded.
std::function<void(ReplyBuffer&)> store_next_version(Server& server, const std::string& key,
                                                     ModelEntry entry);
std::function<void(ReplyBuffer&)> store_next_version(Server& server, const std::string& key,
                                                     ScriptEntry entry);

/// Concatenates BLOB chunks (the first chunk is moved, not copied, when it is the only one).
Buffer join_chunks(std::vector<Buffer>& args, std::size_t first);

}  // namespace slipstream::server
