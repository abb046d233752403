// Mapping of server error replies to exceptions (see server_errors.hpp).
#include "client/server_errors.hpp"

#include <string>

namespace slipstream::client {
namespace {

bool starts_with_word(std::string_view text, std::string_view word) {
  return text.starts_with(word) && (text.size() == word.size() || text[word.size()] == ' ');
}

}  // namespace

void throw_server_error(std::string_view server_text, std::string_view context) {
  std::string text(server_text);
  std::string message = std::string(context) + ": " + text;
  if (starts_with_word(server_text, "WRONGTYPE")) throw WrongTypeError(message, text);
  if (starts_with_word(server_text, "OOM")) throw OutOfMemoryError(message, text);
  if (starts_with_word(server_text, "NOAUTH") || starts_with_word(server_text, "WRONGPASS") ||
      server_text.starts_with("ERR invalid password") ||
      server_text.starts_with("ERR invalid username-password") ||
      server_text.starts_with("ERR AUTH") || server_text.starts_with("ERR Client sent AUTH")) {
    throw AuthError(message, text);
  }
  if (server_text.starts_with("ERR tensor key is empty") ||
      server_text.starts_with("ERR no such key") ||
      server_text.starts_with("ERR model key is empty") ||
      server_text.starts_with("ERR script key is empty") ||
      server_text.starts_with("ERR cannot find run info for key")) {
    throw KeyNotFoundError(std::string(context) + ": key does not exist (server: " + text + ")");
  }
  if (starts_with_word(server_text, "MOVED")) {
    // A client in cluster mode follows MOVED itself; one that surfaces here was sent to a
    // cluster member by a client told it talks to a single server.
    throw ServerError(message +
                          " (the server is a member of a cluster and the key lives on another "
                          "member; this client sends every request to the one address it was "
                          "given, as it does in standalone mode, SR_DB_TYPE=Standalone or cluster "
                          "mode turned off in its options: leave SR_DB_TYPE unset, to detect the "
                          "cluster, or set it to Clustered)",
                      text);
  }
  throw ServerError(message, text);
}

}  // namespace slipstream::client
