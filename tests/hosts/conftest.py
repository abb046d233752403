"""What the tests across hosts share: the server binary, starting a server on a host, and skipping
where hosts cannot be made (hosts.available() says why)."""
import os
import pathlib
import subprocess

import pytest

import hosts as hosts_module

REPO = pathlib.Path(__file__).resolve().parents[2]


def server_binary():
    """SLIPSTREAM_BINARY (CTest sets it), else <repo>/build/src/cli/slipstream."""
    path = os.environ.get("SLIPSTREAM_BINARY") or str(REPO / "build" / "src" / "cli" / "slipstream")
    if not os.access(path, os.X_OK):
        raise RuntimeError(f"slipstream server binary not found at {path}; set SLIPSTREAM_BINARY")
    return path


@pytest.fixture(scope="module")
def hosts():
    """Three hosts, made for a module's tests and torn down after them (a module needing another
    number defines its own)."""
    with hosts_module.Hosts(3) as made:
        yield made


def start_server(hosts, host, work, port, password, *options, reachable_from=(), deadline=60.0):
    """Starts slipstream's server on `host`, listening on its address and `port` and on a Unix
    socket in `work` (the namespaces share the file system, so a process on any host, or the test
    itself, may use it), with `password` and `options`; waits until it answers from `host` and
    from each of `reachable_from` over TCP. Returns (TCP address, unix:// address). The hosts stop
    it when they are closed."""
    unix_socket = pathlib.Path(work) / "server.sock"
    log = pathlib.Path(work) / "server.log"
    environment = {**os.environ, "SLIPSTREAM_PASSWORD": password}
    with open(log, "w") as output:
        hosts.popen(host, [server_binary(), "server", "--bind", hosts.address(host),
                           "--port", str(port), "--unixsocket", str(unix_socket),
                           "--dir", str(work), *options],
                    stdout=output, stderr=subprocess.STDOUT, env=environment)
    tcp, unix = f"{hosts.address(host)}:{port}", f"unix://{unix_socket}"
    for at in (host, *reachable_from):
        ready = hosts.run(at, [server_binary(), "wait-ready", "--timeout", str(deadline),
                               unix if at == host else tcp],
                          env=environment, capture_output=True, text=True, timeout=deadline + 30)
        if ready.returncode != 0:
            pytest.fail(f"the server did not answer from host {at}: {ready.stdout}"
                        f"{ready.stderr}\n--- {log}:\n{log.read_text()}")
    return tcp, unix


def pytest_collection_modifyitems(config, items):
    available, why_not = hosts_module.available()
    if not available:
        skip = pytest.mark.skip(reason=why_not or "hosts unavailable")
        for item in items:
            item.add_marker(skip)
