#!/usr/bin/env bash
# Runs an experiment file with the launcher from a build: the apps' programs, the CLI and Debian's
# python3 (torch, numpy, matplotlib) first on PATH, the build's Python package on PYTHONPATH.
# Usage: scripts/experiment.sh EXPERIMENT.toml RUN_DIR [build-dir]
# The launcher prints a live table while it runs and writes RUN_DIR/report/index.html at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
experiment="$1"
run_dir="$2"
build="$(realpath "${3:-build}")"
export PATH="$build/apps/pic:$build/apps/ocean:$build/src/cli:/usr/bin:$PATH"
export PYTHONPATH="$build/bindings/python${PYTHONPATH:+:$PYTHONPATH}"
# OpenMPI refuses to start ranks as root unless told; containers and fresh machines often are.
if [ "$(id -u)" = 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
status=0
slipstream run "$experiment" --run-dir "$run_dir" --overwrite || status=$?
echo "== $run_dir: $(tail -n +1 "$run_dir/status.txt" 2>/dev/null | head -1)"
if [ -f "$run_dir/report/index.html" ]; then
  echo "== report: $(realpath "$run_dir/report/index.html") (summary: $run_dir/report/summary.txt)"
fi
exit "$status"
