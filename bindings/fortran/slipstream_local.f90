! The Fortran module `slipstream_local`: local_model_type, a TorchScript model run in this process
! on Fortran arrays (slipstream::LocalModel through include/slipstream_local.h), in
! libslipstream_fortran_local. No server is involved.
!
! Conventions: those of the module `slipstream`. Every procedure is an integer function returning
! SLIPSTREAM_OK or an error code, with slipstream_last_error() giving the message. Arrays keep
! their Fortran shape: an input a(nx, ny) is the model's tensor of shape (nx, ny) with
! [i][j] == a(i+1, j+1) (transposed into a temporary on the way in), and an output array
! b(n1, n2) receives the model's (n1, n2) output the same way. A rank-1 array is never transposed
! nor copied.
!
! Usage:
!   real(c_float), allocatable, target :: x(:,:), y(:)
!   type(local_model_type) :: model
!   code = model%load('model.pt')                     ! device absent: 'CPU'
!   code = model%run([local_tensor(x)], [local_tensor(y)])
!   code = model%destroy()
!
! local_tensor(array) borrows the array until run returns: it takes a contiguous array with the
! TARGET (or POINTER) attribute, which the compiler checks (a non-contiguous section or an array
! without TARGET matches no specific procedure). Kinds: real32, real64, int8, int16, int32, int64,
! ranks 1-4. Thread-safety: as LocalModel, run may be called concurrently on one model.
module slipstream_local
  use, intrinsic :: iso_c_binding
  use slipstream_c_api
  use slipstream_interop, only: take_c_string
  use slipstream, only: slipstream_last_error
  implicit none
  private

  public :: local_model_type, local_tensor_type, local_tensor, slipstream_last_error
  public :: SLIPSTREAM_OK, SLIPSTREAM_INVALID_ARGUMENT, SLIPSTREAM_BUFFER_TOO_SMALL, &
            SLIPSTREAM_BACKEND_ERROR, SLIPSTREAM_CLIENT_OUT_OF_MEMORY, SLIPSTREAM_INTERNAL_ERROR

  !> A model loaded into this process. load() loads, destroy() frees. Assignment copies the
  !> handle, not the model: destroy exactly one copy.
  type :: local_model_type
    type(c_ptr) :: handle = c_null_ptr  !< the C handle (internal)
  contains
    procedure :: load => local_model_load
    procedure :: run => local_model_run
    procedure :: device => local_model_device
    procedure :: destroy => local_model_destroy
  end type local_model_type

  !> An array borrowed for one run (made by local_tensor; its fields are internal).
  type :: local_tensor_type
    type(c_ptr) :: data = c_null_ptr
    integer(c_int64_t) :: dims(4) = 0
    integer(c_size_t) :: rank = 0
    integer(c_size_t) :: bytes = 0
    integer :: dtype = -1
  end type local_tensor_type

  !> local_tensor(array): the array as an input or output of local_model_type%run.
  interface local_tensor
    include "local_tensor_names.inc"
  end interface local_tensor

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

  !> slipstream_local_output_t
  type, bind(C) :: c_local_output_t
    integer(c_int32_t) :: dtype = 0
    type(c_ptr) :: data = c_null_ptr
    integer(c_size_t) :: capacity = 0
    type(c_ptr) :: shape = c_null_ptr
    integer(c_size_t) :: rank = 0
    integer(c_int32_t) :: order = 0
  end type c_local_output_t

  interface
    integer(c_int) function c_local_model_load_file(path, path_length, device, device_length, &
                                                    model) &
        bind(C, name="slipstream_local_model_load_file")
      import :: c_int, c_char, c_size_t, c_ptr
      character(kind=c_char), intent(in) :: path(*), device(*)
      integer(c_size_t), value :: path_length, device_length
      type(c_ptr), intent(out) :: model
    end function c_local_model_load_file

    integer(c_int) function c_local_model_run(model, inputs, input_count, outputs, output_count) &
        bind(C, name="slipstream_local_model_run")
      import :: c_int, c_ptr, c_size_t, c_tensor_ref_t, c_local_output_t
      type(c_ptr), value :: model
      type(c_tensor_ref_t), intent(in) :: inputs(*)
      integer(c_size_t), value :: input_count
      type(c_local_output_t), intent(in) :: outputs(*)
      integer(c_size_t), value :: output_count
    end function c_local_model_run

    integer(c_int) function c_local_model_device(model, device, length) &
        bind(C, name="slipstream_local_model_device")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: model
      type(c_ptr), intent(out) :: device
      integer(c_size_t), intent(out) :: length
    end function c_local_model_device

    integer(c_int) function c_local_model_destroy(model) &
        bind(C, name="slipstream_local_model_destroy")
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: model
    end function c_local_model_destroy
  end interface

contains

  !> Loads the TorchScript file at `path` (trailing blanks removed) onto `device` ('CPU', 'GPU'
  !> or 'GPU:n'; absent: 'CPU'). A model already loaded in `self` is destroyed first.
  !> Errors: SLIPSTREAM_INVALID_ARGUMENT (unreadable file, bad device), SLIPSTREAM_BACKEND_ERROR
  !> (libtorch cannot load it).
  integer function local_model_load(self, path, device) result(code)
    class(local_model_type), intent(inout) :: self
    character(len=*), intent(in) :: path
    character(len=*), optional, intent(in) :: device
    character(len=:), allocatable :: device_name
    code = c_local_model_destroy(self%handle)
    device_name = 'CPU'
    if (present(device)) device_name = trim(device)
    code = c_local_model_load_file(path, int(len_trim(path), c_size_t), device_name, &
                                   int(len(device_name), c_size_t), self%handle)
  end function local_model_load

  !> Runs the model on `inputs` (in the order of its forward method's parameters) and writes
  !> output i into outputs(i); size(outputs) must be the number of model outputs, and each
  !> output array must have the output's kind and (Fortran) shape. Nothing is written on failure.
  !> Errors: SLIPSTREAM_INVALID_ARGUMENT (no model loaded, counts, kinds or shapes that do not
  !> fit), SLIPSTREAM_BACKEND_ERROR (libtorch's message, e.g. the wrong number of inputs).
  integer function local_model_run(self, inputs, outputs) result(code)
    class(local_model_type), intent(in) :: self
    type(local_tensor_type), target, intent(in) :: inputs(:), outputs(:)
    type(c_tensor_ref_t) :: c_inputs(max(size(inputs), 1))
    type(c_local_output_t) :: c_outputs(max(size(outputs), 1))
    integer :: i
    do i = 1, size(inputs)
      c_inputs(i) = c_tensor_ref_t(c_null_ptr, 0_c_size_t, inputs(i)%data, &
                                   c_loc(inputs(i)%dims), inputs(i)%rank, &
                                   int(inputs(i)%dtype, c_int32_t), SLIPSTREAM_FORTRAN_ORDER)
    end do
    do i = 1, size(outputs)
      c_outputs(i) = c_local_output_t(int(outputs(i)%dtype, c_int32_t), outputs(i)%data, &
                                      outputs(i)%bytes, c_loc(outputs(i)%dims), outputs(i)%rank, &
                                      SLIPSTREAM_FORTRAN_ORDER)
    end do
    code = c_local_model_run(self%handle, c_inputs, size(inputs, kind=c_size_t), c_outputs, &
                             size(outputs, kind=c_size_t))
  end function local_model_run

  !> The device the model runs on ('CPU', 'GPU:0', ...).
  integer function local_model_device(self, device) result(code)
    class(local_model_type), intent(in) :: self
    character(len=:), allocatable, intent(out) :: device
    type(c_ptr) :: pointer
    integer(c_size_t) :: length
    code = c_local_model_device(self%handle, pointer, length)
    if (code /= SLIPSTREAM_OK) return
    device = take_c_string(pointer, length)
  end function local_model_device

  !> Frees the model; the handle becomes null (destroying it again is a no-op).
  integer function local_model_destroy(self) result(code)
    class(local_model_type), intent(inout) :: self
    code = c_local_model_destroy(self%handle)
  end function local_model_destroy

  include "local_tensor_procedures.inc"

end module slipstream_local
