"""The launcher (`slipstream run`) on the local back-end, as a user runs it: real experiment files,
a real server, ensemble members that are real programs (launch_member), mpirun for ranks > 1.
Every test checks that nothing is left running after the experiment ends, however it ends.

Environment: SLIPSTREAM_BINARY (the slipstream program), LAUNCH_MEMBER (tests/launch/launch_member).
"""
import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

BINARY = os.path.abspath(os.environ.get("SLIPSTREAM_BINARY", "build/src/cli/slipstream"))
MEMBER = os.path.abspath(os.environ.get("LAUNCH_MEMBER", "build/tests/launch/launch_member"))


def environment():
    env = dict(os.environ)
    for name in ("SSDB", "SSKEYIN", "SSKEYOUT", "SLIPSTREAM_ADDRESS"):
        env.pop(name, None)
    # OpenMPI refuses root unless told; the tests may run as root.
    env["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
    env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    return env


def write(path, text):
    path.write_text(text)
    return path


def run(experiment, *args, timeout=120):
    return subprocess.run([BINARY, "run", str(experiment), *args], capture_output=True,
                          text=True, timeout=timeout, env=environment(),
                          cwd=experiment.parent)


def status(run_dir):
    return json.loads((run_dir / "status.json").read_text())


def mode(path):
    """The permission bits of `path` itself (a link is not followed)."""
    return stat.S_IMODE(os.lstat(path).st_mode)


def without_umask():
    """For preexec_fn: a umask of 0, under which anything not made owner-only on purpose is
    readable and writable by everyone."""
    os.umask(0)


def processes_of(run_dir):
    """Processes whose command line or working directory is inside run_dir (nothing of a run
    may outlive its launcher)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue
        if str(run_dir) in cmdline or cwd.startswith(str(run_dir)):
            found.append(f"{entry.name}: {cmdline}")
    return found


def assert_nothing_left(run_dir):
    deadline = time.time() + 5
    while processes_of(run_dir) and time.time() < deadline:
        time.sleep(0.1)
    assert processes_of(run_dir) == []


def wait_until_all_running(run_dir, timeout=60):
    """Waits until the run's status says every process runs; returns the deadline used."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            if all(p["state"] == "running" for p in status(run_dir)["processes"]):
                break
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.1)
    return deadline


def toml_value(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, (int, float)):
        return repr(value)
    return '"' + str(value) + '"'


def application(name, args, ensemble=None, **keys):
    """An [[application]] of launch_member; `ensemble` is the body of its ensemble table."""
    text = f"\n[[application]]\nname = \"{name}\"\nexe = \"{MEMBER}\"\nargs = {toml_value(args)}\n"
    text += "".join(f"{key} = {toml_value(value)}\n" for key, value in keys.items())
    if ensemble:
        text += f"[application.ensemble]\n{ensemble}\n"
    return text


HEADER = """
[experiment]
name = "{name}"
stop_grace_seconds = 3
status_every_seconds = 0

[local]
mpirun_args = ["--oversubscribe"]

[[server]]
name = "db"
options = ["--threads", "1"]
"""


def test_an_ensemble_runs_with_its_own_key_prefixes(tmp_path):
    write(tmp_path / "input.txt", "value = {value}, member {name}\n")
    experiment = write(tmp_path / "ensemble.toml", HEADER.format(name="ens") + application(
        "sim", ["ensemble", "{value}", "sim_0,sim_1,sim_2,sim_3"], configure=["input.txt"],
        ensemble="grid = { value = [1.5, 2.5, 3.5, 4.5] }") + application(
        "reader", ["ensemble", "9", "reader,sim_0,sim_1"], key_prefix=True, reads=["sim_0"]))
    result = run(experiment)
    assert result.returncode == 0, result.stdout + result.stderr
    run_dir = tmp_path / "ens"
    for k, value in enumerate(["1.5", "2.5", "3.5", "4.5"]):
        member = run_dir / f"sim_{k}"
        assert (member / "member.txt").read_text() == f"sim_{k} {value}\n"
        assert (member / "input.txt").read_text() == f"value = {value}, member sim_{k}\n"
    reader_out = (run_dir / "reader" / "reader.out").read_text()
    assert "read sim_0.x = 1.5" in reader_out
    s = status(run_dir)
    assert s["state"] == "done"
    states = {p["name"]: p["state"] for p in s["processes"]}
    assert states == {"db": "done", "sim_0": "done", "sim_1": "done", "sim_2": "done",
                      "sim_3": "done", "reader": "done"}
    server = next(p for p in s["processes"] if p["name"] == "db")
    assert server["port"] > 0 and server["address"].endswith(str(server["port"]))
    assert "sim_2 done" in result.stdout and "servers stopped" in result.stdout
    assert_nothing_left(run_dir)

    # The status command prints the table the launcher left.
    table = subprocess.run([BINARY, "status", str(run_dir)], capture_output=True, text=True)
    assert table.returncode == 0 and "experiment ens: done" in table.stdout
    assert "sim_3" in table.stdout

    # A second run needs --overwrite, and then works again.
    again = run(experiment)
    assert again.returncode != 0 and "--overwrite" in again.stderr
    assert run(experiment, "--overwrite").returncode == 0


def test_a_member_that_reads_what_it_was_not_given_fails(tmp_path):
    experiment = write(tmp_path / "x.toml", HEADER.format(name="nosy") + application(
        "sim", ["ensemble", "{index}", "sim_0,sim_1"], ensemble="replicas = 2"))
    # Each member is allowed only its own prefix; the check in launch_member passes, because
    # set_data_source of the other member is refused.
    result = run(experiment)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "read sim_" not in (tmp_path / "nosy" / "sim_0" / "sim_0.out").read_text()


def test_mpi_members_and_the_dry_run(tmp_path):
    experiment = write(tmp_path / "mpi.toml", HEADER.format(name="mpi") + application(
        "sim", ["sleep", "{seconds}"], ranks=2,
        ensemble="samples = 2\nseed = 7\nrandom = { seconds = { min = 1, max = 2 } }\n"
                 "[application.env]\nMY_SETTING = \"{seconds}s\""))
    dry = run(experiment, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "application sim_0 (sim #0)" in dry.stdout
    assert "mpirun -n 2 --oversubscribe -x MY_SETTING -x SSKEYOUT -x SSKEYIN -x SSDB" in dry.stdout
    assert "SSKEYOUT=sim_1" in dry.stdout
    assert not (tmp_path / "mpi").exists()  # a dry run starts nothing
    result = run(experiment)
    assert result.returncode == 0, result.stdout + result.stderr
    out = (tmp_path / "mpi" / "sim_0" / "sim_0.out").read_text()
    assert out.count("second 0") == 2  # both ranks ran
    # Each member's mpirun had OpenMPI's session files in a folder of its own, removed at its end
    # (two jobs sharing one can fail to start: docs/launcher.md).
    bases = set()
    for member in ("sim_0", "sim_1"):
        text = (tmp_path / "mpi" / member / f"{member}.out").read_text()
        lines = {line.split()[-1] for line in text.splitlines() if line.startswith("session base ")}
        assert len(lines) == 1, text  # both ranks saw the same one
        bases |= lines
    assert len(bases) == 2 and all("slipstream-mpi." in b for b in bases), bases
    assert not any(os.path.exists(b) for b in bases), bases
    assert_nothing_left(tmp_path / "mpi")


def test_abort_stops_everything_when_a_member_fails(tmp_path):
    experiment = write(tmp_path / "abort.toml", HEADER.format(name="abort") +
                       application("long", ["sleep", "60"]) + application("bad", ["fail", "3"]))
    start = time.time()
    result = run(experiment)
    assert result.returncode == 1
    assert time.time() - start < 30
    s = status(tmp_path / "abort")
    states = {p["name"]: (p["state"], p["reason"]) for p in s["processes"]}
    assert states["bad"] == ("failed", "exit status 3")
    assert states["long"][0] == "stopped"
    assert "bad failed (exit status 3)" in s["reason"]
    assert "failing on purpose with 3" in result.stdout  # the failed process's log is quoted
    assert_nothing_left(tmp_path / "abort")


def test_restart_and_continue_policies(tmp_path):
    experiment = write(tmp_path / "policies.toml", HEADER.format(name="pol") +
                       application("flaky", ["fail-once", f"{tmp_path}/marker"],
                                   on_failure="restart", restarts=2) +
                       application("broken", ["fail", "5"], on_failure="continue") +
                       application("after_broken", ["sleep", "0"], after=["broken"]) +
                       application("after_flaky", ["sleep", "1"], after=["flaky"]) + """
[[application]]
name = "missing"
exe = "./no-such-program"
on_failure = "continue"
""")
    result = run(experiment)
    assert result.returncode == 1  # something failed, though the run carried on
    s = status(tmp_path / "pol")
    p = {x["name"]: x for x in s["processes"]}
    assert p["flaky"]["state"] == "done" and p["flaky"]["attempts"] == 2
    assert p["broken"]["state"] == "failed" and p["broken"]["attempts"] == 1
    assert p["after_broken"]["state"] == "skipped"
    assert "broken did not end successfully" in p["after_broken"]["reason"]
    assert p["after_flaky"]["state"] == "done"
    assert p["missing"]["state"] == "failed"
    assert "cannot run" in p["missing"]["reason"] and "No such file" in p["missing"]["reason"]
    assert "flaky failed (exit status 4); restarting" in result.stdout
    assert_nothing_left(tmp_path / "pol")


def test_timeouts_and_hangs_are_noticed(tmp_path):
    experiment = write(tmp_path / "hang.toml", HEADER.format(name="hang") +
                       application("hung", ["hang"], hang_seconds=1, on_failure="continue") +
                       application("slow", ["sleep", "60"], timeout_seconds=1.5,
                                   on_failure="continue"))
    start = time.time()
    result = run(experiment)
    assert time.time() - start < 30
    assert result.returncode == 1
    p = {x["name"]: x for x in status(tmp_path / "hang")["processes"]}
    assert p["hung"]["state"] == "failed" and "wrote nothing for 1 s" in p["hung"]["reason"]
    assert p["slow"]["state"] == "failed" and "timeout of 1.5 s" in p["slow"]["reason"]
    assert_nothing_left(tmp_path / "hang")


def test_sigint_stops_every_process_and_the_server(tmp_path):
    experiment = write(tmp_path / "int.toml", HEADER.format(name="int") + application(
        "sim", ["sleep", "120"], ranks=2, ensemble="replicas = 2"))
    launcher = subprocess.Popen([BINARY, "run", str(experiment)], stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, env=environment(),
                                cwd=tmp_path)
    run_dir = tmp_path / "int"
    deadline = wait_until_all_running(run_dir)
    # Both members' ranks are running.
    while time.time() < deadline and any(
            (run_dir / f"sim_{k}" / f"sim_{k}.out").read_text().count("second 0") < 2
            for k in range(2)):
        time.sleep(0.1)
    assert len(processes_of(run_dir)) >= 5  # server, 2 x (mpirun + 2 ranks)
    launcher.send_signal(signal.SIGINT)
    out, _ = launcher.communicate(timeout=60)
    assert launcher.returncode == 130, out
    s = status(run_dir)
    assert s["state"] == "interrupted"
    assert {p["name"]: p["state"] for p in s["processes"]} == {
        "db": "done", "sim_0": "stopped", "sim_1": "stopped"}
    assert out.index("stopping 2 process(es)") < out.index("servers stopped")
    assert_nothing_left(run_dir)


def test_the_run_directory_is_owner_only_whatever_the_umask(tmp_path):
    """Under a umask of 0 the run directory, the folders and the files the launcher writes in it
    (marker, plan, status, logs, metrics, report) are still owner-only."""
    experiment = write(tmp_path / "private.toml", HEADER.format(name="private") +
                       application("sim", ["sleep", "1"]))
    result = subprocess.run([BINARY, "run", str(experiment)], capture_output=True, text=True,
                            timeout=120, env=environment(), cwd=tmp_path,
                            preexec_fn=without_umask)
    assert result.returncode == 0, result.stdout + result.stderr
    run_dir = tmp_path / "private"
    folders = [run_dir, run_dir / "db", run_dir / "sim", run_dir / "metrics"]
    files = [run_dir / name for name in (".slipstream-run", "plan.txt", "status.json",
                                         "status.txt")]
    files += [run_dir / p / f"{p}.{log}" for p in ("db", "sim") for log in ("out", "err")]
    files += sorted((run_dir / "metrics").glob("*.csv"))
    if (run_dir / "report").exists():  # the report generator is installed beside the binary
        report = list((run_dir / "report").rglob("*"))
        folders += [run_dir / "report"] + [p for p in report if p.is_dir()]
        files += [p for p in report if p.is_file()] + [run_dir / "report.out",
                                                       run_dir / "report.err"]
    assert len(files) == len(set(files)) >= 12
    assert {str(p): oct(mode(p)) for p in folders if mode(p) != 0o700} == {}
    assert {str(p): oct(mode(p)) for p in files if mode(p) != 0o600} == {}
    assert_nothing_left(run_dir)


def test_the_plan_shows_no_password(tmp_path):
    """No password given to a server or a process is in the plan, printed (--dry-run) or kept
    (plan.txt): --requirepass VALUE, --requirepass=VALUE, SLIPSTREAM_PASSWORD=VALUE and a
    parameter holding one are shown as ***."""
    server_password = "server-secret-1"
    text = HEADER.format(name="secret").replace(
        'options = ["--threads", "1"]',
        f'options = ["--threads", "1", "--requirepass", "{server_password}"]')
    text += """
[[application]]
name = "client"
exe = "true"
args = ["--requirepass", "{password}", "--requirepass=argument-secret-3"]
params = { password = "parameter-secret-2" }
env = { SLIPSTREAM_PASSWORD = "env-secret-4", OTHER = "shown" }
"""
    experiment = write(tmp_path / "secret.toml", text)
    secrets = [server_password, "parameter-secret-2", "argument-secret-3", "env-secret-4"]
    env = environment()
    env["SLIPSTREAM_PASSWORD"] = server_password  # the launcher's own client (PING, metrics)

    def assert_no_password(plan):
        for secret in secrets:
            assert secret not in plan, plan
        assert "--requirepass *** " in plan and "--requirepass=***" in plan, plan
        assert "SLIPSTREAM_PASSWORD=***" in plan and "OTHER=shown" in plan, plan
        assert "parameters: password=***" in plan, plan

    dry = subprocess.run([BINARY, "run", str(experiment), "--dry-run"], capture_output=True,
                         text=True, timeout=60, env=env, cwd=tmp_path)
    assert dry.returncode == 0, dry.stderr
    assert_no_password(dry.stdout)
    result = subprocess.run([BINARY, "run", str(experiment)], capture_output=True, text=True,
                            timeout=120, env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert_no_password((tmp_path / "secret" / "plan.txt").read_text())
    assert_nothing_left(tmp_path / "secret")


def test_overwrite_removes_only_a_folder_marked_as_a_run_directory(tmp_path):
    experiment = write(tmp_path / "mark.toml", HEADER.format(name="mark") +
                       application("sim", ["sleep", "0"]))
    # Another tool's folder, though it holds a status.json, is never removed.
    other = tmp_path / "other"
    other.mkdir()
    (other / "status.json").write_text("{}")
    (other / "precious.dat").write_text("keep me")
    refused = run(experiment, "--run-dir", str(other), "--overwrite")
    assert refused.returncode != 0
    assert "is not a run directory" in refused.stderr and ".slipstream-run" in refused.stderr
    assert "nothing was removed" in refused.stderr, refused.stderr
    assert sorted(p.name for p in other.iterdir()) == ["precious.dat", "status.json"]
    assert (other / "precious.dat").read_text() == "keep me"

    # A run directory carries the marker, and --overwrite replaces it.
    assert run(experiment).returncode == 0
    run_dir = tmp_path / "mark"
    marker = run_dir / ".slipstream-run"
    assert marker.read_text().splitlines()[0] == "slipstream run directory, format 1"
    (run_dir / "left-over").write_text("from the first run")
    replaced = run(experiment, "--overwrite")
    assert replaced.returncode == 0, replaced.stdout + replaced.stderr
    assert not (run_dir / "left-over").exists() and marker.exists()

    # A link to a run directory is not one; nor is a folder whose marker says something else
    # or is missing (as in run directories made before markers were written).
    link = tmp_path / "link"
    link.symlink_to(run_dir)
    assert run(experiment, "--run-dir", str(link), "--overwrite").returncode != 0
    assert link.is_symlink()
    marker.write_text("something else\n")
    assert run(experiment, "--overwrite").returncode != 0
    marker.unlink()
    refused = run(experiment, "--overwrite")
    assert refused.returncode != 0
    assert "runs made before the launcher wrote markers have none" in refused.stderr
    assert (run_dir / "status.json").exists() and (run_dir / "sim" / "sim.out").exists()


@pytest.mark.parametrize("text, message", [
    ("[experiment]\nname = 'x'\n[[application]]\nname = 'a'\nexe = 'true'\nrank = 2\n",
     "x.toml:6: [application] rank is not an option of [application]"),
    ("[experiment]\nname = 'x'\n[[application]]\nname = 'a'\nexe = 'true'\n"
     "args = ['{nope}']\n", "unknown placeholder {nope}"),
    ("[experiment]\nname = 'x'\n[[application]]\nname = 'a'\nexe = 'true'\nafter = ['b']\n"
     "[[application]]\nname = 'b'\nexe = 'true'\nafter = ['a']\n",
     "wait for each other in a circle"),
    ("[experiment]\nname = 'x'\n[[application]]\nname = 'a'\nexe = 'true'\n"
     "on_failure = 'retry'\n", "x.toml:6: [application] on_failure must be one of"),
    ("[experiment]\nname = 'x'\n[[application]]\nname = 'a'\nexe = 'true'\nserver = 'db'\n",
     "names server \"db\", which is not declared"),
])
def test_errors_name_the_file_and_line(tmp_path, text, message):
    result = run(write(tmp_path / "x.toml", text), "--dry-run")
    assert result.returncode != 0
    assert message in result.stderr, result.stderr


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))


def test_python3_is_the_interpreter_slipstream_was_set_up_with(tmp_path):
    """Issue 28: `exe = "python3"` ran whatever python3 came first on PATH, which may lack numpy.
    It runs the interpreter the build was set up with (SLIPSTREAM_PYTHON overrides it)."""
    impostor_dir = tmp_path / "impostor"
    impostor_dir.mkdir()
    impostor = impostor_dir / "python3"
    impostor.write_text("#!/bin/sh\necho 'the wrong python3' >&2\nexit 3\n")
    impostor.chmod(0o755)
    which = tmp_path / "which.txt"
    script = f"import sys; open({str(which)!r}, 'w').write(sys.executable)"
    experiment = write(tmp_path / "python.toml", HEADER.format(name="python") + f"""
[[application]]
name = "probe"
exe = "python3"
args = ["-c", {toml_value(script)}]
""")
    env = environment()
    env["PATH"] = f"{impostor_dir}:{env['PATH']}"
    env.pop("SLIPSTREAM_PYTHON", None)
    done = subprocess.run([BINARY, "run", str(experiment)], capture_output=True, text=True,
                          timeout=120, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    used = which.read_text()
    assert used != str(impostor)
    assert os.path.realpath(used) == os.path.realpath(sys.executable)

    # SLIPSTREAM_PYTHON chooses another one: here the impostor, which fails the run.
    env["SLIPSTREAM_PYTHON"] = str(impostor)
    failed = subprocess.run([BINARY, "run", str(experiment), "--run-dir",
                             str(tmp_path / "second")], capture_output=True, text=True,
                            timeout=120, env=env, cwd=tmp_path)
    assert failed.returncode != 0
