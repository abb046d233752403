#!/usr/bin/env bash
# The Debian package as an admin meets it, without touching the machine's own /usr:
#   - `cpack -G DEB` from the build gives slipstream_<version>_<arch>.deb;
#   - its control fields (name, version, architecture, section, maintainer, description) and its
#     Depends: every shared library that a program or library in the package needs (ELF NEEDED)
#     and that the package does not hold itself belongs to a Debian package named in Depends;
#     python3 and python3-numpy are there for the Python package;
#   - its file list: programs, shared and static libraries, headers, Fortran modules, CMake and
#     pkg-config files, the Python package under /usr/lib/python3/dist-packages, nothing else of
#     Python's, no build-tree path; every shared library once, in the multiarch folder
#     /usr/lib/<triplet> (none beside the Python module, whose RUNPATH leads to that folder);
#   - `dpkg --root` installs it into a temporary root holding a copy of this machine's dpkg
#     database, so dpkg checks the declared dependencies against what is installed here; its
#     postinst (ldconfig) runs chrooted into the root, whose ld.so.cache must then list the
#     package's libraries; triggers are not run;
#   - from that root: the installed server runs, example 02 (C) built with the package's
#     pkg-config file runs against it, and Debian's python3 imports the package from the root's
#     dist-packages (its module loading the root's libslipstream) and round-trips a tensor.
# The package is made from a build configured with -DCMAKE_INSTALL_PREFIX=/usr (docs/packaging.md:
# cpack refuses others); for another build the test reports itself skipped.
# It does not prove that apt resolves the dependencies on another machine or that the files
# work at /usr itself (they run from the temporary root, through their $ORIGIN RUNPATH).
# Usage: deb_test.sh BUILD_DIR MODEL_FILE
set -euo pipefail
build=$(cd "$1" && pwd)
model=$2
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/slipstream-deb.XXXXXX")
server_pid=
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
unset LD_LIBRARY_PATH PYTHONPATH
fail() { echo "FAIL: $*"; exit 1; }

multiarch=$(gcc -print-multiarch)
libdir=$(sed -n 's/^CMAKE_INSTALL_LIBDIR:PATH=//p' "$build/CMakeCache.txt")
if [ "$libdir" != "lib/$multiarch" ]; then
  echo "skipped: the build installs libraries in <prefix>/$libdir; the Debian package is made from"
  echo "a build configured with -DCMAKE_INSTALL_PREFIX=/usr (libraries in lib/$multiarch)"
  exit 77
fi

echo "== cpack -G DEB"
version=$(sed -n 's/^set(CPACK_PACKAGE_VERSION "\(.*\)")$/\1/p' "$build/CPackConfig.cmake")
arch=$(dpkg --print-architecture)
(cd "$work" && cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work/out" > "$work/cpack.log" 2>&1) \
  || { cat "$work/cpack.log"; fail "cpack"; }
deb=$work/out/slipstream_${version}_${arch}.deb
[ -f "$deb" ] || { ls "$work/out"; fail "no $(basename "$deb")"; }
echo "ok: $(basename "$deb") ($(du -h "$deb" | cut -f1))"

echo "== control fields"
field() { dpkg-deb -f "$deb" "$1"; }
[ "$(field Package)" = slipstream ] || fail "Package: $(field Package)"
[ "$(field Version)" = "$version" ] || fail "Version: $(field Version)"
[ "$(field Architecture)" = "$arch" ] || fail "Architecture: $(field Architecture)"
[ "$(field Section)" = science ] || fail "Section: $(field Section)"
[[ "$(field Maintainer)" =~ ^[^\<]+\ \<[^\>]+@[^\>]+\>$ ]] || fail "Maintainer: $(field Maintainer)"
[[ "$(field Description)" == *"HPC simulations and machine learning"* ]] || fail "Description"
depends=$(field Depends)
echo "Depends: $depends"
# Package names in Depends (alternatives and version constraints dropped).
depends_names=$(echo "$depends" | tr ',|' '\n\n' | sed 's/(.*)//; s/:any//; s/ //g' | sort -u)
for name in python3 python3-numpy libc6 libstdc++6; do
  grep -qx "$name" <<< "$depends_names" || fail "Depends lacks $name"
done

echo "== file list"
dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|' > "$work/files"
expect_file() {
  grep -Eq "$1" "$work/files" || fail "the package has no file matching $1"
}
expect_file '^/usr/bin/slipstream$'
expect_file '^/usr/bin/slipstream-train$'
for library in slipstream slipstream_c slipstream_fortran; do
  expect_file "^/usr/lib/$multiarch/lib$library\.so\.0$"
  expect_file "^/usr/lib/$multiarch/lib$library\.a$"
done
# Shared libraries (files and links named lib*.so*): each name once, all in the multiarch folder.
grep -E '/lib[^/]*\.so(\.[0-9]+)*$' "$work/files" > "$work/shared"
[ -s "$work/shared" ] || fail "no shared libraries in the file list"
if grep -v "^/usr/lib/$multiarch/[^/]*$" "$work/shared"; then
  fail "shared libraries outside /usr/lib/$multiarch"
fi
duplicated=$(sed 's|.*/||' "$work/shared" | sort | uniq -d)
[ -z "$duplicated" ] || fail "shared libraries shipped more than once: $duplicated"
echo "ok: $(wc -l < "$work/shared") shared library names, each once, in /usr/lib/$multiarch"
expect_file '^/usr/include/slipstream\.h$'
expect_file '^/usr/include/slipstream/client\.hpp$'
expect_file '^/usr/include/slipstream/fortran/[^/]+/slipstream\.mod$'
expect_file '/cmake/slipstream/slipstreamConfig\.cmake$'
expect_file '/pkgconfig/slipstream-c\.pc$'
expect_file '^/usr/lib/python3/dist-packages/slipstream/__init__\.py$'
expect_file '^/usr/lib/python3/dist-packages/slipstream/_slipstream\..*\.so$'
expect_file '^/usr/share/doc/slipstream/'
if grep -E '/python3\.[0-9]+/site-packages/|^/usr/local/' "$work/files"; then
  fail "files outside Debian's paths"
fi
if grep -F "$build" "$work/files"; then fail "build-tree paths in the file list"; fi
echo "ok: $(wc -l < "$work/files") entries"

echo "== every library the package needs is its own or a declared dependency"
dpkg-deb -x "$deb" "$work/extracted"
# The Python module finds the shared libslipstream through its RUNPATH.
module=$(echo "$work"/extracted/usr/lib/python3/dist-packages/slipstream/_slipstream*.so)
runpath=$(readelf -d "$module" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
module_dir=$(dirname "$module")
found=
IFS=: read -ra entries <<< "$runpath"
for entry in "${entries[@]}"; do
  candidate=${entry//\$ORIGIN/$module_dir}/libslipstream.so.0
  if [ -e "$candidate" ]; then found=$(readlink -f "$candidate"); break; fi
done
[[ "$found" == "$(readlink -f "$work/extracted/usr/lib/$multiarch")"/* ]] \
  || fail "the Python module's RUNPATH ($runpath) does not lead to /usr/lib/$multiarch/libslipstream.so.0"
echo "ok: the Python module's RUNPATH $runpath leads to /usr/lib/$multiarch"
find "$work/extracted" -type f -print0 | while IFS= read -r -d '' file; do
  if [ "$(head -c 4 "$file" | od -An -c | tr -d ' ')" = '177ELF' ]; then
    readelf -d "$file" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'
  fi
done | sort -u > "$work/needed"
: > "$work/paths"
ldconfig -p > "$work/ldconfig"
while read -r soname; do
  if [ -n "$(find "$work/extracted" -name "$soname")" ]; then continue; fi  # in the package
  path=$(awk -v so="$soname" '$1 == so {print $NF; exit}' "$work/ldconfig")
  [ -n "$path" ] || fail "$soname: not found on this machine"
  echo "$soname $path" >> "$work/paths"
done < "$work/needed"
while read -r soname path; do
  # dpkg knows a file under the path its package shipped it (/lib or /usr/lib on merged /usr).
  owner=$(dpkg -S "$path" 2>/dev/null || dpkg -S "$(readlink -f "$path")" 2>/dev/null \
          || dpkg -S "${path#/usr}" 2>/dev/null || dpkg -S "/usr$path" 2>/dev/null || true)
  owner=${owner%%:*}
  [ -n "$owner" ] || fail "$soname ($path) belongs to no Debian package"
  # Depends may name the package or a name it provides (libspdlog1.10 provides libspdlog1.10-fmt9).
  provided=$(dpkg-query -W -f='${Provides}' "$owner" | tr ',' '\n' | sed 's/(.*)//; s/ //g')
  satisfied=
  for name in "$owner" $provided; do
    if grep -qx "$name" <<< "$depends_names"; then satisfied=$name; fi
  done
  [ -n "$satisfied" ] || fail "$soname comes from $owner, which Depends lacks"
done < "$work/paths"
echo "ok: $(wc -l < "$work/paths") external libraries, each from a declared package"

echo "== dpkg -i into a temporary root"
if [ "$(id -u)" -ne 0 ]; then
  echo "skipped from here: dpkg --root runs the maintainer scripts through chroot, which needs root"
  exit 77
fi
root=$work/root
admin=$root/var/lib/dpkg
mkdir -p "$admin/info" "$admin/updates" "$admin/triggers"
# dpkg runs the maintainer scripts chrooted into the root: the package's postinst calls ldconfig,
# so the root gets a shell, ldconfig (static) and the C library, laid out as merged /usr.
mkdir -p "$root/usr/bin" "$root/usr/sbin" "$root/usr/lib64" "$root/usr/lib/$multiarch" "$root/etc"
for link in bin sbin lib lib64; do ln -s "usr/$link" "$root/$link"; done
cp /bin/sh "$root/usr/bin/sh"
cp "$(command -v ldconfig)" "$root/usr/sbin/ldconfig"
for library in $(ldd /bin/sh | grep -o '/[^ ]*'); do cp "$library" "$root/usr/${library#/usr/}"; done
cp /var/lib/dpkg/status "$admin/status"
# The other packages' file lists, for dpkg's file-conflict check (hard links when possible).
cp -l /var/lib/dpkg/info/*.list "$admin/info/" 2>/dev/null || cp /var/lib/dpkg/info/*.list "$admin/info/"
dpkg --root="$root" --no-triggers -i "$deb" > "$work/dpkg.log" 2>&1 \
  || { cat "$work/dpkg.log"; fail "dpkg -i"; }
status=$(dpkg-query --admindir="$admin" -W -f='${Status} ${Version}' slipstream)
[ "$status" = "install ok installed $version" ] || fail "dpkg status: $status"
[ -x "$root/usr/bin/slipstream" ] || fail "no $root/usr/bin/slipstream"
echo "ok: $status"
# The postinst's ldconfig ran in the root: its cache lists the package's libraries.
ldconfig -p -C "$root/etc/ld.so.cache" | grep -E "libslipstream_c\.so\.0 .*=> (/usr)?/lib/" \
  || fail "the root's ld.so.cache lacks libslipstream_c.so.0 (postinst)"

echo "== the installed files at work"
if ldd "$root/usr/bin/slipstream" | grep -E "not found"; then fail "slipstream misses libraries"; fi
loaded=$(ldd "$root/usr/bin/slipstream" | awk '$1 == "libslipstream.so.0" {print $3}')
[[ "$(readlink -f "$loaded")" == "$root"/usr/lib/* ]] \
  || fail "the installed slipstream loads libslipstream from ${loaded:-nowhere}, not from the root"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$root/usr/bin/slipstream" server --port "$port" --dir "$work" > "$work/server.log" 2>&1 &
server_pid=$!
# Up to 60 s: the server may take many seconds to listen on a loaded machine.
for _ in $(seq 600); do
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.log"; fail "the installed server exited"; }
  sleep 0.1
done
address=127.0.0.1:$port
pc_dir=$(dirname "$(find "$root/usr/lib" -name slipstream-c.pc)")
# shellcheck disable=SC2046
cc -std=c99 "$source_dir/examples/02_c_api.c" \
  $(PKG_CONFIG_PATH=$pc_dir pkg-config --cflags --libs slipstream-c) -o "$work/c_api"
"$work/c_api" "$model" "$address" > "$work/out.log" || { cat "$work/out.log"; fail "example 02"; }
echo "ok: example 02 built with the package's pkg-config file, run against its server"
SLIPSTREAM_ADDRESS=$address PYTHONPATH=$root/usr/lib/python3/dist-packages /usr/bin/python3 -c '
import os, sys, numpy as np, slipstream
assert slipstream.__file__.startswith(sys.argv[1]), slipstream.__file__
with open("/proc/self/maps") as maps:
    loaded = {line.split()[-1] for line in maps if "libslipstream.so" in line}
assert loaded and all(path.startswith(sys.argv[2]) for path in loaded), loaded
with slipstream.Client() as c:
    c.put_tensor("from_deb", np.arange(4, dtype=np.int32))
    assert (c.get_tensor("from_deb") == np.arange(4, dtype=np.int32)).all()
print("ok: python", slipstream.__file__, "with", *loaded)' \
  "$root/usr/lib/python3/dist-packages/slipstream/" "$(readlink -f "$root/usr/lib/$multiarch")/"
echo "deb test passed"
