#!/bin/bash
# CTest ocean_local_closure: --closure local end to end, no server. Writes train_closure.py's two
# TorchScript modules (the analytic formula, and the learned closure's architecture with its
# initial weights), then runs slipstream-ocean in process with each: the analytic model must
# reproduce the Fortran formula in every cell of every step (--check-analytic: the layout), the
# closure must run with a non-zero inference fraction, and a missing model file must fail. The
# same two models exported to ONNX must do the same, the closure with TorchScript's energy figures.
# Usage: local_closure_test.sh SLIPSTREAM_OCEAN PYTHON3 WORK_DIR
set -euo pipefail
ocean=$1 python=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work" && cd "$work"

"$python" -B - "$here" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import torch
import train_closure as t
torch.manual_seed(0)
torch.jit.script(t.Analytic()).save("analytic.pt")
closure = t.Closure(torch.zeros(4), torch.ones(4), -10.0, 2.0)
torch.jit.script(closure).save("closure.pt")
# The same two models as ONNX (issue: ONNX closures run with the same figures).
t.export_onnx(t.Analytic(), "analytic.onnx")
t.export_onnx(closure, "closure.onnx")
PY

"$ocean" --nx 16 --ny 12 --steps 200 --closure local --model-file analytic.pt \
         --check-analytic 1e-4 | tee analytic.log
grep -q 'local closure: model file analytic.pt in process on CPU' analytic.log
grep -q 'served vs analytic log EKE, max |diff|' analytic.log

"$ocean" --nx 16 --ny 12 --steps 200 --closure local --model-file closure.pt \
         --csv closure.csv --csv-every 50 | tee closure.log
grep -q 'slipstream-ocean: local closure .* us/step' closure.log
# Every row after the first has a positive inference fraction (the model ran every step).
awk -F, 'NR > 2 && !($9 > 0) { bad = 1 } END { exit bad || NR < 4 }' closure.csv

# ONNX: the analytic model reproduces the formula, and the learned closure gives the same energy
# figures as its TorchScript form (float32 models of the same weights; the runs feed the closure
# back into the flow, so they are compared within 1e-5 relative, not bit for bit).
"$ocean" --nx 16 --ny 12 --steps 200 --closure local --model-file analytic.onnx \
         --check-analytic 1e-4 | tee analytic_onnx.log
grep -q 'served vs analytic log EKE, max |diff|' analytic_onnx.log
"$ocean" --nx 16 --ny 12 --steps 200 --closure local --model-file closure.onnx \
         --csv closure_onnx.csv --csv-every 50 | tee closure_onnx.log
"$python" -B "$here/compare_energy.py" closure.csv closure_onnx.csv

if "$ocean" --nx 8 --ny 8 --steps 2 --closure local --model-file missing.pt 2> missing.err; then
  echo "FAILED: a missing model file did not fail the run" >&2
  exit 1
fi
grep -q 'cannot load model file missing.pt' missing.err
echo "ocean_local_closure: all checks passed"
