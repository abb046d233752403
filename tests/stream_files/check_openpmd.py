#!/usr/bin/python3
"""Checks the openPMD HDF5 files `slipstream stream dump` writes (tests/stream_files).

  check_openpmd.py check PATH --steps 0,10,20 --encoding groupBased
      every required attribute, its type and value, and every element of the test stream
      written by stream_files_test.cpp (its formulas are repeated below)
  check_openpmd.py compare PATH_A PATH_B [--ignore NAME,...]
      the same objects, datasets (dtype, shape, elements) and attributes (type and value),
      except the root's date and software (and the root attributes named by --ignore)
  check_openpmd.py objects PATH
      every object path, one per line
  check_openpmd.py make-foreign PATH
      writes a series as another code might: variable-length UTF-8 strings, meshesPath fields/,
      a thetaMode mesh, a constant mesh component, booleans, particle patches, a soft link
  check_openpmd.py check-foreign FOREIGN DUMP
      DUMP (of a replay of FOREIGN) holds FOREIGN's data and attributes, fields/ as meshes/

PATH is a file or a fileBased pattern with %T. Exits 1 with a message on the first mismatch.
"""
import argparse
import glob
import os
import re
import sys

import h5py
import numpy as np

ROWS, COLS, PARTICLES = 8, 6, 10
IGNORED_ROOT = {"date", "software", "softwareVersion"}


class Mismatch(Exception):
    pass


def expect(condition, what):
    if not condition:
        raise Mismatch(what)


def files_of(path):
    """{iteration: file} for a pattern with %T, else {None: path}."""
    match = re.search(r"%(0\d+)?T", path)
    if not match:
        return {None: path}
    regex = re.escape(path[:match.start()]) + r"(\d+)" + re.escape(path[match.end():])
    found = {}
    for name in glob.glob(path[:match.start()] + "*" + path[match.end():]):
        m = re.fullmatch(regex, name)
        if m:
            found[int(m.group(1))] = name
    expect(found, "no file matches " + path)
    return found


def attribute(obj, name, kind, value=None):
    """The attribute, checked for presence, type (str, 'f4', 'f8', 'u4', 'u8', 'i8') and value."""
    expect(name in obj.attrs, "%s has no attribute %s" % (obj.name, name))
    got = obj.attrs[name]
    if kind == "str":
        ok = isinstance(got, bytes) or (isinstance(got, np.ndarray) and got.dtype.kind == "S")
        expect(ok, "%s@%s is %r, expected fixed-length strings" % (obj.name, name, got))
        if value is not None:
            text = [v.decode() for v in got] if isinstance(got, np.ndarray) else got.decode()
            expect(text == value, "%s@%s is %r, expected %r" % (obj.name, name, text, value))
        return got
    dtype = np.asarray(got).dtype
    expect(dtype == np.dtype(kind), "%s@%s has type %s, expected %s" % (obj.name, name, dtype, kind))
    if value is not None:
        expect(np.array_equal(np.asarray(got), np.asarray(value, dtype=kind)),
               "%s@%s is %r, expected %r" % (obj.name, name, got, value))
        expect(np.ndim(got) == np.ndim(value),
               "%s@%s is %r: scalar/array differs from %r" % (obj.name, name, got, value))
    return got


def check_root(f, encoding, pattern):
    attribute(f, "openPMD", "str", "1.1.0")
    attribute(f, "openPMDextension", "u4", 0)
    attribute(f, "basePath", "str", "/data/%T/")
    attribute(f, "meshesPath", "str", "meshes/")
    attribute(f, "particlesPath", "str", "particles/")
    attribute(f, "iterationEncoding", "str", encoding)
    attribute(f, "iterationFormat", "str",
              os.path.basename(pattern) if encoding == "fileBased" else "/data/%T/")
    attribute(f, "author", "str", "slipstream test")
    attribute(f, "software", "str")
    attribute(f, "date", "str")
    attribute(f, "comment", "str", "written by stream_files_test")


def mesh_record(record, dims, spacing=None, labels=None, unit_dimension=None):
    attribute(record, "geometry", "str", "cartesian")
    attribute(record, "dataOrder", "str", "C")
    attribute(record, "axisLabels", "str", labels or ["y", "x"])
    attribute(record, "gridSpacing", "f8", spacing or [1.0] * dims)
    attribute(record, "gridGlobalOffset", "f8", [0.0] * dims)
    attribute(record, "gridUnitSI", "f8", 1.0)
    attribute(record, "unitDimension", "f8", unit_dimension or [0.0] * 7)
    attribute(record, "timeOffset", "f4", 0.0)


def data(obj, dtype, expected):
    expect(isinstance(obj, h5py.Dataset), "%s is not a dataset" % obj.name)
    expect(obj.dtype == np.dtype(dtype), "%s has dtype %s, expected %s" % (obj.name, obj.dtype, dtype))
    expect(obj.shape == expected.shape, "%s has shape %s, expected %s" % (obj.name, obj.shape, expected.shape))
    got = obj[()]
    bad = np.argwhere(got != expected.astype(dtype))
    expect(len(bad) == 0, "%s differs at %s: %r, expected %r" % (
        obj.name, bad[:1].tolist(), got[tuple(bad[0])] if len(bad) else None,
        expected[tuple(bad[0])] if len(bad) else None))


def check_iteration(it, step, index):
    attribute(it, "time", "f8", 0.5 * index)
    attribute(it, "dt", "f8", 0.5)
    attribute(it, "timeUnitSI", "f8", 1.0)
    flat = np.arange(ROWS * COLS, dtype="f8").reshape(ROWS, COLS)

    e = it["meshes/E"]
    mesh_record(e, 2, spacing=[0.1, 0.2], unit_dimension=[1, 1, -3, -1, 0, 0, 0])
    attribute(e, "fieldSmoothing", "str", "none")  # a stream-level attribute, in every iteration
    for name, sign, position in (("x", 1, [0.5, 0.0]), ("y", -1, [0.0, 0.5])):
        component = e[name]
        attribute(component, "unitSI", "f8", 1.0)
        attribute(component, "position", "f8", position)
        data(component, "f8", sign * (step * 1000.0 + flat))

    rho = it["meshes/rho"]  # a scalar record without attributes: every one is a default
    mesh_record(rho, 2)
    attribute(rho, "unitSI", "f8", 1.0)
    attribute(rho, "position", "f8", [0.0, 0.0])
    data(rho, "f4", (step + 0.25 * flat).astype("f4"))

    electrons = it["particles/electrons"]
    index_values = np.arange(PARTICLES, dtype="f8")
    position = electrons["position"]
    attribute(position, "unitDimension", "f8", [1, 0, 0, 0, 0, 0, 0])
    attribute(position, "timeOffset", "f4", 0.0)
    attribute(position["x"], "unitSI", "f8", 1e-6)
    data(position["x"], "f8", step + 0.5 * index_values)

    offset = electrons["positionOffset"]  # added by dump: openPMD requires it
    attribute(offset, "unitDimension", "f8", [1, 0, 0, 0, 0, 0, 0])
    attribute(offset, "timeOffset", "f4", 0.0)
    expect(isinstance(offset["x"], h5py.Group), "positionOffset/x is not a constant")
    attribute(offset["x"], "value", "f8", 0.0)
    attribute(offset["x"], "shape", "u8", [PARTICLES])
    attribute(offset["x"], "unitSI", "f8", 1.0)

    charge = electrons["charge"]  # a constant scalar record
    expect(isinstance(charge, h5py.Group), "charge is not a constant")
    attribute(charge, "value", "f8", -1.0)
    attribute(charge, "shape", "u8", [PARTICLES])
    attribute(charge, "unitSI", "f8", 1.602176634e-19)
    attribute(charge, "unitDimension", "f8", [0, 0, 1, 1, 0, 0, 0])
    attribute(charge, "timeOffset", "f4", 0.0)

    weighting = electrons["weighting"]  # a scalar record, standard attributes by default
    attribute(weighting, "unitSI", "f8", 1.0)
    attribute(weighting, "unitDimension", "f8", [0.0] * 7)
    attribute(weighting, "timeOffset", "f4", 0.0)
    data(weighting, "f4", (1 + index_values).astype("f4"))


def check(path, steps, encoding):
    files = files_of(path)
    if encoding == "fileBased":
        expect(sorted(files) == steps, "files for iterations %s, expected %s" % (sorted(files), steps))
    for number, name in files.items():
        with h5py.File(name, "r") as f:
            check_root(f, encoding, path)
            held = sorted(int(k) for k in f["data"].keys())
            wanted = steps if number is None else [number]
            expect(held == wanted, "%s holds iterations %s, expected %s" % (name, held, wanted))
            for step in wanted:
                check_iteration(f["data/%d" % step], step, steps.index(step))


def objects(f):
    out = {}
    f.visititems(lambda name, obj: out.__setitem__(name, obj))
    return out


def same_attributes(a, b, ignored):
    names_a = set(a.attrs.keys()) - ignored
    names_b = set(b.attrs.keys()) - ignored
    expect(names_a == names_b, "%s: attributes %s vs %s" % (a.name, sorted(names_a), sorted(names_b)))
    for name in names_a:
        x, y = np.asarray(a.attrs[name]), np.asarray(b.attrs[name])
        expect(x.dtype == y.dtype and x.shape == y.shape and np.array_equal(x, y),
               "%s@%s: %r (%s) vs %r (%s)" % (a.name, name, x, x.dtype, y, y.dtype))


def compare(path_a, path_b, ignored_root):
    files_a, files_b = files_of(path_a), files_of(path_b)
    expect(sorted(files_a, key=str) == sorted(files_b, key=str), "different file sets")
    for key in files_a:
        with h5py.File(files_a[key], "r") as a, h5py.File(files_b[key], "r") as b:
            same_attributes(a, b, IGNORED_ROOT | ignored_root)
            objs_a, objs_b = objects(a), objects(b)
            expect(sorted(objs_a) == sorted(objs_b),
                   "objects differ: %s" % sorted(set(objs_a) ^ set(objs_b)))
            for name, x in objs_a.items():
                y = objs_b[name]
                expect(type(x) == type(y), "%s: a group in one file, a dataset in the other" % name)
                same_attributes(x, y, set())
                if isinstance(x, h5py.Dataset):
                    expect(x.dtype == y.dtype and x.shape == y.shape, "%s: dtype or shape" % name)
                    expect(np.array_equal(x[()], y[()]), "%s: elements differ" % name)


def make_foreign(path):
    text = h5py.string_dtype()
    with h5py.File(path, "w") as f:
        for name, value in (("openPMD", "1.1.0"), ("basePath", "/data/%T/"),
                            ("meshesPath", "fields/"), ("particlesPath", "particles/"),
                            ("iterationEncoding", "groupBased"), ("iterationFormat", "/data/%T/"),
                            ("software", "othercode")):
            f.attrs.create(name, value, dtype=text)
        f.attrs["openPMDextension"] = np.uint32(0)
        for n in (5, 7):
            it = f.create_group("data/%d" % n)
            it.attrs["time"], it.attrs["dt"], it.attrs["timeUnitSI"] = 0.25 * n, 0.25, 1.0
            b = it.create_group("fields/B")
            b.attrs.create("geometry", "thetaMode", dtype=text)
            b.attrs.create("geometryParameters", "m=1;imag=+", dtype=text)
            b.attrs.create("axisLabels", ["r", "z"], dtype=text)
            b.attrs.create("dataOrder", "C", dtype=text)
            b.attrs["gridSpacing"] = np.array([0.5, 0.25])
            b.attrs["gridGlobalOffset"] = np.array([0.0, 1.0])
            b.attrs["gridUnitSI"] = 1.0
            b.attrs["unitDimension"] = np.array([0, 1, -2, -1, 0, 0, 0], dtype="f8")
            b.attrs["timeOffset"] = np.float32(0)
            r = b.create_dataset("r", data=np.arange(3 * 7 * 5, dtype="f4").reshape(3, 7, 5) + n)
            r.attrs["unitSI"], r.attrs["position"] = 2.0, np.array([0.5, 0.0])
            t = b.create_group("t")
            t.attrs["value"], t.attrs["shape"] = 0.0, np.array([3, 7, 5], dtype="u8")
            t.attrs["unitSI"], t.attrs["position"] = 1.0, np.array([0.0, 0.5])
            e = it.create_group("particles/e")
            for record in ("position", "positionOffset", "id", "alive"):
                e.create_group(record).attrs["unitDimension"] = np.zeros(7)
                e[record].attrs["timeOffset"] = np.float32(0)
            e.create_dataset("position/x", data=np.linspace(0, 1, 9) + n).attrs["unitSI"] = 1e-6
            offset = e.create_group("positionOffset/x")
            offset.attrs["value"], offset.attrs["shape"] = 0.0, np.array([9], dtype="u8")
            offset.attrs["unitSI"] = 1.0
            del e["id"], e["alive"]
            e.create_dataset("id", data=np.arange(9, dtype="i4") * n).attrs["unitSI"] = 1.0
            e.create_dataset("alive", data=np.arange(9) % 2 == 0).attrs["unitSI"] = 1.0
            for name in ("id", "alive"):
                e[name].attrs["unitDimension"] = np.zeros(7)
                e[name].attrs["timeOffset"] = np.float32(0)
            e.create_dataset("particlePatches/numParticles", data=np.array([4, 5], dtype="u2"))
            it["link"] = h5py.SoftLink("/data")  # left out by replay: links are not followed


def plain(value):
    value = np.asarray(value)
    if value.dtype.kind in "SOU":
        return [v.decode() if isinstance(v, bytes) else v for v in value.ravel()]
    return value.astype("f8").ravel().tolist()


def check_foreign(foreign, dump):
    with h5py.File(foreign, "r") as a, h5py.File(dump, "r") as b:
        expect(sorted(a["data"]) == sorted(b["data"]), "iterations differ")
        attribute(b, "software", "str", "othercode")
        for n in a["data"]:
            objs_a = objects(a["data/" + n])
            objs_b = objects(b["data/" + n])
            renamed = {k.replace("fields", "meshes", 1) for k in objs_a if k != "link"}
            expect(renamed == set(objs_b), "objects differ: %s" % sorted(renamed ^ set(objs_b)))
            for name, x in list(objs_a.items()) + [("", a["data/" + n])]:
                if name == "link":
                    continue
                y = b["data/%s/%s" % (n, name.replace("fields", "meshes", 1))]
                expect(type(x) == type(y), "%s: kind differs" % name)
                for key in x.attrs:
                    expect(plain(x.attrs[key]) == plain(y.attrs[key]),
                           "%s@%s: %r vs %r" % (name, key, x.attrs[key], y.attrs[key]))
                if isinstance(x, h5py.Dataset):
                    expect(x.dtype == y.dtype and np.array_equal(x[()], y[()]),
                           "%s: elements differ" % name)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["check", "compare", "objects", "make-foreign", "check-foreign"])
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--steps", default="")
    parser.add_argument("--encoding", default="groupBased")
    parser.add_argument("--ignore", default="")
    args = parser.parse_args()
    try:
        if args.mode == "check":
            check(args.paths[0], [int(s) for s in args.steps.split(",")], args.encoding)
        elif args.mode == "compare":
            compare(args.paths[0], args.paths[1], set(filter(None, args.ignore.split(","))))
        elif args.mode == "make-foreign":
            make_foreign(args.paths[0])
        elif args.mode == "check-foreign":
            check_foreign(args.paths[0], args.paths[1])
        else:
            for name in sorted(files_of(args.paths[0]).values()):
                with h5py.File(name, "r") as f:
                    for path in sorted(objects(f)):
                        print(path)
    except Mismatch as e:
        print("check_openpmd.py: " + str(e), file=sys.stderr)
        return 1
    print("check_openpmd.py: %s ok" % args.mode)
    return 0


if __name__ == "__main__":
    sys.exit(main())
