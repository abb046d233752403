"""setuptools entry of `pip install .` (see pyproject.toml): builds the compiled module
slipstream._slipstream with the project's CMake (only that target and what it needs), and ships it
with libslipstream beside it (the module's RUNPATH is $ORIGIN). Needs what scripts/setup.sh
installs: a C++20 compiler, CMake, Ninja, pybind11-dev, python3-dev and the libraries CMake finds.
"""
import glob
import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = os.path.join(os.path.abspath(self.build_temp), "cmake")
        configure = ["cmake", "-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
                     "-DSLIPSTREAM_BUILD_TESTS=OFF", "-DSLIPSTREAM_BUILD_BENCH=OFF",
                     # The module for this interpreter, with $ORIGIN as its RUNPATH already in
                     # the build tree, so it can be copied as it is.
                     f"-DPython3_EXECUTABLE={sys.executable}", "-DCMAKE_BUILD_WITH_INSTALL_RPATH=ON"]
        if shutil.which("ninja"):
            configure += ["-G", "Ninja"]
        subprocess.run(configure, check=True)
        subprocess.run(["cmake", "--build", build, "--target", "slipstream_python",
                        "--parallel", str(os.cpu_count() or 1)], check=True)
        target = os.path.dirname(os.path.abspath(self.get_ext_fullpath(ext.name)))
        os.makedirs(target, exist_ok=True)
        # The module, and the client library under its soname (what the module's loader asks for).
        for pattern in (os.path.join(build, "bindings", "python", "slipstream", "_slipstream*.so"),
                        os.path.join(build, "src", "client", "libslipstream.so.0")):
            found = glob.glob(pattern)
            if not found:
                raise RuntimeError(f"the CMake build made no {pattern}")
            for path in found:
                shutil.copy2(path, target, follow_symlinks=True)


setup(ext_modules=[CMakeExtension("slipstream._slipstream")], cmdclass={"build_ext": CMakeBuild})
