"""The Python side of the cross-language round trip (tests/fortran/cross_language.sh runs the
whole test; keys, shapes and the value formula are those documented in
tests/fortran/xlang_fortran.f90).

Usage (server address in SLIPSTREAM_ADDRESS; PYTHONPATH=<build>/bindings/python):
  xlang_python.py write PREFIX     stores the test arrays and dataset under PREFIX
  xlang_python.py read PREFIX      checks every element of what another language stored
  xlang_python.py corrupt PREFIX   overwrites PREFIX.int16.rank2 (after a full write) with the
                                   classic layout bug, a column-major buffer read as row-major,
                                   so that every reader can show it detects it
Keys: PREFIX.<dtype>.rank<r> for dtype float32, float64, int8, int16, int32, int64 and r = 1..4:
  numpy shape = the first r of (4, 3, 2, 5) (the Fortran shape); arr[i, j, k, l] == a(i+1, j+1,
  k+1, l+1) == expected_value(n0) with n0 = i + 4*j + 12*k + 24*l (the column-major offset) and
  expected_value(n0) = mod(7*n0 + 3*dtype_code + r, 127) - 63, plus 0.25 for float32/float64
  (dtype_code: the slipstream.DType value, 0..5 in the order above). PREFIX.dataset: tensor
  "field" (float64, shape (4, 3), the rank-2 float64 values), tensor "ids" (int32, shape (4,),
  the rank-1 int32 values), metadata "step" int64 [42], "dt" float64 [0.5], "count" int32 [-7],
  "ratio" float32 [0.25], "model" string ["ocean-1deg"].
Prints "FAILED: ..." for each failed check and exits with status 1 if any failed (2 on misuse).
"""

import sys

import numpy as np

import slipstream

DTYPES = ["float32", "float64", "int8", "int16", "int32", "int64"]
FULL_SHAPE = (4, 3, 2, 5)

failures = 0


def expect(condition, what):
    global failures
    if not condition:
        print(f"FAILED: {what}")
        failures += 1


def test_shape(rank):
    return FULL_SHAPE[:rank]


def expected_array(dtype, rank):
    """The test array, built from its C (numpy) indices: arr[i, j, ...] = value(n0(i, j, ...))."""
    shape = test_shape(rank)
    strides = (1, 4, 12, 24)[:rank]  # n0 = i + 4j + 12k + 24l
    n0 = sum(np.arange(extent).reshape([-1 if d == axis else 1 for d in range(rank)]) * stride
             for axis, (extent, stride) in enumerate(zip(shape, strides)))
    code = int(slipstream.dtype_of(dtype))
    values = ((7 * n0 + 3 * code + rank) % 127 - 63).astype(np.float64)
    if dtype.startswith("float"):
        values += 0.25
    assert values.shape == shape
    return values.astype(dtype)


def tensor_key(prefix, dtype, rank):
    return f"{prefix}.{dtype}.rank{rank}"


def write(client, prefix):
    for dtype in DTYPES:
        for rank in range(1, 5):
            array = expected_array(dtype, rank)
            # Every other rank from a Fortran-ordered array: the logical shape and values must not
            # depend on the caller's layout.
            if rank % 2 == 0:
                array = np.asfortranarray(array)
            client.put_tensor(tensor_key(prefix, dtype, rank), array)
    dataset = slipstream.Dataset(f"{prefix}.dataset")
    dataset.add_tensor("field", expected_array("float64", 2))
    dataset.add_tensor("ids", expected_array("int32", 1))
    dataset.add_meta_scalar("step", np.int64(42))
    dataset.add_meta_scalar("dt", np.float64(0.5))
    dataset.add_meta_scalar("count", np.int32(-7))
    dataset.add_meta_scalar("ratio", np.float32(0.25))
    dataset.add_meta_string("model", "ocean-1deg")
    client.put_dataset(dataset)


def check_array(name, got, want):
    """dtype, shape, then every element (the count of differing ones is reported)."""
    expect(got.dtype == want.dtype, f"{name}: dtype {got.dtype} (expected {want.dtype})")
    expect(got.shape == want.shape,
           f"{name}: shape {got.shape} is not the Fortran shape {want.shape}")
    if got.dtype != want.dtype or got.shape != want.shape:
        return
    wrong = sum(1 for index in np.ndindex(*want.shape) if got[index] != want[index])
    expect(wrong == 0, f"{name}: {wrong} of {want.size} elements differ")


def check_scalars(dataset, field, dtype, values):
    got = dataset.get_meta_scalars(field)
    expect(got.dtype == np.dtype(dtype) and got.tolist() == values,
           f"dataset metadata {field}: {got!r} (expected {dtype} {values})")


def read(client, prefix):
    for dtype in DTYPES:
        for rank in range(1, 5):
            name = tensor_key(prefix, dtype, rank)
            check_array(name, client.get_tensor(name), expected_array(dtype, rank))
    dataset = client.get_dataset(f"{prefix}.dataset")
    check_array("dataset field", dataset.get_tensor("field"), expected_array("float64", 2))
    check_array("dataset ids", dataset.get_tensor("ids"), expected_array("int32", 1))
    check_scalars(dataset, "step", "int64", [42])
    check_scalars(dataset, "dt", "float64", [0.5])
    check_scalars(dataset, "count", "int32", [-7])
    check_scalars(dataset, "ratio", "float32", [0.25])
    models = dataset.get_meta_strings("model")
    expect(models == ["ocean-1deg"], f"dataset metadata model: {models!r}")


def corrupt(client, prefix):
    """The column-major bytes of the int16 rank-2 array taken as row-major with the same shape:
    same shape, dtype and set of values, only the element order is wrong."""
    right = expected_array("int16", 2)
    wrong = right.flatten(order="F").reshape(right.shape)
    assert not np.array_equal(wrong, right)
    client.put_tensor(tensor_key(prefix, "int16", 2), wrong)


def main(argv):
    modes = {"write": write, "read": read, "corrupt": corrupt}
    if len(argv) != 3 or argv[1] not in modes:
        print("usage: xlang_python.py write|read|corrupt PREFIX", file=sys.stderr)
        return 2
    mode, prefix = argv[1], argv[2]
    try:
        with slipstream.Client() as client:
            modes[mode](client, prefix)
    except slipstream.SlipstreamError as error:
        expect(False, f"{type(error).__name__}: {error}")
    print(f"xlang_python {mode} {prefix}: "
          + ("all checks passed" if failures == 0 else f"{failures} checks FAILED"))
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
