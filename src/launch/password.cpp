// The servers' password of an experiment; see password.hpp.
#include "launch/password.hpp"

#include <sys/random.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "common/config_error.hpp"

namespace slipstream::launch {

std::string password_path(const std::string& run_dir) {
  return run_dir + "/" + std::string(kPasswordFileName);
}

std::string read_password_file(const std::string& path, const std::string& setting) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw ConfigError(setting + " \"" + path + "\" cannot be read: " + std::strerror(errno) +
                      " (expected a file whose first line is the servers' password)");
  }
  std::string secret;
  std::getline(in, secret);
  // A file saved with Windows line endings must not make '\r' part of the password.
  while (!secret.empty() && secret.back() == '\r') secret.pop_back();
  if (secret.empty()) {
    throw ConfigError(setting + " \"" + path +
                      "\" is empty (expected the servers' password on its first line)");
  }
  return secret;
}

std::string generate_password() {
  unsigned char bytes[32];
  std::size_t filled = 0;
  while (filled < sizeof bytes) {
    const ssize_t got = ::getrandom(bytes + filled, sizeof bytes - filled, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      throw std::runtime_error(std::string("cannot make a password: getrandom failed: ") +
                               std::strerror(errno));
    }
    filled += static_cast<std::size_t>(got);
  }
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string secret;
  for (unsigned char b : bytes) {
    secret += kDigits[b >> 4];
    secret += kDigits[b & 0xf];
  }
  return secret;
}

namespace {
std::string file_setting(const Experiment& x) { return x.file + ": [experiment] password_file"; }
}  // namespace

void check_password(const Experiment& x) {
  if (x.password.source == Experiment::Password::Source::kFile) {
    read_password_file(x.password.file, file_setting(x));
  }
}

std::optional<std::string> run_password(const Experiment& x) {
  switch (x.password.source) {
    case Experiment::Password::Source::kNone:
      return std::nullopt;
    case Experiment::Password::Source::kFile:
      return read_password_file(x.password.file, file_setting(x));
    case Experiment::Password::Source::kGenerate:
      return generate_password();
  }
  return std::nullopt;
}

}  // namespace slipstream::launch
