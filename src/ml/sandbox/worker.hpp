// The model worker: a process the server starts (`slipstream ml-worker`) to load, check and run
// models and scripts on its behalf, so that untrusted archives and code never execute inside the
// server. See sandbox_backend.hpp for the server's side and docs/security.md for what it buys.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "ml/backend.hpp"

namespace slipstream::ml::sandbox {

/// Confines the calling process before it serves requests (Linux): dies with its parent
/// (`parent_pid`), the first to go when memory runs out (its OOM score adjustment raised by 500
/// over the inherited one, at most 1000; best effort), no core dumps, no new privileges,
/// stdin/stdout to /dev/null, every file
/// descriptor but stderr and `channel_fd` closed, and (where libseccomp is built in) a system-call
/// filter that refuses opening files, executing programs, creating processes, sockets and other
/// processes' memory or signals. Returns a one-line description of what was applied; throws
/// std::runtime_error when a step that must succeed fails.
std::string confine_worker(int channel_fd, long parent_pid, bool syscall_filter);

/// Serves the server's requests on `channel_fd` with `backend` (the TorchScript backend, with its
/// operator check on) until the server closes the channel. Warms the backend up and applies
/// `confine` first, then reports ready. Returns the process exit code.
int serve_worker(int channel_fd, Backend& backend, const std::function<std::string()>& confine);

}  // namespace slipstream::ml::sandbox
