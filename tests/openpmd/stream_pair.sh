#!/usr/bin/env bash
# Runs an openPMD streaming reader and writer at once against the server of with_server.sh
# (SLIPSTREAM_ADDRESS), the reader joining first; fails when either fails.
# Usage: stream_pair.sh WRITER READER RANKS SERIES ITERATIONS ELEMENTS_PER_RANK
#   Both run under mpiexec with RANKS ranks each where mpiexec exists (two MPI singletons
#   started at once can fail to start their daemons), else directly (RANKS must be 1).
set -euo pipefail
writer=$1 reader=$2 ranks=$3 series=$4 iterations=$5 elements=$6
# Each mpiexec gets a session folder of its own: two started at once otherwise race to make the
# same /tmp/ompi.HOST.UID, and the loser fails in orte_init ("mkdir ... File exists").
sessions=$(mktemp -d)
start() {  # start NAME PROGRAM ARGS...: runs it in the background; its pid in $started
  local name=$1
  shift
  if command -v mpiexec >/dev/null; then
    mkdir -p "$sessions/$name"
    OMPI_MCA_orte_tmpdir_base="$sessions/$name" \
      mpiexec --oversubscribe --allow-run-as-root -n "$ranks" "$@" &
  else
    "$@" &
  fi
  started=$!
}
start reader "$reader" "$series" "$iterations" "$elements" "$ranks"
reader_pid=$started
start writer "$writer" "$series" "$iterations" "$elements"
writer_pid=$started
# Whichever fails first fails the pair at once: the other (a writer waiting for its reader, a
# reader waiting for steps) is stopped rather than left to the test's timeout.
trap 'kill $reader_pid $writer_pid 2>/dev/null || true; rm -rf "$sessions"' EXIT
for _ in reader writer; do
  wait -n -p finished "$reader_pid" "$writer_pid" 2>/dev/null && continue
  status=$?
  [ "$finished" = "$reader_pid" ] && who=reader || who=writer
  echo "stream_pair.sh: the $who failed (exit status $status)" >&2
  exit 1
done
