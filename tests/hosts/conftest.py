"""What the tests across hosts share: the server binary, and skipping where hosts cannot be made
(hosts.available() says why)."""
import os
import pathlib

import pytest

import hosts as hosts_module

REPO = pathlib.Path(__file__).resolve().parents[2]


def server_binary():
    """SLIPSTREAM_BINARY (CTest sets it), else <repo>/build/src/cli/slipstream."""
    path = os.environ.get("SLIPSTREAM_BINARY") or str(REPO / "build" / "src" / "cli" / "slipstream")
    if not os.access(path, os.X_OK):
        raise RuntimeError(f"slipstream server binary not found at {path}; set SLIPSTREAM_BINARY")
    return path


def pytest_collection_modifyitems(config, items):
    available, why_not = hosts_module.available()
    if not available:
        skip = pytest.mark.skip(reason=why_not or "hosts unavailable")
        for item in items:
            item.add_marker(skip)
