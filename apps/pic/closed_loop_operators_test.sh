#!/bin/sh
# The closed loop with the stream compressed (issue 31): experiment.toml as it is, but slipstream-pic
# publishes through an operator (--stream-operators, adios2.dataset.operators as openPMD-api users
# write them); the trainer learns from the decoded samples. The run must pass the same check as the
# raw one (the trained model's error below 0.2 of the untrained model's, plot_pic.py --check), and
# prints the trained model's error beside the raw run's (RAW_RUN_DIR, when that run is there). The
# ratio is printed, not checked: which model versions the PIC calls depends on timing.
# Usage: closed_loop_operators_test.sh SLIPSTREAM RUN_DIR OPERATORS_JSON [RAW_RUN_DIR]
set -eu
slipstream=$1 run_dir=$2 operators=$3 raw_run_dir=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/slipstream-closed-loop-ops.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp "$here/experiment.toml" "$here/train.toml" "$here/models.py" "$here/plot_pic.py" "$work/"
# The PIC's arguments gain the operator (a TOML literal string: the JSON's quotes stay as they are;
# its braces doubled, which the launcher's placeholders read as literal braces).
operators=$(printf '%s' "$operators" | sed 's/{/{{/g; s/}/}}/g')
sed -i "s|\"--stream\", \"pic\",|\"--stream\", \"pic\", \"--stream-operators\", '$operators',|" \
  "$work/experiment.toml"
grep -qF -- "--stream-operators" "$work/experiment.toml" || {
  echo "FAIL: experiment.toml no longer has the \"--stream\", \"pic\", arguments this edits" >&2
  exit 1
}
"$here/../../tests/launch/run_and_check_headlines.sh" "$slipstream" "$work/experiment.toml" \
  "$run_dir" "trained model's error" "untrained model"
python3 - "$run_dir" "$raw_run_dir" <<'PY'
import json, pathlib, sys
def trained_error(run_dir):
    if not run_dir or not pathlib.Path(run_dir).is_dir():
        return None
    for path in pathlib.Path(run_dir).rglob("headlines.json"):
        for entry in json.loads(path.read_text()):
            if entry["name"] == "trained model's error":
                return entry["value"], entry.get("reference", float("nan"))
    return None
mine, raw = trained_error(sys.argv[1]), trained_error(sys.argv[2])
print(f"with the operator: trained model's error {mine[0]:.4g} (untrained {mine[1]:.4g})")
if raw:
    print(f"raw run: trained model's error {raw[0]:.4g}: the operator's run is {mine[0] / raw[0]:.2f}x")
PY
