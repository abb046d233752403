#!/bin/bash
# What coupling the ocean model to its learned EKE closure costs (issue 12): the step time of
# slipstream-ocean on one grid with
#   analytic    the closure's fixed formula in Fortran (no model),
#   local       the learned closure's TorchScript file run in process (--closure local),
#   server-1rt  the same model stored on a real server, called over its Unix socket in one round
#               trip per step (--closure server: run_model_on),
#   server-3rt  the same in three round trips (put_tensor, run_model, unpack_tensor),
# each run --reps times, interleaved so that a change of the machine's load hits every variant.
# Prints the median step time (and min, max), the median time of the model call per step, the
# CPU time per step of the ocean process (over its steps) and of the server (with its model
# worker, over the whole run: its share of the connection set-up is negligible), the ratios,
# and the load average before and after. The ocean process and the server are pinned to
# different cores (taskset) and run libtorch on one thread each, so the model evaluates on one
# core whichever side runs it. On a loaded machine the wall times mostly measure each process's
# share of its core; the CPU times do not.
#
# Usage: apps/ocean/bench_closure.sh [--build DIR] [--nx N] [--ny N] [--steps N] [--reps N]
#                                    [--model-file closure.pt] [--work DIR]
#                                    [--ocean-cpu C] [--server-cpu C]
# Without --model-file the closure is trained first, as experiment.toml does (an 80 x 80 truth
# run coarse-grained to 40 x 40 and train_closure.py, 40 epochs; about 30 s). A benchmark, not a
# test: nothing here fails on a time.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
build=$root/build
nx=40 ny=40 steps=2000 reps=5 model_file="" work="" ocean_cpu=0 server_cpu=1
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=$(cd "$2" && pwd); shift 2 ;;
    --nx) nx=$2; shift 2 ;;
    --ny) ny=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --model-file) model_file=$(realpath "$2"); shift 2 ;;
    --work) work=$2; shift 2 ;;
    --ocean-cpu) ocean_cpu=$2; shift 2 ;;
    --server-cpu) server_cpu=$2; shift 2 ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "bench_closure.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
ocean=$build/apps/ocean/slipstream-ocean
slipstream=$build/src/cli/slipstream
for program in "$ocean" "$slipstream"; do
  [ -x "$program" ] || { echo "bench_closure.sh: $program not built (--build DIR)" >&2; exit 2; }
done
command -v redis-cli > /dev/null || { echo "bench_closure.sh: needs redis-cli" >&2; exit 2; }
if [ "$(nproc)" -lt 2 ]; then server_cpu=$ocean_cpu; fi

[ -n "$work" ] || work=$(mktemp -d /tmp/ocean-bench-XXXXXX)
mkdir -p "$work" && work=$(cd "$work" && pwd) && cd "$work"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2> /dev/null; then
    kill "$server_pid"; wait "$server_pid" 2> /dev/null || true
  fi
}
trap cleanup EXIT

if [ -z "$model_file" ]; then
  echo "training the closure in $work (truth run, then train_closure.py) ..."
  "$ocean" --nx 80 --ny 80 --steps 27030 --closure analytic --csv-every 27030 \
    --coarse-grain 2 --features-out truth.bin --snapshot-start 13515 --snapshot-every 135 \
    > truth.log
  /usr/bin/python3 -B "$root/apps/ocean/train_closure.py" truth.bin --epochs 40 \
    --out closure.pt --metrics metrics.json > train.log
  tail -n 2 train.log
  model_file=$work/closure.pt
fi

# A real server on a Unix socket (no TCP), the model stored as ocean.closure.
socket=$work/server.sock
rm -f "$socket"
taskset -c "$server_cpu" "$slipstream" server --port 0 --unixsocket "$socket" --dir "$work" \
  --loglevel warn --intra-op-threads 1 > server.log 2>&1 &
server_pid=$!
for _ in $(seq 500); do
  [ -S "$socket" ] && redis-cli -s "$socket" PING > /dev/null 2>&1 && break
  kill -0 "$server_pid" 2> /dev/null || { cat server.log >&2; exit 1; }
  sleep 0.02
done
stored=$(redis-cli -s "$socket" -x AI.MODELSTORE ocean.closure TORCH CPU BLOB < "$model_file")
[ "$stored" = OK ] || { echo "bench_closure.sh: storing the model: $stored" >&2; exit 1; }
export SLIPSTREAM_ADDRESS=unix://$socket SSKEYOUT="" SSKEYIN=""

# CPU time (clock ticks, user + system) of the server and its children (the model worker).
server_ticks() {
  local total=0 pid
  for pid in "$server_pid" $(pgrep -P "$server_pid"); do
    total=$((total + $(awk '{print $14 + $15}' "/proc/$pid/stat" 2> /dev/null || echo 0)))
  done
  echo "$total"
}
ticks_per_second=$(getconf CLK_TCK)

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
common=(--nx "$nx" --ny "$ny" --steps "$steps" --csv-every "$steps" --progress-every "$steps")
declare -A args=(
  [analytic]="--closure analytic"
  [local]="--closure local --model-file $model_file"
  [server-1rt]="--closure server --model ocean.closure --server-round-trips 1"
  [server-3rt]="--closure server --model ocean.closure --server-round-trips 3")
variants=(analytic local server-1rt server-3rt)
: > results.txt
for rep in $(seq "$reps"); do
  for variant in "${variants[@]}"; do
    ticks0=$(server_ticks)
    # shellcheck disable=SC2086  # the variant's options are split on purpose
    OMP_NUM_THREADS=1 taskset -c "$ocean_cpu" "$ocean" "${common[@]}" ${args[$variant]} \
      > "run-$variant-$rep.log"
    ticks1=$(server_ticks)
    step_us=$(sed -n 's/.* s wall, \([0-9.]*\) us\/step/\1/p' "run-$variant-$rep.log")
    call_us=$(sed -n 's/.* closure \([0-9.]*\) us\/step.*/\1/p' "run-$variant-$rep.log")
    ocean_cpu_us=$(sed -n 's/.* CPU time \([0-9.]*\) us\/step.*/\1/p' "run-$variant-$rep.log")
    server_cpu_us=$(awk -v d=$((ticks1 - ticks0)) -v t="$ticks_per_second" -v n="$steps" \
      'BEGIN {printf "%.1f", d / t * 1e6 / n}')
    echo "$variant $rep $step_us ${call_us:-0} $ocean_cpu_us $server_cpu_us" >> results.txt
  done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

/usr/bin/python3 - "$nx" "$ny" "$steps" "$reps" "$load_before" "$load_after" <<'PY'
import statistics, sys
nx, ny, steps, reps, before, after = sys.argv[1:7]
rows = {}
for line in open("results.txt"):
    variant, _, step, call, ocean_cpu, server_cpu = line.split()
    rows.setdefault(variant, []).append(
        (float(step), float(call), float(ocean_cpu), float(server_cpu)))
median = {v: statistics.median(x[0] for x in r) for v, r in rows.items()}
call = {v: statistics.median(x[1] for x in r) for v, r in rows.items()}
cpu = {v: (statistics.median(x[2] for x in r), statistics.median(x[3] for x in r))
       for v, r in rows.items()}
print(f"\nocean step time, {nx} x {ny} cells, {steps} steps, median of {reps} runs "
      f"(load average before {before}, after {after})\n")
print("| closure | step (µs) median | min | max | model call (µs/step) | call share of the step "
      "| CPU µs/step: ocean | server | sum |")
print("|---|---|---|---|---|---|---|---|---|")
for v in ("analytic", "local", "server-1rt", "server-3rt"):
    steps_v = [x[0] for x in rows[v]]
    share = f"{call[v] / median[v]:.2f}" if call[v] > 0 else "–"
    print(f"| {v} | {median[v]:.1f} | {min(steps_v):.1f} | {max(steps_v):.1f} | "
          f"{call[v]:.1f} | {share} | {cpu[v][0]:.1f} | {cpu[v][1]:.1f} | {sum(cpu[v]):.1f} |")
print()
print(f"step ratios: local / analytic {median['local'] / median['analytic']:.2f}, "
      f"server-1rt / local {median['server-1rt'] / median['local']:.2f}, "
      f"server-3rt / local {median['server-3rt'] / median['local']:.2f}, "
      f"server-3rt / server-1rt {median['server-3rt'] / median['server-1rt']:.2f}")
print(f"call ratios: server-1rt / local {call['server-1rt'] / call['local']:.2f}, "
      f"server-3rt / local {call['server-3rt'] / call['local']:.2f}; "
      f"what the server adds per step: {call['server-1rt'] - call['local']:.1f} µs in one "
      f"round trip, {call['server-3rt'] - call['local']:.1f} µs in three")
print(f"CPU ratios (ocean + server): local / analytic {sum(cpu['local']) / sum(cpu['analytic']):.2f}, "
      f"server-1rt / local {sum(cpu['server-1rt']) / sum(cpu['local']):.2f}, "
      f"server-3rt / local {sum(cpu['server-3rt']) / sum(cpu['local']):.2f}")
PY
echo "(runs and logs in $work)"
