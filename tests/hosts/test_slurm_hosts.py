"""The launcher's Slurm back-end on a Slurm of three nodes: hosts made of network namespaces
(hosts.py), slurmctld on host 1 and a slurmd on each host (tests/launch/slurm_fixture.py), munged
outside them. `slipstream run` is started on host 1; the job's launcher runs on the first node of
the allocation and starts every server shard and member as a job step on the node the plan gives
it (`srun -N 1 -w NODE`), reached by node name (the hosts' /etc/hosts) over the hosts' subnet.

Shows, from where each process really ran (its `hostname`, written by the process itself) and the
run's status.json: a cluster's shards one per node and the members spread over the nodes, talking
to all shards across nodes; a colocated server with one shard per node and each member using its
own node's shard through the Unix socket; a job step failing on one node failing the experiment,
the other nodes' steps stopped and nothing of the run left on any host."""
import os
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "launch"))
from slurm_fixture import SlurmCluster, SlurmUnavailable  # noqa: E402
from test_launcher import (BINARY, MEMBER, assert_nothing_left, environment,  # noqa: E402
                           status)

NODES = ("host1", "host2", "host3")
RUN_SECONDS = 240  # one experiment, submitted and waited for (about 15 s on an idle machine)


@pytest.fixture(scope="module")
def slurm(hosts):
    cluster = SlurmCluster(cpus=4, hosts=hosts)
    try:
        cluster.start(tempfile.mkdtemp(prefix="slurm"))
    except SlurmUnavailable as error:
        pytest.skip(f"Slurm cannot be started on the hosts: {error}")
    yield cluster
    cluster.stop()


def run_on_slurm(slurm, experiment):
    """`slipstream run EXPERIMENT` on host 1 (it submits the job and waits for it)."""
    return slurm.hosts.run(1, [BINARY, "run", str(experiment)], capture_output=True, text=True,
                           env=slurm.environment(environment()), cwd=experiment.parent,
                           timeout=RUN_SECONDS)


def experiment(tmp_path, name, server, members):
    """An experiment of a server group `db` (`server`: its mode lines) and an ensemble `sim` of
    three members, each a shell that records its host name and SSDB, then runs `members`."""
    path = tmp_path / f"{name}.toml"
    path.write_text(f"""
[experiment]
name = "{name}"
backend = "slurm"
stop_grace_seconds = 3
status_every_seconds = 0

[slurm]
nodes = 3
time = "00:10:00"

[[server]]
name = "db"
{server}
options = ["--threads", "1"]

[[application]]
name = "sim"
exe = "/bin/sh"
args = ["-c", "hostname > host.txt && printf '%s' \\"$SSDB\\" > ssdb.txt && {members}"]
[application.ensemble]
grid = {{ value = [1.5, 2.5, 3.5] }}
""")
    return path


def where_each_ran(run_dir):
    """{member: the host name it wrote}."""
    return {f"sim_{k}": (run_dir / f"sim_{k}" / "host.txt").read_text().strip() for k in range(3)}


def processes(run_dir):
    return {p["name"]: p for p in status(run_dir)["processes"]}


def test_a_clusters_shards_and_the_members_spread_over_the_nodes(slurm, tmp_path):
    path = experiment(tmp_path, "spread", 'mode = "cluster"\nshards = 3',
                      f"exec {MEMBER} ensemble {{value}} sim_0,sim_1,sim_2")
    result = run_on_slurm(slurm, path)
    assert result.returncode == 0, result.stdout + result.stderr
    run_dir = tmp_path / "spread"
    seen = processes(run_dir)
    assert {name: p["state"] for name, p in seen.items()} == {
        "db_0": "done", "db_1": "done", "db_2": "done",
        "sim_0": "done", "sim_1": "done", "sim_2": "done"}
    # One shard per node, each reached by its node's name; the members on the nodes in turn.
    for k, node in enumerate(NODES):
        assert seen[f"db_{k}"]["node"] == node
        assert seen[f"db_{k}"]["address"].startswith(f"{node}:"), seen[f"db_{k}"]
        assert seen[f"sim_{k}"]["node"] == node
    assert where_each_ran(run_dir) == {"sim_0": "host1", "sim_1": "host2", "sim_2": "host3"}
    # Every member was given the whole cluster, by node name, and its value went through it.
    for k, value in enumerate(["1.5", "2.5", "3.5"]):
        ssdb = (run_dir / f"sim_{k}" / "ssdb.txt").read_text()
        assert sorted(address.split(":")[0] for address in ssdb.split(",")) == list(NODES), ssdb
        assert (run_dir / f"sim_{k}" / "member.txt").read_text() == f"sim_{k} {value}\n"
    assert_nothing_left(run_dir)


def test_a_colocated_server_has_a_shard_on_every_node_used_by_that_nodes_members(slurm, tmp_path):
    path = experiment(tmp_path, "colo", 'mode = "colocated"',
                      f"exec {MEMBER} ensemble {{value}} sim_0,sim_1,sim_2")
    # Colocated shards are independent: a member sees only its own node's shard, so each member
    # waits only for itself.
    text = path.read_text().replace("sim_0,sim_1,sim_2", "{name}")
    path.write_text(text)
    result = run_on_slurm(slurm, path)
    assert result.returncode == 0, result.stdout + result.stderr
    run_dir = tmp_path / "colo"
    seen = processes(run_dir)
    assert all(p["state"] == "done" for p in seen.values()), seen
    assert where_each_ran(run_dir) == {"sim_0": "host1", "sim_1": "host2", "sim_2": "host3"}
    for k, node in enumerate(NODES):
        assert seen[f"db_{k}"]["node"] == node
        # The member's SSDB is the Unix socket of the shard on its own node.
        ssdb = (run_dir / f"sim_{k}" / "ssdb.txt").read_text()
        assert ssdb.startswith("unix://") and f"db_{k}" in ssdb, ssdb
        assert (run_dir / f"sim_{k}" / "member.txt").is_file()
    assert_nothing_left(run_dir)


def test_a_step_failing_on_one_node_fails_the_job_and_stops_the_others(slurm, tmp_path):
    # The member on host3 fails after a second; those on host1 and host2 would run a minute.
    path = experiment(tmp_path, "onefails", "",
                      'if [ \\"$(hostname)\\" = host3 ]; then sleep 1; exit 7; fi; exec sleep 60')
    result = run_on_slurm(slurm, path)
    assert result.returncode == 1, result.stdout + result.stderr
    run_dir = tmp_path / "onefails"
    assert status(run_dir)["state"] == "failed"
    seen = processes(run_dir)
    assert where_each_ran(run_dir) == {"sim_0": "host1", "sim_1": "host2", "sim_2": "host3"}
    assert (seen["sim_2"]["state"], seen["sim_2"]["exit_code"]) == ("failed", 7), seen["sim_2"]
    assert seen["sim_0"]["state"] == seen["sim_1"]["state"] == "stopped", seen
    assert seen["db"]["node"] == "host1"
    assert_nothing_left(run_dir)
    # The allocation ended: no job of the run is still queued or running.
    queue = slurm.hosts.run(1, ["squeue", "-h", "-o", "%i %j"], env=slurm.env,
                            capture_output=True, text=True)
    assert queue.returncode == 0 and "onefails" not in queue.stdout, queue
