#!/usr/bin/env bash
# Builds the libFuzzer targets with clang in build-fuzz/ and runs the RESP parser fuzzer for a
# bounded time on a scratch copy of the seed corpus. Exits non-zero when the fuzzer finds a crash
# (the reproducer is left in build-fuzz/artifacts/).
#
# Usage: scripts/fuzz.sh [SECONDS] [extra libFuzzer flags...]   (default 60 seconds)
set -euo pipefail

seconds="${1:-60}"
shift || true
if ! [[ "$seconds" =~ ^[0-9]+$ ]]; then
  echo "usage: $0 [SECONDS] [libFuzzer flags...]; SECONDS must be a whole number" >&2
  exit 2
fi

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${SLIPSTREAM_FUZZ_BUILD_DIR:-$repo/build-fuzz}"
jobs="${SLIPSTREAM_FUZZ_BUILD_JOBS:-$(nproc)}"

CC="${CC:-clang}" CXX="${CXX:-clang++}" cmake -S "$repo" -B "$build" -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DSLIPSTREAM_FUZZ=ON -DSLIPSTREAM_BUILD_TESTS=OFF -DSLIPSTREAM_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" --target resp_parser_fuzz -j "$jobs"

corpus="$(mktemp -d "${TMPDIR:-/tmp}/slipstream-fuzz.XXXXXX")"
trap 'rm -rf "$corpus"' EXIT
cp "$repo"/fuzz/corpus/resp_parser/* "$corpus"/
mkdir -p "$build/artifacts"

echo "fuzzing resp_parser for ${seconds}s (corpus in $corpus)"
# libFuzzer exits non-zero on a crash, a leak, a timeout or an out-of-memory; set -e passes it on.
"$build/fuzz/resp_parser_fuzz" "$corpus" \
  -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=4096 -print_final_stats=1 \
  -artifact_prefix="$build/artifacts/" "$@"
