// A bounds check of a pickle's opcode stream, run on every .pkl record of a TorchScript archive
// before libtorch unpickles it. libtorch's unpickler sizes a string or bytes object by the length
// the opcode declares and allocates (and zero-fills) that much before it reads: a 900-byte archive
// whose data.pkl declares a 4 GiB string made a model worker allocate gigabytes for minutes before
// failing. This walks the opcodes without building anything and refuses a declared length that
// runs past the record, a memo entry numbered beyond any pickler's count (libtorch grows its
// memo table to that number: a 4 KiB archive made a worker fill its whole address space for 20 s),
// an unknown opcode, a missing line end or a missing STOP.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace slipstream::ml {

/// nullopt when every opcode's argument lies within `pickle` and a STOP ends it; else why not.
std::optional<std::string> check_pickle_bounds(std::string_view pickle);

}  // namespace slipstream::ml
