#!/usr/bin/env python3
"""Context switches and CPU time per AI.MODELEXECUTE, counted from /proc.

Starts `slipstream server` (the binary given) on a Unix socket in a temporary directory, stores
the EKE-shaped MLP of model_bench (Linear(4, 8) + ReLU + Linear(8, 1), random weights) and a
1-cell input, then runs AI.MODELEXECUTE RUNS times over one connection (plain RESP, no client
library) and prints, per run: the context switches of every thread of the server and of its model
worker processes (voluntary and involuntary, /proc/PID/task/*/status), their user + system CPU
time (/proc/PID/stat), and the median round trip seen here. A benchmark, not a test.

    /usr/bin/python3 bench/run_model_switches.py build/src/cli/slipstream 3000
"""
import glob
import os
import shutil
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time

import torch


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: run_model_switches.py SLIPSTREAM_BINARY RUNS")
    binary, runs = sys.argv[1], int(sys.argv[2])
    folder = tempfile.mkdtemp(prefix="slipstream-switches-")
    server = None
    try:
        path = os.path.join(folder, "s.sock")
        eke = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
        torch.jit.save(torch.jit.script(eke), os.path.join(folder, "eke.pt"))
        with open(os.path.join(folder, "eke.pt"), "rb") as f:
            blob = f.read()
        server = subprocess.Popen([binary, "server", "--port", "0", "--unixsocket", path, "--dir",
                                   folder, "--loglevel", "warn"])
        for _ in range(400):
            if os.path.exists(path):
                break
            time.sleep(0.05)
        conn = socket.socket(socket.AF_UNIX)
        conn.connect(path)

        def command(*args):
            out = b"*%d\r\n" % len(args)
            for a in args:
                a = a if isinstance(a, bytes) else str(a).encode()
                out += b"$%d\r\n%s\r\n" % (len(a), a)
            conn.sendall(out)
            return conn.recv(65536)  # the replies used here are short simple strings

        assert command("AI.MODELSTORE", "eke", "TORCH", "CPU", "BLOB", blob).startswith(b"+OK")
        x = struct.pack("4f", 1, 2, 3, 4)
        assert command("AI.TENSORSET", "x", "FLOAT", 1, 4, "BLOB", x).startswith(b"+OK")

        def counters():
            children = open(f"/proc/{server.pid}/task/{server.pid}/children").read().split()
            switches = ticks = 0
            for pid in [server.pid] + [int(c) for c in children]:
                for task in glob.glob(f"/proc/{pid}/task/*"):
                    for line in open(task + "/status"):
                        if "ctxt_switches" in line:
                            switches += int(line.split()[1])
                fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
                ticks += int(fields[11]) + int(fields[12])
            return switches, ticks

        run = ("AI.MODELEXECUTE", "eke", "INPUTS", 1, "x", "OUTPUTS", 1, "y")
        for _ in range(500):  # warm-up: the worker starts and loads the model
            command(*run)
        switches0, ticks0 = counters()
        latencies = []
        for _ in range(runs):
            start = time.perf_counter_ns()
            reply = command(*run)
            latencies.append(time.perf_counter_ns() - start)
            assert reply.startswith(b"+OK"), reply
        switches1, ticks1 = counters()
        cpu_us = (ticks1 - ticks0) / os.sysconf("SC_CLK_TCK") / runs * 1e6
        print(f"{binary}: {runs} runs, context switches per run {(switches1 - switches0) / runs:.2f}, "
              f"server + worker CPU per run {cpu_us:.1f} us, "
              f"p50 {statistics.median(latencies) / 1000:.1f} us")
    finally:
        if server is not None:
            server.terminate()
            server.wait()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
