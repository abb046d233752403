"""The launcher's Python API (slipstream.experiment): an experiment built with calls, written as
the file `slipstream run` checks, dry-run, started, polled, and stopped like Ctrl-C; a refused
file is an ExperimentError with the launcher's message."""
import os

import pytest

pytest.importorskip("slipstream", reason="the Python package is not built")
from slipstream.experiment import Experiment, ExperimentError  # noqa: E402

BINARY = os.path.abspath(os.environ.get("SLIPSTREAM_BINARY", "build/src/cli/slipstream"))
MEMBER = os.path.abspath(os.environ.get("LAUNCH_MEMBER", "build/tests/launch/launch_member"))


def experiment(tmp_path, name):
    exp = Experiment(name, base_dir=tmp_path, stop_grace_seconds=3, status_every_seconds=0,
                     mpirun_args=["--oversubscribe"])
    exp.add_server("db", options=["--threads", "1"])
    return exp


def test_build_dry_run_start_and_poll_to_the_end(tmp_path):
    exp = experiment(tmp_path, "api")
    exp.add_application("sim", exe=MEMBER, args=["ensemble", "{value}", "sim_0,sim_1"],
                        ensemble={"grid": {"value": [1.25, 2.5]}})
    plan = exp.dry_run(slipstream=BINARY)
    assert "application sim_1 (sim #1)" in plan and "SSKEYOUT=sim_1" in plan
    run = exp.start(slipstream=BINARY)
    assert run.wait(timeout=120) == 0, run.output()
    status = run.status()
    assert status["state"] == "done"
    assert {p["name"]: p["state"] for p in status["processes"]} == {
        "db": "done", "sim_0": "done", "sim_1": "done"}
    assert (tmp_path / "api" / "sim_1" / "member.txt").read_text() == "sim_1 2.5\n"
    assert "servers stopped" in run.output()


def test_stop_ends_a_running_experiment(tmp_path):
    exp = experiment(tmp_path, "stop")
    exp.add_application("sim", exe=MEMBER, args=["sleep", "120"], ensemble={"replicas": 2})
    run = exp.start(slipstream=BINARY)
    run.wait_until(lambda s: all(p["state"] == "running" for p in s["processes"]), timeout=60)
    assert run.stop(timeout=60) == 130
    assert run.status()["state"] == "interrupted"


def test_a_refused_file_is_an_error_with_the_launchers_message(tmp_path):
    exp = experiment(tmp_path, "bad")
    exp.add_application("sim", exe=MEMBER, rank=2)
    with pytest.raises(ExperimentError, match=r"rank is not an option of \[application\]"):
        exp.dry_run(slipstream=BINARY)
