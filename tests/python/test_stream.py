"""Streams from Python: StreamWriter ranks and StreamReader groups in threads of one process,
against the session's real server. Every thread is a daemon joined with a timeout, so a deadlock
fails the test instead of hanging it."""

import gc
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
import torch

import slipstream
from conftest import Server

GLOBAL = (8, 6)  # meshes/E/x: writer r puts rows 4r..4r+3 as two chunks of 2 rows
PARTICLES = 10   # particles/e/id: writer 0 puts ids 0..5, writer 1 ids 6..9
STEPS = 3
WAIT = 20.0      # seconds any thread may take before the test fails


def field(step):
    rows, columns = np.indices(GLOBAL)
    return 1000.0 * step + 10.0 * rows + columns


def ids(step):
    return (100 * step + np.arange(PARTICLES)).astype(np.int32)


def run_threads(*targets):
    """Runs each callable in a daemon thread; raises the first error, fails on a thread still
    running after WAIT seconds."""
    errors = []

    def guarded(target):
        try:
            target()
        except BaseException as error:  # reported in the calling thread
            errors.append(error)

    threads = [threading.Thread(target=guarded, args=(t,), daemon=True) for t in targets]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + WAIT
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    assert not any(t.is_alive() for t in threads), "a stream thread is stuck"
    if errors:
        raise errors[0]


def write_steps(address, stream, rank, writers=2, steps=STEPS, **options):
    with slipstream.StreamWriter(stream, rank, writers, address=address, **options) as writer:
        for step in range(steps):
            writer.begin_step(step)
            whole = field(step)
            for first in (4 * rank, 4 * rank + 2):
                writer.put_chunk("meshes/E/x", whole[first:first + 2], GLOBAL, (first, 0))
            begin, end = (0, 6) if rank == 0 else (6, PARTICLES)
            writer.put_chunk("particles/e/id", ids(step)[begin:end], (PARTICLES,), (begin,))
            assert writer.end_step() is True  # published (False: aborted, see last_abort_reason)


def stream_info(client, stream):
    """SS.STREAM.INFO as a dict; `groups` maps each group's name to its own dict."""
    def pairs(flat):
        return {flat[i].decode() if isinstance(flat[i], bytes) else flat[i]: flat[i + 1]
                for i in range(0, len(flat), 2)}

    info = pairs(client.command(["SS.STREAM.INFO", stream]))
    groups = {}
    for group in info.pop("groups"):
        fields = pairs(group)
        groups[fields["name"].decode()] = fields
    info["groups"] = groups
    return info


@pytest.mark.parametrize("strategy", ["slicedataset", "binpacking", "roundrobin", "blocks",
                                      "hostname_binpacking_slicedataset"])
def test_two_writers_two_readers_every_element(server, key, strategy):
    stream = key("s")
    seen = {}  # (reader rank, step) -> {component: (coverage, values)}

    def read(rank):
        with slipstream.StreamReader(stream, "g", rank, 2, address=server.unix_address,
                                     strategy=strategy, next_timeout_ms=10000) as reader:
            for step in reader:
                with step:
                    components = step.components
                    assert list(components) == ["meshes/E/x", "particles/e/id"]
                    mesh = components["meshes/E/x"]
                    assert mesh.dtype == np.float64 and mesh.global_extent == GLOBAL
                    # Table order is the order the writers' steps arrived in.
                    assert sorted((c.offset, c.extent, c.source_rank) for c in mesh.chunks) == [
                        ((2 * i, 0), (2, 6), i // 2) for i in range(4)]
                    got = {}
                    for name, expected in (("meshes/E/x", field(step.number)),
                                           ("particles/e/id", ids(step.number))):
                        coverage = np.zeros(expected.shape, dtype=np.int32)
                        pieces = step.load(name)
                        assert [p.chunk for p in pieces] == components[name].mine
                        for piece in pieces:
                            box = piece.slices
                            assert box == tuple(slice(o, o + e)
                                                for o, e in zip(piece.offset, piece.extent))
                            assert piece.array.dtype == expected.dtype
                            assert piece.array.shape == piece.extent
                            np.testing.assert_array_equal(piece.array, expected[box])
                            coverage[box] += 1
                        got[name] = coverage
                    seen[(rank, step.number)] = got

    run_threads(lambda: read(0), lambda: read(1),
                lambda: write_steps(server.unix_address, stream, 0, expected_groups=1),
                lambda: write_steps(server.unix_address, stream, 1, expected_groups=1))
    for step in range(STEPS):
        for name in ("meshes/E/x", "particles/e/id"):
            total = seen[(0, step)][name] + seen[(1, step)][name]
            assert (total == 1).all(), f"step {step} {name}: every element exactly once"


def test_loaded_arrays_are_views_that_outlive_the_step_and_the_reader(server, key):
    stream = key("s")
    loaded = []

    def read():
        reader = slipstream.StreamReader(stream, "g", address=server.unix_address,
                                         next_timeout_ms=10000)
        step = reader.next_step()
        pieces = step.load("meshes/E/x")  # rows 0-1 and 2-3: two chunks of writer 0
        assert [p.offset for p in pieces] == [(0, 0), (2, 0)]
        loaded.append(pieces[0])
        step.release()
        reader.close()
        del step, reader

    run_threads(read, lambda: write_steps(server.unix_address, stream, 0, writers=1, steps=1))
    piece = loaded[0]
    array = piece.array
    # A view: numpy does not own the memory; the base is the capsule that keeps the received
    # chunk alive, and nothing can write through it.
    assert not array.flags.owndata
    assert type(array.base).__name__ == "PyCapsule"
    assert "slipstream.StreamPiece.bytes" in repr(array.base)
    assert not array.flags.writeable
    with pytest.raises(ValueError):
        array[0, 0] = 1.0
    del loaded[:], piece
    gc.collect()
    junk = [np.full(GLOBAL, -1.0) for _ in range(100)]  # would reuse freed memory
    np.testing.assert_array_equal(array, field(0)[0:2])
    del junk


def test_torch_view_shares_memory(server, key):
    stream = key("s")
    pieces = []

    def read():
        with slipstream.StreamReader(stream, "g", address=server.unix_address,
                                     next_timeout_ms=10000) as reader:
            with reader.next_step() as step:
                pieces.extend(step.load("particles/e/id"))

    run_threads(read, lambda: write_steps(server.unix_address, stream, 0, writers=1, steps=1))
    (piece,) = pieces
    tensor = piece.torch()
    assert isinstance(tensor, torch.Tensor) and tensor.dtype == torch.int32
    assert tensor.data_ptr() == piece.array.ctypes.data
    assert tensor.tolist() == ids(0)[0:6].tolist()


def test_writer_keeps_c_contiguous_arrays_without_copy_until_end_step(server, key):
    stream = key("s")
    refcounts = []
    received = []

    def write():
        with slipstream.StreamWriter(stream, address=server.unix_address) as writer:
            writer.begin_step(0)
            data = np.arange(12, dtype=np.int64).reshape(3, 4)
            before = sys.getrefcount(data)
            writer.put_chunk("meshes/rho", data, (3, 4), (0, 0))
            refcounts.append(sys.getrefcount(data) - before)  # kept: one more reference
            # A temporary with no other reference must survive until end_step too.
            writer.put_chunk("meshes/phi", np.full(5, 7.5), (5,), (0,))
            gc.collect()
            writer.end_step()
            refcounts.append(sys.getrefcount(data) - before)  # let go

    def read():
        with slipstream.StreamReader(stream, "g", address=server.unix_address,
                                     next_timeout_ms=10000) as reader:
            for step in reader:
                received.append({name: step.load(name)[0].array for name in step.components})

    run_threads(read, write)
    assert refcounts == [1, 0]
    np.testing.assert_array_equal(received[0]["meshes/rho"], np.arange(12).reshape(3, 4))
    np.testing.assert_array_equal(received[0]["meshes/phi"], np.full(5, 7.5))


def test_unsigned_32_and_64_bit_chunks_keep_their_type(server, key):
    stream = key("s")
    values = {"particles/e/cell": np.array([0, 4_000_000_000], dtype=np.uint32),
              "particles/e/patches": np.array([5, 2**64 - 1], dtype=np.uint64)}
    received = {}

    def write():
        with slipstream.StreamWriter(stream, address=server.unix_address) as writer:
            writer.begin_step(0)
            for name, array in values.items():
                writer.put_chunk(name, array, array.shape, (0,))
            writer.end_step()

    def read():
        with slipstream.StreamReader(stream, "g", address=server.unix_address,
                                     next_timeout_ms=10000) as reader:
            for step in reader:
                received.update({name: step.load(name)[0].array for name in step.components})

    run_threads(read, write)
    for name, array in values.items():
        assert received[name].dtype == array.dtype
        np.testing.assert_array_equal(received[name], array)


def test_non_contiguous_inputs_are_copied_into_c_order(server, key):
    stream = key("s")
    base = np.arange(48, dtype=np.float32).reshape(6, 8)
    inputs = {
        "meshes/strided": base[:, ::2],                         # a view with steps
        "meshes/fortran": np.asfortranarray(base[:4, :4]),      # column-major
        "meshes/transposed": torch.from_numpy(base[:3, :5].copy()).t(),  # torch, not contiguous
        "meshes/swapped": base[:2].astype(">f4"),               # big-endian
    }
    received = {}

    def write():
        with slipstream.StreamWriter(stream, address=server.unix_address) as writer:
            writer.begin_step(0)
            for name, value in inputs.items():
                writer.put_chunk(name, value, tuple(value.shape), (0,) * value.ndim)
            writer.end_step()

    def read():
        with slipstream.StreamReader(stream, "g", address=server.unix_address,
                                     next_timeout_ms=10000) as reader:
            with reader.next_step() as step:
                for name in step.components:
                    (piece,) = step.load(name)
                    received[name] = piece.array

    run_threads(read, write)
    for name, value in inputs.items():
        expected = value.numpy() if isinstance(value, torch.Tensor) else value
        assert received[name].dtype == np.float32
        np.testing.assert_array_equal(received[name], expected, err_msg=name)


def test_attributes_round_trip(server, key):
    stream = key("s")
    seen = []

    def write():
        with slipstream.StreamWriter(stream, address=server.unix_address) as writer:
            writer.set_stream_attribute("/", "software", "slipstream-test")
            writer.set_stream_attribute("/", "openPMDextension", 0)
            for step in range(2):
                writer.begin_step(10 * step)
                writer.put_chunk("meshes/E/x", np.zeros((2, 3)), (2, 3), (0, 0))
                writer.set_attribute("/", "time", 0.25 * step)
                writer.set_attribute("/", "dt", 0.25)
                writer.set_attribute("meshes/E", "axisLabels", ["y", "x"])
                writer.set_attribute("meshes/E", "gridSpacing", np.array([0.5, 0.125]))
                writer.set_attribute("meshes/E", "gridGlobalOffset", [0, 2.5])  # mixed: floats
                writer.set_attribute("meshes/E/x", "unitSI", 1.5e9)
                writer.set_attribute("meshes/E/x", "cells", np.int32(6))
                writer.set_attribute("meshes/E/x", "big", 2**62)
                writer.end_step()

    def read():
        with slipstream.StreamReader(stream, "g", address=server.unix_address,
                                     next_timeout_ms=10000) as reader:
            for step in reader:
                seen.append((step.number, step.attributes, step.stream_attributes))

    run_threads(read, write)
    assert [number for number, _, _ in seen] == [0, 10]
    number, attributes, stream_attributes = seen[1]
    assert stream_attributes == {"/": {"software": "slipstream-test", "openPMDextension": 0}}
    assert attributes == {
        "/": {"time": 0.25, "dt": 0.25},
        "meshes/E": {"axisLabels": ["y", "x"], "gridSpacing": [0.5, 0.125],
                     "gridGlobalOffset": [0.0, 2.5]},
        "meshes/E/x": {"unitSI": 1.5e9, "cells": 6, "big": 2**62},
    }
    assert isinstance(attributes["meshes/E"]["gridGlobalOffset"][0], float)
    assert isinstance(attributes["meshes/E/x"]["cells"], int)


def test_integer_array_attributes_round_trip(server, key):
    stream = key("s")
    seen = []

    def write():
        with slipstream.StreamWriter(stream, address=server.unix_address) as writer:
            writer.begin_step(0)
            writer.put_chunk("meshes/E/x", np.zeros(2), (2,), (0,))
            writer.set_attribute("meshes/E", "unitDimension", (1, 1, -3, -1, 0, 0, 0))
            writer.set_attribute("meshes/E", "shape", np.array([2, 3], dtype=np.uint16))
            writer.end_step()

    def read():
        with slipstream.StreamReader(stream, "g", address=server.unix_address,
                                     next_timeout_ms=10000) as reader:
            for step in reader:
                seen.append(step.attributes)

    run_threads(read, write)
    assert seen == [{"meshes/E": {"unitDimension": [1, 1, -3, -1, 0, 0, 0], "shape": [2, 3]}}]


def test_end_of_stream_ends_the_iteration(server, key):
    stream = key("s")
    numbers = []
    after = []

    def read():
        with slipstream.StreamReader(stream, "g", address=server.unix_address,
                                     next_timeout_ms=10000) as reader:
            numbers.extend(step.number for step in reader)
            after.append(reader.next_step())  # still the end
            after.append(reader.skipped)

    def write():
        # expected_groups=1: without it a writer that runs ahead of the reader's join may drop
        # step 3 to make room (the queue holds 2 steps), as documented.
        with slipstream.StreamWriter(stream, address=server.unix_address,
                                     expected_groups=1) as writer:
            for step in (3, 7, 8):  # increasing, not consecutive
                writer.begin_step(step)
                writer.put_chunk("particles/e/id", np.arange(4), (4,), (0,))
                writer.end_step()

    run_threads(read, write)
    assert numbers == [3, 7, 8]
    assert after == [None, 0]


def test_discard_group_misses_steps_and_the_server_counts_them(server, key, client):
    stream = key("s")
    steps = 20
    numbers = []
    joined = threading.Event()
    info = {}

    def read():
        with slipstream.StreamReader(stream, "slow", address=server.unix_address,
                                     policy="discard", next_timeout_ms=10000) as reader:
            joined.set()
            for step in reader:
                numbers.append(step.number)
                time.sleep(0.1)  # holding the step: the writer goes on without this group
            info.update(stream_info(client, stream))  # before leaving: the stream still exists
            assert reader.skipped == 0  # discarded steps are not aborted steps

    def write():
        assert joined.wait(WAIT)
        with slipstream.StreamWriter(stream, address=server.unix_address,
                                     queue_limit=2) as writer:
            for step in range(steps):
                writer.begin_step(step)  # never waits for the discarding group
                writer.put_chunk("particles/e/id", np.full(3, step), (3,), (0,))
                writer.end_step()

    run_threads(read, write)
    discarded = info["groups"]["slow"]["discarded"]
    assert 0 < len(numbers) < steps
    assert numbers == sorted(numbers) and numbers[-1] == steps - 1
    assert len(numbers) + discarded == steps


def test_aborted_step_is_skipped_by_the_iteration_and_counted(server, key):
    """Writer 1 closes with step 0 open: step 0 is aborted, the stream goes on with writer 0."""
    stream = key("s")
    numbers = []
    outcome = {}
    joined = threading.Event()
    zero_ended = threading.Event()
    one_closed = threading.Event()

    def read():
        with slipstream.StreamReader(stream, "g", address=server.unix_address,
                                     next_timeout_ms=10000) as reader:
            joined.set()
            numbers.extend(step.number for step in reader)
            outcome["skipped"] = reader.skipped
            outcome["skipped_steps"] = [(s.step, s.reason) for s in reader.skipped_steps]

    def writer_zero():
        assert joined.wait(WAIT)
        with slipstream.StreamWriter(stream, 0, 2, address=server.unix_address) as writer:
            for step in (0, 1):
                writer.begin_step(step)
                writer.put_chunk("particles/e/id", np.arange(3), (3,), (0,))
                writer.end_step()
                if step == 0:
                    zero_ended.set()
                    assert one_closed.wait(WAIT)

    def writer_one():
        assert joined.wait(WAIT)
        with slipstream.StreamWriter(stream, 1, 2, address=server.unix_address) as writer:
            writer.begin_step(0)
            assert zero_ended.wait(WAIT)
        one_closed.set()  # closed with step 0 open

    run_threads(read, writer_zero, writer_one)
    assert numbers == [1]
    assert outcome["skipped"] == 1
    ((step, reason),) = outcome["skipped_steps"]
    assert step == 0 and "writer 1" in reason


def test_on_demand_readers_each_get_whole_steps_none_twice(server, key, client):
    """step_distribution="on_demand": each step goes whole to the reader thread that asks first;
    the two readers together see every step exactly once, every element of each."""
    stream = key("s")
    steps = 10
    seen = {}  # step -> reader rank
    first = [threading.Event(), threading.Event()]
    info = {}

    def read(rank):
        with slipstream.StreamReader(stream, "g", rank, 2, address=server.unix_address,
                                     step_distribution="on_demand", strategy="roundrobin",
                                     next_timeout_ms=10000) as reader:
            for step in reader:
                with step:
                    assert step.number not in seen, f"step {step.number} handed twice"
                    seen[step.number] = rank
                    for name, expected in (("meshes/E/x", field(step.number)),
                                           ("particles/e/id", ids(step.number))):
                        component = step.components[name]
                        def boxes(chunks):
                            return sorted((c.offset, c.extent, c.source_rank) for c in chunks)
                        assert boxes(component.mine) == boxes(component.chunks)  # whole
                        coverage = np.zeros(expected.shape, dtype=np.int32)
                        for piece in step.load(name):
                            np.testing.assert_array_equal(piece.array, expected[piece.slices])
                            coverage[piece.slices] += 1
                        assert (coverage == 1).all(), f"step {step.number} {name}"
                    if not first[rank].is_set():
                        # Hold the first step until the other reader has one of its own: the
                        # queue holds 2 steps, so the next one goes to the other reader.
                        first[rank].set()
                        assert first[1 - rank].wait(WAIT)
                        info.update(stream_info(client, stream))

    run_threads(lambda: read(0), lambda: read(1),
                lambda: write_steps(server.unix_address, stream, 0, steps=steps,
                                    expected_groups=1),
                lambda: write_steps(server.unix_address, stream, 1, steps=steps,
                                    expected_groups=1))
    assert sorted(seen) == list(range(steps))
    assert set(seen.values()) == {0, 1}
    assert info["groups"]["g"]["distribution"] == b"on_demand"
    with pytest.raises(slipstream.InvalidArgumentError, match="step_distribution"):
        slipstream.StreamReader(key("bad"), "g", address=server.unix_address,
                                step_distribution="sometimes")


def test_first_step_precious_reaches_a_group_that_joins_late(server, key, client):
    stream = key("s")
    with slipstream.StreamReader(stream, "early", address=server.unix_address,
                                 next_timeout_ms=10000) as early:
        with slipstream.StreamWriter(stream, address=server.unix_address, queue_limit=1,
                                     first_step_precious=True) as writer:
            for step in range(3):
                writer.begin_step(step)  # queue_limit 1: step 0 kept takes no slot once read
                writer.put_chunk("particles/e/id", np.full(3, step), (3,), (0,))
                assert writer.end_step() is True
                with early.next_step() as got:
                    assert got.number == step
        assert [s.number for s in early] == []
    assert stream_info(client, stream)["precious_step"] == 0
    with slipstream.StreamReader(stream, "late", address=server.unix_address, start="newest",
                                 next_timeout_ms=10000) as late:
        numbers = []
        for step in late:
            with step:
                numbers.append(step.number)
                np.testing.assert_array_equal(step.load("particles/e/id")[0].array,
                                              np.zeros(3))
    assert numbers == [0]


def count_python_work(seconds):
    """Pure-Python work that only progresses while this thread holds the GIL."""
    count = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        count += 1
    return count


def test_reader_waiting_in_next_step_lets_a_writer_thread_run(server, key):
    """The GIL is released while a reader waits for a step (openPMD-api's Python readers
    deadlocked holding it): a reader thread blocks first, then a writer thread of the same
    process must be able to write every step. With queue_limit 1 the writer also waits in
    begin_step for the reader's release, so both directions are exercised."""
    stream = key("s")
    steps = 5
    numbers = []
    waiting = threading.Event()
    outcome = {}

    def read():
        with slipstream.StreamReader(stream, "g", address=server.unix_address,
                                     next_timeout_ms=10000) as reader:
            waiting.set()
            first = reader.next_step()  # blocks: no writer yet
            numbers.append(first.number)
            numbers.extend(step.number for step in reader)
        outcome["done"] = True

    reader_thread = threading.Thread(target=read, daemon=True)
    reader_thread.start()
    assert waiting.wait(WAIT)
    time.sleep(0.3)  # the reader is now inside next_step
    assert reader_thread.is_alive() and numbers == [], (
        "next_step came back before any writer ran: it held the GIL until its timeout")
    # If next_step held the GIL, this thread would not run until the reader timed out.
    assert count_python_work(0.2) > 1000

    def write():
        with slipstream.StreamWriter(stream, address=server.unix_address,
                                     queue_limit=1, begin_timeout_ms=10000) as writer:
            for step in range(steps):
                writer.begin_step(step)
                writer.put_chunk("meshes/rho", np.full(4, float(step)), (4,), (0,))
                writer.end_step()

    run_threads(write)
    reader_thread.join(WAIT)
    assert not reader_thread.is_alive(), "the reader is stuck"
    assert outcome == {"done": True}  # else the reader raised: pytest shows it as a warning
    assert numbers == list(range(steps))


# ---- Bad input ---------------------------------------------------------------------------------

@pytest.fixture
def open_writer(server, key):
    """A writer with step 0 begun (nothing is ever ended: the stream is dropped with it)."""
    with slipstream.StreamWriter(key("s"), address=server.unix_address) as writer:
        writer.begin_step(0)
        yield writer


@pytest.mark.parametrize("dtype", [np.float16, np.complex64, np.complex128])
def test_put_chunk_rejects_unsupported_dtypes(open_writer, dtype):
    with pytest.raises(TypeError, match=np.dtype(dtype).name):
        open_writer.put_chunk("meshes/E/x", np.zeros(4, dtype=dtype), (4,), (0,))


def test_put_chunk_rejects_chunks_outside_the_global_extent(open_writer):
    chunk = np.zeros((2, 4))
    with pytest.raises(slipstream.InvalidArgumentError, match="along dimension 0") as error:
        open_writer.put_chunk("meshes/E/x", chunk, (8, 4), (7, 0))
    assert isinstance(error.value, ValueError)
    with pytest.raises(slipstream.InvalidArgumentError, match="along dimension 1"):
        open_writer.put_chunk("meshes/E/x", chunk, (8, 4), (0, 1))
    with pytest.raises(slipstream.InvalidArgumentError, match="one per dimension"):
        open_writer.put_chunk("meshes/E/x", chunk, (8, 4), (0,))
    with pytest.raises(slipstream.InvalidArgumentError, match="shape is the chunk's extent"):
        open_writer.put_chunk("meshes/E/x", chunk.ravel(), (8, 4), (0, 0))
    with pytest.raises(slipstream.InvalidArgumentError, match="integers >= 0"):
        open_writer.put_chunk("meshes/E/x", chunk, (8, 4), (-1, 0))
    with pytest.raises(TypeError, match="integers"):
        open_writer.put_chunk("meshes/E/x", chunk, (8.0, 4), (0, 0))


def test_put_chunk_component_keeps_its_dtype_and_extent_within_a_step(open_writer):
    open_writer.put_chunk("meshes/E/x", np.zeros(2), (4,), (0,))
    with pytest.raises(slipstream.InvalidArgumentError, match="DOUBLE chunks of it; the array is"):
        open_writer.put_chunk("meshes/E/x", np.zeros(2, dtype=np.float32), (4,), (2,))
    with pytest.raises(slipstream.InvalidArgumentError, match="global_extent"):
        open_writer.put_chunk("meshes/E/x", np.zeros(2), (6,), (2,))
    open_writer.put_chunk("meshes/E/x", np.zeros(2), (4,), (2,))  # still fine


def test_set_attribute_rejects_values_without_an_attribute_type(open_writer):
    with pytest.raises(TypeError, match="bool"):
        open_writer.set_attribute("/", "flag", True)
    with pytest.raises(TypeError, match="dict"):
        open_writer.set_attribute("/", "meta", {"a": 1})
    with pytest.raises(TypeError, match="only str, only int"):
        open_writer.set_attribute("/", "mixed", [1, "a"])
    with pytest.raises(slipstream.InvalidArgumentError, match="empty"):
        open_writer.set_attribute("/", "none", [])
    with pytest.raises(ValueError, match="64-bit"):
        open_writer.set_attribute("/", "huge", 2**70)


def test_writer_misuse_raises(server, key):
    with pytest.raises(slipstream.InvalidArgumentError, match="out of range"):
        slipstream.StreamWriter(key("s"), 2, 2, address=server.unix_address)
    with pytest.raises(slipstream.InvalidArgumentError, match="out of range"):
        slipstream.StreamWriter(key("s"), -1, 2, address=server.unix_address)
    with pytest.raises(slipstream.InvalidArgumentError, match="queue_limit"):
        slipstream.StreamWriter(key("s"), queue_limit=0, address=server.unix_address)
    writer = slipstream.StreamWriter(key("s"), address=server.unix_address)
    with pytest.raises(slipstream.InvalidArgumentError, match="no step is open"):
        writer.put_chunk("meshes/E/x", np.zeros(2), (2,), (0,))
    writer.begin_step(0)
    with pytest.raises(slipstream.InvalidArgumentError, match="still open"):
        writer.begin_step(1)
    writer.close()
    assert writer.closed
    writer.close()  # twice: nothing
    with pytest.raises(slipstream.ConnectionError, match="closed"):
        writer.begin_step(1)


def test_reader_misuse_raises(server, key):
    address = server.unix_address
    with pytest.raises(slipstream.InvalidArgumentError, match='"block" or "discard"'):
        slipstream.StreamReader(key("s"), "g", policy="drop", address=address)
    with pytest.raises(slipstream.InvalidArgumentError, match='"oldest" or "newest"'):
        slipstream.StreamReader(key("s"), "g", start="latest", address=address)
    with pytest.raises(slipstream.InvalidArgumentError, match="roundrobin"):
        slipstream.StreamReader(key("s"), "g", strategy="nonsense", address=address)
    with pytest.raises(slipstream.InvalidArgumentError, match="out of range"):
        slipstream.StreamReader(key("s"), "g", 3, 2, address=address)

    stream = key("t")
    outcome = {}

    def read():
        with slipstream.StreamReader(stream, "g", address=address,
                                     next_timeout_ms=10000) as reader:
            step = reader.next_step()
            with pytest.raises(slipstream.InvalidArgumentError, match="no component 'meshes/B'"):
                step.load("meshes/B")
            step.release()
            step.release()  # twice: nothing
            with pytest.raises(slipstream.InvalidArgumentError, match="released"):
                step.load("particles/e/id")
            reader.close()
            with pytest.raises(slipstream.ConnectionError, match="closed"):
                reader.next_step()
            outcome["ok"] = True

    run_threads(read, lambda: write_steps(address, stream, 0, writers=1, steps=1))
    assert outcome == {"ok": True}


def test_next_step_times_out(server, key):
    with slipstream.StreamReader(key("s"), "g", address=server.unix_address,
                                 next_timeout_ms=200) as reader:
        started = time.monotonic()
        with pytest.raises(slipstream.TimeoutError, match="next_timeout_ms"):
            reader.next_step()
        assert time.monotonic() - started >= 0.15


def test_large_chunks_on_both_transports(address, key):
    """Chunks of 512 KiB: over a Unix socket the writer may pass them through shared memory, which
    readers then view in place (`shared`); over TCP they are received. Values are the same."""
    stream = key("s")
    rows = 1024
    whole = np.arange(rows * 64, dtype=np.float64).reshape(rows, 64)
    seen = []

    def write():
        with slipstream.StreamWriter(stream, address=address) as writer:
            writer.begin_step(0)
            writer.put_chunk("meshes/B/z", whole, whole.shape, (0, 0))
            writer.end_step()

    def read(rank):
        with slipstream.StreamReader(stream, "g", rank, 2, address=address, strategy="slicedataset",
                                     next_timeout_ms=10000) as reader:
            with reader.next_step() as step:
                (piece,) = step.load("meshes/B/z")
                assert piece.offset == (rank * rows // 2, 0)
                np.testing.assert_array_equal(piece.array, whole[rank * rows // 2:][:rows // 2])
                assert not piece.array.flags.owndata and not piece.array.flags.writeable
                seen.append(piece.shared)

    run_threads(write, lambda: read(0), lambda: read(1))
    assert len(seen) == 2
    if address.startswith("tcp://"):
        assert seen == [False, False]
    else:  # 512 KiB is above the writer's shared_memory_min_bytes (64 KiB by default)
        assert seen == [True, True]


def test_small_chunks_go_through_shared_memory_when_asked(server, key):
    stream = key("s")
    small = np.arange(16, dtype=np.int32)
    seen = []

    def write():
        with slipstream.StreamWriter(stream, address=server.unix_address,
                                     shared_memory_min_bytes=1, expected_groups=1) as writer:
            writer.begin_step(0)
            writer.put_chunk("meshes/n", small, small.shape, (0,))
            writer.end_step()

    def read():
        with slipstream.StreamReader(stream, "g", address=server.unix_address,
                                     next_timeout_ms=10000) as reader:
            for step in reader:
                with step:
                    (piece,) = step.load("meshes/n")
                    np.testing.assert_array_equal(piece.array, small)
                    seen.append(piece.shared)

    run_threads(write, read)
    assert seen == [True]
    with pytest.raises(slipstream.InvalidArgumentError, match="shared_memory_min_bytes"):
        slipstream.StreamWriter(stream, address=server.unix_address, shared_memory_min_bytes=-1)


@pytest.mark.parametrize("reserve", [True, False])
def test_reserve_next_step_decides_whether_end_step_holds_the_next_slot(server, key, client,
                                                                       reserve):
    """With reserve_next_step (the default) end_step also reserves the next step, which the
    server then holds; with it off only the written step is held, and the stream works alike."""
    stream = key("s")
    reader = slipstream.StreamReader(stream, "g", address=server.unix_address,
                                     next_timeout_ms=10000)
    with slipstream.StreamWriter(stream, address=server.unix_address, queue_limit=4,
                                 expected_groups=1, shared_memory_min_bytes=1,
                                 reserve_next_step=reserve) as writer:
        assert stream_info(client, stream)["queue_limit"] == 4
        for step in range(3):
            writer.begin_step(step)
            writer.put_chunk("meshes/rho", np.full(8, float(step)), (8,), (0,))
            assert writer.end_step()
            assert stream_info(client, stream)["steps_held"] == step + 1 + (1 if reserve else 0)
    with reader:
        seen = []
        for step in reader:
            with step:
                (piece,) = step.load("meshes/rho")
                seen.append((step.number, float(piece.array[0])))
    assert seen == [(0, 0.0), (1, 1.0), (2, 2.0)]
    with pytest.raises(TypeError):
        slipstream.StreamWriter(stream, address=server.unix_address, reserve_next_step="no")


EXIT_WITH_STREAMS_OPEN = """
import sys, threading
import numpy as np
import slipstream

address, name = sys.argv[1], sys.argv[2]
writer = slipstream.StreamWriter(name, 0, 1, address=address)
reader = slipstream.StreamReader(name, "trainers", 0, 1, address=address)
writer.begin_step(0)
writer.put_chunk("a", np.arange(1000.0), global_extent=(1000,), offset=(0,))
writer.end_step()
step = reader.next_step()
array = step.load("a")[0].array  # a step held and a piece viewed when the program ends
waiting = slipstream.StreamReader(name, "late", 0, 1, address=address, start="newest")

def wait_forever():
    for _ in waiting:
        pass

if sys.argv[3] == "daemon":
    threading.Thread(target=wait_forever, daemon=True).start()  # parked in NEXT at exit
print("ending", float(array[999]), flush=True)
"""


def test_a_program_exits_with_readers_and_writers_open(server, key, tmp_path):
    # The objects still alive are destroyed by the thread that runs the exit, with the GIL
    # released while they close; that thread used to park forever instead of taking the GIL back
    # (the program hung at exit), as only daemon threads must.
    script = tmp_path / "streams_open.py"
    script.write_text(EXIT_WITH_STREAMS_OPEN)
    for attempt, daemon in enumerate(["none", "daemon", "none", "daemon"]):
        done = subprocess.run([sys.executable, str(script), server.unix_address,
                               key(f"open{attempt}"), daemon],
                              capture_output=True, text=True, timeout=60, env=dict(os.environ))
        assert done.returncode == 0, done.stderr
        assert "ending 999.0" in done.stdout


EXIT_WITH_THE_SERVER_STOPPED = """
import os, signal, sys
import numpy as np
import slipstream

address, name, server_pid = sys.argv[1], sys.argv[2], int(sys.argv[3])
writer = slipstream.StreamWriter(name, 0, 1, address=address)
reader = slipstream.StreamReader(name, "g", 0, 1, address=address)
writer.begin_step(0)
writer.put_chunk("a", np.arange(10.0), global_extent=(10,), offset=(0,))
writer.end_step()
step = reader.next_step()
os.kill(server_pid, signal.SIGSTOP)  # the server stops answering; the program ends
print("ending", flush=True)
"""


def test_a_program_exits_when_the_server_stopped_answering(tmp_path, key):
    """Issue 26.A6: a reader and a writer alive at exit said goodbye (LEAVE, CLOSE) with the
    client's command timeout each (a minute), so the program hung at exit on a stopped server.
    Their destructors now wait a few seconds at most: the connection closing says the same."""
    own = Server()
    script = tmp_path / "stopped.py"
    script.write_text(EXIT_WITH_THE_SERVER_STOPPED)
    try:
        started = time.monotonic()
        done = subprocess.run([sys.executable, str(script), own.unix_address, key("stopped"),
                               str(own.process.pid)],
                              capture_output=True, text=True, timeout=100, env=dict(os.environ))
        elapsed = time.monotonic() - started
        assert done.returncode == 0, done.stderr
        assert "ending" in done.stdout
        # Two goodbyes of 5 s at most each, far below the 60 s command timeout of each before.
        assert elapsed < 50, f"the program took {elapsed:.0f} s to exit"
    finally:
        os.kill(own.process.pid, signal.SIGCONT)
        own.stop()


KILLED_INSIDE_A_RESERVED_STEP = """
import sys, time
import numpy as np
import slipstream

address, name = sys.argv[1], sys.argv[2]
writer = slipstream.StreamWriter(name, 1, 2, address=address)
writer.begin_step(0)
writer.put_chunk("meshes/rho", np.full(4, 1.0), (8,), (4,))
writer.end_step()        # reserves step 1: its begin_step sends nothing
writer.begin_step(1)
print("inside 1", flush=True)
time.sleep(600)          # killed here, before any chunk of step 1
"""


@pytest.mark.parametrize("transport", ["tcp", "unix"])
def test_a_writer_killed_inside_a_reserved_step_aborts_it(server, key, tmp_path, transport):
    """A Python writer (which reserves its next step by default) SIGKILLed after begin_step(1):
    step 1 is aborted for the reader and the survivor is told, never delivered without writer 1."""
    address = server.tcp_address if transport == "tcp" else server.unix_address
    stream = key("killed")
    script = tmp_path / "victim.py"
    script.write_text(KILLED_INSIDE_A_RESERVED_STEP)
    reader = slipstream.StreamReader(stream, "g", address=address, next_timeout_ms=20000)
    survivor = slipstream.StreamWriter(stream, 0, 2, address=address)
    victim = subprocess.Popen([sys.executable, str(script), address, stream],
                              stdout=subprocess.PIPE, text=True, env=dict(os.environ))
    try:
        for step in (0, 1):
            survivor.begin_step(step)
            survivor.put_chunk("meshes/rho", np.full(4, float(step)), (8,), (0,))
            if step == 0:
                assert survivor.end_step()
        assert victim.stdout.readline().strip() == "inside 1"
    finally:
        victim.kill()
        victim.wait(timeout=60)
    first = reader.next_step()
    assert first.number == 0
    assert sorted(p.offset[0] for p in first.load("meshes/rho")) == [0, 4]
    first.release()
    skipped = reader.next_step()
    assert isinstance(skipped, slipstream.StreamSkipped), skipped
    assert skipped.step == 1 and "writer 1" in skipped.reason
    assert not survivor.end_step()  # told: step 1 was aborted
    survivor.close()
    assert [step.number for step in reader] == []
    reader.close()



@pytest.mark.parametrize("transport", ["tcp", "unix"])
def test_operators_compress_and_readers_get_decoded_arrays(server, key, transport):
    """Every operator from Python: lossless ones exact, zfp within its accuracy element by
    element, "*" covering the components without their own; bad operators raise."""
    address = server.unix_address if transport == "unix" else server.tcp_address
    stream = key("ops" + transport)
    rng = np.random.default_rng(7)
    smooth = np.sin(np.linspace(0, 20, 64 * 64)).reshape(64, 64)
    arrays = {
        "meshes/zstd": (rng.integers(-5, 5, size=(64, 64))).astype(np.int32),
        "meshes/blosc": smooth.astype(np.float32),
        "meshes/bzip2": rng.integers(0, 255, size=(64, 64)).astype(np.uint8),
        "meshes/zfp": smooth,
        "meshes/default": smooth * 2,
    }
    operators = {
        "meshes/zstd": ("zstd", {"level": 3}),
        "meshes/blosc": ("blosc", {"clevel": 5, "doshuffle": "BLOSC_BITSHUFFLE"}),
        "meshes/bzip2": "bzip2",
        "meshes/zfp": ("zfp", {"accuracy": 1e-4}),
        "*": ("zfp", {"precision": 20}),
    }
    with pytest.raises(slipstream.InvalidArgumentError, match="meshes/x"):
        slipstream.StreamWriter(stream, address=address, operators={"meshes/x": ("lzma", {})})
    writer = slipstream.StreamWriter(stream, address=address, expected_groups=1,
                                     operators=operators, shared_memory_min_bytes=1)
    reader = slipstream.StreamReader(stream, "g", address=address, next_timeout_ms=10000)
    writer.begin_step(0)
    for name, array in arrays.items():
        writer.put_chunk(name, array, array.shape, (0, 0))
    with pytest.raises(slipstream.InvalidArgumentError, match="level"):
        writer.set_operator("meshes/zstd", "zstd", {"level": 40})
    assert writer.end_step()
    step = reader.next_step()
    for name, array in arrays.items():
        (piece,) = step.load(name)
        got = piece.array
        assert got.dtype == array.dtype and got.shape == array.shape
        if name == "meshes/zfp":
            assert 0 < np.max(np.abs(got - array)) <= 1e-4
        elif name == "meshes/default":
            assert 0 < np.max(np.abs(got - array)) <= 1e-4 * np.max(np.abs(array))
        else:
            np.testing.assert_array_equal(got, array)
    step.release()
    writer.set_operator("*", None)  # raw from here on
    writer.begin_step(1)
    writer.put_chunk("meshes/default", arrays["meshes/default"], (64, 64), (0, 0))
    assert writer.end_step()
    step = reader.next_step()
    np.testing.assert_array_equal(step.load("meshes/default")[0].array, arrays["meshes/default"])
    step.release()
    writer.close()
    reader.close()


def test_reductions_ship_a_function_of_each_writers_chunks(server, key, tmp_path):
    """reductions=: a Python callable and a TorchScript file each run on a writer's own chunks at
    end_step; the stream carries their results, one row per writer, and not the inputs; a function
    that raises fails end_step, naming the reduction, with the step still open."""
    address = server.unix_address
    stream = key("reduce")

    class Histogram(torch.nn.Module):
        def forward(self, x):
            return torch.histc(x, bins=4, min=0.0, max=4.0)

    script = str(tmp_path / "histogram.pt")
    torch.jit.save(torch.jit.script(Histogram()), script)
    fail = [True]

    def sums(x, v):
        assert not x.flags.writeable
        if fail[0]:
            raise RuntimeError("not yet")
        return np.array([x.sum(), v.sum(), len(x)])

    reductions = [
        {"function": sums, "inputs": ["particles/e/x", "particles/e/v"], "output": "meshes/sums"},
        {"function": script, "inputs": ["particles/e/x"], "output": "meshes/histogram"},
    ]
    writers = [slipstream.StreamWriter(stream, r, 2, address=address, expected_groups=1,
                                       reductions=reductions) for r in range(2)]
    reader = slipstream.StreamReader(stream, "g", address=address, next_timeout_ms=10000)
    xs = [np.array([0.5, 1.5, 1.6, 3.9]), np.array([2.5, 2.6, 2.7])]
    vs = [-x for x in xs]
    for r, writer in enumerate(writers):
        writer.begin_step(0)
        writer.put_chunk("particles/e/x", xs[r], (7,), (4 * r,))
        writer.put_chunk("particles/e/v", vs[r], (7,), (4 * r,))
    with pytest.raises(slipstream.InvalidArgumentError, match="reduction to 'meshes/sums'.*not yet"):
        writers[0].end_step()
    fail[0] = False
    for writer in writers:
        assert writer.end_step()
    step = reader.next_step()
    assert "particles/e/x" not in step.components and "particles/e/v" not in step.components
    sums_rows = np.concatenate([p.array for p in step.load("meshes/sums")])
    np.testing.assert_array_equal(
        sums_rows, [[xs[0].sum(), vs[0].sum(), 4], [xs[1].sum(), vs[1].sum(), 3]])
    histogram = np.concatenate([p.array for p in step.load("meshes/histogram")])
    np.testing.assert_array_equal(histogram, [[1, 2, 0, 1], [0, 0, 3, 0]])
    assert step.stream_attributes["meshes/histogram"]["reductionSource"] == script
    assert step.stream_attributes["meshes/sums"]["reductionInputs"] == ["particles/e/x",
                                                                        "particles/e/v"]
    step.release()
    for writer in writers:
        writer.close()
    reader.close()
    with pytest.raises(slipstream.InvalidArgumentError, match="function"):
        slipstream.StreamWriter(key("bad"), address=address,
                                reductions=[{"function": 3, "inputs": ["a"], "output": "b"}])
