"""One client putting a 16 MiB tensor through shared memory, over and over (one key): the put's
median wall time against a memcpy of the same bytes into a warm buffer, the client's CPU per put
and the CPU per put of each server thread (from /proc/PID/task/*/stat), so that the work of the
server's spare-file thread shows apart from its I/O thread.

Usage (from the repository root, PYTHONPATH=build/bindings/python):
    /usr/bin/python3 bench/shm_put_cpu.py build/src/cli/slipstream /tmp/shm_put_cpu.sock 300
Run it once as the machine is and once with shmem huge pages
(/sys/kernel/mm/transparent_hugepage/shmem_enabled set to within_size, then set back).
"""
import glob
import os
import statistics
import subprocess
import sys
import time

import numpy as np
import slipstream

binary, sock, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
size = 16 << 20
tick = os.sysconf("SC_CLK_TCK")
d = sock + ".dir"
os.makedirs(d, exist_ok=True)
for f in glob.glob(d + "/*"): os.remove(f)
if os.path.exists(sock): os.remove(sock)
server = subprocess.Popen([binary, "server", "--port", "0", "--unixsocket", sock, "--dir", d,
                           "--shm-size", str(2 << 30)], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
for _ in range(200):
    if os.path.exists(sock): break
    time.sleep(0.05)
time.sleep(0.5)
client = slipstream.Client(address="unix://" + sock)
x = np.random.default_rng(1).random(size // 8)
warm = np.empty_like(x)

def threads():
    out = {}
    for t in glob.glob(f"/proc/{server.pid}/task/*"):
        f = open(t + "/stat").read().rsplit(")", 1)[1].split()
        out[t.rsplit("/", 1)[1]] = (int(f[11]) + int(f[12])) / tick
    return out

for i in range(20): client.put_tensor("k", x)   # warm-up: spares learn the size
before, c0 = threads(), time.process_time()
walls = []
for i in range(n):
    t = time.perf_counter(); client.put_tensor("k", x); walls.append(time.perf_counter() - t)
after, c1 = threads(), time.process_time()
memcpy = []
for i in range(30):
    t = time.perf_counter(); np.copyto(warm, x); memcpy.append(time.perf_counter() - t)
print(f"put 16 MiB: median {statistics.median(walls)*1e3:.3f} ms over {n}; memcpy median {statistics.median(memcpy)*1e3:.3f} ms")
print(f"client CPU per put {(c1-c0)/n*1e3:.3f} ms")
for tid in sorted(after, key=lambda k: -(after[k] - before.get(k, 0))):
    used = after[tid] - before.get(tid, 0)
    if used > 0: print(f"server thread {tid}: {used/n*1e3:.3f} ms CPU per put")
print("stats", {k: v for k, v in client.stats().items() if v})
server.terminate(); server.wait()
