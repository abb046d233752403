#!/usr/bin/env bash
# Runs an openPMD streaming reader and writer at once against the server of with_server.sh
# (SLIPSTREAM_ADDRESS), the reader joining first; fails when either fails.
# Usage: stream_pair.sh WRITER READER RANKS SERIES ITERATIONS ELEMENTS_PER_RANK
#   Both run under mpiexec with RANKS ranks each where mpiexec exists (two MPI singletons
#   started at once can fail to start their daemons), else directly (RANKS must be 1).
set -euo pipefail
writer=$1 reader=$2 ranks=$3 series=$4 iterations=$5 elements=$6
launch=()
if command -v mpiexec >/dev/null; then
  launch=(mpiexec --oversubscribe --allow-run-as-root -n "$ranks")
fi
"${launch[@]}" "$reader" "$series" "$iterations" "$elements" "$ranks" &
reader_pid=$!
trap 'kill $reader_pid 2>/dev/null || true' EXIT
"${launch[@]}" "$writer" "$series" "$iterations" "$elements"
wait $reader_pid
trap - EXIT
