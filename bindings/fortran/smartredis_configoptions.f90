! SmartRedis 0.6's Fortran module smartredis_configoptions: configoptions_type, the settings of
! one database read from the environment (SSDB_{suffix}, SR_DB_TYPE_{suffix} ... with a suffix;
! SSDB ... without), with per-object overrides; pass it to client%initialize(cfgopts). Over the
! C API of c_configoptions.h. Every method returns an SRError code (enum_fortran.inc);
! get_last_error() (module smartredis_errors) gives the message. As in SmartRedis there is no
! call to free the object: the library keeps it until the program ends.
module smartredis_configoptions
  use, intrinsic :: iso_c_binding
  use smartredis_c_api
  implicit none
  private

  include "enum_fortran.inc"

  public :: enum_kind

  !> The configuration of one database.
  type, public :: configoptions_type
    private
    type(c_ptr) :: configoptions_ptr = c_null_ptr
  contains
    procedure :: get_c_pointer
    procedure :: create_configoptions_from_environment
    procedure :: get_integer_option
    procedure :: get_string_option
    procedure :: is_configured
    procedure :: override_integer_option
    procedure :: override_string_option
  end type configoptions_type

contains

  type(c_ptr) function get_c_pointer(self)
    class(configoptions_type), intent(in) :: self
    get_c_pointer = self%configoptions_ptr
  end function get_c_pointer

  !> Reads the environment of database `db_suffix` ("" for the unsuffixed variables).
  function create_configoptions_from_environment(self, db_suffix) result(code)
    class(configoptions_type), intent(inout) :: self
    character(len=*), intent(in) :: db_suffix
    integer(kind=enum_kind) :: code
    code = create_configoptions_from_environment_c(db_suffix, &
                                                   len_trim(db_suffix, kind=c_size_t), &
                                                   self%configoptions_ptr)
  end function create_configoptions_from_environment

  !> The override of `option_name`, else its environment variable. SRKeyError if neither is
  !> set, SRParameterError if the value is not an integer; `result` is unchanged then.
  function get_integer_option(self, option_name, result) result(code)
    class(configoptions_type), intent(in) :: self
    character(len=*), intent(in) :: option_name
    integer(kind=c_int64_t), intent(inout) :: result
    integer(kind=enum_kind) :: code
    integer(kind=c_int64_t) :: value
    code = get_integer_option_c(self%configoptions_ptr, option_name, &
                                len_trim(option_name, kind=c_size_t), value)
    if (code == SRNoError) result = value
  end function get_integer_option

  !> As get_integer_option for a string; `result` is allocated only on success.
  function get_string_option(self, option_name, result) result(code)
    class(configoptions_type), intent(in) :: self
    character(len=*), intent(in) :: option_name
    character(len=:), allocatable, intent(out) :: result
    integer(kind=enum_kind) :: code
    type(c_ptr) :: value
    integer(kind=c_size_t) :: value_length
    code = get_string_option_c(self%configoptions_ptr, option_name, &
                               len_trim(option_name, kind=c_size_t), value, value_length)
    if (code == SRNoError) result = c_chars_copy(value, value_length)
  end function get_string_option

  !> Whether `option_name` has an override or an environment variable.
  function is_configured(self, option_name, result) result(code)
    class(configoptions_type), intent(in) :: self
    character(len=*), intent(in) :: option_name
    logical, intent(inout) :: result
    integer(kind=enum_kind) :: code
    logical(kind=c_bool) :: configured
    configured = .false.
    code = is_configured_c(self%configoptions_ptr, option_name, &
                           len_trim(option_name, kind=c_size_t), configured)
    if (code == SRNoError) result = configured
  end function is_configured

  function override_integer_option(self, option_name, value) result(code)
    class(configoptions_type), intent(in) :: self
    character(len=*), intent(in) :: option_name
    integer(kind=c_int64_t), intent(in) :: value
    integer(kind=enum_kind) :: code
    code = override_integer_option_c(self%configoptions_ptr, option_name, &
                                     len_trim(option_name, kind=c_size_t), value)
  end function override_integer_option

  function override_string_option(self, option_name, value) result(code)
    class(configoptions_type), intent(in) :: self
    character(len=*), intent(in) :: option_name, value
    integer(kind=enum_kind) :: code
    code = override_string_option_c(self%configoptions_ptr, option_name, &
                                    len_trim(option_name, kind=c_size_t), value, &
                                    len_trim(value, kind=c_size_t))
  end function override_string_option

end module smartredis_configoptions
