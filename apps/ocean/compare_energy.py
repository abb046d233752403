"""Checks that two slipstream-ocean CSV files (--csv) have the same energy figures: the same rows,
every *_energy column within 1e-5 relative. Used to compare a TorchScript closure with the same
closure as ONNX (float32 models of the same weights whose answers feed back into the flow, so
not bit for bit).

Usage: compare_energy.py A.csv B.csv"""
import csv
import sys


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def main(a_path, b_path):
    a_rows, b_rows = rows(a_path), rows(b_path)
    if len(a_rows) != len(b_rows) or len(a_rows) < 3:
        sys.exit(f"{a_path} has {len(a_rows)} rows, {b_path} {len(b_rows)}")
    energy = [k for k in a_rows[0] if k.endswith("energy")]
    if not energy:
        sys.exit(f"no energy column in {list(a_rows[0])}")
    for a, b in zip(a_rows, b_rows):
        for k in energy:
            x, y = float(a[k]), float(b[k])
            if abs(x - y) > 1e-5 * max(abs(x), abs(y), 1e-30):
                sys.exit(f"step {a['step']}: {k} {x} in {a_path}, {y} in {b_path}")
    print(f"{len(energy)} energy columns equal within 1e-5 over {len(a_rows)} rows")


if __name__ == "__main__":
    main(*sys.argv[1:3])
