#!/usr/bin/env bash
# An MPI writer job -> C++ readers over one server (SLIPSTREAM_ADDRESS, as with_server.sh sets):
# starts CHECK (two reader groups that check every element) and then RANKS ranks of WRITER under
# MPIEXEC; fails if either fails. Each of them has a time limit, so a hang fails the test.
# Usage: stream_mpi.sh CHECK WRITER RANKS MPIEXEC [MPIEXEC_ARGS...]
#   (MPIEXEC_ARGS come before the program, e.g. the -n flag is added here: MPIEXEC -n RANKS ...)
set -euo pipefail
check=$1
writer=$2
ranks=$3
shift 3
stream=mpi-run
steps=4
"$check" "$stream" "$ranks" "$steps" &
check_pid=$!
status=0
timeout 120 "$@" -n "$ranks" "$writer" "$stream" "$steps" || status=$?
if [ "$status" -ne 0 ]; then
  echo "stream_mpi.sh: the MPI writer job failed (status $status)" >&2
  kill "$check_pid" 2>/dev/null || true
fi
wait "$check_pid" || status=$?
exit "$status"
