#!/usr/bin/env bash
# Builds the model archive fuzzer in build/ (after scripts/setup.sh) and runs it for SECONDS against
# a fresh server over the valid and hostile seed models, then prints its summary. Exits non-zero
# when the server died or hung on an input (the input is left in build/tests/hostile/artifacts/).
#
# Usage: scripts/fuzz-models.sh [SECONDS] [model_archive_fuzz flags...]   (default 60 seconds)
#   e.g. scripts/fuzz-models.sh 300 --seed 42
set -euo pipefail

seconds="${1:-60}"
shift || true
if ! [[ "$seconds" =~ ^[0-9]+$ ]]; then
  echo "usage: $0 [SECONDS] [model_archive_fuzz flags...]; SECONDS must be a whole number" >&2
  exit 2
fi

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${SLIPSTREAM_BUILD_DIR:-$repo/build}"
if [ ! -f "$build/CMakeCache.txt" ]; then
  echo "$0: no build in $build: run scripts/setup.sh first" >&2
  exit 2
fi
cmake --build "$build" --target model_archive_fuzz slipstream_cli

seeds="$build/tests/hostile/models"
/usr/bin/python3 -B "$repo/tests/integration/models/make_models.py" "$seeds" >/dev/null
/usr/bin/python3 -B "$repo/tests/hostile/make_hostile_models.py" "$seeds" >/dev/null

echo "fuzzing model loading for ${seconds}s (seeds in $seeds)"
"$build/tests/hostile/model_archive_fuzz" "$seeds" "$seconds" \
  --artifacts "$build/tests/hostile/artifacts" "$@"
