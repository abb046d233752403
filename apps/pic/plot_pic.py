"""The figures of slipstream-pic's closed loop, and its check.

Reads what `slipstream-pic --csv diagnostics.csv --csv-model model.csv` wrote in PIC_DIR and writes
into figures/ (under the working directory: this process's folder when the launcher runs it):

  field_energy.png   the field energy over time against linear theory's growth, e^(2 gamma t)
                     (the rate from the dispersion relation, in model.csv's first line)
  model_error.png    the relative L2 error of the model the trainer published, called by the
                     simulation, against the solver's field, with the untrained model's error at
                     the same steps, the trained model's error on a state kept from the linear
                     phase (the probe: does it remember?), and the version that ran

It also writes headlines.json, the numbers the launcher's report shows first: the measured growth
rate against linear theory, the trained model's final error against the untrained one's, the
last model version that ran, and the check's verdict.

With --check it exits 1 unless the trained model ran, got newer, and its final error (the median
of the last three calls) is below MAX_ERROR_RATIO times the untrained model's at the same steps.

Usage: python3 plot_pic.py PIC_DIR [--check] [--max-error-ratio 0.2]"""
import argparse
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def read_csv(path):
    """{column: numpy array} and the comment lines of a CSV with a header row."""
    comments, lines = [], []
    with open(path) as f:
        for line in f:
            (comments if line.startswith("#") else lines).append(line.strip())
    if not lines:
        raise SystemExit(f"plot_pic.py: {path} has no header")
    names = lines[0].split(",")
    rows = [[float(v) for v in line.split(",")] for line in lines[1:] if line]
    values = np.array(rows, dtype=float).reshape(-1, len(names))
    return {name: values[:, i] for i, name in enumerate(names)}, comments


def header_value(comments, key):
    """A key=value of the comment lines, as a float."""
    for line in comments:
        for word in line.replace(";", " ").split():
            if word.startswith(key + "="):
                return float(word.split("=", 1)[1])
    raise SystemExit(f"plot_pic.py: no {key}= in the CSV's first lines")


def linear_window(t, amplitude):
    """The fit window of slipstream-pic's growth rate: from 10 x the initial amplitude to 1/10
    of the maximum (theory.hpp, fit_growth_rate)."""
    start = np.argmax(amplitude >= 10 * amplitude[0])
    end = np.argmax(amplitude >= amplitude.max() / 10)
    return t[start], t[end]


def measured_growth_rate(t, amplitude):
    """The growth rate as slipstream-pic fits it (theory.cpp, fit_growth_rate): the slope of
    ln|E_k| over the samples from 10 x the first amplitude to 1/10 of the maximum; None when that
    window has fewer than 10 samples."""
    peak = int(np.argmax(amplitude))
    begin = 0
    while begin < peak and amplitude[begin] < 10 * amplitude[0]:
        begin += 1
    end = begin
    while end < peak and amplitude[end] < amplitude[peak] / 10:
        end += 1
    if end < begin + 10 or not amplitude[0] > 0:
        return None
    return float(np.polyfit(t[begin:end], np.log(amplitude[begin:end]), 1)[0])


def headlines(diagnostics, rate, calls, passed):
    """The entries of headlines.json (see the launcher's report, make_report.py)."""
    out = []
    measured = measured_growth_rate(diagnostics["time"], diagnostics["mode_amplitude"])
    if measured is not None:
        out.append({"name": "growth rate", "value": measured, "unit": "omega_p",
                    "reference": rate, "reference_name": "linear theory",
                    "note": "fit of ln|E_k| over the linear phase"})
    ran = calls["version"] > 0
    if ran.sum() >= 1:
        final = float(np.median(calls["error"][ran][-3:]))
        entry = {"name": "trained model's error", "value": final,
                 "note": "relative L2 error of the field, median of the last 3 calls"}
        base = calls["baseline_error"][ran]
        if np.all(base >= 0):
            entry.update(reference=float(np.median(base[-3:])),
                         reference_name="untrained model")
        out.append(entry)
        out.append({"name": "last model version that ran", "value": int(calls["version"][ran][-1])})
    out.append({"name": "closed-loop check", "value": "passed" if passed else "failed"})
    return out


def plot_field_energy(diagnostics, rate, path):
    t, energy = diagnostics["time"], diagnostics["field_energy"]
    t0, t1 = linear_window(t, diagnostics["mode_amplitude"])
    middle = 0.5 * (t0 + t1)
    anchor = np.interp(middle, t, energy)
    theory = anchor * np.exp(2 * rate * (t - middle))
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.semilogy(t, energy, label="field energy $W_E$ (PIC)")
    shown = theory <= 3 * energy.max()
    label = f"linear theory $\\propto e^{{2\\gamma t}}$, $\\gamma$ = {rate:.4f} $\\omega_p$"
    ax.semilogy(t[shown], theory[shown], "--", label=label)
    ax.axvspan(t0, t1, color="0.9", label="linear phase (the fit window)")
    ax.set_xlabel(r"time $t\ \omega_p$")
    ax.set_ylabel("field energy (normalised units)")
    ax.set_title("Two-stream instability: growth, saturation, trapping")
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_model_error(calls, diagnostics, probe_step, path):
    ran = calls["version"] > 0
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 6), sharex=True,
                                      gridspec_kw={"height_ratios": [3, 1]})
    if np.any(calls["baseline_error"] >= 0):
        base = calls["baseline_error"] >= 0
        top.semilogy(calls["time"][base], calls["baseline_error"][base], "o-", ms=3,
                     color="tab:gray", label="untrained model")
    top.semilogy(calls["time"][ran], calls["error"][ran], "o-", ms=3, color="tab:red",
                 label="model published by the trainer")
    probed = calls["probe_error"] >= 0
    if np.any(probed):
        probe_time = calls["time"][calls["step"] >= probe_step][0]
        top.semilogy(calls["time"][probed], calls["probe_error"][probed], "--", color="tab:green",
                     label=f"the same, on the state of t = {probe_time:g} (does it remember?)")
    top.set_ylabel(r"relative error $\|E_{model} - E\| / \|E\|$")
    top.set_title("The learned field solve, called by the simulation while it trains")
    top.grid(True, which="major", alpha=0.3)
    energy = top.twinx()
    energy.semilogy(diagnostics["time"], diagnostics["field_energy"], color="tab:blue", alpha=0.25)
    energy.set_ylabel("field energy (blue)", color="tab:blue", alpha=0.6)
    top.legend(loc="upper right", fontsize="small")
    bottom.plot(calls["time"][ran], calls["version"][ran], ".", color="tab:red")
    bottom.set_ylabel("version")
    bottom.set_xlabel(r"time $t\ \omega_p$")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def check(calls, probe_step, max_ratio):
    """(passed, lines that say why)."""
    ran = calls["version"] > 0
    if ran.sum() < 3:
        return False, [f"the trained model ran {int(ran.sum())} times (3 needed)"]
    versions = calls["version"][ran]
    error = calls["error"][ran]
    final = float(np.median(error[-3:]))
    first = float(error[0])
    lines = [f"trained model: {int(ran.sum())} calls, versions {int(versions[0])} .. "
             f"{int(versions[-1])}, first error {first:.4g}, final error {final:.4g} "
             "(median of the last 3 calls)"]
    passed = versions[-1] > versions[0]
    if not passed:
        lines.append("the version never changed")
    probe = calls["probe_error"][ran]
    if np.any(probe >= 0):
        lines.append(f"on the probe state (kept from step {int(probe_step)} on): final error "
                     f"{float(np.median(probe[-3:])):.4g} (median of the last 3 calls; reported, "
                     "not checked)")
    base = calls["baseline_error"][ran]
    if np.all(base >= 0):
        baseline = float(np.median(base[-3:]))
        ratio = final / baseline
        lines.append(f"untrained model at the same steps: {baseline:.4g} (median of all calls "
                     f"{float(np.median(calls['baseline_error'])):.4g}); final / untrained = "
                     f"{ratio:.4g}, allowed < {max_ratio}")
        passed = passed and ratio < max_ratio
    else:
        lines.append("no untrained baseline (slipstream-pic --baseline-model): not compared")
        passed = False
    return passed, lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pic_dir")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--max-error-ratio", type=float, default=0.2)
    args = parser.parse_args()
    diagnostics, _ = read_csv(os.path.join(args.pic_dir, "diagnostics.csv"))
    calls, comments = read_csv(os.path.join(args.pic_dir, "model.csv"))
    rate = header_value(comments, "growth_rate_theory")
    os.makedirs("figures", exist_ok=True)
    plot_field_energy(diagnostics, rate, os.path.join("figures", "field_energy.png"))
    probe_step = header_value(comments, "probe_step")
    plot_model_error(calls, diagnostics, probe_step, os.path.join("figures", "model_error.png"))
    passed, lines = check(calls, probe_step, args.max_error_ratio)
    with open("summary.txt", "w") as f:
        f.write("\n".join(lines) + "\n")
    with open("headlines.json", "w") as f:
        json.dump(headlines(diagnostics, rate, calls, passed), f, indent=1)
    print("\n".join(lines))
    print("wrote figures/field_energy.png and figures/model_error.png")
    if args.check:
        print("check: " + ("ok" if passed else "FAILED"))
        return 0 if passed else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
