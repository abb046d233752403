"""The launcher's PBS back-end, tested as far as this machine allows: Debian has no PBS server.
What is tested for real: the job script slipstream run writes (and the clear error when qsub is
missing, the script kept); that script run as a PBS job runs it (sh job.pbs with PBS_JOBID set:
the launcher inside the job, MPI members through mpiexec); and the submission loop (submit,
follow, exit status, Ctrl-C passed on with qsig) against stand-in qsub/qstat/qsig programs that
run the job script on this machine. A real PBS server is not."""
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_launcher import (BINARY, HEADER, application, assert_nothing_left,  # noqa: E402
                           environment, status, wait_until_all_running)


def pbs_experiment(tmp_path, name, body):
    text = HEADER.format(name=name).replace("[experiment]\n", "[experiment]\nbackend = \"pbs\"\n")
    text += '\n[pbs]\nresources = "select=1:ncpus=2"\nwalltime = "00:10:00"\nqueue = "debug"\n'
    text += 'mpiexec_args = ["--oversubscribe"]\n' + body
    path = tmp_path / f"{name}.toml"
    path.write_text(text)
    return path


def without_pbs_programs():
    env = environment()
    env["PATH"] = ":".join(p for p in env["PATH"].split(":")
                           if not any(os.path.exists(os.path.join(p, q)) for q in ("qsub", "qstat")))
    return env


def test_the_job_script_and_its_run_inside_a_job(tmp_path):
    experiment = pbs_experiment(tmp_path, "pbsjob", application(
        "sim", ["ensemble", "{value}", "sim_0,sim_1"], ranks=2,
        ensemble="grid = { value = [1.5, 2.5] }"))
    dry = subprocess.run([BINARY, "run", str(experiment), "--dry-run"], capture_output=True,
                         text=True, env=without_pbs_programs(), cwd=tmp_path)
    assert "command: mpiexec -n 2 --oversubscribe" in dry.stdout, dry.stdout

    # No PBS here: a clear error, and the script stays written for the user to submit.
    result = subprocess.run([BINARY, "run", str(experiment)], capture_output=True, text=True,
                            env=without_pbs_programs(), cwd=tmp_path)
    assert result.returncode != 0
    run_dir = tmp_path / "pbsjob"
    script = run_dir / "job.pbs"
    assert "cannot run qsub" in result.stderr and str(script) in result.stderr, result.stderr
    text = script.read_text()
    for line in ("#PBS -N pbsjob", "#PBS -l select=1:ncpus=2", "#PBS -l walltime=00:10:00",
                 "#PBS -q debug", f"#PBS -o {run_dir}/pbs.out", "--in-allocation"):
        assert line in text, text

    # The script as PBS would run it: the experiment runs inside "the job".
    env = without_pbs_programs()
    env["PBS_JOBID"] = "1.test"
    inside = subprocess.run(["sh", str(script)], capture_output=True, text=True, env=env,
                            timeout=120)
    assert inside.returncode == 0, inside.stdout + inside.stderr
    assert status(run_dir)["state"] == "done"
    out = (run_dir / "sim_1" / "sim_1.out").read_text()
    assert out.count("sim_1: own key sim_1.x = 2.5") == 2  # both ranks, under mpiexec
    assert_nothing_left(run_dir)


STAND_INS = {
    # qsub SCRIPT: runs the script in the background as a job would, prints "ID.server".
    # (The job writes its own pid: setsid may fork, so $! would not be the job.)
    "qsub": """#!/bin/sh
echo "$*" > "$STANDIN_DIR/qsub.args"
rm -f "$STANDIN_DIR/job.pid"
PBS_JOBID=42.standin setsid sh -c 'echo $$ > "$STANDIN_DIR/job.pid"; exec sh "$0"' "$1" \
  > "$STANDIN_DIR/job.out" 2>&1 &
while [ ! -s "$STANDIN_DIR/job.pid" ]; do sleep 0.05; done
echo 42.standin
""",
    # qstat ID: a line about the job while it runs; fails once it has ended.
    "qstat": """#!/bin/sh
kill -0 "$(cat "$STANDIN_DIR/job.pid")" 2>/dev/null || exit 153
echo "$1 pbsok root 00:00:01 R debug"
""",
    # qsig -s SIGNAL ID: signals the job's batch process.
    "qsig": """#!/bin/sh
echo "$*" > "$STANDIN_DIR/qsig.args"
kill -s "$2" "$(cat "$STANDIN_DIR/job.pid")"
""",
}


def stand_in_environment(tmp_path):
    bin_dir = tmp_path / "standin"
    bin_dir.mkdir()
    for name, text in STAND_INS.items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(stat.S_IRWXU)
    env = without_pbs_programs()
    env["PATH"] = f"{bin_dir}:{env['PATH']}"
    env["STANDIN_DIR"] = str(bin_dir)
    return env, bin_dir


def test_submission_follows_the_job_and_passes_ctrl_c_on(tmp_path):
    env, bin_dir = stand_in_environment(tmp_path)
    experiment = pbs_experiment(tmp_path, "pbsok", application("sim", ["sleep", "1"]))
    result = subprocess.run([BINARY, "run", str(experiment)], capture_output=True, text=True,
                            env=env, cwd=tmp_path, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "submitted batch job 42.standin" in result.stdout
    assert (bin_dir / "qsub.args").read_text().strip() == str(tmp_path / "pbsok" / "job.pbs")
    assert status(tmp_path / "pbsok")["state"] == "done"

    failing = pbs_experiment(tmp_path, "pbsbad", application("bad", ["fail", "3"]))
    assert subprocess.run([BINARY, "run", str(failing)], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=120).returncode == 1

    long = pbs_experiment(tmp_path, "pbsint", application("sim", ["sleep", "120"]))
    launcher = subprocess.Popen([BINARY, "run", str(long)], stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, env=env, cwd=tmp_path)
    run_dir = tmp_path / "pbsint"
    wait_until_all_running(run_dir, timeout=60)
    launcher.send_signal(signal.SIGINT)
    out, _ = launcher.communicate(timeout=60)
    assert launcher.returncode == 130, out
    assert (bin_dir / "qsig.args").read_text().split() == ["-s", "INT", "42.standin"]
    assert status(run_dir)["state"] == "interrupted"
    assert_nothing_left(run_dir)
