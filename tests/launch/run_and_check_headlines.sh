#!/bin/sh
# Runs an experiment with `slipstream run` and checks that its report's first screen carries the
# headline numbers a process wrote (headlines.json): each QUANTITY must be a row of the
# "headline numbers" table of RUN_DIR/report/summary.txt.
# Usage: run_and_check_headlines.sh SLIPSTREAM EXPERIMENT RUN_DIR QUANTITY...
set -eu
slipstream=$1 experiment=$2 run_dir=$3
shift 3
"$slipstream" run "$experiment" --run-dir "$run_dir" --overwrite
summary="$run_dir/report/summary.txt"
# The table: from "headline numbers:" to the first empty line.
table=$(sed -n '/^headline numbers:$/,/^$/p' "$summary")
if [ -z "$table" ]; then
  echo "FAIL: $summary has no headline numbers" >&2
  exit 1
fi
printf '%s\n' "$table"
for quantity in "$@"; do
  if ! printf '%s\n' "$table" | grep -qF "$quantity"; then
    echo "FAIL: no headline \"$quantity\" in $summary" >&2
    exit 1
  fi
done
echo "headline numbers: all $# found"
