#!/usr/bin/env bash
# The cross-language round trip, run against one server (SLIPSTREAM_ADDRESS, as with_server.sh
# sets): Fortran writes every dtype and rank 1-4 plus a dataset under the prefix xlang.fortran and
# C++ checks every element; C++ writes the same under xlang.cpp and Fortran checks it. Every
# program exits non-zero on a mismatch. Keys, shapes and the value formula are documented in
# xlang_fortran.f90; a new language adds its own `<reader> read xlang.fortran` and
# `<writer> write xlang.<language>` + `xlang_fortran read xlang.<language>` steps here.
# Usage: cross_language.sh XLANG_FORTRAN CROSS_CHECK
set -euo pipefail
xlang_fortran=$1
cross_check=$2
"$xlang_fortran" write xlang.fortran
"$cross_check" read xlang.fortran
"$cross_check" write xlang.cpp
"$xlang_fortran" read xlang.cpp
