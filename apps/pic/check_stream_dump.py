#!/usr/bin/python3
"""Checks the openPMD file `slipstream stream dump` wrote from slipstream-pic's stream (the test
pic_stream_dump, stream_dump_test.sh).

  check_stream_dump.py FILE.h5 ECHO_PREFIX --steps 0,10,20 --ranks 2 [--cells 64] [--dt 0.1]

- the root's and every iteration's required openPMD attributes, their types and values;
- meshes/E, the electrons and meshes/phase_space_samples in every iteration, with their shapes,
  dtypes and record attributes;
- every element of the last iteration equals what the ranks wrote (ECHO_PREFIX<rank>.csv, from
  slipstream-pic --stream-echo), to the last bit;
- in every iteration, the samples are what the particles and the field say: each row's target is
  E translated by its row's whole number of x-bins, and its input is the phase-space density
  perturbation binned again here, from the dumped particles, as phase_space.cpp does.

Exits 1 with a message at the first mismatch."""
import argparse
import csv
import sys

import h5py
import numpy as np

# slipstream-pic's defaults (pic.hpp, phase_space.hpp), which the test uses.
LENGTH = 2 * np.pi * 1.6329931618554521
X_BINS, V_BINS, V_MAX = 16, 16, 3.0
E_DIMENSION = [1, 1, -3, -1, 0, 0, 0]


class Mismatch(Exception):
    pass


def expect(condition, what):
    if not condition:
        raise Mismatch(what)


def attribute(obj, name, kind, value=None, rtol=0.0):
    """The attribute, checked for presence, type ('str' or a numpy dtype) and value."""
    expect(name in obj.attrs, f"{obj.name} has no attribute {name}")
    got = obj.attrs[name]
    if kind == "str":
        ok = isinstance(got, bytes) or (isinstance(got, np.ndarray) and got.dtype.kind == "S")
        expect(ok, f"{obj.name}@{name} is {got!r}, expected fixed-length strings")
        if value is not None:
            text = [v.decode() for v in got] if isinstance(got, np.ndarray) else got.decode()
            expect(text == value, f"{obj.name}@{name} is {text!r}, expected {value!r}")
        return got
    dtype = np.asarray(got).dtype
    expect(dtype == np.dtype(kind), f"{obj.name}@{name} has type {dtype}, expected {kind}")
    if value is not None:
        close = np.allclose(np.asarray(got), np.asarray(value, dtype=kind), rtol=rtol, atol=0)
        expect(close and np.shape(got) == np.shape(value),
               f"{obj.name}@{name} is {got!r}, expected {value!r}")
    return got


def dataset(obj, dtype, shape):
    expect(isinstance(obj, h5py.Dataset), f"{obj.name} is not a dataset")
    expect(obj.dtype == np.dtype(dtype), f"{obj.name} has dtype {obj.dtype}, expected {dtype}")
    expect(obj.shape == shape, f"{obj.name} has shape {obj.shape}, expected {shape}")
    return obj[()]


def constant(obj, value, particles):
    expect(isinstance(obj, h5py.Group), f"{obj.name} is not a constant record component")
    attribute(obj, "value", "f8", value)
    attribute(obj, "shape", "u8", [particles])
    attribute(obj, "unitSI", "f8", 1.0)


def check_root(f):
    attribute(f, "openPMD", "str", "1.1.0")
    attribute(f, "openPMDextension", "u4", 0)
    attribute(f, "basePath", "str", "/data/%T/")
    attribute(f, "meshesPath", "str", "meshes/")
    attribute(f, "particlesPath", "str", "particles/")
    attribute(f, "iterationEncoding", "str", "groupBased")
    attribute(f, "iterationFormat", "str", "/data/%T/")
    attribute(f, "software", "str", "slipstream-pic")
    attribute(f, "date", "str")
    attribute(f, "comment", "str")


def bin_phase_space(x, v_half, field, cells, dt, particles):
    """phase_space.cpp's df, from the particles: bilinear weights, periodic in x, v clamped."""
    dx = LENGTH / cells
    cell = np.minimum((x / dx).astype(np.int64), cells - 1)
    v = v_half - 0.5 * dt * field[cell]  # v at t_n
    sx = x * (X_BINS / LENGTH)
    left = np.minimum(sx.astype(np.int64), X_BINS - 1)
    wx = sx - left
    right = np.where(left + 1 == X_BINS, 0, left + 1)
    bv = 2 * V_MAX / V_BINS
    sv = np.clip((v + V_MAX) / bv - 0.5, 0.0, V_BINS - 1)
    low = np.minimum(sv.astype(np.int64), V_BINS - 1)
    wv = sv - low
    high = np.minimum(low + 1, V_BINS - 1)
    f = np.zeros((X_BINS, V_BINS))
    for ix, wxi in ((left, 1 - wx), (right, wx)):
        for iv, wvi in ((low, 1 - wv), (high, wv)):
            np.add.at(f, (ix, iv), wxi * wvi)
    f -= f.mean(axis=0, keepdims=True)
    return f * (X_BINS * V_BINS / particles)


def check_iteration(it, step, dt, cells, ranks, particles):
    attribute(it, "time", "f8", step * dt)
    attribute(it, "dt", "f8", dt)
    attribute(it, "timeUnitSI", "f8", 1.0)

    e = it["meshes/E"]
    attribute(e, "geometry", "str", "cartesian")
    attribute(e, "dataOrder", "str", "C")
    attribute(e, "axisLabels", "str", ["x"])
    attribute(e, "gridSpacing", "f8", [LENGTH / cells], rtol=1e-15)
    attribute(e, "gridGlobalOffset", "f8", [0.0])
    attribute(e, "gridUnitSI", "f8", 1.0)
    attribute(e, "unitDimension", "f8", E_DIMENSION)
    attribute(e, "timeOffset", "f4", 0.0)
    attribute(e["x"], "unitSI", "f8", 1.0)
    attribute(e["x"], "position", "f8", [0.5])
    field = dataset(e["x"], "f8", (cells,))
    expect(np.all(np.isfinite(field)) and abs(field.mean()) < 1e-12 * (1 + abs(field).max()),
           f"{e.name}/x is not a periodic field with zero mean")

    electrons = it["particles/electrons"]
    for name, dimension, offset in (("position", [1, 0, 0, 0, 0, 0, 0], 0.0),
                                    ("momentum", [1, 1, -1, 0, 0, 0, 0], -0.5 * dt)):
        record = electrons[name]
        attribute(record, "unitDimension", "f8", dimension)
        attribute(record, "timeOffset", "f4", offset)
        attribute(record["x"], "unitSI", "f8", 1.0)
    x = dataset(electrons["position/x"], "f8", (particles,))
    v = dataset(electrons["momentum/x"], "f8", (particles,))
    expect(np.all((x >= 0) & (x < LENGTH)), "a position is outside the box")
    constant(electrons["positionOffset/x"], 0.0, particles)
    constant(electrons["charge"], -1.0, particles)
    constant(electrons["mass"], 1.0, particles)
    constant(electrons["weighting"], LENGTH / particles, particles)
    attribute(electrons["weighting"], "macroWeighted", "i8", 1)

    samples = it["meshes/phase_space_samples"]
    attribute(samples, "geometry", "str", "cartesian")
    attribute(samples, "axisLabels", "str", ["sample", "column"])
    attribute(samples, "unitDimension", "f8", [0.0] * 7)
    columns = X_BINS * V_BINS + cells
    rows = dataset(samples, "f4", (X_BINS, columns))
    for name, value in (("x_bins", X_BINS), ("v_bins", V_BINS), ("cells", cells),
                        ("input_columns", X_BINS * V_BINS), ("target_columns", cells)):
        attribute(samples, name, "i8", value)
    attribute(samples, "v_max", "f8", V_MAX)

    # Row r: rank q's translations b = q, q + ranks, ..., rank-major.
    shifts = [b for q in range(ranks) for b in range(q, X_BINS, ranks)]
    df = bin_phase_space(x, v, field, cells, dt, particles)
    scale = np.abs(df).max()
    for r, b in enumerate(shifts):
        target = np.roll(field, b * (cells // X_BINS)).astype("f4")
        expect(np.array_equal(rows[r, X_BINS * V_BINS:], target),
               f"{samples.name} row {r}: the target is not E translated by {b} x-bins")
        got = rows[r, :X_BINS * V_BINS].reshape(X_BINS, V_BINS).astype("f8")
        wanted = np.roll(df, b, axis=0)
        worst = np.abs(got - wanted).max()
        expect(worst <= 1e-6 * scale + 1e-12,
               f"{samples.name} row {r}: the input differs from the particles' phase space by "
               f"{worst:.3g} (largest value {scale:.3g})")
    return {"meshes/E/x": field, "particles/electrons/position/x": x,
            "particles/electrons/momentum/x": v, "meshes/phase_space_samples": rows.ravel()}


def check_echo(values, prefix, ranks, step):
    """Every element each rank wrote in its last step, against the file."""
    seen = {name: np.zeros(len(array), dtype=bool) for name, array in values.items()}
    for rank in range(ranks):
        path = f"{prefix}{rank}.csv"
        with open(path) as f:
            for row in csv.DictReader(f):
                expect(int(row["step"]) == step, f"{path}: step {row['step']}, expected {step}")
                name, index = row["component"], int(row["index"])
                array = values[name]
                value = np.array(float(row["value"])).astype(array.dtype)
                expect(array[index] == value, f"{name}[{index}] is {array[index]!r} in the file, "
                       f"{value.item()!r} as written")
                seen[name][index] = True
    for name, marks in seen.items():
        expect(marks.all(), f"{name}: {int((~marks).sum())} elements no rank wrote")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file")
    parser.add_argument("echo_prefix")
    parser.add_argument("--steps", required=True)
    parser.add_argument("--ranks", type=int, required=True)
    parser.add_argument("--cells", type=int, default=64)
    parser.add_argument("--particles", type=int, default=64000)
    parser.add_argument("--dt", type=float, default=0.1)
    args = parser.parse_args()
    steps = [int(s) for s in args.steps.split(",")]
    try:
        with h5py.File(args.file, "r") as f:
            check_root(f)
            held = sorted(int(k) for k in f["data"].keys())
            expect(held == steps, f"the file holds iterations {held}, expected {steps}")
            for step in steps:
                values = check_iteration(f[f"data/{step}"], step, args.dt, args.cells,
                                         args.ranks, args.particles)
            check_echo(values, args.echo_prefix, args.ranks, steps[-1])
    except Mismatch as e:
        print(f"check_stream_dump.py: {args.file}: {e}", file=sys.stderr)
        return 1
    print(f"ok: {len(steps)} iterations, every attribute, the last one element by element "
          f"against {args.ranks} ranks' echo, every sample against the particles")
    return 0


if __name__ == "__main__":
    sys.exit(main())
