"""Writes the TorchScript models the server integration tests use into the directory given, and
mlp.onnx and scale.onnx: the same Mlp and Scale exported to ONNX (opset 17, a dynamic first
dimension) for the ONNX tests of the C and Fortran clients.

Run with Debian's python3 (python3-torch). Weights are fixed so tests can compute the expected
outputs by hand: see tests/integration/model_test.cpp.
"""
import os
import sys
from typing import Dict, List, Tuple

import torch


class Mlp(torch.nn.Module):
    """The EKE shape: [n, 4] -> [n, 1], relu(x W1^T + b1) W2^T + b2."""

    def __init__(self):
        super().__init__()
        self.hidden = torch.nn.Linear(4, 8)
        self.out = torch.nn.Linear(8, 1)
        with torch.no_grad():
            for j in range(8):
                for i in range(4):
                    self.hidden.weight[j, i] = 0.1 * (i + 1) - 0.05 * j
                self.hidden.bias[j] = 0.01 * j - 0.02
                self.out.weight[0, j] = 0.2 - 0.03 * j
            self.out.bias[0] = 0.5

    def forward(self, x):
        return self.out(torch.relu(self.hidden(x)))


class TwoOutputs(torch.nn.Module):
    def forward(self, a, b):
        return a + b, a * b


class Scale(torch.nn.Module):
    def forward(self, x):
        return x * 2.0 + 1.0


class SineMlp(torch.nn.Module):
    """A small regressor, [n, 1] -> [n, 1], for the training examples (seeded initial weights)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.net = torch.nn.Sequential(torch.nn.Linear(1, 32), torch.nn.Tanh(),
                                       torch.nn.Linear(32, 1))

    def forward(self, x):
        return self.net(x)


class XySamples(torch.nn.Module):
    """A sample builder: the step's `samples/xy` pieces, [n, 2] rows of (x, y), as (x, y)."""

    def forward(self, records: Dict[str, List[torch.Tensor]]) -> Tuple[torch.Tensor, torch.Tensor]:
        xy = torch.cat(records["samples/xy"])
        return xy[:, :1], xy[:, 1:]


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.jit.script(Mlp()).save(os.path.join(out, "mlp.pt"))
    torch.jit.script(TwoOutputs()).save(os.path.join(out, "two_outputs.pt"))
    torch.jit.trace(Scale(), torch.zeros(2, 3)).save(os.path.join(out, "scale.pt"))
    torch.jit.script(SineMlp()).save(os.path.join(out, "sine_mlp.pt"))
    torch.jit.script(XySamples()).save(os.path.join(out, "xy_samples.pt"))
    for name, module, example in (("mlp", Mlp(), torch.zeros(2, 4)),
                                  ("scale", Scale(), torch.zeros(2, 3))):
        torch.onnx.export(module.eval(), example, os.path.join(out, name + ".onnx"),
                          opset_version=17, input_names=["x"], output_names=["y"],
                          dynamic_axes={"x": {0: "n"}, "y": {0: "n"}})
    print("models written to", out)


if __name__ == "__main__":
    main()
