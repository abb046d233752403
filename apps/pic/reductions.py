"""Reductions at the source for slipstream-pic's stream (docs/streams.md, "Reductions"): writes a
TorchScript function that a writer rank applies to its own particles before anything is sent, so
that the stream carries a phase-space histogram instead of the particles.

  phase_space.pt   forward(x [n] float64, v [n] float64) -> counts [x_bins, v_bins] float32:
                   the rank's electrons binned on [0, length) x [-v_max, v_max] (x periodic,
                   velocities outside the range clamped into the edge bins)

slipstream-pic uses it with
  --stream-reductions '[{"function": "phase_space.pt", "output": "meshes/phase_space",
    "inputs": ["particles/electrons/position/x", "particles/electrons/momentum/x"]}]'
and every rank's row of meshes/phase_space sums to the whole histogram.

Usage: python3 reductions.py OUTPUT.pt [--x-bins 32] [--v-bins 32] [--length L] [--v-max 2]
(the length defaults to that of slipstream-pic's default run, 2 pi sqrt(8/3); its beams drift at
+1 and -1)."""
import argparse
import math

import torch


class PhaseSpaceHistogram(torch.nn.Module):
    def __init__(self, x_bins: int, v_bins: int, length: float, v_max: float):
        super().__init__()
        self.x_bins = x_bins
        self.v_bins = v_bins
        self.length = length
        self.v_max = v_max

    def forward(self, x: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        ix = torch.floor(torch.remainder(x, self.length) * (self.x_bins / self.length))
        ix = ix.to(torch.int64).clamp(0, self.x_bins - 1)
        iv = torch.floor((v + self.v_max) * (self.v_bins / (2.0 * self.v_max)))
        iv = iv.to(torch.int64).clamp(0, self.v_bins - 1)
        counts = torch.zeros(self.x_bins * self.v_bins, dtype=torch.float32)
        counts.index_add_(0, ix * self.v_bins + iv, torch.ones(x.shape[0], dtype=torch.float32))
        return counts.reshape(self.x_bins, self.v_bins)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output")
    parser.add_argument("--x-bins", type=int, default=32)
    parser.add_argument("--v-bins", type=int, default=32)
    parser.add_argument("--length", type=float, default=2 * math.pi * math.sqrt(8 / 3))
    parser.add_argument("--v-max", type=float, default=2.0)
    args = parser.parse_args()
    if args.x_bins < 1 or args.v_bins < 1 or args.length <= 0 or args.v_max <= 0:
        parser.error("bins must be positive, and so must the length and v_max")
    module = PhaseSpaceHistogram(args.x_bins, args.v_bins, args.length, args.v_max)
    torch.jit.save(torch.jit.script(module), args.output)


if __name__ == "__main__":
    main()
