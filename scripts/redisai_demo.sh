#!/usr/bin/env bash
# Sets up and builds slipstream, starts a server, runs the end-to-end example client against it
# (over the Unix socket and over TCP), runs a TorchScript model through RedisAI commands with
# redis-cli, and stops the server.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build

workdir=$(mktemp -d /tmp/slipstream-demo-XXXXXX)
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
echo "== a TorchScript model run through RedisAI commands, with redis-cli"
/usr/bin/python3 tests/integration/models/make_models.py "$workdir/models" >/dev/null
cli() { echo "> $*"; redis-cli -p "$port" "$@"; }
redis-cli -p "$port" -x AI.MODELSTORE scale TORCH CPU BLOB < "$workdir/models/scale.pt" >/dev/null
echo "> AI.MODELSTORE scale TORCH CPU BLOB <scale.pt: x * 2 + 1>"
cli AI.TENSORSET x FLOAT 2 2 VALUES 1 2 3 4
cli AI.MODELEXECUTE scale INPUTS 1 x OUTPUTS 1 y
cli AI.TENSORGET y META VALUES
cli AI.INFO scale
cli INFO keyspace
redis-cli -p "$port" SHUTDOWN NOSAVE >/dev/null 2>&1 || true
wait "$server_pid" || true
server_pid=""
echo "== done"
