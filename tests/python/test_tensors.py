"""Tensors from Python: every dtype and rank, C and Fortran order, torch tensors in, zero-copy
numpy arrays out, unpack into caller arrays, batches, raw keys."""

import gc

import numpy as np
import pytest
import torch

import slipstream

DTYPES = [np.float32, np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
          np.bool_]
SHAPES = [(7,), (3, 5), (2, 3, 4), (2, 3, 2, 5)]


def sample(dtype, shape):
    """Distinct values in range for every dtype: element at flat index n is a function of n."""
    n = np.arange(int(np.prod(shape)))
    if dtype == np.bool_:
        values = n % 3 == 1
    elif np.issubdtype(dtype, np.floating):
        values = n * 0.25 - 3.0
    else:
        info = np.iinfo(dtype)
        values = n % min(int(info.max), 1000) + (info.min if info.min < 0 and info.bits == 8 else 0)
    return values.astype(dtype).reshape(shape)


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"rank{len(s)}")
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_round_trip_every_dtype_and_rank(client, key, dtype, shape):
    data = sample(dtype, shape)
    client.put_tensor(key("t"), data)
    got = client.get_tensor(key("t"))
    assert got.dtype == np.dtype(dtype)
    assert got.shape == shape
    np.testing.assert_array_equal(got, data)
    assert got.flags.c_contiguous


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_fortran_ordered_array_keeps_its_logical_shape(client, key, dtype):
    data = np.asfortranarray(sample(dtype, (4, 3, 2)))
    assert data.flags.f_contiguous and not data.flags.c_contiguous
    client.put_tensor(key("f"), data)
    got = client.get_tensor(key("f"))
    assert got.shape == (4, 3, 2)
    for index in np.ndindex(*data.shape):
        assert got[index] == data[index], index


def test_both_transports(address, key):
    with slipstream.Client(address) as connected:
        data = np.arange(6, dtype=np.float64).reshape(2, 3)
        connected.put_tensor(key("t"), data)
        np.testing.assert_array_equal(connected.get_tensor(key("t")), data)
        assert connected.address == address


def test_non_contiguous_and_byte_swapped_arrays(client, key):
    base = np.arange(60, dtype=np.float32).reshape(6, 10)
    strided = base[::2, 1::3]
    assert not strided.flags.c_contiguous and not strided.flags.f_contiguous
    client.put_tensor(key("s"), strided)
    np.testing.assert_array_equal(client.get_tensor(key("s")), strided)

    big_endian = np.arange(5, dtype=">i4")
    client.put_tensor(key("be"), big_endian)
    got = client.get_tensor(key("be"))
    assert got.dtype == np.dtype(np.int32)
    np.testing.assert_array_equal(got, big_endian)

    client.put_tensor(key("list"), [[1.5, 2.5], [3.5, 4.5]])
    np.testing.assert_array_equal(client.get_tensor(key("list")), [[1.5, 2.5], [3.5, 4.5]])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int8, torch.int16,
                                   torch.int32, torch.int64, torch.uint8, torch.bool],
                         ids=str)
def test_torch_tensors_in(client, key, dtype):
    values = torch.arange(24).reshape(2, 3, 4) % 5
    tensor = values.to(dtype)
    client.put_tensor(key("t"), tensor)
    got = client.get_tensor(key("t"))
    np.testing.assert_array_equal(got, tensor.numpy())
    assert got.shape == (2, 3, 4)


def test_torch_tensor_layouts(client, key):
    weights = torch.randn(3, 4, requires_grad=True)  # needs detaching
    client.put_tensor(key("grad"), weights)
    np.testing.assert_array_equal(client.get_tensor(key("grad")), weights.detach().numpy())

    transposed = torch.arange(12, dtype=torch.float32).reshape(3, 4).t()  # column-major strides
    client.put_tensor(key("t"), transposed)
    got = client.get_tensor(key("t"))
    assert got.shape == (4, 3)
    np.testing.assert_array_equal(got, transposed.numpy())

    sliced = torch.arange(40, dtype=torch.int64).reshape(4, 10)[:, ::3]
    client.put_tensor(key("s"), sliced)
    np.testing.assert_array_equal(client.get_tensor(key("s")), sliced.numpy())

    # The array's answer to torch: torch.from_numpy shares the received memory.
    back = torch.from_numpy(client.get_tensor(key("s")))
    assert torch.equal(back, sliced)


def test_get_tensor_hands_over_the_received_bytes_without_copying(server, key):
    data = np.arange(1000, dtype=np.float64)
    connected = slipstream.Client(server.unix_address)
    connected.put_tensor(key("z"), data)
    got = connected.get_tensor(key("z"))
    # numpy does not own the memory: a capsule holding the client's tensor does.
    assert not got.flags.owndata
    assert got.base is not None and type(got.base).__name__ == "PyCapsule"
    assert got.flags.writeable
    address_before = got.__array_interface__["data"][0]
    # The memory outlives the client.
    connected.close()
    del connected
    gc.collect()
    assert got.__array_interface__["data"][0] == address_before
    np.testing.assert_array_equal(got, data)
    got[0] = 42.0  # writable, owned by the array alone
    assert got[0] == 42.0
    view = got[10:20]
    del got
    gc.collect()
    np.testing.assert_array_equal(view, data[10:20])


def test_scalars_and_unsupported_torch_dtypes(client, key):
    client.put_tensor(key("scalar"), np.float64(2.5))
    got = client.get_tensor(key("scalar"))
    assert got.shape == () and got[()] == 2.5
    with pytest.raises(TypeError, match="bfloat16"):
        client.put_tensor(key("bf16"), torch.zeros(2, dtype=torch.bfloat16))


def resident_bytes():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096


def test_no_leak_from_received_arrays_or_errors(client, key):
    data = np.ones(1 << 20, dtype=np.float32)  # 4 MiB
    client.put_tensor(key("big"), data)
    for _ in range(10):  # warm up allocator pools
        client.get_tensor(key("big"))
    before = resident_bytes()
    for _ in range(100):  # 400 MiB if the received buffers leaked
        array = client.get_tensor(key("big"))
        del array
        with pytest.raises(slipstream.KeyNotFoundError):
            client.get_tensor(key("missing"))
    gc.collect()
    assert resident_bytes() - before < 64 << 20


def test_put_does_not_keep_or_alter_the_callers_array(client, key):
    data = np.arange(10, dtype=np.int32)
    client.put_tensor(key("a"), data)
    data[:] = -1
    np.testing.assert_array_equal(client.get_tensor(key("a")), np.arange(10, dtype=np.int32))


def test_unpack_tensor_into_c_and_fortran_arrays(client, key):
    data = np.arange(12, dtype=np.float32).reshape(4, 3)
    client.put_tensor(key("u"), data)
    out = np.zeros((4, 3), dtype=np.float32)
    client.unpack_tensor(key("u"), out)
    np.testing.assert_array_equal(out, data)
    fortran = np.zeros((4, 3), dtype=np.float32, order="F")
    client.unpack_tensor(key("u"), fortran)
    np.testing.assert_array_equal(fortran, data)
    # The column-major memory is what a Fortran a(4, 3) holds.
    assert fortran.ravel(order="K")[2 + 4 * 1] == data[2, 1]

    with pytest.raises(slipstream.InvalidArgumentError, match="FLOAT"):
        client.unpack_tensor(key("u"), np.zeros((4, 3), dtype=np.float64))
    with pytest.raises(slipstream.InvalidArgumentError,
                       match=r"has shape \{4, 3\}, not the expected \{3, 4\}"):
        client.unpack_tensor(key("u"), np.zeros((3, 4), dtype=np.float32))
    with pytest.raises(ValueError, match="read-only"):
        readonly = np.zeros((4, 3), dtype=np.float32)
        readonly.setflags(write=False)
        client.unpack_tensor(key("u"), readonly)
    with pytest.raises(ValueError, match="contiguous"):
        client.unpack_tensor(key("u"), np.zeros((8, 3), dtype=np.float32)[::2])


def test_tensor_management(client, key):
    data = np.ones((2, 2), dtype=np.int16)
    assert not client.tensor_exists(key("a"))
    client.put_tensor(key("a"), data)
    assert client.tensor_exists(key("a"))
    client.copy_tensor(key("a"), key("b"))
    client.rename_tensor(key("b"), key("c"))
    assert not client.tensor_exists(key("b"))
    np.testing.assert_array_equal(client.get_tensor(key("c")), data)
    assert client.delete_tensor(key("c"))
    assert not client.delete_tensor(key("c"))
    assert client.poll_tensor(key("a"), 10, 3)
    assert not client.poll_tensor(key("missing"), 10, 3)
    with pytest.raises(slipstream.KeyNotFoundError):
        client.rename_tensor(key("missing"), key("x"))


def test_batched_puts_and_gets(client, key):
    arrays = {key(f"b{i}"): np.full((i + 1, 2), i, dtype=np.float32) for i in range(4)}
    arrays[key("torch")] = torch.ones(3, dtype=torch.int64)
    client.put_tensors(arrays)
    got = client.get_tensors(list(arrays))
    for (name, expected), array in zip(arrays.items(), got):
        expected = expected.numpy() if isinstance(expected, torch.Tensor) else expected
        np.testing.assert_array_equal(array, expected, err_msg=name)
    client.put_tensors([(key("pair"), np.zeros(2, dtype=np.uint8))])
    assert client.get_tensors(key("pair"))[0].dtype == np.uint8
    with pytest.raises(slipstream.KeyNotFoundError):
        client.get_tensors([key("b0"), key("nope")])


def test_raw_keys_and_bytes(client, key):
    client.put_bytes(key("raw"), b"\x00\x01binary\xff")
    assert client.get_bytes(key("raw")) == b"\x00\x01binary\xff"
    client.put_bytes(key("text"), "h\u00e9llo")
    assert client.get_bytes(key("text")) == "h\u00e9llo".encode()
    client.put_bytes(key("view"), memoryview(bytearray(b"abc")))
    assert client.get_bytes(key("view")) == b"abc"
    assert client.key_exists(key("raw"))
    assert client.poll_key(key("raw"), 10, 2)
    assert client.wait_for_keys([key("raw"), key("text")], timeout_ms=0)
    assert not client.wait_for_keys([key("raw"), key("absent")], timeout_ms=50)
    assert client.delete_bytes(key("raw"))
    with pytest.raises(slipstream.KeyNotFoundError):
        client.get_bytes(key("raw"))


def test_escape_hatch_commands(client, key):
    assert client.command(["PING"]) == "PONG"
    client.put_bytes(key("k"), b"v")
    assert client.command(["GET", key("k")]) == b"v"
    assert client.command([b"EXISTS", key("k").encode()]) == 1
    replies = client.commands([["SET", key("k2"), "x"], ["GET", key("k2")], ["NOSUCHCOMMAND"]])
    assert replies[0] == "OK" and replies[1] == b"x"
    assert isinstance(replies[2], slipstream.ServerError)
    with pytest.raises(slipstream.ServerError):
        client.command(["NOSUCHCOMMAND"])
    with pytest.raises(TypeError):
        client.command(["EXPIRE", key("k"), 10])


def test_dtype_helpers():
    assert slipstream.dtype_of(np.float32) == slipstream.DType.FLOAT32
    assert slipstream.dtype_of("bool") == slipstream.DType.BOOL
    assert slipstream.DType.INT16.numpy_dtype == np.dtype(np.int16)
    assert slipstream.DType.FLOAT64.redisai_name == "DOUBLE"
    assert slipstream.DType.UINT16.itemsize == 2
    with pytest.raises(TypeError, match="float16"):
        slipstream.dtype_of(np.float16)


def test_view_tensor_and_stats(server, key):
    # Over the Unix socket with the server's shared memory on: a view maps the stored bytes.
    with slipstream.Client(server.unix_address) as client:
        data = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
        client.put_tensor(key("v"), data)
        before = client.stats()
        view = client.view_tensor(key("v"))
        np.testing.assert_array_equal(view, data)
        assert view.dtype == np.float64 and not view.flags.writeable
        after = client.stats()
        assert after["shared_memory"] is True
        assert after["shm_views"] == before["shm_views"] + 1
        # The view keeps the bytes it saw when the key is replaced.
        client.put_tensor(key("v"), np.zeros((2, 3, 4)))
        np.testing.assert_array_equal(view, data)
        del view
        with pytest.raises(slipstream.KeyNotFoundError):
            client.view_tensor(key("missing"))
    # Over TCP there is no shared memory: the view is a private copy, counted as a socket get.
    with slipstream.Client(server.tcp_address) as client:
        view = client.view_tensor(key("v"))
        np.testing.assert_array_equal(view, np.zeros((2, 3, 4)))
        stats = client.stats()
        assert stats["shared_memory"] is False
        assert stats["shm_views"] == 0 and stats["socket_gets"] == 1


@pytest.mark.parametrize("compression", ["zstd", ("blosc", {"clevel": 5, "compressor": "zstd"}),
                                         ("bzip2", {"blockSize100k": 9})],
                         ids=["zstd", "blosc", "bzip2"])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_compressed_tensors_round_trip_exactly(client, key, dtype, compression):
    """put_tensor(compression=...): the server stores the compressed frame (smaller), and every
    read (get_tensor, unpack_tensor, a Fortran-order array, a RedisAI client's BLOB) gives the
    elements back exactly."""
    data = np.asfortranarray(sample(dtype, (40, 30)))
    client.put_tensor(key("c"), data, compression=compression)
    got = client.get_tensor(key("c"))
    assert got.dtype == np.dtype(dtype) and got.shape == data.shape
    np.testing.assert_array_equal(got, data)
    out = np.empty_like(data)
    client.unpack_tensor(key("c"), out)
    np.testing.assert_array_equal(out, data)
    frame = client.command(["AI.TENSORGET", key("c"), "META", "BLOB", "ENCODED"])
    assert frame[4] == b"frame" and len(frame[5]) < data.nbytes
    blob = client.command(["AI.TENSORGET", key("c"), "META", "BLOB"])
    assert blob[4] == b"blob" and blob[5] == np.ascontiguousarray(data).tobytes()


def test_zfp_compressed_tensors_stay_within_their_accuracy_and_bad_operators_raise(client, key):
    field = np.sin(np.linspace(0, 30, 4096)).reshape(64, 64)
    client.put_tensor(key("z"), field, compression=("zfp", {"accuracy": 1e-6}))
    error = np.max(np.abs(client.get_tensor(key("z")) - field))
    assert 0 < error <= 1e-6
    with pytest.raises(slipstream.InvalidArgumentError, match="zfp"):
        client.put_tensor(key("i"), np.arange(10, dtype=np.int32), compression=("zfp", {"rate": 8}))
    with pytest.raises(slipstream.InvalidArgumentError, match="lzma"):
        client.put_tensor(key("i"), field, compression="lzma")
    with pytest.raises(slipstream.InvalidArgumentError, match="type must be a string"):
        client.put_tensor(key("i"), field, compression=3)
    assert not client.tensor_exists(key("i"))
