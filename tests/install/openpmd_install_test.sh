#!/usr/bin/env bash
# The openPMD layer as an openPMD-api user meets it once installed: `cmake --install` into a
# fresh prefix puts nothing in the prefix's include/openPMD or cmake/openPMD (a real openPMD-api
# there stays untouched); the streaming writer and reader of tests/openpmd are built outside the
# project with find_package(openPMD) (opting in with CMAKE_PREFIX_PATH) and with pkg-config,
# and run against the installed server with no LD_LIBRARY_PATH.
# Usage: openpmd_install_test.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/slipstream-openpmd-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
unset LD_LIBRARY_PATH

prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" > "$work/install.log"
if [ -e "$prefix/include/openPMD" ] || find "$prefix" -path '*/cmake/openPMD' | grep -v slipstream/openpmd; then
  echo "the openPMD layer was installed where a real openPMD-api lives"; exit 1
fi
root=$(dirname "$(dirname "$(dirname "$(find "$prefix" -name openPMDConfig.cmake)")")")
root=$(dirname "$root")
echo "opt-in root: ${root#"$prefix"/}"

echo "== find_package(openPMD)"
cmake -S "$source_dir/tests/install/openpmd_consumer" -B "$work/consumer" -G Ninja \
  -DCMAKE_PREFIX_PATH="$root" -DSOURCE_ROOT="$source_dir" -DCMAKE_BUILD_TYPE=Release \
  > "$work/consumer.log" || { cat "$work/consumer.log"; exit 1; }
cmake --build "$work/consumer" > "$work/consumer-build.log" || { cat "$work/consumer-build.log"; exit 1; }

echo "== pkg-config openPMD"
export PKG_CONFIG_PATH=$root/lib/pkgconfig
mpi_flags=()
if grep -q "openPMD_HAVE_MPI 1" "$root/include/openPMD/config.hpp"; then
  mpi_flags=(-DOMPI_SKIP_MPICXX=1 $(pkg-config --cflags --libs ompi-cxx 2>/dev/null || mpicxx --showme:compile --showme:link))
fi
# shellcheck disable=SC2046
c++ -std=c++17 -I"$source_dir" "$source_dir/tests/openpmd/streaming_write.cpp" \
  $(pkg-config --cflags --libs openPMD) "${mpi_flags[@]}" -o "$work/streaming_write_pc"

echo "== run against the installed server"
"$source_dir/tests/support/with_server.sh" "$prefix/bin/slipstream" \
  "$source_dir/tests/openpmd/stream_pair.sh" "$work/consumer/streaming_write" \
  "$work/consumer/streaming_read" 1 installed.sst 3 1000
"$source_dir/tests/support/with_server.sh" "$prefix/bin/slipstream" \
  "$source_dir/tests/openpmd/stream_pair.sh" "$work/streaming_write_pc" \
  "$work/consumer/streaming_read" 1 installed_pc.sst 3 1000
echo "== the installed openpmd_api Python package"
package=$(find "$prefix" -type d -name openpmd_api | head -1)
[ -n "$package" ] || { echo "openpmd_api was not installed"; exit 1; }
case "$package" in */site-packages/*|*/dist-packages/*) echo "openpmd_api in a site folder"; exit 1;; esac
PYTHONPATH=$(dirname "$package") /usr/bin/python3 -c '
import sys, numpy as np, openpmd_api as io
series = io.Series(sys.argv[2] + "/installed.h5", io.Access.create)
rc = series.iterations[1].meshes["rho"][io.Mesh_Record_Component.SCALAR]
rc.reset_dataset(io.Dataset(np.dtype("float32"), [4]))
rc[()] = np.arange(4, dtype=np.float32)
series.close()
series = io.Series(sys.argv[2] + "/installed.h5", io.Access.read_only)
rc = series.iterations[1].meshes["rho"][io.Mesh_Record_Component.SCALAR]
values = rc.load_chunk()
series.flush()
assert (values == np.arange(4)).all(), values
with open("/proc/self/maps") as maps:
    loaded = {line.split()[-1] for line in maps if "libslipstream_openpmd.so" in line}
assert loaded and all(path.startswith(sys.argv[1]) for path in loaded), loaded
print("ok: openpmd_api", io.__version__, "from", io.__file__, "with", *loaded)' \
  "$(readlink -f "$prefix")/" "$work"
echo "openPMD install test passed"
