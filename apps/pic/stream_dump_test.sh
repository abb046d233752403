#!/usr/bin/env bash
# The test pic_stream_dump: slipstream-pic publishes a short run to a stream while
# `slipstream stream dump` writes it to an openPMD file, which check_stream_dump.py then checks
# against what each rank says it wrote (--stream-echo). Needs a server: run under
# tests/support/with_server.sh, which sets SLIPSTREAM_ADDRESS.
# Usage: stream_dump_test.sh SLIPSTREAM WORK_DIR RANKS PIC_COMMAND...
#   (PIC_COMMAND: slipstream-pic, or mpiexec -n RANKS ... slipstream-pic)
set -euo pipefail
slipstream=$1 work=$2 ranks=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
stream=pic_dump_test
file=$work/pic_stream_dump.h5
echo_prefix=$work/pic_stream_echo
steps=40 every=10
mkdir -p "$work"
rm -f "$file" "$echo_prefix"*.csv

# The dump joins first or second, whichever: the writers keep their steps for one group.
"$slipstream" stream dump --stream "$stream" --output "$file" --timeout 60000 &
dump=$!
trap 'kill $dump 2>/dev/null || true' EXIT
"$@" --steps "$steps" --stream "$stream" --stream-every "$every" --stream-echo "$echo_prefix" \
  --progress-every "$steps"
wait $dump
trap - EXIT

/usr/bin/python3 "$here/check_stream_dump.py" "$file" "$echo_prefix" --ranks "$ranks" \
  --steps "$(seq -s, 0 "$every" "$steps")"
