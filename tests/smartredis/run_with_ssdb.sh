#!/usr/bin/env bash
# Runs a SmartRedis-style program against a fresh server with SSDB=127.0.0.1:PORT, its log in
# SR_LOG_FILE at SR_LOG_LEVEL=INFO, and checks that the program's log lines were written.
# Usage: run_with_ssdb.sh /path/to/slipstream /path/to/program [args...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$1
shift
log=$(mktemp /tmp/smartredis-log-XXXXXX)
trap 'rm -f "$log"' EXIT
WITH_SERVER_TCP=1 "$here/../support/with_server.sh" "$bin" \
  env SR_LOG_FILE="$log" SR_LOG_LEVEL=INFO bash -c 'SSDB=${SLIPSTREAM_ADDRESS#tcp://} exec "$@"' \
  program "$@"
grep -q '^cpp_program@.*:starting$' "$log" || { echo "log lines missing from SR_LOG_FILE:"; cat "$log"; exit 1; }
grep -q '^cpp_program@.*:WARNING: finished$' "$log" || { echo "warning line missing:"; cat "$log"; exit 1; }
grep -q '^cpp_owned_context@.*:ERROR: through the base class$' "$log" ||
  { echo "LogContext line missing:"; cat "$log"; exit 1; }
