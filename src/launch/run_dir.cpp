// Owner-only run directories and their marker; see run_dir.hpp.
#include "launch/run_dir.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace slipstream::launch {
namespace {

namespace fs = std::filesystem;

constexpr mode_t kPrivateDirMode = 0700;
constexpr mode_t kPrivateFileMode = 0600;

// Every mode is set with chmod after creation: the umask can only take bits away from the mode
// given to open and mkdir, and one that takes the owner's would leave a folder we cannot use.
int open_private(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CREAT | O_CLOEXEC | O_NOFOLLOW, kPrivateFileMode);
  if (fd < 0) return -1;
  if (::fchmod(fd, kPrivateFileMode) != 0) {
    const int error = errno;
    ::close(fd);
    errno = error;
    return -1;
  }
  return fd;
}

bool write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

}  // namespace

void make_private_dir(const std::string& dir) {
  const fs::path path = fs::path(dir).lexically_normal();
  const fs::path parent =
      path.has_filename() ? path.parent_path() : path.parent_path().parent_path();
  if (!parent.empty()) fs::create_directories(parent);
  auto fail = [&](int error) {
    throw fs::filesystem_error("cannot make an owner-only folder", path,
                               std::error_code(error, std::generic_category()));
  };
  if (::mkdir(path.c_str(), kPrivateDirMode) != 0 && errno != EEXIST) fail(errno);
  // An existing path must be a folder itself, not a link to one elsewhere.
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) fail(errno);
  if (!S_ISDIR(info.st_mode)) fail(ENOTDIR);
  if (::chmod(path.c_str(), kPrivateDirMode) != 0) fail(errno);
}

bool write_private_file(const std::string& path, std::string_view text) {
  const std::string temporary = path + ".tmp";
  const int fd = open_private(temporary, O_WRONLY | O_TRUNC);
  if (fd < 0) return false;
  const bool written = write_all(fd, text);
  if (::close(fd) != 0 || !written) {
    const int error = errno;
    ::unlink(temporary.c_str());
    errno = error;
    return false;
  }
  return std::rename(temporary.c_str(), path.c_str()) == 0;
}

int open_private_for_append(const std::string& path) {
  return open_private(path, O_WRONLY | O_APPEND);
}

bool create_private_file(const std::string& path) {
  const int fd = open_private(path, O_WRONLY | O_TRUNC);
  if (fd < 0) return false;
  return ::close(fd) == 0;
}

bool is_run_dir(const std::string& dir) {
  struct stat info {};
  if (::lstat(dir.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) return false;
  const std::string marker = (fs::path(dir) / kRunDirMarker).string();
  if (::lstat(marker.c_str(), &info) != 0 || !S_ISREG(info.st_mode) || info.st_uid != ::geteuid()) {
    return false;
  }
  std::ifstream in(marker);
  std::string first_line;
  return std::getline(in, first_line) && first_line == kRunDirMagic;
}

// The cases, in order:
// 1. nothing there: make it;
// 2. something there that is not a run directory (a file, a symbolic link, another tool's
//    folder, or a run directory made before the launcher wrote markers): refuse, with or without
//    --overwrite, removing nothing;
// 3. a run directory, without --overwrite: refuse, saying that --overwrite replaces it;
// 4. a run directory, with --overwrite: remove it and make it anew.
void make_run_dir(const std::string& run_dir, bool overwrite) {
  const fs::path dir = run_dir;
  std::error_code error;
  const fs::file_type type = fs::symlink_status(dir, error).type();
  if (type == fs::file_type::none) {
    throw fs::filesystem_error("cannot check the run directory", dir, error);
  }
  if (type != fs::file_type::not_found) {
    if (type == fs::file_type::symlink) {
      throw std::runtime_error("the run directory " + dir.string() +
                               " is a symbolic link, not a run directory: nothing was removed; "
                               "give the folder itself, or choose another run_dir");
    }
    if (!is_run_dir(run_dir)) {
      const std::string why = fs::exists(dir / "status.json", error)
                                  ? "; runs made before the launcher wrote markers have none"
                                  : "";
      throw std::runtime_error(
          "the run directory " + dir.string() +
          " already exists and is not a run directory of slipstream run (its " +
          std::string(kRunDirMarker) + " marker is missing or not the launcher's" + why +
          "): nothing was removed; choose another run_dir, or remove it yourself");
    }
    if (!overwrite) {
      throw std::runtime_error("the run directory " + dir.string() +
                               " already exists (an earlier run): pass --overwrite to replace it");
    }
    fs::remove_all(dir);
  }
  make_private_dir(run_dir);
  const std::string marker = (dir / kRunDirMarker).string();
  const std::string text = std::string(kRunDirMagic) +
                           "\nThis folder was made by `slipstream run`; `slipstream run "
                           "--overwrite` may remove it and everything in it.\n";
  if (!write_private_file(marker, text)) {
    const int failure = errno;
    throw std::runtime_error("cannot write " + marker + ": " + std::strerror(failure));
  }
}

}  // namespace slipstream::launch
