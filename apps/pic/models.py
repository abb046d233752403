"""The closed loop of slipstream-pic, its first step: writes the model the trainer learns
(model.pt) and the sample builder (samples.pt) as TorchScript files into a folder (by default the
working directory: this process's folder when the launcher runs it).

What is learned (README.md, "Learning from the plasma"): the electric field E at the grid's cell
centres from the electron phase-space density perturbation df(x, v) binned on a coarse grid, the
two at the same time step. The stream's mesh "meshes/phase_space_samples" carries one sample per
row: df (x_bins * v_bins values, x-major), then E (cells values).

Gauss's law is linear, so E scales with df: the model divides df by its rms, runs the network and
multiplies back. Then a sample from the linear phase (df ~ 1e-6) and one from saturation (df ~ 1)
look alike to the network, and the builder hands the trainer samples already scaled that way, so
that the mean squared error weighs every phase of the run alike.

Usage: python3 models.py [FOLDER] [--x-bins 16] [--v-bins 16] [--cells 64] [--hidden 128]"""
import argparse
import os
from typing import Dict, List, Tuple

import torch


def rms(rows: torch.Tensor) -> torch.Tensor:
    """Each row's root mean square, kept away from 0 (a plasma without perturbation has none)."""
    return rows.pow(2).mean(dim=1, keepdim=True).sqrt().clamp_min(1e-30)


class FieldModel(torch.nn.Module):
    """df [batch, x_bins * v_bins] -> E [batch, cells]: an MLP between two scalings."""

    def __init__(self, inputs: int, outputs: int, hidden: int):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(inputs, hidden), torch.nn.GELU(),
                                       torch.nn.Linear(hidden, outputs))

    def forward(self, df: torch.Tensor) -> torch.Tensor:
        scale = rms(df)
        return self.net(df / scale) * scale


class Samples(torch.nn.Module):
    """A step's pieces of the sample record -> (df / rms(df), E / rms(df)): whole rows each."""

    def __init__(self, inputs: int, outputs: int):
        super().__init__()
        self.inputs = inputs
        self.outputs = outputs

    def forward(self, records: Dict[str, List[torch.Tensor]]) -> Tuple[torch.Tensor, torch.Tensor]:
        empty: List[torch.Tensor] = []
        pieces = records.get("meshes/phase_space_samples", empty)
        if len(pieces) == 0:  # this trainer rank got other records of the step only
            return torch.zeros(0, self.inputs), torch.zeros(0, self.outputs)
        rows = torch.cat(pieces)
        if rows.dim() != 2 or rows.size(1) != self.inputs + self.outputs:
            raise ValueError("meshes/phase_space_samples rows have the wrong number of columns "
                             "for this model (models.py --x-bins/--v-bins/--cells)")
        df = rows[:, :self.inputs]
        scale = rms(df)
        return df / scale, rows[:, self.inputs:] / scale


def write(folder, x_bins, v_bins, cells, hidden, seed):
    torch.manual_seed(seed)
    inputs = x_bins * v_bins
    os.makedirs(folder, exist_ok=True)
    torch.jit.save(torch.jit.script(FieldModel(inputs, cells, hidden)),
                   os.path.join(folder, "model.pt"))
    torch.jit.save(torch.jit.script(Samples(inputs, cells)), os.path.join(folder, "samples.pt"))
    print(f"wrote model.pt ({inputs} -> {hidden} -> {cells}) and samples.pt in {folder}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", nargs="?", default=".")
    parser.add_argument("--x-bins", type=int, default=16)
    parser.add_argument("--v-bins", type=int, default=16)
    parser.add_argument("--cells", type=int, default=64)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    write(args.folder, args.x_bins, args.v_bins, args.cells, args.hidden, args.seed)


if __name__ == "__main__":
    main()
