!> Stand-in for module ocean_local when Slipstream's in-process Fortran module
!> (slipstream_fortran_local) is not built: same interface, load always fails, so
!> `--closure local` stops with a clear message instead of the program not building.
module ocean_local
  use, intrinsic :: iso_c_binding, only: c_float
  implicit none
  private

  logical, parameter, public :: local_closure_available = .false.

  type, public :: local_closure
    character(len=:), allocatable :: path, device
  contains
    procedure :: load => local_load
    procedure :: predict => local_predict
    procedure :: unload => local_unload
  end type local_closure

contains

  subroutine local_load(self, path, ok, message)
    class(local_closure), intent(inout) :: self
    character(len=*), intent(in) :: path
    logical, intent(out) :: ok
    character(len=:), allocatable, intent(out) :: message
    self%path = path
    self%device = ''
    ok = .false.
    message = 'built without Slipstream''s in-process models: --closure local is unavailable'
  end subroutine local_load

  subroutine local_predict(self, features, log_eke, ok, message)
    class(local_closure), intent(inout) :: self
    real(c_float), contiguous, target, intent(in) :: features(:,:)
    real(c_float), contiguous, target, intent(inout) :: log_eke(:)
    logical, intent(out) :: ok
    character(len=:), allocatable, intent(out) :: message
    log_eke = 0
    if (size(features) < 0) log_eke = 1  ! features unused: keeps -Wall quiet
    ok = .false.
    message = 'built without Slipstream''s in-process models'
    if (.false.) self%path = ''
  end subroutine local_predict

  subroutine local_unload(self)
    class(local_closure), intent(inout) :: self
    if (.false.) self%path = ''
  end subroutine local_unload
end module ocean_local
