"""Fixtures for the Python client tests: one real `slipstream server` per session (TCP on a free
loopback port and a Unix socket in a private temporary directory), a password-protected one on
demand, a client per test and key names unique to the test.

The server binary is SLIPSTREAM_BINARY (CTest sets it), else <repo>/build/src/cli/slipstream.
The `slipstream` package must be importable: PYTHONPATH=<build>/bindings/python.
"""

import os
import pathlib
import re
import shutil
import socket
import subprocess
import tempfile
import time

import pytest

import slipstream

REPO = pathlib.Path(__file__).resolve().parents[2]


def server_binary():
    path = os.environ.get("SLIPSTREAM_BINARY") or str(REPO / "build" / "src" / "cli" / "slipstream")
    if not os.access(path, os.X_OK):
        raise RuntimeError(f"slipstream server binary not found at {path}; set SLIPSTREAM_BINARY")
    return path


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Server:
    """A `slipstream server` process; stop() ends it and removes its directory."""

    def __init__(self, *extra_args):
        self.dir = tempfile.mkdtemp(prefix="slipstream-pytest-")
        self.socket_path = os.path.join(self.dir, "s.sock")
        for _ in range(5):  # the free port may be taken between probing and binding
            self.port = free_port()
            self.process = subprocess.Popen(
                [server_binary(), "server", "--port", str(self.port), "--unixsocket",
                 self.socket_path, "--dir", self.dir, "--loglevel", "warn", *extra_args])
            if self._wait_until_listening():
                return
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.dir, ignore_errors=True)
        raise RuntimeError("could not start the slipstream server")

    # 60 s, as tests/support/with_server.sh waits: a sanitizer build that maps libtorch on a
    # loaded machine can take many seconds to listen.
    def _wait_until_listening(self, seconds=60.0):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return False
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    pass
                if os.path.exists(self.socket_path):
                    return True
            except OSError:
                pass
            time.sleep(0.02)
        return False

    @property
    def tcp_address(self):
        return f"tcp://127.0.0.1:{self.port}"

    @property
    def unix_address(self):
        return f"unix://{self.socket_path}"

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture(scope="session")
def server():
    running = Server()
    yield running
    running.stop()


@pytest.fixture(scope="session")
def password_server():
    running = Server("--requirepass", "s3cret")
    yield running
    running.stop()


@pytest.fixture(params=["unix", "tcp"])
def address(request, server):
    """Both transports, for tests where the transport could matter."""
    return server.unix_address if request.param == "unix" else server.tcp_address


@pytest.fixture
def client(server):
    with slipstream.Client(server.unix_address) as connected:
        yield connected


@pytest.fixture
def key(request):
    """key("a") -> a name unique to the running test."""
    base = re.sub(r"[^A-Za-z0-9_.-]", "_", request.node.name)

    def make(name):
        return f"{base}.{name}"

    return make


@pytest.fixture(autouse=True)
def _no_inherited_environment(monkeypatch):
    """Tests choose addresses and prefixes explicitly; the caller's environment must not leak in."""
    for variable in ("SLIPSTREAM_ADDRESS", "SSDB", "SLIPSTREAM_PASSWORD", "SSKEYIN", "SSKEYOUT"):
        monkeypatch.delenv(variable, raising=False)


def pytest_sessionfinish(session, exitstatus):
    """No tests collected (pytest's exit status 5) is a failure here, never a pass or a skip."""
    if exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
