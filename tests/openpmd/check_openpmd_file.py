#!/usr/bin/env python3
"""Checks an HDF5 file (or the files of a %T pattern) against the openPMD 1.1.0 standard's rules
for what a writer must set: the root attributes, every iteration's, every mesh's and mesh
component's, every particle record's and component's, constant components and particle patches,
with the types the standard gives them. Prints each violation; exits 1 when there is one.

Usage: check_openpmd_file.py FILE_OR_PATTERN
"""
import glob
import re
import sys

import h5py
import numpy as np

problems = []


def need(obj, name, kind, where):
    if name not in obj.attrs:
        problems.append(f"{where}: missing attribute {name}")
        return None
    value = obj.attrs[name]
    ok = {
        "str": lambda v: isinstance(v, (bytes, str, np.bytes_, np.str_)),
        "strs": lambda v: isinstance(v, np.ndarray) and v.dtype.kind in "SUO",
        "float": lambda v: np.asarray(v).dtype.kind == "f" and np.asarray(v).ndim == 0,
        "double": lambda v: np.asarray(v).dtype == np.float64 and np.asarray(v).ndim == 0,
        "floats": lambda v: np.asarray(v).dtype.kind == "f" and np.asarray(v).ndim == 1,
        "uint32": lambda v: np.asarray(v).dtype == np.uint32,
        "dim7": lambda v: np.asarray(v).dtype == np.float64 and np.asarray(v).shape == (7,),
    }[kind](value)
    if not ok:
        problems.append(f"{where}: attribute {name} has the wrong type ({np.asarray(value).dtype},"
                        f" shape {np.asarray(value).shape}), expected {kind}")
    return value


def text(value):
    return value.decode() if isinstance(value, (bytes, np.bytes_)) else str(value)


def check_component(obj, where, mesh):
    need(obj, "unitSI", "double", where)
    if mesh:
        need(obj, "position", "floats", where)
    if isinstance(obj, h5py.Group):
        if "value" not in obj.attrs or "shape" not in obj.attrs:
            problems.append(f"{where}: a component group without value and shape (constant)")


def check_record(obj, where, mesh):
    need(obj, "unitDimension", "dim7", where)
    need(obj, "timeOffset", "float", where)
    if mesh:
        for name in ("geometry", "dataOrder"):
            need(obj, name, "str", where)
        need(obj, "axisLabels", "strs", where)
        need(obj, "gridSpacing", "floats", where)
        need(obj, "gridGlobalOffset", "floats", where)
        need(obj, "gridUnitSI", "double", where)
    if isinstance(obj, h5py.Dataset) or ("value" in obj.attrs and "shape" in obj.attrs):
        check_component(obj, where, mesh)  # a scalar record
    else:
        for name, component in obj.items():
            check_component(component, f"{where}/{name}", mesh)


def check_file(path):
    with h5py.File(path, "r") as f:
        root = f["/"]
        version = need(root, "openPMD", "str", path)
        if version is not None and not re.fullmatch(r"1\.\d+\.\d+", text(version)):
            problems.append(f"{path}: openPMD is {text(version)}")
        need(root, "openPMDextension", "uint32", path)
        base = need(root, "basePath", "str", path)
        if base is not None and text(base) != "/data/%T/":
            problems.append(f"{path}: basePath is {text(base)}")
        encoding = need(root, "iterationEncoding", "str", path)
        need(root, "iterationFormat", "str", path)
        meshes_path = text(root.attrs["meshesPath"]) if "meshesPath" in root.attrs else None
        particles_path = text(root.attrs["particlesPath"]) if "particlesPath" in root.attrs else None
        any_meshes = any_particles = False
        for index, iteration in f["data"].items():
            where = f"{path}:/data/{index}"
            need(iteration, "time", "float", where)
            need(iteration, "dt", "float", where)
            need(iteration, "timeUnitSI", "double", where)
            if "meshes" in iteration:
                any_meshes = True
                for name, mesh in iteration["meshes"].items():
                    check_record(mesh, f"{where}/meshes/{name}", True)
            if "particles" in iteration:
                any_particles = True
                for species_name, species in iteration["particles"].items():
                    for name, record in species.items():
                        at = f"{where}/particles/{species_name}/{name}"
                        if name == "particlePatches":
                            for patch in ("numParticles", "numParticlesOffset"):
                                if patch not in record:
                                    problems.append(f"{at}: missing {patch}")
                            for patch_name, patch in record.items():
                                if isinstance(patch, h5py.Dataset):
                                    need(patch, "unitSI", "double", f"{at}/{patch_name}")
                            continue
                        check_record(record, at, False)
        if any_meshes and meshes_path is None:
            problems.append(f"{path}: iterations have meshes but the root has no meshesPath")
        if any_particles and particles_path is None:
            problems.append(f"{path}: iterations have particles but the root has no particlesPath")
        if not any_particles and particles_path is not None:
            problems.append(f"{path}: particlesPath is set but no iteration has particles")
        if not any_meshes and meshes_path is not None:
            problems.append(f"{path}: meshesPath is set but no iteration has meshes")
        return text(encoding) if encoding is not None else None


def main():
    target = sys.argv[1]
    files = sorted(glob.glob(re.sub(r"%0?\d*T", "*", target))) if "%" in target else [target]
    if not files:
        print(f"no file matches {target}")
        return 1
    for path in files:
        check_file(path)
    for problem in problems:
        print(problem)
    print(f"{len(files)} file(s), {len(problems)} violation(s) of the openPMD 1.1.0 rules")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
