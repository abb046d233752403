#!/usr/bin/env bash
# Sends the same raw byte stream of inline commands (as typed into telnet, or sent by scripts),
# mixed with RESP multibulk requests, to slipstream and to a real redis-server, and requires the
# raw reply bytes to be identical. Usage: inline_compare.sh SLIPSTREAM_BINARY
source "$(dirname "$0")/servers.sh"

[[ $# -eq 1 ]] || fail "usage: $0 SLIPSTREAM_BINARY"
start_slipstream "$1"
start_redis

# Sends stdin's bytes on a fresh connection to `port` and writes every reply byte until the server
# closes the connection (after QUIT). With a byte count, stops after that many bytes instead.
exchange() {
  local port=$1 count=${2:-}
  exec 3<>"/dev/tcp/127.0.0.1/$port"
  cat >&3
  if [[ -n "$count" ]]; then
    timeout 10 head -c "$count" <&3 || fail "fewer than $count reply bytes from port $port in 10 s"
  else
    timeout 10 cat <&3 || fail "no end of replies from port $port within 10 s"
  fi
  exec 3<&-
}

# Compares the reply bytes of the two servers to `request`, labelled `name`. With "prefix", only
# as many bytes as redis-server sent before closing the connection are read from slipstream.
compare_case() {
  local name=$1 request=$2 mode=${3:-}
  local redis_out="$WORK_DIR/redis.out" slipstream_out="$WORK_DIR/slipstream.out"
  exchange "$REDIS_PORT" <"$request" >"$redis_out"
  [[ -s "$redis_out" ]] || fail "$name: redis-server sent nothing"
  if [[ "$mode" == prefix ]]; then
    exchange "$SLIPSTREAM_PORT" "$(stat -c %s "$redis_out")" <"$request" >"$slipstream_out"
  else
    exchange "$SLIPSTREAM_PORT" <"$request" >"$slipstream_out"
  fi
  if ! cmp -s "$redis_out" "$slipstream_out"; then
    echo "$name request:" >&2
    od -c "$request" >&2
    diff -u --label redis-server <(od -c "$redis_out") --label slipstream \
      <(od -c "$slipstream_out") >&2 || true
    fail "$name: slipstream's reply bytes differ from redis-server's"
  fi
}

# Each case is one connection, ending with QUIT; its bytes are given to printf as a format.
# shellcheck disable=SC1003,SC2016  # backslashes and dollars are meant literally
cases=(
  # Plain words, CRLF and bare LF line ends, repeated blanks and tabs, empty lines (ignored).
  'PING\r\nSET k "a b"\r\nGET k\r\n\r\n\n  ECHO \t  spaced   \nDBSIZE\r\nQUIT\r\n'
  # Double-quoted escapes and single quotes, as Redis's sdssplitargs reads them.
  'SET q "tab\\there\\nnl\\x41\\x42\\\\ \\"quote\\""\r\nGET q\r\nSTRLEN q\r\nSET s '"'"'it\\'"'"'s'"'"'\r\nGET s\r\nECHO ""\r\nECHO '"''"'\r\nECHO "x" \r\nECHO "y"\nQUIT\r\n'
  # Inline and multibulk requests interleaved in one stream (pipelined).
  'SET a 1\r\n*2\r\n$3\r\nGET\r\n$1\r\na\r\nRPUSH l x y z\r\n*4\r\n$6\r\nLRANGE\r\n$1\r\nl\r\n$1\r\n0\r\n$2\r\n-1\r\nlrange l 0 -1\r\nQUIT\r\n'
  # Errors on inline commands: unknown command, wrong arity, WRONGTYPE; the connection stays usable.
  'NOSUCH a b\r\nGET\r\nRPUSH w a\r\nGET w\r\nPING\r\nQUIT\r\n'
)
# Unbalanced quotes: the same error reply from both. redis-server then closes the connection, while
# slipstream (by design: an inline line can be resynchronised) keeps it open, so only the bytes up
# to the close are compared.
unbalanced_cases=(
  'PING\r\nECHO "unbalanced\r\n'
  'PING\r\nSET k "a"b\r\n'
  "PING\\r\\nSET k 'a\\r\\n"
)

for i in "${!cases[@]}"; do
  # shellcheck disable=SC2059  # the case is a printf format on purpose
  printf "${cases[$i]}" >"$WORK_DIR/request"
  compare_case "case $i" "$WORK_DIR/request"
done
for i in "${!unbalanced_cases[@]}"; do
  # shellcheck disable=SC2059
  printf "${unbalanced_cases[$i]}" >"$WORK_DIR/request"
  compare_case "unbalanced case $i" "$WORK_DIR/request" prefix
done
echo "PASS: $((${#cases[@]} + ${#unbalanced_cases[@]})) inline-command streams, identical reply bytes"
