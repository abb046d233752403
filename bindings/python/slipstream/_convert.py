"""Conversions the compiled client calls for values that are not numpy arrays or bytes.

Kept in Python so that torch stays an optional dependency: torch is never imported here, only
recognised when the caller already has torch objects (which means torch is imported).
"""

import io
import sys
import warnings

import numpy as np


def _torch():
    """The torch module if the program has imported it, else None."""
    return sys.modules.get("torch")


def _torch_dtypes(torch):
    return (torch.float32, torch.float64, torch.int8, torch.int16, torch.int32, torch.int64,
            torch.uint8, torch.bool)


def to_numpy(value):
    """A numpy array with the elements and logical shape of `value`.

    torch.Tensor: detached and, if it lives on a GPU, copied to the CPU; then viewed through
    .numpy() (no copy for a CPU tensor; torch's strides are kept, so a transposed or otherwise
    non-contiguous tensor is copied later, once, by the caller). Objects with __dlpack__ go
    through numpy.from_dlpack; anything else through numpy.asarray (lists, __array__ and
    __array_interface__ objects).
    """
    torch = _torch()
    if torch is not None and isinstance(value, torch.Tensor):
        if value.dtype not in _torch_dtypes(torch):
            raise TypeError(f"slipstream cannot store elements of dtype {value.dtype}; expected "
                            "float32, float64, int8, int16, int32, int64, uint8 or bool")
        tensor = value.detach()
        if tensor.device.type != "cpu":
            tensor = tensor.cpu()
        if tensor.is_conj():
            tensor = tensor.resolve_conj()
        if tensor.is_neg():
            tensor = tensor.resolve_neg()
        return tensor.numpy()
    if not isinstance(value, np.ndarray) and hasattr(value, "__dlpack__"):
        try:
            return np.from_dlpack(value)
        except (TypeError, BufferError, RuntimeError):
            pass  # e.g. a device numpy cannot read: fall back to the array protocols
    return np.asarray(value)


def torch_view(array):
    """A torch tensor sharing the memory of a numpy array (torch.from_numpy), for StreamPiece.

    The arrays of stream pieces are read-only views; torch has no read-only tensors and warns
    about that on every such array, so the warning is silenced here and the caller documents
    that the tensor must not be written.
    """
    import torch  # asked for explicitly: importing it here is the caller's choice

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
        return torch.from_numpy(array)


def model_bytes(model):
    """The serialised bytes of a model for Client.set_model.

    A torch.jit.ScriptModule (from torch.jit.script or torch.jit.trace) is written with
    torch.jit.save into memory. A plain torch.nn.Module is refused with a hint, as are paths
    (use set_model_from_file).
    """
    torch = _torch()
    if torch is not None:
        if isinstance(model, torch.jit.ScriptModule):
            buffer = io.BytesIO()
            torch.jit.save(model, buffer)
            return buffer.getvalue()
        if isinstance(model, torch.nn.Module):
            raise TypeError(
                "set_model needs a TorchScript model: pass torch.jit.script(module) or "
                "torch.jit.trace(module, example_inputs), not a plain torch.nn.Module")
    if isinstance(model, str) or hasattr(model, "__fspath__"):
        raise TypeError("set_model takes the model's bytes or a torch.jit.ScriptModule; "
                        "use set_model_from_file for a path")
    raise TypeError("set_model takes bytes-like data or a torch.jit.ScriptModule, not "
                    f"{type(model).__name__}")
