#!/usr/bin/env bash
# The installed project as a user meets it: `cmake --install` into a fresh prefix, then
#   - examples 01 (C++), 02 (C) and 03 (Fortran) built outside the project with
#     find_package(slipstream CONFIG COMPONENTS client c fortran), and again with the pkg-config
#     lines of docs/clients.md ("Installed");
#   - each run against the installed `slipstream server`, with no LD_LIBRARY_PATH (RUNPATH);
#   - examples 01-03 linked with the static libraries (slipstream::*_static), and example 02
#     linked fully static with `pkg-config --static`, run the same way, with no libslipstream*.so
#     among their needed libraries;
#   - the installed Python package imported from the prefix by Debian's interpreter, its module
#     finding the prefix's libslipstream (no copy beside it);
#   - the installed slipstream-train finding its libraries.
# Usage: install_test.sh BUILD_DIR MODEL_FILE   (MODEL_FILE: the examples' scale.pt)
set -euo pipefail
build=$(cd "$1" && pwd)
model=$2
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/slipstream-install.XXXXXX")
server_pid=
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
unset LD_LIBRARY_PATH

prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" > "$work/install.log"
echo "installed into $prefix"

echo "== find_package"
cmake -S "$source_dir/tests/install/consumer" -B "$work/consumer" -G Ninja \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release > "$work/consumer.log"
cmake --build "$work/consumer" > "$work/consumer-build.log" || { cat "$work/consumer-build.log"; exit 1; }

echo "== pkg-config"
# <prefix>/lib/pkgconfig, or lib/<triplet>/pkgconfig for a build configured for /usr.
PKG_CONFIG_PATH=$(dirname "$(find "$prefix" -name slipstream.pc)")
export PKG_CONFIG_PATH
examples=$source_dir/examples
# shellcheck disable=SC2046
c++ -std=c++20 "$examples/01_put_get.cpp" $(pkg-config --cflags --libs slipstream) -o "$work/put_get_pc"
# shellcheck disable=SC2046
cc -std=c99 "$examples/02_c_api.c" $(pkg-config --cflags --libs slipstream-c) -o "$work/c_api_pc"
# shellcheck disable=SC2046
gfortran "$examples/03_fortran.f90" $(pkg-config --cflags --libs slipstream-fortran) \
  -o "$work/fortran_pc" -J "$work"
# shellcheck disable=SC2046
cc -std=c99 -static "$examples/02_c_api.c" $(pkg-config --static --cflags --libs slipstream-c) \
  -o "$work/c_api_pc_static" 2> "$work/static-link.log" || { cat "$work/static-link.log"; exit 1; }
for program in "$work/consumer/put_get_cpp_static" "$work/consumer/c_api_static" \
               "$work/consumer/fortran_api_static" "$work/c_api_pc_static"; do
  if readelf -d "$program" | grep NEEDED | grep libslipstream; then
    echo "$(basename "$program") is not linked statically with libslipstream"; exit 1
  fi
done
if readelf -d "$work/c_api_pc_static" | grep -q NEEDED; then
  echo "c_api_pc_static needs shared libraries"; exit 1
fi

echo "== run against the installed server"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$prefix/bin/slipstream" server --port "$port" --dir "$work" > "$work/server.log" 2>&1 &
server_pid=$!
# Up to 60 s: the server may take many seconds to listen on a loaded machine.
for _ in $(seq 600); do
  "$prefix/bin/slipstream" --version > /dev/null && (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  sleep 0.1
done
address=127.0.0.1:$port
for program in "$work/consumer/put_get_cpp" "$work/put_get_pc" "$work/consumer/put_get_cpp_static"; do
  "$program" "$address" > "$work/out.log" || { cat "$work/out.log"; exit 1; }
  echo "ok: $(basename "$program")"
done
for program in "$work/consumer/c_api" "$work/c_api_pc" "$work/consumer/fortran_api" "$work/fortran_pc" \
               "$work/consumer/c_api_static" "$work/consumer/fortran_api_static" "$work/c_api_pc_static"; do
  "$program" "$model" "$address" > "$work/out.log" || { cat "$work/out.log"; exit 1; }
  echo "ok: $(basename "$program")"
done

echo "== Python package and slipstream-train"
site=$(echo "$prefix"/lib/python3*/site-packages)
# One libslipstream, in the library folder: the module finds it through its RUNPATH.
if ls "$site"/slipstream/lib*.so* 2> /dev/null; then
  echo "a copy of a shared library beside the Python module"; exit 1
fi
SLIPSTREAM_ADDRESS=$address PYTHONPATH=$site /usr/bin/python3 -c '
import sys, numpy as np, slipstream
with slipstream.Client() as c:
    c.put_tensor("installed", np.arange(6, dtype=np.float32).reshape(2, 3))
    assert (c.get_tensor("installed") == np.arange(6, dtype=np.float32).reshape(2, 3)).all()
with open("/proc/self/maps") as maps:
    loaded = {line.split()[-1] for line in maps if "libslipstream.so" in line}
assert loaded and all(path.startswith(sys.argv[1]) for path in loaded), loaded
print("ok: python", slipstream.__file__, "with", *loaded)' "$(readlink -f "$prefix")/"
if ldd "$prefix/bin/slipstream-train" | grep "not found"; then
  echo "slipstream-train misses libraries"; exit 1
fi
echo "ok: slipstream-train links"
echo "install test passed"
