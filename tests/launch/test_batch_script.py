"""The job scripts of the Slurm and PBS back-ends (RUN_DIR/job.sbatch, RUN_DIR/job.pbs) hold what
the experiment means and nothing else: a value with a newline or another control character (which
would end its #SBATCH or #PBS line and make the rest a command of the job), or a blank in a value
that is one word of a directive line, is refused with the setting named, before anything is made
or submitted; paths on the script's command lines are shell-quoted; the script is owner-only.
No batch system is needed: stand-in sbatch and qsub record that they were called, and fail."""
import os
import shlex
import stat
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_launcher import BINARY, application, environment, mode, without_umask  # noqa: E402

STAND_IN = """#!/bin/sh
echo "$@" >> "$STANDIN_DIR/submitted"
exit 1
"""


def stand_in_environment(tmp_path):
    bin_dir = tmp_path / "standin"
    bin_dir.mkdir()
    for name in ("sbatch", "qsub"):
        (bin_dir / name).write_text(STAND_IN)
        (bin_dir / name).chmod(stat.S_IRWXU)
    env = environment()
    env["PATH"] = f"{bin_dir}:{env['PATH']}"
    env["STANDIN_DIR"] = str(bin_dir)
    for name in ("SLURM_JOB_ID", "PBS_JOBID"):  # submitted from outside a job
        env.pop(name, None)
    return env, bin_dir


def batch_experiment(folder, backend, settings):
    """An experiment of one member, `settings` (TOML lines) in its [slurm] or [pbs] table."""
    path = folder / "job.toml"
    path.write_text(f'[experiment]\nname = "job"\nbackend = "{backend}"\n\n[{backend}]\n'
                    f'{settings}\n' + application("sim", ["sleep", "0"]))
    return path


# TOML escapes (\n, \r, \u001b) put the control characters into the values.
REFUSED = [
    ("slurm", r'account = "proj\ntouch injected"', "[slurm] account", "contains a newline"),
    ("slurm", r'partition = "debug\rtouch injected"', "[slurm] partition",
     "contains a carriage return"),
    ("slurm", r'time = "01:00:00\ntouch injected"', "[slurm] time", "contains a newline"),
    ("slurm", r'sbatch_args = ["--mem=1G", "--comment=x\ntouch injected"]',
     "[slurm] sbatch_args", "contains a newline"),
    ("slurm", r'account = "proj --uid=0"', "[slurm] account", "contains a blank"),
    ("pbs", r'queue = "workq\ntouch injected"', "[pbs] queue", "contains a newline"),
    ("pbs", r'account = "acct\u001btouch"', "[pbs] account", "the control character 0x1b"),
    ("pbs", r'walltime = "00:10:00\ntouch injected"', "[pbs] walltime", "contains a newline"),
    ("pbs", r'resources = "select=1\ntouch injected"', "[pbs] resources", "contains a newline"),
    ("pbs", r'qsub_args = ["-V\ntouch injected"]', "[pbs] qsub_args", "contains a newline"),
]


@pytest.mark.parametrize("backend, settings, setting, problem", REFUSED)
def test_a_value_that_would_add_to_the_script_is_refused(tmp_path, backend, settings, setting,
                                                          problem):
    env, bin_dir = stand_in_environment(tmp_path)
    experiment = batch_experiment(tmp_path, backend, settings)
    result = subprocess.run([BINARY, "run", str(experiment)], capture_output=True, text=True,
                            env=env, cwd=tmp_path, timeout=60)
    assert result.returncode != 0
    assert f"{setting} " in result.stderr and problem in result.stderr, result.stderr
    assert "batch script" in result.stderr, result.stderr
    # Refused before anything is made or submitted.
    assert not (tmp_path / "job").exists()
    assert not (bin_dir / "submitted").exists()


@pytest.mark.parametrize("backend", ["slurm", "pbs"])
@pytest.mark.parametrize("run_dir, problem", [("dir\ntouch injected", "contains a newline"),
                                              ("with blank", "contains a blank")])
def test_a_run_directory_that_would_add_to_the_script_is_refused(tmp_path, backend, run_dir,
                                                                 problem):
    env, bin_dir = stand_in_environment(tmp_path)
    experiment = batch_experiment(tmp_path, backend, "")
    result = subprocess.run([BINARY, "run", str(experiment), "--run-dir", str(tmp_path / run_dir)],
                            capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)
    assert result.returncode != 0
    assert "the run directory " in result.stderr and problem in result.stderr, result.stderr
    assert not (tmp_path / run_dir).exists() and not (tmp_path / "dir").exists()
    assert not (bin_dir / "submitted").exists()


@pytest.mark.parametrize("backend, script_name", [("slurm", "job.sbatch"), ("pbs", "job.pbs")])
def test_the_script_quotes_its_paths_and_is_owner_only(tmp_path, backend, script_name):
    env, bin_dir = stand_in_environment(tmp_path)
    # The experiment file's folder is written on the script's exec line: quoted, it stays one
    # word and runs nothing.
    folder = tmp_path / "it's $(touch pwned) `touch pwned`; touch pwned"
    folder.mkdir()
    experiment = batch_experiment(folder, backend, 'account = "proj;x"')
    result = subprocess.run([BINARY, "run", str(experiment)], capture_output=True, text=True,
                            env=env, cwd=tmp_path, timeout=60, preexec_fn=without_umask)
    assert result.returncode != 0 and "failed (status 1)" in result.stderr, result.stderr
    run_dir = tmp_path / "job"
    script = run_dir / script_name
    assert (bin_dir / "submitted").read_text().split()[-1] == str(script)
    assert mode(run_dir) == 0o700 and mode(script) == 0o600
    text = script.read_text()
    assert subprocess.run(["sh", "-n", str(script)]).returncode == 0
    exec_line = [line for line in text.splitlines() if line.startswith("exec ")]
    assert len(exec_line) == 1, text
    assert shlex.split(exec_line[0]) == ["exec", os.path.realpath(BINARY), "run", str(experiment),
                                         "--run-dir", str(run_dir), "--in-allocation"]
    # Each directive is one line; the account as given (a ';' in a directive runs nothing).
    account = "#SBATCH --account=proj;x" if backend == "slurm" else "#PBS -A proj;x"
    assert account in text.splitlines(), text
    assert not list(tmp_path.rglob("pwned"))
