#!/usr/bin/python3
"""The report of one `slipstream run`: `make_report.py RUN_DIR` reads RUN_DIR/status.json and the
launcher's metrics (RUN_DIR/metrics/*.csv) and writes RUN_DIR/report/:

  index.html    one self-contained page (no network): the summary and every figure
  *.png         the figures (matplotlib, Agg backend)
  summary.txt   the same summary as plain text
  status.json   a copy of the run's status
  metrics/      copies of the raw CSVs

The report is owner-only (folders 0700, files 0600), as the rest of the run directory.

Any metrics file may be missing or empty: its figures are then replaced by a sentence saying that
there was no such data (or only one sample, too few to draw a line). The first screen carries the
run's headline numbers: those each process wrote in its folder's headlines.json (see
application_headlines) and the versions and last losses of each trainer. Exit status: 0 when the report was written; 2 (with a message on stderr)
when RUN_DIR or its status.json is missing or unreadable; 1 when the report could not be written.

Run it with Debian's interpreter (/usr/bin/python3) and package python3-matplotlib.
"""
import csv
import html
import json
import math
import os
import shutil
import sys
from collections import OrderedDict

PROG = "make_report"

LATENCY_CAPTION = ("Model runs' latencies as each server measured them, from the request to the "
                   "result (queue, batching and run), counted in buckets between powers of two "
                   "microseconds; one histogram per server.")

# The figures, in page order: file name, title, and what is said when there is no data.
FIGURES = [
    ("timeline.png", "Processes",
     "No process of this run has started, so there is no timeline to draw."),
    ("server_throughput.png", "Server operations and network traffic",
     "There was no server throughput data (metrics/servers.csv is missing or has no rows)."),
    ("server_memory.png", "Server memory",
     "There was no server memory data (metrics/servers.csv is missing or has no rows)."),
    ("model_latency.png", "run_model latency",
     "There was no run_model latency data (metrics/models.csv is missing or has no rows with "
     "calls)."),
    ("stream_lag.png", "Stream lag",
     "There was no stream lag data (metrics/streams.csv is missing or has no rows)."),
    ("trainer_loss.png", "Trainer loss",
     "There was no trainer loss data (metrics/trainers.csv is missing or has no loss values)."),
    ("model_version.png", "Published model version",
     "There was no published model version data (metrics/trainers.csv is missing or has no "
     "published versions)."),
]

CAPTIONS = {
    "timeline.png": "Each process from its start to its end (seconds since the launcher started), "
                    "coloured by its final state. A process still running is drawn to the end of "
                    "the run; one that never started is listed but has no bar.",
    "server_throughput.png": "Top: commands executed per second by each server. Bottom: network "
                             "bytes per second received (in, solid) and sent (out, dashed) by "
                             "each server.",
    "server_memory.png": "Memory used by each server's keyspace (used_memory, solid) and by its "
                         "shared-memory segments (shm_used, dashed).",
    "model_latency.png": LATENCY_CAPTION,
    "stream_lag.png": "How many steps each stream consumer group is behind the newest step of "
                      "its stream.",
    "trainer_loss.png": "Training loss (solid) and validation loss (dashed) of each trainer; "
                        "log scale when every value is positive.",
    "model_version.png": "The version of the model each trainer has published.",
}

STATE_COLOURS = OrderedDict([
    ("done", "#2ca02c"),
    ("failed", "#d62728"),
    ("running", "#1f77b4"),
    ("stopped", "#ff7f0e"),
    ("skipped", "#7f7f7f"),
    ("waiting", "#bcbd22"),
])
OTHER_COLOUR = "#9467bd"

STDERR_LINES = 15
MAX_LEGEND = 16


class Fatal(Exception):
    pass


# ------------------------------------------------------------------------------------------------
# Reading


def read_csv(path):
    """The rows of a CSV file with a header row, as dicts; [] when it is missing, empty or
    unreadable (what was wrong is said on stderr)."""
    if not os.path.isfile(path):
        return []
    try:
        with open(path, newline="", encoding="utf-8", errors="replace") as f:
            reader = csv.DictReader(f)
            rows = []
            for row in reader:
                if row and any((v or "").strip() for v in row.values() if isinstance(v, str)):
                    rows.append({(k or "").strip(): (v.strip() if isinstance(v, str) else v)
                                 for k, v in row.items() if k is not None})
            return rows
    except (OSError, csv.Error) as error:
        print(f"{PROG}: cannot read {path}: {error}", file=sys.stderr)
        return []


def number(value):
    """A finite float, or None for an empty, unparsable or infinite cell."""
    if value is None:
        return None
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        x = float(value)
    else:
        text = str(value).strip()
        if not text:
            return None
        try:
            x = float(text)
        except ValueError:
            return None
    return x if math.isfinite(x) else None


def text(value, default=""):
    if value is None:
        return default
    return str(value)


def read_status(run_dir):
    if not os.path.isdir(run_dir):
        raise Fatal(f"{run_dir} is not a directory (no such run directory)")
    path = os.path.join(run_dir, "status.json")
    if not os.path.isfile(path):
        raise Fatal(f"{path} is missing: is {run_dir} a run directory of `slipstream run`?")
    try:
        with open(path, encoding="utf-8") as f:
            status = json.load(f)
    except (OSError, UnicodeDecodeError) as error:
        raise Fatal(f"cannot read {path}: {error}")
    except json.JSONDecodeError as error:
        raise Fatal(f"{path} is not valid JSON: {error}")
    if not isinstance(status, dict):
        raise Fatal(f"{path} is not a JSON object")
    processes = status.get("processes")
    status["processes"] = [p for p in processes if isinstance(p, dict)] \
        if isinstance(processes, list) else []
    return status


def stderr_tail(run_dir, process, lines=STDERR_LINES):
    """The last lines of a process's stderr log, and the log's path; (None, path) when there is no
    log."""
    name = text(process.get("name"))
    candidates = []
    own = text(process.get("run_dir"))
    if own:
        own = own if os.path.isabs(own) else os.path.join(run_dir, own)
        candidates.append(os.path.join(own, name + ".err"))
    candidates.append(os.path.join(run_dir, name, name + ".err"))
    for path in candidates:
        if not name or not os.path.isfile(path):
            continue
        try:
            with open(path, "rb") as f:
                f.seek(0, os.SEEK_END)
                size = f.tell()
                f.seek(max(0, size - 64 * 1024))
                data = f.read()
        except OSError:
            continue
        tail = data.decode("utf-8", errors="replace").splitlines()[-lines:]
        return "\n".join(tail), path
    return None, candidates[-1] if candidates else ""


# ------------------------------------------------------------------------------------------------
# The summary


def seconds_text(x):
    x = number(x)
    return "-" if x is None else f"{x:.1f}"


def process_rows(status):
    """One dict of display strings per process (the summary table's rows)."""
    total = number(status.get("seconds"))
    rows = []
    for p in status["processes"]:
        started, ended = number(p.get("started_s")), number(p.get("ended_s"))
        if started is not None and ended is not None:
            duration = seconds_text(max(0.0, ended - started))
        elif started is not None and total is not None:
            duration = seconds_text(max(0.0, total - started)) + " (not ended)"
        else:
            duration = "-"
        exit_code = p.get("exit_code")
        exit_text = "-" if exit_code is None or (isinstance(exit_code, (int, float))
                                                 and exit_code < 0) else text(exit_code)
        rows.append(OrderedDict([
            ("name", text(p.get("name"), "?")),
            ("kind", text(p.get("kind"), "-")),
            ("group", text(p.get("group")) or "-"),
            ("state", text(p.get("state"), "-")),
            ("attempts", text(p.get("attempts"), "-")),
            ("exit code", exit_text),
            ("start (s)", seconds_text(started)),
            ("end (s)", seconds_text(ended)),
            ("duration (s)", duration),
            ("run folder", text(p.get("run_dir")) or "-"),
            ("reason", text(p.get("reason"))),
        ]))
    return rows


def model_rows(models):
    """Per server and model: calls, errors and the call-weighted mean latency."""
    totals = OrderedDict()
    for r in models:
        key = (text(r.get("server")), text(r.get("model")))
        t = totals.setdefault(key, [0.0, 0.0, 0.0, 0.0])  # calls, errors, sum latency*calls, calls
        calls, errors, latency = number(r.get("calls")), number(r.get("errors")), \
            number(r.get("latency_us"))
        if calls is not None and calls > 0:
            t[0] += calls
            if latency is not None:
                t[2] += latency * calls
                t[3] += calls
        if errors is not None and errors > 0:
            t[1] += errors
    out = []
    for (server, model), (calls, errors, weighted, with_latency) in totals.items():
        out.append(OrderedDict([
            ("server", server or "-"),
            ("model", model or "-"),
            ("calls", f"{calls:.0f}"),
            ("errors", f"{errors:.0f}"),
            ("mean latency (us)", f"{weighted / with_latency:.1f}" if with_latency else "-"),
        ]))
    return out


HEADLINES_FILE = "headlines.json"
MAX_HEADLINES = 20  # per process: the first screen is for a few numbers


def number_text(x, unit=""):
    return f"{x:.4g}" + (f" {unit}" if unit else "")


def headline_row(source, quantity, value, against="", ratio="", note=""):
    return OrderedDict([("source", source), ("quantity", quantity), ("value", value),
                        ("against", against), ("ratio", ratio), ("note", note)])


def application_headlines(run_dir):
    """The numbers processes wrote for the report's first screen: RUN_DIR/PROCESS/headlines.json,
    a JSON list of {"name": str, "value": number or str, "unit": str, "reference": number,
    "reference_name": str, "note": str} (all but name and value optional). A file that cannot be
    read is reported in the table, not skipped silently."""
    rows = []
    for process in sorted(os.listdir(run_dir)):
        path = os.path.join(run_dir, process, HEADLINES_FILE)
        if process == "report" or not os.path.isfile(path):
            continue
        try:
            with open(path, encoding="utf-8") as f:
                entries = json.load(f)
            if not isinstance(entries, list):
                raise ValueError("it is not a JSON list")
        except (OSError, UnicodeDecodeError, ValueError) as error:
            rows.append(headline_row(process, HEADLINES_FILE, "unreadable", note=str(error)))
            continue
        for entry in entries[:MAX_HEADLINES]:
            name = entry.get("name") if isinstance(entry, dict) else None
            value = entry.get("value") if isinstance(entry, dict) else None
            if not isinstance(name, str) or not isinstance(value, (int, float, str)) or \
                    isinstance(value, bool):
                rows.append(headline_row(process, HEADLINES_FILE, "unreadable",
                                         note="an entry without a name and a number or text "
                                              "value"))
                continue
            unit = text(entry.get("unit"))
            x, reference = number(value), number(entry.get("reference"))
            shown = number_text(x, unit) if x is not None else text(value)
            against = ratio = ""
            if reference is not None:
                against = (text(entry.get("reference_name")) or "reference") + ": " + \
                    number_text(reference, unit)
                if x is not None and reference != 0:
                    ratio = f"{x / reference:.3g}"
            rows.append(headline_row(process, name, shown, against, ratio,
                                     text(entry.get("note"))))
    return rows


def trainer_headlines(trainers):
    """Per trainer: the model versions it published and its last losses (metrics/trainers.csv)."""
    last = OrderedDict()
    for r in trainers:
        t = last.setdefault(text(r.get("trainer")) or "?", {})
        for column in ("published_version", "train_loss", "validation_loss"):
            x = number(r.get(column))
            if x is not None:
                t[column] = max(x, t.get(column, x)) if column == "published_version" else x
    rows = []
    for trainer, t in last.items():
        if "published_version" in t:
            rows.append(headline_row(trainer, "model versions published",
                                     f"{t['published_version']:.0f}"))
        for column, quantity in (("train_loss", "last training loss"),
                                 ("validation_loss", "last validation loss")):
            if column in t:
                rows.append(headline_row(trainer, quantity, number_text(t[column])))
    return rows


def text_table(rows):
    if not rows:
        return "  (none)\n"
    headers = list(rows[0].keys())
    widths = [max(len(h), *(len(r[h]) for r in rows)) for h in headers]
    lines = ["  " + "  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip()]
    for r in rows:
        lines.append("  " + "  ".join(r[h].ljust(w) for h, w in zip(headers, widths)).rstrip())
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------------
# Figures


class NoData(Exception):
    """A figure with nothing to draw; its message, when given, replaces the figure's default
    sentence."""


ONE_SAMPLE = ("There was only one sample of this data (the run was shorter than the launcher's "
              "metrics interval, metrics_every_seconds), too few to draw a line.")


def require_lines(*series):
    """Raises NoData unless some series of the {name: (xs, ys)} dicts has two points or more: a
    line needs two, and a figure whose every series has one point would show axes and nothing
    else. Series of one point are drawn as markers (marker_for) beside the others."""
    counts = [len(xs) for s in series for xs, _ in s.values()]
    if not counts:
        raise NoData()
    if max(counts) < 2:
        raise NoData(ONE_SAMPLE)


def marker_for(xs):
    """A marker for a series of one point (a line of one point is not drawn), else none."""
    return "o" if len(xs) < 2 else None


def series_by(rows, key_fn, x_key, y_key):
    """{key: ([x...], [y...])} sorted by x, skipping rows whose x or y is not a number."""
    out = OrderedDict()
    for r in rows:
        x, y = number(r.get(x_key)), number(r.get(y_key))
        if x is None or y is None:
            continue
        xs, ys = out.setdefault(key_fn(r), ([], []))
        xs.append(x)
        ys.append(y)
    for key, (xs, ys) in out.items():
        order = sorted(range(len(xs)), key=xs.__getitem__)
        out[key] = ([xs[i] for i in order], [ys[i] for i in order])
    return out


def legend(ax, count, **kwargs):
    if count == 0:
        return
    if count <= MAX_LEGEND:
        ax.legend(fontsize="small", **kwargs)
    else:
        ax.text(0.99, 0.98, f"{count} series (too many to label)", transform=ax.transAxes,
                ha="right", va="top", fontsize="small")


def colour_cycle(i):
    import matplotlib
    colours = matplotlib.rcParams["axes.prop_cycle"].by_key().get("color", ["C0"])
    return colours[i % len(colours)]


def figure_timeline(plt, status, data):
    total = number(status.get("seconds"))
    procs = status["processes"]
    if not any(number(p.get("started_s")) is not None for p in procs):
        raise NoData()
    n = len(procs)
    height = min(40.0, max(2.5, 0.32 * n + 1.6))
    fig, ax = plt.subplots(figsize=(11, height))
    end_of_run = total if total is not None else max(
        (number(p.get("ended_s")) or number(p.get("started_s")) or 0.0) for p in procs)
    seen_states = OrderedDict()
    labels = []
    for i, p in enumerate(procs):
        state = text(p.get("state"), "?")
        colour = STATE_COLOURS.get(state, OTHER_COLOUR)
        started, ended = number(p.get("started_s")), number(p.get("ended_s"))
        labels.append(text(p.get("name"), "?"))
        if started is None:
            ax.text(0, i, f"  ({state}, never started)", va="center", fontsize="small",
                    color=colour)
            seen_states.setdefault(state, colour)
            continue
        if ended is None:
            ended = max(started, end_of_run)
        ax.barh(i, max(ended - started, end_of_run * 0.002 if end_of_run else 0.01),
                left=started, color=colour, edgecolor="black", linewidth=0.4, height=0.6)
        seen_states.setdefault(state, colour)
    ax.set_yticks(range(n))
    ax.set_yticklabels(labels, fontsize="small" if n < 40 else "x-small")
    ax.set_ylim(n - 0.5, -0.5)
    ax.set_xlim(left=0, right=max(end_of_run or 0, 1e-3) * 1.02)
    ax.set_xlabel("time since the launcher started (s)")
    ax.set_ylabel("process")
    ax.set_title("Processes: start to end, coloured by final state")
    from matplotlib.patches import Patch
    ax.legend(handles=[Patch(facecolor=c, edgecolor="black", label=s)
                       for s, c in seen_states.items()], fontsize="small", title="final state",
              loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return fig


def figure_throughput(plt, status, data):
    rows = data["servers"]
    server = lambda r: text(r.get("server")) or "?"
    ops = series_by(rows, server, "time_s", "ops_per_second")
    net_in = series_by(rows, server, "time_s", "net_input_bytes_per_second")
    net_out = series_by(rows, server, "time_s", "net_output_bytes_per_second")
    require_lines(ops, net_in, net_out)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(11, 7.5), sharex=True)
    for i, (name, (xs, ys)) in enumerate(ops.items()):
        top.plot(xs, ys, color=colour_cycle(i), marker=marker_for(xs), label=name)
    top.set_ylabel("operations per second (ops/s)")
    top.set_title("Server operations per second")
    legend(top, len(ops))
    if not ops:
        top.text(0.5, 0.5, "no operations data", ha="center", transform=top.transAxes)
    names = list(OrderedDict.fromkeys(list(net_in) + list(net_out)))
    scale, unit = byte_scale(max([max(ys) for _, ys in list(net_in.values()) +
                                  list(net_out.values())] + [0]))
    count = 0
    for i, name in enumerate(names):
        if name in net_in:
            xs, ys = net_in[name]
            bottom.plot(xs, [y / scale for y in ys], color=colour_cycle(i), marker=marker_for(xs),
                        label=f"{name} in")
            count += 1
        if name in net_out:
            xs, ys = net_out[name]
            bottom.plot(xs, [y / scale for y in ys], color=colour_cycle(i), linestyle="--",
                        marker=marker_for(xs), label=f"{name} out")
            count += 1
    bottom.set_ylabel(f"network traffic ({unit}/s)")
    bottom.set_xlabel("time since the launcher started (s)")
    bottom.set_title("Server network traffic in (solid) and out (dashed)")
    legend(bottom, count)
    if not names:
        bottom.text(0.5, 0.5, "no network data", ha="center", transform=bottom.transAxes)
    for ax in (top, bottom):
        ax.grid(alpha=0.3)
        ax.set_ylim(bottom=0)
    fig.tight_layout()
    return fig


def byte_scale(largest):
    for scale, unit in ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
        if largest >= 2 * scale:
            return scale, unit
    return 1, "bytes"


def figure_memory(plt, status, data):
    rows = data["servers"]
    server = lambda r: text(r.get("server")) or "?"
    used = series_by(rows, server, "time_s", "used_memory_bytes")
    shm = series_by(rows, server, "time_s", "shm_used_bytes")
    require_lines(used, shm)
    scale, unit = byte_scale(max([max(ys) for _, ys in list(used.values()) +
                                  list(shm.values())] + [0]))
    fig, ax = plt.subplots(figsize=(11, 4.5))
    count = 0
    for i, name in enumerate(OrderedDict.fromkeys(list(used) + list(shm))):
        if name in used:
            xs, ys = used[name]
            ax.plot(xs, [y / scale for y in ys], color=colour_cycle(i), marker=marker_for(xs),
                    label=f"{name} used_memory")
            count += 1
        if name in shm:
            xs, ys = shm[name]
            ax.plot(xs, [y / scale for y in ys], color=colour_cycle(i), linestyle="--",
                    marker=marker_for(xs), label=f"{name} shm_used")
            count += 1
    ax.set_xlabel("time since the launcher started (s)")
    ax.set_ylabel(f"memory ({unit})")
    ax.set_title("Server memory: used_memory (solid) and shm_used (dashed)")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    legend(ax, count)
    fig.tight_layout()
    return fig


def figure_latency(plt, status, data):
    import numpy as np
    groups = OrderedDict()
    for r in data["models"]:
        calls, latency = number(r.get("calls")), number(r.get("latency_us"))
        if calls is None or calls <= 0 or latency is None or latency < 0:
            continue
        server, model = text(r.get("server")), text(r.get("model")) or "?"
        lat, w = groups.setdefault(f"{model} ({server})" if server else model, ([], []))
        lat.append(latency)
        w.append(calls)
    if not groups:
        raise NoData()
    # The server counts latencies in buckets between powers of two (rows stand at a bucket's
    # geometric middle): bars on those same edges, on a logarithmic axis.
    every = [x for lat, _ in groups.values() for x in lat if x > 0]
    if not every:
        raise NoData()
    low = math.floor(math.log2(min(every)))
    high = max(low + 1, math.ceil(math.log2(max(every))))
    bins = np.logspace(low, high, high - low + 1, base=2)
    logarithmic = True
    fig, ax = plt.subplots(figsize=(11, 4.8))
    for i, (name, (lat, w)) in enumerate(groups.items()):
        ax.hist(lat, bins=bins, weights=w, histtype="stepfilled" if len(groups) == 1 else "step",
                alpha=0.6 if len(groups) == 1 else 1.0, linewidth=1.5, color=colour_cycle(i),
                label=f"{name}: {sum(w):.0f} calls")
    if logarithmic:
        ax.set_xscale("log")
    ax.set_xlabel("run_model latency, request to result (µs, power-of-two buckets)")
    ax.set_ylabel("calls")
    ax.set_title("run_model latency distribution")
    ax.grid(alpha=0.3)
    legend(ax, len(groups))
    fig.text(0.01, 0.01, LATENCY_CAPTION, fontsize="small", style="italic")
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    return fig


def figure_stream_lag(plt, status, data):
    def key(r):
        stream, group = text(r.get("stream")) or "?", text(r.get("group")) or "?"
        server = text(r.get("server"))
        return f"{stream}/{group}" + (f" ({server})" if server else "")
    lag = series_by(data["streams"], key, "time_s", "lag_steps")
    return step_figure(plt, lag, 4.5, "lag (steps behind)",
                       "Stream lag per stream/consumer group")


def step_figure(plt, series, height, ylabel, title, integer=False):
    """One step line per name of `series` ({name: (xs, ys)}) over the run's time."""
    require_lines(series)
    fig, ax = plt.subplots(figsize=(11, height))
    for i, (name, (xs, ys)) in enumerate(series.items()):
        ax.step(xs, ys, where="post", color=colour_cycle(i), marker=marker_for(xs), label=name)
    ax.set_xlabel("time since the launcher started (s)")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.set_ylim(bottom=0)
    if integer:
        from matplotlib.ticker import MaxNLocator
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.grid(alpha=0.3)
    legend(ax, len(series))
    fig.tight_layout()
    return fig


def figure_loss(plt, status, data):
    trainer = lambda r: text(r.get("trainer")) or "?"
    train = series_by(data["trainers"], trainer, "time_s", "train_loss")
    valid = series_by(data["trainers"], trainer, "time_s", "validation_loss")
    require_lines(train, valid)
    fig, ax = plt.subplots(figsize=(11, 4.5))
    count = 0
    values = []
    for i, name in enumerate(OrderedDict.fromkeys(list(train) + list(valid))):
        if name in train:
            xs, ys = train[name]
            ax.plot(xs, ys, color=colour_cycle(i), marker=".", label=f"{name} train")
            values += ys
            count += 1
        if name in valid:
            xs, ys = valid[name]
            ax.plot(xs, ys, color=colour_cycle(i), linestyle="--", marker="o", markersize=3,
                    label=f"{name} validation")
            values += ys
            count += 1
    log = bool(values) and min(values) > 0
    if log:
        ax.set_yscale("log")
    ax.set_xlabel("time since the launcher started (s)")
    ax.set_ylabel("loss (trainer's loss units" + (", log scale)" if log else ")"))
    ax.set_title("Trainer loss: train (solid) and validation (dashed)")
    ax.grid(alpha=0.3, which="both" if log else "major")
    legend(ax, count)
    fig.tight_layout()
    return fig


def figure_version(plt, status, data):
    trainer = lambda r: text(r.get("trainer")) or "?"
    versions = series_by(data["trainers"], trainer, "time_s", "published_version")
    return step_figure(plt, versions, 4, "published model version (number)",
                       "Published model version per trainer", integer=True)


DRAWERS = {
    "timeline.png": figure_timeline,
    "server_throughput.png": figure_throughput,
    "server_memory.png": figure_memory,
    "model_latency.png": figure_latency,
    "stream_lag.png": figure_stream_lag,
    "trainer_loss.png": figure_loss,
    "model_version.png": figure_version,
}


def draw_figures(report_dir, status, data):
    """Draws each figure; returns [(file, title, drawn, note)] where note is the sentence shown in
    place of a figure that was not drawn."""
    for name, _, _ in FIGURES:  # no figure of an earlier report may stand in for a missing one
        try:
            os.remove(os.path.join(report_dir, name))
        except FileNotFoundError:
            pass
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as error:
        print(f"{PROG}: no figures: matplotlib cannot be imported ({error}); install Debian's "
              "python3-matplotlib and run this with /usr/bin/python3", file=sys.stderr)
        return [(name, title, False, f"This figure was not drawn: matplotlib is not available "
                 f"({error}).") for name, title, _ in FIGURES]
    results = []
    for name, title, no_data in FIGURES:
        fig = None
        try:
            fig = DRAWERS[name](plt, status, data)
            fig.savefig(os.path.join(report_dir, name), dpi=90)
            results.append((name, title, True, ""))
        except NoData as why:
            results.append((name, title, False, str(why) or no_data))
        except Exception as error:  # one bad figure must not lose the rest of the report
            print(f"{PROG}: figure {name} could not be drawn: {type(error).__name__}: {error}",
                  file=sys.stderr)
            results.append((name, title, False, f"This figure could not be drawn "
                            f"({type(error).__name__}: {error})."))
        finally:
            if fig is not None:
                plt.close(fig)
    return results


def application_figures(run_dir, report_dir):
    """The PNGs processes drew themselves (RUN_DIR/PROCESS/figures/*.png, e.g. a simulation's
    physics against theory), copied into report/apps/ and shown after the launcher's figures."""
    target = os.path.join(report_dir, "apps")
    shutil.rmtree(target, ignore_errors=True)
    found = []
    for process in sorted(os.listdir(run_dir)):
        folder = os.path.join(run_dir, process, "figures")
        if process == "report" or not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            if not name.lower().endswith(".png"):
                continue
            os.makedirs(target, exist_ok=True)
            copy = f"{process}-{name}"
            shutil.copyfile(os.path.join(folder, name), os.path.join(target, copy))
            title = f"{process}: {os.path.splitext(name)[0].replace('_', ' ')}"
            found.append((f"apps/{copy}", title, True,
                          f"Drawn by the process {process} (its figures/{name})."))
    return found


# ------------------------------------------------------------------------------------------------
# Writing


def summary_text(status, headlines, processes, models, failed_logs, figures):
    out = []
    out.append(f"experiment: {text(status.get('experiment'), '?')}\n")
    out.append(f"state: {text(status.get('state'), '?')}\n")
    out.append(f"total seconds: {seconds_text(status.get('seconds'))}\n")
    if text(status.get("reason")):
        out.append(f"stopped because: {text(status.get('reason'))}\n")
    if headlines:
        out.append("\nheadline numbers:\n")
        out.append(text_table(headlines))
    out.append("\nprocesses (start and end in seconds since the launcher started):\n")
    out.append(text_table(processes))
    for name, path, tail in failed_logs:
        out.append(f"\n{name} failed; the last lines of {path}:\n")
        out.append("".join(f"  | {line}\n" for line in tail.splitlines()) if tail
                   else "  (no stderr log, or it is empty)\n")
    if models:
        out.append("\nrun_model calls:\n")
        out.append(text_table(models))
    out.append("\nfigures:\n")
    for name, title, drawn, note in figures:
        out.append(f"  {title}: {name if drawn else note}\n")
    return "".join(out)


PAGE_STYLE = """
body { font-family: sans-serif; margin: 1.5em auto; max-width: 1300px; color: #222; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
table { border-collapse: collapse; margin: 0.5em 0 1em; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
th { background: #f0f0f0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.state-failed td { background: #fde8e8; }
.state { font-weight: bold; }
.state-done { color: #1a7f1a; } .state-failed { color: #c62828; }
.state-interrupted, .state-stopped { color: #c46a00; } .state-running { color: #1f5fa8; }
pre.log { background: #1e1e1e; color: #eee; padding: 0.6em; overflow-x: auto; font-size: 0.85em; }
figure { margin: 1.5em 0; }
figure img { max-width: 100%; border: 1px solid #ddd; }
figcaption { font-size: 0.9em; color: #555; margin-top: 0.3em; }
p.nodata { font-style: italic; color: #666; border: 1px dashed #bbb; padding: 1em; }
#images-loaded { font-size: 0.8em; color: #888; }
"""

# Counts, once the page and its images have loaded, the images that loaded (a check for a person
# and for the tests, which read it back from the rendered page).
PAGE_SCRIPT = """
window.addEventListener("load", function () {
  var images = document.images, loaded = 0;
  for (var i = 0; i < images.length; i++) {
    if (images[i].complete && images[i].naturalWidth > 0) loaded++;
  }
  var out = document.getElementById("images-loaded");
  out.textContent = loaded + "/" + images.length;
  out.title = "figures loaded / figures on this page";
});
"""


def e(value):
    return html.escape(text(value), quote=True)


def html_table(rows, numeric=(), row_class=None):
    if not rows:
        return "<p>(none)</p>\n"
    headers = list(rows[0].keys())
    out = ["<table>\n<thead><tr>", "".join(f"<th>{e(h)}</th>" for h in headers),
           "</tr></thead>\n<tbody>\n"]
    for r in rows:
        cls = row_class(r) if row_class else ""
        out.append(f'<tr class="{e(cls)}">' if cls else "<tr>")
        for h in headers:
            if h == "state":
                out.append(f'<td class="state state-{e(r[h])}">{e(r[h])}</td>')
            elif h in numeric:
                out.append(f'<td class="num">{e(r[h])}</td>')
            else:
                out.append(f"<td>{e(r[h])}</td>")
        out.append("</tr>\n")
    out.append("</tbody></table>\n")
    return "".join(out)


def page(status, headlines, processes, models, failed_logs, figures):
    experiment = text(status.get("experiment"), "?")
    state = text(status.get("state"), "?")
    out = ["<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n",
           # Nothing on this page comes from the network: only its own images and inline code.
           "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
           "img-src 'self' data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n",
           "<link rel=\"icon\" href=\"data:,\">\n",
           f"<title>Slipstream run: {e(experiment)}</title>\n",
           f"<style>{PAGE_STYLE}</style>\n</head>\n<body>\n",
           f"<h1>Slipstream run: {e(experiment)}</h1>\n",
           "<table class=\"overview\">\n",
           f"<tr><th>experiment</th><td>{e(experiment)}</td></tr>\n",
           f"<tr><th>final state</th><td class=\"state state-{e(state)}\">{e(state)}</td></tr>\n",
           f"<tr><th>total seconds</th><td>{e(seconds_text(status.get('seconds')))}</td></tr>\n"]
    if text(status.get("reason")):
        out.append(f"<tr><th>stopped because</th><td>{e(status.get('reason'))}</td></tr>\n")
    out.append("</table>\n")
    if headlines:
        # The run's results in a few numbers, on the first screen: what the processes measured
        # (their headlines.json) and what the trainers published.
        out.append("<h2>Headline numbers</h2>\n")
        out.append(html_table(headlines, numeric=("value", "ratio")))
    out.append("<h2>Processes</h2>\n<p>Start and end are seconds since the launcher started.</p>\n")
    out.append(html_table(processes, numeric=("attempts", "exit code", "start (s)", "end (s)",
                                              "duration (s)"),
                          row_class=lambda r: "state-failed" if r["state"] == "failed" else ""))
    if failed_logs:
        out.append("<h2>Failed processes</h2>\n")
        for name, path, tail in failed_logs:
            out.append(f"<h3>{e(name)}</h3>\n<p>The last lines of <code>{e(path)}</code>:</p>\n")
            out.append(f"<pre class=\"log\">{e(tail)}</pre>\n" if tail else
                       "<p class=\"nodata\">There is no stderr log for this process, or it is "
                       "empty.</p>\n")
    if models:
        out.append("<h2>run_model calls</h2>\n")
        out.append(html_table(models, numeric=("calls", "errors", "mean latency (us)")))
    out.append("<h2>Figures</h2>\n")
    for name, title, drawn, note in figures:
        out.append(f"<figure id=\"{e(name[:-4].replace('/', '-'))}\">\n")
        if drawn:
            out.append(f"<img src=\"{e(name)}\" alt=\"{e(title)}\">\n"
                       f"<figcaption><b>{e(title)}.</b> {e(CAPTIONS.get(name, note))}"
                       "</figcaption>\n")
        else:
            out.append(f"<figcaption><b>{e(title)}</b></figcaption>\n"
                       f"<p class=\"nodata\">{e(note)}</p>\n")
        out.append("</figure>\n")
    out.append("<h2>Raw data</h2>\n<p>The metrics this page was drawn from are in "
               "<a href=\"metrics/\">metrics/</a>, the run's status in "
               "<a href=\"status.json\">status.json</a>, and this summary as text in "
               "<a href=\"summary.txt\">summary.txt</a>.</p>\n")
    out.append("<p>Figures loaded: <span id=\"images-loaded\">not counted (scripts are "
               "off)</span></p>\n")
    out.append(f"<script>{PAGE_SCRIPT}</script>\n</body>\n</html>\n")
    return "".join(out)


def write_text(path, content):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(content)
    os.replace(tmp, path)


def make_private(report_dir):
    """Makes the report owner-only, as everything the launcher writes in the run directory:
    folders 0700, files 0600, whatever the umask they were written under."""
    os.chmod(report_dir, 0o700)
    for folder, subfolders, files in os.walk(report_dir):
        for names, mode in ((subfolders, 0o700), (files, 0o600)):
            for name in names:
                path = os.path.join(folder, name)
                if not os.path.islink(path):
                    os.chmod(path, mode)


def make_report(run_dir):
    status = read_status(run_dir)
    report_dir = os.path.join(run_dir, "report")
    os.makedirs(report_dir, exist_ok=True)
    os.chmod(report_dir, 0o700)  # before anything is written in it

    metrics_dir = os.path.join(run_dir, "metrics")
    data = {name: read_csv(os.path.join(metrics_dir, name + ".csv"))
            for name in ("servers", "models", "streams", "trainers")}

    copies = os.path.join(report_dir, "metrics")
    if os.path.isdir(copies):
        shutil.rmtree(copies)
    os.makedirs(copies)
    if os.path.isdir(metrics_dir):
        for entry in sorted(os.listdir(metrics_dir)):
            source = os.path.join(metrics_dir, entry)
            if entry.endswith(".csv") and os.path.isfile(source):
                shutil.copyfile(source, os.path.join(copies, entry))
    shutil.copyfile(os.path.join(run_dir, "status.json"), os.path.join(report_dir, "status.json"))

    processes = process_rows(status)
    models = model_rows(data["models"])
    failed_logs = []
    for p in status["processes"]:
        if text(p.get("state")) == "failed":
            tail, path = stderr_tail(run_dir, p)
            failed_logs.append((text(p.get("name"), "?"), path, tail))

    figures = draw_figures(report_dir, status, data) + application_figures(run_dir, report_dir)
    headlines = application_headlines(run_dir) + trainer_headlines(data["trainers"])
    write_text(os.path.join(report_dir, "summary.txt"),
               summary_text(status, headlines, processes, models, failed_logs, figures))
    write_text(os.path.join(report_dir, "index.html"),
               page(status, headlines, processes, models, failed_logs, figures))
    make_private(report_dir)
    return os.path.join(report_dir, "index.html")


def main(argv):
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        print(f"usage: {os.path.basename(argv[0])} RUN_DIR\n\n{__doc__}",
              file=sys.stderr if len(argv) != 2 else sys.stdout)
        return 0 if len(argv) == 2 else 2
    try:
        index = make_report(argv[1])
    except Fatal as error:
        print(f"{PROG}: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        print(f"{PROG}: cannot write the report: {error}", file=sys.stderr)
        return 1
    print(f"report: {index}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
