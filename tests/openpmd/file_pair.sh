#!/usr/bin/env bash
# Writes an openPMD HDF5 series with an openPMD-api program, reads it back with another that
# checks every element and attribute, and checks the files against the standard's rules.
# Usage: file_pair.sh WRITER READER WORK_DIR SERIES_NAME ITERATIONS ELEMENTS
set -euo pipefail
writer=$1 reader=$2 work=$3 name=$4 iterations=$5 elements=$6
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work"
rm -f "$work"/*.h5
"$writer" "$work/$name" "$iterations" "$elements"
"$reader" "$work/$name" "$iterations" "$elements" 1
/usr/bin/python3 "$here/check_openpmd_file.py" "$work/$name"
