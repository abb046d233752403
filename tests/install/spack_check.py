"""Checks packaging/spack/package.py without Spack (which needs the network to be of use): the
file is imported against a small stand-in of `spack.package` that records the directives, then
  - every variant named in a `when=`, in define_from_variant or in spec.satisfies is declared;
  - cmake_args() runs for every combination of variants, asks only for dependencies that this
    combination has, and every SLIPSTREAM_* variable it sets is an option or cache variable of the
    project's CMake files, every CMAKE_DISABLE_FIND_PACKAGE_<P> names a package the project
    looks for.
This catches typos and stale option names; it does not prove that Spack concretizes or builds it.
Usage: spack_check.py SOURCE_DIR
"""
import itertools
import pathlib
import re
import sys
import types

source_dir = pathlib.Path(sys.argv[1])
package_file = source_dir / "packaging" / "spack" / "package.py"
errors = []

directives = {"version": [], "variant": [], "depends_on": [], "extends": [], "generator": []}


def directive(name):
    def record(*args, **kwargs):
        directives[name].append((args, kwargs))
    return record


def variant_names_in(spec_text):
    """+name and ~name in a spec string such as "+python+hdf5" or "hdf5~mpi"."""
    return re.findall(r"[+~]([A-Za-z_][A-Za-z0-9_-]*)", spec_text)


class FakeSpec:
    def __init__(self, variants, dependencies):
        self.variants = variants
        self.dependencies = dependencies

    def satisfies(self, text):
        for sign, name in re.findall(r"([+~])([A-Za-z_][A-Za-z0-9_-]*)", text):
            if name not in self.variants:
                errors.append(f"spec.satisfies({text!r}): no variant {name}")
                return False
            if self.variants[name] != (sign == "+"):
                return False
        return True

    def __getitem__(self, name):
        if name not in self.dependencies:
            raise KeyError(f"spec[{name!r}] without that dependency ({self.variants})")
        return types.SimpleNamespace(
            command=types.SimpleNamespace(path=f"/spack/{name}/bin/{name}"),
            package=types.SimpleNamespace(platlib="lib/python3.11/site-packages"),
            mpicxx=f"/spack/{name}/bin/mpicxx", prefix=f"/spack/{name}")


class CMakePackage:
    run_tests = False

    @staticmethod
    def define(name, value):
        if isinstance(value, bool):
            return f"-D{name}:BOOL={'ON' if value else 'OFF'}"
        return f"-D{name}:STRING={value}"

    def define_from_variant(self, name, variant):
        if variant not in self.spec.variants:
            errors.append(f"define_from_variant({name!r}, {variant!r}): no such variant")
            return ""
        return self.define(name, self.spec.variants[variant])


spack_package = types.ModuleType("spack.package")
spack_package.CMakePackage = CMakePackage
for name in directives:
    setattr(spack_package, name, directive(name))
for name in ("conflicts", "maintainers", "license", "patch", "provides", "requires", "resource"):
    setattr(spack_package, name, lambda *args, **kwargs: None)
spack_package.__all__ = [name for name in vars(spack_package) if not name.startswith("_")]
sys.modules["spack"] = types.ModuleType("spack")
sys.modules["spack.package"] = spack_package

namespace = {"__name__": "spack_package_check", "__file__": str(package_file)}
exec(compile(package_file.read_text(), str(package_file), "exec"), namespace)
package_class = namespace.get("Slipstream")
if package_class is None or not issubclass(package_class, CMakePackage):
    sys.exit("package.py defines no class Slipstream(CMakePackage)")
if not package_class.__doc__ or not (getattr(package_class, "git", None) or
                                     getattr(package_class, "url", None)):
    errors.append("the package needs a docstring and a git or url")
if not directives["version"]:
    errors.append("no version()")

variants = {args[0]: kwargs.get("default") for args, kwargs in directives["variant"]}
for kind in ("depends_on", "extends"):
    for args, kwargs in directives[kind]:
        for name in variant_names_in(kwargs.get("when", "")):
            if name not in variants:
                errors.append(f"{kind}({args[0]!r}, when={kwargs['when']!r}): no variant {name}")

# What the project's CMake files offer.
cmake_text = "\n".join(path.read_text(errors="replace") for path in
                       itertools.chain([source_dir / "CMakeLists.txt"],
                                       (source_dir / "cmake").glob("*.cmake"),
                                       source_dir.glob("[!b]*/**/CMakeLists.txt"),
                                       source_dir.glob("bindings/**/CMakeLists.txt")))
cmake_options = set(re.findall(r"option\(\s*(SLIPSTREAM_\w+)", cmake_text))
cmake_options |= set(re.findall(r"set\(\s*(SLIPSTREAM_\w+)[^)]*\bCACHE\b", cmake_text, re.S))
found_packages = set(re.findall(r"find_package\(\s*(\w+)", cmake_text))
other_variables = {"MPI_CXX_COMPILER"}


def active(when, combination):
    return all(combination[name] == (sign == "+")
               for sign, name in re.findall(r"([+~])([A-Za-z_][A-Za-z0-9_-]*)", when))


names = sorted(variants)
for values in itertools.product([True, False], repeat=len(names)):
    combination = dict(zip(names, values))
    dependencies = {args[0].split("@")[0].split("+")[0].split("~")[0]
                    for kind in ("depends_on", "extends") for args, kwargs in directives[kind]
                    if active(kwargs.get("when", ""), combination)}
    package = package_class.__new__(package_class)
    package.spec = FakeSpec(combination, dependencies)
    try:
        arguments = package.cmake_args()
    except KeyError as error:
        errors.append(f"cmake_args() with {combination}: {error}")
        continue
    for argument in arguments:
        variable = re.match(r"-D(\w+)", argument).group(1)
        disabled = re.match(r"CMAKE_DISABLE_FIND_PACKAGE_(\w+)", variable)
        if variable.startswith("SLIPSTREAM_") and variable not in cmake_options:
            errors.append(f"{variable} is no option or cache variable of the project")
        elif disabled and disabled.group(1) not in found_packages:
            errors.append(f"{variable}: the project has no find_package({disabled.group(1)})")
        elif not variable.startswith(("SLIPSTREAM_", "CMAKE_")) and variable not in other_variables:
            errors.append(f"{variable}: not a variable this check knows")

for error in sorted(set(errors)):
    print("error:", error)
if errors:
    sys.exit(1)
print(f"package.py: {len(variants)} variants ({', '.join(names)}), "
      f"{len(directives['depends_on'])} dependencies, cmake_args checked in "
      f"{2 ** len(names)} combinations")
