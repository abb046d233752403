"""Client.loan and TensorLoan against a real server: the bytes round-trip exactly, the statistics
show the shared-memory path over the Unix socket and the socket path over TCP, a put is refused
while an array over the loan's memory lives, a stored loan is consumed, views keep their bytes after
their key is overwritten or deleted, and bad arguments raise."""

import gc

import numpy as np
import pytest

import slipstream


def test_loan_round_trip_through_shared_memory(server, key):
    with slipstream.Client(server.unix_address) as client:
        data = (np.arange(12, dtype=np.float64).reshape(3, 4) * 1.5) - 4.25
        loan = client.loan((3, 4), np.float64)
        assert loan.shared and not loan.stored
        assert loan.shape == (3, 4) and loan.dtype == np.float64 and loan.nbytes == 96
        loan.array[...] = data
        before = client.stats()
        client.put_tensor(key("a"), loan)
        after = client.stats()
        assert after["shared_memory"] is True
        assert after["shm_loan_puts"] == before["shm_loan_puts"] + 1
        assert after["socket_puts"] == before["socket_puts"]
        assert after["fallbacks"] == 0
        assert loan.stored and not loan.shared
        stored = client.get_tensor(key("a"))
        assert stored.dtype == np.float64 and stored.shape == (3, 4)
        assert stored.tobytes() == data.tobytes()


def test_loan_over_tcp_uses_the_socket(server, key):
    with slipstream.Client(server.tcp_address) as client:
        loan = client.loan(5, slipstream.DType.INT16)
        assert not loan.shared and loan.shape == (5,) and loan.dtype == np.int16
        loan.array[:] = [1, -2, 300, -32768, 32767]
        client.put_tensor(key("t"), loan)
        stats = client.stats()
        assert stats["shared_memory"] is False
        assert stats["shm_loan_puts"] == 0 and stats["socket_puts"] == 1
        np.testing.assert_array_equal(client.get_tensor(key("t")),
                                      np.array([1, -2, 300, -32768, 32767], dtype=np.int16))


def test_large_loan_and_shared_get(server, key):
    # 1 MiB: get_tensor of this size takes shared memory too.
    with slipstream.Client(server.unix_address) as client:
        pattern = (np.arange(64 * 128 * 128, dtype=np.uint32) * 131 % 251).astype(np.uint8)
        loan = client.loan((64, 128, 128), "uint8")
        loan.array.reshape(-1)[:] = pattern
        client.put_tensor(key("big"), loan)
        before = client.stats()
        stored = client.get_tensor(key("big"))
        assert client.stats()["shm_gets"] == before["shm_gets"] + 1
        assert stored.shape == (64, 128, 128)
        assert stored.tobytes() == pattern.tobytes()


def test_put_is_refused_while_an_array_lives(server, key):
    with slipstream.Client(server.unix_address) as client:
        loan = client.loan((2, 3), np.int32)
        array = loan.array
        array[...] = [[1, 2, 3], [4, 5, 6]]
        view_of_it = array[1:]
        del array
        with pytest.raises(BufferError, match="still alive"):
            client.put_tensor(key("x"), loan)
        assert not loan.stored and not client.tensor_exists(key("x"))
        del view_of_it
        gc.collect()
        client.put_tensor(key("x"), loan)
        np.testing.assert_array_equal(client.get_tensor(key("x")), [[1, 2, 3], [4, 5, 6]])


def test_a_stored_loan_is_consumed(server, key):
    with slipstream.Client(server.unix_address) as client:
        loan = client.loan(4, np.float32)
        loan.array[:] = 1.0
        client.put_tensor(key("once"), loan)
        with pytest.raises(slipstream.InvalidArgumentError, match="already been stored"):
            client.put_tensor(key("twice"), loan)
        with pytest.raises(slipstream.InvalidArgumentError, match="stored"):
            loan.array
        assert not client.tensor_exists(key("twice"))
        assert "stored" in repr(loan)


def test_a_loan_refused_by_the_server_is_consumed(server, key):
    with slipstream.Client(server.unix_address) as client:
        loan = client.loan(3, np.float64)
        # An empty name is refused after the loan was taken: consumed whatever happens.
        with pytest.raises(slipstream.InvalidArgumentError):
            client.put_tensor("", loan)
        assert loan.stored


def test_views_keep_their_bytes(server, key):
    with slipstream.Client(server.unix_address) as client:
        loan = client.loan((4, 2), np.int64)
        values = np.array([[1, -1], [2**40, -(2**40)], [7, 8], [9, 10]], dtype=np.int64)
        loan.array[...] = values
        client.put_tensor(key("v"), loan)
        before = client.stats()
        view = client.view_tensor(key("v"))
        assert client.stats()["shm_views"] == before["shm_views"] + 1
        assert not view.flags.writeable
        client.put_tensor(key("v"), np.zeros((4, 2), dtype=np.int64))
        np.testing.assert_array_equal(view, values)
        assert client.delete_tensor(key("v"))
        np.testing.assert_array_equal(view, values)
        assert view.tobytes() == values.tobytes()


def test_a_loan_outlives_its_client(server, key):
    client = slipstream.Client(server.unix_address)
    loan = client.loan(8, np.uint16)
    client.close()
    loan.array[:] = 3  # still mapped: the loan keeps its memory
    assert loan.array.sum() == 24
    with pytest.raises(slipstream.ConnectionError):
        client.put_tensor(key("late"), loan)
    assert loan.stored  # consumed all the same
    del loan
    gc.collect()


def test_bad_loan_arguments(client):
    with pytest.raises(slipstream.InvalidArgumentError):
        client.loan(0, np.float32)
    with pytest.raises(slipstream.InvalidArgumentError):
        client.loan((2, -1), np.float32)
    with pytest.raises(slipstream.InvalidArgumentError):
        client.loan((2**40, 2**40), np.float64)
    with pytest.raises(TypeError):
        client.loan(4, np.float16)
    with pytest.raises(TypeError):
        client.loan("four", np.float32)
