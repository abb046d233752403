#!/usr/bin/python3
"""The compare step of experiment.toml: checks the ensemble and draws its figures.

Checks (exit 1 with a FAIL line if any fails):
- every member's log says it used the server closure with the expected model and its own key
  prefix, and its CSV has a non-zero inference fraction (it really called the server);
- on the server, each member's features are stored under MEMBER.ocean.features (and differ
  between members, whose forcings differ), and nothing under the unprefixed ocean.features;
- the learned closure beats predicting the mean on held-out data (train/metrics.json).

Headline numbers (headlines.json, shown first by the launcher's report): each forcing-1.0
member's final energy with each closure against the truth, and the closure's held-out error.

Figures (figures/, picked up by the launcher's report): total energy of the coarse members with
the learned closure against the high-resolution truth and coarse runs with the analytic closure
and with none (run here, the same steps); the inference cost as a fraction of the step time.
"""
import argparse
import csv
import json
import os
import subprocess
import sys

import numpy as np

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

FAILURES = []


def check(ok, what):
    print(("PASS " if ok else "FAIL ") + what, flush=True)
    if not ok:
        FAILURES.append(what)


def read_csv(path):
    with open(path) as f:
        rows = list(csv.DictReader(f))
    return {k: np.array([float(r[k]) for r in rows]) for k in rows[0]}


def coarse_run(closure, forcing, steps):
    """A coarse run without the server (slipstream-ocean on PATH); None if it blew up."""
    path = f"coarse_{closure}_{forcing}.csv"
    r = subprocess.run(["slipstream-ocean", "--steps", str(steps), "--forcing", str(forcing),
                        "--closure", closure, "--csv", path, "--csv-every", "135"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        print(f"coarse run --closure {closure} --forcing {forcing} failed: {r.stderr.strip()}")
        return None
    return read_csv(path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--members", required=True, help="comma-separated member names")
    ap.add_argument("--forcings", required=True, help="their forcings, same order")
    ap.add_argument("--truth", required=True, help="the truth run's CSV")
    ap.add_argument("--metrics", required=True, help="train_closure.py's metrics.json")
    ap.add_argument("--model", default="ocean.closure")
    ap.add_argument("--steps", type=int, required=True, help="steps of a member")
    args = ap.parse_args()
    members = args.members.split(",")
    forcings = [float(f) for f in args.forcings.split(",")]
    os.makedirs("figures", exist_ok=True)

    # 1. The logs and CSVs: which closure and prefix each member used.
    runs = {}
    for name in members:
        with open(f"../{name}/{name}.out") as f:
            log = f.read()
        expected = f'server closure: model {args.model}, key prefix "{name}"'
        check(expected in log, f"{name} log says: {expected}")
        runs[name] = read_csv(f"../{name}/member.csv")
        frac = runs[name]["inference_fraction"][1:]
        check(len(frac) > 0 and np.all(frac > 0), f"{name} CSV: inference fraction > 0 in every "
              f"row (median {np.median(frac):.3f})")

    # 2. The server: each member's keys under its own prefix, none unprefixed.
    import slipstream
    client = slipstream.Client()
    seen = []
    for name in members:
        key = f"{name}.ocean.features"
        exists = client.tensor_exists(key)
        check(exists, f"server holds {key}")
        if exists:
            seen.append(np.asarray(client.get_tensor(key)).copy())
        check(client.tensor_exists(f"{name}.ocean.log_eke"), f"server holds {name}.ocean.log_eke")
    check(not client.tensor_exists("ocean.features"), "no unprefixed ocean.features on the server")
    if len(seen) == len(members):
        distinct = all(not np.array_equal(seen[i], seen[j])
                       for i in range(len(seen)) for j in range(i + 1, len(seen)))
        check(distinct, "members' last features differ (each wrote its own)")

    # 3. Training quality.
    with open(args.metrics) as f:
        m = json.load(f)
    check(m["heldout_mse"] < m["baseline_mse"],
          f"held-out MSE {m['heldout_mse']:.3f} < baseline (mean) {m['baseline_mse']:.3f}; "
          f"train {m['train_mse']:.3f}")

    # 4. Figures: energy against the truth, and the inference fraction.
    truth = read_csv(args.truth)
    # The truth may run longer than the members: compare on the members' time span.
    t_end = max(r["time"][-1] for r in runs.values())
    keep = truth["time"] <= t_end * (1 + 1e-9)
    truth = {k: v[keep] for k, v in truth.items()}
    colours = plt.cm.viridis(np.linspace(0, 0.85, len(members)))
    fig, ax = plt.subplots(figsize=(8, 5))
    ax.plot(truth["time"] / 86400, truth["total_energy"], color="k", lw=2.5,
            label="truth 80x80 (forcing 1.0)")
    summary = []
    for name, forcing, c in zip(members, forcings, colours):
        r = runs[name]
        ax.plot(r["time"] / 86400, r["total_energy"], color=c, lw=1.8,
                label=f"{name}: learned, forcing {forcing}")
        for closure, style in (("analytic", "--"), ("none", ":")):
            b = coarse_run(closure, forcing, args.steps)
            if b is not None:
                ax.plot(b["time"] / 86400, b["total_energy"], color=c, ls=style, lw=1,
                        label=f"{closure}, forcing {forcing}")
                summary.append((name, closure, forcing, b["total_energy"][-1]))
        summary.append((name, "learned", forcing, r["total_energy"][-1]))
    ax.set_xlabel("day")
    ax.set_ylabel("total energy (J)")
    ax.set_title("Coarse 40x40 runs (learned closure via the server) against the truth")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig("figures/energy.png", dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(8, 4))
    for name, c in zip(members, colours):
        r = runs[name]
        ax.plot(r["time"][1:] / 86400, r["inference_fraction"][1:], color=c, label=name)
    ax.set_xlabel("day")
    ax.set_ylabel("server call time / step time")
    ax.set_ylim(0, 1)
    ax.set_title("Inference cost of the learned closure (one round trip per step)")
    ax.legend()
    fig.tight_layout()
    fig.savefig("figures/inference_fraction.png", dpi=110)
    plt.close(fig)

    e_truth = np.interp(t_end, truth["time"], truth["total_energy"])
    with open("summary.txt", "w") as f:
        lines = [f"truth (80x80, forcing 1.0) total energy at day {t_end / 86400:.1f}: "
                 f"{e_truth:.4e} J"]
        for name, closure, forcing, e in summary:
            rel = f", {e / e_truth - 1:+.1%} vs truth" if forcing == 1.0 else ""
            lines.append(f"{name} forcing {forcing} {closure:8s} final energy {e:.4e} J{rel}")
        for name in members:
            lines.append(f"{name} median inference fraction "
                         f"{np.median(runs[name]['inference_fraction'][1:]):.3f}")
        lines.append(f"training: train MSE {m['train_mse']:.3f}, held-out {m['heldout_mse']:.3f}, "
                     f"baseline {m['baseline_mse']:.3f}")
        f.write("\n".join(lines) + "\n")
    print(open("summary.txt").read())
    # The launcher's report shows these first: energy against the truth, and the closure's skill.
    heads = [{"name": f"{name}: {'no' if closure == 'none' else closure} closure, final energy",
              "value": float(e), "unit": "J",
              "reference": float(e_truth), "reference_name": "truth (80x80)"}
             for name, closure, forcing, e in summary if forcing == 1.0]
    heads.append({"name": "closure held-out MSE", "value": float(m["heldout_mse"]),
                  "reference": float(m["baseline_mse"]), "reference_name": "predicting the mean"})
    heads.append({"name": "checks", "value": "failed" if FAILURES else "passed"})
    with open("headlines.json", "w") as f:
        json.dump(heads, f, indent=1)
    if FAILURES:
        print(f"compare: {len(FAILURES)} check(s) failed")
        return 1
    print("compare: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
