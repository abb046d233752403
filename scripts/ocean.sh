#!/usr/bin/env bash
# The ocean ensemble: sets up and builds slipstream, then runs apps/ocean/experiment.toml with the
# launcher: a high-resolution truth run, the EKE closure trained from it, a server serving it and
# 3 coarse Fortran members with different forcing calling it every step under their own key
# prefixes, and the comparison of their energy against the truth (runs/ocean/report/index.html).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
scripts/experiment.sh apps/ocean/experiment.toml runs/ocean
