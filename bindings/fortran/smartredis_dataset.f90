! SmartRedis's Fortran module smartredis_dataset: dataset_type (initialize, add_tensor,
! unpack_dataset_tensor, get_tensor_type, get_tensor_dims, add_meta_scalar, add_meta_string,
! get_meta_scalars, get_meta_strings, get_metadata_field_type, to_string, print_dataset) with
! SmartRedis 0.6's names and arguments, over the SmartRedis-compatible C API. Every
! procedure returns an SRError code (enum_fortran.inc); get_last_error() (smartredis_errors)
! gives the message. Arrays keep their Fortran shape: a(nx, ny) added with shape(a) is read by
! C, C++ and Python as shape (nx, ny) with [i][j] == a(i+1, j+1).
module smartredis_dataset
  use, intrinsic :: iso_c_binding
  use smartredis_c_api
  use smartredis_errors, only: set_fortran_error
  implicit none
  private

  include "enum_fortran.inc"

  public :: enum_kind

  !> A dataset: named tensors plus metadata fields. initialize() creates it; it is freed by
  !> destroy() (assignment copies the handle, not the dataset).
  type, public :: dataset_type
    type(c_ptr) :: dataset_ptr = c_null_ptr  !< the C handle (internal: used by the client)
  contains
    procedure :: initialize => dataset_initialize
    procedure :: destroy => dataset_destroy
    procedure :: get_c_pointer => dataset_get_c_pointer
    procedure, private :: add_tensor_i8, add_tensor_i16, add_tensor_i32, add_tensor_i64, &
                          add_tensor_float, add_tensor_double
    generic :: add_tensor => add_tensor_i8, add_tensor_i16, add_tensor_i32, add_tensor_i64, &
                             add_tensor_float, add_tensor_double
    procedure, private :: unpack_dataset_tensor_i8, unpack_dataset_tensor_i16, &
                          unpack_dataset_tensor_i32, unpack_dataset_tensor_i64, &
                          unpack_dataset_tensor_float, unpack_dataset_tensor_double
    generic :: unpack_dataset_tensor => unpack_dataset_tensor_i8, unpack_dataset_tensor_i16, &
                                        unpack_dataset_tensor_i32, unpack_dataset_tensor_i64, &
                                        unpack_dataset_tensor_float, unpack_dataset_tensor_double
    procedure, private :: add_meta_scalar_i32, add_meta_scalar_i64, add_meta_scalar_float, &
                          add_meta_scalar_double
    generic :: add_meta_scalar => add_meta_scalar_i32, add_meta_scalar_i64, &
                                  add_meta_scalar_float, add_meta_scalar_double
    procedure :: add_meta_string
    procedure, private :: get_meta_scalars_i32, get_meta_scalars_i64, get_meta_scalars_float, &
                          get_meta_scalars_double
    generic :: get_meta_scalars => get_meta_scalars_i32, get_meta_scalars_i64, &
                                   get_meta_scalars_float, get_meta_scalars_double
    procedure :: get_meta_strings
    procedure :: get_metadata_field_type
    procedure :: get_tensor_type
    procedure :: get_tensor_dims
    procedure :: to_string => dataset_to_string
    procedure :: print_dataset
  end type dataset_type

contains

  !> Creates an empty dataset called `name` (SRParameterError if it is blank).
  function dataset_initialize(self, name) result(code)
    class(dataset_type), intent(inout) :: self
    character(len=*), intent(in) :: name
    integer(kind=enum_kind) :: code
    code = c_dataset_c(name, len_trim(name, kind=c_size_t), self%dataset_ptr)
  end function dataset_initialize

  !> Frees the dataset (a dataset never initialised, or destroyed already, is a no-op).
  function dataset_destroy(self) result(code)
    class(dataset_type), intent(inout) :: self
    integer(kind=enum_kind) :: code
    code = deallocate_dataset_c(self%dataset_ptr)
  end function dataset_destroy

  type(c_ptr) function dataset_get_c_pointer(self)
    class(dataset_type), intent(in) :: self
    dataset_get_c_pointer = self%dataset_ptr
  end function dataset_get_c_pointer

  !> Adds a copy of `n_elements` elements at `data` with Fortran dims `dims`.
  function add_array(self, name, data, n_elements, dims, data_type) result(code)
    class(dataset_type), intent(in) :: self
    character(len=*), intent(in) :: name
    type(c_ptr), intent(in) :: data
    integer, intent(in) :: n_elements, dims(:), data_type
    integer(kind=enum_kind) :: code
    code = tensor_with(add_tensor_c, self%dataset_ptr, name, data, n_elements, dims, data_type)
  end function add_array

  !> Copies tensor `name` into `n_elements` elements at `data`: dims and type must be the stored
  !> ones (SRParameterError naming both otherwise; SRKeyError if there is no such tensor).
  function unpack_array(self, name, data, n_elements, dims, data_type) result(code)
    class(dataset_type), intent(in) :: self
    character(len=*), intent(in) :: name
    type(c_ptr), intent(in) :: data
    integer, intent(in) :: n_elements, dims(:), data_type
    integer(kind=enum_kind) :: code
    code = tensor_with(unpack_dataset_tensor_c, self%dataset_ptr, name, data, n_elements, dims, &
                       data_type)
  end function unpack_array

  include "smartredis_dataset_tensors.inc"

  ! ---- Metadata -----------------------------------------------------------------------------

  function add_meta_value(self, name, value, meta_type) result(code)
    class(dataset_type), intent(in) :: self
    character(len=*), intent(in) :: name
    type(c_ptr), intent(in) :: value
    integer, intent(in) :: meta_type
    integer(kind=enum_kind) :: code
    code = add_meta_scalar_c(self%dataset_ptr, name, len_trim(name, kind=c_size_t), value, &
                             meta_type)
  end function add_meta_value

  !> Appends a value to metadata field `name`, creating it.
  function add_meta_scalar_i32(self, name, meta) result(code)
    class(dataset_type), intent(in) :: self
    character(len=*), intent(in) :: name
    integer(kind=c_int32_t), target, intent(in) :: meta
    integer(kind=enum_kind) :: code
    code = add_meta_value(self, name, c_loc(meta), meta_int32)
  end function add_meta_scalar_i32

  function add_meta_scalar_i64(self, name, meta) result(code)
    class(dataset_type), intent(in) :: self
    character(len=*), intent(in) :: name
    integer(kind=c_int64_t), target, intent(in) :: meta
    integer(kind=enum_kind) :: code
    code = add_meta_value(self, name, c_loc(meta), meta_int64)
  end function add_meta_scalar_i64

  function add_meta_scalar_float(self, name, meta) result(code)
    class(dataset_type), intent(in) :: self
    character(len=*), intent(in) :: name
    real(kind=c_float), target, intent(in) :: meta
    integer(kind=enum_kind) :: code
    code = add_meta_value(self, name, c_loc(meta), meta_flt)
  end function add_meta_scalar_float

  function add_meta_scalar_double(self, name, meta) result(code)
    class(dataset_type), intent(in) :: self
    character(len=*), intent(in) :: name
    real(kind=c_double), target, intent(in) :: meta
    integer(kind=enum_kind) :: code
    code = add_meta_value(self, name, c_loc(meta), meta_dbl)
  end function add_meta_scalar_double

  !> Appends `meta` (trailing blanks kept) to string field `name`.
  function add_meta_string(self, name, meta) result(code)
    class(dataset_type), intent(in) :: self
    character(len=*), intent(in) :: name, meta
    integer(kind=enum_kind) :: code
    code = add_meta_string_c(self%dataset_ptr, name, len_trim(name, kind=c_size_t), meta, &
                             len(meta, kind=c_size_t))
  end function add_meta_string

  !> The values of scalar field `name`: `count` values at `values` (memory the dataset keeps)
  !> if the field holds `meta_type`; SRTypeError naming both types otherwise.
  function meta_values(self, name, meta_type, values, count) result(code)
    class(dataset_type), intent(in) :: self
    character(len=*), intent(in) :: name
    integer, intent(in) :: meta_type
    type(c_ptr), intent(out) :: values
    integer(c_size_t), intent(out) :: count
    integer(kind=enum_kind) :: code
    integer(c_int) :: stored_type
    character(len=120) :: message
    code = get_meta_scalars_c(self%dataset_ptr, name, len_trim(name, kind=c_size_t), count, &
                              stored_type, values)
    if (code /= SRNoError) return
    if (stored_type /= meta_type) then
      write(message, '(a,i0,a,i0,a)') 'metadata field holds type ', stored_type, &
          '; the pointer passed is of type ', meta_type, ' (enum_fortran.inc meta_*)'
      call set_fortran_error(trim(message))
      code = SRTypeError
    end if
  end function meta_values

  function get_meta_scalars_i32(self, name, meta) result(code)
    class(dataset_type), intent(in) :: self
    character(len=*), intent(in) :: name
    integer(kind=c_int32_t), dimension(:), pointer, intent(out) :: meta
    integer(kind=enum_kind) :: code
    type(c_ptr) :: values
    integer(c_size_t) :: count
    nullify(meta)
    code = meta_values(self, name, meta_int32, values, count)
    if (code == SRNoError) call c_f_pointer(values, meta, [count])
  end function get_meta_scalars_i32

  function get_meta_scalars_i64(self, name, meta) result(code)
    class(dataset_type), intent(in) :: self
    character(len=*), intent(in) :: name
    integer(kind=c_int64_t), dimension(:), pointer, intent(out) :: meta
    integer(kind=enum_kind) :: code
    type(c_ptr) :: values
    integer(c_size_t) :: count
    nullify(meta)
    code = meta_values(self, name, meta_int64, values, count)
    if (code == SRNoError) call c_f_pointer(values, meta, [count])
  end function get_meta_scalars_i64

  function get_meta_scalars_float(self, name, meta) result(code)
    class(dataset_type), intent(in) :: self
    character(len=*), intent(in) :: name
    real(kind=c_float), dimension(:), pointer, intent(out) :: meta
    integer(kind=enum_kind) :: code
    type(c_ptr) :: values
    integer(c_size_t) :: count
    nullify(meta)
    code = meta_values(self, name, meta_flt, values, count)
    if (code == SRNoError) call c_f_pointer(values, meta, [count])
  end function get_meta_scalars_float

  function get_meta_scalars_double(self, name, meta) result(code)
    class(dataset_type), intent(in) :: self
    character(len=*), intent(in) :: name
    real(kind=c_double), dimension(:), pointer, intent(out) :: meta
    integer(kind=enum_kind) :: code
    type(c_ptr) :: values
    integer(c_size_t) :: count
    nullify(meta)
    code = meta_values(self, name, meta_dbl, values, count)
    if (code == SRNoError) call c_f_pointer(values, meta, [count])
  end function get_meta_scalars_double

  !> The strings of field `name`, each padded to the longest.
  function get_meta_strings(self, name, meta) result(code)
    class(dataset_type), intent(in) :: self
    character(len=*), intent(in) :: name
    character(len=:), allocatable, intent(out) :: meta(:)
    integer(kind=enum_kind) :: code
    type(c_ptr) :: data, lengths_pointer
    integer(c_size_t) :: count
    type(c_ptr), pointer :: strings(:)
    integer(c_size_t), pointer :: lengths(:)
    character(kind=c_char), pointer :: chars(:)
    integer :: i, j
    code = get_meta_strings_c(self%dataset_ptr, name, len_trim(name, kind=c_size_t), data, &
                              count, lengths_pointer)
    if (code /= SRNoError) return
    if (count == 0) then
      allocate(character(len=0) :: meta(0))
      return
    end if
    call c_f_pointer(data, strings, [count])
    call c_f_pointer(lengths_pointer, lengths, [count])
    allocate(character(len=maxval(lengths)) :: meta(count))
    do i = 1, int(count)
      meta(i) = ''
      if (lengths(i) == 0) cycle
      call c_f_pointer(strings(i), chars, [lengths(i)])
      do j = 1, int(lengths(i))
        meta(i)(j:j) = chars(j)
      end do
    end do
  end function get_meta_strings

  ! ---- Types, dimensions and description -----------------------------------------------------

  !> The type of metadata field `name` in `mdtype` (meta_dbl, meta_flt, meta_int32, meta_int64,
  !> meta_string; enum_fortran.inc); SRKeyError if there is no such field.
  function get_metadata_field_type(self, name, mdtype) result(code)
    class(dataset_type), intent(in) :: self
    character(len=*), intent(in) :: name
    integer(kind=enum_kind), intent(out) :: mdtype
    integer(kind=enum_kind) :: code
    code = get_metadata_field_type_c(self%dataset_ptr, name, len_trim(name, kind=c_size_t), &
                                     mdtype)
  end function get_metadata_field_type

  !> The element type of tensor `name` in `ttype` (tensor_dbl, tensor_flt, tensor_int8 ...);
  !> SRKeyError if there is no such tensor.
  function get_tensor_type(self, name, ttype) result(code)
    class(dataset_type), intent(in) :: self
    character(len=*), intent(in) :: name
    integer(kind=enum_kind), intent(out) :: ttype
    integer(kind=enum_kind) :: code
    code = get_tensor_type_c(self%dataset_ptr, name, len_trim(name, kind=c_size_t), ttype)
  end function get_tensor_type

  !> The dimensions of tensor `name` (its Fortran shape, as added) in dims(1:dims_length).
  !> On entry dims_length is how many entries of `dims` may be written; on return it is the
  !> tensor's rank. A rank above that room is SRBadAllocError (dims unchanged, dims_length set
  !> to the rank), as in SmartRedis; dims_length beyond size(dims) is SRParameterError.
  function get_tensor_dims(self, name, dims, dims_length) result(code)
    class(dataset_type), intent(in) :: self
    character(len=*), intent(in) :: name
    integer, dimension(:), intent(inout) :: dims
    integer, intent(inout) :: dims_length
    integer(kind=enum_kind) :: code
    integer(c_size_t), target :: c_dims(max(size(dims), 1))
    type(c_ptr) :: dims_pointer
    integer(c_size_t) :: rank
    character(len=120) :: message
    if (dims_length < 0 .or. dims_length > size(dims)) then
      write(message, '(a,i0,a,i0)') 'get_tensor_dims: dims_length is ', dims_length, &
          ' but dims has ', size(dims)
      call set_fortran_error(trim(message))
      code = SRParameterError
      return
    end if
    dims_pointer = c_loc(c_dims)
    rank = int(dims_length, c_size_t)
    code = get_tensor_dims_c(self%dataset_ptr, name, len_trim(name, kind=c_size_t), &
                             dims_pointer, rank)
    if (code == SRNoError .or. code == SRBadAllocError) dims_length = int(rank)
    if (code == SRNoError) dims(1:dims_length) = int(c_dims(1:dims_length))
  end function get_tensor_dims

  !> A one-line description: "DataSet (<name>): <n> tensors, <m> metadata fields".
  function dataset_to_string(self) result(text)
    class(dataset_type), intent(in) :: self
    character(len=:), allocatable :: text
    text = c_string_copy(dataset_to_string_c(self%dataset_ptr))
  end function dataset_to_string

  !> Writes to_string() to `unit` (standard error when absent), as SmartRedis does.
  subroutine print_dataset(self, unit)
    use, intrinsic :: iso_fortran_env, only: error_unit
    class(dataset_type), intent(in) :: self
    integer, optional, intent(in) :: unit
    integer :: target_unit
    target_unit = error_unit
    if (present(unit)) target_unit = unit
    write(target_unit, '(a)') self%to_string()
  end subroutine print_dataset

end module smartredis_dataset
