# Spack package of Slipstream. Written for Spack 0.23 or later (the c/cxx/fortran language
# dependencies); it has not been run through Spack yet. packaging/README.md says how to use it.
from spack.package import *


class Slipstream(CMakePackage):
    """In-memory coupling of HPC simulations and machine learning: a Redis/RedisAI-compatible
    server with TorchScript model execution, streams from simulation ranks to reader groups,
    C++/C/Fortran/Python clients, an online trainer and an experiment launcher."""

    homepage = "https://slipstream.invalid"
    # Set to the project's repository (or use `spack develop --path CHECKOUT slipstream@main`).
    git = "https://slipstream.invalid/slipstream.git"

    version("main", branch="main")

    variant("fortran", default=True, description="Fortran module (libslipstream_fortran, .mod files)")
    variant("python", default=True, description="Python package `slipstream` (pybind11)")
    variant(
        "mpi",
        default=True,
        description="MPI: the trainer's collectives over ranks (slipstream-train) and MPI mini-apps",
    )
    variant("hdf5", default=True, description="openPMD HDF5 files: slipstream stream dump/replay")

    generator("ninja")

    depends_on("c", type="build")
    depends_on("cxx", type="build")
    depends_on("fortran", type="build", when="+fortran")
    depends_on("cmake@3.25:", type="build")
    depends_on("ninja", type="build")
    depends_on("pkgconfig", type="build")

    # The server, the command-line program and the trainer (scripts/setup.sh's Debian list:
    # libasio-dev libspdlog-dev libfmt-dev libcli11-dev libtoml11-dev libtorch-dev libgloo-dev
    # libseccomp-dev). libtorch comes from py-torch, which ships TorchConfig.cmake and gloo.
    depends_on("asio")
    depends_on("fmt")
    depends_on("spdlog")
    depends_on("cli11")
    depends_on("toml11")
    depends_on("py-torch")
    depends_on("libseccomp")
    # The compression operators (libzstd-dev libblosc-dev libbz2-dev libzfp-dev), which the shared
    # client library links.
    depends_on("zstd")
    depends_on("c-blosc")
    depends_on("bzip2")
    depends_on("zfp")
    depends_on("hdf5", when="+hdf5")
    depends_on("mpi", when="+mpi")

    # The Python package (python3-dev pybind11-dev python3-numpy); slipstream.training and the
    # launcher's report use torch and matplotlib at run time.
    extends("python", when="+python")
    depends_on("python@3.9:", type=("build", "link", "run"), when="+python")
    depends_on("py-pybind11", type="build", when="+python")
    depends_on("py-numpy", type=("build", "run"), when="+python")
    depends_on("py-matplotlib", type="run", when="+python")

    # The test suite (SLIPSTREAM_BUILD_TESTS, on with `spack install --test=root`).
    depends_on("googletest", type="test")
    depends_on("hiredis", type="test")
    depends_on("redis", type="test")
    depends_on("py-pytest", type="test", when="+python")
    depends_on("py-h5py", type="test", when="+python+hdf5")

    def cmake_args(self):
        spec = self.spec
        args = [
            self.define("SLIPSTREAM_BUILD_TESTS", self.run_tests),
            self.define("SLIPSTREAM_BUILD_BENCH", False),
            self.define_from_variant("SLIPSTREAM_BUILD_FORTRAN", "fortran"),
            self.define_from_variant("SLIPSTREAM_BUILD_PYTHON", "python"),
            # MPI and HDF5 are optional in the build: turned off by hiding them from CMake.
            self.define("CMAKE_DISABLE_FIND_PACKAGE_MPI", spec.satisfies("~mpi")),
            self.define("CMAKE_DISABLE_FIND_PACKAGE_HDF5", spec.satisfies("~hdf5")),
        ]
        if spec.satisfies("+python"):
            python = spec["python"]
            args.append(self.define("SLIPSTREAM_PYTHON_EXECUTABLE", python.command.path))
            # Relative to the prefix: Spack's site-packages, so `spack load` puts it on PYTHONPATH.
            args.append(self.define("SLIPSTREAM_PYTHON_INSTALL_DIR", python.package.platlib))
        if spec.satisfies("+mpi"):
            args.append(self.define("MPI_CXX_COMPILER", spec["mpi"].mpicxx))
        return args
