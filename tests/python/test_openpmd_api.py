"""openpmd_api, openPMD-api's Python API over Slipstream's openPMD layer (bindings/python/src/
openpmd): programs written as openPMD-api's Python examples write them, a streaming writer and
reader in two processes against the session's real server (the reader joining first), the same
in two threads of one process (the GIL is released while a call waits), HDF5 files read back
through openpmd_api and checked with h5py, exact attribute types, and the errors.

This file is also the writer and reader program: `python test_openpmd_api.py write|read ADDRESS
STREAM STYLE` (STYLE: iterations or snapshots)."""

import gc
import json
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from test_stream import run_threads  # threads that must finish in time

if os.environ.get("SLIPSTREAM_OPENPMD_PYTHON") == "1":
    import openpmd_api as io  # built: its absence is a failure, not a skip
else:
    io = pytest.importorskip("openpmd_api", reason="the openpmd_api module is not built")

SHAPE = (6, 4)      # meshes/E/x, y, z
PARTICLES = 10      # particles/e/*
ITERATIONS = 4      # indices 0, 10, 20, 30
WAIT = 60.0         # seconds a writer, reader or thread may take before the test fails


def field(index, axis):
    rows, columns = np.indices(SHAPE)
    return 1000.0 * index + 100.0 * "xyz".index(axis) + 10.0 * rows + columns


def rho(index):
    return (np.arange(PARTICLES) * 0.5 + index).astype(np.float32)


def positions(index):
    return (np.arange(PARTICLES) * 0.25 - index).astype(np.float32)


def stream_options(address, **extra):
    options = {"slipstream": {"address": address, "group": "pytest"},
               "adios2": {"engine": {"parameters": {"QueueLimit": "2"}}}}
    options["slipstream"].update(extra)
    return options


# ---- The writer and the reader, as openPMD-api's examples 10_streaming_write/read.py ----------


def write_stream(address, stream, style, queue_limit=2):
    """Writes ITERATIONS iterations; each field is stored from a temporary that only the binding
    keeps alive until the flush."""
    options = stream_options(address)
    options["adios2"]["engine"]["parameters"]["QueueLimit"] = str(queue_limit)
    series = io.Series(stream, io.Access.create, json.dumps(options))
    series.author = "Slipstream tests <tests@example.org>"
    series.set_software("test_openpmd_api", "1.0")
    series.set_attribute("ranks", 1)
    iterations = series.write_iterations() if style == "iterations" else series.snapshots()
    for i in range(ITERATIONS):
        index = 10 * i
        iteration = iterations[index]
        iteration.time = i * 0.5
        iteration.dt = 0.5
        iteration.set_attribute("step_float", np.float32(i + 0.25))
        iteration.set_attribute("labels", ["a", "bc"])

        E = iteration.meshes["E"]
        E.grid_spacing = [0.1, 0.2]
        E.axis_labels = ["y", "x"]
        E.unit_dimension = {io.Unit_Dimension.M: 1, io.Unit_Dimension.L: 1,
                            io.Unit_Dimension.I: -1, io.Unit_Dimension.T: -3}
        for axis in "xyz":
            E[axis].reset_dataset(io.Dataset(np.dtype("float64"), SHAPE))
            E[axis].unit_SI = 2.5
        whole = field(index, "x")
        E["x"].store_chunk(whole[:3].copy(), [0, 0], [3, SHAPE[1]])  # two chunks
        E["x"][3:, :] = whole[3:].copy()
        E["y"][()] = np.asfortranarray(field(index, "y"))  # copied to C order by the binding
        E["z"].store_chunk(field(index, "z"))

        density = iteration.meshes["rho"][io.Mesh_Record_Component.SCALAR]
        density.reset_dataset(io.Dataset(np.float32, [PARTICLES]))
        span = density.store_chunk([0], [PARTICLES]).current_buffer()  # the span form
        span[:] = rho(index)

        electrons = iteration.particles["e"]
        electrons["id"][io.Record_Component.SCALAR].reset_dataset(
            io.Dataset(io.Datatype.LONG, [PARTICLES]))
        electrons["id"][io.Record_Component.SCALAR][()] = np.arange(PARTICLES) + index
        charge = electrons["charge"][io.Record_Component.SCALAR]
        charge.reset_dataset(io.Dataset(np.dtype("float64"), [PARTICLES]))
        charge.make_constant(-1.602e-19)
        electrons["charge"].unit_dimension = {io.Unit_Dimension.I: 1, io.Unit_Dimension.T: 1}
        electrons["position"]["x"].reset_dataset(io.Dataset(np.float32, [PARTICLES]))
        electrons["position"]["x"].store_chunk(positions(index), [0], [PARTICLES])

        patches = electrons.particle_patches
        for name, value in (("numParticles", np.int64(PARTICLES)), ("numParticlesOffset", 0)):
            component = patches[name][io.Record_Component.SCALAR]
            component.reset_dataset(io.Dataset(np.dtype("int64"), [1]))
            component.store(0, value)

        gc.collect()  # the temporaries above survive: the binding holds them until the flush
        if i % 2:
            series.flush()  # a flush within the step, then the close ends it
        iteration.close()
    series.close()


def read_stream(address, stream, style, hold_s=0.0):
    """Reads and checks every element and attribute, holding each iteration `hold_s` seconds
    before closing it; returns the mismatches."""
    failures = []

    def check(ok, what):
        if not ok:
            failures.append(what)

    series = io.Series(stream, io.Access.read_linear, stream_options(address))
    if style == "iterations":
        iterations = ((it.iteration_index, it) for it in series.read_iterations())
    else:
        iterations = series.snapshots().items()
    seen = []
    for index, iteration in iterations:
        at = f"iteration {index}: "
        i = len(seen)
        seen.append(index)
        check(index == 10 * i, at + "index")
        check(iteration.time == i * 0.5 and iteration.dt == 0.5, at + "time, dt")
        check(iteration.get_attribute("step_float") == np.float32(i + 0.25), at + "step_float")
        check(iteration.get_attribute("labels") == ["a", "bc"], at + "labels")
        check(series.author == "Slipstream tests <tests@example.org>", at + "author")
        check(series.software == "test_openpmd_api" and series.software_version == "1.0",
              at + "software")
        check(series.get_attribute("ranks") == 1, at + "ranks")

        E = iteration.meshes["E"]
        check(sorted(E) == ["x", "y", "z"],
              at + "E's components")
        check(E.grid_spacing == [0.1, 0.2] and E.axis_labels == ["y", "x"], at + "E's grid")
        check(E.unit_dimension == [1, 1, -3, -1, 0, 0, 0], at + "E's unit_dimension")
        check(E.geometry == io.Geometry.cartesian and E.data_order == "C", at + "E's geometry")
        for axis in "xyz":
            check(E[axis].unit_SI == 2.5 and E[axis].dtype == np.float64 and
                  E[axis].shape == list(SHAPE) and E[axis].ndim == 2, at + f"E/{axis} dataset")
        chunks = E["x"].available_chunks()
        check(sorted((c.offset, c.extent, c.source_ID) for c in chunks) ==
              [([0, 0], [3, 4], 0), ([3, 0], [3, 4], 0)], at + f"E/x chunks {chunks}")
        loaded = {"x": E["x"][()], "y": E["y"].load_chunk(), "z": E["z"][...]}
        corner = E["z"][1:3, -2:]
        element = E["y"][-1, 2]
        density = iteration.meshes["rho"][io.Mesh_Record_Component.SCALAR]
        check(density.dtype == np.float32, at + "rho dtype")
        densities = density.load_chunk([0], [PARTICLES])
        middle = density[3:7]
        electrons = iteration.particles["e"]
        check(sorted(electrons) == ["charge", "id", "position"], at + "records")
        ids = electrons["id"][io.Record_Component.SCALAR].load_chunk()
        charge = electrons["charge"][io.Record_Component.SCALAR]
        check(charge.constant, at + "charge is constant")
        check(electrons["charge"].unit_dimension == [0, 0, 1, 1, 0, 0, 0], at + "charge's unit")
        charges = charge.load_chunk()
        xs = electrons["position"]["x"][:]
        counts = electrons.particle_patches["numParticles"][io.Record_Component.SCALAR].load()
        offsets = electrons.particle_patches["numParticlesOffset"][
            io.Record_Component.SCALAR].load()
        time.sleep(hold_s)  # Python code that needs the GIL while the writer waits
        if i % 2:
            series.flush()  # the loads happen here, or ...
        else:
            iteration.close()  # ... here

        for axis in "xyz":
            check(np.array_equal(loaded[axis], field(index, axis)), at + f"E/{axis} values")
        check(np.array_equal(corner, field(index, "z")[1:3, 2:]), at + "E/z[1:3, -2:]")
        check(element.shape == () and element == field(index, "y")[-1, 2], at + "E/y[-1, 2]")
        check(densities.dtype == np.float32 and np.array_equal(densities, rho(index)),
              at + "rho")
        check(np.array_equal(middle, rho(index)[3:7]), at + "rho[3:7]")
        check(ids.dtype == np.int64 and np.array_equal(ids, np.arange(PARTICLES) + index),
              at + "id")
        check(charges.shape == (PARTICLES,) and (charges == -1.602e-19).all(), at + "charge")
        check(xs.dtype == np.float32 and np.array_equal(xs, positions(index)), at + "position/x")
        check(counts.tolist() == [PARTICLES] and offsets.tolist() == [0], at + "patches")
    series.close()
    check(seen == [10 * i for i in range(ITERATIONS)], f"iterations read: {seen}")
    return failures


def run_program(role, address, stream, style):
    return subprocess.Popen([sys.executable, __file__, role, address, stream, style],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def finish(process, name):
    try:
        output, _ = process.communicate(timeout=WAIT)
    except subprocess.TimeoutExpired:
        process.kill()
        output, _ = process.communicate()
        pytest.fail(f"the {name} did not finish in {WAIT} s:\n{output}")
    assert process.returncode == 0, f"the {name} failed:\n{output}"
    return output


# ---- Streams -----------------------------------------------------------------------------------


@pytest.mark.parametrize("style,transport", [("iterations", "unix"), ("snapshots", "tcp")])
def test_stream_between_two_processes_every_element(server, key, style, transport):
    address = server.unix_address if transport == "unix" else server.tcp_address
    stream = key("s") + ".sst"
    reader = run_program("read", address, stream, style)
    try:
        time.sleep(1.0)  # the reader joins first: the writer keeps its steps for it
        writer = run_program("write", address, stream, style)
        finish(writer, "writer")
        output = finish(reader, "reader")
    finally:
        if reader.poll() is None:
            reader.kill()
            reader.wait()
    assert f"{ITERATIONS} iterations checked" in output


def test_writer_and_reader_threads_of_one_process(server, key):
    """The reader waits for the first step inside read_iterations() while the writer, another
    thread of the same interpreter, writes it: only possible with the GIL released."""
    stream = key("s") + ".sst"
    failures = []
    reader_waiting = threading.Event()

    def read():
        reader_waiting.set()
        failures.extend(read_stream(server.unix_address, stream, "iterations"))

    def write():
        reader_waiting.wait()
        time.sleep(0.5)
        write_stream(server.unix_address, stream, "iterations")

    run_threads(read, write)
    assert failures == []


def test_a_writer_thread_waiting_for_a_slot_lets_the_reader_thread_run(server, key):
    """Queue limit 1, and a reader thread that holds each iteration for a while: the writer
    thread's span-form store_chunk begins the next step and waits for the slot that only the
    reader thread's close frees. That wait must not hold the GIL (it did: the process deadlocked
    under load). In a process of its own, so that a deadlock fails this test instead of
    freezing the suite."""
    output = finish(run_program("threads", server.unix_address, key("s") + ".sst", "iterations"),
                    "writer and reader threads")
    assert f"{ITERATIONS} iterations checked" in output


def test_duck_typed_communicator_and_rank_table(server, key, tmp_path):
    class Communicator:  # what the Series takes of an mpi4py communicator
        def Get_rank(self):
            return 0

        def Get_size(self):
            return 1

        def allgather(self, value):
            return [value]

    series = io.Series(str(tmp_path / "ranks.h5"), io.Access.create, Communicator(), "{}")
    series.set_rank_table("node-a")
    assert series.get_rank_table(collective=True) == {0: "node-a"}
    assert series.get_rank_table() == {0: "node-a"}
    series.close()
    with io.Series(key("s") + ".sst", io.Access.create, Communicator(),
                   options=json.dumps(stream_options(server.unix_address))) as stream:
        assert stream.backend == "SLIPSTREAM"
        assert stream.get_rank_table(collective=True) == {0: stream.get_rank_table()[0]}
    assert not stream  # closed by the with block


# ---- Files -------------------------------------------------------------------------------------


def write_file(path):
    series = io.Series(str(path), io.Access.create)
    series.author = "files"
    for index in (0, 10):
        iteration = series.iterations[index]
        iteration.time = index * 0.1
        E = iteration.meshes["E"]
        E.axis_labels = ["y", "x"]
        E.unit_dimension = {io.Unit_Dimension.M: 1}
        for axis in "xy":
            E[axis].reset_dataset(io.Dataset(np.float64, SHAPE))
            E[axis][()] = field(index, axis)
        charge = iteration.particles["e"]["charge"][io.Record_Component.SCALAR]
        charge.reset_dataset(io.Dataset(np.dtype("float32"), [PARTICLES]))
        charge.make_constant(np.float32(-2.5))
        patches = iteration.particles["e"].particle_patches["numParticles"][
            io.Record_Component.SCALAR]
        patches.reset_dataset(io.Dataset(np.dtype("uint64"), [2]))
        patches.store(0, np.uint64(4))
        patches.store(1, 6)
        iteration.close()
    series.close()


def check_file_with_openpmd_api(path):
    series = io.Series(str(path), io.Access.read_only)
    assert series.backend == "HDF5"
    assert sorted(series.iterations) == [0, 10] and len(series) == 2
    assert 10 in series.iterations and 5 not in series.iterations
    assert series.author == "files"
    for index, iteration in series.iterations.items():
        assert iteration.time == pytest.approx(index * 0.1)
        E = iteration.meshes["E"]
        assert E.unit_dimension == [0, 1, 0, 0, 0, 0, 0]
        x = E["x"][()]
        y = E["y"][2:, :-1]
        charge = iteration.particles["e"]["charge"][io.Record_Component.SCALAR]
        assert charge.constant and charge.dtype == np.float32
        charges = charge[()]
        patches = iteration.particles["e"].particle_patches
        assert patches.num_patches == 2
        counts = patches["numParticles"][io.Record_Component.SCALAR].load()
        iteration.close()
        np.testing.assert_array_equal(x, field(index, "x"))
        np.testing.assert_array_equal(y, field(index, "y")[2:, :-1])
        assert charges.dtype == np.float32 and (charges == np.float32(-2.5)).all()
        assert counts.dtype == np.uint64 and counts.tolist() == [4, 6]
    series.close()


def test_hdf5_group_based_file(tmp_path):
    h5py = pytest.importorskip("h5py")
    path = tmp_path / "data.h5"
    write_file(path)
    check_file_with_openpmd_api(path)
    with h5py.File(path, "r") as f:
        assert f.attrs["openPMD"] == b"1.1.0" and f.attrs["iterationEncoding"] == b"groupBased"
        for index in (0, 10):
            np.testing.assert_array_equal(f[f"/data/{index}/meshes/E/x"][()], field(index, "x"))
            np.testing.assert_array_equal(f[f"/data/{index}/meshes/E/y"][()], field(index, "y"))
            charge = f[f"/data/{index}/particles/e/charge"]
            assert charge.attrs["value"] == np.float32(-2.5)
            assert charge.attrs["value"].dtype == np.float32
            assert list(charge.attrs["shape"]) == [PARTICLES]
            assert list(f[f"/data/{index}/particles/e/particlePatches/numParticles"][()]) == [4, 6]


def test_hdf5_file_based_series(tmp_path):
    h5py = pytest.importorskip("h5py")
    write_file(tmp_path / "data_%T.h5")
    assert sorted(os.listdir(tmp_path)) == ["data_0.h5", "data_10.h5"]
    check_file_with_openpmd_api(tmp_path / "data_%T.h5")
    with h5py.File(tmp_path / "data_10.h5", "r") as f:
        assert f.attrs["iterationEncoding"] == b"fileBased"
        assert list(f["/data"]) == ["10"]
        np.testing.assert_array_equal(f["/data/10/meshes/E/x"][()], field(10, "x"))


def test_records_list_only_their_components(tmp_path):
    path = tmp_path / "data.h5"
    write_file(path)
    series = io.Series(str(path), io.Access.read_only)
    E = series.iterations[0].meshes["E"]
    assert sorted(E) == ["x", "y"] and not E.scalar
    series.close()


def test_hdf5_read_iterations_and_snapshots(tmp_path):
    path = tmp_path / "data.h5"
    write_file(path)
    series = io.Series(str(path), io.Access.read_linear)
    indices = [iteration.iteration_index for iteration in series.read_iterations()]
    assert indices == [0, 10]
    series.close()
    series = io.Series(str(path), io.Access.read_only)
    snapshots = series.snapshots()
    assert len(snapshots) == 2 and 10 in snapshots
    assert list(snapshots) == [0, 10]
    assert [index for index, _ in snapshots.items()] == [0, 10]
    x = snapshots[10].meshes["E"]["x"].load_chunk()
    series.flush()
    np.testing.assert_array_equal(x, field(10, "x"))
    series.close()


ATTRIBUTES = [
    # (value, Datatype the file keeps, numpy dtype h5py reads)
    (True, io.Datatype.BOOL, None),
    (7, io.Datatype.LONG, np.int64),
    (2.5, io.Datatype.DOUBLE, np.float64),
    (1 + 2j, io.Datatype.CDOUBLE, np.complex128),
    ("text", io.Datatype.STRING, None),
    (np.float32(0.1), io.Datatype.FLOAT, np.float32),
    (np.float64(0.3), io.Datatype.DOUBLE, np.float64),
    (np.int16(-3), io.Datatype.SHORT, np.int16),
    (np.int32(-2), io.Datatype.INT, np.int32),
    (np.int64(-1), io.Datatype.LONG, np.int64),
    (np.uint8(4), io.Datatype.UCHAR, np.uint8),
    (np.uint16(5), io.Datatype.USHORT, np.uint16),
    (np.uint32(6), io.Datatype.UINT, np.uint32),
    (np.uint64(2**63 + 7), io.Datatype.ULONG, np.uint64),
    (np.complex64(1 - 1j), io.Datatype.CFLOAT, np.complex64),
    ([1, 2, 3], io.Datatype.VEC_LONG, np.int64),
    ((1.5, 2.5), io.Datatype.VEC_DOUBLE, np.float64),
    (np.array([1, 2], dtype=np.float32), io.Datatype.VEC_FLOAT, np.float32),
    (np.array([1, 2], dtype=np.uint16), io.Datatype.VEC_USHORT, np.uint16),
    (["a", "bc"], io.Datatype.VEC_STRING, None),
]


def test_attribute_types_through_a_file(tmp_path):
    h5py = pytest.importorskip("h5py")
    path = tmp_path / "attributes.h5"
    series = io.Series(str(path), io.Access.create)
    for n, (value, _, _) in enumerate(ATTRIBUTES):
        assert series.set_attribute(f"a{n}", value) is False  # a new attribute
    series.set_attribute("int8", np.int8(-4))  # HDF5's one 1-byte signed type: CHAR when read
    series.set_attribute("forced", 3, io.Datatype.SHORT)
    series.set_attribute("forced_vector", [1, 2], io.Datatype.VEC_UINT)
    assert series.set_attribute("a1", 7) is True  # replaced
    series.iterations[0].set_attribute("scalar_in_iteration", np.float32(1.25))
    series.close()

    read = io.Series(str(path), io.Access.read_only)
    for n, (value, dtype, numpy_dtype) in enumerate(ATTRIBUTES):
        got = read.get_attribute(f"a{n}")
        assert read.get_attribute_dtype(f"a{n}") == dtype, f"a{n} = {value!r}"
        if isinstance(value, (list, tuple, np.ndarray)):
            assert isinstance(got, list) and got == list(value)
        else:
            assert got == value and type(got) in (bool, int, float, complex, str)
    # As openPMD-api: a CHAR is one (Latin-1) character.
    assert read.get_attribute_dtype("int8") == io.Datatype.CHAR
    assert np.uint8(ord(read.get_attribute("int8"))).view(np.int8) == -4
    assert read.get_attribute_dtype("forced") == io.Datatype.SHORT
    assert read.get_attribute("forced") == 3
    assert read.get_attribute_dtype("forced_vector") == io.Datatype.VEC_UINT
    assert read.iterations[0].get_attribute("scalar_in_iteration") == np.float32(1.25)
    assert "a0" in read.attributes and read.contains_attribute("a5")
    read.close()

    with h5py.File(path, "r") as f:
        for n, (value, _, numpy_dtype) in enumerate(ATTRIBUTES):
            if numpy_dtype is not None:
                assert np.asarray(f.attrs[f"a{n}"]).dtype == numpy_dtype, f"a{n} = {value!r}"
        assert f.attrs["a5"] == np.float32(0.1) and f.attrs["int8"].dtype == np.int8
        assert f.attrs["forced"].dtype == np.int16


# ---- Errors and API details --------------------------------------------------------------------


def test_errors(tmp_path):
    with pytest.raises(io.ErrorWrongAPIUsage, match="Unknown file format"):
        io.Series(str(tmp_path / "data.unknown"), io.Access.create)
    assert issubclass(io.ErrorWrongAPIUsage, io.Error) and issubclass(io.Error, RuntimeError)
    with pytest.raises(io.ErrorBackendConfigSchema):
        io.Series(str(tmp_path / "data.h5"), io.Access.create, "{not json")

    series = io.Series(str(tmp_path / "data.h5"), io.Access.create)
    component = series.iterations[0].meshes["E"]["x"]
    component.reset_dataset(io.Dataset(np.float64, [4, 4]))
    with pytest.raises(io.ErrorWrongAPIUsage, match="meshes/E/x") as outside:
        component.store_chunk(np.zeros((2, 2)), [3, 3], [2, 2])
    assert "outside" in str(outside.value)
    with pytest.raises(io.ErrorWrongAPIUsage, match="meshes/E/x"):
        component.store_chunk(np.zeros((4, 4), dtype=np.float32))  # FLOAT into DOUBLE
    with pytest.raises(IndexError, match="meshes/E/x"):
        component.store_chunk(np.zeros(5), [0, 0], [2, 2])  # 5 elements for 4
    with pytest.raises(IndexError, match="meshes/E/x"):
        component[0:2, :] = np.zeros((3, 4))
    with pytest.raises(IndexError, match="step"):
        component[::2, :] = np.zeros((2, 4))
    with pytest.raises(IndexError, match="too many indices"):
        component[0, 0, 0] = np.zeros(1)
    with pytest.raises(io.ErrorIllegalInOpenPMDStandard):
        series.set_attribute("a/b", 1)
    with pytest.raises(TypeError):
        series.set_attribute("objects", [object()])
    with pytest.raises(io.ErrorNoSuchAttribute):
        series.get_attribute("missing")
    component[()] = np.ones((4, 4))
    series.close()

    read = io.Series(str(tmp_path / "data.h5"), io.Access.read_only)
    with pytest.raises(KeyError):
        read.iterations[5]
    with pytest.raises(KeyError):
        read.iterations[0].meshes["B"]
    with pytest.raises(io.ErrorWrongAPIUsage):
        read.set_attribute("late", 1)
    with pytest.raises(io.ErrorWrongAPIUsage, match="meshes/E/x"):
        read.iterations[0].meshes["E"]["x"].load_chunk([0, 0], [5, 4])
    read.close()


def test_server_errors_are_runtime_errors(key):
    with pytest.raises(RuntimeError):  # slipstream's ConnectionError, with its message
        io.Series(key("s") + ".sst", io.Access.create,
                  {"slipstream": {"address": "tcp://127.0.0.1:1"}})


def test_int8_dataset_and_load_into_a_buffer(tmp_path):
    path = tmp_path / "bytes.h5"
    with io.Series(str(path), io.Access.create) as series:
        component = series.iterations[1].particles["e"]["flag"][io.Record_Component.SCALAR]
        component.reset_dataset(io.Dataset(np.int8, [5]))
        component[()] = np.array([-2, -1, 0, 1, 127], dtype=np.int8)
        series.iterations[1].set_comment("bytes")
        series.iterations[1].set_attribute("gone", 1)
        assert series.iterations[1].delete_attribute("gone")
    with io.Series(str(path), io.Access.read_only) as series:
        iteration = series.iterations[1]
        assert iteration.comment == "bytes" and not iteration.contains_attribute("gone")
        component = iteration.particles["e"]["flag"][io.Record_Component.SCALAR]
        assert component.dtype == np.int8  # HDF5's CHAR reads as int8
        whole = component[()]
        buffer = np.zeros(3, dtype=np.int8)
        component.load_chunk(buffer, [2], [3])
        with pytest.raises(TypeError):
            component.load_chunk(np.zeros(3, dtype=np.float64), [2], [3])
        series.flush()
        assert whole.tolist() == [-2, -1, 0, 1, 127] and buffer.tolist() == [0, 1, 127]


def test_dataset_enums_and_datatypes():
    assert io.__version__ == "0.16.1"
    assert "sst" in io.file_extensions and io.variants["slipstream"]
    assert io.Access_Type is io.Access and io.Access.read_random_access == io.Access.read_only
    for numpy_type, datatype in ((np.float32, io.Datatype.FLOAT), (np.float64, io.Datatype.DOUBLE),
                                 (np.longdouble, io.Datatype.LONG_DOUBLE),
                                 (np.int8, io.Datatype.SCHAR), (np.uint8, io.Datatype.UCHAR),
                                 (np.int16, io.Datatype.SHORT), (np.uint16, io.Datatype.USHORT),
                                 (np.int32, io.Datatype.INT), (np.uint32, io.Datatype.UINT),
                                 (np.int64, io.Datatype.LONG), (np.uint64, io.Datatype.ULONG),
                                 (np.bool_, io.Datatype.BOOL), (np.complex64, io.Datatype.CFLOAT),
                                 (np.complex128, io.Datatype.CDOUBLE)):
        assert io.determine_datatype(np.dtype(numpy_type)) == datatype
    assert io.determine_datatype(np.zeros(3, dtype=np.int16)) == io.Datatype.SHORT
    dataset = io.Dataset(np.dtype("float32"), [3, 4])
    assert dataset.extent == [3, 4] and dataset.dtype == np.float32 and dataset.rank == 2
    assert io.Dataset(io.Datatype.ULONGLONG, [1]).dtype == np.uint64
    assert io.Dataset([7]).extent == [7]
    assert [d.name for d in (io.Unit_Dimension.L, io.Unit_Dimension.theta)] == ["L", "theta"]
    assert io.Iteration_Encoding.file_based != io.Iteration_Encoding.group_based
    assert io.Record_Component.SCALAR == io.Mesh_Record_Component.SCALAR


def test_make_empty_and_mesh_attributes(tmp_path):
    path = tmp_path / "mesh.h5"
    with io.Series(str(path), io.Access.create) as series:
        iteration = series.write_iterations()[3]
        assert series.write_iterations().current_iteration().iteration_index == 3
        mesh = iteration.meshes["B"]
        mesh.geometry = io.Geometry.cylindrical
        mesh.geometry_parameters = "m=1"
        mesh.data_order = io.Data_Order.C
        mesh.grid_global_offset = [1.0, 2.0]
        mesh.grid_unit_SI = 0.5
        mesh.time_offset = 0.25
        mesh.comment = "a comment"
        mesh[io.Mesh_Record_Component.SCALAR].make_empty(np.float64, 2)
        assert mesh.scalar
        iteration.close()
        assert iteration.closed
    series = io.Series(str(path), io.Access.read_only)
    mesh = series.iterations[3].meshes["B"]
    assert mesh.geometry == io.Geometry.cylindrical and mesh.geometry_parameters == "m=1"
    assert mesh.grid_global_offset == [1.0, 2.0] and mesh.grid_unit_SI == 0.5
    assert mesh.time_offset == 0.25 and mesh.comment == "a comment"
    component = mesh[io.Mesh_Record_Component.SCALAR]
    assert component.shape == [0, 0] and component.empty and component.dtype == np.float64
    series.close()


if __name__ == "__main__":  # the writer and reader programs of the stream test
    role, address, stream, style = sys.argv[1:5]
    if role == "write":
        write_stream(address, stream, style)
        sys.exit(0)
    if role == "threads":  # test_a_writer_thread_waiting_for_a_slot_lets_the_reader_thread_run
        problems = []
        run_threads(lambda: problems.extend(read_stream(address, stream, style, hold_s=0.3)),
                    lambda: write_stream(address, stream, style, queue_limit=1))
    else:
        problems = read_stream(address, stream, style)
    for problem in problems[:20]:
        print("MISMATCH:", problem)
    if problems:
        sys.exit(1)
    print(f"{ITERATIONS} iterations checked")


def test_operators_from_python_options_and_datasets(server, key):
    """adios2.dataset.operators as openPMD-api's Python users write them: zfp for the series, a
    lossless operator for one Dataset; the reader gets decoded arrays (exact, within the accuracy)."""
    stream = key("ops") + ".sst"
    options = stream_options(server.unix_address)
    options["adios2"]["dataset"] = {
        "operators": [{"type": "zfp", "parameters": {"accuracy": 1e-4}}]}
    smooth = np.sin(np.linspace(0, 30, 64 * 64)).reshape(64, 64)
    ids = np.arange(4096, dtype=np.uint64) * 7919
    loaded = {}

    def write():
        series = io.Series(stream, io.Access.create, json.dumps(options))
        it = series.write_iterations()[0]
        e = it.meshes["E"]["x"]
        e.reset_dataset(io.Dataset(smooth.dtype, smooth.shape))
        e[()] = smooth
        exact = it.meshes["exact"][io.Mesh_Record_Component.SCALAR]
        exact.reset_dataset(io.Dataset(smooth.dtype, smooth.shape, json.dumps(
            {"adios2": {"dataset": {"operators": [{"type": "zstd",
                                                   "parameters": {"level": 3}}]}}})))
        exact[()] = smooth
        pid = it.particles["e"]["id"][io.Record_Component.SCALAR]
        pid.reset_dataset(io.Dataset(ids.dtype, ids.shape))
        pid[()] = ids
        it.close()
        series.close()

    def read():
        series = io.Series(stream, io.Access.read_linear,
                           json.dumps(stream_options(server.unix_address)))
        for it in series.read_iterations():
            loaded["E"] = it.meshes["E"]["x"][()]
            loaded["exact"] = it.meshes["exact"][io.Mesh_Record_Component.SCALAR][()]
            loaded["id"] = it.particles["e"]["id"][io.Record_Component.SCALAR][()]
            it.close()
        series.close()

    run_threads(read, write)
    assert 0 < np.max(np.abs(loaded["E"] - smooth)) <= 1e-4
    np.testing.assert_array_equal(loaded["exact"], smooth)
    np.testing.assert_array_equal(loaded["id"], ids)
    with pytest.raises(io.Error, match="operators"):
        bad = dict(options, adios2={"dataset": {"operators": [{"type": "lzma"}]}})
        io.Series(key("bad") + ".sst", io.Access.create, json.dumps(bad))


def test_reductions_from_python_options(server, key, tmp_path):
    """slipstream.reductions in an openpmd_api series' options: the writer runs a TorchScript
    function on its particles and the reader gets the result as a mesh, with the function named
    in its attributes, and no particle data."""
    import torch

    class Histogram(torch.nn.Module):
        def forward(self, x):
            return torch.histc(x, bins=5, min=0.0, max=5.0)

    script = str(tmp_path / "histogram.pt")
    torch.jit.save(torch.jit.script(Histogram()), script)
    stream = key("reduced") + ".sst"
    options = stream_options(server.unix_address)
    options["slipstream"]["reductions"] = [
        {"function": script, "inputs": ["particles/e/position/x"], "output": "meshes/histogram"}]
    x = np.array([0.5, 1.5, 1.7, 4.2, 4.9, 4.99])
    loaded = {}

    def write():
        series = io.Series(stream, io.Access.create, json.dumps(options))
        it = series.write_iterations()[0]
        position = it.particles["e"]["position"]["x"]
        position.reset_dataset(io.Dataset(x.dtype, x.shape))
        position[()] = x
        it.close()
        series.close()

    def read():
        series = io.Series(stream, io.Access.read_linear,
                           json.dumps(stream_options(server.unix_address)))
        for it in series.read_iterations():
            histogram = it.meshes["histogram"][io.Mesh_Record_Component.SCALAR]
            loaded["histogram"] = histogram[()]
            loaded["source"] = histogram.get_attribute("reductionSource")
            loaded["chunks"] = [c.extent for c in
                                it.particles["e"]["position"]["x"].available_chunks()]
            it.close()
        series.close()

    run_threads(read, write)
    np.testing.assert_array_equal(loaded["histogram"], [[1, 2, 0, 0, 3]])
    assert loaded["source"] == script
    assert loaded["chunks"] == []  # the particles did not travel
    with pytest.raises(io.Error, match="reductions"):
        bad = dict(options, slipstream={"address": server.unix_address,
                                        "reductions": [{"function": script}]})
        io.Series(key("bad") + ".sst", io.Access.create, json.dumps(bad))
