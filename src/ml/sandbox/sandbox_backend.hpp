// The sandboxed backend: the server's ml::Backend, which loads, checks and runs every model and
// script in separate worker processes (`slipstream ml-worker`, worker.hpp) instead of in the
// server.
//
// Why processes: a stored model is untrusted input in two ways. Its archive is parsed by
// libtorch's loader, which crashes on crafted bytes; its code runs with the server's rights, and
// a run cannot be interrupted inside libtorch. In a worker, a crash costs an error reply, a run
// past its deadline is stopped by killing the worker, an in-place operation writes into the
// worker's private copy of the inputs, and the worker is confined (worker.hpp) so that what the
// operator check (operator_policy.hpp) might miss still cannot reach files or processes.
//
// Shape: a pool of at most `workers` processes, started when first needed and restarted when one
// dies or is killed. An executor thread takes a worker for one call (load or run) and gives it
// back. A model or script is loaded into a worker the first time that worker runs it (its bytes
// are kept for that), and unloaded from all of them when the server drops it.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ml/backend.hpp"

namespace slipstream::ml {

struct SandboxOptions {
  /// The worker's command line (program first), to which the channel descriptor and the server's
  /// pid are appended as `--channel-fd N --parent-pid P`.
  std::vector<std::string> worker_command;
  /// Most worker processes at once: as many as threads may call the backend at the same time
  /// (executor threads + the loader), so none waits for a worker.
  unsigned workers = 3;
  /// How long a worker may take to start, and a load (parse, check, compile) to finish.
  std::chrono::milliseconds start_timeout{30000};
  std::chrono::milliseconds load_timeout{120000};
  /// Tensors of kShareFromBytes or more travel between the server and a worker as memory files
  /// instead of through the channel (channel.hpp): inputs held in sealed memory files
  /// (TensorView::file) are mapped copy-on-write in the worker, and outputs come as files the
  /// worker wrote, sealed by the server (an output's Buffer is then a SealedFile); and requests
  /// and replies meet in a control block (control_block.hpp). Off: everything goes through the
  /// channel's socket (the server's --model-shared-memory no).
  bool share_memory = true;
  /// Each worker's address-space limit in bytes (RLIMIT_AS, set as it starts); nullopt: none.
  /// libtorch alone maps about 600 MB; CUDA reserves far more address space than memory.
  std::optional<std::uint64_t> address_space_limit;
  /// Receives what workers write to their stderr (libtorch's warnings, a model's
  /// `warnings.warn`), one line per call, from a thread of that worker: already quoted (control
  /// characters escaped), prefixed with the worker, cut to 1 KiB and limited to 20 lines a minute
  /// per worker (then one line says how many were dropped). Empty: written to stderr.
  std::function<void(const std::string& line)> log;
};

/// Returns the backend; its worker processes start when the first load needs one.
std::shared_ptr<Backend> make_sandboxed_backend(SandboxOptions options);

}  // namespace slipstream::ml
