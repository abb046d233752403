#!/usr/bin/env bash
# Runs a command against a fresh slipstream server: starts `SLIPSTREAM server` on a free loopback
# port with a Unix socket in a private temporary directory, exports SLIPSTREAM_ADDRESS (the Unix
# socket, or TCP with WITH_SERVER_TCP=1), runs the command, stops the server, returns the
# command's exit status. WITH_SERVER_ARGS adds options to the server's command line (split on
# spaces), e.g. WITH_SERVER_ARGS="--requirepass secret".
# Usage: with_server.sh /path/to/slipstream command [args...]
set -euo pipefail
bin=$1
shift
dir=$(mktemp -d /tmp/slipstream-run-XXXXXX)
pid=""
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill "$pid"; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$dir"
}
trap cleanup EXIT
# A server that exits at start-up (most likely: another process took the port) is retried on
# another port; one that is still starting is waited for up to WITH_SERVER_START_SECONDS (60 s:
# a sanitizer build that maps libtorch on a loaded machine can take many seconds to listen).
for _ in 1 2 3 4 5; do
  port=$((20000 + RANDOM % 30000))
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && continue
  "$bin" server --port "$port" --unixsocket "$dir/s.sock" --dir "$dir" --loglevel warn ${WITH_SERVER_ARGS:-} &
  pid=$!
  deadline=$((SECONDS + ${WITH_SERVER_START_SECONDS:-60}))
  while ((SECONDS < deadline)); do
    # The private Unix socket appears only after this server has bound its TCP port, so a port
    # another process took between the check above and the bind is not mistaken for ours.
    if [ -S "$dir/s.sock" ] && (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break 2; fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.02
  done
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  pid=""
  ((SECONDS < deadline)) || break  # it did not exit: it never came up, another port won't help
done
[ -n "$pid" ] || { echo "with_server.sh: could not start $bin" >&2; exit 1; }
if [ "${WITH_SERVER_TCP:-0}" = 1 ]; then
  export SLIPSTREAM_ADDRESS="tcp://127.0.0.1:$port"
else
  export SLIPSTREAM_ADDRESS="unix://$dir/s.sock"
fi
"$@"
