!> Stand-in for module ocean_server when Slipstream's Fortran bindings are not built (or the
!> model is compiled standalone with gfortran): same interface, connect always fails, so
!> `--closure server` stops with a clear message instead of the program not building.
module ocean_server
  use, intrinsic :: iso_c_binding, only: c_float
  implicit none
  private

  logical, parameter, public :: server_closure_available = .false.

  type, public :: server_closure
    character(len=:), allocatable :: model, prefix
    character(len=14) :: features_key = 'ocean.features'
    character(len=13) :: output_key = 'ocean.log_eke'
    logical :: one_round_trip = .true.
  contains
    procedure :: connect => server_connect
    procedure :: predict => server_predict
    procedure :: disconnect => server_disconnect
  end type server_closure

contains

  subroutine server_connect(self, model, ok, message)
    class(server_closure), intent(inout) :: self
    character(len=*), intent(in) :: model
    logical, intent(out) :: ok
    character(len=:), allocatable, intent(out) :: message
    self%model = model
    self%prefix = ''
    ok = .false.
    message = 'built without the Slipstream Fortran bindings: --closure server is unavailable'
  end subroutine server_connect

  subroutine server_predict(self, features, log_eke, ok, message)
    class(server_closure), intent(inout) :: self
    real(c_float), contiguous, target, intent(in) :: features(:,:)
    real(c_float), contiguous, target, intent(inout) :: log_eke(:)
    logical, intent(out) :: ok
    character(len=:), allocatable, intent(out) :: message
    log_eke = 0
    if (size(features) < 0) log_eke = 1  ! features unused: keeps -Wall quiet
    ok = .false.
    message = 'built without the Slipstream Fortran bindings'
    if (.false.) self%model = ''
  end subroutine server_predict

  subroutine server_disconnect(self)
    class(server_closure), intent(inout) :: self
    if (.false.) self%model = ''
  end subroutine server_disconnect
end module ocean_server
