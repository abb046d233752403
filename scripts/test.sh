#!/usr/bin/env bash
# Sets up and builds slipstream, then runs the whole test suite through CTest.
# Usage: scripts/test.sh [ctest args...]   (e.g. -L unit, -R interop)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
ctest --test-dir build --output-on-failure --timeout 300 -j "$(nproc)" "$@"
