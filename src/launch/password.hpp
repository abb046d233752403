// The servers' password of an experiment ([experiment] password_file or password = "generate",
// docs/launcher.md "Passwords"): read or made once per run, kept in an owner-only file of the run
// directory that the servers read (--requirepass-file), and given to every other process in
// SLIPSTREAM_PASSWORD. It never appears on a command line, in the plan or in a job script.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "launch/experiment.hpp"

namespace slipstream::launch {

/// The name of the file in the run directory that holds the run's password (mode 0600).
inline constexpr std::string_view kPasswordFileName = "password";

/// The environment variable every process other than the servers is given the password in; the
/// clients (C++, C, Fortran, Python, SmartRedis-compatible) read it.
inline constexpr std::string_view kPasswordVariable = "SLIPSTREAM_PASSWORD";

/// RUN_DIR/password.
std::string password_path(const std::string& run_dir);

/// The password in `path`: its first line, without a trailing '\r'. Throws ConfigError naming
/// `setting` and the file when it cannot be read or that line is empty.
std::string read_password_file(const std::string& path, const std::string& setting);

/// A new password: 32 bytes from the kernel's random source, as 64 hexadecimal digits. Throws
/// std::runtime_error when the random source fails.
std::string generate_password();

/// Checks the experiment's password before anything is made or started: with password_file, the
/// file must be readable and its first line non-empty (ConfigError otherwise). Does nothing
/// without a password or with password = "generate".
void check_password(const Experiment& x);

/// The run's password: nullopt without one, the file's for password_file, a new one for
/// password = "generate". Throws as read_password_file and generate_password.
std::optional<std::string> run_password(const Experiment& x);

}  // namespace slipstream::launch
