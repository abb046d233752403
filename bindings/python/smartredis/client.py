"""Client: SmartRedis 0.6's Python client over slipstream.Client.

Key prefixes are applied by slipstream.Client, whose rules are SmartRedis's: with SSKEYOUT=out,
put_tensor("x") writes "out.x"; reads use the first SSKEYIN prefix (set_data_source picks
another); tensors, datasets and lists are prefixed by default, models and scripts after
use_model_ensemble_prefix(True).
"""

import inspect
import os
import sys
import textwrap
import time

import numpy as np

import slipstream
from smartredis.configoptions import ConfigOptions
from smartredis import logger
from smartredis.dataset import Dataset, check_tensor
from smartredis.error import (RedisConnectionError, RedisRuntimeError, RedisTypeError,
                              exception_handler)
from smartredis.logger import LLDebug
from smartredis.srobject import SRObject
from smartredis.util import typecheck

__all__ = ["Client"]

_BACKENDS = ("TF", "TFLITE", "TORCH", "ONNX")


def _names(value, argument):
    """A name or a list of names, as SmartRedis accepts for inputs and outputs."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return list(value)
    raise TypeError(f"Argument provided for {argument}, {type(value)}, is not a str or a list of str")


def _check_device(device):
    """The device in capitals; TypeError (as SmartRedis) unless it starts with CPU or GPU."""
    typecheck(device, "device", str)
    device = device.upper()
    if not (device.startswith("CPU") or device.startswith("GPU")):
        raise TypeError("Device argument must start with either CPU or GPU")
    return device


def _check_file(file):
    """The absolute path of `file`; FileNotFoundError (as SmartRedis) if it is not a file."""
    path = os.path.abspath(file)
    if not os.path.isfile(path):
        raise FileNotFoundError(path)
    return path


def _check_batch_settings(batch_size, min_batch_size, min_batch_timeout):
    """SmartRedis's checks of set_model's batching arguments, made before anything is sent:
    RedisRuntimeError where the server would ignore them, SmartRedis's warning on standard error
    for a minimum batch size without a timeout."""
    if batch_size < 0 or min_batch_size < 0 or min_batch_timeout < 0:
        raise ValueError("batch_size, min_batch_size and min_batch_timeout must not be negative")
    if batch_size == 0 and (min_batch_size > 0 or min_batch_timeout > 0):
        raise RedisRuntimeError("batch_size must be non-zero if min_batch_size or "
                                "min_batch_timeout is used; otherwise batching will not be "
                                "performed.", "set_model")
    if min_batch_timeout > 0 and min_batch_size == 0:
        raise RedisRuntimeError("min_batch_size must be non-zero if min_batch_timeout is used; "
                                "otherwise the min_batch_timeout parameter is ignored.",
                                "set_model")
    if min_batch_size > 0 and min_batch_timeout == 0:
        sys.stderr.write("WARNING: min_batch_timeout was not set when a non-zero min_batch_size "
                         "was selected.\nSetting a small value (~10ms) for min_batch_timeout may "
                         "improve performance\n")
        sys.stderr.flush()


def _check_backend(backend):
    typecheck(backend, "backend", str)
    if backend.upper() not in _BACKENDS:
        raise TypeError(f"Backend type {backend} unsupported (expected one of {', '.join(_BACKENDS)})")
    return backend.upper()


def _check_gpus(first_gpu, num_gpus):
    typecheck(first_gpu, "first_gpu", int)
    typecheck(num_gpus, "num_gpus", int)
    if first_gpu < 0:
        raise ValueError("first_gpu must be a non-negative integer")
    if num_gpus < 1:
        raise ValueError("num_gpus must be a positive integer")


def _first_address(ssdb):
    for entry in ssdb.replace(";", ",").split(","):
        if entry.strip():
            return entry.strip()
    raise RedisConnectionError(f"SSDB holds no database address: {ssdb!r}")


def _text(value):
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value if isinstance(value, str) else str(value)


def _parse_info(text):
    """INFO's "# Section" headers and "key:value" lines as {section: {key: value}}."""
    result, section = {}, "default"
    for line in _text(text).splitlines():
        line = line.strip()
        if not line:
            continue
        if line.startswith("#"):
            section = line.lstrip("# ")
            result.setdefault(section, {})
        elif ":" in line:
            key, value = line.split(":", 1)
            result.setdefault(section, {})[key] = value
    return result


def _pairs(reply):
    """A flat [name, value, name, value ...] reply (or a map) as a dict of str."""
    if isinstance(reply, dict):
        return {_text(k): _text(v) for k, v in reply.items()}
    return {_text(reply[i]): _text(reply[i + 1]) for i in range(0, len(reply) - 1, 2)}


class _Connection:
    """What a construction method returns (SmartRedis's construction methods return the native
    client): the connection and the settings it was made with."""

    def __init__(self, native, logger_name, db_type, put_prefix, get_prefixes):
        self.native = native
        self.logger_name = logger_name
        self.db_type = db_type  # "clustered", "standalone" or None (the server's replies decide)
        self.put_prefix = put_prefix
        self.get_prefixes = get_prefixes


class Client(SRObject):
    def __init__(self, *a, **kw):
        """Connects to the database, in one of SmartRedis's two forms:

            Client(config_options: ConfigOptions = None, logger_name: str = "Default")
            Client(cluster: bool, address: str = None, logger_name: str = "Default")  # deprecated

        As in SmartRedis, the form is chosen by the first positional argument (a bool: the
        second; None or a ConfigOptions: the first; anything else is a TypeError) or, without
        one, by whether `address` or `cluster` is among the keywords, and the two forms are the
        methods __address_construction and __standard_construction. The first reads SSDB,
        SR_DB_TYPE, SSKEYIN and SSKEYOUT (suffixed as the ConfigOptions says); the second sets
        SSDB to `address` when given, as SmartRedis does. Raises RedisConnectionError if there is
        no address or the server cannot be reached.
        """
        if a:
            if isinstance(a[0], bool):
                for argument in kw:
                    if argument not in ("cluster", "address", "logger_name"):
                        raise TypeError(f"__init__() got an unexpected keyword argument "
                                        f"'{argument}'")
                connection = self.__address_construction(*a, **kw)
            elif a[0] is None or isinstance(a[0], ConfigOptions):
                connection = self.__standard_construction(*a, **kw)
            else:
                raise TypeError(f"Invalid type for argument 0: {type(a[0])}")
        elif "address" in kw or "cluster" in kw:
            connection = self.__address_construction(**kw)
        else:
            connection = self.__standard_construction(**kw)
        super().__init__(connection.logger_name)
        self._client = connection.native
        self._db_type = connection.db_type
        self._put_prefix = connection.put_prefix
        self._get_prefixes = connection.get_prefixes
        self._data_source = self._get_prefixes.split(",")[0] if self._get_prefixes else ""
        self._use_model_prefix = False
        self._use_tensor_prefix = True
        self._nodes = {}

    def __address_construction(self, cluster: bool = False, address: str = None,
                               logger_name: str = "Default") -> _Connection:
        """The deprecated form: `address` (stored in SSDB, as SmartRedis does) or SSDB, in
        cluster mode if `cluster` (which, unlike SmartRedis's, may be left out)."""
        typecheck(cluster, "cluster", bool)
        typecheck(logger_name, "logger_name", str)
        if address:
            typecheck(address, "address", str)
            os.environ["SSDB"] = address
        if "SSDB" not in os.environ:
            raise RedisConnectionError("Could not connect to database. $SSDB not set")
        config = ConfigOptions.create_from_environment("")
        config.override_string_option("SR_DB_TYPE", "Clustered" if cluster else "Standalone")
        return Client._connect(config, logger_name)

    @staticmethod
    def __standard_construction(config_options: ConfigOptions = None,
                                logger_name: str = "Default") -> _Connection:
        """The settings of `config_options` (the unsuffixed environment when None)."""
        typecheck(logger_name, "logger_name", str)
        if config_options is None:
            config_options = ConfigOptions.create_from_environment("")
        typecheck(config_options, "config_options", ConfigOptions)
        if not config_options.is_factory_object:
            raise RedisRuntimeError("config_options was not created by a ConfigOptions "
                                    "factory method (create_from_environment)")
        return Client._connect(config_options, logger_name)

    @staticmethod
    def _connect(config, logger_name):
        ssdb = config._resolve("SSDB", None)
        if not ssdb:
            raise RedisConnectionError("Could not connect to database. $SSDB not set"
                                       + (f" (SSDB_{config.suffix})" if config.suffix else ""))
        db_type = config._resolve("SR_DB_TYPE", None)
        if db_type is not None and db_type.lower() not in ("clustered", "standalone"):
            raise ValueError(f"SR_DB_TYPE must be Clustered or Standalone, got {db_type!r}")
        put_prefix = config._resolve("SSKEYOUT", "")
        get_prefixes = config._resolve("SSKEYIN", "")
        options = {"address": _first_address(ssdb), "key_prefix_out": put_prefix,
                   "key_prefixes_in": get_prefixes}
        if config.is_configured("SR_CONN_TIMEOUT"):
            options["connect_timeout_ms"] = config.get_integer_option("SR_CONN_TIMEOUT")
        if config.is_configured("SR_CMD_TIMEOUT"):
            options["command_timeout_ms"] = config.get_integer_option("SR_CMD_TIMEOUT")
        try:
            native = slipstream.Client(**options)
        except slipstream.SlipstreamError as error:
            raise RedisConnectionError(str(error)) from None
        logger.log_data(logger_name, LLDebug, f"New client created, connected to {native.address}")
        return _Connection(native, logger_name, db_type.lower() if db_type else None, put_prefix,
                           get_prefixes)

    def _node(self, address):
        """A connection to the one server at `address` ("host:port"), for administration;
        RedisRuntimeError (as SmartRedis raises for an address it cannot use) if it cannot be
        reached."""
        typecheck(address, "address", str)
        if address not in self._nodes:
            try:
                self._nodes[address] = slipstream.Client(address)
            except slipstream.SlipstreamError as error:
                raise RedisRuntimeError(f"cannot reach the database at {address!r}: {error}") \
                    from None
        return self._nodes[address]

    def _is_cluster(self):
        """Whether the database is a cluster: SR_DB_TYPE (or the deprecated constructor's
        cluster flag) says, else the server's answer to CLUSTER INFO."""
        if self._db_type is not None:
            return self._db_type == "clustered"
        try:
            self._client.command(["CLUSTER", "INFO"])
        except slipstream.ServerError:
            return False
        return True

    def __str__(self):
        return (f"Client ({self.get_context()}): connected to {self._client.address}\n"
                f"  write prefix (SSKEYOUT): '{self._put_prefix}'\n"
                f"  read prefixes (SSKEYIN): '{self._get_prefixes}', data source "
                f"'{self._data_source}'")

    # ---- Tensors ----------------------------------------------------------------------------

    @exception_handler
    def put_tensor(self, name: str, data: np.ndarray) -> None:
        typecheck(name, "name", str)
        check_tensor(data)
        self._client.put_tensor(name, data)

    @exception_handler
    def get_tensor(self, name: str) -> np.ndarray:
        typecheck(name, "name", str)
        return self._client.get_tensor(name)

    @exception_handler
    def unpack_tensor(self, name: str, data: np.ndarray) -> None:
        """Fills `data` (of the tensor's dtype and shape) with the tensor (not in SmartRedis's
        Python API, which has get_tensor only; as the C++ Client's unpack_tensor)."""
        typecheck(name, "name", str)
        typecheck(data, "data", np.ndarray)
        self._client.unpack_tensor(name, data)

    @exception_handler
    def delete_tensor(self, name: str) -> None:
        typecheck(name, "name", str)
        self._client.delete_tensor(name)

    @exception_handler
    def copy_tensor(self, src_name: str, dest_name: str) -> None:
        """Copies tensor `src_name` to `dest_name`; RedisTypeError (a RedisRuntimeError, as
        SmartRedis raises) if the source key holds something else, RedisKeyError if it does not
        exist."""
        typecheck(src_name, "src_name", str)
        typecheck(dest_name, "dest_name", str)
        source = (f"{self._data_source}.{src_name}" if self._use_tensor_prefix and self._data_source
                  else src_name)
        kind = _text(self._client.command(["TYPE", source]))
        if kind not in ("none", "AI_TENSOR"):
            raise RedisTypeError(f"copy_tensor: {source!r} holds a {kind}, not a tensor",
                                 "copy_tensor")
        self._client.copy_tensor(src_name, dest_name)

    @exception_handler
    def rename_tensor(self, old_name: str, new_name: str) -> None:
        typecheck(old_name, "old_name", str)
        typecheck(new_name, "new_name", str)
        self._client.rename_tensor(old_name, new_name)

    # ---- Datasets ---------------------------------------------------------------------------

    @exception_handler
    def put_dataset(self, dataset: Dataset) -> None:
        typecheck(dataset, "dataset", Dataset)
        self._client.put_dataset(dataset._native)

    @exception_handler
    def get_dataset(self, name: str) -> Dataset:
        typecheck(name, "name", str)
        return Dataset._wrap(self._client.get_dataset(name))

    @exception_handler
    def delete_dataset(self, name: str) -> None:
        typecheck(name, "name", str)
        self._client.delete_dataset(name)

    @exception_handler
    def copy_dataset(self, src_name: str, dest_name: str) -> None:
        typecheck(src_name, "src_name", str)
        typecheck(dest_name, "dest_name", str)
        self._client.copy_dataset(src_name, dest_name)

    @exception_handler
    def rename_dataset(self, old_name: str, new_name: str) -> None:
        typecheck(old_name, "old_name", str)
        typecheck(new_name, "new_name", str)
        self._client.rename_dataset(old_name, new_name)

    # ---- Scripts and functions --------------------------------------------------------------

    @exception_handler
    def set_function(self, name: str, function, device: str = "CPU") -> None:
        typecheck(name, "name", str)
        if not callable(function):
            raise TypeError(f"Argument provided for function, {type(function)}, is not callable")
        self._client.set_script(name, textwrap.dedent(inspect.getsource(function)),
                                device=_check_device(device))

    @exception_handler
    def set_function_multigpu(self, name: str, function, first_gpu: int, num_gpus: int) -> None:
        typecheck(name, "name", str)
        if not callable(function):
            raise TypeError(f"Argument provided for function, {type(function)}, is not callable")
        self.set_script_multigpu(name, textwrap.dedent(inspect.getsource(function)), first_gpu,
                                 num_gpus)

    @exception_handler
    def set_script(self, name: str, script: str, device: str = "CPU") -> None:
        typecheck(name, "name", str)
        typecheck(script, "script", str)
        self._client.set_script(name, script, device=_check_device(device))

    @exception_handler
    def set_script_multigpu(self, name: str, script: str, first_gpu: int, num_gpus: int) -> None:
        """Stores the script once per GPU ("<name>.GPU:<n>") and under <name> on "GPU", as
        SmartRedis does; the server refuses GPU devices when it has no CUDA device."""
        typecheck(name, "name", str)
        typecheck(script, "script", str)
        _check_gpus(first_gpu, num_gpus)
        for gpu in range(first_gpu, first_gpu + num_gpus):
            self._client.set_script(f"{name}.GPU:{gpu}", script, device=f"GPU:{gpu}")
        self._client.set_script(name, script, device="GPU")

    @exception_handler
    def set_script_from_file(self, name: str, file: str, device: str = "CPU") -> None:
        typecheck(name, "name", str)
        typecheck(file, "file", str)
        device = _check_device(device)
        self._client.set_script_from_file(name, _check_file(file), device=device)

    @exception_handler
    def set_script_from_file_multigpu(self, name: str, file: str, first_gpu: int,
                                      num_gpus: int) -> None:
        typecheck(name, "name", str)
        typecheck(file, "file", str)
        _check_gpus(first_gpu, num_gpus)
        with open(_check_file(file), encoding="utf-8") as source:
            self.set_script_multigpu(name, source.read(), first_gpu, num_gpus)

    @exception_handler
    def get_script(self, name: str) -> str:
        typecheck(name, "name", str)
        return _text(self._client.get_script(name))

    @exception_handler
    def run_script(self, name: str, fn_name: str, inputs, outputs) -> None:
        typecheck(name, "name", str)
        typecheck(fn_name, "fn_name", str)
        self._client.run_script(name, fn_name, _names(inputs, "inputs"),
                                _names(outputs, "outputs"))

    @exception_handler
    def run_script_multigpu(self, name: str, fn_name: str, inputs, outputs, offset: int,
                            first_gpu: int, num_gpus: int) -> None:
        typecheck(offset, "offset", int)
        _check_gpus(first_gpu, num_gpus)
        gpu = first_gpu + offset % num_gpus
        self.run_script(f"{name}.GPU:{gpu}", fn_name, inputs, outputs)

    @exception_handler
    def delete_script(self, name: str) -> None:
        typecheck(name, "name", str)
        if not self._client.delete_script(name):
            raise RedisRuntimeError(f"there is no script named {name!r}", "delete_script")

    @exception_handler
    def delete_script_multigpu(self, name: str, first_gpu: int, num_gpus: int) -> None:
        _check_gpus(first_gpu, num_gpus)
        for gpu in range(first_gpu, first_gpu + num_gpus):
            self.delete_script(f"{name}.GPU:{gpu}")
        self.delete_script(name)

    # ---- Models -----------------------------------------------------------------------------

    @staticmethod
    def _check_model_types(batch_size, min_batch_size, min_batch_timeout, tag):
        for value, argument in ((batch_size, "batch_size"), (min_batch_size, "min_batch_size"),
                                (min_batch_timeout, "min_batch_timeout")):
            typecheck(value, argument, int)
        typecheck(tag, "tag", str)

    @staticmethod
    def _model_options(batch_size, min_batch_size, min_batch_timeout, tag, inputs, outputs):
        Client._check_model_types(batch_size, min_batch_size, min_batch_timeout, tag)
        inputs, outputs = _names(inputs, "inputs"), _names(outputs, "outputs")
        _check_batch_settings(batch_size, min_batch_size, min_batch_timeout)
        return {"batch_size": batch_size, "min_batch_size": min_batch_size,
                "min_batch_timeout_ms": min_batch_timeout, "tag": tag,
                "inputs": inputs or None, "outputs": outputs or None}

    @exception_handler
    def set_model(self, name: str, model: bytes, backend: str, device: str = "CPU",
                  batch_size: int = 0, min_batch_size: int = 0, min_batch_timeout: int = 0,
                  tag: str = "", inputs=None, outputs=None) -> None:
        typecheck(name, "name", str)
        device, backend = _check_device(device), _check_backend(backend)
        options = self._model_options(batch_size, min_batch_size, min_batch_timeout, tag, inputs,
                                      outputs)
        self._client.set_model(name, model, backend=backend, device=device, **options)

    @exception_handler
    def set_model_multigpu(self, name: str, model: bytes, backend: str, first_gpu: int,
                           num_gpus: int, batch_size: int = 0, min_batch_size: int = 0,
                           min_batch_timeout: int = 0, tag: str = "", inputs=None,
                           outputs=None) -> None:
        """Stores the model once per GPU ("<name>.GPU:<n>") and under <name> on "GPU", as
        SmartRedis does; the server refuses GPU devices when it has no CUDA device."""
        typecheck(name, "name", str)
        backend = _check_backend(backend)
        _check_gpus(first_gpu, num_gpus)
        options = self._model_options(batch_size, min_batch_size, min_batch_timeout, tag, inputs,
                                      outputs)
        for gpu in range(first_gpu, first_gpu + num_gpus):
            self._client.set_model(f"{name}.GPU:{gpu}", model, backend=backend,
                                   device=f"GPU:{gpu}", **options)
        self._client.set_model(name, model, backend=backend, device="GPU", **options)

    @exception_handler
    def set_model_from_file(self, name: str, model_file: str, backend: str, device: str = "CPU",
                            batch_size: int = 0, min_batch_size: int = 0,
                            min_batch_timeout: int = 0, tag: str = "", inputs=None,
                            outputs=None) -> None:
        typecheck(name, "name", str)
        typecheck(model_file, "model_file", str)
        device, backend = _check_device(device), _check_backend(backend)
        self._check_model_types(batch_size, min_batch_size, min_batch_timeout, tag)
        with open(_check_file(model_file), "rb") as model:
            self.set_model(name, model.read(), backend, device, batch_size, min_batch_size,
                           min_batch_timeout, tag, inputs, outputs)

    @exception_handler
    def set_model_from_file_multigpu(self, name: str, model_file: str, backend: str,
                                     first_gpu: int, num_gpus: int, batch_size: int = 0,
                                     min_batch_size: int = 0, min_batch_timeout: int = 0,
                                     tag: str = "", inputs=None, outputs=None) -> None:
        typecheck(name, "name", str)
        typecheck(model_file, "model_file", str)
        backend = _check_backend(backend)
        typecheck(first_gpu, "first_gpu", int)
        typecheck(num_gpus, "num_gpus", int)
        self._check_model_types(batch_size, min_batch_size, min_batch_timeout, tag)
        with open(_check_file(model_file), "rb") as model:
            self.set_model_multigpu(name, model.read(), backend, first_gpu, num_gpus, batch_size,
                                    min_batch_size, min_batch_timeout, tag, inputs, outputs)

    @exception_handler
    def get_model(self, name: str) -> bytes:
        typecheck(name, "name", str)
        return bytes(self._client.get_model(name))

    @exception_handler
    def run_model(self, name: str, inputs=None, outputs=None) -> None:
        typecheck(name, "name", str)
        self._client.run_model(name, _names(inputs, "inputs"), _names(outputs, "outputs"))

    @exception_handler
    def run_model_multigpu(self, name: str, offset: int, first_gpu: int, num_gpus: int,
                           inputs=None, outputs=None) -> None:
        typecheck(offset, "offset", int)
        _check_gpus(first_gpu, num_gpus)
        gpu = first_gpu + offset % num_gpus
        self.run_model(f"{name}.GPU:{gpu}", inputs, outputs)

    @exception_handler
    def delete_model(self, name: str) -> None:
        typecheck(name, "name", str)
        if not self._client.delete_model(name):
            raise RedisRuntimeError(f"there is no model named {name!r}", "delete_model")

    @exception_handler
    def delete_model_multigpu(self, name: str, first_gpu: int, num_gpus: int) -> None:
        _check_gpus(first_gpu, num_gpus)
        for gpu in range(first_gpu, first_gpu + num_gpus):
            self.delete_model(f"{name}.GPU:{gpu}")
        self.delete_model(name)

    @exception_handler
    def set_model_chunk_size(self, chunk_size: int) -> None:
        typecheck(chunk_size, "chunk_size", int)
        self._client.set_model_chunk_size(chunk_size)

    # ---- Existence and waiting --------------------------------------------------------------

    @exception_handler
    def key_exists(self, key: str) -> bool:
        typecheck(key, "key", str)
        return self._client.key_exists(key)

    @exception_handler
    def tensor_exists(self, name: str) -> bool:
        typecheck(name, "name", str)
        return self._client.tensor_exists(name)

    @exception_handler
    def dataset_exists(self, name: str) -> bool:
        typecheck(name, "name", str)
        return self._client.dataset_exists(name)

    @exception_handler
    def model_exists(self, name: str) -> bool:
        typecheck(name, "name", str)
        return self._client.model_exists(name)

    @staticmethod
    def _check_poll(poll_frequency_ms, num_tries):
        typecheck(poll_frequency_ms, "poll_frequency_ms", int)
        typecheck(num_tries, "num_tries", int)

    @exception_handler
    def poll_key(self, key: str, poll_frequency_ms: int, num_tries: int) -> bool:
        typecheck(key, "key", str)
        self._check_poll(poll_frequency_ms, num_tries)
        return self._client.poll_key(key, poll_frequency_ms, num_tries)

    @exception_handler
    def poll_tensor(self, name: str, poll_frequency_ms: int, num_tries: int) -> bool:
        typecheck(name, "name", str)
        self._check_poll(poll_frequency_ms, num_tries)
        return self._client.poll_tensor(name, poll_frequency_ms, num_tries)

    @exception_handler
    def poll_dataset(self, name: str, poll_frequency_ms: int, num_tries: int) -> bool:
        typecheck(name, "name", str)
        self._check_poll(poll_frequency_ms, num_tries)
        return self._client.poll_dataset(name, poll_frequency_ms, num_tries)

    @exception_handler
    def poll_model(self, name: str, poll_frequency_ms: int, num_tries: int) -> bool:
        typecheck(name, "name", str)
        self._check_poll(poll_frequency_ms, num_tries)
        for attempt in range(num_tries):
            if self._client.model_exists(name):
                return True
            if attempt + 1 < num_tries:
                time.sleep(max(poll_frequency_ms, 0) / 1000.0)
        return False

    # ---- Ensemble prefixes ------------------------------------------------------------------

    def set_data_source(self, source_id: str) -> None:
        typecheck(source_id, "source_id", str)
        try:
            self._client.set_data_source(source_id)
        except slipstream.SlipstreamError as error:
            raise RedisRuntimeError(str(error), "set_data_source") from None
        self._data_source = source_id

    def use_model_ensemble_prefix(self, use_prefix: bool) -> None:
        typecheck(use_prefix, "use_prefix", bool)
        self._client.use_model_ensemble_prefix(use_prefix)
        self._use_model_prefix = use_prefix

    def use_tensor_ensemble_prefix(self, use_prefix: bool) -> None:
        typecheck(use_prefix, "use_prefix", bool)
        self._client.use_tensor_ensemble_prefix(use_prefix)
        self._use_tensor_prefix = use_prefix

    def use_dataset_ensemble_prefix(self, use_prefix: bool) -> None:
        typecheck(use_prefix, "use_prefix", bool)
        self._client.use_dataset_ensemble_prefix(use_prefix)

    def use_list_ensemble_prefix(self, use_prefix: bool) -> None:
        typecheck(use_prefix, "use_prefix", bool)
        self._client.use_list_ensemble_prefix(use_prefix)

    # ---- Server administration (addresses are "host:port" of single servers) --------------

    @staticmethod
    def _addresses(addresses):
        if not isinstance(addresses, list) or not all(isinstance(a, str) for a in addresses):
            raise TypeError(f"Argument provided for addresses, {type(addresses)}, is not a list "
                            "of str")
        return addresses

    @exception_handler
    def get_db_node_info(self, addresses: list) -> list:
        return [_parse_info(self._node(a).command(["INFO", "everything"]))
                for a in self._addresses(addresses)]

    @exception_handler
    def get_db_cluster_info(self, addresses: list) -> list:
        """CLUSTER INFO of each address, as {field: value}; RedisRuntimeError (SmartRedis's
        "Cannot run on non-cluster environment") for a database that is not a cluster."""
        addresses = self._addresses(addresses)
        if not self._is_cluster():
            raise RedisRuntimeError("Cannot run on non-cluster environment",
                                    "get_db_cluster_info")
        return [_parse_info(self._node(a).command(["CLUSTER", "INFO"])).get("default", {})
                for a in addresses]

    @exception_handler
    def get_ai_info(self, addresses: list, key: str, reset_stat: bool = False) -> list:
        typecheck(key, "key", str)
        typecheck(reset_stat, "reset_stat", bool)
        if self._use_model_prefix and self._data_source:
            key = f"{self._data_source}.{key}"
        command = ["AI.INFO", key] + (["RESETSTAT"] if reset_stat else [])
        try:
            return [_pairs(self._node(a).command(command)) for a in self._addresses(addresses)]
        except slipstream.KeyNotFoundError as error:
            # The server's refusal, which SmartRedis reports as a runtime error.
            raise RedisRuntimeError(str(error), "get_ai_info") from None

    @exception_handler
    def flush_db(self, addresses: list) -> None:
        for address in self._addresses(addresses):
            self._node(address).command(["FLUSHDB"])

    @exception_handler
    def config_get(self, expression: str, address: str) -> dict:
        typecheck(expression, "expression", str)
        return _pairs(self._node(address).command(["CONFIG", "GET", expression]))

    @exception_handler
    def config_set(self, config_param: str, value: str, address: str) -> None:
        typecheck(config_param, "config_param", str)
        typecheck(value, "value", str)
        self._node(address).command(["CONFIG", "SET", config_param, value])

    @exception_handler
    def save(self, addresses: list) -> None:
        for address in self._addresses(addresses):
            self._node(address).command(["SAVE"])

    # ---- Aggregation lists ------------------------------------------------------------------

    @exception_handler
    def append_to_list(self, list_name: str, dataset: Dataset) -> None:
        typecheck(list_name, "list_name", str)
        typecheck(dataset, "dataset", Dataset)
        self._client.append_to_list(list_name, dataset._native)

    @exception_handler
    def delete_list(self, list_name: str) -> None:
        typecheck(list_name, "list_name", str)
        self._client.delete_list(list_name)

    @exception_handler
    def copy_list(self, src_name: str, dest_name: str) -> None:
        typecheck(src_name, "src_name", str)
        typecheck(dest_name, "dest_name", str)
        self._client.copy_list(src_name, dest_name)

    @exception_handler
    def rename_list(self, src_name: str, dest_name: str) -> None:
        typecheck(src_name, "src_name", str)
        typecheck(dest_name, "dest_name", str)
        self._client.rename_list(src_name, dest_name)

    @exception_handler
    def get_list_length(self, list_name: str) -> int:
        typecheck(list_name, "list_name", str)
        return int(self._client.get_list_length(list_name))

    @exception_handler
    def poll_list_length(self, list_name: str, list_length: int, poll_frequency_ms: int,
                         num_tries: int) -> bool:
        typecheck(list_name, "list_name", str)
        typecheck(list_length, "list_length", int)
        self._check_poll(poll_frequency_ms, num_tries)
        return self._client.poll_list_length(list_name, list_length, poll_frequency_ms, num_tries)

    @exception_handler
    def poll_list_length_gte(self, list_name: str, list_length: int, poll_frequency_ms: int,
                             num_tries: int) -> bool:
        typecheck(list_name, "list_name", str)
        typecheck(list_length, "list_length", int)
        self._check_poll(poll_frequency_ms, num_tries)
        return self._client.poll_list_length_gte(list_name, list_length, poll_frequency_ms,
                                                 num_tries)

    @exception_handler
    def poll_list_length_lte(self, list_name: str, list_length: int, poll_frequency_ms: int,
                             num_tries: int) -> bool:
        typecheck(list_name, "list_name", str)
        typecheck(list_length, "list_length", int)
        self._check_poll(poll_frequency_ms, num_tries)
        return self._client.poll_list_length_lte(list_name, list_length, poll_frequency_ms,
                                                 num_tries)

    @exception_handler
    def get_datasets_from_list(self, list_name: str) -> list:
        typecheck(list_name, "list_name", str)
        return [Dataset._wrap(d) for d in self._client.get_datasets_from_list(list_name)]

    @exception_handler
    def get_dataset_list_range(self, list_name: str, start_index: int, end_index: int) -> list:
        typecheck(list_name, "list_name", str)
        typecheck(start_index, "start_index", int)
        typecheck(end_index, "end_index", int)
        return [Dataset._wrap(d)
                for d in self._client.get_dataset_list_range(list_name, start_index, end_index)]
