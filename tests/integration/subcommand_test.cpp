// Container commands (CONFIG, CLIENT, CLUSTER, COMMAND) against a real server: the table picks the
// subcommand, with Redis's error texts for an unknown one or a wrong count, the subcommand's own
// authentication gate and flags, and COMMAND's Redis 7 view of the subcommands.
#include <gtest/gtest.h>

#include <algorithm>

#include "support/raw_client.hpp"
#include "support/server_process.hpp"

namespace slipstream::testing {
namespace {

class SubcommandTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { server_ = new ServerProcess(); }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  RawClient client() { return RawClient::tcp(server_->port()); }
  static ServerProcess* server_;
};
ServerProcess* SubcommandTest::server_ = nullptr;

// The entry in a COMMAND reply's array of entries named `name`; nullptr when none is.
const RespReply* entry_named(const RespReply& entries, std::string_view name) {
  for (const RespReply& entry : entries.elements) {
    if (!entry.elements.empty() && entry.elements[0].text == name) return &entry;
  }
  return nullptr;
}

TEST_F(SubcommandTest, UnknownSubcommandAndWrongCountKeepRedisTexts) {
  RawClient c = client();
  EXPECT_EQ(c.call({"CONFIG", "NOSUCH"}).str(),
            "-ERR unknown subcommand 'NOSUCH'. Try CONFIG HELP.");
  EXPECT_EQ(c.call({"CLIENT", "nosuch", "x"}).str(),
            "-ERR unknown subcommand 'nosuch'. Try CLIENT HELP.");
  EXPECT_EQ(c.call({"CLUSTER", "NOPE"}).str(), "-ERR unknown subcommand 'NOPE'. Try CLUSTER HELP.");
  EXPECT_EQ(c.call({"CONFIG", "GET"}).str(),
            "-ERR wrong number of arguments for 'config|get' command");
  EXPECT_EQ(c.call({"config", "Set", "maxmemory"}).str(),
            "-ERR wrong number of arguments for 'config|set' command");
  // CONFIG SET takes pairs: an odd count is a wrong count too.
  EXPECT_EQ(c.call({"CONFIG", "SET", "maxmemory", "0", "maxclients"}).str(),
            "-ERR wrong number of arguments for 'config|set' command");
  EXPECT_EQ(c.call({"CONFIG", "RESETSTAT", "x"}).str(),
            "-ERR wrong number of arguments for 'config|resetstat' command");
  EXPECT_EQ(c.call({"CLIENT", "SETNAME"}).str(),
            "-ERR wrong number of arguments for 'client|setname' command");
  EXPECT_EQ(c.call({"CLIENT", "GETNAME", "x"}).str(),
            "-ERR wrong number of arguments for 'client|getname' command");
  EXPECT_EQ(c.call({"CLUSTER", "KEYSLOT"}).str(),
            "-ERR wrong number of arguments for 'cluster|keyslot' command");
  // The container's own count is checked first.
  EXPECT_EQ(c.call({"CONFIG"}).str(), "-ERR wrong number of arguments for 'config' command");
  EXPECT_EQ(c.call({"CLIENT"}).str(), "-ERR wrong number of arguments for 'client' command");
  // COMMAND keeps one text for both cases.
  EXPECT_EQ(c.call({"COMMAND", "NOPE"}).str(),
            "-ERR unknown subcommand or wrong number of arguments for 'NOPE'. Try COMMAND HELP.");
  EXPECT_EQ(c.call({"COMMAND", "count", "x"}).str(),
            "-ERR unknown subcommand or wrong number of arguments for 'count'. Try COMMAND HELP.");
  EXPECT_EQ(c.call({"PING"}).str(), "+PONG");
}

TEST_F(SubcommandTest, SubcommandsAreFoundCaseInsensitively) {
  RawClient c = client();
  EXPECT_EQ(c.call({"config", "gEt", "maxclients"}).str(), "[$maxclients, $10000]");
  EXPECT_TRUE(c.call({"Client", "SetName", "rank-3"}).is_ok());
  EXPECT_EQ(c.call({"CLIENT", "getname"}).str(), "$rank-3");
  EXPECT_EQ(c.call({"cluster", "keyslot", "foo"}).str(), ":12182");
  EXPECT_EQ(c.call({"CLUSTER", "MyId"}).str(), "-ERR This instance has cluster support disabled");
  EXPECT_EQ(c.call({"CLUSTER", "HELP"}).elements.size(), 8u);
  EXPECT_TRUE(c.call({"CONFIG", "resetstat"}).is_ok());
}

TEST_F(SubcommandTest, AdminSubcommandsBehaveAsBefore) {
  RawClient c = client();
  EXPECT_TRUE(c.call({"CONFIG", "SET", "maxmemory", "100mb", "maxclients", "500"}).is_ok());
  EXPECT_EQ(c.call({"CONFIG", "GET", "maxmemory", "maxclients"}).str(),
            "[$maxmemory, $104857600, $maxclients, $500]");
  // A bad pair changes nothing, protected configs stay refused.
  EXPECT_TRUE(c.call({"CONFIG", "SET", "maxmemory", "1", "dir", "/"}).is_error());
  EXPECT_EQ(c.call({"CONFIG", "GET", "maxmemory"}).str(), "[$maxmemory, $104857600]");
  EXPECT_TRUE(c.call({"CONFIG", "SET", "maxmemory", "0", "maxclients", "10000"}).is_ok());
  RespReply list = c.call({"CLIENT", "LIST"});
  EXPECT_NE(list.text.find("cmd=client"), std::string::npos) << list.text;
}

TEST(SubcommandAuthTest, SubcommandsWaitForAuthentication) {
  ServerProcess server({"--requirepass", "pw"});
  RawClient c = RawClient::tcp(server.port());
  // The container's gate comes first: nothing about its subcommands is told before AUTH.
  EXPECT_EQ(c.call({"CONFIG", "GET", "maxmemory"}).str(), "-NOAUTH Authentication required.");
  EXPECT_EQ(c.call({"CONFIG", "NOSUCH"}).str(), "-NOAUTH Authentication required.");
  EXPECT_EQ(c.call({"CLIENT", "SETNAME"}).str(), "-NOAUTH Authentication required.");
  EXPECT_EQ(c.call({"COMMAND", "COUNT"}).str(), "-NOAUTH Authentication required.");
  EXPECT_TRUE(c.call({"AUTH", "pw"}).is_ok());
  EXPECT_EQ(c.call({"CONFIG", "GET", "requirepass"}).str(), "[$requirepass, $pw]");
  EXPECT_EQ(c.call({"CONFIG", "NOSUCH"}).str(),
            "-ERR unknown subcommand 'NOSUCH'. Try CONFIG HELP.");
}

TEST_F(SubcommandTest, CommandInfoListsSubcommandsAsRedis7Does) {
  RawClient c = client();
  RespReply info = c.call({"COMMAND", "INFO", "config", "config|get", "CONFIG|NOSUCH"});
  ASSERT_EQ(info.elements.size(), 3u);
  const RespReply& config = info.elements[0];
  ASSERT_EQ(config.elements.size(), 10u);
  EXPECT_EQ(config.elements[0].str(), "$config");
  EXPECT_EQ(config.elements[1].str(), ":-2");
  const RespReply& subs = config.elements[9];
  ASSERT_EQ(subs.elements.size(), 3u);
  const RespReply* get = entry_named(subs, "config|get");
  ASSERT_NE(get, nullptr) << subs.str();
  ASSERT_EQ(get->elements.size(), 10u);
  EXPECT_EQ(get->elements[1].str(), ":-3");
  EXPECT_EQ(get->elements[2].str(), "[+admin, +stale]");
  EXPECT_EQ(get->elements[3].str(), ":0");  // no keys
  EXPECT_EQ(get->elements[9].str(), "[]");
  EXPECT_NE(entry_named(subs, "config|set"), nullptr);
  EXPECT_NE(entry_named(subs, "config|resetstat"), nullptr);
  // A subcommand can be asked for by its full name; an unknown one is nil.
  EXPECT_EQ(info.elements[1].str(), get->str());
  EXPECT_EQ(info.elements[2].kind, RespReply::Kind::kNullArray);

  RespReply client_info = c.call({"COMMAND", "INFO", "client|setname", "client|list"});
  ASSERT_EQ(client_info.elements.size(), 2u);
  EXPECT_EQ(client_info.elements[0].elements[2].str(), "[+stale]");
  EXPECT_EQ(client_info.elements[1].elements[2].str(), "[+admin, +stale]");
  // Plain commands keep an empty subcommand list.
  RespReply plain = c.call({"COMMAND", "INFO", "get"});
  EXPECT_EQ(plain.elements[0].elements[9].str(), "[]");
}

TEST_F(SubcommandTest, CommandListAndDocsNameSubcommands) {
  RawClient c = client();
  RespReply list = c.call({"COMMAND", "LIST"});
  std::vector<std::string> names;
  for (const RespReply& name : list.elements) names.push_back(name.text);
  for (const char* name : {"config", "config|get", "config|set", "config|resetstat", "client",
                           "client|list", "cluster|keyslot", "command|docs", "get"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  }
  // COUNT stays the number of commands, subcommands not counted (as in Redis).
  EXPECT_EQ(c.call({"COMMAND", "COUNT"}).integer,
            static_cast<long long>(c.call({"COMMAND"}).elements.size()));
  EXPECT_LT(c.call({"COMMAND", "COUNT"}).integer, static_cast<long long>(names.size()));

  RespReply docs = c.call({"COMMAND", "DOCS", "cluster", "cluster|keyslot", "get"});
  ASSERT_EQ(docs.elements.size(), 6u);  // name, doc, name, doc, ...
  EXPECT_EQ(docs.elements[0].str(), "$cluster");
  const RespReply& cluster = docs.elements[1];
  ASSERT_EQ(cluster.elements.size(), 8u);  // summary, since, group, subcommands
  EXPECT_EQ(cluster.elements[6].str(), "$subcommands");
  EXPECT_EQ(cluster.elements[7].elements.size(), 14u);  // seven names and their docs
  EXPECT_EQ(cluster.elements[7].elements[0].str(), "$cluster|slots");
  EXPECT_EQ(docs.elements[2].str(), "$cluster|keyslot");
  EXPECT_EQ(docs.elements[4].str(), "$get");
  EXPECT_EQ(docs.elements[5].elements.size(), 6u);  // no subcommands: summary, since, group
}

}  // namespace
}  // namespace slipstream::testing
