// Reading the trainer's input files: see input_file.hpp.
#include "train/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace slipstream::train {
namespace {

std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "a special file";
}

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() { ::close(fd_); }
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

std::string read_input_file(const std::string& path, std::string_view what,
                            std::uint64_t max_bytes) {
  const auto refuse = [&](const std::string& why) {
    return InputFileError("cannot read the " + std::string(what) + " " + path + ": " + why);
  };
  const auto check_regular = [&](const struct stat& info) {
    if (!S_ISREG(info.st_mode)) {
      throw refuse("it is " + kind_of(info.st_mode) + ", not a regular file");
    }
  };
  // stat first: a FIFO or a device is refused without being opened at all (opening some devices
  // has effects of its own).
  struct stat named {};
  if (::stat(path.c_str(), &named) != 0) throw refuse(std::strerror(errno));
  check_regular(named);
  // O_NONBLOCK: should the path now name a FIFO, opening it does not wait for a writer (and the
  // fstat below refuses it). It changes nothing for a regular file's reads.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) throw refuse(std::strerror(errno));
  const FileDescriptor file(fd);
  struct stat opened {};
  if (::fstat(file.get(), &opened) != 0) throw refuse(std::strerror(errno));
  check_regular(opened);
  const auto size = static_cast<std::uint64_t>(opened.st_size);
  if (size > max_bytes) {
    throw refuse("it is " + std::to_string(size) + " bytes, more than the " +
                 std::to_string(max_bytes) + " a " + std::string(what) + " may be");
  }
  std::string bytes(size, '\0');
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::read(file.get(), bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw refuse(std::strerror(errno));
    }
    if (n == 0) {
      throw refuse("it ended after " + std::to_string(done) + " of its " + std::to_string(size) +
                   " bytes (changed while being read)");
    }
    done += static_cast<std::size_t>(n);
  }
  return bytes;
}

}  // namespace slipstream::train
