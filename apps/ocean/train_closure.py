#!/usr/bin/python3
"""Trains the learned EKE closure of slipstream-ocean offline and writes it as TorchScript.

Input: training files written by `slipstream-ocean --coarse-grain F --features-out FILE` (format
in README.md: per coarse cell mke, slope, vorticity, rd_over_dx, log_eke). Output:

- closure.pt: forward(x) takes raw features, (N, 4) float32 or the flat (4N,) cell-major
  buffer the Fortran side sends (the same bytes), and returns log EKE of shape (N,). The
  normalisation is inside the module, so the model is self-contained and Fortran sends raw values.
- analytic.pt (--analytic): analytic_log_eke of ocean_model.f90 as TorchScript, for checking the
  layout end to end (`slipstream-ocean --closure server --check-analytic TOL`).
- closure.onnx (--onnx FILE): the same closure exported to ONNX (opset 17, the flat input of any
  length), for servers and programs that take ONNX models (`--closure server` with it stored as
  backend ONNX, `--closure local --model-file closure.onnx`).
- metrics.json: train / held-out MSE and the predict-the-mean baseline.

With --store NAME the model is stored on the server (SSDB) through the Python client (the ONNX
file, as backend ONNX, when --onnx is given).
Exit status 1 if the held-out MSE is not below the baseline (the model learnt nothing useful).
"""
import argparse
import json
import sys

import numpy as np
import torch

MAGIC = b"SSOCEKE1"
# Floors of the log transform of the positive features: far below the values a run produces
# (README: MKE >= 6.6e-8 m2/s2, slope >= 1.6e-6) but keeping exact zeros (a fluid at rest) finite.
MKE_FLOOR, SLOPE_FLOOR = 1e-12, 1e-12


def read_training_file(path):
    """Returns (snapshots, cells, 5) float32 and the header fields."""
    with open(path, "rb") as f:
        magic = f.read(8)
    if magic != MAGIC:
        raise SystemExit(f"{path}: not a slipstream-ocean training file (magic {magic!r})")
    header_bytes, nvalues, ncx, ncy, factor, nsnap = np.fromfile(path, "<i4", 6, offset=8)
    if nvalues != 5:
        raise SystemExit(f"{path}: {nvalues} values per cell, expected 5")
    rec = np.dtype([("step", "<i8"), ("time", "<f8"), ("x", "<f4", (ncx * ncy, 5))])
    data = np.fromfile(path, rec, offset=header_bytes)
    if len(data) != nsnap:
        raise SystemExit(f"{path}: header says {nsnap} snapshots, file holds {len(data)}")
    return data["x"], dict(ncx=int(ncx), ncy=int(ncy), factor=int(factor), snapshots=int(nsnap))


class Closure(torch.nn.Module):
    """Raw features -> log EKE, with the feature transform and scaling as buffers."""

    def __init__(self, mean, std, target_mean, target_std, hidden=32):
        super().__init__()
        self.register_buffer("mean", torch.as_tensor(mean, dtype=torch.float32))
        self.register_buffer("std", torch.as_tensor(std, dtype=torch.float32))
        self.register_buffer("target_mean", torch.tensor(float(target_mean)))
        self.register_buffer("target_std", torch.tensor(float(target_std)))
        self.net = torch.nn.Sequential(
            torch.nn.Linear(4, hidden), torch.nn.SiLU(),
            torch.nn.Linear(hidden, hidden), torch.nn.SiLU(),
            torch.nn.Linear(hidden, 1))

    @staticmethod
    def transform(x: torch.Tensor) -> torch.Tensor:
        # MKE, slope and Rd/dx are positive and span decades: their logs; vorticity is signed
        # and roughly symmetric: left linear (scaled by the standardisation below).
        mke = torch.log(torch.clamp(x[:, 0], min=0.0) + 1e-12)
        slope = torch.log(torch.clamp(x[:, 1], min=0.0) + 1e-12)
        rd = torch.log(torch.clamp(x[:, 3], min=1e-6))
        return torch.stack([mke, slope, x[:, 2], rd], dim=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # The Fortran side sends features(4, ncell) as one flat buffer: cell-major, i.e. C [N][4].
        x = x.reshape(-1, 4).to(torch.float32)
        z = (self.transform(x) - self.mean) / self.std
        return self.net(z).squeeze(1) * self.target_std + self.target_mean


class Analytic(torch.nn.Module):
    """analytic_log_eke of ocean_model.f90: ln(1e-6 + MKE / (1 + (Rd/dx)^2))."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.reshape(-1, 4).to(torch.float64)
        mke = torch.clamp(x[:, 0], min=0.0)
        return torch.log(1e-6 + mke / (1 + x[:, 3] ** 2)).to(torch.float32)


def export_onnx(module, path):
    """`module` (a closure or the analytic model) as ONNX: the flat cell-major input the Fortran
    side sends, of any length."""
    torch.onnx.export(module.eval(), torch.ones(4 * 3), path, opset_version=17,
                      input_names=["features"], output_names=["log_eke"],
                      dynamic_axes={"features": {0: "values"}, "log_eke": {0: "cells"}})


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+", help="training files (--features-out)")
    ap.add_argument("--out", default="closure.pt")
    ap.add_argument("--analytic", default="", help="also write the analytic model here")
    ap.add_argument("--onnx", default="", help="also write the closure as ONNX here")
    ap.add_argument("--metrics", default="metrics.json")
    ap.add_argument("--epochs", type=int, default=300)
    ap.add_argument("--hidden", type=int, default=32)
    ap.add_argument("--holdout", type=float, default=0.25,
                    help="fraction of snapshots, the latest, held out")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--store", default="", help="store closure.pt on the server (SSDB) as NAME")
    ap.add_argument("--store-analytic", default="", help="store the analytic model as NAME")
    args = ap.parse_args()
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)  # a small model on a shared machine: threads only add overhead

    snaps = [read_training_file(f)[0] for f in args.files]
    data = np.concatenate(snaps, axis=0)               # (snapshots, cells, 5)
    nsnap = data.shape[0]
    if nsnap < 2:
        raise SystemExit("need at least 2 snapshots (one to train on, one held out)")
    # Hold out whole snapshots, the latest ones: neighbouring cells of one snapshot are strongly
    # correlated, so a random split of cells would flatter the held-out score.
    n_hold = max(1, int(round(args.holdout * nsnap)))
    train = data[:-n_hold].reshape(-1, 5)
    held = data[-n_hold:].reshape(-1, 5)
    x_tr, y_tr = torch.from_numpy(train[:, :4].copy()), torch.from_numpy(train[:, 4].copy())
    x_ho, y_ho = torch.from_numpy(held[:, :4].copy()), torch.from_numpy(held[:, 4].copy())

    z = Closure.transform(x_tr)
    mean, std = z.mean(0), z.std(0).clamp(min=1e-6)
    model = Closure(mean, std, y_tr.mean(), y_tr.std().clamp(min=1e-6), args.hidden)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, args.epochs)
    batch = 4096
    for epoch in range(args.epochs):
        perm = torch.randperm(len(x_tr))
        for i in range(0, len(x_tr), batch):
            idx = perm[i:i + batch]
            loss = torch.mean((model(x_tr[idx]) - y_tr[idx]) ** 2)
            opt.zero_grad()
            loss.backward()
            opt.step()
        sched.step()

    with torch.no_grad():
        train_mse = float(torch.mean((model(x_tr) - y_tr) ** 2))
        held_mse = float(torch.mean((model(x_ho) - y_ho) ** 2))
        baseline = float(torch.mean((y_tr.mean() - y_ho) ** 2))
    metrics = dict(samples_train=len(x_tr), samples_heldout=len(x_ho), snapshots=nsnap,
                   train_mse=train_mse, heldout_mse=held_mse, baseline_mse=baseline,
                   heldout_over_baseline=held_mse / baseline)
    print(f"train_closure: {nsnap} snapshots, {len(x_tr)} train / {len(x_ho)} held-out samples")
    print(f"train_closure: MSE of log EKE: train {train_mse:.4f}, held-out {held_mse:.4f}, "
          f"baseline (training mean) {baseline:.4f}, ratio {held_mse / baseline:.3f}")

    scripted = torch.jit.script(model)
    # The layout the Fortran side sends: the flat buffer must give the same answer as (N, 4).
    with torch.no_grad():
        flat = scripted(x_ho.reshape(-1))
        assert torch.equal(flat, scripted(x_ho)) and flat.shape == (len(x_ho),)
    scripted.save(args.out)
    print(f"train_closure: wrote {args.out}")
    if args.onnx:
        export_onnx(model, args.onnx)
        print(f"train_closure: wrote {args.onnx}")
    if args.analytic:
        torch.jit.script(Analytic()).save(args.analytic)
        print(f"train_closure: wrote {args.analytic}")
    with open(args.metrics, "w") as f:
        json.dump(metrics, f, indent=1)

    if args.store or args.store_analytic:
        import slipstream  # the Python client; SSDB gives the server
        client = slipstream.Client()
        if args.store:
            stored = args.onnx or args.out
            client.set_model_from_file(args.store, stored, backend="ONNX" if args.onnx else "TORCH",
                                       device="CPU")
            print(f"train_closure: stored {stored} as model {args.store}")
        if args.store_analytic:
            client.set_model_from_file(args.store_analytic, args.analytic, backend="TORCH",
                                       device="CPU")
            print(f"train_closure: stored {args.analytic} as model {args.store_analytic}")

    if not held_mse < baseline:
        print("train_closure: FAIL: held-out MSE is not below the predict-the-mean baseline")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
