!> The learned EKE closure run in this process (module `slipstream_local`, Slipstream's in-process
!> TorchScript models): the same model file the experiment trains (train_closure.py's closure.pt)
!> and the same layout as the server path (ocean_server.f90), with no server in between.
!>
!> Layout: features(4, ncell) is contiguous with a cell's 4 values adjacent, i.e. the bytes of a
!> C-order [ncell][4] array; it goes to the model as a rank-1 view of 4*ncell values (no copy, no
!> transpose), which the model reshapes to (ncell, 4). The (ncell) output is written straight
!> into log_eke.
module ocean_local
  use, intrinsic :: iso_c_binding, only: c_float, c_loc, c_f_pointer
  use slipstream_local
  implicit none
  private

  logical, parameter, public :: local_closure_available = .true.

  type, public :: local_closure
    type(local_model_type) :: model
    character(len=:), allocatable :: path, device
  contains
    procedure :: load => local_load
    procedure :: predict => local_predict
    procedure :: unload => local_unload
  end type local_closure

contains

  !> Loads the TorchScript file `path` onto the CPU. ok = .false. with a message if it cannot.
  subroutine local_load(self, path, ok, message)
    class(local_closure), intent(inout) :: self
    character(len=*), intent(in) :: path
    logical, intent(out) :: ok
    character(len=:), allocatable, intent(out) :: message
    integer :: code
    self%path = path
    ok = .false.
    code = self%model%load(path, 'CPU')
    if (code /= SLIPSTREAM_OK) then
      message = 'cannot load model file ' // path // ': ' // slipstream_last_error()
      return
    end if
    code = self%model%device(self%device)
    if (code /= SLIPSTREAM_OK) then
      message = 'model device: ' // slipstream_last_error()
      return
    end if
    message = ''
    ok = .true.
  end subroutine local_load

  !> One in-process call: features (n_features, ncell) -> log_eke (ncell).
  subroutine local_predict(self, features, log_eke, ok, message)
    class(local_closure), intent(inout) :: self
    real(c_float), contiguous, target, intent(in) :: features(:,:)
    real(c_float), contiguous, target, intent(inout) :: log_eke(:)
    logical, intent(out) :: ok
    character(len=:), allocatable, intent(out) :: message
    real(c_float), pointer, contiguous :: flat(:)
    integer :: code
    call c_f_pointer(c_loc(features), flat, [size(features)])
    code = self%model%run([local_tensor(flat)], [local_tensor(log_eke)])
    ok = code == SLIPSTREAM_OK
    message = ''
    if (.not. ok) message = 'run ' // self%path // ' (expected float32 output of shape (ncell)): ' &
                            // slipstream_last_error()
  end subroutine local_predict

  subroutine local_unload(self)
    class(local_closure), intent(inout) :: self
    integer :: code
    code = self%model%destroy()
    if (allocated(self%path)) deallocate(self%path)
    if (allocated(self%device)) deallocate(self%device)
  end subroutine local_unload
end module ocean_local
