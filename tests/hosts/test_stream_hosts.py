"""A stream across hosts made of network namespaces (hosts.py): one server on host 2, writers on
hosts 1 and 2, reader groups on hosts 2 and 3, each writer and reader a process of its own
(stream_peer.py) on its host.

Shows: every element of every step reaches every group exactly once; the reader on the server's
host, connected through the server's Unix socket, gets the chunks of the writer on that host
through shared memory (its pieces are `shared`), and readers on host 3 over TCP get the same
bytes; `hostname_binpacking_slicedataset` gives host 2's reader every chunk of host 2's writer
and host 3's reader none of them (checked against the writers' rank -> host name table); a
partition of host 3 mid-stream ends its reader with a timeout in bounded time, the server drops
that unreachable reader (its TCP keepalive) so that the writers its blocking group held go on, and
the group on host 2 reads every step to the end.

The Unix socket is a path in the file system that the namespaces share: only processes started on
host 2 are given it, as on a real node. Runs as root; skips where network namespaces cannot be
made. SLIPSTREAM_BINARY is the server (default <repo>/build/src/cli/slipstream); PYTHONPATH must
hold the built `slipstream` package.
"""

import json
import os
import pathlib
import queue
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from conftest import server_binary, start_server
from stream_peer import CHUNK_ROWS, COLUMNS, ROWS, chunk_rows

HERE = pathlib.Path(__file__).resolve().parent
PORT = 7000
SERVER_HOST = 2
WRITER_HOSTS = (1, 2)  # writer rank r runs on host WRITER_HOSTS[r]
FAR_HOST = 3
PASSWORD = "hosts-test"
START_DEADLINE_S = 60.0  # the server listening; generous for a loaded or sanitized build
RUN_DEADLINE_S = 60.0  # a peer's next report, or its end, must come within this: past it, a hang
CUT_TIMEOUT_MS = 2000  # the cut reader's next_timeout_ms and command_timeout_ms
FAILURE_BOUND_S = 20.0  # the cut reader must fail within this of the partition (about 4 s)
KEEPALIVE_S = 3  # the server's --tcp-keepalive: it drops a peer it cannot reach within 2 x this
WRITERS_FREED_BOUND_S = 40.0  # writers held by the cut group go on within this (about 6 s)


class Server:
    def __init__(self, tcp, unix):
        self.tcp = tcp  # host:port, for every host
        self.unix = unix  # unix:///path, for host 2 only

    def address_for(self, host):
        return self.unix if host == SERVER_HOST else self.tcp


class Peer:
    """stream_peer.py running on a host: its JSON lines are collected as they come, and every
    wait for them is bounded."""

    def __init__(self, hosts, host, arguments, log):
        environment = {**os.environ, "SLIPSTREAM_PASSWORD": PASSWORD,
                       "PYTHONDONTWRITEBYTECODE": "1"}
        self.host = host
        self.what = f"{arguments[0]} {' '.join(arguments[1:4])} on host {host}"
        with open(log, "w") as errors:
            self.process = hosts.popen(host, [sys.executable, str(HERE / "stream_peer.py"),
                                              *arguments],
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                       stderr=errors, text=True, env=environment)
        self.log = log
        self.lines = []  # every report so far, with the monotonic time it was read
        self._incoming = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.process.stdout:
            self._incoming.put((time.monotonic(), json.loads(line)))
        self._incoming.put(None)  # the peer ended

    def _next(self, deadline, failure):
        """The peer's next report (None: it ended); fails the test with `failure` at the
        deadline."""
        try:
            return self._incoming.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            pytest.fail(f"{failure}\n{self.describe()}")

    def wait_for(self, predicate, what, seconds=RUN_DEADLINE_S):
        """The first report (seen before or arriving within `seconds`) for which `predicate` is
        true; fails the test if the peer ends or is silent that long before one comes."""
        for _, message in self.lines:
            if predicate(message):
                return message
        deadline = time.monotonic() + seconds
        while True:
            item = self._next(deadline, f"{self.what}: no {what} within {seconds:.0f} s: it hangs")
            if item is None:
                self._incoming.put(None)
                pytest.fail(f"{self.what} ended before {what}\n{self.describe()}")
            self.lines.append(item)
            if predicate(item[1]):
                return item[1]

    def finish(self, seconds=RUN_DEADLINE_S):
        """Waits (bounded) for the peer to end; returns its exit status."""
        deadline = time.monotonic() + seconds
        while True:
            item = self._next(deadline, f"{self.what} did not end within {seconds:.0f} s: it hangs")
            if item is None:
                break
            self.lines.append(item)
        return self.process.wait(timeout=10)

    def messages(self):
        return [message for _, message in self.lines]

    def describe(self):
        shown = [json.dumps(m)[:300] for m in self.messages()[-5:]]
        return (f"last reports of {self.what}:\n  " + "\n  ".join(shown) +
                f"\nits stderr:\n{self.log.read_text()[-2000:]}")

    def send(self, line):
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()


@pytest.fixture(scope="module")
def server(hosts, tmp_path_factory):
    tcp, unix = start_server(hosts, SERVER_HOST, tmp_path_factory.mktemp("stream"), PORT, PASSWORD,
                             "--threads", "2", "--shm-size", "64mb",
                             "--tcp-keepalive", str(KEEPALIVE_S), "--loglevel", "warn",
                             reachable_from=(FAR_HOST,), deadline=START_DEADLINE_S)
    return Server(tcp, unix)


@pytest.fixture
def start(hosts, server, tmp_path):
    """start(host, role, *arguments, **options) runs stream_peer.py `role` on `host` against the
    server (through the Unix socket on host 2, TCP elsewhere); every peer still running at the
    end of the test is killed."""
    peers = []

    def started(host, role, *arguments, **options):
        flags = [f"--{name.replace('_', '-')}={value}" for name, value in options.items()]
        log = tmp_path / f"{role}-{'-'.join(map(str, arguments))}-host{host}.err"
        # write STREAM RANK WRITERS ADDRESS ... or read STREAM GROUP RANK SIZE ADDRESS ...
        argv = [role, *map(str, arguments), server.address_for(host), *flags]
        peer = Peer(hosts, host, argv, log)
        peers.append(peer)
        return peer

    yield started
    for peer in peers:
        if peer.process.poll() is None:
            peer.process.kill()
            peer.process.wait(timeout=10)


def steps_of(reader):
    """{step: pieces} of a reader's reports; a step reported twice fails the test."""
    steps = {}
    for message in reader.messages():
        if "step" in message:
            assert message["step"] not in steps, f"{reader.what} got step {message['step']} twice"
            assert not message["bad"], f"{reader.what}: wrong values in step {message['step']} " \
                                       f"at offsets {message['bad']}"
            steps[message["step"]] = message["pieces"]
    return steps


def coverage(pieces, source_ranks=None):
    """How many times each element of the field is covered by `pieces` (of `source_ranks`)."""
    counts = np.zeros((ROWS, COLUMNS), dtype=np.int32)
    for source_rank, offset, extent, _, _ in pieces:
        if source_ranks is None or source_rank in source_ranks:
            counts[tuple(slice(o, o + e) for o, e in zip(offset, extent))] += 1
    return counts


def rows_of(ranks, writers):
    """A mask of the rows the writers `ranks` (of `writers`) put."""
    mask = np.zeros((ROWS, COLUMNS), dtype=bool)
    for rank in ranks:
        for first in chunk_rows(rank, writers):
            mask[first:first + CHUNK_ROWS] = True
    return mask


def segments_made(hosts, server, stream):
    """SS.STREAM.INFO's `segments_made` (shared-memory segments lent to the stream's writers over
    its life), asked on the server's host through the Unix socket."""
    program = ("import sys, slipstream\n"
               "flat = slipstream.Client(sys.argv[1]).command(['SS.STREAM.INFO', sys.argv[2]])\n"
               "info = {(k.decode() if isinstance(k, bytes) else k): v\n"
               "        for k, v in zip(flat[::2], flat[1::2])}\n"
               "print(info['segments_made'])")
    done = hosts.run(SERVER_HOST, [sys.executable, "-c", program, server.unix, stream],
                     env={**os.environ, "SLIPSTREAM_PASSWORD": PASSWORD}, capture_output=True,
                     text=True, timeout=RUN_DEADLINE_S)
    assert done.returncode == 0, done.stderr
    return int(done.stdout)


def assert_every_element_once(group, readers, steps):
    per_reader = [steps_of(reader) for reader in readers]
    for step in range(steps):
        total = sum(coverage(got.get(step, [])) for got in per_reader)
        assert (total == 1).all(), (f"group {group}, step {step}: elements covered "
                                    f"{sorted(set(total.ravel().tolist()))} times, expected once")
    for reader, got in zip(readers, per_reader):
        assert set(got) <= set(range(steps)), f"{reader.what}: steps {sorted(got)}"


def test_every_element_once_shared_memory_on_the_node_and_same_host_chunks(hosts, server, start):
    stream, steps, writers = "hosts-every-element", 4, len(WRITER_HOSTS)
    # Group "spread": reader 0 on the server's host (Unix socket), reader 1 on host 3 (TCP), with
    # the default hostname_binpacking_slicedataset. Group "far": two readers on host 3 (TCP)
    # taking whole chunks. The readers join first; the writers wait for both groups.
    spread = [start(SERVER_HOST, "read", stream, "spread", 0, 2),
              start(FAR_HOST, "read", stream, "spread", 1, 2)]
    far = [start(FAR_HOST, "read", stream, "far", rank, 2, strategy="roundrobin")
           for rank in range(2)]
    writer_peers = [start(host, "write", stream, rank, writers, steps=steps, expected_groups=2)
                    for rank, host in enumerate(WRITER_HOSTS)]
    for peer in writer_peers + spread + far:
        assert peer.finish() == 0, f"{peer.what} failed\n{peer.describe()}"
        if peer in spread + far:
            assert peer.messages()[-1] == {"end": True}, peer.describe()

    # The rank tables: the host names the writers and readers run with are their hosts'.
    writer_hosts = {m["rank"]: m["hostname"] for p in writer_peers for m in p.messages()
                    if "hostname" in m}
    assert writer_hosts == {rank: hosts.hostname(host) for rank, host in enumerate(WRITER_HOSTS)}
    for peer in spread + far:
        assert peer.messages()[0]["hostname"] == hosts.hostname(peer.host), peer.describe()

    # 1. Every element of every step reaches each group exactly once, with the writers' values
    #    (each reader checks every piece against the field and reports any that differ).
    assert_every_element_once("spread", spread, steps)
    assert_every_element_once("far", far, steps)

    # 2. The reader on the server's host maps host 2's writer's chunks: all its pieces of them are
    #    shared. Readers on host 3 get every piece over TCP (none shared), with the same bytes.
    server_host_ranks = {rank for rank, name in writer_hosts.items()
                         if name == hosts.hostname(SERVER_HOST)}
    own_chunks = sum(len(chunk_rows(rank, writers)) for rank in server_host_ranks)
    near_steps = steps_of(spread[0])
    mapped = {}
    for step, pieces in near_steps.items():
        for source_rank, offset, extent, shared, digest in pieces:
            if source_rank in server_host_ranks:
                assert shared, f"step {step}: a piece of writer {source_rank} at {offset} on " \
                               f"host {SERVER_HOST} did not come through shared memory"
                mapped[(step, tuple(offset), tuple(extent))] = digest
    assert len(mapped) == steps * own_chunks, sorted(mapped)
    over_tcp = {}
    for reader in spread[1:] + far:
        for step, pieces in steps_of(reader).items():
            for source_rank, offset, extent, shared, digest in pieces:
                assert not shared, f"{reader.what}: a shared piece over TCP"
                over_tcp[(step, tuple(offset), tuple(extent))] = digest
    assert {key: over_tcp.get(key) for key in mapped} == mapped, \
        "host 3 got other bytes than host 2 mapped"
    # The server lent host 2's writer segments (the ended run is kept for a minute, so its
    # counters can still be read).
    assert segments_made(hosts, server, stream) >= own_chunks

    # 3. hostname_binpacking_slicedataset: host 2's reader gets every element of host 2's writer;
    #    host 3's reader none of it, only chunks of host 1's writer, which has no reader on its
    #    host (a strategy blind to host names, plain slicedataset, would give each reader a half
    #    of the rows, and so chunks of both writers).
    own_rows = rows_of(server_host_ranks, writers)
    far_steps = steps_of(spread[1])
    for step in range(steps):
        near = coverage(near_steps.get(step, []), server_host_ranks)
        assert (near[own_rows] == 1).all(), f"step {step}: host 2's reader missed host 2's chunks"
        far_ranks = {piece[0] for piece in far_steps.get(step, [])}
        assert not far_ranks & server_host_ranks, \
            f"step {step}: host 3's reader got chunks of writers {far_ranks} (host 2's: " \
            f"{server_host_ranks})"
        assert far_ranks, f"step {step}: host 3's reader got nothing of host 1's writer"


def test_partition_mid_stream_times_out_the_cut_reader_and_the_other_group_goes_on(hosts, start):
    stream, steps, pause_after, writers = "hosts-partition", 12, 3, len(WRITER_HOSTS)
    # Two blocking groups: "near", one reader on the server's host; "far", one reader on host 3.
    # Once host 3 is cut, the far group holds the writers (its queue fills) until the server's
    # TCP keepalive (--tcp-keepalive) finds its reader unreachable and drops it as if it died.
    near = start(SERVER_HOST, "read", stream, "near", 0, 1)
    far = start(FAR_HOST, "read", stream, "far", 0, 1,
                next_timeout_ms=CUT_TIMEOUT_MS, timeout_ms=CUT_TIMEOUT_MS)
    writer_peers = [start(host, "write", stream, rank, writers, steps=steps,
                          pause_after=pause_after, queue_limit=3, expected_groups=2)
                    for rank, host in enumerate(WRITER_HOSTS)]
    for peer in writer_peers:
        peer.wait_for(lambda m: "paused" in m, "pause")
    far.wait_for(lambda m: "step" in m, "first step")
    near.wait_for(lambda m: m.get("step") == pause_after - 1, f"step {pause_after - 1}")

    hosts.partition(FAR_HOST)
    try:
        cut_at = time.monotonic()
        for peer in writer_peers:
            peer.send("go on")
        # 4. The cut reader fails with a timeout within a bounded time: never a hang.
        failure = far.wait_for(lambda m: "error" in m, "error after the partition",
                               seconds=FAILURE_BOUND_S)
        failed_after = time.monotonic() - cut_at
        print(f"cut reader: {failure} after {failed_after:.1f} s")  # shown with -s or on failure
        assert failure["error"] == "TimeoutError", failure
        assert failed_after < FAILURE_BOUND_S, failure
        assert far.finish() == 1, far.describe()
        got_before = steps_of(far)  # checked for exactly-once and values
        assert got_before and max(got_before) < steps, got_before

        # The server drops the unreachable reader, and the writers and the group on host 2 go on:
        # every step, every element, then the end.
        for peer in writer_peers + [near]:
            assert peer.finish(WRITERS_FREED_BOUND_S) == 0, f"{peer.what} failed\n{peer.describe()}"
        freed_after = time.monotonic() - cut_at
        print(f"writers and the near group done {freed_after:.1f} s after the partition")
        assert near.messages()[-1] == {"end": True}, near.describe()
        assert sorted(steps_of(near)) == list(range(steps))
        assert_every_element_once("near", [near], steps)
    finally:
        hosts.heal(FAR_HOST)
