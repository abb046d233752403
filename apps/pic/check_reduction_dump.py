#!/usr/bin/python3
"""Checks the openPMD file `slipstream stream dump` wrote from slipstream-pic's stream run with a
reduction at the source (the test pic_stream_reduction, reduction_test.sh): reductions.py's
phase-space histogram ran on every rank, so the file holds meshes/phase_space, [ranks, x_bins,
v_bins], and no particle data.

  check_reduction_dump.py FILE.h5 ECHO_PREFIX --ranks 2 --steps 0,10,20 --x-bins 8 --v-bins 6
                          --v-max 2

- every iteration: meshes/phase_space has the shape above, float32, each rank's row sums to its
  particles, the provenance attributes name the function and its inputs; no particle dataset;
- the last iteration: each rank's row equals the histogram binned here, with numpy, from the
  particles that rank says it had (ECHO_PREFIX<rank>.csv, from --stream-echo), bin for bin.

Exits 1 with a message at the first mismatch."""
import argparse
import csv
import sys

import h5py
import numpy as np

LENGTH = 2 * np.pi * 1.6329931618554521  # slipstream-pic's default (pic.hpp), reductions.py's
INPUTS = ["particles/electrons/position/x", "particles/electrons/momentum/x"]


def histogram(x, v, x_bins, v_bins, v_max):
    """reductions.py's binning, in the same order of operations."""
    ix = np.clip(np.floor(np.remainder(x, LENGTH) * (x_bins / LENGTH)).astype(np.int64), 0,
                 x_bins - 1)
    iv = np.clip(np.floor((v + v_max) * (v_bins / (2.0 * v_max))).astype(np.int64), 0, v_bins - 1)
    counts = np.zeros(x_bins * v_bins, dtype=np.float32)
    np.add.at(counts, ix * v_bins + iv, 1.0)
    return counts.reshape(x_bins, v_bins)


def echoed(prefix, rank):
    x, v, step = {}, {}, None
    with open(f"{prefix}{rank}.csv") as f:
        for row in csv.DictReader(f):
            step = int(row["step"])
            if row["component"] == INPUTS[0]:
                x[int(row["index"])] = float(row["value"])
            elif row["component"] == INPUTS[1]:
                v[int(row["index"])] = float(row["value"])
    order = sorted(x)
    return step, np.array([x[i] for i in order]), np.array([v[i] for i in order])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("file")
    parser.add_argument("echo_prefix")
    parser.add_argument("--ranks", type=int, required=True)
    parser.add_argument("--steps", required=True)
    parser.add_argument("--x-bins", type=int, required=True)
    parser.add_argument("--v-bins", type=int, required=True)
    parser.add_argument("--v-max", type=float, required=True)
    args = parser.parse_args()
    steps = [int(s) for s in args.steps.split(",")]
    echoes = [echoed(args.echo_prefix, r) for r in range(args.ranks)]
    with h5py.File(args.file, "r") as f:
        found = sorted(int(s) for s in f["data"])
        if found != steps:
            raise SystemExit(f"iterations {found}, expected {steps}")
        for step in steps:
            it = f[f"data/{step}"]
            ps = it["meshes/phase_space"]
            shape = (args.ranks, args.x_bins, args.v_bins)
            if ps.shape != shape or ps.dtype != np.float32:
                raise SystemExit(f"step {step}: phase_space is {ps.dtype} {ps.shape}, not {shape}")
            counts = ps[...]
            for r in range(args.ranks):
                if counts[r].sum() != len(echoes[r][1]):
                    raise SystemExit(f"step {step}: rank {r}'s row sums to {counts[r].sum()}, "
                                     f"not its {len(echoes[r][1])} particles")
            source = ps.attrs["reductionSource"]
            source = source.decode() if isinstance(source, bytes) else source
            if not source.endswith("phase_space.pt"):
                raise SystemExit(f"step {step}: reductionSource is {source!r}")
            inputs = [i.decode() if isinstance(i, bytes) else i for i in ps.attrs["reductionInputs"]]
            if inputs != INPUTS:
                raise SystemExit(f"step {step}: reductionInputs is {inputs}")
            datasets = []
            it.visititems(lambda name, obj: datasets.append(name)
                          if isinstance(obj, h5py.Dataset) and name.startswith("particles/")
                          else None)
            if datasets:
                raise SystemExit(f"step {step}: particle data travelled: {datasets}")
        last = steps[-1]
        for r, (step, x, v) in enumerate(echoes):
            if step != last:
                raise SystemExit(f"rank {r} echoed step {step}, not {last}")
            expected = histogram(x, v, args.x_bins, args.v_bins, args.v_max)
            got = f[f"data/{last}/meshes/phase_space"][r]
            if not np.array_equal(got, expected):
                bad = np.argwhere(got != expected)[0]
                raise SystemExit(f"step {last}, rank {r}: bin {tuple(bad)} holds {got[tuple(bad)]}, "
                                 f"the particles give {expected[tuple(bad)]}")
    print(f"phase_space: {len(steps)} iterations x {args.ranks} ranks checked; the last one bin "
          f"for bin against the ranks' particles")


if __name__ == "__main__":
    sys.exit(main())
