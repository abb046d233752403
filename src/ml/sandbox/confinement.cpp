// Confining a model worker process; see worker.hpp (confine_worker).
#include <fcntl.h>
#include <linux/sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#ifdef SLIPSTREAM_HAVE_SECCOMP
#include <seccomp.h>
#endif

#include "ml/sandbox/worker.hpp"

namespace slipstream::ml::sandbox {
namespace {

// How much more likely than the server a worker is to be chosen when the machine runs out of
// memory (oom_score_adj, -1000 to 1000): a model that allocates without end should cost its
// worker, not the server and its data.
constexpr int kOomScoreRaise = 500;

void check(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string(what) + ": " + std::strerror(errno));
}

void redirect_to_null(int fd, int flags) {
  const int null_fd = ::open("/dev/null", flags);
  check(null_fd >= 0, "open /dev/null");
  if (null_fd != fd) {
    check(::dup2(null_fd, fd) == fd, "dup2");
    ::close(null_fd);
  }
}

// Closes every descriptor above 2 except `keep` (inherited ones the spawn did not mark
// close-on-exec would otherwise stay reachable).
void close_other_descriptors(int keep) {
  for (int fd = 3; fd < keep; ++fd) ::close(fd);
  if (::syscall(SYS_close_range, keep + 1, ~0u, 0) != 0) {
    rlimit limit{};
    ::getrlimit(RLIMIT_NOFILE, &limit);
    for (int fd = keep + 1; fd < static_cast<int>(limit.rlim_cur); ++fd) ::close(fd);
  }
}

// Sets this process's oom_score_adj to the inherited one (the server's) + kOomScoreRaise, at most
// 1000; raising it needs no privilege. Must run while the process is still dumpable (its /proc
// files are its own) and may open files. Returns what was done, or why nothing was.
std::string raise_oom_score() {
  const char* path = "/proc/self/oom_score_adj";
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::string("OOM score unchanged (") + std::strerror(errno) + ")";
  char text[16] = {};
  const ssize_t n = ::read(fd, text, sizeof text - 1);
  ::close(fd);
  const int inherited = n > 0 ? std::atoi(text) : 0;
  const std::string raised = std::to_string(std::min(1000, inherited + kOomScoreRaise));
  fd = ::open(path, O_WRONLY | O_CLOEXEC);
  const bool written =
      fd >= 0 && ::write(fd, raised.data(), raised.size()) == static_cast<ssize_t>(raised.size());
  const int write_errno = errno;
  if (fd >= 0) ::close(fd);
  if (!written) return std::string("OOM score unchanged (") + std::strerror(write_errno) + ")";
  return "OOM score adjustment " + raised;
}

#ifdef SLIPSTREAM_HAVE_SECCOMP
// Why a deny list here when the operator check is an allow list: this filter is the second wall.
// The operator check decides what code may be stored; this filter holds if that check ever lets
// something through (a libtorch bug, an operator that touches files in a way no one foresaw).
// libtorch needs most of the system-call surface to compute (memory, threads, futexes, clocks),
// so what is cut is what reaches outside the process: files by name, programs, new processes,
// sockets, other processes, kernel facilities that bypass these rules (io_uring, bpf).
// Refused calls fail with EPERM rather than killing the process, so a library that probes
// something optional degrades instead of dying.
std::string install_syscall_filter() {
  scmp_filter_ctx filter = ::seccomp_init(SCMP_ACT_ALLOW);
  if (filter == nullptr) throw std::runtime_error("seccomp_init failed");
  // Every thread of the process, not only this one: libtorch starts its intra-op and inter-op
  // pools when its thread counts are set, before the worker confines itself. The kernel gives
  // them the filter and this thread's no-new-privileges with it, or refuses the whole filter.
  if (::seccomp_attr_set(filter, SCMP_FLTATR_CTL_TSYNC, 1) != 0) {
    ::seccomp_release(filter);
    throw std::runtime_error("seccomp: cannot apply the filter to every thread (TSYNC)");
  }
  const auto deny = [&](int syscall_number) {
    if (syscall_number < 0) return;  // not on this architecture
    if (::seccomp_rule_add(filter, SCMP_ACT_ERRNO(EPERM), syscall_number, 0) != 0) {
      ::seccomp_release(filter);
      throw std::runtime_error("seccomp_rule_add failed");
    }
  };
  for (const char* name :
       {"open", "openat", "openat2", "creat", "open_by_handle_at", "name_to_handle_at",
        "execve", "execveat", "fork", "vfork", "socket", "socketpair", "connect", "bind",
        "listen", "accept", "accept4", "unlink", "unlinkat", "rename", "renameat", "renameat2",
        "mkdir", "mkdirat", "rmdir", "link", "linkat", "symlink", "symlinkat", "chmod",
        "fchmodat", "chown", "lchown", "fchownat", "truncate", "mknod", "mknodat", "mount",
        "umount2", "pivot_root", "chroot", "ptrace", "process_vm_readv", "process_vm_writev",
        "kcmp", "io_uring_setup", "io_uring_enter", "io_uring_register", "bpf",
        "perf_event_open", "userfaultfd", "keyctl", "add_key", "request_key", "setuid",
        "setgid", "setreuid", "setregid", "setresuid", "setresgid", "unshare", "setns",
        "init_module", "finit_module", "delete_module", "kexec_load", "reboot", "swapon",
        "swapoff", "acct", "quotactl", "inotify_init", "inotify_init1", "fanotify_init"}) {
    deny(::seccomp_syscall_resolve_name(name));
  }
  // Threads are created with clone(CLONE_THREAD); a clone without it is a new process.
  ::seccomp_rule_add(filter, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                     SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0));
  // clone3's flags are behind a pointer the filter cannot read: refuse it as unknown, and glibc
  // falls back to clone.
  ::seccomp_rule_add(filter, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
  // Signals only to this process.
  const auto self = static_cast<scmp_datum_t>(::getpid());
  ::seccomp_rule_add(filter, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(kill), 1,
                     SCMP_A0(SCMP_CMP_NE, self));
  ::seccomp_rule_add(filter, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(tgkill), 1,
                     SCMP_A0(SCMP_CMP_NE, self));
  const int loaded = ::seccomp_load(filter);
  ::seccomp_release(filter);
  if (loaded != 0) throw std::runtime_error("seccomp_load failed: " + std::string(std::strerror(-loaded)));
  return "system-call filter";
}
#endif

}  // namespace

std::string confine_worker(int channel_fd, long parent_pid, bool syscall_filter) {
  // Die with the server; if it is already gone, stop now.
  check(::prctl(PR_SET_PDEATHSIG, SIGKILL) == 0, "prctl(PR_SET_PDEATHSIG)");
  if (parent_pid > 0 && ::getppid() != parent_pid) throw std::runtime_error("the server is gone");
  // Best effort: a /proc without this file must not stop models from running.
  const std::string oom_score = raise_oom_score();
  check(::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0, "prctl(PR_SET_NO_NEW_PRIVS)");
  // A crash must not write the process image (stored tensors, other models) to disk.
  rlimit no_core{0, 0};
  check(::setrlimit(RLIMIT_CORE, &no_core) == 0, "setrlimit(RLIMIT_CORE)");
  check(::prctl(PR_SET_DUMPABLE, 0) == 0, "prctl(PR_SET_DUMPABLE)");
  redirect_to_null(STDIN_FILENO, O_RDONLY);
  redirect_to_null(STDOUT_FILENO, O_WRONLY);  // TorchScript print() goes nowhere
  close_other_descriptors(channel_fd);
  check(::chdir("/") == 0, "chdir");
  std::string applied = "no core dumps, no new privileges, dies with the server, " + oom_score;
#ifdef SLIPSTREAM_HAVE_SECCOMP
  if (syscall_filter) applied += ", " + install_syscall_filter();
#else
  (void)syscall_filter;
  applied += " (built without libseccomp: no system-call filter)";
#endif
  return applied;
}

}  // namespace slipstream::ml::sandbox
