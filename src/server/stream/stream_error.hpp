// The errors a stream command reports: bad arguments, a rank bound to another connection, a
// request the stream's state does not allow. The command layer turns them into error replies.
#pragma once

#include <stdexcept>
#include <string>

namespace slipstream::server {

/// A stream request that cannot be carried out. what() is the reply text without the "ERR "
/// prefix: it says what was wrong and what was expected.
class StreamError : public std::runtime_error {
 public:
  explicit StreamError(const std::string& message) : std::runtime_error(message) {}
};

/// A chunk that does not fit in --maxmemory: replied as "-OOM <what()>".
class StreamOutOfMemory : public StreamError {
 public:
  explicit StreamOutOfMemory(const std::string& message) : StreamError(message) {}
};

/// A writer's request for a step that was aborted (another writer failed, or the step timed
/// out): replied as "-ABORTED <what()>", so that the writer can drop the step and go on.
class StreamAborted : public StreamError {
 public:
  explicit StreamAborted(const std::string& message) : StreamError(message) {}
};

}  // namespace slipstream::server
