// Assembles the command table from the command groups; see command_table.hpp.
#include "server/commands/command_table.hpp"

#include <algorithm>
#include <cctype>
#include "common/ascii.hpp"
#include "server/stream/stream_commands.hpp"
#include "server/train/train_commands.hpp"

namespace slipstream::server {
namespace {

std::string lower(std::string_view text) { return ascii_lower(text); }

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
