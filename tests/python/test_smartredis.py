"""The `smartredis` package (SmartRedis 0.6's Python API over Slipstream) against a real server.

The programs below are written as SmartRedis's documentation writes them: SSDB names the server,
SSKEYIN/SSKEYOUT the ensemble prefixes, and only smartredis names are used.
"""

import io
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from conftest import Server

import smartredis
import smartredis.dataset_utils
from smartredis import Client, ConfigOptions, Dataset, DatasetConverter, LogContext
from smartredis.error import (RedisConnectionError, RedisKeyError, RedisReplyError,
                              RedisRuntimeError, RedisTypeError)
from smartredis.util import Dtypes, init_default, typecheck


@pytest.fixture
def ssdb(server, monkeypatch):
    """SSDB as SmartSim sets it: host:port of the server."""
    value = f"127.0.0.1:{server.port}"
    monkeypatch.setenv("SSDB", value)
    return value


def test_tensors(ssdb, key):
    client = Client(cluster=False)
    for dtype in (np.float64, np.float32, np.int8, np.int16, np.int32, np.int64, np.uint8,
                  np.uint16):
        data = np.arange(12, dtype=dtype).reshape(3, 4)
        client.put_tensor(key(f"t_{np.dtype(dtype).name}"), data)
        back = client.get_tensor(key(f"t_{np.dtype(dtype).name}"))
        assert back.dtype == data.dtype and back.shape == (3, 4)
        np.testing.assert_array_equal(back, data)

    name = key("field")
    client.put_tensor(name, np.linspace(0, 1, 6).reshape(2, 3))
    assert client.tensor_exists(name) and client.key_exists(name)
    assert client.poll_tensor(name, 10, 3)
    out = np.empty((2, 3))
    client.unpack_tensor(name, out)
    np.testing.assert_array_equal(out, np.linspace(0, 1, 6).reshape(2, 3))

    client.copy_tensor(name, key("copy"))
    client.rename_tensor(key("copy"), key("moved"))
    assert not client.tensor_exists(key("copy")) and client.tensor_exists(key("moved"))
    client.delete_tensor(key("moved"))
    assert not client.tensor_exists(key("moved"))
    assert not client.poll_key(key("never"), 5, 2)

    with pytest.raises(RedisKeyError) as missing:
        client.get_tensor(key("missing"))
    assert key("missing") in str(missing.value)
    assert isinstance(missing.value, RedisReplyError)
    with pytest.raises(TypeError):
        client.put_tensor(name, [1, 2, 3])  # SmartRedis takes numpy arrays only
    with pytest.raises(TypeError):
        client.put_tensor(name, np.array([True, False]))


def test_constructor_forms(server, ssdb, key, monkeypatch):
    address = f"127.0.0.1:{server.port}"
    forms = [Client(), Client(None, "named"), Client(False), Client(cluster=False),
             Client(address=address, cluster=False), Client(False, address, "old_style"),
             Client(ConfigOptions.create_from_environment(""), "from_config"),
             Client(config_options=ConfigOptions.create_from_environment(""))]
    for i, client in enumerate(forms):
        client.put_tensor(key(f"form{i}"), np.array([i]))
        assert forms[0].get_tensor(key(f"form{i}"))[0] == i
    assert forms[1].get_context() == "named"

    # A second database through suffixed variables (SmartSim's multi-database set-up).
    monkeypatch.setenv("SSDB_second", address)
    monkeypatch.setenv("SR_DB_TYPE_second", "Standalone")
    options = ConfigOptions.create_from_environment("second")
    assert options.get_string_option("SR_DB_TYPE") == "Standalone"
    assert options.is_configured("SSDB") and not options.is_configured("SR_NOT_SET")
    with pytest.raises(RedisKeyError):
        options.get_integer_option("SR_NOT_SET")
    options.override_integer_option("SR_CONN_TIMEOUT", 2000)
    assert options.get_integer_option("SR_CONN_TIMEOUT") == 2000
    Client(options, "second").put_tensor(key("second"), np.ones(2))
    assert forms[0].tensor_exists(key("second"))

    with pytest.raises(RedisRuntimeError):
        ConfigOptions().get_string_option("SSDB")  # not made by a factory method
    monkeypatch.setenv("SR_DB_TYPE", "Sharded")
    with pytest.raises(ValueError, match="SR_DB_TYPE"):
        Client()
    monkeypatch.delenv("SR_DB_TYPE")
    monkeypatch.delenv("SSDB")
    with pytest.raises(RedisConnectionError, match="SSDB"):
        Client()
    with pytest.raises(RedisConnectionError):
        Client(address="127.0.0.1:1", cluster=False)  # nothing listens there


def test_construction_methods(server, ssdb, monkeypatch):
    """Client's two forms are the methods __address_construction and __standard_construction
    (SmartRedis's tests replace them), chosen by the first argument or the keywords; the address
    form stores its address in SSDB."""
    address_form = Client._Client__address_construction
    standard_form = Client._Client__standard_construction
    called = []

    def address_spy(self, *a, **kw):
        called.append("address")
        return address_form(self, *a, **kw)

    @staticmethod
    def standard_spy(*a, **kw):
        called.append("standard")
        return standard_form(*a, **kw)

    monkeypatch.setattr(Client, "_Client__address_construction", address_spy)
    monkeypatch.setattr(Client, "_Client__standard_construction", standard_spy)
    options = ConfigOptions.create_from_environment("")
    forms = [((False,), {}, "address"), ((False, ssdb, "name"), {}, "address"),
             ((), {"cluster": False}, "address"), ((), {"address": ssdb}, "address"),
             ((None,), {"logger_name": "name"}, "standard"), ((options, "name"), {}, "standard"),
             ((), {}, "standard"), ((), {"config_options": options}, "standard"),
             ((), {"logger_name": "name"}, "standard")]
    for args, kwargs, expected in forms:
        called.clear()
        Client(*args, **kwargs)
        assert called == [expected], (args, kwargs)

    monkeypatch.delenv("SSDB")
    assert Client(False, address=ssdb).get_context() == "Default"
    assert os.environ["SSDB"] == ssdb  # set by the address form, as SmartRedis does
    with pytest.raises(TypeError, match="argument 0"):
        Client(42)
    with pytest.raises(TypeError, match="client_id"):
        Client(False, client_id="old keyword")
    with pytest.raises(TypeError):
        Client(False, logger_name=3)


def test_datasets_and_lists(ssdb, key):
    client = Client(cluster=False)
    dataset = Dataset(key("ds"))
    dataset.add_tensor("u", np.arange(6, dtype=np.float32).reshape(2, 3))
    dataset.add_tensor("ids", np.array([1, 2, 3], dtype=np.int64))
    dataset.add_meta_scalar("time", 12.5)
    dataset.add_meta_scalar("time", 13.5)
    dataset.add_meta_scalar("step", np.int32(7))
    dataset.add_meta_string("units", "m/s")
    client.put_dataset(dataset)
    assert client.dataset_exists(key("ds")) and client.poll_dataset(key("ds"), 10, 3)

    got = client.get_dataset(key("ds"))
    assert isinstance(got, Dataset) and got.get_name() == key("ds")
    assert got.get_tensor_names() == ["u", "ids"]
    assert got.get_tensor_type("u") == np.float32
    assert got.get_tensor_dims("u") == [2, 3]
    u = got.get_tensor("u")
    u[0, 0] = 42  # SmartRedis hands out writable arrays
    np.testing.assert_array_equal(got.get_meta_scalars("time"), [12.5, 13.5])
    assert got.get_meta_scalars("step").dtype == np.int32
    assert got.get_meta_strings("units") == ["m/s"]
    assert set(got.get_metadata_field_names()) == {"time", "step", "units"}
    assert got.get_metadata_field_type("units") is str
    assert got.get_metadata_field_type("time") == np.double
    with pytest.raises(ValueError):
        dataset.add_meta_scalar("bad", np.array([1, 2]))

    client.copy_dataset(key("ds"), key("ds_copy"))
    client.rename_dataset(key("ds_copy"), key("ds_moved"))
    assert not client.dataset_exists(key("ds_copy")) and client.dataset_exists(key("ds_moved"))
    client.delete_dataset(key("ds_moved"))
    assert not client.dataset_exists(key("ds_moved"))
    with pytest.raises(RedisKeyError):
        client.get_dataset(key("ds_moved"))

    list_name = key("list")
    for i in range(4):
        member = Dataset(key(f"member{i}"))
        member.add_tensor("value", np.array([i], dtype=np.int32))
        client.put_dataset(member)
        client.append_to_list(list_name, member)
    assert client.get_list_length(list_name) == 4
    assert client.poll_list_length(list_name, 4, 10, 3)
    assert client.poll_list_length_gte(list_name, 3, 10, 3)
    assert not client.poll_list_length_lte(list_name, 2, 5, 2)
    members = client.get_datasets_from_list(list_name)
    assert [m.get_tensor("value")[0] for m in members] == [0, 1, 2, 3]
    assert [m.get_name() for m in client.get_dataset_list_range(list_name, 1, 2)] == \
        [key("member1"), key("member2")]
    client.copy_list(list_name, key("list_copy"))
    client.rename_list(key("list_copy"), key("list_moved"))
    assert client.get_list_length(key("list_moved")) == 4
    client.delete_list(key("list_moved"))
    assert client.get_list_length(key("list_moved")) == 0


def test_models_scripts_and_functions(ssdb, key, tmp_path):
    torch = pytest.importorskip("torch")
    client = Client(cluster=False)

    class Scale(torch.nn.Module):
        def forward(self, x):
            return 2 * x + 1

    buffer = io.BytesIO()
    torch.jit.save(torch.jit.script(Scale()), buffer)
    model = buffer.getvalue()
    client.set_model(key("model"), model, "TORCH", device="CPU")
    assert client.model_exists(key("model")) and client.poll_model(key("model"), 10, 3)
    assert client.get_model(key("model")) == model
    client.put_tensor(key("x"), np.arange(4, dtype=np.float32))
    client.run_model(key("model"), inputs=[key("x")], outputs=[key("y")])
    np.testing.assert_array_equal(client.get_tensor(key("y")), 2 * np.arange(4) + 1)
    path = tmp_path / "scale.pt"
    path.write_bytes(model)
    client.set_model_from_file(key("model_file"), str(path), "TORCH")
    client.run_model(key("model_file"), key("x"), key("y2"))  # single names are accepted
    np.testing.assert_array_equal(client.get_tensor(key("y2")), 2 * np.arange(4) + 1)
    client.delete_model(key("model"))
    assert not client.model_exists(key("model"))
    with pytest.raises(RedisRuntimeError):
        client.delete_model(key("model"))
    with pytest.raises(TypeError):
        client.set_model(key("m"), model, "CAFFE")
    with pytest.raises(TypeError):  # SmartRedis's error for a device not CPU or GPU
        client.set_model(key("m"), model, "TORCH", device="TPU")

    script = "def shift(x):\n    return x - 1\n"
    client.set_script(key("script"), script)
    assert client.get_script(key("script")) == script
    client.run_script(key("script"), "shift", [key("x")], [key("shifted")])
    np.testing.assert_array_equal(client.get_tensor(key("shifted")), np.arange(4) - 1)
    script_path = tmp_path / "script.py"
    script_path.write_text(script)
    client.set_script_from_file(key("script_file"), str(script_path), device="CPU")
    assert client.model_exists(key("script_file"))
    client.delete_script(key("script"))
    assert not client.model_exists(key("script"))

    def halve(x):
        return x / 2

    client.set_function(key("function"), halve)
    client.run_script(key("function"), "halve", key("x"), key("halved"))
    np.testing.assert_array_equal(client.get_tensor(key("halved")), np.arange(4) / 2)


def test_model_arguments_checked_before_sending(ssdb, key, tmp_path, capfd):
    """SmartRedis's checks of set_model's batching arguments (RedisRuntimeError before anything
    is sent; a warning on standard error for a minimum batch size without a timeout), its
    FileNotFoundError for a missing file and TypeError for a wrong type or device."""
    torch = pytest.importorskip("torch")
    client = Client(cluster=False)

    class Double(torch.nn.Module):
        def forward(self, x):
            return 2 * x

    buffer = io.BytesIO()
    torch.jit.save(torch.jit.script(Double()), buffer)
    model = buffer.getvalue()
    path = tmp_path / "double.pt"
    path.write_bytes(model)
    refused = [dict(batch_size=0, min_batch_size=0, min_batch_timeout=5),
               dict(batch_size=0, min_batch_size=2, min_batch_timeout=0),
               dict(batch_size=4, min_batch_size=0, min_batch_timeout=5)]
    for batching in refused:
        with pytest.raises(RedisRuntimeError, match="must be non-zero"):
            client.set_model(key("batched"), model, "TORCH", "CPU", **batching)
        with pytest.raises(RedisRuntimeError, match="must be non-zero"):
            client.set_model_from_file(key("batched"), str(path), "TORCH", "CPU", **batching)
        with pytest.raises(RedisRuntimeError, match="must be non-zero"):  # before any GPU
            client.set_model_multigpu(key("batched"), model, "TORCH", 0, 1, **batching)
        with pytest.raises(RedisRuntimeError, match="must be non-zero"):
            client.set_model_from_file_multigpu(key("batched"), str(path), "TORCH", 0, 1,
                                                **batching)
    assert not client.model_exists(key("batched"))
    capfd.readouterr()
    client.set_model(key("batched"), model, "TORCH", "CPU", batch_size=4, min_batch_size=2)
    assert "WARNING: min_batch_timeout was not set" in capfd.readouterr().err
    client.set_model(key("batched"), model, "TORCH", "CPU", batch_size=4, min_batch_size=2,
                     min_batch_timeout=10)
    assert "WARNING" not in capfd.readouterr().err
    assert client.model_exists(key("batched"))

    missing = str(tmp_path / "missing.pt")
    with pytest.raises(FileNotFoundError):
        client.set_model_from_file(key("m"), missing, "TORCH", "CPU")
    with pytest.raises(FileNotFoundError):
        client.set_script_from_file(key("s"), missing)
    with pytest.raises(FileNotFoundError):
        client.set_script_from_file_multigpu(key("s"), missing, 0, 1)
    # Argument types are checked before the file is looked for.
    with pytest.raises(TypeError):
        client.set_model_from_file(key("m"), missing, "TORCH", "CPU", batch_size="1")
    with pytest.raises(TypeError):
        client.set_model_from_file_multigpu(key("m"), missing, "TORCH", 0, 1, tag=3)
    with pytest.raises(TypeError):
        client.set_script(key("s"), "def f(x):\n    return x\n", device="not-a-gpu")
    client.set_script(key("s"), "def f(x):\n    return x\n", device="cpu")  # any case


def test_keys_of_another_kind_and_administration_errors(ssdb, server, key):
    """copy_tensor of a key that is not a tensor raises a RedisReplyError, as SmartRedis's;
    administration calls raise SmartRedis's RedisRuntimeError for a database that is not a
    cluster, an address that cannot be reached and a key AI.INFO does not know."""
    client = Client(cluster=False)
    client.set_script(key("script"), "def f(x):\n    return x\n")
    with pytest.raises(RedisReplyError, match="not a tensor") as refused:
        client.copy_tensor(key("script"), key("fork"))
    assert isinstance(refused.value, (RedisRuntimeError, TypeError))
    assert not client.key_exists(key("fork"))
    with pytest.raises(RedisTypeError):  # a TypeError, and a RedisReplyError as in SmartRedis
        client.get_tensor(key("script"))
    with pytest.raises(RedisKeyError):
        client.copy_tensor(key("no_tensor"), key("fork"))
    client.put_tensor(key("t"), np.arange(3))
    client.copy_tensor(key("t"), key("t_copy"))
    np.testing.assert_array_equal(client.get_tensor(key("t_copy")), np.arange(3))

    address = f"127.0.0.1:{server.port}"
    with pytest.raises(RedisRuntimeError, match="non-cluster"):
        client.get_db_cluster_info(["no_host:6379"])  # refused before resolving anything
    with pytest.raises(RedisRuntimeError, match="non-cluster"):
        Client(None).get_db_cluster_info([address])  # SR_DB_TYPE unset: the server says
    with pytest.raises(TypeError):
        client.get_db_cluster_info(address)
    with pytest.raises(RedisRuntimeError):
        client.get_ai_info(["no_host:6379"], key("script"))
    with pytest.raises(RedisRuntimeError):
        client.get_ai_info([address], key("bad_key"))
    with pytest.raises(RedisRuntimeError):
        client.get_db_node_info(["no_host:6379"])


def test_util_and_dataset_internals():
    """smartredis.util as SmartRedis programs import it, and Dataset's from_pybind / get_data /
    set_data."""
    assert Dtypes.tensor_from_numpy(np.zeros(2, np.float32)) == "FLOAT"
    assert Dtypes.tensor_from_numpy(np.zeros(2, np.uint16)) == "UINT16"
    assert Dtypes.metadata_from_numpy(np.zeros(1, np.uint64)) == "UINT64"
    assert Dtypes.from_string("DOUBLE") is np.double and Dtypes.from_string("STRING") is str
    with pytest.raises(TypeError):
        Dtypes.tensor_from_numpy(np.zeros(2, np.uint64))
    with pytest.raises(TypeError):
        Dtypes.metadata_from_numpy(np.zeros(2, np.int8))
    with pytest.raises(TypeError):
        Dtypes.from_string("COMPLEX")
    assert init_default([], None, list) == [] and init_default([], "a", (list, str)) == "a"
    with pytest.raises(TypeError):
        init_default([], 3, (list, str))
    with pytest.raises(TypeError, match="name"):
        typecheck(3, "name", str)
    with pytest.raises(TypeError):
        typecheck(True, "count", int)

    dataset = Dataset("internals")
    dataset.add_tensor("v", np.ones(2))
    copy = Dataset.from_pybind(dataset.get_data())
    assert copy.get_name() == "internals" and copy.get_tensor_names() == ["v"]
    other = Dataset("other")
    other.set_data(dataset.get_data())
    assert other.get_tensor_names() == ["v"]
    with pytest.raises(TypeError):
        Dataset.from_pybind(Dataset("wrong"))
    with pytest.raises(TypeError):
        other.set_data(Dataset("wrong"))


def describe_ocean(dataset):
    """A dataset as SmartRedis's xarray example builds one: a 2-D temperature with x and y
    coordinates, dimension names and attributes held in metadata fields."""
    dataset.add_tensor("temperature", np.arange(6, dtype=np.float64).reshape(2, 3))
    dataset.add_tensor("x", np.array([0.0, 10.0, 20.0]))
    dataset.add_tensor("y", np.array([-1.0, 1.0]))
    for field, value in (("dim_y", "y"), ("dim_x", "x"), ("units", "K"),
                         ("long_name", "sea temperature"), ("x_units", "km")):
        dataset.add_meta_string(field, value)
    DatasetConverter.add_metadata_for_xarray(dataset, ["temperature"], ["dim_y", "dim_x"],
                                             ["y", "x"], ["units", "long_name"])
    DatasetConverter.add_metadata_for_xarray(dataset, "x", "dim_x", attr_names="x_units")
    DatasetConverter.add_metadata_for_xarray(dataset, "y", "dim_y")


def test_dataset_converter_metadata(ssdb, key):
    """The description is SmartRedis's metadata layout, stored and fetched with the dataset;
    no xarray needed."""
    client = Client(cluster=False)
    dataset = Dataset(key("ocean"))
    describe_ocean(dataset)
    client.put_dataset(dataset)
    got = client.get_dataset(key("ocean"))
    assert got.get_meta_strings("_xarray_data_names") == ["temperature", "x", "y"]
    assert got.get_meta_strings("_xarray_temperature_dim_names") == ["dim_y,dim_x"]
    assert got.get_meta_strings("_xarray_temperature_coord_names") == ["y,x"]
    assert got.get_meta_strings("_xarray_temperature_attr_names") == ["units,long_name"]
    assert got.get_meta_strings("_xarray_x_coord_names") == ["null"]
    assert got.get_meta_strings("_xarray_x_attr_names") == ["x_units"]
    assert got.get_meta_strings("_xarray_y_attr_names") == ["null"]

    with pytest.raises(TypeError):
        DatasetConverter.add_metadata_for_xarray("not a dataset", "t", "d")
    with pytest.raises(TypeError):
        DatasetConverter.add_metadata_for_xarray(dataset, ["t", 3], "d")
    with pytest.raises(RedisRuntimeError, match="not a valid name"):
        DatasetConverter.add_metadata_for_xarray(dataset, "t", ["dim_a,dim_b"])
    with pytest.raises(RedisRuntimeError, match="not a valid name"):
        DatasetConverter.add_metadata_for_xarray(dataset, [""], "d")


def test_dataset_converter_to_xarray(ssdb, key):
    xr = pytest.importorskip("xarray")
    client = Client(cluster=False)
    dataset = Dataset(key("ocean"))
    describe_ocean(dataset)
    client.put_dataset(dataset)
    arrays = DatasetConverter.transform_to_xarray(client.get_dataset(key("ocean")))
    assert list(arrays) == ["temperature"]  # x and y are its coordinates
    temperature = arrays["temperature"]
    assert isinstance(temperature, xr.DataArray) and temperature.name == "temperature"
    assert temperature.dims == ("y", "x")
    np.testing.assert_array_equal(temperature.values, np.arange(6).reshape(2, 3))
    assert temperature.attrs == {"units": "K", "long_name": "sea temperature"}
    np.testing.assert_array_equal(temperature.coords["x"].values, [0.0, 10.0, 20.0])
    np.testing.assert_array_equal(temperature.coords["y"].values, [-1.0, 1.0])
    assert temperature.coords["x"].attrs == {"x_units": "km"}
    assert float(temperature.sel(x=10.0, y=1.0)) == 4.0

    # Without coordinates: each variable is its own DataArray.
    plain = Dataset(key("plain"))
    plain.add_tensor("a", np.ones((2, 2), dtype=np.float32))
    plain.add_tensor("b", np.zeros(3, dtype=np.int32))
    plain.add_meta_string("rows", "row")
    plain.add_meta_string("cols", "col")
    DatasetConverter.add_metadata_for_xarray(plain, "a", ["rows", "cols"])
    DatasetConverter.add_metadata_for_xarray(plain, "b", "cols")
    arrays = DatasetConverter.transform_to_xarray(plain)
    assert sorted(arrays) == ["a", "b"]
    assert arrays["a"].dims == ("row", "col") and arrays["a"].dtype == np.float32
    assert arrays["b"].dims == ("col",) and not arrays["b"].coords

    with pytest.raises(RedisKeyError, match="no xarray description"):
        DatasetConverter.transform_to_xarray(Dataset(key("undescribed")))
    missing_dim = Dataset(key("missing_dim"))
    missing_dim.add_tensor("v", np.ones(2))
    DatasetConverter.add_metadata_for_xarray(missing_dim, "v", "no_such_field")
    with pytest.raises(RedisKeyError, match="no_such_field"):
        DatasetConverter.transform_to_xarray(missing_dim)
    stray = Dataset(key("stray"))
    stray.add_tensor("v", np.ones(2))
    stray.add_meta_string("d", "i")
    DatasetConverter.add_metadata_for_xarray(stray, "v", "d", coord_names="undescribed")
    with pytest.raises(RedisRuntimeError, match="undescribed"):
        DatasetConverter.transform_to_xarray(stray)


def test_dataset_converter_without_xarray(ssdb, key, monkeypatch):
    """Where xarray cannot be imported, the description still works and transform_to_xarray
    says what is missing."""
    monkeypatch.setitem(sys.modules, "xarray", None)  # makes `import xarray` fail
    dataset = Dataset(key("ocean"))
    describe_ocean(dataset)
    with pytest.raises(RedisRuntimeError, match="Optional package xarray must be installed"):
        DatasetConverter.transform_to_xarray(dataset)


def test_dataset_converter_xr_attribute(ssdb, key, monkeypatch):
    """smartredis.dataset_utils.xr set to None (what SmartRedis's test patches) makes
    transform_to_xarray behave as without xarray."""
    dataset = Dataset(key("ocean"))
    describe_ocean(dataset)
    monkeypatch.setattr(smartredis.dataset_utils, "xr", None)
    with pytest.raises(RedisRuntimeError, match="Optional package xarray must be installed"):
        DatasetConverter.transform_to_xarray(dataset)
    monkeypatch.undo()
    xr = pytest.importorskip("xarray")
    assert isinstance(DatasetConverter.transform_to_xarray(dataset)["temperature"], xr.DataArray)
    assert smartredis.dataset_utils.xr is xr


def test_multigpu_calls_on_a_server_without_gpu(ssdb, key):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present: the GPU calls would succeed")
    client = Client(cluster=False)

    class Identity(torch.nn.Module):
        def forward(self, x):
            return x

    buffer = io.BytesIO()
    torch.jit.save(torch.jit.script(Identity()), buffer)
    with pytest.raises(RedisRuntimeError) as refused:
        client.set_model_multigpu(key("gpu_model"), buffer.getvalue(), "TORCH", 0, 2)
    assert "GPU" in str(refused.value)
    with pytest.raises(RedisRuntimeError):
        client.set_script_multigpu(key("gpu_script"), "def f(x):\n    return x\n", 0, 1)
    with pytest.raises(ValueError):
        client.set_model_multigpu(key("gpu_model"), buffer.getvalue(), "TORCH", 0, 0)


def test_ensemble_prefixes(ssdb, key, monkeypatch):
    plain = Client(cluster=False)
    monkeypatch.setenv("SSKEYOUT", key("member_0"))
    monkeypatch.setenv("SSKEYIN", f"{key('member_1')},{key('member_0')}")
    member = Client(cluster=False)

    member.put_tensor("field", np.array([1.5]))
    assert plain.key_exists(f"{key('member_0')}.field")  # SSKEYOUT + "." + name
    assert not member.tensor_exists("field")  # reads use the first SSKEYIN entry
    member.set_data_source(key("member_0"))
    assert member.tensor_exists("field")
    with pytest.raises(RedisRuntimeError):
        member.set_data_source("not_a_source")

    dataset = Dataset("data")
    dataset.add_meta_string("origin", "member_0")
    member.put_dataset(dataset)
    assert plain.key_exists(f"{key('member_0')}.{{data}}.meta")  # prefix.{name}.meta
    assert member.dataset_exists("data")

    member.append_to_list("runs", dataset)
    assert plain.key_exists(f"{key('member_0')}.runs")
    assert len(member.get_datasets_from_list("runs")) == 1

    member.use_tensor_ensemble_prefix(False)
    member.put_tensor(key("raw"), np.array([1]))
    assert plain.key_exists(key("raw"))
    member.use_dataset_ensemble_prefix(False)
    raw = Dataset(key("raw_ds"))
    raw.add_meta_string("origin", "member_0")
    member.put_dataset(raw)
    assert plain.key_exists(f"{{{key('raw_ds')}}}.meta")

    script = "def f(x):\n    return x\n"
    member.set_script(key("unprefixed_script"), script)  # models: not prefixed by default
    assert plain.key_exists(key("unprefixed_script"))
    member.use_model_ensemble_prefix(True)
    member.set_script("prefixed_script", script)
    assert plain.key_exists(f"{key('member_0')}.prefixed_script")
    assert member.model_exists("prefixed_script")


def test_administration(ssdb, server, key):
    client = Client(cluster=False)
    address = f"127.0.0.1:{server.port}"
    info = client.get_db_node_info([address])
    assert len(info) == 1 and info[0]
    client.config_set("lua-time-limit", "5000", address)  # SmartSim's set-up sends it
    assert "maxmemory" in client.config_get("maxmemory", address)
    client.set_script(key("info_script"), "def f(x):\n    return x\n")
    ai_info = client.get_ai_info([address], key("info_script"))
    assert ai_info[0]["key"] == key("info_script")
    with pytest.raises(RedisRuntimeError):
        client.get_db_cluster_info([address])  # not a cluster


def test_flush_db_and_save():
    own = Server()
    try:
        os.environ["SSDB"] = f"127.0.0.1:{own.port}"
        client = Client(cluster=False)
        client.put_tensor("kept_until_flush", np.ones(3))
        client.save([os.environ["SSDB"]])
        client.flush_db([os.environ["SSDB"]])
        assert not client.tensor_exists("kept_until_flush")
    finally:
        del os.environ["SSDB"]
        own.stop()


PROGRAM = textwrap.dedent("""
    import numpy as np
    from smartredis import Client, LogContext, LLInfo, LLDebug, log_data, log_warning

    context = LogContext("py_program")
    log_data(context, LLInfo, "starting")
    client = Client(cluster=False, logger_name="py_client")
    client.log_data(LLInfo, "client ready")
    client.log_data(LLDebug, "debug detail")
    client.put_tensor("from_program", np.array([3.0]))
    log_warning(context, LLInfo, "finished")
    print(client)
""")


@pytest.mark.parametrize("level", ["INFO", "DEBUG", "QUIET"])
def test_logging_in_a_program(server, tmp_path, level):
    log = tmp_path / "smartredis.log"
    env = dict(os.environ, SSDB=f"127.0.0.1:{server.port}", SR_LOG_FILE=str(log),
               SR_LOG_LEVEL=level, SSKEYOUT="py_member")
    run = subprocess.run([sys.executable, "-c", PROGRAM], env=env, capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert "write prefix (SSKEYOUT): 'py_member'" in run.stdout
    lines = log.read_text().splitlines() if log.exists() else []
    if level == "QUIET":
        assert lines == []
        return
    assert any(line.startswith("py_program@") and line.endswith(":starting") for line in lines)
    assert any(line.startswith("py_client@") and line.endswith(":client ready") for line in lines)
    assert any(line.endswith(":WARNING: finished") for line in lines)
    assert any(line.endswith(":debug detail") for line in lines) == (level == "DEBUG")
    assert any(line.startswith("py_program@") and line.endswith(":New LogContext created")
               for line in lines) == (level == "DEBUG")
