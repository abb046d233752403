"""The GIL is released during network calls: other Python threads run while one thread blocks in
poll_tensor or wait_for_keys, and threads can share a Client."""

import os
import subprocess
import sys
import threading
import time

import numpy as np

import slipstream


def count_python_work(seconds):
    """Pure-Python work that only progresses while this thread holds the GIL."""
    count = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        count += 1
    return count


def test_other_threads_run_while_one_blocks_in_poll_tensor(server, key):
    waiter = slipstream.Client(server.unix_address)
    result = {}

    def wait():
        started = time.monotonic()
        result["found"] = waiter.poll_tensor(key("late"), 100, 600)  # up to 60 s
        result["seconds"] = time.monotonic() - started

    thread = threading.Thread(target=wait)
    thread.start()
    time.sleep(0.2)  # the waiter is now blocked in the server call
    assert thread.is_alive()
    # If the waiter held the GIL this thread could not run until poll_tensor gave up (60 s), and
    # the key would never be put: poll_tensor would return False.
    assert count_python_work(0.3) > 1000
    with slipstream.Client(server.unix_address) as writer:
        writer.put_tensor(key("late"), np.ones(3))
    thread.join(timeout=90)
    assert not thread.is_alive()
    assert result["found"] is True
    # Well before the poll's 60 s: it saw the key, it did not run out (a loaded machine may take
    # seconds to get here, so the bound is the poll's budget, not the half second this takes).
    assert result["seconds"] < 30


def test_wait_for_keys_releases_the_gil(client, key):
    progress = []

    def ticker(stop):
        while not stop.is_set():
            progress.append(time.monotonic())
            time.sleep(0.01)

    stop = threading.Event()
    thread = threading.Thread(target=ticker, args=(stop,))
    thread.start()
    try:
        started = time.monotonic()
        assert not client.wait_for_keys([key("never")], timeout_ms=500)
        waited = time.monotonic() - started
    finally:
        stop.set()
        thread.join()
    assert waited >= 0.45
    # About 50 ticks on an idle machine; if the wait held the GIL, one or two at most (the ticker
    # could only run just before or just after it). A loaded machine runs the ticker less often:
    # a handful shows that it ran during the wait.
    ticks_during_wait = [t for t in progress if started < t < started + waited]
    assert len(ticks_during_wait) >= 5


def test_threads_share_one_client(client, key):
    errors = []

    def worker(n):
        try:
            for step in range(20):
                data = np.full((8, 8), n * 100 + step, dtype=np.int64)
                client.put_tensor(key(f"w{n}"), data)
                np.testing.assert_array_equal(client.get_tensor(key(f"w{n}")), data)
        except Exception as error:  # reported below, in the main thread
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []


EXIT_WITH_BUSY_DAEMON_THREADS = """
import sys, threading, time
import slipstream

client = slipstream.Client(sys.argv[1])

def loop():
    while True:
        try:
            client.tensor_exists("nothing")
        except Exception:
            pass

for _ in range(4):
    threading.Thread(target=loop, daemon=True).start()
time.sleep(0.3)
"""


def test_a_program_exits_cleanly_while_daemon_threads_are_in_calls(server, tmp_path):
    # At exit CPython ends daemon threads that take the GIL back; a call returning then used to
    # abort the whole process (rc 134, "terminate called without an active exception") about
    # every other run.
    script = tmp_path / "busy_daemons.py"
    script.write_text(EXIT_WITH_BUSY_DAEMON_THREADS)
    for _ in range(8):
        done = subprocess.run([sys.executable, str(script), server.unix_address],
                              capture_output=True, text=True, timeout=60, env=dict(os.environ))
        assert done.returncode == 0 and "terminate" not in done.stderr, done.stderr
