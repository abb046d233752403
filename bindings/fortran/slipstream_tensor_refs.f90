! Named arrays borrowed for one call (tensor_ref_type, made by tensor_ref(name, array)) and
! client_type%run_model_on's C side: the inputs go out as slipstream_tensor_ref_t in Fortran order,
! the results come back as tensor handles unpacked into the caller's arrays. Re-exported by the
! module `slipstream`.
module slipstream_tensor_refs
  use, intrinsic :: iso_c_binding
  use slipstream_c_api
  use slipstream_interop, only: c_string_list, make_string_list
  implicit none
  private
  public :: tensor_ref_type, tensor_ref, run_model_on_refs, TENSOR_REF_MAX_NAME

  !> The longest key name a tensor_ref can hold; a longer one makes run_model_on refuse the
  !> call with SLIPSTREAM_INVALID_ARGUMENT.
  integer, parameter :: TENSOR_REF_MAX_NAME = 1024

  !> A named array borrowed for one call (fields internal). tensor_ref(name, array) takes a
  !> contiguous array with the TARGET (or POINTER) attribute, which the compiler checks: a
  !> non-contiguous section or an array without TARGET matches no specific procedure. Kinds:
  !> real32, real64, int8, int16, int32, int64, ranks 1-4.
  !> The name is held in a fixed buffer, not an allocatable component: gfortran leaks the
  !> allocatable components of function results inside array constructors
  !> ([tensor_ref('x', x)]), which is how the refs are passed.
  type :: tensor_ref_type
    character(len=TENSOR_REF_MAX_NAME) :: name = ''
    integer :: name_length = -1  ! -1: the name was longer than TENSOR_REF_MAX_NAME
    type(c_ptr) :: data = c_null_ptr
    integer(c_int64_t) :: dims(4) = 0
    integer(c_size_t) :: rank = 0
    integer(c_size_t) :: bytes = 0
    integer :: dtype = -1
  end type tensor_ref_type

  interface tensor_ref
    include "tensor_ref_names.inc"
  end interface tensor_ref

  !> slipstream_tensor_ref_t
  type, bind(C) :: c_tensor_ref_t
    type(c_ptr) :: name = c_null_ptr
    integer(c_size_t) :: name_length = 0
    type(c_ptr) :: data = c_null_ptr
    type(c_ptr) :: shape = c_null_ptr
    integer(c_size_t) :: rank = 0
    integer(c_int32_t) :: dtype = 0
    integer(c_int32_t) :: order = 0
  end type c_tensor_ref_t

  interface
    ! Records the reason for a refusal made here as the thread's last error (libslipstream_c).
    integer(c_int) function c_binding_fail(status, message, length) &
        bind(C, name="slipstream_binding_fail")
      import :: c_int, c_char, c_size_t
      integer(c_int), value :: status
      character(kind=c_char), intent(in) :: message(*)
      integer(c_size_t), value :: length
    end function c_binding_fail
    integer(c_int) function c_run_model_on(client, name, name_length, inputs, input_count, &
                                           outputs, output_lengths, output_count, timeout_ms, &
                                           results) bind(C, name="slipstream_run_model_on")
      import :: c_int, c_ptr, c_char, c_size_t, c_int64_t, c_tensor_ref_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length, input_count, output_count
      type(c_tensor_ref_t), intent(in) :: inputs(*)
      type(c_ptr), intent(in) :: outputs(*)
      integer(c_size_t), intent(in) :: output_lengths(*)
      integer(c_int64_t), value :: timeout_ms
      type(c_ptr), intent(out) :: results(*)
    end function c_run_model_on

    integer(c_int) function c_tensor_copy_to_shape(tensor, buffer, buffer_bytes, expected_shape, &
                                                   expected_rank, dtype, order) &
        bind(C, name="slipstream_tensor_copy_to_shape")
      import :: c_int, c_ptr, c_size_t, c_int64_t, c_int32_t
      type(c_ptr), value :: tensor, buffer
      integer(c_size_t), value :: buffer_bytes, expected_rank
      integer(c_int64_t), intent(in) :: expected_shape(*)
      integer(c_int32_t), value :: dtype, order
    end function c_tensor_copy_to_shape
  end interface

contains

  !> One round trip: stores `inputs` under their names, runs model `name` on them and fetches
  !> the outputs named by `outputs` into their arrays, which must have the outputs' kinds and
  !> (Fortran) shapes. The client's part of client_type%run_model_on.
  integer function run_model_on_refs(client, name, inputs, outputs, timeout_ms) result(code)
    type(c_ptr), intent(in) :: client
    character(len=*), intent(in) :: name
    type(tensor_ref_type), target, intent(in) :: inputs(:), outputs(:)
    integer(c_int64_t), intent(in) :: timeout_ms
    type(c_tensor_ref_t) :: c_inputs(max(size(inputs), 1))
    type(c_ptr) :: results(max(size(outputs), 1))
    type(c_string_list), target :: input_names, output_names
    integer :: i, status
    character(len=*), parameter :: too_long = &
        "run_model_on: a tensor_ref name is longer than 1024 characters (TENSOR_REF_MAX_NAME)"
    if (any(inputs%name_length < 0) .or. any(outputs%name_length < 0)) then
      code = c_binding_fail(SLIPSTREAM_INVALID_ARGUMENT, too_long, len(too_long, kind=c_size_t))
      return
    end if
    call make_string_list(names_of(inputs), input_names)
    call make_string_list(names_of(outputs), output_names)
    do i = 1, size(inputs)
      c_inputs(i) = c_tensor_ref_t(input_names%pointers(i), input_names%lengths(i), &
                                   inputs(i)%data, c_loc(inputs(i)%dims), inputs(i)%rank, &
                                   int(inputs(i)%dtype, c_int32_t), SLIPSTREAM_FORTRAN_ORDER)
    end do
    results = c_null_ptr
    code = c_run_model_on(client, name, int(len_trim(name), c_size_t), c_inputs, &
                          size(inputs, kind=c_size_t), output_names%pointers, &
                          output_names%lengths, size(outputs, kind=c_size_t), timeout_ms, results)
    if (code /= SLIPSTREAM_OK) return
    do i = 1, size(outputs)
      if (code == SLIPSTREAM_OK) then
        code = c_tensor_copy_to_shape(results(i), outputs(i)%data, outputs(i)%bytes, &
                                      outputs(i)%dims, outputs(i)%rank, &
                                      int(outputs(i)%dtype, c_int32_t), SLIPSTREAM_FORTRAN_ORDER)
      end if
      status = c_tensor_destroy(results(i))
    end do
  end function run_model_on_refs

  !> The names of `refs`, blank-padded to a common length (make_string_list trims them).
  function names_of(refs) result(names)
    type(tensor_ref_type), intent(in) :: refs(:)
    character(len=:), allocatable :: names(:)
    integer :: i, longest
    longest = 0
    do i = 1, size(refs)
      longest = max(longest, refs(i)%name_length)
    end do
    allocate(character(len=longest) :: names(size(refs)))
    do i = 1, size(refs)
      names(i) = refs(i)%name(1:refs(i)%name_length)
    end do
  end function names_of

  include "tensor_ref_procedures.inc"

end module slipstream_tensor_refs
