"""A SmartRedis client that test_cluster_hosts.py runs on a host of its own and drives over
stdin/stdout, one JSON object a line each way, so that one `Client` lives through a partition.

Requests: {"op": "put", "key": K, "values": [...]}, {"op": "get", "key": K},
{"op": "keyslot", "key": K} (CLUSTER KEYSLOT, asked of the first member directly).
Replies: {"ok": true, "value": ..., "seconds": S} or
{"ok": false, "error_type": NAME, "error": MESSAGE, "seconds": S}.
The first line written is {"ready": true} once the client is connected (or {"ready": false,
"error": ...}). The cluster is SSDB (comma-separated members); timeouts are SR_CONN_TIMEOUT and
SR_CMD_TIMEOUT, the password SLIPSTREAM_PASSWORD.
"""

import json
import os
import sys
import time

import numpy as np
import slipstream
from smartredis import Client


def reply(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def serve(client, first_member):
    for line in sys.stdin:
        request = json.loads(line)
        started = time.monotonic()
        try:
            if request["op"] == "put":
                client.put_tensor(request["key"], np.array(request["values"], dtype=np.float64))
                value = None
            elif request["op"] == "get":
                value = client.get_tensor(request["key"]).tolist()
            elif request["op"] == "keyslot":
                value = first_member.command(["CLUSTER", "KEYSLOT", request["key"]])
            else:
                raise ValueError(f"unknown op {request['op']!r}")
        except Exception as error:  # every failure goes back to the test, which judges it
            reply({"ok": False, "error_type": type(error).__name__, "error": str(error),
                   "seconds": time.monotonic() - started})
            continue
        reply({"ok": True, "value": value, "seconds": time.monotonic() - started})


def main():
    members = os.environ["SSDB"].split(",")
    try:
        client = Client(address=os.environ["SSDB"], cluster=True)
        first_member = slipstream.Client(members[0])
    except Exception as error:
        reply({"ready": False, "error": f"{type(error).__name__}: {error}"})
        return 1
    reply({"ready": True})
    serve(client, first_member)
    return 0


if __name__ == "__main__":
    sys.exit(main())
