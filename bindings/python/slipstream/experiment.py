"""Experiments from Python: the launcher's file (docs/launcher.md), built with calls instead of
written by hand, then started, polled and stopped.

    from slipstream.experiment import Experiment
    exp = Experiment("ensemble", mpirun_args=["--oversubscribe"])
    exp.add_server("db")
    exp.add_application("sim", exe="./sim", args=["--nu", "{nu}"],
                        ensemble={"grid": {"nu": [0.1, 0.2]}})
    exp.add_trainer("learner", config="train.toml", ranks=2)
    print(exp.dry_run())             # where everything would run
    run = exp.start()                 # `slipstream run` in the background
    while run.poll() is None:
        print(run.status()["processes"])
        time.sleep(1)
    print(run.returncode, run.run_dir)

The file is the interface: every keyword below is a key of the file's table of the same name,
checked by `slipstream run` (a mistake is an ExperimentError quoting its message). Relative paths
are relative to `base_dir` (default: the current directory), where the file is written as
NAME.experiment.toml, beside the launcher's output NAME.launcher.log.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import time

__all__ = ["Experiment", "ExperimentError", "Run"]


class ExperimentError(RuntimeError):
    """`slipstream run` refused the experiment (its message names the key) or could not start."""


_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def _key(name):
    return name if _BARE_KEY.match(name) else json.dumps(name)


def _value(value):
    """A Python value as TOML (strings, booleans, numbers, lists, and dicts as inline tables)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # JSON's string escapes are TOML's basic-string escapes
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_key(str(k))} = {_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"cannot write {type(value).__name__} into an experiment file: {value!r}")


def _table(header, keys):
    lines = [header]
    lines += [f"{_key(k)} = {_value(v)}" for k, v in keys.items() if v is not None]
    return "\n".join(lines) + "\n"


def _program(slipstream):
    program = slipstream or os.environ.get("SLIPSTREAM_BINARY") or shutil.which("slipstream")
    if not program:
        raise ExperimentError("cannot find the slipstream program: pass slipstream=PATH, set "
                              "SLIPSTREAM_BINARY or put it on PATH")
    return program


class Experiment:
    """An experiment file being built. `settings` are keys of [experiment] (run_dir,
    stop_grace_seconds, heartbeat_seconds, metrics_every_seconds, report, ...); `mpirun` and
    `mpirun_args` go to [local]."""

    def __init__(self, name, base_dir=".", mpirun=None, mpirun_args=None, **settings):
        self.name = name
        self.base_dir = os.path.abspath(base_dir)
        self.settings = dict(settings)
        self.local = {"mpirun": mpirun, "mpirun_args": mpirun_args}
        self.servers, self.applications, self.trainers = [], [], []

    def add_server(self, name="db", **keys):
        """A [[server]]: mode ("standalone", "cluster", "colocated"), shards, options, ..."""
        self.servers.append(dict(name=name, **keys))
        return self

    def add_application(self, name, exe, ensemble=None, **keys):
        """An [[application]]: args, env, params, ranks, copy, link, configure, key_prefix,
        reads, after, server, on_failure, restarts, timeout_seconds, hang_seconds, ...;
        `ensemble` is its [application.ensemble] as a dict (replicas, grid, samples + random)."""
        self.applications.append((dict(name=name, exe=exe, **keys), ensemble))
        return self

    def add_trainer(self, name, config, **keys):
        """A [[trainer]]: a `slipstream train` config file, ranks, after, on_failure, ..."""
        self.trainers.append(dict(name=name, config=config, **keys))
        return self

    def to_toml(self):
        text = _table("[experiment]", dict(name=self.name, **self.settings))
        if any(v is not None for v in self.local.values()):
            text += "\n" + _table("[local]", self.local)
        for server in self.servers:
            text += "\n" + _table("[[server]]", server)
        for application, ensemble in self.applications:
            text += "\n" + _table("[[application]]", application)
            if ensemble:
                text += _table("[application.ensemble]", ensemble)
        for trainer in self.trainers:
            text += "\n" + _table("[[trainer]]", trainer)
        return text

    @property
    def file(self):
        return os.path.join(self.base_dir, f"{self.name}.experiment.toml")

    def write(self, path=None):
        """Writes the file (by default base_dir/NAME.experiment.toml); returns its path."""
        path = path or self.file
        with open(path, "w") as f:
            f.write(self.to_toml())
        return path

    def dry_run(self, slipstream=None):
        """The plan `slipstream run --dry-run` prints; ExperimentError if the file is refused."""
        result = subprocess.run([_program(slipstream), "run", self.write(), "--dry-run"],
                                capture_output=True, text=True, cwd=self.base_dir)
        if result.returncode != 0:
            raise ExperimentError(result.stderr.strip() or result.stdout.strip())
        return result.stdout

    def start(self, slipstream=None, overwrite=False, env=None):
        """Starts `slipstream run` in the background and returns its Run. `overwrite` replaces
        the run directory of an earlier run; `env` adds to the launcher's environment (which
        every process it starts inherits)."""
        program = _program(slipstream)
        file = self.write()
        log_path = os.path.join(self.base_dir, f"{self.name}.launcher.log")
        command = [program, "run", file] + (["--overwrite"] if overwrite else [])
        environment = dict(os.environ, **(env or {}))
        with open(log_path, "w") as log:
            process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                       cwd=self.base_dir, env=environment,
                                       start_new_session=False)
        run_dir = self.settings.get("run_dir") or self.name
        return Run(process, os.path.join(self.base_dir, run_dir), log_path)


class Run:
    """A running `slipstream run`: poll it, read its status, wait for it, stop it."""

    def __init__(self, process, run_dir, log_path):
        self.process = process
        self.run_dir = os.path.normpath(run_dir)
        self.log_path = log_path

    @property
    def returncode(self):
        return self.process.returncode

    def poll(self):
        """None while it runs, else its exit status (0: every process ended well)."""
        return self.process.poll()

    def status(self):
        """The launcher's status.json as a dict (experiment, state, processes: name, kind,
        state, pid, attempts, exit_code, address, reason, ...), or None before it is written."""
        try:
            with open(os.path.join(self.run_dir, "status.json")) as f:
                return json.load(f)
        except (OSError, ValueError):
            return None

    def output(self):
        """What the launcher printed so far."""
        with open(self.log_path) as f:
            return f.read()

    def wait(self, timeout=None):
        """Waits for the end; returns the exit status. ExperimentError on timeout."""
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise ExperimentError(f"the experiment did not end within {timeout} s") from None

    def stop(self, timeout=120):
        """Stops the experiment as Ctrl-C does (everything, servers last) and waits for it."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
        return self.wait(timeout)

    def wait_until(self, predicate, timeout=60, every=0.1):
        """Polls status() until predicate(status) is true; returns that status. ExperimentError
        when the launcher ends first or the time runs out."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            s = self.status()
            if s is not None and predicate(s):
                return s
            if self.poll() is not None:
                raise ExperimentError(f"the experiment ended ({self.returncode}) first:\n"
                                      + self.output())
            time.sleep(every)
        raise ExperimentError(f"not reached within {timeout} s")
