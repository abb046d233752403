"""A private Slurm (munged + slurmctld + slurmd) that a test starts and stops itself: one node (this
machine), or one node per host of a tests/hosts `Hosts` (slurmctld on host 1, a slurmd on every
host, munged outside them: its socket is a file, which every host sees).

Everything (slurm.conf, munge key and socket, state, spool, logs, pid files) lives under the
workdir given to start(); nothing in /etc, /var or /run is read or written, so a system Slurm or
munge is never touched. The daemons run in the foreground as children of the test process.

    cluster = SlurmCluster()
    cluster.start(workdir)      # raises SlurmUnavailable(reason) if Slurm cannot run here
    subprocess.run(["sbatch", "--wait", script], env=cluster.env)
    cluster.stop()              # cancels jobs, stops the daemons, leaves no process behind

    cluster = SlurmCluster(hosts=hosts)   # nodes host1..hostN; run clients with
    hosts.run(1, [...], env=cluster.env)  # cluster.client(argv) gives that argv

Needs root and the Debian packages slurmctld slurmd slurm-client munge (Slurm 22.05 on Debian 12).
`python3 slurm_fixture.py` runs a self-check.
"""
import atexit
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

DAEMONS = ("munged", "slurmctld", "slurmd")
PROGRAMS = DAEMONS + ("mungekey", "sbatch", "srun", "sinfo", "squeue", "scancel")


class SlurmUnavailable(Exception):
    """Slurm cannot be started on this machine; str(e) says why (tests skip with it)."""


def _which(program):
    return shutil.which(program, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _die_with_parent():
    # Runs in the child before exec: the daemon gets SIGTERM when the test process dies, even
    # by a signal that skips atexit (e.g. a ctest timeout). PR_SET_PDEATHSIG = 1.
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)


def _tail(path, lines=25):
    try:
        return "\n".join(Path(path).read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(none)"


class SlurmCluster:
    def __init__(self, cpus=None, timeout=60, hosts=None):
        self.cpus = cpus          # None: what `slurmd -C` reports; N: advertise N CPUs per node
        self.timeout = timeout    # seconds start() waits for each daemon
        self.hosts = hosts        # None: one node, this machine; else a node per host
        if hosts is None:
            self.nodes = [socket.gethostname().split(".")[0]]   # must equal `hostname -s`
        else:
            self.nodes = [hosts.hostname(k) for k in range(1, hosts.n + 1)]
        self.node = self.nodes[0]  # where slurmctld runs and clients are run
        self.workdir = None
        self._procs = []          # (daemon name, Popen), in the order started

    def _address(self, k):
        """Node k's (0-based) address: loopback for this machine, else its host's."""
        return "127.0.0.1" if self.hosts is None else self.hosts.address(k + 1)

    def _on(self, k, argv):
        """The argv that runs `argv` on node k (0-based; None: on this machine, outside hosts)."""
        if self.hosts is None or k is None:
            return list(argv)
        return self.hosts.command(k + 1, list(argv))

    def client(self, argv):
        """The argv that runs a client (sbatch, srun, sinfo, `slipstream run`...) on the first
        node, the one slurmctld runs on; run it with env=self.env."""
        return self._on(0, argv)

    @property
    def conf(self):
        return self.workdir / "slurm.conf"

    @property
    def env(self):
        """Full environment for clients (sbatch, srun, sinfo, ...): os.environ without inherited
        Slurm variables (from a test run inside a Slurm job, they would make srun think it is
        inside that allocation), plus SLURM_CONF. slurm.conf names the munge socket."""
        return self.environment(os.environ)

    def environment(self, base):
        """`base` (a mapping) as env does os.environ: without Slurm variables, with SLURM_CONF."""
        env = {k: v for k, v in base.items()
               if not k.startswith(("SLURM_", "SRUN_", "SBATCH_", "SALLOC_"))}
        return dict(env, SLURM_CONF=str(self.conf))

    def _log(self, name, ext="log"):
        return self.workdir / "log" / f"{name}.{ext}"

    def _logs(self, name):
        if name == "slurmd":
            return [self._log(f"slurmd-{node}") for node in self.nodes] + [
                self._log(f"slurmd-{node}", "err") for node in self.nodes]
        return [self._log(name), self._log(name, "err")]

    def _fail(self, reason, name=None):
        for log in self._logs(name) if name else ():
            reason += f"\n--- end of {log} ---\n{_tail(log)}"
        self.stop()
        raise SlurmUnavailable(reason)

    def _spawn(self, name, *args, node=0, log=None):
        with open(self._log(log or name, "err"), "wb") as err:
            # Own session: a Ctrl-C to the test does not reach the daemons, and stop() can signal
            # each daemon's group. The SLURM_CONF in self.env marks our processes (processes()).
            self._procs.append((name, subprocess.Popen(
                self._on(node, [_which(name), *map(str, args)]), stdin=subprocess.DEVNULL,
                stdout=err, stderr=err, start_new_session=True, env=self.env,
                preexec_fn=_die_with_parent)))

    def _wait(self, what, ready, log):
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            for name, proc in list(self._procs):
                if proc.poll() is not None:
                    self._fail(f"{name} exited with status {proc.returncode}", name)
            if ready():
                return
            time.sleep(0.2)
        self._fail(f"timed out after {self.timeout} s waiting for {what}", log)

    def start(self, workdir):
        missing = [p for p in PROGRAMS if not _which(p)]
        if missing:
            raise SlurmUnavailable(f"not installed: {' '.join(missing)} "
                                   "(apt-get install slurmctld slurmd slurm-client munge)")
        if os.geteuid() != 0:
            raise SlurmUnavailable("a private Slurm needs root (slurmd starts job steps)")
        self.workdir = w = Path(workdir).resolve()
        # slurmd makes <spool>/<node>_<job>.<step> unix sockets: paths are limited to 107 bytes.
        longest = max(self.nodes, key=len)
        if len(f"{w}/spool/{longest}/{longest}_4294967294.4294967294") > 107:
            raise SlurmUnavailable(f"workdir too long for unix socket paths: {w}")
        for sub in ("log", "state", "munge", *(f"spool/{node}" for node in self.nodes)):
            (w / sub).mkdir(parents=True, exist_ok=True)
        # munged refuses a key or socket in a directory that others may write to.
        os.chmod(w, 0o700)
        os.chmod(w / "munge", 0o700)
        atexit.register(self.stop)

        # A fresh key: this cluster neither trusts nor is trusted by any other munged.
        key, sock = w / "munge/munge.key", w / "munge/munge.socket"
        if not key.exists():
            r = subprocess.run([_which("mungekey"), "--create", "--keyfile", str(key)],
                               capture_output=True, text=True)
            if r.returncode:
                self._fail(f"mungekey failed: {r.stderr}")
        os.chmod(key, 0o400)
        # --force: start even over a stale socket left by an earlier run in this workdir.
        # On this machine, outside the hosts: its socket is a file, which every host reaches.
        self._spawn("munged", "--foreground", "--force", "--socket", sock, "--key-file", key,
                    "--pid-file", w / "munge/munged.pid", "--seed-file", w / "munge/munged.seed",
                    "--log-file", self._log("munged"), node=None)
        self._wait("the munge socket", sock.exists, "munged")

        self._write_conf(sock)
        # -c (and -i): clear state, so leftovers of an earlier run in this workdir do not count.
        self._spawn("slurmctld", "-D", "-c", "-i", "-f", self.conf)
        for k, node in enumerate(self.nodes):
            self._spawn("slurmd", "-D", "-c", "-N", node, "-f", self.conf, node=k,
                        log=f"slurmd-{node}")
        self._wait("every node to be idle (sinfo)", self._idle, "slurmd")
        return self

    def _idle(self):
        try:
            r = subprocess.run(self.client(["sinfo", "-h", "-N", "-o", "%N %t"]), env=self.env,
                               capture_output=True, text=True, timeout=10)
        except subprocess.TimeoutExpired:
            return False
        states = dict(line.split() for line in r.stdout.splitlines() if len(line.split()) == 2)
        return r.returncode == 0 and all(states.get(node) == "idle" for node in self.nodes)

    def _write_conf(self, munge_socket):
        r = subprocess.run([_which("slurmd"), "-C"], capture_output=True, text=True)
        # "NodeName=vm CPUs=2 Boards=1 SocketsPerBoard=1 CoresPerSocket=2 ... RealMemory=..."
        hw = [f for f in (r.stdout.split("\n")[0].split()[1:] if r.returncode == 0 else [])
              if not f.startswith("UpTime")] or [f"CPUs={os.cpu_count() or 1}"]
        if self.cpus:
            # More CPUs than the machine has, so tests can place many tasks; config_overrides
            # (below) stops slurmd draining the node for "Low socket*core*thread count".
            hw = [f"CPUs={self.cpus}"] + [f for f in hw if f.startswith("RealMemory")]
        w = self.workdir
        nodes = "".join(f"NodeName={node} NodeAddr={self._address(k)} NodeHostname={node} "
                        f"{' '.join(hw)} State=UNKNOWN\n" for k, node in enumerate(self.nodes))
        self.conf.write_text(f"""\
ClusterName=slipstream
# Addresses given: no dependence on DNS or /etc/hosts for the daemons' node names.
SlurmctldHost={self.node}({self._address(0)})
# Free ports, so two clusters (or a system Slurm) never collide.
SlurmctldPort={_free_port()}
SlurmdPort={_free_port()}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
# Our munged: daemons and clients (srun, sbatch) all find its socket through this line.
AuthInfo=socket={munge_socket}
StateSaveLocation={w}/state
# %n: the node's name, so that the slurmds of several nodes on this machine keep apart.
SlurmdSpoolDir={w}/spool/%n
SlurmctldPidFile={w}/state/slurmctld.pid
SlurmdPidFile={w}/spool/%n/slurmd.pid
SlurmctldLogFile={self._log("slurmctld")}
SlurmdLogFile={w}/log/slurmd-%n.log
# No cgroups (containers rarely allow them): steps are tracked by /proc parentage.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
MailProg=/bin/true
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
# Start a submitted batch job at once (default: up to 3 s later, to batch submissions).
SchedulerParameters=batch_sched_delay=0
# A node that went DOWN (e.g. slurmd restarted) comes back by itself.
ReturnToService=2
# Cancelled jobs get SIGKILL 2 s after SIGTERM (default 30 s): stop() stays fast.
KillWait=2
# A job asking for more than the node has is refused at once instead of pending forever.
EnforcePartLimits=ALL
{nodes}# OverSubscribe=FORCE: several jobs may share the node's CPUs at once.
PartitionName=debug Nodes={",".join(self.nodes)} Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:8
""")

    def stop(self):
        """Cancel all jobs, stop the daemons, kill whatever is left. Safe to call again."""
        if not self._procs:
            return
        if any(name == "slurmctld" and proc.poll() is None for name, proc in self._procs):
            deadline = time.monotonic() + 20     # KillWait=2: jobs end within seconds
            while time.monotonic() < deadline:
                r = subprocess.run(self.client(["squeue", "-h", "-o", "%i"]), env=self.env,
                                   capture_output=True, text=True, timeout=30)
                if r.returncode or not r.stdout.split():
                    break
                subprocess.run(self.client(["scancel", *r.stdout.split()]), env=self.env,
                               capture_output=True, timeout=30)
                time.sleep(0.2)
        while self._procs:                       # the slurmds, slurmctld, then munged
            name, proc = self._procs.pop()
            for sig in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.killpg(proc.pid, sig)     # the group: slurmctld's slurmscriptd too
                    proc.wait(timeout=15)
                    break
                except ProcessLookupError:
                    break
                except subprocess.TimeoutExpired:
                    pass
        # slurmstepd (setsid, then reparented to init) and job tasks are outside the daemons'
        # groups, but carry our SLURM_CONF in their environment.
        deadline = time.monotonic() + 10
        while (left := self.processes()) and time.monotonic() < deadline:
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.1)

    def processes(self):
        """Live (not zombie) processes of this cluster, other than this one: all those with our
        SLURM_CONF in their environment (daemons, slurmstepd, job tasks, clients run with env)."""
        if self.workdir is None:
            return []
        mark, found = f"SLURM_CONF={self.conf}".encode(), []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{pid}/stat", "rb") as f:
                    zombie = f.read().rsplit(b")", 1)[1].split()[0] == b"Z"
                with open(f"/proc/{pid}/environ", "rb") as f:
                    if not zombie and int(pid) != os.getpid() and mark in f.read().split(b"\0"):
                        found.append(int(pid))
            except OSError:
                pass
        return found


if __name__ == "__main__":
    import sys
    import tempfile

    def timed(label, since):
        print(f"{label}: {time.monotonic() - since:.2f} s", flush=True)

    def run(*argv, cwd=None):
        r = subprocess.run(argv, env=cluster.env, capture_output=True, text=True, timeout=120,
                           cwd=cwd)
        assert r.returncode == 0, f"{argv} failed ({r.returncode}):\n{r.stdout}{r.stderr}"
        return r.stdout

    with tempfile.TemporaryDirectory(prefix="slurm") as tmp:
        cluster, t = SlurmCluster(), time.monotonic()
        try:
            cluster.start(tmp)
        except SlurmUnavailable as e:
            sys.exit(f"SKIP: Slurm unavailable: {e}")
        timed("start (node idle)", t)
        try:
            Path(tmp, "job.sh").write_text(f"#!/bin/bash\n#SBATCH -n 2\n#SBATCH -o {tmp}/%j.out\n"
                                           "srun -n 2 hostname\nsrun -n 1 env | grep SLURM_JOB_ID\n")
            t = time.monotonic()
            job = run("sbatch", "--wait", "--parsable", "job.sh", cwd=tmp).strip()
            timed("sbatch --wait (2 tasks, 2 steps)", t)
            out = Path(tmp, f"{job}.out").read_text().split()
            assert sorted(out) == sorted([cluster.node] * 2 + [f"SLURM_JOB_ID={job}"]), out
            t = time.monotonic()
            run("srun", "-n", "2", "true")
            timed("srun -n 2 true", t)
        finally:
            t = time.monotonic()
            cluster.stop()
            timed("stop", t)
        assert not cluster.processes(), f"left behind: {cluster.processes()}"
        for name in DAEMONS:      # and, by name, no daemon with this workdir on its command line
            r = subprocess.run(["pgrep", "-af", f"{name}.*{tmp}"], capture_output=True, text=True)
            assert not r.stdout.strip(), f"left behind: {r.stdout}"
    print("self-check passed")
