"""The servers' password of an experiment ([experiment] password_file, password = "generate"):
the servers the launcher starts refuse clients without it, every process it starts gets it in
SLIPSTREAM_PASSWORD and works, and it is on no command line, not in plan.txt, --dry-run or a job
script. A missing or empty password file is an error before anything is made or started."""
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_launcher import (BINARY, HEADER, application, assert_nothing_left,  # noqa: E402
                           environment, mode, status, write)
from test_batch_script import stand_in_environment  # noqa: E402
from test_pbs import without_pbs_programs  # noqa: E402

SECRET = "file-secret-8c1f"


def with_password(name, line):
    """HEADER with `line` (a password setting) in its [experiment] table."""
    return HEADER.format(name=name).replace("status_every_seconds = 0\n",
                                            f"status_every_seconds = 0\n{line}\n")


def password_file(folder, text=SECRET + "\n"):
    path = folder / "secret.txt"
    path.write_text(text)
    path.chmod(0o600)
    return path


def raw_ping(port):
    """PING in raw RESP, without AUTH: the server's first reply line."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as connection:
        connection.sendall(b"*1\r\n$4\r\nPING\r\n")
        reply = b""
        while not reply.endswith(b"\r\n"):
            chunk = connection.recv(4096)
            if not chunk:
                break
            reply += chunk
        return reply.decode(errors="replace")


def wait_until_running(run_dir, names, timeout=60):
    """Waits until the run's status says each of `names` runs."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            states = {p["name"]: p["state"] for p in status(run_dir)["processes"]}
            if all(states.get(name) == "running" for name in names):
                return
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.1)
    raise AssertionError(f"{names} did not all run within {timeout} s")


def command_lines():
    """Every readable /proc/PID/cmdline, NULs as blanks."""
    lines = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                lines.append((entry / "cmdline").read_bytes().replace(b"\0", b" ").decode())
            except OSError:
                pass
    return lines


def test_a_password_file_protects_the_server_and_reaches_every_process(tmp_path):
    password_file(tmp_path)
    experiment = write(tmp_path / "pw.toml", with_password("pw", 'password_file = "secret.txt"') +
                       application("member", ["ensemble", "1.5", "member"], key_prefix=True) +
                       application("waiter", ["sleep", "4"]))
    launcher = subprocess.Popen([BINARY, "run", str(experiment)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=environment(),
                                cwd=tmp_path)
    run_dir = tmp_path / "pw"
    try:
        wait_until_running(run_dir, ["db", "waiter"])
        server = next(p for p in status(run_dir)["processes"] if p["name"] == "db")
        # The server refuses a client without the password.
        assert raw_ping(server["port"]).startswith("-NOAUTH"), server
        # The password is on no command line while everything runs (the server reads its file).
        lines = command_lines()
        assert any("--requirepass-file" in line and str(run_dir) in line for line in lines)
        assert not [line for line in lines if SECRET in line]
        out, err = launcher.communicate(timeout=120)
    finally:
        if launcher.poll() is None:
            launcher.kill()
            launcher.wait()
    assert launcher.returncode == 0, out + err
    # The member put and read its tensor with the password from SLIPSTREAM_PASSWORD.
    assert (run_dir / "member" / "member.txt").read_text() == "member 1.5\n"
    # The run's password file is owner-only; nothing printed or kept shows the password.
    assert (run_dir / "password").read_text() == SECRET + "\n"
    assert mode(run_dir / "password") == 0o600
    plan = (run_dir / "plan.txt").read_text()
    assert SECRET not in plan and SECRET not in out + err
    assert f"--requirepass-file {run_dir}/password" in plan, plan
    assert "SLIPSTREAM_PASSWORD=*** (the run's password" in plan, plan
    assert_nothing_left(run_dir)


def test_a_generated_password_is_new_for_each_run_and_never_shown(tmp_path):
    experiment = write(tmp_path / "gen.toml", with_password("gen", 'password = "generate"') +
                       application("member", ["ensemble", "2.5", "member"], key_prefix=True))
    dry = subprocess.run([BINARY, "run", str(experiment), "--dry-run"], capture_output=True,
                         text=True, timeout=60, env=environment(), cwd=tmp_path)
    assert dry.returncode == 0, dry.stderr
    assert "SLIPSTREAM_PASSWORD=***" in dry.stdout and "--requirepass-file" in dry.stdout
    run_dir = tmp_path / "gen"
    secrets = []
    for args in ([], ["--overwrite"]):
        result = subprocess.run([BINARY, "run", str(experiment), *args], capture_output=True,
                                text=True, timeout=120, env=environment(), cwd=tmp_path)
        assert result.returncode == 0, result.stdout + result.stderr
        secret = (run_dir / "password").read_text().strip()
        assert len(secret) == 64 and all(c in "0123456789abcdef" for c in secret)
        assert mode(run_dir / "password") == 0o600
        assert secret not in (run_dir / "plan.txt").read_text()
        assert secret not in result.stdout + result.stderr
        assert (run_dir / "member" / "member.txt").read_text() == "member 2.5\n"
        secrets.append(secret)
    assert secrets[0] != secrets[1]
    assert_nothing_left(run_dir)


@pytest.mark.parametrize("content, problem", [(None, "cannot be read"), ("", "is empty"),
                                              ("\nsecond line\n", "is empty")])
@pytest.mark.parametrize("dry_run", [False, True])
def test_a_missing_or_empty_password_file_stops_before_anything_starts(tmp_path, content,
                                                                       problem, dry_run):
    if content is not None:
        password_file(tmp_path, content)
    experiment = write(tmp_path / "bad.toml", with_password("bad", 'password_file = "secret.txt"') +
                       application("member", ["sleep", "0"]))
    result = subprocess.run([BINARY, "run", str(experiment)] + (["--dry-run"] if dry_run else []),
                            capture_output=True, text=True, timeout=60, env=environment(),
                            cwd=tmp_path)
    assert result.returncode != 0
    assert "[experiment] password_file" in result.stderr and problem in result.stderr, \
        result.stderr
    assert str(tmp_path / "secret.txt") in result.stderr
    assert not (tmp_path / "bad").exists()


@pytest.mark.parametrize("line, extra, message", [
    ('password = "hunter2"', "", 'must be "generate"'),
    ('password = "generate"\npassword_file = "secret.txt"', "", "exclude each other"),
    ('password_file = "secret.txt"', 'env = { SLIPSTREAM_PASSWORD = "x" }',
     "may not set SLIPSTREAM_PASSWORD"),
])
def test_password_settings_that_conflict_are_refused(tmp_path, line, extra, message):
    password_file(tmp_path)
    text = with_password("bad", line) + application("member", ["sleep", "0"]) + extra + "\n"
    experiment = write(tmp_path / "bad.toml", text)
    result = subprocess.run([BINARY, "run", str(experiment), "--dry-run"], capture_output=True,
                            text=True, timeout=60, env=environment(), cwd=tmp_path)
    assert result.returncode != 0 and message in result.stderr, result.stderr
    assert "hunter2" not in result.stderr


def test_a_server_option_may_not_set_a_second_password(tmp_path):
    password_file(tmp_path)
    text = with_password("bad", 'password_file = "secret.txt"').replace(
        'options = ["--threads", "1"]', 'options = ["--threads", "1", "--requirepass", "other"]')
    experiment = write(tmp_path / "bad.toml", text + application("member", ["sleep", "0"]))
    result = subprocess.run([BINARY, "run", str(experiment), "--dry-run"], capture_output=True,
                            text=True, timeout=60, env=environment(), cwd=tmp_path)
    assert result.returncode != 0
    assert "may not set --requirepass" in result.stderr, result.stderr


@pytest.mark.parametrize("backend, script_name", [("slurm", "job.sbatch"), ("pbs", "job.pbs")])
def test_the_job_script_holds_no_password(tmp_path, backend, script_name):
    """The job's processes get the password from the launcher inside the job (the file is read,
    or the password made, there): neither the script nor its submission holds it."""
    env, bin_dir = stand_in_environment(tmp_path)
    password_file(tmp_path)
    experiment = write(tmp_path / "job.toml",
                       f'[experiment]\nname = "job"\nbackend = "{backend}"\n'
                       f'password_file = "secret.txt"\n' +
                       application("sim", ["sleep", "0"]))
    result = subprocess.run([BINARY, "run", str(experiment)], capture_output=True, text=True,
                            env=env, cwd=tmp_path, timeout=60)
    assert result.returncode != 0 and "failed (status 1)" in result.stderr, result.stderr
    run_dir = tmp_path / "job"
    script = (run_dir / script_name).read_text()
    assert SECRET not in script and "PASSWORD" not in script, script
    assert SECRET not in (bin_dir / "submitted").read_text()
    assert not (run_dir / "password").exists()


def test_a_pbs_job_runs_with_the_password(tmp_path):
    """The PBS job script run as PBS would run it (PBS_JOBID set): the launcher inside the job
    reads the file, its server asks for the password, and the member has it."""
    password_file(tmp_path)
    experiment = write(tmp_path / "pbsjob.toml",
                       '[experiment]\nname = "pbsjob"\nbackend = "pbs"\nstatus_every_seconds = 0\n'
                       'password_file = "secret.txt"\n\n[[server]]\nname = "db"\n'
                       'options = ["--threads", "1"]\n' +
                       application("member", ["ensemble", "3.5", "member"], key_prefix=True))
    env = without_pbs_programs()  # no qsub: the script is written and left for the user
    for name in ("PBS_JOBID", "SLURM_JOB_ID"):
        env.pop(name, None)
    submitted = subprocess.run([BINARY, "run", str(experiment)], capture_output=True, text=True,
                               env=env, cwd=tmp_path, timeout=60)
    assert submitted.returncode != 0
    run_dir = tmp_path / "pbsjob"
    script = run_dir / "job.pbs"
    assert SECRET not in script.read_text()
    env["PBS_JOBID"] = "1.test"
    inside = subprocess.run(["sh", str(script)], capture_output=True, text=True, env=env,
                            timeout=120)
    assert inside.returncode == 0, inside.stdout + inside.stderr
    assert (run_dir / "member" / "member.txt").read_text() == "member 3.5\n"
    assert SECRET not in (run_dir / "plan.txt").read_text()
    assert mode(run_dir / "password") == 0o600
    assert_nothing_left(run_dir)
