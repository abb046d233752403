"""Slipstream: in-memory coupling of HPC simulations and machine learning, from Python.

The client is compiled (slipstream._slipstream, a pybind11 module over the C++ client library);
this package re-exports it. Tensors are numpy arrays: put_tensor also takes torch tensors, and
get_tensor hands the received bytes to numpy without copying them.

    import numpy as np, slipstream
    client = slipstream.Client("tcp://127.0.0.1:6780")
    client.put_tensor("field", np.arange(12, dtype=np.float32).reshape(4, 3))
    field = client.get_tensor("field")

Every error is a slipstream.SlipstreamError subclass carrying the server's message; every network
call releases the GIL.
"""

from slipstream._slipstream import (
    AuthError,
    BufferTooSmallError,
    Client,
    ConnectionError,
    DataSet,
    Dataset,
    DType,
    InvalidArgumentError,
    KeyNotFoundError,
    MetaDataType,
    ModelInfo,
    OutOfMemoryError,
    ProtocolError,
    ServerError,
    SlipstreamError,
    TimeoutError,
    WrongTypeError,
    __version__,
    dtype_of,
)

__all__ = [
    "AuthError",
    "BufferTooSmallError",
    "Client",
    "ConnectionError",
    "DataSet",
    "Dataset",
    "DType",
    "InvalidArgumentError",
    "KeyNotFoundError",
    "MetaDataType",
    "ModelInfo",
    "OutOfMemoryError",
    "ProtocolError",
    "ServerError",
    "SlipstreamError",
    "TimeoutError",
    "WrongTypeError",
    "__version__",
    "dtype_of",
]
