#!/usr/bin/env bash
# Sets up and builds slipstream, starts a server, runs the end-to-end example client against it
# (over the Unix socket and over TCP), prints what happened, and stops the server.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build

workdir=$(mktemp -d /tmp/slipstream-quickstart-XXXXXX)
# A random loopback port that nothing listens on.
while :; do
  port=$((20000 + RANDOM % 30000))
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || break
done
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then kill "$server_pid"; wait "$server_pid" || true; fi
  rm -rf "$workdir"
}
trap cleanup EXIT

echo "== starting: slipstream server --port $port --unixsocket $workdir/slipstream.sock"
build/src/cli/slipstream server --port "$port" --unixsocket "$workdir/slipstream.sock" \
  --dir "$workdir" --loglevel info &
server_pid=$!
for _ in $(seq 100); do
  redis-cli -p "$port" ping >/dev/null 2>&1 && break
  sleep 0.05
done

echo "== example over the Unix socket"
SLIPSTREAM_ADDRESS="unix://$workdir/slipstream.sock" build/examples/01_put_get
echo "== example over TCP"
SLIPSTREAM_ADDRESS="tcp://127.0.0.1:$port" build/examples/01_put_get
echo "== the same data seen by redis-cli"
redis-cli -p "$port" --no-raw KEYS '*'
redis-cli -p "$port" INFO keyspace
redis-cli -p "$port" SHUTDOWN NOSAVE >/dev/null 2>&1 || true
wait "$server_pid" || true
server_pid=""
echo "== done"
