"""The online trainer as MPI ranks on two hosts made of network namespaces (hosts.py): the server
and a writer on host 1; mpirun on host 2 starts rank 0 there and rank 1 on host 3 through an rsh
agent that enters host 3 (mpi_agent.sh), and OpenMPI carries its control traffic and the ranks'
all-reduce over TCP between the hosts' addresses (no shared memory between them).

Shows: the two ranks read the stream from two hosts (the server's CLIENT LIST has reader
connections from both addresses), agree through the all-reduce, learn y = sin(x) and publish
versions of the model, which the test runs; and a rank killed on host 3 ends the whole job with an
error in bounded time, not a rank waiting in an all-reduce forever, while the server keeps
serving. Runs as root; skips where network namespaces cannot be made or mpirun is missing.
"""

import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np
import pytest

import slipstream

from conftest import REPO, server_binary, start_server

# The trainer's model, samples and configuration as the single-host trainer test writes them.
sys.path.insert(0, str(REPO / "tests" / "python"))
from test_train import config, held_out_loss, tag  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
PORT = 7100
SERVER_HOST = 1
RANK_HOSTS = (2, 3)  # rank r runs on host RANK_HOSTS[r]; mpirun runs on the first
PASSWORD = "hosts-trainer"
JOB_DEADLINE_S = 240.0  # the whole training run, on a loaded 2-core machine
STOP_BOUND_S = 60.0  # the job must end within this of a rank's death

pytestmark = pytest.mark.skipif(shutil.which("mpirun") is None, reason="mpirun is not installed")

# The sine writer of the single-host test, as a process on the server's host.
WRITER = """
import sys
sys.path[:0] = [{python!r}, {models!r}]
from test_train import write_sine
write_sine({address!r}, {stream!r}, {steps}, pause={pause})
"""


@pytest.fixture(scope="module")
def server(hosts, tmp_path_factory):
    return start_server(hosts, SERVER_HOST, tmp_path_factory.mktemp("trainer"), PORT, PASSWORD,
                        "--loglevel", "warn", reachable_from=RANK_HOSTS)


@pytest.fixture
def client(server):
    tcp, unix = server
    return slipstream.Client(unix, password=PASSWORD)


def start_writer(hosts, server, stream, steps, pause=0.0):
    tcp, _ = server
    code = WRITER.format(python=str(REPO / "tests" / "python"),
                         models=str(REPO / "tests" / "integration" / "models"), address=tcp,
                         stream=stream, steps=steps, pause=pause)
    return hosts.popen(SERVER_HOST, [sys.executable, "-c", code],
                       env={**os.environ, "SLIPSTREAM_PASSWORD": PASSWORD},
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def start_trainer(hosts, path, log):
    """mpirun on the first rank host, one rank on each of RANK_HOSTS."""
    session = tempfile.mkdtemp(prefix="ompi-hosts-")
    environment = {**os.environ, "SLIPSTREAM_PASSWORD": PASSWORD, **hosts.agent_environment(),
                   "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
                   "OMPI_MCA_orte_tmpdir_base": session}
    subnet = hosts.address(1).rsplit(".", 1)[0] + ".0/24"
    argv = [shutil.which("mpirun"), "-n", str(len(RANK_HOSTS)),
            "-H", ",".join(f"{hosts.address(k)}:1" for k in RANK_HOSTS),
            "--mca", "plm_rsh_agent", str(HERE / "mpi_agent.sh"),
            "--mca", "plm_rsh_no_tree_spawn", "1",
            "--mca", "oob_tcp_if_include", subnet, "--mca", "btl_tcp_if_include", subnet,
            "--mca", "btl", "tcp,self",  # between hosts, as between nodes: no shared memory
            "-x", "SLIPSTREAM_PASSWORD",
            server_binary(), "train", str(path)]
    return hosts.popen(RANK_HOSTS[0], argv, stdout=log, stderr=subprocess.STDOUT, text=True,
                       env=environment)


def reader_hosts(client):
    """The addresses of the clients connected to the server now (CLIENT LIST's addr=)."""
    listing = client.command(["CLIENT", "LIST"])
    text = listing.decode() if isinstance(listing, bytes) else str(listing)
    return set(re.findall(r"addr=([0-9.]+):", text))


def test_ranks_on_two_hosts_learn_the_stream_together(hosts, server, client, tmp_path):
    tcp, _ = server
    path = config(tmp_path, "sine", tcp)
    log = open(tmp_path / "trainer.log", "w+")
    trainer = start_trainer(hosts, path, log)
    writer = start_writer(hosts, server, "sine", 30)
    seen = set()
    deadline = time.monotonic() + JOB_DEADLINE_S
    while trainer.poll() is None:
        assert time.monotonic() < deadline, "the trainer did not end in time"
        seen |= reader_hosts(client)
        time.sleep(0.05)
    log.seek(0)
    output = log.read()
    assert trainer.returncode == 0, output
    writer_output, _ = writer.communicate(timeout=60)
    assert writer.returncode == 0, writer_output
    # Both ranks read the stream, each from its own host.
    assert {hosts.address(k) for k in RANK_HOSTS} <= seen, (seen, output)
    assert "with 2 rank(s)" in output, output
    final = tag(client, "sine-model")
    assert int(final["version"]) >= 2, final
    assert held_out_loss(client, "sine-model") < 0.01, output


def test_a_rank_killed_on_its_host_ends_the_job_in_bounded_time(hosts, server, client, tmp_path):
    tcp, _ = server
    path = config(tmp_path, "endless", tcp, metrics={"print_every_seconds": 0.1})
    log = open(tmp_path / "trainer.log", "w+")
    trainer = start_trainer(hosts, path, log)
    writer = start_writer(hosts, server, "endless", 100000, pause=0.02)
    try:
        deadline = time.monotonic() + JOB_DEADLINE_S
        while "optimiser steps" not in (tmp_path / "trainer.log").read_text():
            assert trainer.poll() is None, (tmp_path / "trainer.log").read_text()
            assert time.monotonic() < deadline, "the job never trained"
            time.sleep(0.05)
        # The trainer rank on the last host: the process in its namespace running the trainer.
        far = hosts.namespace(RANK_HOSTS[-1])
        pids = subprocess.run(["ip", "netns", "pids", far], capture_output=True, text=True,
                              check=True).stdout.split()
        rank = [int(pid) for pid in pids
                if b"slipstream-train" in pathlib.Path(f"/proc/{pid}/cmdline").read_bytes()]
        assert len(rank) == 1, (pids, rank)
        killed_at = time.monotonic()
        os.kill(rank[0], signal.SIGKILL)
        try:
            trainer.wait(timeout=STOP_BOUND_S)
        except subprocess.TimeoutExpired:
            pytest.fail("the rank on host 2 still runs: it waits for the dead one")
        assert trainer.returncode != 0
        assert time.monotonic() - killed_at < STOP_BOUND_S
    finally:
        writer.kill()
        writer.wait()
    assert client.command(["PING"]) in ("PONG", b"PONG")  # the server is unharmed
