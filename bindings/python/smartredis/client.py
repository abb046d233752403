"""Client: SmartRedis 0.6's Python client over slipstream.Client.

Key prefixes are applied by slipstream.Client, whose rules are SmartRedis's: with SSKEYOUT=out,
put_tensor("x") writes "out.x"; reads use the first SSKEYIN prefix (set_data_source picks
another); tensors, datasets and lists are prefixed by default, models and scripts after
use_model_ensemble_prefix(True).
"""

import inspect
import textwrap
import time

import numpy as np

import slipstream
from smartredis.configoptions import ConfigOptions
from smartredis.dataset import Dataset, check_tensor, typecheck
from smartredis.error import RedisConnectionError, RedisRuntimeError, exception_handler
from smartredis.logger import LLDebug
from smartredis.srobject import SRObject

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
    typecheck(device, "device", str)
    if not (device.upper().startswith("CPU") or device.upper().startswith("GPU")):
        raise ValueError("Device argument must start with either CPU or GPU")
    return device


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


class Client(SRObject):
    def __init__(self, *a, **kw):
        """Connects to the database, in one of SmartRedis's two forms:

            Client(config_options: ConfigOptions = None, logger_name: str = "Default")
            Client(cluster: bool, address: str = None, logger_name: str = "Default")  # deprecated

        The first reads SSDB, SR_DB_TYPE, SSKEYIN and SSKEYOUT (suffixed as the ConfigOptions
        says; unsuffixed when it is None); the second takes the address (else SSDB) as given.
        Raises RedisConnectionError if there is no address or the server cannot be reached.
        """
        deprecated = "address" in kw or "cluster" in kw or (bool(a) and isinstance(a[0], bool))
        if deprecated:
            names = ("cluster", "address", "logger_name")
        else:
            names = ("config_options", "logger_name")
        if len(a) > len(names):
            raise TypeError(f"Client takes at most {len(names)} positional arguments")
        arguments = dict(zip(names, a))
        for key, value in kw.items():
            if key not in names or key in arguments:
                raise TypeError(f"Client got an unexpected or repeated argument {key!r}")
            arguments[key] = value
        logger_name = arguments.get("logger_name", "Default")
        typecheck(logger_name, "logger_name", str)
        super().__init__(logger_name)

        if deprecated:
            cluster = arguments.get("cluster", False)
            typecheck(cluster, "cluster", bool)
            config = ConfigOptions.create_from_environment("")
            if arguments.get("address") is not None:
                typecheck(arguments["address"], "address", str)
                config.override_string_option("SSDB", arguments["address"])
            config.override_string_option("SR_DB_TYPE", "Clustered" if cluster else "Standalone")
        else:
            config = arguments.get("config_options")
            if config is None:
                config = ConfigOptions.create_from_environment("")
            typecheck(config, "config_options", ConfigOptions)
            if not config.is_factory_object:
                raise RedisRuntimeError("config_options was not created by a ConfigOptions "
                                        "factory method (create_from_environment)")
        self._connect(config)

    def _connect(self, config):
        ssdb = config._resolve("SSDB", None)
        if not ssdb:
            raise RedisConnectionError("Could not connect to database. $SSDB not set"
                                       + (f" (SSDB_{config.suffix})" if config.suffix else ""))
        db_type = config._resolve("SR_DB_TYPE", None)
        if db_type is not None and db_type.lower() not in ("clustered", "standalone"):
            raise ValueError(f"SR_DB_TYPE must be Clustered or Standalone, got {db_type!r}")
        self._put_prefix = config._resolve("SSKEYOUT", "")
        self._get_prefixes = config._resolve("SSKEYIN", "")
        self._data_source = self._get_prefixes.split(",")[0] if self._get_prefixes else ""
        self._use_model_prefix = False
        options = {"address": _first_address(ssdb), "key_prefix_out": self._put_prefix,
                   "key_prefixes_in": self._get_prefixes}
        if config.is_configured("SR_CONN_TIMEOUT"):
            options["connect_timeout_ms"] = config.get_integer_option("SR_CONN_TIMEOUT")
        if config.is_configured("SR_CMD_TIMEOUT"):
            options["command_timeout_ms"] = config.get_integer_option("SR_CMD_TIMEOUT")
        try:
            self._client = slipstream.Client(**options)
        except slipstream.SlipstreamError as error:
            raise RedisConnectionError(str(error)) from None
        self._nodes = {}
        self.log_data(LLDebug, f"New client created, connected to {self._client.address}")

    def _node(self, address):
        """A connection to the one server at `address` ("host:port"), for administration."""
        typecheck(address, "address", str)
        if address not in self._nodes:
            self._nodes[address] = slipstream.Client(address)
        return self._nodes[address]

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
        typecheck(src_name, "src_name", str)
        typecheck(dest_name, "dest_name", str)
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
        self._client.set_script_from_file(name, file, device=_check_device(device))

    @exception_handler
    def set_script_from_file_multigpu(self, name: str, file: str, first_gpu: int,
                                      num_gpus: int) -> None:
        typecheck(file, "file", str)
        with open(file, encoding="utf-8") as source:
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
    def _model_options(batch_size, min_batch_size, min_batch_timeout, tag, inputs, outputs):
        for value, argument in ((batch_size, "batch_size"), (min_batch_size, "min_batch_size"),
                                (min_batch_timeout, "min_batch_timeout")):
            typecheck(value, argument, int)
        typecheck(tag, "tag", str)
        return {"batch_size": batch_size, "min_batch_size": min_batch_size,
                "min_batch_timeout_ms": min_batch_timeout, "tag": tag,
                "inputs": _names(inputs, "inputs") or None,
                "outputs": _names(outputs, "outputs") or None}

    @exception_handler
    def set_model(self, name: str, model: bytes, backend: str, device: str = "CPU",
                  batch_size: int = 0, min_batch_size: int = 0, min_batch_timeout: int = 0,
                  tag: str = "", inputs=None, outputs=None) -> None:
        typecheck(name, "name", str)
        self._client.set_model(name, model, backend=_check_backend(backend),
                               device=_check_device(device),
                               **self._model_options(batch_size, min_batch_size,
                                                     min_batch_timeout, tag, inputs, outputs))

    @exception_handler
    def set_model_multigpu(self, name: str, model: bytes, backend: str, first_gpu: int,
                           num_gpus: int, batch_size: int = 0, min_batch_size: int = 0,
                           min_batch_timeout: int = 0, tag: str = "", inputs=None,
                           outputs=None) -> None:
        """Stores the model once per GPU ("<name>.GPU:<n>") and under <name> on "GPU", as
        SmartRedis does; the server refuses GPU devices when it has no CUDA device."""
        typecheck(name, "name", str)
        _check_gpus(first_gpu, num_gpus)
        options = self._model_options(batch_size, min_batch_size, min_batch_timeout, tag, inputs,
                                      outputs)
        backend = _check_backend(backend)
        for gpu in range(first_gpu, first_gpu + num_gpus):
            self._client.set_model(f"{name}.GPU:{gpu}", model, backend=backend,
                                   device=f"GPU:{gpu}", **options)
        self._client.set_model(name, model, backend=backend, device="GPU", **options)

    @exception_handler
    def set_model_from_file(self, name: str, model_file: str, backend: str, device: str = "CPU",
                            batch_size: int = 0, min_batch_size: int = 0,
                            min_batch_timeout: int = 0, tag: str = "", inputs=None,
                            outputs=None) -> None:
        typecheck(model_file, "model_file", str)
        with open(model_file, "rb") as model:
            self.set_model(name, model.read(), backend, device, batch_size, min_batch_size,
                           min_batch_timeout, tag, inputs, outputs)

    @exception_handler
    def set_model_from_file_multigpu(self, name: str, model_file: str, backend: str,
                                     first_gpu: int, num_gpus: int, batch_size: int = 0,
                                     min_batch_size: int = 0, min_batch_timeout: int = 0,
                                     tag: str = "", inputs=None, outputs=None) -> None:
        typecheck(model_file, "model_file", str)
        with open(model_file, "rb") as model:
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
        return [_parse_info(self._node(a).command(["CLUSTER", "INFO"])).get("default", {})
                for a in self._addresses(addresses)]

    @exception_handler
    def get_ai_info(self, addresses: list, key: str, reset_stat: bool = False) -> list:
        typecheck(key, "key", str)
        typecheck(reset_stat, "reset_stat", bool)
        if self._use_model_prefix and self._data_source:
            key = f"{self._data_source}.{key}"
        command = ["AI.INFO", key] + (["RESETSTAT"] if reset_stat else [])
        return [_pairs(self._node(a).command(command)) for a in self._addresses(addresses)]

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
