# shellcheck shell=bash disable=SC2034  # SLIPSTREAM_PORT and REDIS_PORT are read by the sourcing script
# Shared helpers for the interop shell tests: start a slipstream server and a real redis-server on
# free loopback ports in a private temporary directory, and stop both (by pid) on exit.
# Source this file; then call `start_slipstream BINARY` and/or `start_redis`. They set
# SLIPSTREAM_PORT / REDIS_PORT. Everything is removed by the EXIT trap installed here.

set -euo pipefail

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# redis-cli and redis-server are required, not optional: a missing one is a broken setup (the setup
# script installs redis-server and redis-tools), so fail loudly instead of skipping.
REDIS_SERVER=${REDIS_SERVER:-$(command -v redis-server || true)}
REDIS_CLI=${REDIS_CLI:-$(command -v redis-cli || true)}
[[ -x "$REDIS_SERVER" ]] || fail "redis-server not found (install Debian package redis-server)"
[[ -x "$REDIS_CLI" ]] || fail "redis-cli not found (install Debian package redis-tools)"

WORK_DIR=$(mktemp -d "${TMPDIR:-/tmp}/slipstream-interop-XXXXXX")
SERVER_PIDS=()

cleanup() {
  local pid
  for pid in "${SERVER_PIDS[@]}"; do
    kill -TERM "$pid" 2>/dev/null || true
  done
  for pid in "${SERVER_PIDS[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$WORK_DIR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Waits until the process `pid` answers PING on `port`; returns 1 if it exits first (port taken).
# At least 60 s, as tests/support/with_server.sh waits: a server mapping libtorch on a loaded
# machine can take many seconds to listen.
wait_until_ready() {
  local pid=$1 port=$2
  for _ in $(seq 1 3000); do
    kill -0 "$pid" 2>/dev/null || return 1
    if [[ $("$REDIS_CLI" -p "$port" PING 2>/dev/null) == PONG ]]; then
      # Make sure the PONG came from our process, not from a stranger on the same port.
      kill -0 "$pid" 2>/dev/null && return 0
      return 1
    fi
    sleep 0.02
  done
  return 1
}

# A random port in 20000-32767 that nothing listens on right now (a connect attempt fails):
# below Linux's ephemeral range (32768-60999), so that no connection of a test running beside
# this one is given it between this check and the server's bind.
random_port() {
  local port
  while true; do
    port=$((20000 + RANDOM % 12768))
    if ! (exec 9<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return 0
    fi
  done
}

# start_slipstream BINARY: sets SLIPSTREAM_PORT.
start_slipstream() {
  local binary=$1 port pid dir
  [[ -x "$binary" ]] || fail "slipstream binary not found: $binary"
  dir="$WORK_DIR/slipstream"
  mkdir -p "$dir"
  for _ in 1 2 3 4 5; do
    port=$(random_port)
    "$binary" server --port "$port" --dir "$dir" --loglevel warn >>"$dir/log" 2>&1 &
    pid=$!
    if wait_until_ready "$pid" "$port"; then
      SERVER_PIDS+=("$pid")
      SLIPSTREAM_PORT=$port
      return 0
    fi
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  cat "$dir/log" >&2 || true
  fail "slipstream server did not start"
}

# start_redis: sets REDIS_PORT. One database only, like slipstream, so SELECT 1 fails on both.
start_redis() {
  local port pid dir
  dir="$WORK_DIR/redis"
  mkdir -p "$dir"
  for _ in 1 2 3 4 5; do
    port=$(random_port)
    "$REDIS_SERVER" --port "$port" --bind 127.0.0.1 --save '' --appendonly no --databases 1 \
      --dir "$dir" --daemonize no >>"$dir/log" 2>&1 &
    pid=$!
    if wait_until_ready "$pid" "$port"; then
      SERVER_PIDS+=("$pid")
      REDIS_PORT=$port
      return 0
    fi
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  cat "$dir/log" >&2 || true
  fail "redis-server did not start"
}
