#!/usr/bin/env bash
# Installs the Debian packages slipstream needs (when missing) and builds it in Release.
# Usage: scripts/setup.sh [build-dir] [extra cmake args...]
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD_DIR=${1:-build}
shift || true

PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config git
  libasio-dev libspdlog-dev libfmt-dev libcli11-dev
  libgtest-dev libgmock-dev
  libtorch-dev libgloo-dev                   # TorchScript model serving (src/ml)
  libseccomp-dev                             # system-call filter of the model workers
  libonnx-dev libonnx-testdata               # ONNX models lowered to TorchScript (src/ml/onnx)
  python3-onnx python3-sklearn               # ONNX test models (torch.onnx.export, scikit-learn)
  python3 python3-torch                      # test models traced from Python
  gfortran                                   # Fortran module (bindings/fortran)
  python3-dev pybind11-dev python3-numpy python3-pytest python3-pytest-timeout  # Python package (bindings/python)
  python3-venv python3-pip python3-setuptools python3-wheel  # `pip install .` (pip_install test)
  python3-xarray                             # smartredis.DatasetConverter.transform_to_xarray
  valgrind                                   # memcheck of the C and Fortran tests
  libhiredis-dev redis-server redis-tools   # interoperability tests and the peer benchmark
  clang libclang-rt-14-dev                   # libFuzzer target for the RESP parser
  libhdf5-dev hdf5-tools python3-h5py       # openPMD files of streams (stream dump/replay)
  libzstd-dev libblosc-dev libbz2-dev libzfp-dev  # compression operators (src/codec)
  openmpi-bin libopenmpi-dev                 # MPI writers test, stream benchmark's MPI peer
  libtoml11-dev                              # the trainer's config, experiment files
  nlohmann-json3-dev                         # openPMD-api JSON configurations (src/openpmd)
  python3-matplotlib chromium                # the launcher's report, opened in the report test
  slurmctld slurmd slurm-client munge        # the launcher's Slurm back-end, tested for real
  iproute2                                   # hosts made of network namespaces (tests/hosts)
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build "$BUILD_DIR" --parallel "$(nproc)"
echo "setup: built in $BUILD_DIR"
