"""The closed loop (examples 09 and 11), its first step: writes the model to train (model.pt) and
the sample builder (samples.pt) as TorchScript files into a folder (by default the working
directory: this process's folder when the launcher runs it).

Usage: python3 models.py [FOLDER]"""
import os
import sys
from typing import Dict, List, Tuple

import torch


class Mlp(torch.nn.Module):
    """The model to train: 1 -> 32 -> 1."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.net = torch.nn.Sequential(torch.nn.Linear(1, 32), torch.nn.Tanh(),
                                       torch.nn.Linear(32, 1))

    def forward(self, x):
        return self.net(x)


class Samples(torch.nn.Module):
    """The sample builder: a step's "samples/xy" pieces ([n, 2] rows of x, y) -> (x, y)."""

    def forward(self, records: Dict[str, List[torch.Tensor]]) -> Tuple[torch.Tensor, torch.Tensor]:
        xy = torch.cat(records["samples/xy"])
        return xy[:, :1], xy[:, 1:]


def write(folder):
    os.makedirs(folder, exist_ok=True)
    torch.jit.save(torch.jit.script(Mlp()), os.path.join(folder, "model.pt"))
    torch.jit.save(torch.jit.script(Samples()), os.path.join(folder, "samples.pt"))
    print(f"wrote model.pt and samples.pt in {folder}")


if __name__ == "__main__":
    write(sys.argv[1] if len(sys.argv) > 1 else ".")
