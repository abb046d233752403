// The declarative command table: every command's name, arity, flags, key positions and handler,
// and a container's subcommands (CONFIG GET, CLIENT LIST, ...) as entries of their own, as in
// Redis 7. Dispatch, argument-count checks, authentication gating, COMMAND output and
// docs/commands.md all come from these entries.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/buffer.hpp"

namespace slipstream::server {

class Server;
class Session;
class ReplyBuffer;

enum CommandFlag : std::uint32_t {
  kWrite = 1u << 0,     ///< may modify the keyspace
  kReadOnly = 1u << 1,  ///< never modifies the keyspace
  kAdmin = 1u << 2,     ///< server administration
  kNoAuth = 1u << 3,    ///< allowed before AUTH (AUTH, HELLO, QUIT)
  kFast = 1u << 4,      ///< O(1) or O(log n)
  kBlocking = 1u << 5,  ///< may park the connection
  kDenyOom = 1u << 6,   ///< refused with -OOM when memory is over --maxmemory
  kStale = 1u << 7,     ///< connection-level, not about data
};

/// What a handler sees. Arguments include the command name at index 0.
struct CommandContext {
  Server& server;
  Session& session;
  std::vector<Buffer>& args;
  ReplyBuffer& reply;

  std::size_t argc() const noexcept { return args.size(); }
  std::string_view arg(std::size_t i) const noexcept { return args[i].view(); }
};

enum class Outcome { kDone, kParked };
using Handler = Outcome (*)(CommandContext&);
/// Positions of the keys in a request (command name at 0), for commands whose keys first_key /
/// last_key / key_step cannot describe (counted INPUTS/OUTPUTS lists, keywords). Must accept any
/// arguments, malformed ones included: the handler reports syntax errors afterwards.
using KeyFinder = std::vector<std::size_t> (*)(std::span<const Buffer> args);

struct CommandSpec;
/// The error reply for a request to `container` whose subcommand word `sub` (as sent) names none of
/// its subcommands (`known` null), or names `known` with the wrong number of arguments.
using SubcommandError = std::string (*)(const CommandSpec& container, std::string_view sub,
                                        const CommandSpec* known);

/// One command, or one subcommand of a container command. A container (CONFIG, CLIENT, CLUSTER,
/// COMMAND) lists its subcommands; dispatch checks the container's authentication gate and arity,
/// then picks the subcommand named by the second argument (case-insensitively) and applies that
/// subcommand's gate, arity, key positions, flags and handler. Positions and arity count from the
/// container's name, as Redis does: `CONFIG GET pattern` is arity 3.
struct CommandSpec {
  std::string_view name;     ///< upper case, as documented; a subcommand's own word ("GET")
  int arity;                 ///< Redis convention: N exact, -N at least N (name included)
  std::uint32_t flags;
  int first_key, last_key, key_step;  ///< 1-based key positions; last_key -1 = to the end
  /// Runs the request. A container's runs only for a request that names no subcommand (COMMAND
  /// alone), so it is null when the container's arity requires one.
  Handler handler;
  std::string_view group;    ///< "keyspace", "string", "hash", "list", "tensor", "server", ...
  std::string_view syntax;   ///< arguments, for COMMAND DOCS and docs/commands.md
  std::string_view summary;
  /// When set, replaces first_key/last_key/key_step for routing in cluster mode (an empty result:
  /// the command runs on whichever shard receives it, as model and script keys do).
  KeyFinder keys = nullptr;
  /// A container's subcommands, in documentation order (static arrays of the command files);
  /// empty for any other command. Subcommands have no subcommands of their own.
  std::span<const CommandSpec> subcommands = {};
  /// A container's error texts for an unknown subcommand or a wrong count; null: Redis 7's ("ERR
  /// unknown subcommand 'X'. Try CONFIG HELP.", "ERR wrong number of arguments for 'config|get'
  /// command"). COMMAND sets its own, one text for both cases.
  SubcommandError subcommand_error = nullptr;
};

class CommandTable {
 public:
  CommandTable();
  /// Case-insensitive lookup; nullptr for an unknown command.
  const CommandSpec* find(std::string_view name) const;
  const std::vector<CommandSpec>& all() const noexcept { return specs_; }
  /// Text for flags in COMMAND output ("write", "readonly", ...).
  static std::vector<std::string_view> flag_names(std::uint32_t flags);
  /// The subcommand of `container` named `name` (case-insensitive); nullptr when it has none.
  static const CommandSpec* find_subcommand(const CommandSpec& container,
                                            std::string_view name) noexcept;
  /// The error reply for a request to `container` naming subcommand `sub`: unknown (`known`
  /// null) or given the wrong number of arguments. Redis 7's texts unless the container has its
  /// own `subcommand_error`.
  static std::string subcommand_error(const CommandSpec& container, std::string_view sub,
                                      const CommandSpec* known);
  /// Redis's name for a subcommand in COMMAND output: "config|get".
  static std::string full_name(const CommandSpec& container, const CommandSpec& sub);

 private:
  struct NameHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view name) const noexcept {
      return std::hash<std::string_view>{}(name);
    }
  };
  std::vector<CommandSpec> specs_;
  // lower-case name -> specs_ index; looked up without allocating (every request does it)
  std::unordered_map<std::string, std::size_t, NameHash, std::equal_to<>> index_;
};

/// True when argument count `argc` (command name included) satisfies `arity`.
inline bool arity_ok(int arity, std::size_t argc) noexcept {
  return arity >= 0 ? argc == static_cast<std::size_t>(arity)
                    : argc >= static_cast<std::size_t>(-arity);
}

// Each commands_*.cpp contributes its group of entries.
void add_connection_commands(std::vector<CommandSpec>& out);
void add_server_commands(std::vector<CommandSpec>& out);
void add_keyspace_commands(std::vector<CommandSpec>& out);
void add_string_commands(std::vector<CommandSpec>& out);
void add_hash_commands(std::vector<CommandSpec>& out);
void add_list_commands(std::vector<CommandSpec>& out);
void add_tensor_commands(std::vector<CommandSpec>& out);
void add_native_commands(std::vector<CommandSpec>& out);
void add_model_commands(std::vector<CommandSpec>& out);
void add_script_commands(std::vector<CommandSpec>& out);
void add_shm_commands(std::vector<CommandSpec>& out);
void add_cluster_commands(std::vector<CommandSpec>& out);

/// KeyFinder for commands whose only key is a model or script: stored on every shard, so never
/// redirected.
std::vector<std::size_t> no_routed_keys(std::span<const Buffer> args);

}  // namespace slipstream::server
