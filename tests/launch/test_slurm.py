"""The launcher's Slurm back-end against a real single-node Slurm that the test starts itself
(munged, slurmctld and slurmd from Debian, configured under a temporary folder by
slurm_fixture.py): `slipstream run` submits the experiment as a batch job, the launcher inside
the job starts the server and the members as job steps (srun), and the run directory, logs,
status and report come out as with the local back-end. Skipped, with the reason, only when Slurm
cannot be started here (not root, packages missing, a daemon that fails)."""
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from slurm_fixture import SlurmCluster, SlurmUnavailable  # noqa: E402
from test_launcher import (BINARY, HEADER, application, assert_nothing_left,  # noqa: E402
                           status, wait_until_all_running)


@pytest.fixture(scope="module")
def slurm():
    workdir = tempfile.mkdtemp(prefix="slurm")
    cluster = SlurmCluster(cpus=4)
    try:
        cluster.start(workdir)
    except SlurmUnavailable as e:
        pytest.skip(f"Slurm cannot be started here: {e}")
    yield cluster
    cluster.stop()


def slurm_experiment(tmp_path, name, body):
    text = HEADER.format(name=name).replace("[local]\nmpirun_args = [\"--oversubscribe\"]\n", "")
    text = text.replace("[experiment]\n", "[experiment]\nbackend = \"slurm\"\n") + body
    path = tmp_path / f"{name}.toml"
    path.write_text(text)
    return path


def test_an_ensemble_runs_as_job_steps_of_a_batch_job(slurm, tmp_path):
    experiment = slurm_experiment(tmp_path, "sl", application(
        "sim", ["ensemble", "{value}", "sim_0,sim_1"], ensemble="grid = { value = [3.5, 4.5] }"))
    dry = subprocess.run([BINARY, "run", str(experiment), "--dry-run"], capture_output=True,
                         text=True, env=slurm.env, cwd=tmp_path)
    assert "srun -n 1 --overlap --overcommit --export=ALL --kill-on-bad-exit=1" in dry.stdout
    result = subprocess.run([BINARY, "run", str(experiment)], capture_output=True, text=True,
                            env=slurm.env, cwd=tmp_path, timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    run_dir = tmp_path / "sl"
    assert "submitted batch job" in result.stdout
    assert "#SBATCH --job-name=sl" in (run_dir / "job.sbatch").read_text()
    assert "servers stopped" in result.stdout  # the inner launcher's output, followed
    s = status(run_dir)
    assert s["state"] == "done"
    assert {p["name"]: p["state"] for p in s["processes"]} == {
        "db": "done", "sim_0": "done", "sim_1": "done"}
    for k, value in enumerate(["3.5", "4.5"]):
        assert (run_dir / f"sim_{k}" / "member.txt").read_text() == f"sim_{k} {value}\n"
    assert (run_dir / "report" / "index.html").is_file() or "no report" in result.stdout
    assert_nothing_left(run_dir)


def test_a_failing_member_fails_the_job_and_sigint_stops_it(slurm, tmp_path):
    failing = slurm_experiment(tmp_path, "slfail", application("bad", ["fail", "3"]))
    result = subprocess.run([BINARY, "run", str(failing)], capture_output=True, text=True,
                            env=slurm.env, cwd=tmp_path, timeout=180)
    assert result.returncode == 1, result.stdout + result.stderr
    assert {p["name"]: p["state"] for p in status(tmp_path / "slfail")["processes"]}["bad"] == \
        "failed"

    long = slurm_experiment(tmp_path, "slint", application("sim", ["sleep", "120"]))
    launcher = subprocess.Popen([BINARY, "run", str(long)], stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, env=slurm.env, cwd=tmp_path)
    run_dir = tmp_path / "slint"
    wait_until_all_running(run_dir, timeout=90)
    launcher.send_signal(signal.SIGINT)
    out, _ = launcher.communicate(timeout=120)
    assert launcher.returncode == 130, out
    assert status(run_dir)["state"] == "interrupted"
    assert_nothing_left(run_dir)
