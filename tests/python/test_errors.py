"""Error paths from Python: each failure is a typed exception with a message that says what was
wrong (the server's own text where the server refused), and the client stays usable after it."""

import builtins
import socket

import numpy as np
import pytest

import slipstream


def test_exception_hierarchy():
    assert issubclass(slipstream.ConnectionError, slipstream.SlipstreamError)
    assert issubclass(slipstream.ConnectionError, builtins.ConnectionError)
    assert issubclass(slipstream.TimeoutError, builtins.TimeoutError)
    assert issubclass(slipstream.KeyNotFoundError, KeyError)
    assert issubclass(slipstream.InvalidArgumentError, ValueError)
    assert issubclass(slipstream.BufferTooSmallError, ValueError)
    for server_error in (slipstream.WrongTypeError, slipstream.OutOfMemoryError,
                         slipstream.AuthError):
        assert issubclass(server_error, slipstream.ServerError)
    assert issubclass(slipstream.ServerError, slipstream.SlipstreamError)
    assert issubclass(slipstream.ProtocolError, slipstream.SlipstreamError)


def test_wrong_address():
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(slipstream.ConnectionError) as refused:
        slipstream.Client(f"tcp://127.0.0.1:{port}", connect_timeout_ms=2000)
    assert f"127.0.0.1:{port}" in str(refused.value)
    assert refused.value.code_name == "connection"
    with pytest.raises(slipstream.ConnectionError, match="no-such-dir"):
        slipstream.Client("unix:///no-such-dir/s.sock")
    with pytest.raises(slipstream.InvalidArgumentError):
        slipstream.Client("ftp://example")
    with pytest.raises(slipstream.InvalidArgumentError) as no_address:
        slipstream.Client()  # no address and none in the environment
    # What a Python caller can do, not the name of a C++ struct.
    assert "no server address" in str(no_address.value)
    assert "SLIPSTREAM_ADDRESS or SSDB" in str(no_address.value)
    assert "ClientOptions" not in str(no_address.value)


def test_wrong_password(password_server, monkeypatch):
    with pytest.raises(slipstream.AuthError) as wrong:
        slipstream.Client(password_server.tcp_address, password="wrong")
    assert wrong.value.server_text  # the server's WRONGPASS text
    assert "WRONGPASS" in wrong.value.server_text or "invalid" in wrong.value.server_text.lower()
    with slipstream.Client(password_server.unix_address, password="s3cret") as authorised:
        authorised.put_tensor("x", np.ones(2))
    monkeypatch.setenv("SLIPSTREAM_PASSWORD", "s3cret")
    with slipstream.Client(password_server.tcp_address) as from_environment:
        assert from_environment.tensor_exists("x")
    monkeypatch.delenv("SLIPSTREAM_PASSWORD")
    # No password at all: the first command is refused with NOAUTH.
    with slipstream.Client(password_server.tcp_address) as anonymous:
        with pytest.raises(slipstream.AuthError, match="NOAUTH"):
            anonymous.get_tensor("x")


def test_missing_key(client, key):
    with pytest.raises(slipstream.KeyNotFoundError) as missing:
        client.get_tensor(key("missing"))
    assert key("missing") in str(missing.value)          # plain message, not KeyError's repr
    assert missing.value.code == 5 and missing.value.code_name == "key not found"
    with pytest.raises(KeyError):                         # catchable as a KeyError
        client.get_dataset(key("missing"))
    with pytest.raises(slipstream.KeyNotFoundError):
        client.unpack_tensor(key("missing"), np.zeros(3))


def test_wrong_dtype_and_wrong_type(client, key):
    client.put_tensor(key("f"), np.zeros((2, 2), dtype=np.float32))
    with pytest.raises(slipstream.InvalidArgumentError, match="FLOAT.*INT32|INT32.*FLOAT"):
        client.unpack_tensor(key("f"), np.zeros((2, 2), dtype=np.int32))
    client.put_bytes(key("s"), b"not a tensor")
    with pytest.raises(slipstream.WrongTypeError) as wrong_type:
        client.get_tensor(key("s"))
    assert "WRONGTYPE" in wrong_type.value.server_text
    with pytest.raises(TypeError, match="float16"):
        client.put_tensor(key("h"), np.zeros(2, dtype=np.float16))
    with pytest.raises(TypeError, match="complex"):
        client.put_tensor(key("c"), np.zeros(2, dtype=np.complex64))
    with pytest.raises(TypeError):
        client.put_tensor(key("o"), np.array([object()]))
    with pytest.raises(slipstream.InvalidArgumentError):
        client.put_tensor(key("empty"), np.zeros((0, 3)))
    # After every error above the connection is still in step.
    np.testing.assert_array_equal(client.get_tensor(key("f")), np.zeros((2, 2)))


def test_server_error_text(client, key):
    with pytest.raises(slipstream.ServerError) as refused:
        client.command(["AI.TENSORSET", key("t"), "NOTATYPE", "2", "VALUES", "1", "2"])
    assert refused.value.server_text.startswith("ERR")
    assert refused.value.server_text in str(refused.value)
    assert refused.value.code_name == "server"


def test_closed_client(server):
    connected = slipstream.Client(server.unix_address)
    connected.close()
    assert connected.closed
    with pytest.raises(slipstream.ConnectionError, match="closed"):
        connected.tensor_exists("x")
    assert "closed" in repr(connected)


def test_command_timeout():
    # A listener that accepts the connection and never answers.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]
        # The client's first exchange (its connect-time handshake, which asks whether the server
        # is a cluster member, or the command itself) must time out, not hang.
        with pytest.raises(slipstream.TimeoutError) as timed_out:
            with slipstream.Client(f"tcp://127.0.0.1:{port}", command_timeout_ms=200) as impatient:
                impatient.command(["PING"])
        assert isinstance(timed_out.value, builtins.TimeoutError)
