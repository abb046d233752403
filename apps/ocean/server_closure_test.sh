#!/bin/bash
# CTest ocean_server_onnx_closure: --closure server with ONNX models, run by tests/support/
# with_server.sh (SLIPSTREAM_ADDRESS names a fresh server). Exports train_closure.py's analytic
# model and closure (initial weights) as TorchScript and as ONNX, stores each on the server (the
# ONNX ones with backend ONNX), then runs slipstream-ocean against them: the ONNX analytic model
# must reproduce the Fortran formula in every cell of every step, and the ONNX closure must give
# the TorchScript closure's energy figures (within 1e-5 relative at every CSV row).
# Usage: server_closure_test.sh SLIPSTREAM_OCEAN PYTHON3 PYTHONPATH WORK_DIR
set -euo pipefail
ocean=$1 python=$2 pythonpath=$3 work=$4
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work" && cd "$work"

PYTHONPATH="$pythonpath" "$python" -B - "$here" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import torch
import slipstream
import train_closure as t
torch.manual_seed(0)
closure = t.Closure(torch.zeros(4), torch.ones(4), -10.0, 2.0)
torch.jit.script(closure).save("closure.pt")
t.export_onnx(t.Analytic(), "analytic.onnx")
t.export_onnx(closure, "closure.onnx")
client = slipstream.Client()  # SLIPSTREAM_ADDRESS
client.set_model_from_file("closure_ts", "closure.pt", backend="TORCH", device="CPU")
client.set_model_from_file("closure_onnx", "closure.onnx", backend="ONNX", device="CPU")
client.set_model_from_file("analytic_onnx", "analytic.onnx", backend="ONNX", device="CPU")
assert client.model_info("closure_onnx").backend == "ONNX"
PY

"$ocean" --nx 16 --ny 12 --steps 200 --closure server --model analytic_onnx \
         --check-analytic 1e-4 | tee analytic.log
grep -q 'served vs analytic log EKE, max |diff|' analytic.log
for form in ts onnx; do
  "$ocean" --nx 16 --ny 12 --steps 200 --closure server --model "closure_$form" \
           --csv "closure_$form.csv" --csv-every 50 | tee "closure_$form.log"
done
"$python" -B "$here/compare_energy.py" closure_ts.csv closure_onnx.csv
echo "ocean_server_onnx_closure: all checks passed"
