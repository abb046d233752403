#!/usr/bin/env bash
# The main job: sets up and builds slipstream, then runs the closed loop of apps/pic with the
# launcher (apps/pic/experiment.toml): a server, the two-stream instability on 2 MPI ranks
# streaming openPMD steps, a 2-rank trainer learning the field from the phase space, the model
# published back and called by the simulation, a live table, and the report in
# runs/pic-closed-loop/report/index.html.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
scripts/experiment.sh apps/pic/experiment.toml runs/pic-closed-loop
