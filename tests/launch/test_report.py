"""The run report (src/launch/report/make_report.py), as a person sees it: a synthetic run
directory goes in, the report comes out, and a real headless browser (Debian's `chromium`) opens
its page: every figure must load, the page must log nothing on the console, and text taken from
the run's files must be shown as text, never run as markup.

Run with Debian's interpreter (it has python3-matplotlib): /usr/bin/python3 -m pytest
tests/launch/test_report.py. The browser tests skip, saying so, when no chromium binary exists
(`apt-get install -y chromium`). The screenshot is kept in $SLIPSTREAM_TEST_ARTEFACTS when set,
else next to the report.
"""
import csv
import html
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "src" / "launch" / "report" / "make_report.py"
# The report is made with the interpreter that runs these tests (the launcher uses /usr/bin/python3).
PYTHON = sys.executable

FIGURES = ["timeline.png", "server_throughput.png", "server_memory.png", "model_latency.png",
           "stream_lag.png", "trainer_loss.png", "model_version.png"]
HOSTILE = "<script>alert(1)</script>"
BROWSER_TIMEOUT = 60


# ------------------------------------------------------------------------------------------------
# A synthetic run


def write_csv(path, header, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)


def process(name, kind, group, state, started, ended, exit_code=0, attempts=1, reason=""):
    return {"name": name, "kind": kind, "group": group, "state": state, "pid": 0,
            "attempts": attempts, "exit_code": exit_code,
            "address": "127.0.0.1:6380" if kind == "server" else "",
            "port": 6380 if kind == "server" else 0, "run_dir": f"RUN/{name}", "reason": reason,
            "started_s": started, "ended_s": ended}


def make_run(root, metrics=True):
    run = root / "run"
    run.mkdir()
    processes = [
        process("db", "server", "db", "stopped", 0.05, 30.2, exit_code=-1),
        process("sim_0", "application", "sim", "done", 1.0, 25.0),
        process("sim_1", "application", "sim", "failed", 1.1, 12.5, exit_code=3, attempts=2,
                reason="exit 3"),
        process("trainer", "trainer", "train", "done", 2.0, 29.0),
        process("post", "application", "post", "skipped", None, None, exit_code=-1,
                reason="sim_1 failed"),
    ]
    for p in processes:  # each process's folder, as the launcher lays it out
        p["run_dir"] = str(run / p["name"])
        (run / p["name"]).mkdir()
    err = [f"sim_1: step {i} ok" for i in range(40)]
    err += ["sim_1: reading the field <b>bold</b> & 'quoted'", f"sim_1: bad value {HOSTILE}",
            "sim_1: giving up"]
    (run / "sim_1" / "sim_1.err").write_text("\n".join(err) + "\n")
    status = {"experiment": "demo <& experiment>", "state": "failed", "launcher_pid": 1,
              "seconds": 30.5, "updated": 0, "reason": "member sim_1 failed", "processes":
              processes}
    (run / "status.json").write_text(json.dumps(status))
    if not metrics:
        return run

    m = run / "metrics"
    times = [0.5 * i for i in range(1, 61)]
    write_csv(m / "servers.csv",
              ["time_s", "server", "ops_per_second", "net_input_bytes_per_second",
               "net_output_bytes_per_second", "used_memory_bytes", "shm_used_bytes",
               "connected_clients"],
              [[t, s, 1000 + 500 * math.sin(t) + 200 * k, (2e6 + 1e5 * t) * (k + 1),
                (1.5e6 + 5e4 * t) * (k + 1), (50e6 + 1e6 * t) * (k + 1), 20e6 * (k + 1), 3]
               for t in times for k, s in enumerate(["db_0", "db_1"])])
    write_csv(m / "models.csv", ["time_s", "server", "model", "calls", "errors", "latency_us"],
              [[t, "db_0", model, calls, 0 if t < 20 else 1, 300 + 40 * math.cos(t) * (k + 1)
                + 2000 * k]
               for t in times for k, (model, calls) in enumerate([("surrogate", 50),
                                                                  ("corrector", 7)])]
              + [[31.0, "db_0", "surrogate", 0, 0, ""]])  # an interval without calls
    write_csv(m / "streams.csv",
              ["time_s", "server", "stream", "group", "lag_steps", "steps_held", "bytes_held"],
              [[t, "db_0", "fields", g, int(abs(5 * math.sin(t / 3 + k))), 10, 10 * 4096]
               for t in times for k, g in enumerate(["trainer", "post"])])
    write_csv(m / "trainers.csv",
              ["time_s", "trainer", "state", "stream_step", "steps_behind", "optimizer_steps",
               "train_loss", "validation_loss", "samples_per_second", "published_version"],
              [[t, "trainer", "training", int(t * 2), 1, int(t * 10), 1.0 / (1 + t),
                (1.3 / (1 + t)) if i % 4 == 0 else "", 500, int(t // 5) if t > 3 else ""]
               for i, t in enumerate(times)])
    return run


def make_report(run, *args):
    return subprocess.run([PYTHON, str(SCRIPT), str(run), *args], capture_output=True,
                          text=True, timeout=120)


# ------------------------------------------------------------------------------------------------
# The browser


def chromium():
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("no chromium binary on PATH: the browser checks need Debian's `chromium` package "
                "(apt-get install -y chromium)")


def browse(page, *flags):
    """Runs headless chromium on `page` with `flags`; returns (stdout, stderr)."""
    with tempfile.TemporaryDirectory(prefix="slipstream-chromium-") as profile:
        command = [chromium(), "--headless=new", "--no-sandbox", "--disable-gpu",
                   "--disable-dev-shm-usage", "--no-first-run", "--no-default-browser-check",
                   "--disable-extensions", "--disable-background-networking",
                   "--disable-component-update", "--disable-sync",
                   f"--user-data-dir={profile}", *flags, page.resolve().as_uri()]
        done = subprocess.run(command, capture_output=True, text=True, timeout=BROWSER_TIMEOUT,
                              errors="replace")
    assert done.returncode == 0, f"{command} exited {done.returncode}:\n{done.stderr[-3000:]}"
    return done.stdout, done.stderr


# With --enable-logging=stderr, chromium writes each console message of the page (console.log
# as much as console.error, and uncaught exceptions) as a log line such as
#   [pid:tid:date:INFO:CONSOLE:12] "Uncaught ReferenceError: x is not defined", source: file://...
# (older versions write CONSOLE(12)). The report page writes nothing to the console, so every
# such line is a failure, and so is any failed load or blocked resource.
CONSOLE_PROBLEM = re.compile(r"CONSOLE[:(]|Uncaught|Failed to load resource|net::ERR_|"
                             r"Content Security Policy|Refused to", re.IGNORECASE)


def console_problems(stderr):
    return [line for line in stderr.splitlines() if CONSOLE_PROBLEM.search(line)]


def render(page):
    """The page's DOM once loaded, and the console problems it logged."""
    # The virtual time budget lets the page finish loading and run its load handler before the
    # DOM is dumped, however slow the machine.
    dom, stderr = browse(page, "--dump-dom", "--virtual-time-budget=10000", "--enable-logging=stderr",
                         "--v=0")
    return dom, console_problems(stderr)


def images_loaded(dom):
    found = re.search(r'id="images-loaded"[^>]*>\s*(\d+)/(\d+)\s*<', dom)
    assert found, "the page did not count its images (no N/M in #images-loaded):\n" + dom[-2000:]
    return int(found.group(1)), int(found.group(2))


def artefacts_dir(default):
    chosen = os.environ.get("SLIPSTREAM_TEST_ARTEFACTS")
    path = Path(chosen) if chosen else default
    path.mkdir(parents=True, exist_ok=True)
    return path


# ------------------------------------------------------------------------------------------------
# Tests


def test_report_files_and_escaping(tmp_path):
    run = make_run(tmp_path)
    done = make_report(run)
    assert done.returncode == 0, done.stderr
    assert done.stderr == "", done.stderr
    report = run / "report"
    for name in FIGURES:
        png = report / name
        assert png.is_file() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
        assert png.stat().st_size > 5000, f"{name} looks empty"
    for name in ("servers.csv", "models.csv", "streams.csv", "trainers.csv"):
        assert (report / "metrics" / name).read_bytes() == (run / "metrics" / name).read_bytes()

    page = (report / "index.html").read_text()
    assert HOSTILE not in page and "<b>bold</b>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "demo &lt;&amp; experiment&gt;" in page
    assert "sim_1: giving up" in page and "step 39 ok" in page
    assert "step 20 ok" not in page, "more than the last ~15 lines of the stderr log"
    assert re.search(r"https?://", page) is None, "the page refers to the network"
    for name in FIGURES:
        assert f'<img src="{name}"' in page
    assert "counted in buckets between powers of two" in page
    assert len(re.findall(r"<script\b", page)) == 1, "only the page's own script"

    summary = (report / "summary.txt").read_text()
    for expected in ("demo <& experiment>", "state: failed", "total seconds: 30.5",
                     "member sim_1 failed", "sim_1", "skipped", HOSTILE, "surrogate",
                     "trainer"):
        assert expected in summary, expected
    row = next(line for line in summary.splitlines() if line.strip().startswith("sim_1 "))
    for expected in ("application", "sim", "failed", "2", "3", "1.1", "12.5", "11.4"):
        assert expected in row.split(), (expected, row)


def test_report_in_a_browser(tmp_path):
    chromium()  # skips first when there is no browser
    run = make_run(tmp_path)
    assert make_report(run).returncode == 0
    page = run / "report" / "index.html"

    shot = artefacts_dir(run / "report") / "report-screenshot.png"
    shot.unlink(missing_ok=True)
    browse(page, f"--screenshot={shot}", "--window-size=1400,3000", "--hide-scrollbars")
    assert shot.is_file() and shot.stat().st_size > 20000, f"no screenshot at {shot}"

    dom, problems = render(page)
    assert problems == [], "the page logged console messages:\n" + "\n".join(problems)
    loaded, total = images_loaded(dom)
    assert (loaded, total) == (len(FIGURES), len(FIGURES)), f"{loaded}/{total} figures loaded"
    # What was taken from a file is text in the rendered page, not an element.
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in dom
    assert len(re.findall(r"<script\b", dom)) == 1


def test_console_check_catches_a_broken_page(tmp_path):
    """The checks above are not vacuous: a page with a missing image, a console error and an
    uncaught exception fails them."""
    chromium()
    page = tmp_path / "broken.html"
    page.write_text('<!DOCTYPE html><html><head><meta charset="utf-8"><title>x</title></head>'
                    '<body><img src="missing.png"><p id="images-loaded">-</p><script>'
                    'window.addEventListener("load", function () { var n = 0;'
                    ' for (var i = 0; i < document.images.length; i++)'
                    ' if (document.images[i].complete && document.images[i].naturalWidth > 0) n++;'
                    ' document.getElementById("images-loaded").textContent ='
                    ' n + "/" + document.images.length; });'
                    'console.error("broken on purpose"); notDefined();</script></body></html>')
    dom, problems = render(page)
    assert images_loaded(dom) == (0, 1)
    text = "\n".join(problems)
    assert "broken on purpose" in text and "Uncaught" in text, text


def test_report_without_metrics(tmp_path):
    run = make_run(tmp_path, metrics=False)
    done = make_report(run)
    assert done.returncode == 0, done.stderr
    report = run / "report"
    page = (report / "index.html").read_text()
    assert (report / "timeline.png").is_file(), "the timeline needs only status.json"
    for name in FIGURES[1:]:
        assert not (report / name).exists(), name
        assert f'<img src="{name}"' not in page
    for what in ("no server throughput data", "no server memory data",
                 "no run_model latency data", "no stream lag data", "no trainer loss data",
                 "no published model version data"):
        assert f"There was {what}" in page, what
        assert f"There was {what}" in (report / "summary.txt").read_text(), what
    assert (report / "metrics").is_dir() and not any((report / "metrics").iterdir())

    # Empty files (a header, or nothing at all) are no data too, and a report made again leaves
    # no figure of the earlier one behind.
    (run / "metrics").mkdir()
    (run / "metrics" / "servers.csv").write_text("time_s,server,ops_per_second\n")
    (run / "metrics" / "models.csv").write_text("")
    (run / "metrics" / "trainers.csv").write_text("time_s,trainer,train_loss\n1.0,t,\n")
    (report / "stream_lag.png").write_bytes(b"stale")
    done = make_report(run)
    assert done.returncode == 0, done.stderr
    assert not (report / "stream_lag.png").exists()
    assert "There was no trainer loss data" in (report / "index.html").read_text()
    assert (report / "metrics" / "servers.csv").is_file()


def test_report_without_any_started_process_or_metrics_in_a_browser(tmp_path):
    """Nothing to draw at all: the page still loads cleanly, with 0/0 figures."""
    chromium()
    run = tmp_path / "run"
    run.mkdir()
    (run / "status.json").write_text(json.dumps({
        "experiment": "nothing", "state": "interrupted", "seconds": 0.2, "reason": "SIGINT",
        "processes": [process("db", "server", "db", "waiting", None, None, exit_code=-1)]}))
    assert make_report(run).returncode == 0
    page = (run / "report" / "index.html").read_text()
    assert "No process of this run has started" in page
    dom, problems = render(run / "report" / "index.html")
    assert problems == [], "\n".join(problems)
    assert images_loaded(dom) == (0, 0)


def test_missing_run_dir(tmp_path):
    done = make_report(tmp_path / "no-such-run")
    assert done.returncode != 0
    assert "no-such-run" in done.stderr and "no such run directory" in done.stderr
    assert not (tmp_path / "no-such-run").exists()


def test_missing_or_unreadable_status(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    done = make_report(run)
    assert done.returncode != 0 and "status.json is missing" in done.stderr, done.stderr
    (run / "status.json").write_text("{not json")
    done = make_report(run)
    assert done.returncode != 0 and "not valid JSON" in done.stderr, done.stderr
    assert not (run / "report").exists()


def test_figures_that_processes_drew_are_shown_after_the_launchers(tmp_path):
    run = make_run(tmp_path, metrics=False)
    figures = run / "pic" / "figures"
    figures.mkdir(parents=True)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    fig.savefig(figures / "field_energy.png")
    plt.close(fig)
    (figures / "notes.txt").write_text("not a figure")
    done = make_report(run)
    assert done.returncode == 0, done.stderr
    page = (run / "report" / "index.html").read_text()
    copied = run / "report" / "apps" / "pic-field_energy.png"
    assert copied.read_bytes() == (figures / "field_energy.png").read_bytes()
    assert '<img src="apps/pic-field_energy.png"' in page
    assert "Drawn by the process pic (its figures/field_energy.png)." in page
    assert "notes.txt" not in page


def test_a_run_shorter_than_one_metrics_interval_says_so_instead_of_empty_axes(tmp_path):
    run = make_run(tmp_path, metrics=False)
    m = run / "metrics"
    write_csv(m / "servers.csv", ["time_s", "server", "ops_per_second", "used_memory_bytes"],
              [[1.0, "db_0", 120, 5e6]])
    write_csv(m / "streams.csv", ["time_s", "server", "stream", "group", "lag_steps"],
              [[1.0, "db_0", "fields", "trainer", 0]])
    write_csv(m / "trainers.csv", ["time_s", "trainer", "train_loss", "published_version"],
              [[1.0, "trainer", 0.5, 1], [2.0, "trainer", 0.25, 2]])
    done = make_report(run)
    assert done.returncode == 0, done.stderr
    report = run / "report"
    page = (report / "index.html").read_text()
    for name in ("server_throughput.png", "server_memory.png", "stream_lag.png"):
        assert not (report / name).exists(), name  # one sample each: no figure of bare axes
    assert page.count("There was only one sample of this data") == 3
    for name in ("trainer_loss.png", "model_version.png"):  # two samples: a line
        assert (report / name).is_file(), name


def test_headline_numbers_come_first(tmp_path):
    run = make_run(tmp_path)
    (run / "sim_0" / "headlines.json").write_text(json.dumps([
        {"name": "growth rate", "value": 0.3412, "unit": "w_p", "reference": 0.3536,
         "reference_name": "linear theory"},
        {"name": "model error", "value": 0.021, "reference": 0.73,
         "reference_name": "untrained model", "note": f"median of 3 {HOSTILE}"},
        {"name": "check", "value": "passed"},
        {"name": "no value"},
    ]))
    (run / "sim_1" / "headlines.json").write_text("{not json")
    done = make_report(run)
    assert done.returncode == 0, done.stderr
    page = (run / "report" / "index.html").read_text()
    assert page.index("<h2>Headline numbers</h2>") < page.index("<h2>Processes</h2>")
    table = page[page.index("<h2>Headline numbers</h2>"):page.index("<h2>Processes</h2>")]
    for shown in ("growth rate", "0.3412 w_p", "linear theory: 0.3536 w_p", "0.965",
                  "untrained model: 0.73", "0.0288", "passed", "unreadable",
                  # the trainer's, from metrics/trainers.csv
                  "model versions published", ">6<", "last training loss"):
        assert shown in table, shown
    assert HOSTILE not in page and html.escape(HOSTILE, quote=True) in table
    assert table.count("unreadable") == 2  # the entry without a value, and sim_1's file
    summary = (run / "report" / "summary.txt").read_text()
    assert summary.index("headline numbers:") < summary.index("processes (")
    assert "0.3412 w_p" in summary
