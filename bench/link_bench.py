#!/usr/bin/env python3
"""A stream over a shaped link between two hosts, with and without compression (issue 31).

Makes two hosts of network namespaces (tests/hosts/hosts.py), limits the link between them to
--rate in both directions (tc tbf: this kernel has no netem, so only the rate is shaped), starts
the server and the writer (build/bench/link_bench writer, the PIC app's own data) on host 1, the
writer over the Unix socket with shared memory as a simulation rank beside its server would be,
and the reader on host 2 over TCP, across the link. Every variant runs --rounds times, in turn;
the table gives the median steps per second the reader received, decoded, and the ratio to the
raw stream's. Then, over the same link, MPI point-to-point of the same bytes a step from host 1
to host 2 (build/bench/link_mpi under OpenMPI's TCP transport, started through the hosts' rsh
agent, tests/hosts/mpi_agent.sh), as the peer a simulation would otherwise use. Needs root.

  sudo bench/link_bench.py --data particles --variants none,zfp,zstd,blosc
"""

import argparse
import json
import os
import pathlib
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "hosts"))
import hosts as hosts_module  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=str(ROOT / "build"))
    parser.add_argument("--rate", default="1gbit", help="the link's rate, as tc writes it")
    parser.add_argument("--data", default="particles", choices=["fields", "particles"])
    parser.add_argument("--variants", default="none,zfp,zstd,blosc")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--accuracy-fraction", default="1e-4")
    parser.add_argument("--cells", default="131072")
    parser.add_argument("--particles-per-cell", default="8")
    parser.add_argument("--no-mpi", action="store_true", help="leave out MPI over the same link")
    args = parser.parse_args()

    available, why_not = hosts_module.available()
    if not available:
        sys.exit(f"link_bench.py: {why_not}")
    build = pathlib.Path(args.build)
    server_binary = build / "src" / "cli" / "slipstream"
    bench = build / "bench" / "link_bench"
    common = ["--variants", args.variants, "--rounds", str(args.rounds)]
    # A server on a non-loopback address takes clients with a password only (protected mode).
    environment = {**os.environ, "SLIPSTREAM_PASSWORD": "link-bench"}
    with tempfile.TemporaryDirectory(prefix="slipstream-link-bench.") as work, \
            hosts_module.Hosts(2) as hosts:
        for k in (1, 2):
            hosts.shape(k, rate=args.rate)
        socket = pathlib.Path(work) / "server.sock"
        port = 6400
        log = open(pathlib.Path(work) / "server.log", "w")
        hosts.popen(1, [str(server_binary), "server", "--bind", hosts.address(1), "--port",
                        str(port), "--unixsocket", str(socket), "--dir", work],
                    stdout=log, stderr=subprocess.STDOUT, env=environment)
        tcp, unix = f"{hosts.address(1)}:{port}", f"unix://{socket}"
        for at, address in ((1, unix), (2, tcp)):
            hosts.run(at, [str(server_binary), "wait-ready", "--timeout", "30", address],
                      check=True, capture_output=True, env=environment)
        load_before = os.getloadavg()[0]
        reader = hosts.popen(2, [str(bench), "reader", "--address", tcp, *common],
                             stdout=subprocess.PIPE, text=True, env=environment)
        writer_command = [str(bench), "writer", "--address", unix, *common, "--data", args.data,
                          "--steps", str(args.steps), "--accuracy-fraction",
                          args.accuracy_fraction, "--cells", args.cells,
                          "--particles-per-cell", args.particles_per_cell]
        writer = hosts.run(1, writer_command, capture_output=True, text=True, timeout=3600,
                           env=environment)
        read_output, _ = reader.communicate(timeout=600)
        if writer.returncode != 0 or reader.returncode != 0:
            sys.exit(f"link_bench.py: writer {writer.returncode}: {writer.stderr}\n"
                     f"reader {reader.returncode}: {read_output}")
        written = [json.loads(line) for line in writer.stdout.splitlines() if line.startswith("{")]
        raw_bytes = written[0]["raw_bytes_per_step"]
        mpi = [] if args.no_mpi else run_mpi(hosts, build, work, raw_bytes, args)
        load_after = os.getloadavg()[0]

    read = [json.loads(line) for line in read_output.splitlines() if line.startswith("{")]
    rates = {}
    for r in read:
        rates.setdefault(r["variant"], []).append(r["steps_per_second"])
    variants = args.variants.split(",")
    print(f"command: {shlex.join(sys.argv)}")
    print(f"link: {args.rate} each way (tc tbf between two network namespaces); "
          f"{args.data}: {raw_bytes / 2**20:.1f} MiB a step; {args.steps} steps a run, "
          f"{args.rounds} rounds; load average {load_before:.2f} before, {load_after:.2f} after")
    print()
    print("| operator | steps/s (median) | raw MB/s delivered | x raw |")
    print("|---|---|---|---|")
    base = statistics.median(rates.get("none", [0])) if "none" in rates else None
    for v in variants:
        median = statistics.median(rates[v])
        ratio = f"{median / base:.2f}" if base else "-"
        print(f"| {v} | {median:.2f} | {median * raw_bytes / 1e6:.0f} | {ratio} |")
    if mpi:
        median = statistics.median(r["steps_per_second"] for r in mpi)
        ratio = f"{median / base:.2f}" if base else "-"
        print(f"| MPI point-to-point (raw, host 1 to host 2) | {median:.2f} | "
              f"{median * raw_bytes / 1e6:.0f} | {ratio} |")


def run_mpi(hosts, build, work, raw_bytes, args):
    """link_mpi's rounds: rank 0 on host 1, rank 1 on host 2, over OpenMPI's TCP transport."""
    mpirun, program = shutil.which("mpirun"), build / "bench" / "link_mpi"
    if mpirun is None or not program.exists():
        print("link_bench.py: no mpirun or build/bench/link_mpi: MPI left out", file=sys.stderr)
        return []
    session = pathlib.Path(work) / "ompi"
    session.mkdir()
    environment = {**os.environ, **hosts.agent_environment(), "OMPI_ALLOW_RUN_AS_ROOT": "1",
                   "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "OMPI_MCA_orte_tmpdir_base": str(session)}
    subnet = hosts.address(1).rsplit(".", 1)[0] + ".0/24"
    argv = [mpirun, "-n", "2", "-H", f"{hosts.address(1)}:1,{hosts.address(2)}:1",
            "--mca", "plm_rsh_agent", str(ROOT / "tests" / "hosts" / "mpi_agent.sh"),
            "--mca", "plm_rsh_no_tree_spawn", "1",
            "--mca", "oob_tcp_if_include", subnet, "--mca", "btl_tcp_if_include", subnet,
            "--mca", "btl", "tcp,self",
            str(program), "--bytes", str(raw_bytes), "--steps", str(args.steps),
            "--rounds", str(args.rounds)]
    done = hosts.run(1, argv, capture_output=True, text=True, timeout=1800, env=environment)
    if done.returncode != 0:
        sys.exit(f"link_bench.py: mpirun {done.returncode}: {done.stdout}\n{done.stderr}")
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


if __name__ == "__main__":
    main()
