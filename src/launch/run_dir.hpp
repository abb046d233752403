// The run directory's guarantees (docs/launcher.md, "The run directory"): it and the folders and
// files the launcher writes in it are owner-only (0700 folders, 0600 files, whatever the umask),
// and a marker file proves that a folder is a run directory, so that --overwrite never removes
// anything else.
#pragma once

#include <string>
#include <string_view>

namespace slipstream::launch {

/// The marker file `slipstream run` writes into every run directory it makes.
inline constexpr std::string_view kRunDirMarker = ".slipstream-run";
/// The marker's first line: a folder is a run directory only when its marker starts with it.
inline constexpr std::string_view kRunDirMagic = "slipstream run directory, format 1";

/// Makes the run directory, owner-only, with its marker. An existing `run_dir` is removed first
/// only when `overwrite` is set and it is a run directory (see is_run_dir); otherwise throws
/// std::runtime_error saying why and removes nothing. The folders above it are made as usual.
void make_run_dir(const std::string& run_dir, bool overwrite);

/// True when `dir` is a folder (not a symbolic link) holding the launcher's marker: a regular
/// file owned by this user whose first line is kRunDirMagic.
bool is_run_dir(const std::string& dir);

/// Makes folder `dir` owner-only (0700, also when it exists already); the folders above it are
/// made as usual. Throws std::filesystem::filesystem_error when it cannot.
void make_private_dir(const std::string& dir);

/// Writes `text` into `path`, owner-only (0600), through a temporary file renamed over it, so
/// that a reader never sees half of it. Returns false when it could not (nothing is renamed).
bool write_private_file(const std::string& path, std::string_view text);

/// Opens `path` for appending, creating it owner-only (0600; an existing file is made 0600).
/// Returns the descriptor (close-on-exec), or -1 with errno set.
int open_private_for_append(const std::string& path);

/// Creates `path` empty, or empties it, owner-only (0600). Returns false when it could not.
bool create_private_file(const std::string& path);

}  // namespace slipstream::launch
