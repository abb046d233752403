"""Cross-language round trip: Python reads every element of what another language wrote, and
writes the same data for the other language to check.

The contract (shared with the peer programs; the Fortran program follows the same one):

Keys, for WRITER in {"cpp", "fortran", "python"}:
  xlang.WRITER.DTYPE.rR     R in 1..4, DTYPE in float32 float64 int8 int16 int32 int64
                            (Fortran real32 real64 int8 int16 int32 int64)
  xlang.WRITER.dataset      tensors "r1".."r4" (float64), metadata step: int64 [42],
                            time: float64 [0.125], writer: string [WRITER]
Shapes by rank R:  (7,)  (5, 3)  (4, 3, 2)  (3, 2, 2, 2)
Values: with n the column-major (Fortran) flat index of an element, i.e. for a Fortran array
  a(i1, ..., iR):  n = (i1-1) + n1*((i2-1) + n2*((i3-1) + n3*(i4-1)))
  integers: n + R          reals: n + R + 0.25
A Fortran a(n1, ..., nR) is stored with shape (n1, ..., nR) and Python's element [j1, ..., jR]
equals a(j1+1, ..., jR+1), so in numpy the expected array is
  np.arange(N).reshape(shape, order="F") + R (+ 0.25).
Every array has at most 24 elements, so all values are distinct (and fit int8): a transposed or
permuted read cannot pass.

Peers are programs run as `PEER write WRITER` (store the data above under xlang.WRITER.*) and
`PEER check python` (check every element Python stored; exit 0 if all match, 1 on a mismatch,
printing the key), with the server address in SLIPSTREAM_ADDRESS:
  cpp      cross_language_peer.cpp (CTest passes SLIPSTREAM_XLANG_CPP_PEER): writes column-major
           buffers with MemoryOrder::kFortran, exactly as the Fortran module hands them to the C
           API, and checks with unpack_tensor into column-major buffers.
  fortran  the Fortran program, when SLIPSTREAM_XLANG_FORTRAN_PEER names it.
"""

import os
import pathlib
import subprocess

import numpy as np
import pytest

import slipstream

DTYPES = ["float32", "float64", "int8", "int16", "int32", "int64"]
SHAPES = {1: (7,), 2: (5, 3), 3: (4, 3, 2), 4: (3, 2, 2, 2)}
REPO = pathlib.Path(__file__).resolve().parents[2]


def expected(dtype, rank):
    shape = SHAPES[rank]
    n = np.arange(int(np.prod(shape))).reshape(shape, order="F")
    values = n + rank + (0.25 if dtype.startswith("float") else 0)
    return values.astype(dtype)


def tensor_key(writer, dtype, rank):
    return f"xlang.{writer}.{dtype}.r{rank}"


def write_python_side(client):
    for dtype in DTYPES:
        for rank in SHAPES:
            array = expected(dtype, rank)
            # Half in Fortran order: the logical shape and values must not depend on the layout.
            if rank % 2 == 0:
                array = np.asfortranarray(array)
            client.put_tensor(tensor_key("python", dtype, rank), array)
    dataset = slipstream.Dataset("xlang.python.dataset")
    for rank in SHAPES:
        dataset.add_tensor(f"r{rank}", expected("float64", rank))
    dataset.add_meta_scalar("step", np.int64(42))
    dataset.add_meta_scalar("time", 0.125)
    dataset.add_meta_string("writer", "python")
    client.put_dataset(dataset)


def check_written_by(client, writer):
    """Every element of every array and the dataset `writer` stored."""
    for dtype in DTYPES:
        for rank, shape in SHAPES.items():
            got = client.get_tensor(tensor_key(writer, dtype, rank))
            want = expected(dtype, rank)
            assert got.dtype == want.dtype, (writer, dtype, rank)
            assert got.shape == shape, (writer, dtype, rank)
            for index in np.ndindex(*shape):
                assert got[index] == want[index], (writer, dtype, rank, index)
    dataset = client.get_dataset(f"xlang.{writer}.dataset")
    for rank in SHAPES:
        np.testing.assert_array_equal(dataset.get_tensor(f"r{rank}"), expected("float64", rank))
    assert dataset.get_meta_scalars("step").tolist() == [42]
    assert dataset.get_meta_scalars("time").tolist() == [0.125]
    assert dataset.get_meta_strings("writer") == [writer]


def peers():
    """Writer name -> program. The C++ peer is always required (never silently skipped)."""
    found = {"cpp": os.environ.get("SLIPSTREAM_XLANG_CPP_PEER") or str(
        REPO / "build" / "tests" / "python" / "cross_language_peer")}
    if os.environ.get("SLIPSTREAM_XLANG_FORTRAN_PEER"):
        found["fortran"] = os.environ["SLIPSTREAM_XLANG_FORTRAN_PEER"]
    return found


PEERS = peers()


def peer_program(writer):
    path = PEERS[writer]
    if not os.access(path, os.X_OK):
        raise RuntimeError(f"cross-language peer '{writer}' not found at {path}")
    return path


def run_peer(program, server, *args):
    result = subprocess.run([program, *args], env={**os.environ, "SLIPSTREAM_ADDRESS":
                                                   server.unix_address},
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, f"{program} {' '.join(args)}:\n{result.stdout}{result.stderr}"
    return result.stdout


@pytest.mark.parametrize("writer", list(PEERS))
def test_python_reads_every_element_the_peer_wrote(server, client, writer):
    run_peer(peer_program(writer), server, "write", writer)
    check_written_by(client, writer)


@pytest.mark.parametrize("reader", list(PEERS))
def test_the_peer_reads_every_element_python_wrote(server, client, reader):
    write_python_side(client)
    run_peer(peer_program(reader), server, "check", "python")


def test_python_reads_its_own_data_back(client):
    # The contract checked from both ends in one language, so a failure above points at the peer.
    write_python_side(client)
    check_written_by(client, "python")


def test_the_checker_detects_a_transposed_array(server, client):
    """A peer check that cannot fail proves nothing: store one array transposed and expect a
    mismatch report."""
    write_python_side(client)
    wrong = np.ascontiguousarray(expected("int16", 2).T).reshape(SHAPES[2])
    client.put_tensor(tensor_key("python", "int16", 2), wrong)
    result = subprocess.run([peer_program("cpp"), "check", "python"],
                            env={**os.environ, "SLIPSTREAM_ADDRESS": server.unix_address},
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "xlang.python.int16.r2" in result.stdout
    with pytest.raises(AssertionError):
        check_written_by(client, "python")
