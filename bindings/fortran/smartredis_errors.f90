! SmartRedis's Fortran error module: the message of the last failed call of smartredis_client
! or smartredis_dataset (SRGetLastError of the C API, kept per thread).
module smartredis_errors
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: error_unit
  use smartredis_c_api, only: sr_get_last_error_c, sr_set_fortran_error_c, c_string_copy
  implicit none
  private
  public :: get_last_error, print_last_error, set_fortran_error

contains

  !> The message of this thread's last failed call ("" if the last call succeeded).
  function get_last_error() result(message)
    character(len=:), allocatable :: message
    message = c_string_copy(sr_get_last_error_c())
  end function get_last_error

  !> Writes the last error's message to `unit` (standard error when absent).
  subroutine print_last_error(unit)
    integer, optional, intent(in) :: unit
    integer :: target_unit
    target_unit = error_unit
    if (present(unit)) target_unit = unit
    write(target_unit, '(a)') get_last_error()
  end subroutine print_last_error

  !> Records an error found by the Fortran modules themselves (internal).
  subroutine set_fortran_error(message)
    character(len=*), intent(in) :: message
    call sr_set_fortran_error_c(message, len(message, kind=c_size_t))
  end subroutine set_fortran_error

end module smartredis_errors
