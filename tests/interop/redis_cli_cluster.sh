#!/usr/bin/env bash
# `redis-cli -c` against a 3-shard slipstream cluster: SET and GET of keys in every shard's slots
# through one entry point, following -MOVED; without -c the same request shows the redirect; and
# `redis-cli --cluster check` accepts the cluster's description of itself.
# Usage: redis_cli_cluster.sh SLIPSTREAM_BINARY
source "$(dirname "$0")/servers.sh"

[[ $# -eq 1 ]] || fail "usage: $0 SLIPSTREAM_BINARY"
binary=$1
[[ -x "$binary" ]] || fail "slipstream binary not found: $binary"

# Starts the three shards on three distinct free ports (every member must know all of them
# before any starts); returns 1, with every shard it started stopped, when a port was taken
# between its choice and the bind.
start_cluster() {
  ports=()
  while [[ ${#ports[@]} -lt 3 ]]; do
    port=$(random_port)
    [[ " ${ports[*]} " == *" $port "* ]] || ports+=("$port")
  done
  members="127.0.0.1:${ports[0]},127.0.0.1:${ports[1]},127.0.0.1:${ports[2]}"
  local started=() k dir pid
  for k in 0 1 2; do
    dir="$WORK_DIR/shard$k"
    mkdir -p "$dir"
    "$binary" server --port "${ports[$k]}" --dir "$dir" --cluster-nodes "$members" --threads 1 \
      --loglevel warn >>"$dir/log" 2>&1 &
    pid=$!
    if ! wait_until_ready "$pid" "${ports[$k]}"; then
      echo "shard $k did not start on port ${ports[$k]}:" >&2
      cat "$dir/log" >&2 || true
      kill "${started[@]}" "$pid" 2>/dev/null || true
      wait "${started[@]}" "$pid" 2>/dev/null || true
      return 1
    fi
    started+=("$pid")
  done
  SERVER_PIDS+=("${started[@]}")
}
for attempt in 1 2 3 4 5; do
  start_cluster && break
  [[ $attempt -lt 5 ]] || fail "the cluster did not start in 5 attempts"
done

entry=${ports[0]}
# Without -c the redirect is shown: "foo" (slot 12182) belongs to the third shard.
moved=$("$REDIS_CLI" -p "$entry" SET foo bar 2>&1)
[[ "$moved" == *"MOVED 12182 127.0.0.1:${ports[2]}"* ]] || fail "expected MOVED to shard 2, got: $moved"

# With -c redis-cli follows MOVED to whichever shard owns each key.
for i in $(seq 1 30); do
  reply=$("$REDIS_CLI" -c -p "$entry" SET "key:$i" "value:$i")
  [[ "$reply" == OK ]] || fail "SET key:$i through -c returned '$reply'"
done
for i in $(seq 1 30); do
  value=$("$REDIS_CLI" -c -p "${ports[$((i % 3))]}" GET "key:$i")
  [[ "$value" == "value:$i" ]] || fail "GET key:$i through -c returned '$value'"
done
total=0
for k in 0 1 2; do
  n=$("$REDIS_CLI" -p "${ports[$k]}" DBSIZE)
  [[ "$n" -gt 0 ]] || fail "shard $k holds no keys: the keys did not spread"
  total=$((total + n))
done
[[ "$total" == 30 ]] || fail "the shards hold $total keys, expected 30"

# Hash tags keep multi-key commands on one shard; other multi-key commands are refused.
reply=$("$REDIS_CLI" -c -p "$entry" MSET "{user1}.a" 1 "{user1}.b" 2)
[[ "$reply" == OK ]] || fail "MSET with one hash tag returned '$reply'"
reply=$("$REDIS_CLI" -c -p "$entry" MGET "{user1}.a" "{user1}.b" | tr '\n' ' ')
[[ "$reply" == "1 2 " ]] || fail "MGET with one hash tag returned '$reply'"
reply=$("$REDIS_CLI" -c -p "$entry" MSET a 1 b 2 2>&1)
[[ "$reply" == *CROSSSLOT* ]] || fail "MSET across slots returned '$reply'"

check=$("$REDIS_CLI" --cluster check "127.0.0.1:$entry" 2>&1) || true
[[ "$check" == *"[OK] All 16384 slots covered."* ]] ||
  fail "redis-cli --cluster check did not accept the map: $check"
echo "PASS: redis-cli -c followed MOVED across 3 shards; --cluster check: all slots covered"
