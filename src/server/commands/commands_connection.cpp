// Connection commands: PING, ECHO, HELLO, AUTH, SELECT, QUIT, CLIENT.
#include "server/commands/command_util.hpp"
#include "server/net/reply.hpp"
#include "server/server.hpp"
#include "server/net/session.hpp"

namespace slipstream::server {
namespace {

Outcome ping(CommandContext& c) {
  if (c.argc() > 2) {
    c.reply.error("ERR wrong number of arguments for 'ping' command");
  } else if (c.argc() == 2) {
    c.reply.bulk(c.arg(1));
  } else {
    c.reply.simple("PONG");
  }
  return Outcome::kDone;
}

Outcome echo(CommandContext& c) {
  c.reply.bulk(c.arg(1));
  return Outcome::kDone;
}

// Constant-time comparison so a wrong password does not leak its matching prefix length.
bool password_matches(std::string_view expected, std::string_view given) {
  unsigned diff = static_cast<unsigned>(expected.size() ^ given.size());
  for (std::size_t i = 0; i < given.size(); ++i) {
    diff |= static_cast<unsigned char>(given[i]) ^
            static_cast<unsigned char>(expected.empty() ? 0 : expected[i % expected.size()]);
  }
  return diff == 0;
}

// Returns true when authenticated; otherwise writes the error reply.
bool try_auth(CommandContext& c, std::string_view user, std::string_view password,
              bool user_given) {
  std::string expected = c.server.password();
  if (user != "default") {
    c.reply.error("WRONGPASS invalid username-password pair or user is disabled.");
    return false;
  }
  if (expected.empty()) {
    if (user_given) {  // the default user has no password: any password is accepted, as in Redis
      c.session.authenticated = true;
      return true;
    }
    c.reply.error(
        "ERR AUTH <password> called without any password configured for the default user. "
        "Are you sure your configuration is correct?");
    return false;
  }
  if (!password_matches(expected, password)) {
    c.reply.error("WRONGPASS invalid username-password pair or user is disabled.");
    return false;
  }
  c.session.authenticated = true;
  return true;
}

Outcome auth(CommandContext& c) {
  if (c.argc() > 3) {
    c.reply.error(kSyntaxError);
    return Outcome::kDone;
  }
  std::string_view user = c.argc() == 3 ? c.arg(1) : "default";
  if (try_auth(c, user, c.arg(c.argc() - 1), c.argc() == 3)) c.reply.simple("OK");
  return Outcome::kDone;
}

Outcome hello(CommandContext& c) {
  int protocol = c.session.protocol();
  std::size_t i = 1;
  if (c.argc() > 1) {
    auto version = parse_int(c.arg(1));
    if (!version) {
      c.reply.error("ERR Protocol version is not an integer or out of range");
      return Outcome::kDone;
    }
    if (*version != 2 && *version != 3) {
      c.reply.error("NOPROTO unsupported protocol version");
      return Outcome::kDone;
    }
    protocol = static_cast<int>(*version);
    i = 2;
  }
  std::string new_name;
  bool set_name = false;
  for (; i < c.argc(); ++i) {
    if (equals_nocase(c.arg(i), "AUTH") && i + 2 < c.argc()) {
      if (!try_auth(c, c.arg(i + 1), c.arg(i + 2), true)) return Outcome::kDone;
      i += 2;
    } else if (equals_nocase(c.arg(i), "SETNAME") && i + 1 < c.argc()) {
      new_name = std::string(c.arg(++i));
      set_name = true;
    } else {
      c.reply.error("ERR Syntax error in HELLO option '" + std::string(c.arg(i)) + "'");
      return Outcome::kDone;
    }
  }
  if (!c.session.authenticated) {
    c.reply.error(
        "NOAUTH HELLO must be called with the client already authenticated, otherwise the "
        "HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and "
        "select the RESP protocol version at the same time");
    return Outcome::kDone;
  }
  if (set_name) c.session.set_name(new_name);
  c.session.set_protocol(protocol);
  c.reply.set_protocol(protocol);
  c.reply.map(7);
  c.reply.bulk("server");
  c.reply.bulk("redis");
  c.reply.bulk("version");
  c.reply.bulk(kRedisCompatVersion);
  c.reply.bulk("proto");
  c.reply.integer(protocol);
  c.reply.bulk("id");
  c.reply.integer(static_cast<std::int64_t>(c.session.id()));
  c.reply.bulk("mode");
  c.reply.bulk("standalone");
  c.reply.bulk("role");
  c.reply.bulk("master");
  c.reply.bulk("modules");
  c.reply.array(0);
  return Outcome::kDone;
}

Outcome select(CommandContext& c) {
  auto index = parse_int(c.arg(1));
  if (!index) {
    c.reply.error(kNotInteger);
  } else if (*index != 0) {
    c.reply.error("ERR DB index is out of range");
  } else {
    c.reply.simple("OK");
  }
  return Outcome::kDone;
}

Outcome quit(CommandContext& c) {
  c.reply.simple("OK");
  c.session.close_requested = true;
  return Outcome::kDone;
}

Outcome client_setname(CommandContext& c) {
  for (char ch : c.arg(2)) {
    if (ch < '!' || ch > '~') {
      c.reply.error("ERR Client names cannot contain spaces, newlines or special characters.");
      return Outcome::kDone;
    }
  }
  c.session.set_name(std::string(c.arg(2)));
  c.reply.simple("OK");
  return Outcome::kDone;
}

Outcome client_getname(CommandContext& c) {
  std::string name = c.session.name();
  if (name.empty()) {
    c.reply.null();
  } else {
    c.reply.bulk(name);
  }
  return Outcome::kDone;
}

Outcome client_id(CommandContext& c) {
  c.reply.integer(static_cast<std::int64_t>(c.session.id()));
  return Outcome::kDone;
}

Outcome client_info(CommandContext& c) {
  c.reply.verbatim(c.session.describe() + "\n");
  return Outcome::kDone;
}

Outcome client_list(CommandContext& c) {
  std::string text;
  for (const auto& line : c.server.describe_clients()) text += line + "\n";
  c.reply.verbatim(text);
  return Outcome::kDone;
}

Outcome client_setinfo(CommandContext& c) {
  c.reply.simple("OK");  // library name/version: accepted for redis-py/hiredis >= 7.2
  return Outcome::kDone;
}

Outcome client_help(CommandContext& c) {
  const char* lines[] = {"CLIENT <subcommand> [<arg> ...]. Subcommands are:",
                         "SETNAME <name>", "GETNAME", "ID", "INFO", "LIST", "HELP"};
  c.reply.array(std::size(lines));
  for (const char* line : lines) c.reply.simple(line);
  return Outcome::kDone;
}

// Flags as Redis 7 gives them: only LIST, which shows every connection, is an admin command.
constexpr CommandSpec kClientSubcommands[] = {
    {"SETNAME", 3, kStale, 0, 0, 0, client_setname, "connection", "name",
     "Names the connection (printable characters, no spaces); shown by CLIENT LIST."},
    {"GETNAME", 2, kStale, 0, 0, 0, client_getname, "connection", "",
     "The connection's name, or nil."},
    {"ID", 2, kStale, 0, 0, 0, client_id, "connection", "", "The connection's id."},
    {"INFO", 2, kStale, 0, 0, 0, client_info, "connection", "",
     "This connection, in CLIENT LIST's line format."},
    {"LIST", 2, kAdmin | kStale, 0, 0, 0, client_list, "connection", "",
     "One line per connection: id, address, name, age, idle time, buffers, last command."},
    {"SETINFO", 4, kStale, 0, 0, 0, client_setinfo, "connection", "attribute value",
     "Accepted (+OK) and ignored: client libraries send their name and version."},
    {"HELP", 2, kStale, 0, 0, 0, client_help, "connection", "", "Lists the subcommands."},
};

}  // namespace

void add_connection_commands(std::vector<CommandSpec>& out) {
  out.insert(out.end(), {
    {"PING", -1, kFast | kStale, 0, 0, 0, ping, "connection", "[message]",
     "Replies PONG, or the message."},
    {"ECHO", 2, kFast, 0, 0, 0, echo, "connection", "message", "Replies the message."},
    {"HELLO", -1, kFast | kNoAuth | kStale, 0, 0, 0, hello, "connection",
     "[protover [AUTH username password] [SETNAME name]]",
     "Handshake: selects RESP2 or RESP3, optionally authenticates, describes the server."},
    {"AUTH", -2, kFast | kNoAuth | kStale, 0, 0, 0, auth, "connection", "[username] password",
     "Authenticates the connection (username must be 'default')."},
    {"SELECT", 2, kFast, 0, 0, 0, select, "connection", "index",
     "Selects the database; only database 0 exists."},
    {"QUIT", -1, kFast | kNoAuth | kStale, 0, 0, 0, quit, "connection", "",
     "Closes the connection after replying OK."},
    {"CLIENT", -2, kAdmin | kStale, 0, 0, 0, nullptr, "connection", "subcommand [argument ...]",
     "Inspects and names client connections.", nullptr, kClientSubcommands},
  });
}

}  // namespace slipstream::server
