#!/usr/bin/env bash
# Mass insertion with `redis-cli --pipe` (raw RESP, as Redis's documentation recommends): 10000
# SETs and 100 RPUSHes into slipstream, then checks the replies redis-cli counted, DBSIZE and a few
# values; the same stream is sent to a real redis-server, which must agree.
# Usage: redis_cli_pipe.sh SLIPSTREAM_BINARY
source "$(dirname "$0")/servers.sh"

[[ $# -eq 1 ]] || fail "usage: $0 SLIPSTREAM_BINARY"
start_slipstream "$1"
start_redis

readonly kKeys=10000 kListPushes=100
stream="$WORK_DIR/stream.resp"
awk -v keys="$kKeys" -v pushes="$kListPushes" 'BEGIN {
  for (i = 0; i < keys; ++i) {
    key = "key:" i; value = "value:" i ":" sprintf("%0*d", i % 50, 0);
    printf "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", length(key), key, length(value), value;
  }
  for (i = 0; i < pushes; ++i) {
    item = "item" i;
    printf "*3\r\n$5\r\nRPUSH\r\n$4\r\nlist\r\n$%d\r\n%s\r\n", length(item), item;
  }
}' >"$stream"
expected_replies=$((kKeys + kListPushes))

for server in slipstream redis; do
  port_var=${server^^}_PORT
  port=${!port_var}
  report=$("$REDIS_CLI" -p "$port" --pipe <"$stream" 2>&1) || fail "$server: redis-cli --pipe failed: $report"
  [[ "$report" == *"errors: 0, replies: $expected_replies"* ]] ||
    fail "$server: expected 'errors: 0, replies: $expected_replies' from redis-cli --pipe, got: $report"
  dbsize=$("$REDIS_CLI" -p "$port" DBSIZE)
  [[ "$dbsize" == $((kKeys + 1)) ]] || fail "$server: DBSIZE is $dbsize, expected $((kKeys + 1))"
  value=$("$REDIS_CLI" -p "$port" GET key:9999)
  [[ "$value" == "value:9999:$(printf '%049d' 0)" ]] || fail "$server: GET key:9999 returned '$value'"
  length=$("$REDIS_CLI" -p "$port" LLEN list)
  [[ "$length" == "$kListPushes" ]] || fail "$server: LLEN list is $length, expected $kListPushes"
  last=$("$REDIS_CLI" -p "$port" LINDEX list -1)
  [[ "$last" == "item$((kListPushes - 1))" ]] || fail "$server: LINDEX list -1 returned '$last'"
  echo "$server: $report" | tr '\n' ' '
  echo
done
echo "PASS: redis-cli --pipe inserted $expected_replies commands into slipstream and redis-server alike"
