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

Outcome client(CommandContext& c) {
  std::string_view sub = c.arg(1);
  // Each subcommand with its exact argument count (name and subcommand included).
  struct Sub {
    std::string_view name;
    std::size_t argc;
  };
  static constexpr Sub kSubs[] = {{"SETNAME", 3}, {"GETNAME", 2}, {"ID", 2},  {"INFO", 2},
                                  {"LIST", 2},    {"SETINFO", 4}, {"HELP", 2}};
  const Sub* found = nullptr;
  for (const Sub& s : kSubs) {
    if (equals_nocase(sub, s.name)) found = &s;
  }
  if (found == nullptr) {
    c.reply.error(unknown_subcommand_error(sub, "CLIENT"));
    return Outcome::kDone;
  }
  if (c.argc() != found->argc) {
    c.reply.error(subcommand_arity_error("client", found->name));
    return Outcome::kDone;
  }
  if (found->name == "SETNAME") {
    for (char ch : c.arg(2)) {
      if (ch < '!' || ch > '~') {
        c.reply.error("ERR Client names cannot contain spaces, newlines or special characters.");
        return Outcome::kDone;
      }
    }
    c.session.set_name(std::string(c.arg(2)));
    c.reply.simple("OK");
  } else if (found->name == "GETNAME") {
    std::string name = c.session.name();
    if (name.empty()) {
      c.reply.null();
    } else {
      c.reply.bulk(name);
    }
  } else if (found->name == "ID") {
    c.reply.integer(static_cast<std::int64_t>(c.session.id()));
  } else if (found->name == "INFO") {
    c.reply.verbatim(c.session.describe() + "\n");
  } else if (found->name == "LIST") {
    std::string text;
    for (const auto& line : c.server.describe_clients()) text += line + "\n";
    c.reply.verbatim(text);
  } else if (found->name == "SETINFO") {
    c.reply.simple("OK");  // library name/version: accepted for redis-py/hiredis >= 7.2
  } else {
    const char* lines[] = {"CLIENT <subcommand> [<arg> ...]. Subcommands are:",
                           "SETNAME <name>", "GETNAME", "ID", "INFO", "LIST", "HELP"};
    c.reply.array(std::size(lines));
    for (const char* line : lines) c.reply.simple(line);
  }
  return Outcome::kDone;
}

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
    {"CLIENT", -2, kAdmin | kStale, 0, 0, 0, client, "connection",
     "SETNAME name | GETNAME | ID | INFO | LIST | HELP",
     "Inspects and names client connections."},
  });
}

}  // namespace slipstream::server
