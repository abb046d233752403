#!/usr/bin/env bash
# Runs the same redis-cli command list against slipstream and a real redis-server and requires the
# replies to be identical. Usage: redis_cli_compare.sh SLIPSTREAM_BINARY COMMANDS_FILE
#
# Command file format: one redis-cli command per line; blank lines and lines starting with `#` are
# skipped; a line starting with `@sorted ` is a command whose reply order is unspecified (KEYS, SCAN,
# HGETALL): its reply lines are compared as a sorted set with redis-cli's "N) " numbering removed.
source "$(dirname "$0")/servers.sh"

[[ $# -eq 2 ]] || fail "usage: $0 SLIPSTREAM_BINARY COMMANDS_FILE"
slipstream_binary=$1
commands_file=$2
[[ -r "$commands_file" ]] || fail "cannot read $commands_file"

start_slipstream "$slipstream_binary"
start_redis

# Between commands, an ECHO of a marker separates the replies, so each reply can be labelled with
# its command (readable diffs) and the unordered ones sorted.
script="$WORK_DIR/script.txt"
commands=()
sorted=()
while IFS= read -r line || [[ -n "$line" ]]; do
  [[ -z "${line//[[:space:]]/}" || "$line" == \#* ]] && continue
  if [[ "$line" == "@sorted "* ]]; then
    line=${line#@sorted }
    sorted+=(1)
  else
    sorted+=(0)
  fi
  printf 'ECHO "@@@ %d"\n%s\n' "${#commands[@]}" "$line" >>"$script"
  commands+=("$line")
done <"$commands_file"
[[ ${#commands[@]} -gt 0 ]] || fail "no commands in $commands_file"

# Prints the replies of one server, each block headed by "> command".
run_against() {
  local port=$1 raw="$WORK_DIR/raw.$1"
  "$REDIS_CLI" --no-raw -p "$port" <"$script" >"$raw" 2>&1 || fail "redis-cli failed on port $port"
  local index=-1 block=()
  flush_block() {
    ((index >= 0)) || return 0
    printf '> %s\n' "${commands[$index]}"
    if ((${#block[@]} > 0)); then
      if [[ ${sorted[$index]} == 1 ]]; then
        printf '%s\n' "${block[@]}" | sed -E 's/^([[:space:]]*[0-9]+\) )+//' | LC_ALL=C sort
      else
        printf '%s\n' "${block[@]}"
      fi
    fi
  }
  while IFS= read -r line || [[ -n "$line" ]]; do
    if [[ "$line" =~ ^\"@@@\ ([0-9]+)\"$ ]]; then
      flush_block
      index=${BASH_REMATCH[1]}
      block=()
    else
      block+=("$line")
    fi
  done <"$raw"
  flush_block
}

run_against "$REDIS_PORT" >"$WORK_DIR/redis.out"
run_against "$SLIPSTREAM_PORT" >"$WORK_DIR/slipstream.out"

# Every command must have produced its marker on both servers (a dropped connection would not).
for server in redis slipstream; do
  count=$(grep -c '^> ' "$WORK_DIR/$server.out" || true)
  [[ $count -eq ${#commands[@]} ]] ||
    fail "$server answered $count of ${#commands[@]} commands; output:$(echo; tail -20 "$WORK_DIR/$server.out")"
done

if ! diff -u --label redis-server "$WORK_DIR/redis.out" --label slipstream "$WORK_DIR/slipstream.out"; then
  fail "slipstream replies differ from redis-server (see diff above: - redis, + slipstream)"
fi
echo "PASS: ${#commands[@]} commands, identical replies from redis-server and slipstream"
