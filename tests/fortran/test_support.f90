! Shared by the Fortran tests: failure counting, status checks that print slipstream_last_error(),
! and the value formula of the cross-language round trip (tests/fortran/cross_check.cpp has the
! same formula in C++, tests/python/xlang_python.py in Python).
module fortran_test_support
  use, intrinsic :: iso_c_binding
  use slipstream
  implicit none
  private
  public :: failures, check, expect, expect_code, expected_value, finish

  integer :: failures = 0

contains

  !> A call must return SLIPSTREAM_OK.
  subroutine check(code, what)
    integer, intent(in) :: code
    character(len=*), intent(in) :: what
    call expect_code(code, SLIPSTREAM_OK, what)
  end subroutine check

  !> A call must return `expected`; an error status must come with a message.
  subroutine expect_code(code, expected, what)
    integer, intent(in) :: code, expected
    character(len=*), intent(in) :: what
    if (code /= expected) then
      write(*, '(a, a, a, i0, a, i0, a, a)') 'FAILED: ', what, ' returned ', code, ' (expected ', &
        expected, '): ', slipstream_last_error()
      failures = failures + 1
    else if (expected /= SLIPSTREAM_OK .and. len(slipstream_last_error()) == 0) then
      write(*, '(a, a)') 'FAILED: no error message after ', what
      failures = failures + 1
    end if
  end subroutine expect_code

  subroutine expect(condition, what)
    logical, intent(in) :: condition
    character(len=*), intent(in) :: what
    if (.not. condition) then
      write(*, '(a, a)') 'FAILED: ', what
      failures = failures + 1
    end if
  end subroutine expect

  !> The element at C index [i][j][k][l] (0-based; unused trailing indices 0) of the test tensor
  !> of `dtype` (a SLIPSTREAM_* dtype code) and `rank`, whose shape is the first `rank` entries of
  !> (4, 3, 2, 5). n0 = i + 4*j + 12*k + 24*l is also the column-major offset of the Fortran
  !> element a(i+1, j+1, k+1, l+1), so [i][j]... == a(i+1, j+1, ...) when the layout is right.
  !>   value = mod(7*n0 + 3*dtype + rank, 127) - 63, plus 0.25 for float32 and float64.
  pure real(c_double) function expected_value(n0, dtype, rank)
    integer, intent(in) :: n0, dtype, rank
    expected_value = real(mod(7 * n0 + 3 * dtype + rank, 127) - 63, c_double)
    if (dtype == SLIPSTREAM_FLOAT32 .or. dtype == SLIPSTREAM_FLOAT64) then
      expected_value = expected_value + 0.25_c_double
    end if
  end function expected_value

  !> Prints the summary and stops with status 1 if anything failed.
  subroutine finish(program_name)
    character(len=*), intent(in) :: program_name
    if (failures == 0) then
      write(*, '(a, a)') program_name, ': all checks passed'
    else
      write(*, '(a, a, i0, a)') program_name, ': ', failures, ' checks FAILED'
      error stop 1
    end if
  end subroutine finish

end module fortran_test_support
