// `slipstream server --daemonize`: the server runs in the background, and the command returns
// once it answers PING (status 0) or with the reason it did not start (status 1).
#pragma once

#include <optional>
#include <string>

#include "server/config.hpp"

namespace slipstream::cli {

struct DaemonOptions {
  bool enabled = false;
  std::string pid_file;        ///< written once the server is ready, removed when it exits
  std::string log_file;        ///< the server's output; empty: DIR/slipstream.log
  double ready_timeout = 120;  ///< seconds for start-up (snapshot load included)
};

/// Forks. In the background process (a new session, stdin from /dev/null, stdout and stderr
/// appended to the log file) returns nullopt: the caller goes on to run the server. In the
/// calling process waits until that server answers PING as itself, writes the pid file and
/// returns 0; when it exits first or does not answer in time (it is then stopped), prints why
/// with the end of its log and returns 1. Throws std::runtime_error before forking when the
/// server could not be checked (no address) or the log file cannot be opened. Call it before any
/// thread is started.
std::optional<int> daemonize(const DaemonOptions& daemon, const server::ServerOptions& options);

/// In the background process after the server stopped: removes the pid file if it still names
/// this process.
void remove_pid_file(const DaemonOptions& daemon);

}  // namespace slipstream::cli
