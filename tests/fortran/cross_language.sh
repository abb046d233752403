#!/usr/bin/env bash
# The cross-language round trip, run against one server (SLIPSTREAM_ADDRESS, as with_server.sh
# sets). Every program checks the dtype, the shape and every element of every dtype and rank 1-4
# plus a dataset, with the keys, shapes and value formula documented in xlang_fortran.f90:
#   Fortran writes xlang.fortran -> C++ reads it -> Python reads it
#   C++ writes xlang.cpp         -> Fortran reads it -> Python reads it
#   Python writes xlang.python   -> Fortran reads it -> C++ reads it
# and, so that no reader can pass by checking nothing, every reader must report exactly one
# failure, on that key, for xlang.corrupt: a full Python write whose int16 rank-2 array is then
# replaced by its column-major bytes read as row-major (same shape and values, wrong order).
# Every program exits non-zero on a mismatch; so does this script, at the first failed step.
# A new language adds its `<reader> read xlang.<writer>` and `<writer> write xlang.<language>`
# steps here.
# Usage: cross_language.sh XLANG_FORTRAN CROSS_CHECK PYTHON XLANG_PYTHON_PY
#   (PYTHON runs XLANG_PYTHON_PY; PYTHONPATH must make the `slipstream` package importable.)
#   Without PYTHON and XLANG_PYTHON_PY (a build without the Python package) the Python steps are
#   skipped, and the script says so.
set -euo pipefail
xlang_fortran=$1
cross_check=$2
if [ $# -ge 4 ]; then
  xlang_python=("$3" "$4")
else
  xlang_python=()
  echo "cross_language.sh: Python steps SKIPPED (no interpreter and xlang_python.py given)"
fi

step() {
  echo "== $*"
  "$@"
}

# Runs a reader on xlang.corrupt; it must fail, reporting exactly the corrupted array.
expect_detected() {
  echo "== $* (must detect xlang.corrupt.int16.rank2)"
  local output status=0
  output=$("$@" 2>&1) || status=$?
  printf '%s\n' "$output"
  local failed
  failed=$(printf '%s\n' "$output" | grep '^ *FAILED:' || true)
  if [ "$status" -eq 0 ] || [ "$(printf '%s\n' "$failed" | grep -c .)" -ne 1 ] ||
     ! printf '%s\n' "$failed" | grep -q 'xlang\.corrupt\.int16\.rank2'; then
    echo "cross_language.sh: FAILED: '$*' did not report exactly the corrupted array" \
         "(exit status $status)"
    exit 1
  fi
}

step "$xlang_fortran" write xlang.fortran
step "$cross_check" read xlang.fortran
step "$cross_check" write xlang.cpp
step "$xlang_fortran" read xlang.cpp
if [ ${#xlang_python[@]} -gt 0 ]; then
  step "${xlang_python[@]}" read xlang.fortran
  step "${xlang_python[@]}" read xlang.cpp
  step "${xlang_python[@]}" write xlang.python
  step "$xlang_fortran" read xlang.python
  step "$cross_check" read xlang.python
  step "${xlang_python[@]}" write xlang.corrupt
  step "${xlang_python[@]}" corrupt xlang.corrupt
  expect_detected "${xlang_python[@]}" read xlang.corrupt
  expect_detected "$xlang_fortran" read xlang.corrupt
  expect_detected "$cross_check" read xlang.corrupt
fi
echo "cross_language.sh: all steps passed"
