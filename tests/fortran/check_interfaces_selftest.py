#!/usr/bin/python3
"""Self-test of scripts/check_fortran_interfaces.py (CTest fortran_interfaces_check_selftest).

  check_interfaces_selftest.py [CHECKER]

Writes a small C header and a Fortran module whose bind(C) interfaces match it into a temporary
folder, and runs the checker on them (--headers, --fortran): the matching pair must pass; each
copy of the module with one defect (a missing argument, integer(c_int) for a size_t, a missing
`value`, a wrong result type, a C name that does not exist ...) must fail with exactly one
disagreement that names the right line, argument and types. Python 3 standard library only.
"""
import os
import re
import subprocess
import sys
import tempfile
import unittest

CHECKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts",
                       "check_fortran_interfaces.py")

HEADER = """\
/* A made-up C API in the style of include/slipstream.h. */
#ifndef DEMO_H_
#define DEMO_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define DEMO_API __attribute__((visibility("default")))
#else
#define DEMO_API
#endif

typedef enum demo_status { DEMO_OK = 0, DEMO_FAILED = 1 } demo_status_t;
typedef int32_t demo_dtype_t;
typedef struct demo_handle demo_handle_t;
/** Mirrored by the Fortran type c_demo_options_t. */
typedef struct slipstream_demo_options {
  int64_t timeout_ms;
  const char* name;
  size_t name_length;
} slipstream_demo_options_t;

/* Not a prototype: int demo_commented_out(void); */
DEMO_API demo_status_t demo_put(demo_handle_t* handle,
                                const char* name, size_t name_length,  // pointer plus length
                                const void* data, const int64_t* shape, size_t rank,
                                demo_dtype_t dtype);
DEMO_API demo_status_t
demo_get(const demo_handle_t* handle, const char** name, size_t* length, double* value);
DEMO_API demo_status_t demo_create(const slipstream_demo_options_t* options,
                                   demo_handle_t** handle);
DEMO_API void demo_free(void* pointer);
DEMO_API const char* demo_last_error(void);
DEMO_API size_t demo_dtype_size(demo_dtype_t dtype);
DEMO_API demo_status_t demo_delete(demo_handle_t* handle, const char* name, size_t name_length);
DEMO_API demo_status_t demo_rename(demo_handle_t* handle, const char* name, size_t name_length);
DEMO_API demo_status_t demo_unbound(int64_t* unused);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* DEMO_H_ */
"""

FORTRAN = """\
! Interfaces to demo.h.
module demo_c_api
  use, intrinsic :: iso_c_binding
  implicit none

  integer, parameter :: status_kind = c_int

  type, bind(C) :: c_demo_options_t
    integer(c_int64_t) :: timeout_ms = 0
    type(c_ptr) :: name = c_null_ptr
    integer(c_size_t) :: name_length = 0
  end type c_demo_options_t

  abstract interface
    integer(c_int) function name_call(handle, name, name_length) bind(C)
      import :: c_int, c_char, c_ptr, c_size_t
      type(c_ptr), value :: handle
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
    end function
  end interface
  procedure(name_call), bind(C, name="demo_delete") :: c_delete
  procedure(name_call), bind(C, name="demo_rename") :: &
      c_rename

  interface
    integer(status_kind) function c_put(handle, name, name_length, data, shape, rank, dtype) &
        bind(C, name="demo_put")
      import :: c_char, c_int, c_int64_t, c_ptr, c_size_t, status_kind
      type(c_ptr), value :: handle
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
      type(c_ptr), value :: data
      integer(c_int64_t), intent(in) :: shape(*)
      integer(c_size_t), value :: rank
      integer(c_int), value :: dtype
    end function c_put
    function c_get(handle, name, length, value) result(code) &
        bind(C, name="demo_get")
      import :: c_double, c_int, c_ptr, c_size_t
      type(c_ptr), value :: handle
      type(c_ptr), intent(out) :: name
      integer(c_size_t), intent(out) :: length
      real(c_double), intent(out) :: value
      integer(c_int) :: code
    end function c_get
    integer(c_int) function c_create(options, handle) bind(C, name="demo_create")
      import :: c_demo_options_t, c_int, c_ptr
      type(c_demo_options_t), intent(in) :: options
      type(c_ptr), intent(out) :: handle
    end function
    subroutine c_free(pointer) bind(C, name="demo_free")
      import :: c_ptr
      type(c_ptr), value :: pointer
    end subroutine
    type(c_ptr) function c_last_error() bind(C, name="demo_last_error")
      import :: c_ptr
    end function
    integer(c_size_t) function c_dtype_size(dtype) bind(C, name="demo_dtype_size")
      import :: c_int32_t, c_size_t
      integer(c_int32_t), value :: dtype
    end function
    integer(c_size_t) function c_strlen(s) bind(C, name="strlen")
      import :: c_ptr, c_size_t
      type(c_ptr), value :: s
    end function
  end interface
end module demo_c_api
"""


def line_of(text, fragment):
    """The 1-based line of `fragment` in `text` (which must hold it once)."""
    assert text.count(fragment) == 1, fragment
    return text[:text.index(fragment)].count("\n") + 1


class CheckInterfacesTest(unittest.TestCase):

    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.addCleanup(self.folder.cleanup)
        self.root = self.folder.name
        self.headers = os.path.join(self.root, "include")
        self.fortran = os.path.join(self.root, "fortran")
        os.makedirs(self.headers)
        os.makedirs(self.fortran)
        with open(os.path.join(self.headers, "demo.h"), "w") as f:
            f.write(HEADER)

    def run_checker(self, fortran_text, *extra):
        path = os.path.join(self.fortran, "demo_c_api.f90")
        with open(path, "w") as f:
            f.write(fortran_text)
        result = subprocess.run(
            [sys.executable, "-B", CHECKER, self.root, "--headers", self.headers,
             "--fortran", self.fortran] + list(extra),
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        return result.returncode, result.stdout

    def assert_disagreements(self, old, new, line_fragment, expected, count=1):
        """The module with `old` replaced by `new` fails with `count` disagreements, the first
        reported at the line holding `line_fragment` (in the changed module) and containing
        every string of `expected`."""
        self.assertEqual(FORTRAN.count(old), 1, old)
        text = FORTRAN.replace(old, new)
        code, output = self.run_checker(text)
        self.assertEqual(code, 1, output)
        lines = [l for l in output.splitlines() if re.search(r"\.f90:\d+: ", l)]
        self.assertEqual(len(lines), count, output)
        self.assertIn("demo_c_api.f90:%d: " % line_of(text, line_fragment), lines[0])
        for fragment in expected:
            self.assertIn(fragment, lines[0])
        self.assertIn("%d disagreement%s between" % (count, "" if count == 1 else "s"), output)

    def test_matching_pair_passes(self):
        code, output = self.run_checker(FORTRAN)
        self.assertEqual(code, 0, output)
        # The 7 interface bodies and the 2 procedure declarations; the header's 9 prototypes.
        self.assertIn("9 Fortran bindings checked against 9 C prototypes", output)

    def test_verbose_lists_unbound_functions(self):
        code, output = self.run_checker(FORTRAN, "--verbose")
        self.assertEqual(code, 0, output)
        self.assertIn("1 C functions have no Fortran binding", output)
        self.assertIn("demo_unbound", output)

    # ---- A missing argument.

    def test_missing_argument(self):
        self.assert_disagreements(
            "shape, rank, dtype) &\n        bind(C, name=\"demo_put\")",
            "shape, rank) &\n        bind(C, name=\"demo_put\")",
            "function c_put(",
            ["demo_put", "C takes 7 arguments", "has 6"])

    def test_missing_argument_of_abstract_interface(self):
        # Both procedures declared with the interface disagree.
        self.assert_disagreements(
            "function name_call(handle, name, name_length) bind(C)",
            "function name_call(handle, name) bind(C)",
            'name="demo_delete"',
            ["demo_delete", "interface name_call", "C takes 3 arguments"], count=2)

    # ---- integer(c_int) for a size_t.

    def test_c_int_for_size_t(self):
        self.assert_disagreements(
            "      integer(c_size_t), value :: rank\n",
            "      integer(c_int), value :: rank\n",
            "integer(c_int), value :: rank",
            ["demo_put", "argument 6 (rank)",
             "C size_t vs Fortran integer(c_int), value :: rank"])

    def test_c_int_for_size_t_by_reference(self):
        self.assert_disagreements(
            "integer(c_size_t), intent(out) :: length",
            "integer(c_int), intent(out) :: length",
            "integer(c_int), intent(out) :: length",
            ["demo_get", "argument 3 (length)", "C size_t*"])

    # ---- A missing (or extra) `value`.

    def test_missing_value(self):
        old = "      integer(c_size_t), value :: name_length\n    end function\n  end interface"
        new = "      integer(c_size_t) :: name_length\n    end function\n  end interface"
        declared = line_of(FORTRAN.replace(old, new), new)
        self.assert_disagreements(
            old, new, 'name="demo_delete"',
            ["demo_delete", "argument 3 (name_length)", "no `value`",
             "argument declared at line %d" % declared], count=2)

    def test_missing_value_on_a_pointer(self):
        self.assert_disagreements(
            "      type(c_ptr), value :: data\n",
            "      type(c_ptr) :: data\n",
            "type(c_ptr) :: data",
            ["demo_put", "argument 4 (data)", "C const void*", "address of the pointer"])

    def test_value_for_a_reference(self):
        self.assert_disagreements(
            "integer(c_size_t), intent(out) :: length",
            "integer(c_size_t), value :: length",
            "integer(c_size_t), value :: length",
            ["demo_get", "argument 3 (length)", "C takes a pointer"])

    # ---- Other argument types.

    def test_wrong_struct(self):
        self.assert_disagreements(
            "type(c_demo_options_t), intent(in) :: options",
            "integer(c_int64_t), intent(in) :: options",
            "intent(in) :: options",
            ["demo_create", "argument 1 (options)", "slipstream_demo_options_t*"])

    def test_assumed_shape_array(self):
        self.assert_disagreements(
            "integer(c_int64_t), intent(in) :: shape(*)",
            "integer(c_int64_t), intent(in) :: shape(:)",
            "shape(:)",
            ["demo_put", "argument 5 (shape)", "descriptor"])

    # ---- A wrong result type.

    def test_function_for_void(self):
        self.assert_disagreements(
            "subroutine c_free(pointer) bind(C, name=\"demo_free\")\n"
            "      import :: c_ptr\n      type(c_ptr), value :: pointer\n    end subroutine",
            "integer(c_int) function c_free(pointer) bind(C, name=\"demo_free\")\n"
            "      import :: c_int, c_ptr\n      type(c_ptr), value :: pointer\n    end function",
            "function c_free(",
            ["demo_free", "C returns void"])

    def test_wrong_result_kind(self):
        self.assert_disagreements(
            "integer(c_size_t) function c_dtype_size",
            "integer(c_int) function c_dtype_size",
            "function c_dtype_size",
            ["demo_dtype_size", "result", "C size_t vs Fortran integer(c_int)"])

    def test_wrong_result_in_result_clause(self):
        self.assert_disagreements(
            "      integer(c_int) :: code\n",
            "      type(c_ptr) :: code\n",
            "function c_get(",
            ["demo_get", "result", "vs Fortran type(c_ptr)"])

    # ---- A C name that does not exist.

    def test_unknown_c_name(self):
        self.assert_disagreements(
            'bind(C, name="demo_last_error")',
            'bind(C, name="demo_last_errors")',
            "function c_last_error()",
            ["demo_last_errors", "no C prototype"])

    def test_unknown_c_name_of_procedure_declaration(self):
        self.assert_disagreements(
            'bind(C, name="demo_rename")',
            'bind(C, name="demo_renames")',
            'name="demo_renames"',
            ["demo_renames", "no C prototype"])


if __name__ == "__main__":
    if len(sys.argv) > 1:
        CHECKER = sys.argv.pop(1)
    unittest.main()
