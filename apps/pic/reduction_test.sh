#!/usr/bin/env bash
# The test pic_stream_reduction: slipstream-pic publishes a short run with a reduction at the
# source (reductions.py's phase-space histogram, run by every rank on its own particles) while
# `slipstream stream dump` writes the stream to an openPMD file, which check_reduction_dump.py
# checks against the particles each rank says it had (--stream-echo). Needs a server: run under
# tests/support/with_server.sh, which sets SLIPSTREAM_ADDRESS.
# Usage: reduction_test.sh SLIPSTREAM WORK_DIR RANKS PIC_COMMAND...
set -euo pipefail
slipstream=$1 work=$2 ranks=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
stream=pic_reduction_test
file=$work/pic_stream_reduction.h5
echo_prefix=$work/pic_reduction_echo
steps=20 every=10 x_bins=8 v_bins=6 v_max=2
mkdir -p "$work"
rm -f "$file" "$echo_prefix"*.csv
/usr/bin/python3 "$here/reductions.py" "$work/phase_space.pt" --x-bins $x_bins --v-bins $v_bins \
  --v-max $v_max
reductions='[{"function": "'$work/phase_space.pt'", "output": "meshes/phase_space",
  "inputs": ["particles/electrons/position/x", "particles/electrons/momentum/x"]}]'

"$slipstream" stream dump --stream "$stream" --output "$file" --timeout 60000 &
dump=$!
trap 'kill $dump 2>/dev/null || true' EXIT
"$@" --steps "$steps" --stream "$stream" --stream-every "$every" --stream-echo "$echo_prefix" \
  --progress-every "$steps" --vth 0.3 --stream-reductions "$reductions"
wait $dump
trap - EXIT

/usr/bin/python3 "$here/check_reduction_dump.py" "$file" "$echo_prefix" --ranks "$ranks" \
  --steps "$(seq -s, 0 "$every" "$steps")" --x-bins $x_bins --v-bins $v_bins --v-max $v_max
