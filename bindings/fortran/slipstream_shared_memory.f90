! The shared-memory calls in Fortran: tensor_loan_type (memory to fill and store as a tensor
! without a copy, from client_type%loan, stored with client_type%put_tensor_loan),
! tensor_view_type (a read-only view of a stored tensor, from client_type%view_tensor) and
! client_stats_type (client_type%stats), over the C API's "Shared memory" section. Re-exported by
! the module `slipstream`; see docs/clients.md, "Shared memory".
!
! Memory order: loans and views never move an element, so, as for streams, this module reverses
! dimensions instead of transposing. A loan filled as a Fortran array a(n1, ..., nk) is, byte for
! byte, the row-major tensor of shape (nk, ..., n1), and that is what put_tensor_loan stores: C,
! C++ and Python see the dimensions reversed, a(i, j) being element [j-1][i-1]. A view of a stored
! tensor of shape (d1, ..., dk) is the Fortran array of shape (dk, ..., d1). So a loan stored and
! viewed from Fortran keeps its shape, and what a C program views as [j][i] is a(i+1, j+1). (This
! differs from put_tensor and unpack_tensor, which transpose so that the shape is the same in every
! language: the copy that loans and views exist to avoid.)
!
! Every procedure returns a status code (SLIPSTREAM_OK, or a code with slipstream_last_error()
! giving the message). Handles: assignment copies the handle, not the loan or view; destroy one.
module slipstream_shared_memory
  use, intrinsic :: iso_c_binding
  use slipstream_c_api
  implicit none
  private
  public :: tensor_loan_type, tensor_view_type, client_stats_type
  public :: lend, commit_loan, open_view, read_stats

  !> Memory lent by the server (or private memory where there is no fast path) to fill through
  !> the Fortran pointer client_type%loan returned, then store with client_type%put_tensor_loan,
  !> which consumes it: the pointer is undefined afterwards (nullify it), as after destroy(). A
  !> loan not stored is given back by destroy(). Fill it from one thread at a time.
  type :: tensor_loan_type
    type(c_ptr) :: handle = c_null_ptr       !< the C handle (internal)
    integer :: dtype = -1                    !< the element type of the pointer (internal)
    integer :: rank = 0                      !< internal
    integer(c_int64_t) :: dims(4) = 0        !< the pointer's shape, Fortran order (internal)
  contains
    procedure :: destroy => loan_destroy
  end type tensor_loan_type

  !> A read-only view of a stored tensor's bytes: with the fast path the server's copy itself,
  !> mapped read-only (no copy), otherwise a private copy received on the socket. The bytes stay
  !> as they were when viewed, even if the key is overwritten or deleted, until destroy().
  !> get_data(data) points a Fortran pointer of the view's kind and rank at them; the pointer is
  !> READ-ONLY (never write through it: the pages of shared memory are mapped read-only and a
  !> write kills the process) and undefined once the view is destroyed.
  type :: tensor_view_type
    type(c_ptr) :: handle = c_null_ptr  !< the C handle (internal)
  contains
    procedure :: destroy => view_destroy
    procedure :: get_info => view_get_info
    ! get_data(data) for real32, real64, int8, int16, int32, int64 pointers of rank 1-4.
    include "view_data_bindings.inc"
  end type tensor_view_type

  !> Which path the client's tensor operations took; counts since the client was initialised.
  type :: client_stats_type
    logical :: shared_memory = .false.       !< the connection has the fast path
    integer(c_int64_t) :: shm_puts = 0       !< puts through shared memory
    integer(c_int64_t) :: shm_loan_puts = 0  !< of shm_puts: loans stored without a copy
    integer(c_int64_t) :: shm_gets = 0       !< unpacks through shared memory (one copy)
    integer(c_int64_t) :: shm_views = 0      !< views through shared memory (no copy)
    integer(c_int64_t) :: socket_puts = 0    !< tensors sent on the socket
    integer(c_int64_t) :: socket_gets = 0    !< tensors received on the socket (views included)
    integer(c_int64_t) :: fallbacks = 0      !< wanted shared memory, used the socket (pool full)
  end type client_stats_type

  !> slipstream_client_stats_t
  type, bind(C) :: c_client_stats_t
    integer(c_int) :: shared_memory = 0
    integer(c_int64_t) :: shm_puts = 0
    integer(c_int64_t) :: shm_loan_puts = 0
    integer(c_int64_t) :: shm_gets = 0
    integer(c_int64_t) :: shm_views = 0
    integer(c_int64_t) :: socket_puts = 0
    integer(c_int64_t) :: socket_gets = 0
    integer(c_int64_t) :: fallbacks = 0
  end type c_client_stats_t

  interface
    integer(c_size_t) function c_dtype_size(dtype) bind(C, name="slipstream_dtype_size")
      import :: c_size_t, c_int32_t
      integer(c_int32_t), value :: dtype
    end function c_dtype_size
    integer(c_int) function c_loan(client, bytes, loan) bind(C, name="slipstream_loan")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: client
      integer(c_size_t), value :: bytes
      type(c_ptr), intent(inout) :: loan
    end function c_loan
    integer(c_int) function c_loan_destroy(loan) bind(C, name="slipstream_loan_destroy")
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: loan
    end function c_loan_destroy
    integer(c_int) function c_loan_data(loan, data, bytes) bind(C, name="slipstream_loan_data")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: loan
      type(c_ptr), intent(out) :: data
      integer(c_size_t), intent(out) :: bytes
    end function c_loan_data
    integer(c_int) function c_put_tensor_loan(client, name, name_length, loan, shape, rank, &
                                              dtype) bind(C, name="slipstream_put_tensor_loan")
      import :: c_int, c_ptr, c_char, c_size_t, c_int64_t, c_int32_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
      type(c_ptr), intent(inout) :: loan
      integer(c_int64_t), intent(in) :: shape(*)
      integer(c_size_t), value :: rank
      integer(c_int32_t), value :: dtype
    end function c_put_tensor_loan
    integer(c_int) function c_view_tensor(client, name, name_length, view) &
        bind(C, name="slipstream_view_tensor")
      import :: c_int, c_ptr, c_char, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
      type(c_ptr), intent(inout) :: view
    end function c_view_tensor
    integer(c_int) function c_view_destroy(view) bind(C, name="slipstream_view_destroy")
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: view
    end function c_view_destroy
    integer(c_int) function c_view_dtype(view, dtype) bind(C, name="slipstream_view_dtype")
      import :: c_int, c_ptr, c_int32_t
      type(c_ptr), value :: view
      integer(c_int32_t), intent(out) :: dtype
    end function c_view_dtype
    integer(c_int) function c_view_shape(view, shape, rank) bind(C, name="slipstream_view_shape")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: view
      type(c_ptr), intent(out) :: shape
      integer(c_size_t), intent(out) :: rank
    end function c_view_shape
    integer(c_int) function c_view_data(view, dtype, expected_rank, data, bytes) &
        bind(C, name="slipstream_view_data")
      import :: c_int, c_ptr, c_size_t, c_int32_t
      type(c_ptr), value :: view
      integer(c_int32_t), value :: dtype
      integer(c_size_t), value :: expected_rank
      type(c_ptr), intent(out) :: data
      integer(c_size_t), intent(out) :: bytes
    end function c_view_data
    integer(c_int) function c_client_stats(client, stats) bind(C, name="slipstream_client_stats")
      import :: c_int, c_ptr, c_client_stats_t
      type(c_ptr), value :: client
      type(c_client_stats_t), intent(out) :: stats
    end function c_client_stats
  end interface

contains

  ! ---- Loans -------------------------------------------------------------------------------------

  !> The client's part of client_type%loan: a loan of product(dims) elements of `dtype` (any
  !> dimension below 1 makes it zero bytes, which the library refuses with
  !> SLIPSTREAM_INVALID_ARGUMENT) and its address. A loan `loan` still held is given back first.
  integer function lend(client, loan, dtype, dims, address) result(code)
    type(c_ptr), intent(in) :: client
    type(tensor_loan_type), intent(inout) :: loan
    integer, intent(in) :: dtype
    integer(c_int64_t), intent(in) :: dims(:)
    type(c_ptr), intent(out) :: address
    integer(c_size_t) :: bytes, elements, size_of
    integer :: i
    address = c_null_ptr
    code = loan%destroy()
    if (code /= SLIPSTREAM_OK) return
    size_of = c_dtype_size(int(dtype, c_int32_t))
    elements = 1
    if (size_of == 0) elements = 0  ! not a dtype: zero bytes, refused
    do i = 1, size(dims)
      if (dims(i) < 1) elements = 0
      if (elements == 0) exit
      if (dims(i) > huge(elements) / size_of / elements) then
        elements = huge(elements) / size_of  ! too large for any memory: the library says so
        exit
      end if
      elements = elements * int(dims(i), c_size_t)
    end do
    bytes = elements * size_of
    code = c_loan(client, bytes, loan%handle)
    if (code /= SLIPSTREAM_OK) return
    code = c_loan_data(loan%handle, address, bytes)
    if (code /= SLIPSTREAM_OK) then
      address = c_null_ptr
      return
    end if
    loan%dtype = dtype
    loan%rank = size(dims)
    loan%dims = 0
    loan%dims(1:size(dims)) = dims
  end function lend

  !> The client's part of client_type%put_tensor_loan: stores the loan as `name`, the row-major
  !> tensor of the reversed Fortran shape, and consumes it whatever the result (its handle null).
  integer function commit_loan(client, name, loan) result(code)
    type(c_ptr), intent(in) :: client
    character(len=*), intent(in) :: name
    type(tensor_loan_type), intent(inout) :: loan
    integer(c_int64_t) :: c_dims(4)
    c_dims = 0
    if (loan%rank > 0) c_dims(1:loan%rank) = loan%dims(loan%rank:1:-1)
    code = c_put_tensor_loan(client, name, int(len_trim(name), c_size_t), loan%handle, c_dims, &
                             int(loan%rank, c_size_t), int(loan%dtype, c_int32_t))
    loan%rank = 0
    loan%dtype = -1
  end function commit_loan

  !> Gives a loan not stored back; the handle becomes null (destroying it again is a no-op).
  integer function loan_destroy(self) result(code)
    class(tensor_loan_type), intent(inout) :: self
    code = c_loan_destroy(self%handle)
    self%rank = 0
    self%dtype = -1
  end function loan_destroy

  ! ---- Views -------------------------------------------------------------------------------------

  !> The client's part of client_type%view_tensor. A view `view` still held is destroyed first.
  integer function open_view(client, name, view) result(code)
    type(c_ptr), intent(in) :: client
    character(len=*), intent(in) :: name
    type(tensor_view_type), intent(inout) :: view
    code = view%destroy()
    if (code /= SLIPSTREAM_OK) return
    code = c_view_tensor(client, name, int(len_trim(name), c_size_t), view%handle)
  end function open_view

  !> Gives the view's bytes back; the handle becomes null (destroying it again is a no-op).
  integer function view_destroy(self) result(code)
    class(tensor_view_type), intent(inout) :: self
    code = c_view_destroy(self%handle)
  end function view_destroy

  !> The view's element type (a SLIPSTREAM_* dtype) and its shape in Fortran order (the stored
  !> shape reversed: the shape get_data gives the pointer).
  integer function view_get_info(self, dtype, dims) result(code)
    class(tensor_view_type), intent(in) :: self
    integer, intent(out) :: dtype
    integer(c_int64_t), allocatable, intent(out) :: dims(:)
    integer(c_int32_t) :: c_dtype
    code = c_view_dtype(self%handle, c_dtype)
    if (code /= SLIPSTREAM_OK) return
    code = view_dims(self, dims)
    if (code == SLIPSTREAM_OK) dtype = int(c_dtype)
  end function view_get_info

  !> The view's shape in Fortran order.
  integer function view_dims(self, dims) result(code)
    class(tensor_view_type), intent(in) :: self
    integer(c_int64_t), allocatable, intent(out) :: dims(:)
    type(c_ptr) :: shape_pointer
    integer(c_size_t) :: rank
    integer(c_int64_t), pointer :: shape(:)
    code = c_view_shape(self%handle, shape_pointer, rank)
    if (code /= SLIPSTREAM_OK) return
    allocate(dims(rank))
    if (rank == 0) return
    call c_f_pointer(shape_pointer, shape, [rank])
    dims = shape(rank:1:-1)
  end function view_dims

  !> The address of the view's bytes, after checking that they are `rank` dimensions of `dtype`
  !> (SLIPSTREAM_INVALID_ARGUMENT naming both otherwise), and the Fortran shape to give them.
  integer function view_address(self, dtype, rank, address, dims) result(code)
    class(tensor_view_type), intent(in) :: self
    integer, intent(in) :: dtype, rank
    type(c_ptr), intent(out) :: address
    integer(c_int64_t), allocatable, intent(out) :: dims(:)
    integer(c_size_t) :: bytes
    address = c_null_ptr
    code = c_view_data(self%handle, int(dtype, c_int32_t), int(rank, c_size_t), address, bytes)
    if (code /= SLIPSTREAM_OK) return
    code = view_dims(self, dims)
  end function view_address

  include "view_data_procedures.inc"

  ! ---- Statistics --------------------------------------------------------------------------------

  !> The client's part of client_type%stats.
  integer function read_stats(client, stats) result(code)
    type(c_ptr), intent(in) :: client
    type(client_stats_type), intent(out) :: stats
    type(c_client_stats_t) :: c_stats
    code = c_client_stats(client, c_stats)
    if (code /= SLIPSTREAM_OK) return
    stats%shared_memory = c_stats%shared_memory /= 0
    stats%shm_puts = c_stats%shm_puts
    stats%shm_loan_puts = c_stats%shm_loan_puts
    stats%shm_gets = c_stats%shm_gets
    stats%shm_views = c_stats%shm_views
    stats%socket_puts = c_stats%socket_puts
    stats%socket_gets = c_stats%socket_gets
    stats%fallbacks = c_stats%fallbacks
  end function read_stats

end module slipstream_shared_memory
