"""smartredis.util: SmartRedis's helpers, as its programs import them: Dtypes (numpy dtypes to
SmartRedis's type names and back), typecheck, init_default and exception_handler."""

import typing as t

import numpy as np

from smartredis.error import exception_handler

__all__ = ["Dtypes", "exception_handler", "init_default", "typecheck"]

_TENSOR_TYPES = {
    "float64": "DOUBLE",
    "float32": "FLOAT",
    "int8": "INT8",
    "int16": "INT16",
    "int32": "INT32",
    "int64": "INT64",
    "uint8": "UINT8",
    "uint16": "UINT16",
}
_METADATA_TYPES = {
    "float64": "DOUBLE",
    "float32": "FLOAT",
    "int32": "INT32",
    "int64": "INT64",
    "uint32": "UINT32",
    "uint64": "UINT64",
}
_FROM_NAME = {
    "DOUBLE": np.double,
    "FLOAT": np.float32,
    "INT8": np.int8,
    "INT16": np.int16,
    "INT32": np.int32,
    "INT64": np.int64,
    "UINT8": np.uint8,
    "UINT16": np.uint16,
    "UINT32": np.uint32,
    "UINT64": np.uint64,
    "STRING": str,
}


class Dtypes:
    """SmartRedis's names of tensor and metadata element types ("DOUBLE", "FLOAT", "INT8" ...)."""

    @staticmethod
    def tensor_from_numpy(array: np.ndarray) -> str:
        """The tensor type name of `array`'s dtype; TypeError for a dtype SmartRedis lacks."""
        name = _TENSOR_TYPES.get(str(array.dtype))
        if name is None:
            raise TypeError(f"Incompatible tensor type provided {array.dtype}")
        return name

    @staticmethod
    def metadata_from_numpy(array: np.ndarray) -> str:
        """The metadata scalar type name of `array`'s dtype; TypeError for others."""
        name = _METADATA_TYPES.get(str(array.dtype))
        if name is None:
            raise TypeError(f"Incompatible metadata type provided {array.dtype}")
        return name

    @staticmethod
    def from_string(type_name: str) -> t.Type:
        """The numpy scalar type (or str) of a type name; TypeError for an unknown name."""
        if type_name not in _FROM_NAME:
            raise TypeError(f"Unrecognized type name {type_name}")
        return _FROM_NAME[type_name]


def init_default(default: t.Any, init_value: t.Any, expected_type: t.Any = None) -> t.Any:
    """`init_value`, or `default` when it is None; TypeError if it is not an `expected_type`."""
    if init_value is None:
        return default
    if expected_type is not None and not isinstance(init_value, expected_type):
        raise TypeError(f"Argument was of type {type(init_value)}, not {expected_type}")
    return init_value


def typecheck(arg: t.Any, name: str, expected: t.Any) -> None:
    """SmartRedis's argument check: TypeError naming the argument unless `arg` is an `expected`
    (a bool is not accepted where an int is expected)."""
    if not isinstance(arg, expected) or (expected is int and isinstance(arg, bool)):
        raise TypeError(f"Argument provided for {name}, {type(arg)}, is not of type {expected}")
