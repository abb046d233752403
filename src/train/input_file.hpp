// Reading a file the trainer loads (its config, the model, the sample builder, the loss module,
// its checkpoints) without trusting what the path names: only a regular file is read, never one
// over a stated size, and exactly the size it had when opened. A FIFO, a device or a directory is
// refused before anything reads it, so `/dev/zero` cannot fill memory and a FIFO cannot hang.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace slipstream::train {

/// Most bytes of a TorchScript archive the trainer loads: the model, the sample builder, the loss
/// module. Twice the server's default limit on one request (1 GiB, which bounds what
/// AI.MODELSTORE can store), so a model the trainer can publish always fits.
inline constexpr std::uint64_t kMaxArchiveBytes = 2ull << 30;
/// Most bytes of a trainer config file.
inline constexpr std::uint64_t kMaxConfigBytes = 16ull << 20;

/// A file that cannot be read, or that is refused; what() names the file and says why.
class InputFileError : public std::runtime_error {
 public:
  explicit InputFileError(const std::string& message) : std::runtime_error(message) {}
};

/// The whole of the regular file at `path` (symbolic links followed). Throws InputFileError,
/// "cannot read the <what> <path>: <why>", when it does not exist or cannot be opened, is not a
/// regular file (checked before it is opened, and again on the opened file, which is opened
/// non-blocking so that a FIFO swapped in between cannot block), is more than `max_bytes` long,
/// or ends before the size it had when opened. Blocks only on the file system's own reads.
std::string read_input_file(const std::string& path, std::string_view what,
                            std::uint64_t max_bytes);

}  // namespace slipstream::train
