! SmartRedis 0.6's Fortran module smartredis_logcontext: logcontext_type, a named context for the
! log_data / log_warning / log_error subroutines of smartredis_logger (over c_logcontext.h).
module smartredis_logcontext
  use, intrinsic :: iso_c_binding
  use smartredis_c_api, only: enum_kind, smartredis_c_logcontext_c, deallocate_logcontext_c
  implicit none
  private

  include "enum_fortran.inc"

  public :: enum_kind

  !> A logging context: lines logged through it carry its name. initialize() creates it;
  !> destroy() (an addition to SmartRedis's type) frees it, else it lives until the program ends.
  type, public :: logcontext_type
    type(c_ptr) :: logcontext_ptr = c_null_ptr  !< the C handle (internal: used by the logger)
  contains
    procedure :: initialize => logcontext_initialize
    procedure :: get_c_pointer => logcontext_get_c_pointer
    procedure :: destroy => logcontext_destroy
  end type logcontext_type

contains

  !> Creates the context `context` (trailing blanks removed).
  function logcontext_initialize(self, context) result(code)
    class(logcontext_type), intent(inout) :: self
    character(len=*), intent(in) :: context
    integer(kind=enum_kind) :: code
    code = smartredis_c_logcontext_c(context, len_trim(context, kind=c_size_t), &
                                     self%logcontext_ptr)
  end function logcontext_initialize

  type(c_ptr) function logcontext_get_c_pointer(self)
    class(logcontext_type), intent(in) :: self
    logcontext_get_c_pointer = self%logcontext_ptr
  end function logcontext_get_c_pointer

  !> Frees the context (one never initialised, or destroyed already, is a no-op).
  function logcontext_destroy(self) result(code)
    class(logcontext_type), intent(inout) :: self
    integer(kind=enum_kind) :: code
    code = deallocate_logcontext_c(self%logcontext_ptr)
  end function logcontext_destroy

end module smartredis_logcontext
