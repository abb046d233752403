#!/usr/bin/env python3
"""Checks the scaling model of docs/performance.md ("A scaling model") on this machine.

The model: a deployment is bounded by CPU time per operation. On a machine of N cores where the
clients and S shards share the cores, puts (or gets) of one size run at most at
N / (c_server + c_client) operations per second, where c_server and c_client are the CPU seconds
one operation costs the server and the client; with keys spread over the shards' slots, each
shard does 1/S of them and is busy (that rate) * c_server / S.

The check: c_server and c_client are measured with one standalone server and one client process;
then a cluster of S shards on loopback TCP serves S client processes (cluster mode, keys spread
over the slots) and the measured aggregate rate and each shard's CPU are printed next to the
model's prediction. A benchmark, not a test: it never fails on a figure.

    /usr/bin/python3 bench/cluster_check.py --slipstream build/src/cli/slipstream
"""
import argparse
import multiprocessing
import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import numpy as np

TICK = os.sysconf("SC_CLK_TCK")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid):
    """User + system CPU of a process and all its threads (from /proc/PID/stat)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def start_servers(binary, count, workdir):
    ports = [free_port() for _ in range(count)]
    members = ",".join(f"127.0.0.1:{p}" for p in ports)
    servers = []
    for k, port in enumerate(ports):
        folder = os.path.join(workdir, f"shard{k}")
        os.makedirs(folder)
        argv = [binary, "server", "--port", str(port), "--dir", folder, "--loglevel", "warn",
                "--threads", "1", "--no-shm"]
        if count > 1:
            argv += ["--cluster-nodes", members, "--cluster-node-index", str(k)]
        servers.append(subprocess.Popen(argv, stdout=subprocess.DEVNULL))
    for port in ports:
        subprocess.run([binary, "wait-ready", f"tcp://127.0.0.1:{port}", "--timeout", "30"],
                       check=True, stdout=subprocess.DEVNULL)
    return servers, ports


def client_loop(address, op, size, seconds, seed, results):
    import slipstream

    client = slipstream.Client(address)
    data = np.full(size, seed % 251, dtype=np.uint8)
    keys = [f"check.{seed}.{i}" for i in range(64)]  # spread over many slots
    for key in keys:
        client.put_tensor(key, data)
    start_cpu = resource.getrusage(resource.RUSAGE_SELF)
    ops = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        key = keys[ops % len(keys)]
        if op == "put":
            client.put_tensor(key, data)
        else:
            client.get_tensor(key)
        ops += 1
    end_cpu = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (end_cpu.ru_utime - start_cpu.ru_utime) + (end_cpu.ru_stime - start_cpu.ru_stime)
    results.put((ops, cpu))


def run(binary, shards, clients, op, size, seconds, workdir):
    """One measurement: (operations per second, client CPU per op, [server CPU per op share])."""
    servers, ports = start_servers(binary, shards, workdir)
    try:
        results = multiprocessing.Queue()
        procs = [multiprocessing.Process(
            target=client_loop,
            args=(f"tcp://127.0.0.1:{ports[0]}", op, size, seconds, 1000 * c + 7, results))
            for c in range(clients)]
        for p in procs:
            p.start()
        time.sleep(0.5)  # the clients connect and store their keys first
        before = [cpu_seconds(s.pid) for s in servers]
        counts = [results.get(timeout=seconds + 60) for _ in procs]
        after = [cpu_seconds(s.pid) for s in servers]
        for p in procs:
            p.join()
    finally:
        for s in servers:
            s.terminate()
        for s in servers:
            s.wait()
    ops = sum(c[0] for c in counts)
    client_cpu = sum(c[1] for c in counts)
    rate = ops / seconds  # each client counted its operations over `seconds`
    server_cpu = [a - b for a, b in zip(after, before)]
    return rate, client_cpu / ops, [cpu / ops for cpu in server_cpu]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--slipstream", default="build/src/cli/slipstream")
    parser.add_argument("--shards", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1024, 1 << 20])
    parser.add_argument("--ops", nargs="+", default=["put", "get"])
    args = parser.parse_args()
    cores = len(os.sched_getaffinity(0))
    workdir = tempfile.mkdtemp(prefix="slipstream-cluster-check-")
    print(f"Machine: {cores} cores; load average at start: {open('/proc/loadavg').read().split()[:3]}")
    print(f"Command: `{' '.join(sys.argv)}`\n")
    print("| op | size | c_server us/op | c_client us/op | predicted ops/s "
          f"({args.shards} shards, {args.shards} clients) | measured ops/s | measured / predicted "
          "| shard CPU us/op (each) | predicted per shard |")
    print("|---|---|---:|---:|---:|---:|---:|---|---:|")
    try:
        for size in args.sizes:
            for op in args.ops:
                sub = tempfile.mkdtemp(dir=workdir)
                _, c_client, c_server = run(args.slipstream, 1, 1, op, size, args.seconds, sub)
                c_s = c_server[0]
                predicted = cores / (c_s + c_client)
                sub = tempfile.mkdtemp(dir=workdir)
                rate, _, shard_cpu = run(args.slipstream, args.shards, args.shards, op, size,
                                            args.seconds, sub)
                label = f"{size // 1024} KiB" if size < (1 << 20) else f"{size >> 20} MiB"
                each = ", ".join(f"{c * 1e6:.1f}" for c in shard_cpu)
                print(f"| {op} | {label} | {c_s * 1e6:.1f} | {c_client * 1e6:.1f} | "
                      f"{predicted:,.0f} | {rate:,.0f} | {rate / predicted:.2f}x | {each} | "
                      f"{c_s / args.shards * 1e6:.1f} |", flush=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"\nLoad average at end: {open('/proc/loadavg').read().split()[:3]}")


if __name__ == "__main__":
    main()
