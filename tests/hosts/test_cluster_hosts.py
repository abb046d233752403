"""A 3-shard cluster across hosts made of network namespaces (hosts.py): one shard per host, a
SmartRedis client on a fourth host; a shard's host partitioned away and back.

Shows: keys of every shard are written and read through one `Client(cluster=True)`; while host 2
is cut off, requests for its slots fail with an error naming it within a bounded time (not a
hang) and the other shards keep serving; once healed, the same client reaches host 2 again and
its data is intact. Also checks the harness itself (host names, reachability, partitions, nothing
made in the root namespace).

Runs as root; skips where network namespaces cannot be made. SLIPSTREAM_BINARY is the server
(default <repo>/build/src/cli/slipstream); PYTHONPATH must hold the built `smartredis` package.
"""

import json
import os
import pathlib
import queue
import subprocess
import sys
import threading
import time

import pytest

from conftest import server_binary
from hosts import Hosts

HERE = pathlib.Path(__file__).resolve().parent
PORT = 7000
SHARDS = 3
CLIENT_HOST = 4
PARTITIONED_HOST = 2
PASSWORD = "hosts-test"
COMMAND_TIMEOUT_MS = 3000  # SR_CMD_TIMEOUT: how long a request to a silent shard may wait
CONNECT_TIMEOUT_MS = 2000  # SR_CONN_TIMEOUT
FAILURE_BOUND_S = 20.0  # a request to a cut-off shard must fail within this (timeouts + retries)
REPLY_DEADLINE_S = 60.0  # past this the client is taken to hang
START_DEADLINE_S = 60.0  # servers listening; generous for a loaded or sanitized build


def key_slot(key):
    """Redis Cluster's hash slot of a key without a hash tag: CRC16 (XMODEM) modulo 16384."""
    crc = 0
    for byte in key.encode():
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc % 16384


def shard_host(slot):
    """The host (1..SHARDS) of the member owning `slot`: member k of n owns
    [k*16384/n, (k+1)*16384/n)."""
    return next(k for k in range(SHARDS) if slot < (k + 1) * 16384 // SHARDS) + 1


def keys_per_host(count=2):
    """{host: [keys]}: `count` tensor names whose slots each shard owns."""
    chosen = {host: [] for host in range(1, SHARDS + 1)}
    i = 0
    while any(len(keys) < count for keys in chosen.values()):
        key = f"tensor-{i}"
        host = shard_host(key_slot(key))
        if len(chosen[host]) < count:
            chosen[host].append(key)
        i += 1
    return chosen


class ClientAgent:
    """cluster_client.py running on a host: request() sends one request and waits, bounded, for
    its reply."""

    def __init__(self, process):
        self.process = process
        self.replies = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.process.stdout:
            self.replies.put(json.loads(line))
        self.replies.put(None)  # the agent ended

    def next_reply(self, what):
        try:
            message = self.replies.get(timeout=REPLY_DEADLINE_S)
        except queue.Empty:
            pytest.fail(f"the client on host {CLIENT_HOST} gave no reply to {what} in "
                        f"{REPLY_DEADLINE_S:.0f} s: it hangs")
        if message is None:
            pytest.fail(f"the client on host {CLIENT_HOST} ended (status "
                        f"{self.process.wait(timeout=10)}) during {what}")
        return message

    def request(self, op, **fields):
        self.process.stdin.write(json.dumps({"op": op, **fields}) + "\n")
        self.process.stdin.flush()
        return self.next_reply(f"{op} {fields.get('key', '')}")


def values_for(key, generation):
    return [float(generation), float(len(key)), 0.5]


@pytest.fixture(scope="module")
def root_before():
    """The root namespace's networking before any host is made."""
    return root_networking()


@pytest.fixture(scope="module")
def hosts(root_before):
    with Hosts(SHARDS + 1) as made:
        yield made


@pytest.fixture(scope="module")
def cluster(hosts, tmp_path_factory):
    """The members' "host:port" list, once every member answers PING from the client's host."""
    work = tmp_path_factory.mktemp("cluster")
    members = ",".join(f"{hosts.address(k)}:{PORT}" for k in range(1, SHARDS + 1))
    environment = {**os.environ, "SLIPSTREAM_PASSWORD": PASSWORD}
    logs = []
    for k in range(1, SHARDS + 1):
        directory = work / f"shard{k}"
        directory.mkdir()
        log = directory / "log"
        logs.append(log)
        with open(log, "w") as output:
            hosts.popen(k, [server_binary(), "server", "--bind", hosts.address(k), "--port",
                            str(PORT), "--cluster-nodes", members, "--dir", str(directory),
                            "--threads", "2", "--shm-size", "64mb", "--loglevel", "warn"],
                        stdout=output, stderr=subprocess.STDOUT, env=environment)
    ready = hosts.run(CLIENT_HOST, [server_binary(), "wait-ready", "--timeout",
                                    str(START_DEADLINE_S), members],
                      env=environment, capture_output=True, text=True,
                      timeout=START_DEADLINE_S + 30)
    if ready.returncode != 0:
        server_output = "\n".join(f"--- {log}:\n{log.read_text()}" for log in logs)
        pytest.fail(f"the cluster did not answer from host {CLIENT_HOST}: "
                    f"{ready.stdout}{ready.stderr}\n{server_output}")
    return members


@pytest.fixture
def client(hosts, cluster, tmp_path):
    environment = {**os.environ, "SSDB": cluster, "SLIPSTREAM_PASSWORD": PASSWORD,
                   "SR_CMD_TIMEOUT": str(COMMAND_TIMEOUT_MS),
                   "SR_CONN_TIMEOUT": str(CONNECT_TIMEOUT_MS), "PYTHONDONTWRITEBYTECODE": "1"}
    with open(tmp_path / "client.err", "w") as errors:
        process = hosts.popen(CLIENT_HOST, [sys.executable, str(HERE / "cluster_client.py")],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors,
                              text=True, env=environment)
    agent = ClientAgent(process)
    greeting = agent.next_reply("connecting")
    assert greeting.get("ready"), f"the client could not connect: {greeting}"
    yield agent
    process.stdin.close()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def test_harness_makes_isolated_named_hosts(hosts, root_before):
    assert hosts.run(1, ["hostname"], capture_output=True, text=True).stdout.strip() == "host1"
    addresses = hosts.run(3, ["ip", "-o", "-4", "addr", "show", "dev", "eth0"],
                          capture_output=True, text=True).stdout
    assert f"{hosts.address(3)}/24" in addresses
    routes = hosts.run(3, ["ip", "route"], capture_output=True, text=True).stdout
    assert "default" not in routes, routes
    # Host names resolve on every host, as node names do on a cluster, through the hosts' own
    # /etc/hosts: the machine's file is left as it was.
    machine_hosts = pathlib.Path("/etc/hosts").read_text()
    for k in (1, 3):
        found = hosts.run(k, ["getent", "hosts", "host2"], capture_output=True, text=True)
        assert found.stdout.split()[:2] == [hosts.address(2), "host2"], found
    assert pathlib.Path("/etc/hosts").read_text() == machine_hosts
    listener = hosts.popen(2, [sys.executable, "-c",
                               "import socket\n"
                               f"s = socket.create_server(('{hosts.address(2)}', 9000))\n"
                               "while True: s.accept()[0].close()"])
    connect = [sys.executable, "-c",
               f"import socket; socket.create_connection(('{hosts.address(2)}', 9000), 2)"]
    deadline = time.monotonic() + START_DEADLINE_S
    while hosts.run(1, connect, capture_output=True).returncode != 0:  # until it listens
        assert time.monotonic() < deadline, "host 1 cannot reach a listener on host 2"
        time.sleep(0.1)
    hosts.partition(2)
    try:
        cut = hosts.run(1, connect, capture_output=True, text=True)
        assert cut.returncode != 0, "host 2 is reachable while partitioned"
        assert "timed out" in cut.stderr or "No route to host" in cut.stderr, cut.stderr
    finally:
        hosts.heal(2)
    assert hosts.run(1, connect, capture_output=True).returncode == 0
    listener.kill()
    listener.wait(timeout=10)
    assert root_networking() == root_before  # the hosts exist, and the root namespace is as it was


def root_networking():
    """The root namespace's link names, addresses and routes."""
    def lines(argv):
        return subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    links = sorted(line.split(":")[1].strip() for line in lines(["ip", "-o", "link"]).splitlines())
    addresses = sorted(" ".join(line.split()[1:4]) for line in
                       lines(["ip", "-o", "addr"]).splitlines())
    return links, addresses, lines(["ip", "route"]), lines(["ip", "-6", "route"])


def test_partitioned_shard_fails_clearly_and_recovers(hosts, client):
    keys = keys_per_host()
    for key in (key for host_keys in keys.values() for key in host_keys):
        slot = client.request("keyslot", key=key)
        assert slot["ok"] and slot["value"] == key_slot(key), slot

    def put(key, generation):
        return client.request("put", key=key, values=values_for(key, generation))

    def get(key):
        return client.request("get", key=key)

    for host_keys in keys.values():
        for key in host_keys:
            assert (result := put(key, 1))["ok"], result
            assert (result := get(key))["value"] == values_for(key, 1), result

    hosts.partition(PARTITIONED_HOST)
    try:
        cut_off = f"{hosts.address(PARTITIONED_HOST)}:{PORT}"
        for key in keys[PARTITIONED_HOST]:
            for result in (get(key), put(key, 2)):
                print(f"cut off, {key}: {result}")  # shown with -s or on failure
                assert not result["ok"], f"{key} on the cut-off host: {result}"
                assert result["seconds"] < FAILURE_BOUND_S, result
                assert result["error_type"] in ("RedisDatabaseError", "RedisTimeoutError"), result
                assert cut_off in result["error"], result
        for host in set(keys) - {PARTITIONED_HOST}:
            for key in keys[host]:
                assert (result := put(key, 2))["ok"], result
                assert (result := get(key))["value"] == values_for(key, 2), result
    finally:
        hosts.heal(PARTITIONED_HOST)

    # The same client reaches the healed host again: poll, as reconnection takes a moment.
    first = keys[PARTITIONED_HOST][0]
    deadline = time.monotonic() + 60
    while not (result := get(first))["ok"]:
        assert time.monotonic() < deadline, f"host {PARTITIONED_HOST} still fails: {result}"
        time.sleep(0.2)
    for key in keys[PARTITIONED_HOST]:
        assert (result := get(key))["value"] == values_for(key, 1), result  # not overwritten
        assert (result := put(key, 3))["ok"], result
        assert (result := get(key))["value"] == values_for(key, 3), result
    for host in set(keys) - {PARTITIONED_HOST}:
        for key in keys[host]:
            assert (result := get(key))["value"] == values_for(key, 2), result
