// The SS.STREAM.* commands (docs/streams.md): writers attach, begin, put, end and close steps;
// reader groups join, take each step, read their chunks and release it.
#pragma once

#include <vector>

#include "server/commands/command_table.hpp"

namespace slipstream::server {

/// Appends the SS.STREAM.* entries to the command table.
void add_stream_commands(std::vector<CommandSpec>& out);

}  // namespace slipstream::server
