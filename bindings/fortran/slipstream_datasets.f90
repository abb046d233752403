! dataset_type: a dataset of named tensors and metadata fields (the C API's slipstream_dataset_t).
! Re-exported by the module `slipstream`; see docs/clients.md.
module slipstream_datasets
  use, intrinsic :: iso_c_binding
  use slipstream_c_api
  use slipstream_interop
  implicit none
  private
  public :: dataset_type

  !> A dataset handle. initialize() creates it, destroy() frees it. Assignment copies the handle,
  !> not the dataset: destroy exactly one of the copies. Every procedure returns a status code
  !> (SLIPSTREAM_OK on success; slipstream_last_error() gives the message otherwise).
  !> Tensors are copied in by add_tensor (a Fortran array a(nx, ny) keeps its shape (nx, ny) and
  !> reads in C as [i][j] == a(i+1, j+1)); unpack_tensor needs an array of the stored dtype and
  !> shape. Names have trailing blanks removed.
  type :: dataset_type
    type(c_ptr) :: handle = c_null_ptr  !< the C handle (internal)
  contains
    procedure :: initialize => dataset_initialize
    procedure :: destroy => dataset_destroy
    procedure :: get_name => dataset_get_name
    include "dataset_tensor_bindings.inc"
    procedure :: tensor_info => dataset_tensor_info
    procedure :: has_tensor => dataset_has_tensor
    procedure :: get_tensor_names => dataset_get_tensor_names
    procedure, private :: add_meta_scalar_real32, add_meta_scalar_real64, &
                          add_meta_scalar_int32, add_meta_scalar_int64
    generic :: add_meta_scalar => add_meta_scalar_real32, add_meta_scalar_real64, &
                                  add_meta_scalar_int32, add_meta_scalar_int64
    procedure :: add_meta_string => dataset_add_meta_string
    procedure, private :: get_meta_scalars_real32, get_meta_scalars_real64, &
                          get_meta_scalars_int32, get_meta_scalars_int64
    generic :: get_meta_scalars => get_meta_scalars_real32, get_meta_scalars_real64, &
                                   get_meta_scalars_int32, get_meta_scalars_int64
    procedure :: get_meta_strings => dataset_get_meta_strings
    procedure :: get_metadata_field_names => dataset_get_field_names
    procedure :: get_metadata_field_type => dataset_get_field_type
    procedure :: has_field => dataset_has_field
    procedure :: clear_field => dataset_clear_field
  end type dataset_type

contains

  !> Creates an empty dataset called `name` (SLIPSTREAM_INVALID_ARGUMENT if it is blank).
  integer function dataset_initialize(self, name) result(code)
    class(dataset_type), intent(inout) :: self
    character(len=*), intent(in) :: name
    code = c_dataset_create(name, c_text_length(name), self%handle)
  end function dataset_initialize

  !> Frees the dataset; the handle becomes null. Destroying a null handle does nothing.
  integer function dataset_destroy(self) result(code)
    class(dataset_type), intent(inout) :: self
    code = c_dataset_destroy(self%handle)
  end function dataset_destroy

  integer function dataset_get_name(self, name) result(code)
    class(dataset_type), intent(in) :: self
    character(len=:), allocatable, intent(out) :: name
    type(c_ptr) :: pointer
    integer(c_size_t) :: length
    character(kind=c_char), pointer :: chars(:)
    integer :: i
    code = c_dataset_name(self%handle, pointer, length)
    if (code /= SLIPSTREAM_OK) return
    allocate(character(len=length) :: name)
    if (length == 0) return
    call c_f_pointer(pointer, chars, [length])  ! borrowed: copied, not freed
    do i = 1, int(length)
      name(i:i) = chars(i)
    end do
  end function dataset_get_name

  !> Adds a copy of `data` (Fortran order, the Fortran shape) as tensor `name`.
  integer function add_array(self, name, data, dims, dtype) result(code)
    class(dataset_type), intent(in) :: self
    character(len=*), intent(in) :: name
    type(c_ptr), intent(in) :: data
    integer(c_int64_t), intent(in) :: dims(:)
    integer, intent(in) :: dtype
    code = c_dataset_add_tensor(self%handle, name, c_text_length(name), data, dims, &
                                size(dims, kind=c_size_t), int(dtype, c_int), &
                                SLIPSTREAM_FORTRAN_ORDER)
  end function add_array

  !> Copies tensor `name` into `data`, which must have its dtype and shape.
  integer function unpack_array(self, name, data, bytes, dims, dtype) result(code)
    class(dataset_type), intent(in) :: self
    character(len=*), intent(in) :: name
    type(c_ptr), intent(in) :: data
    integer(c_size_t), intent(in) :: bytes
    integer(c_int64_t), intent(in) :: dims(:)
    integer, intent(in) :: dtype
    code = c_dataset_unpack_tensor(self%handle, name, c_text_length(name), data, bytes, dims, &
                                   size(dims, kind=c_size_t), int(dtype, c_int), &
                                   SLIPSTREAM_FORTRAN_ORDER)
  end function unpack_array

  !> The dtype (SLIPSTREAM_FLOAT32, ...) and shape of tensor `name`, e.g. to allocate an array
  !> before unpack_tensor. SLIPSTREAM_KEY_NOT_FOUND if there is no such tensor.
  integer function dataset_tensor_info(self, name, dtype, dims) result(code)
    class(dataset_type), intent(in) :: self
    character(len=*), intent(in) :: name
    integer, intent(out) :: dtype
    integer(c_int64_t), allocatable, intent(out) :: dims(:)
    type(c_ptr) :: tensor
    code = c_dataset_get_tensor(self%handle, name, c_text_length(name), tensor)
    if (code /= SLIPSTREAM_OK) return
    code = tensor_handle_info(tensor, dtype, dims)
  end function dataset_tensor_info

  integer function dataset_has_tensor(self, name, has) result(code)
    class(dataset_type), intent(in) :: self
    character(len=*), intent(in) :: name
    logical, intent(out) :: has
    integer(c_int) :: flag
    flag = 0
    code = c_dataset_has_tensor(self%handle, name, c_text_length(name), flag)
    has = flag /= 0
  end function dataset_has_tensor

  !> The tensor names in the order added, each padded to the longest.
  integer function dataset_get_tensor_names(self, names) result(code)
    class(dataset_type), intent(in) :: self
    character(len=:), allocatable, intent(out) :: names(:)
    integer(c_size_t) :: count
    code = c_dataset_tensor_count(self%handle, count)
    if (code /= SLIPSTREAM_OK) return
    code = collect_names(self, count, .true., names)
  end function dataset_get_tensor_names

  integer function dataset_get_field_names(self, names) result(code)
    class(dataset_type), intent(in) :: self
    character(len=:), allocatable, intent(out) :: names(:)
    integer(c_size_t) :: count
    code = c_dataset_field_count(self%handle, count)
    if (code /= SLIPSTREAM_OK) return
    code = collect_names(self, count, .false., names)
  end function dataset_get_field_names

  ! Fetches `count` tensor names (or field names) into a padded array.
  integer function collect_names(self, count, tensors, names) result(code)
    class(dataset_type), intent(in) :: self
    integer(c_size_t), intent(in) :: count
    logical, intent(in) :: tensors
    character(len=:), allocatable, intent(out) :: names(:)
    type(c_ptr) :: pointer
    integer(c_size_t) :: i, length
    type :: text_holder
      character(len=:), allocatable :: text
    end type text_holder
    type(text_holder), allocatable :: all(:)
    integer :: longest
    allocate(all(count))
    longest = 0
    code = SLIPSTREAM_OK
    do i = 1, count
      if (tensors) then
        code = c_dataset_tensor_name(self%handle, i - 1, pointer, length)
      else
        code = c_dataset_field_name(self%handle, i - 1, pointer, length)
      end if
      if (code /= SLIPSTREAM_OK) return
      all(i)%text = take_c_string(pointer, length)
      longest = max(longest, len(all(i)%text))
    end do
    allocate(character(len=longest) :: names(count))
    do i = 1, count
      names(i) = all(i)%text
    end do
  end function collect_names

  integer function add_meta_scalar_real32(self, field, value) result(code)
    class(dataset_type), intent(in) :: self
    character(len=*), intent(in) :: field
    real(c_float), target, intent(in) :: value
    code = c_dataset_add_meta_scalar(self%handle, field, c_text_length(field), c_loc(value), &
                                     int(SLIPSTREAM_META_FLOAT, c_int))
  end function add_meta_scalar_real32

  integer function add_meta_scalar_real64(self, field, value) result(code)
    class(dataset_type), intent(in) :: self
    character(len=*), intent(in) :: field
    real(c_double), target, intent(in) :: value
    code = c_dataset_add_meta_scalar(self%handle, field, c_text_length(field), c_loc(value), &
                                     int(SLIPSTREAM_META_DOUBLE, c_int))
  end function add_meta_scalar_real64

  integer function add_meta_scalar_int32(self, field, value) result(code)
    class(dataset_type), intent(in) :: self
    character(len=*), intent(in) :: field
    integer(c_int32_t), target, intent(in) :: value
    code = c_dataset_add_meta_scalar(self%handle, field, c_text_length(field), c_loc(value), &
                                     int(SLIPSTREAM_META_INT32, c_int))
  end function add_meta_scalar_int32

  integer function add_meta_scalar_int64(self, field, value) result(code)
    class(dataset_type), intent(in) :: self
    character(len=*), intent(in) :: field
    integer(c_int64_t), target, intent(in) :: value
    code = c_dataset_add_meta_scalar(self%handle, field, c_text_length(field), c_loc(value), &
                                     int(SLIPSTREAM_META_INT64, c_int))
  end function add_meta_scalar_int64

  !> Appends a string to a string field; `value` is sent with its trailing blanks removed.
  integer function dataset_add_meta_string(self, field, value) result(code)
    class(dataset_type), intent(in) :: self
    character(len=*), intent(in) :: field, value
    code = c_dataset_add_meta_string(self%handle, field, c_text_length(field), value, &
                                     c_text_length(value))
  end function dataset_add_meta_string

  ! The scalar getters: ask the count first (a BUFFER_TOO_SMALL reply with capacity 0 carries
  ! it), then copy into an array of exactly that size.
  integer function get_meta_scalars_real32(self, field, values) result(code)
    class(dataset_type), intent(in) :: self
    character(len=*), intent(in) :: field
    real(c_float), allocatable, target, intent(out) :: values(:)
    integer(c_size_t) :: count, capacity
    code = meta_count(self, field, SLIPSTREAM_META_FLOAT, count)
    if (code /= SLIPSTREAM_OK) return
    capacity = count
    allocate(values(max(count, 1_c_size_t)))
    code = c_dataset_get_meta_scalars(self%handle, field, c_text_length(field), &
                                      int(SLIPSTREAM_META_FLOAT, c_int), c_loc(values), capacity, &
                                      count)
    values = values(1:count)
  end function get_meta_scalars_real32

  integer function get_meta_scalars_real64(self, field, values) result(code)
    class(dataset_type), intent(in) :: self
    character(len=*), intent(in) :: field
    real(c_double), allocatable, target, intent(out) :: values(:)
    integer(c_size_t) :: count, capacity
    code = meta_count(self, field, SLIPSTREAM_META_DOUBLE, count)
    if (code /= SLIPSTREAM_OK) return
    capacity = count
    allocate(values(max(count, 1_c_size_t)))
    code = c_dataset_get_meta_scalars(self%handle, field, c_text_length(field), &
                                      int(SLIPSTREAM_META_DOUBLE, c_int), c_loc(values), capacity, &
                                      count)
    values = values(1:count)
  end function get_meta_scalars_real64

  integer function get_meta_scalars_int32(self, field, values) result(code)
    class(dataset_type), intent(in) :: self
    character(len=*), intent(in) :: field
    integer(c_int32_t), allocatable, target, intent(out) :: values(:)
    integer(c_size_t) :: count, capacity
    code = meta_count(self, field, SLIPSTREAM_META_INT32, count)
    if (code /= SLIPSTREAM_OK) return
    capacity = count
    allocate(values(max(count, 1_c_size_t)))
    code = c_dataset_get_meta_scalars(self%handle, field, c_text_length(field), &
                                      int(SLIPSTREAM_META_INT32, c_int), c_loc(values), capacity, &
                                      count)
    values = values(1:count)
  end function get_meta_scalars_int32

  integer function get_meta_scalars_int64(self, field, values) result(code)
    class(dataset_type), intent(in) :: self
    character(len=*), intent(in) :: field
    integer(c_int64_t), allocatable, target, intent(out) :: values(:)
    integer(c_size_t) :: count, capacity
    code = meta_count(self, field, SLIPSTREAM_META_INT64, count)
    if (code /= SLIPSTREAM_OK) return
    capacity = count
    allocate(values(max(count, 1_c_size_t)))
    code = c_dataset_get_meta_scalars(self%handle, field, c_text_length(field), &
                                      int(SLIPSTREAM_META_INT64, c_int), c_loc(values), capacity, &
                                      count)
    values = values(1:count)
  end function get_meta_scalars_int64

  ! Number of values of a scalar field of `meta_type` (errors as get_meta_scalars).
  integer function meta_count(self, field, meta_type, count) result(code)
    class(dataset_type), intent(in) :: self
    character(len=*), intent(in) :: field
    integer, intent(in) :: meta_type
    integer(c_size_t), intent(out) :: count
    integer(c_int64_t), target :: unused(1)
    count = 0
    code = c_dataset_get_meta_scalars(self%handle, field, c_text_length(field), &
                                      int(meta_type, c_int), c_loc(unused), 0_c_size_t, count)
    if (code == SLIPSTREAM_BUFFER_TOO_SMALL) code = SLIPSTREAM_OK
  end function meta_count

  !> All values of a string field, each padded to the longest.
  integer function dataset_get_meta_strings(self, field, values) result(code)
    class(dataset_type), intent(in) :: self
    character(len=*), intent(in) :: field
    character(len=:), allocatable, intent(out) :: values(:)
    integer(c_size_t) :: count, i, length
    type(c_ptr) :: pointer
    type :: text_holder
      character(len=:), allocatable :: text
    end type text_holder
    type(text_holder), allocatable :: all(:)
    integer :: longest
    code = c_dataset_get_meta_string_count(self%handle, field, c_text_length(field), count)
    if (code /= SLIPSTREAM_OK) return
    allocate(all(count))
    longest = 0
    do i = 1, count
      code = c_dataset_get_meta_string(self%handle, field, c_text_length(field), i - 1, &
                                       pointer, length)
      if (code /= SLIPSTREAM_OK) return
      all(i)%text = take_c_string(pointer, length)
      longest = max(longest, len(all(i)%text))
    end do
    allocate(character(len=longest) :: values(count))
    do i = 1, count
      values(i) = all(i)%text
    end do
  end function dataset_get_meta_strings

  !> The type of a field (SLIPSTREAM_META_DOUBLE, ..., SLIPSTREAM_META_STRING).
  integer function dataset_get_field_type(self, field, meta_type) result(code)
    class(dataset_type), intent(in) :: self
    character(len=*), intent(in) :: field
    integer, intent(out) :: meta_type
    integer(c_int) :: value
    value = 0
    code = c_dataset_field_type(self%handle, field, c_text_length(field), value)
    meta_type = value
  end function dataset_get_field_type

  integer function dataset_has_field(self, field, has) result(code)
    class(dataset_type), intent(in) :: self
    character(len=*), intent(in) :: field
    logical, intent(out) :: has
    integer(c_int) :: flag
    flag = 0
    code = c_dataset_has_field(self%handle, field, c_text_length(field), flag)
    has = flag /= 0
  end function dataset_has_field

  integer function dataset_clear_field(self, field) result(code)
    class(dataset_type), intent(in) :: self
    character(len=*), intent(in) :: field
    code = c_dataset_clear_field(self%handle, field, c_text_length(field))
  end function dataset_clear_field

  include "dataset_tensor_procedures.inc"

end module slipstream_datasets
