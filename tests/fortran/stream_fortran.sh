#!/usr/bin/env bash
# Fortran writers -> C++ readers over one server (SLIPSTREAM_ADDRESS, as with_server.sh sets):
# starts STREAM_WRITER as ranks 0 and 1 (two processes) and STREAM_CHECK (two reader groups of
# two), and fails if any of them fails. The checker verifies every element in C order, so it
# shows that the Fortran module's reversal of dimensions is right.
# WRITER_LAUNCHER (optional, split on spaces) prefixes the writers' command lines, e.g. valgrind.
# Usage: stream_fortran.sh STREAM_WRITER STREAM_CHECK
set -euo pipefail
writer=$1
check=$2
# shellcheck disable=SC2206
launcher=(${WRITER_LAUNCHER:-})
"${launcher[@]}" "$writer" 0 &
writer0=$!
"${launcher[@]}" "$writer" 1 &
writer1=$!
status=0
"$check" || status=$?
wait "$writer0" || status=$?
wait "$writer1" || status=$?
exit "$status"
