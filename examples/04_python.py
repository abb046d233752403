#!/usr/bin/env python3
"""Example 04 (Python): put a numpy array, get it back, round-trip a dataset with metadata, then
store a small PyTorch model, run it on the array on the server and read the result.

Usage: PYTHONPATH=<build>/bindings/python /usr/bin/python3 examples/04_python.py [ADDRESS]
(default address: SLIPSTREAM_ADDRESS, then SSDB). Exits non-zero on any mismatch, so it also runs
as a test (example_04_python).
"""

import sys

import numpy as np
import torch

import slipstream


class Regressor(torch.nn.Module):
    """A stand-in for a trained surrogate: 3 features per row in, 2 predictions out."""

    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(3, 2)

    def forward(self, x):
        return torch.tanh(self.layer(x))


def check(ok, what):
    print(f"  {what:<52} {'ok' if ok else 'MISMATCH'}")
    return ok


def main():
    address = sys.argv[1] if len(sys.argv) > 1 else None
    try:
        client = slipstream.Client(address)
    except slipstream.SlipstreamError as error:
        print(f"error ({error.code_name}): {error}", file=sys.stderr)
        return 1
    print(f"connected to {client.address}")
    ok = True

    # A 4 x 3 float field: element [i, j] = 10 * i + j.
    field = (10 * np.arange(4)[:, None] + np.arange(3)).astype(np.float32)
    client.put_tensor("example.field", field)
    print("put tensor 'example.field' FLOAT (4, 3)")

    got = client.get_tensor("example.field")  # the received bytes, not a copy
    ok &= check(got.dtype == np.float32 and got.shape == (4, 3), "get_tensor: dtype and shape")
    ok &= check(np.array_equal(got, field), "get_tensor: all 12 values")

    # The same data seen from Fortran: a(4, 3) in column-major memory.
    fortran = np.empty((4, 3), dtype=np.float32, order="F")
    client.unpack_tensor("example.field", fortran)
    ok &= check(fortran.ravel(order="K")[2 + 4 * 1] == field[2, 1],
                "Fortran order: a(3,2) == [2][1]")

    # A dataset: two tensors plus metadata, stored the way SmartRedis stores it.
    step = slipstream.Dataset("example.step")
    step.add_tensor("field", field)
    step.add_tensor("ids", np.array([7, 8, 9], dtype=np.int32))
    step.add_meta_scalar("time", 0.125)
    step.add_meta_scalar("iteration", 42)
    step.add_meta_string("model", "ocean-1deg")
    client.put_dataset(step)
    back = client.get_dataset("example.step")
    ok &= check(back.get_tensor_names() == ["field", "ids"], "get_dataset: tensor names")
    ok &= check(back.get_meta_scalars("time").tolist() == [0.125], "get_dataset: metadata 'time'")
    ok &= check(back.get_meta_strings("model") == ["ocean-1deg"], "get_dataset: metadata 'model'")

    # A model: made with torch here, stored as TorchScript, run by the server on the field.
    torch.manual_seed(0)
    model = torch.jit.script(Regressor().eval())
    client.set_model("example.model", model)  # serialised with torch.jit.save
    client.run_model("example.model", inputs=["example.field"], outputs=["example.prediction"])
    prediction = client.get_tensor("example.prediction")
    with torch.no_grad():
        expected = model(torch.from_numpy(field)).numpy()
    print(f"ran model 'example.model' on the server: output shape {prediction.shape}")
    ok &= check(prediction.shape == (4, 2), "run_model: output shape (4, 2)")
    ok &= check(np.allclose(prediction, expected, rtol=1e-6, atol=1e-6),
                "run_model: equals torch's own output")

    try:
        client.get_tensor("example.missing")
        ok &= check(False, "missing key raises KeyNotFoundError")
    except slipstream.KeyNotFoundError as error:
        ok &= check("example.missing" in str(error), "missing key raises KeyNotFoundError")

    client.delete_tensor("example.field")
    client.delete_tensor("example.prediction")
    client.delete_dataset("example.step")
    client.delete_model("example.model")
    client.close()
    print("all checks passed" if ok else "SOME CHECKS FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
