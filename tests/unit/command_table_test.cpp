// Tests for the command table's subcommands (src/server/commands/command_table.hpp): every
// container lists its subcommands as entries of their own, found case-insensitively, with Redis's
// arity, flags and error texts. Dispatch itself is covered against a real server in
// tests/integration/subcommand_test.cpp.
#include "server/commands/command_table.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace slipstream::server {
namespace {

const CommandTable& table() {
  static const CommandTable commands;
  return commands;
}

std::vector<std::string_view> subcommand_names(std::string_view container) {
  const CommandSpec* spec = table().find(container);
  std::vector<std::string_view> names;
  if (spec == nullptr) return names;
  for (const CommandSpec& sub : spec->subcommands) names.push_back(sub.name);
  return names;
}

const CommandSpec& subcommand(std::string_view container, std::string_view name) {
  const CommandSpec* spec = table().find(container);
  EXPECT_NE(spec, nullptr) << container;
  const CommandSpec* sub = spec ? CommandTable::find_subcommand(*spec, name) : nullptr;
  EXPECT_NE(sub, nullptr) << container << " " << name;
  static const CommandSpec kMissing{};
  return sub ? *sub : kMissing;
}

using Names = std::vector<std::string_view>;

TEST(CommandTableSubcommands, EveryContainerListsItsSubcommands) {
  EXPECT_EQ(subcommand_names("CONFIG"), (Names{"GET", "SET", "RESETSTAT"}));
  EXPECT_EQ(subcommand_names("CLIENT"),
            (Names{"SETNAME", "GETNAME", "ID", "INFO", "LIST", "SETINFO", "HELP"}));
  EXPECT_EQ(subcommand_names("CLUSTER"),
            (Names{"SLOTS", "SHARDS", "NODES", "INFO", "KEYSLOT", "MYID", "HELP"}));
  EXPECT_EQ(subcommand_names("COMMAND"), (Names{"COUNT", "INFO", "LIST", "DOCS"}));
  // Commands that merely take a keyword are not containers.
  EXPECT_TRUE(subcommand_names("INFO").empty());
  EXPECT_TRUE(subcommand_names("AI.CONFIG").empty());
}

TEST(CommandTableSubcommands, ContainersLeaveTheSubcommandsToTheTable) {
  // A container's own handler runs only for its name alone, so only COMMAND (arity -1) has one:
  // a handler on CONFIG, CLIENT or CLUSTER could only be a hand-written second dispatcher.
  for (const CommandSpec& spec : table().all()) {
    if (spec.subcommands.empty()) continue;
    EXPECT_EQ(spec.handler != nullptr, arity_ok(spec.arity, 1)) << spec.name;
    for (const CommandSpec& sub : spec.subcommands) {
      EXPECT_NE(sub.handler, nullptr) << spec.name << " " << sub.name;
      EXPECT_TRUE(sub.subcommands.empty()) << spec.name << " " << sub.name;
      EXPECT_EQ(sub.group, spec.group) << spec.name << " " << sub.name;
      EXPECT_FALSE(sub.summary.empty()) << spec.name << " " << sub.name;
    }
  }
  EXPECT_EQ(table().find("CONFIG")->handler, nullptr);
  EXPECT_EQ(table().find("CLIENT")->handler, nullptr);
  EXPECT_EQ(table().find("CLUSTER")->handler, nullptr);
  EXPECT_NE(table().find("COMMAND")->handler, nullptr);
}

TEST(CommandTableSubcommands, ArityCountsTheContainerName) {
  EXPECT_EQ(subcommand("CONFIG", "GET").arity, -3);
  EXPECT_EQ(subcommand("CONFIG", "SET").arity, -4);
  EXPECT_EQ(subcommand("CONFIG", "RESETSTAT").arity, 2);
  EXPECT_EQ(subcommand("CLIENT", "SETNAME").arity, 3);
  EXPECT_EQ(subcommand("CLIENT", "SETINFO").arity, 4);
  EXPECT_EQ(subcommand("CLUSTER", "KEYSLOT").arity, 3);
  EXPECT_EQ(subcommand("COMMAND", "INFO").arity, -2);
  EXPECT_EQ(subcommand("COMMAND", "COUNT").arity, 2);
  EXPECT_FALSE(arity_ok(subcommand("CONFIG", "GET").arity, 2));  // CONFIG GET
  EXPECT_TRUE(arity_ok(subcommand("CONFIG", "GET").arity, 4));   // CONFIG GET a b
}

TEST(CommandTableSubcommands, FoundCaseInsensitively) {
  const CommandSpec& config = *table().find("config");
  ASSERT_NE(CommandTable::find_subcommand(config, "gEt"), nullptr);
  EXPECT_EQ(CommandTable::find_subcommand(config, "gEt")->name, "GET");
  EXPECT_EQ(CommandTable::find_subcommand(config, "NOSUCH"), nullptr);
  EXPECT_EQ(CommandTable::find_subcommand(config, ""), nullptr);
  EXPECT_EQ(CommandTable::find_subcommand(*table().find("GET"), "x"), nullptr);
  EXPECT_EQ(CommandTable::full_name(config, subcommand("CONFIG", "RESETSTAT")), "config|resetstat");
}

TEST(CommandTableSubcommands, ErrorTextsAreRedisOnes) {
  const CommandSpec& config = *table().find("CONFIG");
  EXPECT_EQ(CommandTable::subcommand_error(config, "NoSuch", nullptr),
            "ERR unknown subcommand 'NoSuch'. Try CONFIG HELP.");
  EXPECT_EQ(CommandTable::subcommand_error(config, "Get", &subcommand("CONFIG", "GET")),
            "ERR wrong number of arguments for 'config|get' command");
  const CommandSpec& client = *table().find("CLIENT");
  EXPECT_EQ(CommandTable::subcommand_error(client, "x", nullptr),
            "ERR unknown subcommand 'x'. Try CLIENT HELP.");
  EXPECT_EQ(CommandTable::subcommand_error(client, "setname", &subcommand("CLIENT", "SETNAME")),
            "ERR wrong number of arguments for 'client|setname' command");
  // A long unknown word is cut at 128 bytes, as Redis does.
  EXPECT_EQ(CommandTable::subcommand_error(config, std::string(300, 'x'), nullptr),
            "ERR unknown subcommand '" + std::string(128, 'x') + "'. Try CONFIG HELP.");
  // COMMAND keeps its older text for both cases.
  const CommandSpec& command = *table().find("COMMAND");
  EXPECT_EQ(CommandTable::subcommand_error(command, "NOPE", nullptr),
            "ERR unknown subcommand or wrong number of arguments for 'NOPE'. Try COMMAND HELP.");
  EXPECT_EQ(CommandTable::subcommand_error(command, "count", &subcommand("COMMAND", "COUNT")),
            "ERR unknown subcommand or wrong number of arguments for 'count'. Try COMMAND HELP.");
}

TEST(CommandTableSubcommands, EachHasItsOwnFlagsAndNoKeys) {
  for (std::string_view name : {"GET", "SET", "RESETSTAT"}) {
    EXPECT_TRUE(subcommand("CONFIG", name).flags & kAdmin) << name;
  }
  // As in Redis 7: listing every connection is administration, naming one's own is not.
  EXPECT_TRUE(subcommand("CLIENT", "LIST").flags & kAdmin);
  EXPECT_FALSE(subcommand("CLIENT", "SETNAME").flags & kAdmin);
  for (const CommandSpec& spec : table().all()) {
    for (const CommandSpec& sub : spec.subcommands) {
      // None may run before AUTH or be refused for memory, and none has keys to route (CLUSTER
      // KEYSLOT's argument is not a key of this server's).
      EXPECT_FALSE(sub.flags & (kNoAuth | kDenyOom)) << spec.name << " " << sub.name;
      EXPECT_TRUE(sub.flags & kStale) << spec.name << " " << sub.name;
      EXPECT_EQ(sub.first_key, 0) << spec.name << " " << sub.name;
      EXPECT_EQ(sub.keys, nullptr) << spec.name << " " << sub.name;
    }
  }
}

}  // namespace
}  // namespace slipstream::server
