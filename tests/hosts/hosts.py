"""Hosts made of network namespaces on this machine, for tests of what spans several nodes.

`Hosts(n)` makes n hosts, each a network namespace of its own joined by a veth pair to a Linux
bridge in a switch namespace of its own, and runs commands "on host k" in host k's namespace with
a UTS namespace (a host name) of its own and a mount namespace of its own in which /etc/hosts is
the hosts' own file (`host<k>` resolves to host k's address on every host, as node names do on a
cluster; the machine's /etc/hosts is never written). Nothing is created or changed in the root
namespace's networking: the bridge, the links, the addresses (10.77.0.k/24, no default route, no
NAT) and the shaping all live in namespaces this module made, so traffic between hosts cannot
leave them.

Needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN), `ip` (iproute2), `tc`, and `nsenter`, `unshare`
and `mount` (util-linux).
`available()` says whether this machine can, and why not, so that tests skip with a reason.

Namespaces are named `ssh<pid>[x<tag>]-sw` and `ssh<pid>[x<tag>]-h<k>`, the pid being the process
that made them. Closing a `Hosts` kills every process in its namespaces and deletes them (which
deletes their links); a process that was killed before it could close them leaves them behind,
and the next `Hosts` removes those whose pid no longer runs (`sweep_stale`).

Standard library only: the tests run it with the system's python3.
"""

import os
import re
import shlex
import signal
import shutil
import subprocess
import tempfile
import time

SUBNET = "10.77.0"
PREFIX_LENGTH = 24
_NAME = re.compile(r"^ssh(?P<pid>\d+)(?:x[0-9a-z]+)?-(?:sw|h\d+)$")
_PREFIX = re.compile(r"^ssh(?P<pid>\d+)(?:x[0-9a-z]+)?$")
_COMMAND_SECONDS = 30  # one `ip` or `tc` call; they take milliseconds


class HostsError(RuntimeError):
    """A namespace, link or shaping operation failed; the message has the command and its output."""


class ShapingUnsupported(HostsError):
    """The kernel lacks the queueing discipline a shape needs (e.g. netem for delay and loss)."""


def _tool(argv, check=True):
    """Runs an `ip`/`tc` command; returns its CompletedProcess, raising HostsError on failure
    when `check`."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=_COMMAND_SECONDS)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise HostsError(f"{shlex.join(argv)}: {error}") from None
    if check and done.returncode != 0:
        raise HostsError(f"{shlex.join(argv)} failed ({done.returncode}): "
                         f"{(done.stderr or done.stdout).strip()}")
    return done


def _namespaces():
    """Names of the network namespaces `ip netns` knows."""
    listing = _tool(["ip", "netns", "list"]).stdout
    return [line.split()[0] for line in listing.splitlines() if line.strip()]


def _running(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _kill_everything_in(namespace, seconds=10.0):
    """SIGKILLs every process in `namespace` and waits (up to `seconds`) until none is left, so
    that deleting it frees it at once."""
    deadline = time.monotonic() + seconds
    while True:
        done = _tool(["ip", "netns", "pids", namespace], check=False)
        pids = [int(word) for word in done.stdout.split() if word.isdigit()]
        if not pids or time.monotonic() > deadline:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.05)


def _delete_namespace(namespace):
    _kill_everything_in(namespace)
    _tool(["ip", "netns", "delete", namespace], check=False)


def sweep_stale():
    """Deletes the namespaces (and kills the processes in them) that a `Hosts` of a process that
    no longer runs left behind; returns their names."""
    removed = []
    for namespace in _namespaces():
        match = _NAME.match(namespace)
        if match and not _running(int(match["pid"])):
            _delete_namespace(namespace)
            removed.append(namespace)
    return removed


def available():
    """(True, "") when this process can make hosts, else (False, why not)."""
    if os.geteuid() != 0:
        return False, "making network namespaces needs root"
    for tool in ("ip", "tc", "nsenter", "unshare", "mount", "hostname"):
        if subprocess.run(["sh", "-c", f"command -v {tool}"], capture_output=True).returncode:
            return False, f"`{tool}` is not installed"
    probe = f"ssh{os.getpid()}xprobe-sw"
    try:
        _tool(["ip", "netns", "add", probe])
    except HostsError as error:
        return False, f"cannot make a network namespace: {error}"
    try:
        _tool(["ip", "-n", probe, "link", "add", "br0", "type", "bridge"])
        _tool(["ip", "-n", probe, "link", "add", "p1", "type", "veth", "peer", "name", "p2"])
    except HostsError as error:
        return False, f"cannot make a bridge and veth links in a namespace: {error}"
    finally:
        _delete_namespace(probe)
    return True, ""


class Hosts:
    """n hosts numbered 1..n, with addresses SUBNET.k, made on entering and removed on leaving
    (also when the body raises). Not thread-safe: use one from one thread."""

    def __init__(self, n, prefix=None):
        """`prefix` names the namespaces: `ssh<pid>` (the default) or `ssh<pid>x<tag>` with this
        process's pid, so that a sweep can tell whether their maker still runs."""
        if not 1 <= n <= 250:
            raise ValueError(f"between 1 and 250 hosts, got {n}")
        prefix = prefix or f"ssh{os.getpid()}"
        match = _PREFIX.match(prefix)
        if not match or int(match["pid"]) != os.getpid():
            raise ValueError(f"prefix must be ssh{os.getpid()} or ssh{os.getpid()}x<tag> "
                             f"(lower-case letters and digits), got {prefix!r}")
        self.n = n
        self.prefix = prefix
        self.switch = f"{prefix}-sw"
        self._made = []  # namespaces, in order of creation
        self._processes = []
        self._files = None  # a folder of this run's files: the hosts' /etc/hosts

    def __enter__(self):
        sweep_stale()
        try:
            self._make()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc_info):
        self.close()
        return False

    def namespace(self, k):
        self._check(k)
        return f"{self.prefix}-h{k}"

    def hostname(self, k):
        """Host k's host name, as its commands see it."""
        self._check(k)
        return f"host{k}"

    def address(self, k):
        """Host k's IPv4 address."""
        self._check(k)
        return f"{SUBNET}.{k}"

    def etc_hosts(self):
        """The hosts' /etc/hosts (a file of this run's)."""
        return os.path.join(self._files, "hosts")

    def agent_environment(self):
        """What mpi_agent.sh (an rsh agent entering host k, as `command` does) needs to know."""
        return {"HOSTS_PREFIX": self.prefix, "HOSTS_ETC_HOSTS": self.etc_hosts()}

    def command(self, k, argv):
        """The argv that runs `argv` on host k: in its network namespace, with its host name,
        and with the hosts' /etc/hosts (bind-mounted in a mount namespace of its own, private,
        so nothing reaches the machine's mounts). The network namespace is entered with
        nsenter, not `ip netns exec`, which would mount a new /sys and so hide /sys/fs/cgroup
        from daemons that need it (slurmd)."""
        return ["nsenter", f"--net=/var/run/netns/{self.namespace(k)}", "unshare", "--uts",
                "--mount", "--propagation", "private", "sh", "-c",
                f"hostname {shlex.quote(self.hostname(k))} && "
                f"mount --bind {shlex.quote(self.etc_hosts())} /etc/hosts && exec \"$@\"", "sh",
                *argv]

    def popen(self, k, argv, **popen_kwargs):
        """Starts `argv` on host k (subprocess.Popen's keywords; in a session of its own unless
        told otherwise); it is killed, if still running, when the hosts are closed."""
        popen_kwargs.setdefault("start_new_session", True)
        process = subprocess.Popen(self.command(k, argv), **popen_kwargs)
        self._processes.append(process)
        return process

    def run(self, k, argv, **run_kwargs):
        """Runs `argv` on host k to its end, as subprocess.run (timeout 60 s unless told)."""
        run_kwargs.setdefault("timeout", 60)
        return subprocess.run(self.command(k, argv), **run_kwargs)

    def partition(self, k):
        """Cuts host k off: its link is set down on the switch side. Packets to and from it are
        dropped silently, as on a failed link (no refusal, no reset)."""
        _tool(["ip", "-n", self.switch, "link", "set", self._port(k), "down"])

    def heal(self, k):
        """Reconnects a partitioned host k."""
        _tool(["ip", "-n", self.switch, "link", "set", self._port(k), "up"])

    def shape(self, k, delay_ms=None, rate=None, loss=None):
        """Shapes the traffic the switch sends to host k (one direction: shape the sender's host
        too for both): `delay_ms` milliseconds of added latency, `rate` a tc rate ("10gbit"),
        `loss` a percentage. Replaces an earlier shape; all None removes it. Raises
        ShapingUnsupported when the kernel lacks netem (then only `rate` works, through tbf)."""
        port = self._port(k)
        _tool(["tc", "-n", self.switch, "qdisc", "del", "dev", port, "root"], check=False)
        if delay_ms is None and rate is None and loss is None:
            return
        netem = ["netem"]
        if delay_ms is not None:
            netem += ["delay", f"{delay_ms}ms"]
        if rate is not None:
            netem += ["rate", str(rate)]
        if loss is not None:
            netem += ["loss", f"{loss}%"]
        done = _tool(["tc", "-n", self.switch, "qdisc", "add", "dev", port, "root", *netem],
                     check=False)
        if done.returncode == 0:
            return
        if "unknown" not in done.stderr.lower():
            raise HostsError(f"tc netem on host {k}'s link failed: {done.stderr.strip()}")
        if delay_ms is not None or loss is not None:
            raise ShapingUnsupported("this kernel has no netem queueing discipline (sch_netem): "
                                     "delay and loss cannot be shaped")
        _tool(["tc", "-n", self.switch, "qdisc", "add", "dev", port, "root", "tbf", "rate",
               str(rate), "burst", "256kb", "latency", "100ms"])

    def close(self):
        """Kills the processes started on the hosts, then every other process in their
        namespaces, and deletes the namespaces. Safe to call twice."""
        for process in self._processes:
            if process.poll() is None:
                try:
                    os.killpg(process.pid, signal.SIGTERM)
                except (ProcessLookupError, PermissionError):
                    process.terminate()
        for process in self._processes:
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self._processes = []
        for namespace in reversed(self._made):
            _delete_namespace(namespace)
        self._made = []
        if self._files:
            shutil.rmtree(self._files, ignore_errors=True)
            self._files = None

    def _make(self):
        self._files = tempfile.mkdtemp(prefix=f"{self.prefix}-")
        with open(self.etc_hosts(), "w") as etc_hosts:
            etc_hosts.write("127.0.0.1\tlocalhost\n::1\tlocalhost\n")
            etc_hosts.writelines(f"{self.address(k)}\t{self.hostname(k)}\n"
                                 for k in range(1, self.n + 1))
        os.chmod(self._files, 0o755)  # readable by any user a test runs as on a host
        self._add_namespace(self.switch)
        _tool(["ip", "-n", self.switch, "link", "add", "br0", "type", "bridge"])
        _tool(["ip", "-n", self.switch, "link", "set", "br0", "up"])
        for k in range(1, self.n + 1):
            namespace = self.namespace(k)
            self._add_namespace(namespace)
            _tool(["ip", "-n", namespace, "link", "set", "lo", "up"])
            # Both ends are made inside namespaces: the root namespace never holds them.
            _tool(["ip", "-n", self.switch, "link", "add", self._port(k), "type", "veth", "peer",
                   "name", "eth0", "netns", namespace])
            _tool(["ip", "-n", self.switch, "link", "set", self._port(k), "master", "br0", "up"])
            _tool(["ip", "-n", namespace, "addr", "add",
                   f"{self.address(k)}/{PREFIX_LENGTH}", "dev", "eth0"])
            _tool(["ip", "-n", namespace, "link", "set", "eth0", "up"])

    def _add_namespace(self, namespace):
        _tool(["ip", "netns", "add", namespace])
        self._made.append(namespace)

    def _port(self, k):
        """The switch-side end of host k's link."""
        self._check(k)
        return f"p{k}"

    def _check(self, k):
        if not 1 <= k <= self.n:
            raise ValueError(f"host {k} does not exist: hosts are 1..{self.n}")
