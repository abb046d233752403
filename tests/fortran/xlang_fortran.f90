! The Fortran side of the cross-language round trip (see cross_language.sh for the whole test).
! Usage: xlang_fortran write PREFIX   stores the test arrays and dataset under PREFIX
!        xlang_fortran read PREFIX    checks what another language stored under PREFIX
! Keys: PREFIX.<dtype>.rank<r> for dtype float32, float64, int8, int16, int32, int64 and r = 1..4:
!   shape = the first r of (4, 3, 2, 5); element [i][j][k][l] (C index, 0-based) ==
!   a(i+1, j+1, k+1, l+1) == expected_value(n0) of fortran_test_support (test_support.f90), with
!   n0 = i + 4*j + 12*k + 24*l. PREFIX.dataset: tensor "field" (float64, shape (4, 3), the rank-2
!   float64 values), tensor "ids" (int32, shape (4), the rank-1 int32 values), metadata "step"
!   int64 [42], "dt" float64 [0.5], "count" int32 [-7], "ratio" float32 [0.25], "model" string
!   ["ocean-1deg"]. Exits with status 1 if any check fails.
program xlang_fortran
  use, intrinsic :: iso_c_binding
  use slipstream
  use fortran_test_support
  implicit none
  type(client_type) :: client
  character(len=16) :: mode
  character(len=256) :: prefix_arg
  character(len=:), allocatable :: prefix

  call get_command_argument(1, mode)
  call get_command_argument(2, prefix_arg)
  prefix = trim(prefix_arg)
  if (command_argument_count() /= 2 .or. (mode /= "write" .and. mode /= "read")) then
    write(*, '(a)') 'usage: xlang_fortran write|read PREFIX'
    error stop 2
  end if
  call check(client%initialize(), "initialize")
  if (mode == "write") then
    include "xlang_write_calls.inc"
    call write_dataset(client, prefix)
  else
    include "xlang_read_calls.inc"
    call read_dataset(client, prefix)
  end if
  call check(client%destroy(), "destroy")
  call finish("xlang_fortran " // trim(mode) // " " // prefix)

contains

  subroutine write_dataset(client, prefix)
    type(client_type), intent(inout) :: client
    character(len=*), intent(in) :: prefix
    type(dataset_type) :: dataset
    real(c_double) :: field(4, 3)
    integer(c_int32_t) :: ids(4)
    integer :: n
    field = reshape([(expected_value(n - 1, SLIPSTREAM_FLOAT64, 2), n = 1, 12)], [4, 3])
    ids = [(int(expected_value(n - 1, SLIPSTREAM_INT32, 1), c_int32_t), n = 1, 4)]
    call check(dataset%initialize(prefix // ".dataset"), "dataset initialize")
    call check(dataset%add_tensor("field", field), "add_tensor field")
    call check(dataset%add_tensor("ids", ids), "add_tensor ids")
    call check(dataset%add_meta_scalar("step", 42_c_int64_t), "add_meta_scalar step")
    call check(dataset%add_meta_scalar("dt", 0.5_c_double), "add_meta_scalar dt")
    call check(dataset%add_meta_scalar("count", -7_c_int32_t), "add_meta_scalar count")
    call check(dataset%add_meta_scalar("ratio", 0.25_c_float), "add_meta_scalar ratio")
    call check(dataset%add_meta_string("model", "ocean-1deg"), "add_meta_string model")
    call check(client%put_dataset(dataset), "put_dataset")
    call check(dataset%destroy(), "dataset destroy")
  end subroutine write_dataset

  subroutine read_dataset(client, prefix)
    type(client_type), intent(inout) :: client
    character(len=*), intent(in) :: prefix
    type(dataset_type) :: dataset
    real(c_double) :: field(4, 3), expected_field(4, 3)
    integer(c_int32_t) :: ids(4)
    integer(c_int64_t), allocatable :: steps(:)
    real(c_double), allocatable :: dts(:)
    integer(c_int32_t), allocatable :: counts(:)
    real(c_float), allocatable :: ratios(:)
    character(len=:), allocatable :: models(:)
    integer :: n
    expected_field = reshape([(expected_value(n - 1, SLIPSTREAM_FLOAT64, 2), n = 1, 12)], [4, 3])
    call check(client%get_dataset(prefix // ".dataset", dataset), "get_dataset")
    call check(dataset%unpack_tensor("field", field), "unpack field")
    call expect(all(field == expected_field), "dataset field values")
    call check(dataset%unpack_tensor("ids", ids), "unpack ids")
    call expect(all(ids == [(int(expected_value(n - 1, SLIPSTREAM_INT32, 1), c_int32_t), &
                             n = 1, 4)]), "dataset ids values")
    call check(dataset%get_meta_scalars("step", steps), "step")
    call expect(size(steps) == 1, "one step")
    if (size(steps) == 1) call expect(steps(1) == 42, "step value")
    call check(dataset%get_meta_scalars("dt", dts), "dt")
    call expect(size(dts) == 1, "one dt")
    if (size(dts) == 1) call expect(dts(1) == 0.5_c_double, "dt value")
    call check(dataset%get_meta_scalars("count", counts), "count")
    call expect(size(counts) == 1, "one count")
    if (size(counts) == 1) call expect(counts(1) == -7, "count value")
    call check(dataset%get_meta_scalars("ratio", ratios), "ratio")
    call expect(size(ratios) == 1, "one ratio")
    if (size(ratios) == 1) call expect(ratios(1) == 0.25_c_float, "ratio value")
    call check(dataset%get_meta_strings("model", models), "model")
    call expect(size(models) == 1, "one model")
    if (size(models) == 1) call expect(models(1) == "ocean-1deg", "model value")
    call check(dataset%destroy(), "dataset destroy")
  end subroutine read_dataset

  include "xlang_cases.inc"

end program xlang_fortran
