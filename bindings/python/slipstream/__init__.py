"""Slipstream: in-memory coupling of HPC simulations and machine learning, from Python.

The client is compiled (slipstream._slipstream, a pybind11 module over the C++ client library);
this package re-exports it. Tensors are numpy arrays: put_tensor also takes torch tensors, and
get_tensor hands the received bytes to numpy without copying them.

    import numpy as np, slipstream
    client = slipstream.Client("tcp://127.0.0.1:6780")
    client.put_tensor("field", np.arange(12, dtype=np.float32).reshape(4, 3))
    field = client.get_tensor("field")

Streams: StreamWriter publishes a simulation's steps as openPMD-shaped chunks (numpy arrays or
torch tensors); StreamReader, one of a group, takes its share of every step, its pieces viewed by
numpy without a copy (docs/streams.md).

Training: StreamDataset reads a stream as a torch IterableDataset (with a ReplayMemory if wanted)
and publish stores a model for the simulation's run_model calls (docs/training.md, "Python").

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
    ReplayMemory,
    ServerError,
    SlipstreamError,
    StreamChunk,
    StreamComponent,
    StreamPiece,
    StreamReader,
    StreamSkipped,
    StreamStep,
    StreamWriter,
    TensorLoan,
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
    "ReplayMemory",
    "ServerError",
    "StreamDataset",
    "SlipstreamError",
    "StreamChunk",
    "StreamComponent",
    "StreamPiece",
    "StreamReader",
    "StreamSkipped",
    "StreamStep",
    "StreamWriter",
    "TensorLoan",
    "TimeoutError",
    "WrongTypeError",
    "__version__",
    "dtype_of",
    "publish",
]


def __getattr__(name):
    # StreamDataset and publish need torch: imported on first use, so that the client alone does not.
    if name in ("StreamDataset", "publish"):
        from slipstream import training
        return getattr(training, name)
    raise AttributeError(f"module 'slipstream' has no attribute {name!r}")
