// Running a helper program and reading its output; see run_program.hpp.
#include "launch/run_program.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

extern char** environ;

namespace slipstream::launch {

std::pair<int, std::string> run_program(const std::vector<std::string>& argv) {
  // Close-on-exec, so that only the child's standard output holds the pipe: a program that
  // leaves a process behind (a job started in the background) must not keep it open.
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  std::vector<std::string> words = argv;
  std::vector<char*> c_argv;
  for (std::string& w : words) c_argv.push_back(w.data());
  c_argv.push_back(nullptr);
  pid_t pid = 0;
  const int error = ::posix_spawnp(&pid, c_argv[0], &actions, nullptr, c_argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (error != 0) {
    ::close(fds[0]);
    throw std::runtime_error("cannot run " + argv[0] + ": " + std::strerror(error));
  }
  std::string out;
  char buffer[4096];
  ssize_t n = 0;
  while ((n = ::read(fds[0], buffer, sizeof buffer)) > 0 || (n < 0 && errno == EINTR)) {
    if (n > 0) out.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), out};
}

}  // namespace slipstream::launch
