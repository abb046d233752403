! Conversions across the C boundary for the Fortran module: Fortran strings to C buffers and
! string lists, library-allocated C strings back to Fortran strings, logical flags, and the shape
! and dtype of a library-owned tensor. Internal to the `slipstream` module.
module slipstream_interop
  use, intrinsic :: iso_c_binding
  use slipstream_c_api
  implicit none
  private
  public :: c_string_list, make_string_list, copy_to_c_chars, take_c_string, to_c_flag, &
            c_text_length, tensor_handle_info, last_error_text

  !> An array of C strings pointing into one buffer. Declare it with the TARGET attribute (the
  !> pointers point into its own buffer) and keep it alive while C uses the pointers.
  type :: c_string_list
    character(kind=c_char), allocatable :: buffer(:)
    type(c_ptr), allocatable :: pointers(:)
    integer(c_size_t), allocatable :: lengths(:)
    integer(c_size_t) :: count = 0
  end type c_string_list

contains

  !> Length of a name as sent to C: trailing blanks of fixed-length Fortran strings removed.
  pure integer(c_size_t) function c_text_length(text)
    character(len=*), intent(in) :: text
    c_text_length = int(len_trim(text), c_size_t)
  end function c_text_length

  !> Fills `list` with the trimmed strings (trailing blanks removed).
  subroutine make_string_list(strings, list)
    character(len=*), intent(in) :: strings(:)
    type(c_string_list), target, intent(out) :: list
    integer :: i, j, offset, total
    total = 0
    do i = 1, size(strings)
      total = total + len_trim(strings(i))
    end do
    allocate(list%buffer(total + 1), list%pointers(max(size(strings), 1)), &
             list%lengths(max(size(strings), 1)))
    list%count = int(size(strings), c_size_t)
    list%pointers = c_null_ptr
    list%lengths = 0
    offset = 1
    do i = 1, size(strings)
      list%lengths(i) = int(len_trim(strings(i)), c_size_t)
      list%pointers(i) = c_loc(list%buffer(offset))
      do j = 1, len_trim(strings(i))
        list%buffer(offset) = strings(i)(j:j)
        offset = offset + 1
      end do
    end do
    list%buffer(offset) = c_null_char
  end subroutine make_string_list

  !> Copies `text` (trimmed when `trim_blanks`) into `buffer`; sets `pointer` and `length` for a
  !> C pointer + length argument. `buffer` must have the TARGET attribute at the call site.
  subroutine copy_to_c_chars(text, trim_blanks, buffer, pointer, length)
    character(len=*), intent(in) :: text
    logical, intent(in) :: trim_blanks
    character(kind=c_char), allocatable, target, intent(inout) :: buffer(:)
    type(c_ptr), intent(out) :: pointer
    integer(c_size_t), intent(out) :: length
    integer :: i, n
    n = len(text)
    if (trim_blanks) n = len_trim(text)
    if (allocated(buffer)) deallocate(buffer)
    allocate(buffer(n + 1))
    do i = 1, n
      buffer(i) = text(i:i)
    end do
    buffer(n + 1) = c_null_char
    pointer = c_loc(buffer(1))
    length = int(n, c_size_t)
  end subroutine copy_to_c_chars

  !> A Fortran copy of `length` bytes at `pointer`, which the library allocated; frees it.
  function take_c_string(pointer, length) result(text)
    type(c_ptr), intent(in) :: pointer
    integer(c_size_t), intent(in) :: length
    character(len=:), allocatable :: text
    character(kind=c_char), pointer :: chars(:)
    integer :: i
    allocate(character(len=length) :: text)
    if (length > 0) then
      call c_f_pointer(pointer, chars, [length])
      do i = 1, int(length)
        text(i:i) = chars(i)
      end do
    end if
    call c_free(pointer)
  end function take_c_string

  elemental integer(c_int) function to_c_flag(value)
    logical, intent(in) :: value
    to_c_flag = merge(1_c_int, 0_c_int, value)
  end function to_c_flag

  !> The dtype and shape of a tensor handle (owned or borrowed; not destroyed here).
  integer function tensor_handle_info(tensor, dtype, dims) result(code)
    type(c_ptr), intent(in) :: tensor
    integer, intent(out) :: dtype
    integer(c_int64_t), allocatable, intent(out) :: dims(:)
    integer(c_int) :: c_dtype
    type(c_ptr) :: shape_pointer
    integer(c_size_t) :: rank
    integer(c_int64_t), pointer :: shape(:)
    code = c_tensor_dtype(tensor, c_dtype)
    if (code /= SLIPSTREAM_OK) return
    code = c_tensor_shape(tensor, shape_pointer, rank)
    if (code /= SLIPSTREAM_OK) return
    dtype = c_dtype
    allocate(dims(rank))
    if (rank > 0) then
      call c_f_pointer(shape_pointer, shape, [rank])
      dims = shape
    end if
  end function tensor_handle_info

  !> This thread's last error message from the C API ("" after a successful call).
  function last_error_text() result(text)
    character(len=:), allocatable :: text
    character(kind=c_char), pointer :: chars(:)
    type(c_ptr) :: pointer
    integer :: n, i
    interface
      integer(c_size_t) function c_strlen(s) bind(C, name="strlen")
        import :: c_ptr, c_size_t
        type(c_ptr), value :: s
      end function c_strlen
    end interface
    pointer = c_last_error()
    n = int(c_strlen(pointer))
    allocate(character(len=n) :: text)
    if (n > 0) then
      call c_f_pointer(pointer, chars, [n])
      do i = 1, n
        text(i:i) = chars(i)
      end do
    end if
  end function last_error_text

end module slipstream_interop
