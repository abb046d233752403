#!/usr/bin/env bash
# Runs a SmartRedis-style C or Fortran program as SmartSim would start an ensemble member:
# against a fresh server (tests/support/with_server.sh, TCP) reached through SSDB=host:port only
# (SLIPSTREAM_ADDRESS unset), with SSKEYOUT=member_a and SSKEYIN=member_a,member_b, logging at
# SR_LOG_LEVEL=DEBUG to SR_LOG_FILE; checks that the clients logged their creation there.
# Usage: run_c_fortran.sh /path/to/slipstream command [args...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$1
shift
log=$(mktemp "${TMPDIR:-/tmp}/smartredis-log-XXXXXX")
trap 'rm -f "$log"' EXIT
WITH_SERVER_TCP=1 "$here/../support/with_server.sh" "$bin" \
  env SSKEYOUT=member_a SSKEYIN=member_a,member_b SR_LOG_FILE="$log" SR_LOG_LEVEL=DEBUG \
  bash -c 'export SSDB=${SLIPSTREAM_ADDRESS#tcp://}; unset SLIPSTREAM_ADDRESS; exec "$@"' \
  program "$@"
grep -q 'New client created, connected to' "$log" || {
  echo "no client creation logged in SR_LOG_FILE:"
  cat "$log"
  exit 1
}
