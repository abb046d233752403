// Assembles the command table from the command groups; see command_table.hpp.
#include "server/commands/command_table.hpp"

#include <algorithm>
#include <cctype>
#include <stdexcept>
#include "common/ascii.hpp"
#include "server/commands/command_util.hpp"
#include "server/stream/stream_commands.hpp"
#include "server/train/train_commands.hpp"

namespace slipstream::server {
namespace {

std::string lower(std::string_view text) { return ascii_lower(text); }

// A request reaches a handler only through an entry these hold for: a mistake here would be a
// null call at the first such request, so it stops the server at start-up instead.
void check_entry(const CommandSpec& spec) {
  auto fail = [&](const std::string& what) {
    throw std::logic_error("command table: " + std::string(spec.name) + ": " + what);
  };
  if (spec.subcommands.empty()) {
    if (spec.handler == nullptr) fail("no handler");
    return;
  }
  // Dispatch runs the container's own handler only for a request of the name alone.
  if (spec.handler == nullptr && arity_ok(spec.arity, 1)) fail("no handler for the name alone");
  for (const CommandSpec& sub : spec.subcommands) {
    if (sub.handler == nullptr) fail(std::string(sub.name) + ": no handler");
    if (!sub.subcommands.empty()) fail(std::string(sub.name) + ": nested subcommands");
    if (sub.arity > -2 && sub.arity < 2) {
      fail(std::string(sub.name) + ": arity must count the container's name and the subcommand");
    }
  }
}

}  // namespace

std::vector<std::size_t> no_routed_keys(std::span<const Buffer>) { return {}; }

CommandTable::CommandTable() {
  add_connection_commands(specs_);
  add_server_commands(specs_);
  add_keyspace_commands(specs_);
  add_string_commands(specs_);
  add_hash_commands(specs_);
  add_list_commands(specs_);
  add_tensor_commands(specs_);
  add_model_commands(specs_);
  add_script_commands(specs_);
  add_native_commands(specs_);
  add_cluster_commands(specs_);
  add_shm_commands(specs_);
  add_stream_commands(specs_);
  add_train_commands(specs_);
  for (std::size_t i = 0; i < specs_.size(); ++i) index_.emplace(lower(specs_[i].name), i);
  for (const CommandSpec& spec : specs_) check_entry(spec);
}

const CommandSpec* CommandTable::find(std::string_view name) const {
  char folded[64] = {};  // (initialised: GCC 12 cannot see that only name.size() bytes are read)
  if (name.size() > sizeof folded) return nullptr;
  for (std::size_t i = 0; i < name.size(); ++i) {
    folded[i] = ascii_lower(name[i]);
  }
  auto it = index_.find(std::string_view(folded, name.size()));
  return it == index_.end() ? nullptr : &specs_[it->second];
}

const CommandSpec* CommandTable::find_subcommand(const CommandSpec& container,
                                                 std::string_view name) noexcept {
  for (const CommandSpec& sub : container.subcommands) {
    if (equals_nocase(sub.name, name)) return &sub;
  }
  return nullptr;
}

std::string CommandTable::subcommand_error(const CommandSpec& container, std::string_view sub,
                                           const CommandSpec* known) {
  if (container.subcommand_error != nullptr) {
    return container.subcommand_error(container, sub, known);
  }
  if (known == nullptr) return unknown_subcommand_error(sub, container.name);
  return subcommand_arity_error(lower(container.name), known->name);
}

std::string CommandTable::full_name(const CommandSpec& container, const CommandSpec& sub) {
  return lower(container.name) + "|" + lower(sub.name);
}

std::vector<std::string_view> CommandTable::flag_names(std::uint32_t flags) {
  std::vector<std::string_view> names;
  if (flags & kWrite) names.push_back("write");
  if (flags & kReadOnly) names.push_back("readonly");
  if (flags & kDenyOom) names.push_back("denyoom");
  if (flags & kAdmin) names.push_back("admin");
  if (flags & kNoAuth) names.push_back("no_auth");
  if (flags & kBlocking) names.push_back("blocking");
  if (flags & kFast) names.push_back("fast");
  if (flags & kStale) names.push_back("stale");
  return names;
}

}  // namespace slipstream::server
