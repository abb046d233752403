#!/usr/bin/env bash
# `pip install .` as the docs give it, offline, with Debian's build dependencies: a fresh virtual
# environment (with the system's numpy), then `import slipstream` from outside the source tree and
# a tensor round trip against a real server.
# Usage: pip_test.sh SLIPSTREAM_BINARY
set -euo pipefail
binary=$1
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/slipstream-pip.XXXXXX")
server_pid=
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

/usr/bin/python3 -m venv --system-site-packages "$work/env"
"$work/env/bin/pip" install --quiet --no-build-isolation --no-deps --no-index "$source_dir"

port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$binary" server --port "$port" --dir "$work" > "$work/server.log" 2>&1 &
server_pid=$!
cd "$work"
SLIPSTREAM_ADDRESS=127.0.0.1:$port "$work/env/bin/python" -c '
import sys, time
import numpy as np, slipstream
assert slipstream.__file__.startswith(sys.prefix), slipstream.__file__
for attempt in range(600):  # 60 s: the server may take many seconds to listen on a loaded machine
    try:
        client = slipstream.Client()
        break
    except slipstream.ConnectionError:
        time.sleep(0.1)
x = np.arange(12, dtype=np.float64).reshape(3, 4)
client.put_tensor("pip", x)
assert (client.get_tensor("pip") == x).all()
print("ok: pip-installed slipstream", slipstream.__version__, "from", slipstream.__file__)'
