#!/usr/bin/env python3
"""Writes TorchScript test models with python3-torch, for tests/ml/python_models_test.cpp.

Usage: make_models.py OUTPUT_DIR

For each model NAME it writes NAME.pt (torch.jit.save) and NAME.io, the reference run computed
here in Python: one line per tensor, "input|output DTYPE DIM,DIM,... VALUE VALUE ...".
  mlp_traced   torch.jit.trace of the EKE-shaped MLP: [n, 4] float -> [n, 1]
  cnn_traced   torch.jit.trace of a small CNN: [n, 1, 8, 8] float -> [n, 3]
  scripted     torch.jit.script of a module with control flow and a tuple of two outputs
"""
import os
import sys
from typing import Tuple

import torch


class EkeMlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = torch.nn.Linear(4, 16)
        self.out = torch.nn.Linear(16, 1)

    def forward(self, x):
        return self.out(torch.relu(self.hidden(x)))


class SmallCnn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(1, 4, 3, padding=1)
        self.pool = torch.nn.AdaptiveAvgPool2d(1)
        self.head = torch.nn.Linear(4, 3)

    def forward(self, x):
        return self.head(torch.flatten(self.pool(torch.relu(self.conv(x))), 1))


class Branchy(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.tensor([2.5]))

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        if bool(a.sum() > 0):
            return a * self.scale, b - a
        return -a, b + 1


def tensor_line(kind, tensor):
    tensor = tensor.detach().contiguous()
    names = {torch.float32: "FLOAT", torch.float64: "DOUBLE", torch.int64: "INT64"}
    shape = ",".join(str(d) for d in tensor.shape)
    values = " ".join(repr(float(v)) for v in tensor.flatten().tolist())
    return f"{kind} {names[tensor.dtype]} {shape} {values}\n"


def save(directory, name, module, inputs, outputs):
    module.save(os.path.join(directory, name + ".pt"))
    if isinstance(outputs, torch.Tensor):
        outputs = (outputs,)
    with open(os.path.join(directory, name + ".io"), "w") as io:
        for tensor in inputs:
            io.write(tensor_line("input", tensor))
        for tensor in outputs:
            io.write(tensor_line("output", tensor))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    directory = sys.argv[1]
    os.makedirs(directory, exist_ok=True)
    torch.manual_seed(1234)
    with torch.no_grad():
        mlp = EkeMlp().eval()
        x = torch.linspace(-2.0, 2.0, 64 * 4).reshape(64, 4)
        save(directory, "mlp_traced", torch.jit.trace(mlp, x), [x], mlp(x))

        cnn = SmallCnn().eval()
        images = torch.sin(torch.arange(2 * 64, dtype=torch.float32) * 0.3).reshape(2, 1, 8, 8)
        save(directory, "cnn_traced", torch.jit.trace(cnn, images), [images], cnn(images))

        branchy = torch.jit.script(Branchy().eval())
        a = torch.tensor([[1.0, -2.0, 3.0]], dtype=torch.float64)
        b = torch.tensor([[0.5, 0.25, 0.125]], dtype=torch.float64)
        save(directory, "scripted", branchy, [a, b], branchy(a, b))


if __name__ == "__main__":
    main()
