"""Dataset: SmartRedis's Python Dataset over slipstream.Dataset (stored in SmartRedis's layout,
so every SmartRedis and Slipstream client reads it)."""

import numpy as np

import slipstream
from smartredis.error import exception_handler
from smartredis.srobject import SRObject
from smartredis.util import typecheck

__all__ = ["Dataset"]

_METADATA_TYPES = {
    slipstream.MetaDataType.FLOAT64: np.double,
    slipstream.MetaDataType.FLOAT32: np.float32,
    slipstream.MetaDataType.INT32: np.int32,
    slipstream.MetaDataType.INT64: np.int64,
    slipstream.MetaDataType.UINT32: np.uint32,
    slipstream.MetaDataType.UINT64: np.uint64,
    slipstream.MetaDataType.STRING: str,
}


_TENSOR_DTYPES = tuple(np.dtype(t) for t in (np.float64, np.float32, np.int8, np.int16, np.int32,
                                              np.int64, np.uint8, np.uint16))


def check_tensor(data, argument="data"):
    """SmartRedis's tensor argument check: a numpy array of one of its element types."""
    typecheck(data, argument, np.ndarray)
    if data.dtype not in _TENSOR_DTYPES:
        raise TypeError(f"Unsupported tensor dtype {data.dtype}: SmartRedis stores float64, "
                        "float32, int8, int16, int32, int64, uint8 and uint16")


class Dataset(SRObject):
    def __init__(self, name: str) -> None:
        typecheck(name, "name", str)
        super().__init__(name)
        self._native = self._create(name)

    @staticmethod
    @exception_handler
    def _create(name):
        return slipstream.Dataset(name)

    @classmethod
    def _wrap(cls, native: "slipstream.Dataset") -> "Dataset":
        """A Dataset around a slipstream.Dataset (what Client.get_dataset returns)."""
        dataset = cls.__new__(cls)
        SRObject.__init__(dataset, native.get_name())
        dataset._native = native
        return dataset

    @staticmethod
    def from_pybind(dataset: "slipstream.Dataset") -> "Dataset":
        """A Dataset around the native dataset underneath (what get_data() returns), as
        SmartRedis's from_pybind; TypeError for anything else."""
        typecheck(dataset, "dataset", slipstream.Dataset)
        return Dataset._wrap(dataset)

    def get_data(self) -> "slipstream.Dataset":
        """The native dataset underneath (a slipstream.Dataset)."""
        return self._native

    def set_data(self, dataset: "slipstream.Dataset") -> None:
        """Replaces the native dataset underneath; TypeError unless it is a slipstream.Dataset."""
        typecheck(dataset, "dataset", slipstream.Dataset)
        self._native = dataset

    def get_name(self) -> str:
        return self._native.get_name()

    @exception_handler
    def add_tensor(self, name: str, data: np.ndarray) -> None:
        typecheck(name, "name", str)
        check_tensor(data)
        self._native.add_tensor(name, data)

    @exception_handler
    def get_tensor(self, name: str) -> np.ndarray:
        typecheck(name, "name", str)
        return np.array(self._native.get_tensor(name))  # a writable copy, as SmartRedis returns

    @exception_handler
    def add_meta_scalar(self, name: str, data) -> None:
        typecheck(name, "name", str)
        as_array = np.asarray(data)
        if as_array.size != 1 or as_array.ndim > 1:
            raise ValueError("Argument provided is not a scalar")
        if as_array.dtype.kind not in "iuf":
            raise TypeError(f"Unsupported metadata scalar type {as_array.dtype}")
        self._native.add_meta_scalar(name, as_array.reshape(()).copy()[()])

    @exception_handler
    def add_meta_string(self, name: str, data: str) -> None:
        typecheck(name, "name", str)
        typecheck(data, "data", str)
        self._native.add_meta_string(name, data)

    @exception_handler
    def get_meta_scalars(self, name: str) -> np.ndarray:
        typecheck(name, "name", str)
        return self._native.get_meta_scalars(name)

    @exception_handler
    def get_meta_strings(self, name: str) -> list:
        typecheck(name, "name", str)
        return list(self._native.get_meta_strings(name))

    @exception_handler
    def get_metadata_field_names(self) -> list:
        return list(self._native.get_metadata_field_names())

    @exception_handler
    def get_metadata_field_type(self, name: str) -> type:
        typecheck(name, "name", str)
        return _METADATA_TYPES[self._native.get_metadata_field_type(name)]

    @exception_handler
    def get_tensor_names(self) -> list:
        return list(self._native.get_tensor_names())

    @exception_handler
    def get_tensor_type(self, name: str) -> type:
        typecheck(name, "name", str)
        return self._native.get_tensor_type(name).numpy_dtype.type

    @exception_handler
    def get_tensor_dims(self, name: str) -> list:
        typecheck(name, "name", str)
        return [int(d) for d in self._native.get_tensor_dims(name)]

    def __str__(self) -> str:
        lines = [f"DataSet ({self.get_name()}):"]
        for name in self.get_tensor_names():
            lines.append(f"  tensor {name}: {np.dtype(self.get_tensor_type(name)).name} "
                         f"{self.get_tensor_dims(name)}")
        for field in self.get_metadata_field_names():
            lines.append(f"  field {field}")
        return "\n".join(lines)
