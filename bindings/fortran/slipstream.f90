! The Fortran module `slipstream`: client_type (tensors, datasets, lists, models, scripts, waits,
! key prefixes, server info), dataset_type and the stream types (slipstream_streams.f90) over the C
! API, with slipstream_last_error().
!
! Conventions:
! - Every procedure is an integer function returning a status code: SLIPSTREAM_OK (0) on success,
!   otherwise one of the SLIPSTREAM_* codes below (the C API's, which are slipstream::ErrorCode's);
!   slipstream_last_error() then returns the message. Results come back in intent(out) arguments.
! - Memory layout: put_tensor sends an array a(nx, ny) with its Fortran shape (nx, ny) in Fortran
!   order; C, C++ and Python see shape (nx, ny) with [i][j] == a(i+1, j+1). unpack_tensor fills an
!   array of the stored dtype and exactly the stored shape (tensor_info gives both).
! - Names, keys and paths have trailing blanks removed (so fixed-length variables work); values
!   (put_bytes, script sources, model bytes) are sent as given, metadata strings trimmed.
! - client_type and dataset_type are handles: assignment copies the handle, not the object;
!   destroy exactly one copy. Thread-safety is the C++ client's (one client may be shared).
module slipstream
  use, intrinsic :: iso_c_binding
  use slipstream_c_api
  use slipstream_interop
  use slipstream_datasets, only: dataset_type
  use slipstream_streams
  use slipstream_tensor_refs, only: tensor_ref_type, tensor_ref, run_model_on_refs
  use slipstream_shared_memory
  implicit none
  private

  public :: client_type, dataset_type, model_info_type, slipstream_last_error
  ! Named arrays for run_model_on (slipstream_tensor_refs.f90).
  public :: tensor_ref_type, tensor_ref
  ! Shared memory (slipstream_shared_memory.f90).
  public :: tensor_loan_type, tensor_view_type, client_stats_type
  ! Streams (slipstream_streams.f90).
  public :: stream_writer_type, stream_reader_type, stream_step_type
  public :: SLIPSTREAM_STREAM_STEP, SLIPSTREAM_STREAM_SKIPPED, SLIPSTREAM_STREAM_END, &
            SLIPSTREAM_STREAM_TIMEOUT
  public :: SLIPSTREAM_STREAM_DISTRIBUTE_ALL, SLIPSTREAM_STREAM_DISTRIBUTE_ROUND_ROBIN, &
            SLIPSTREAM_STREAM_DISTRIBUTE_ON_DEMAND
  public :: SLIPSTREAM_ATTRIBUTE_STRING, SLIPSTREAM_ATTRIBUTE_INT64, SLIPSTREAM_ATTRIBUTE_DOUBLE, &
            SLIPSTREAM_ATTRIBUTE_STRINGS, SLIPSTREAM_ATTRIBUTE_INT64S, SLIPSTREAM_ATTRIBUTE_DOUBLES
  public :: SLIPSTREAM_OK, SLIPSTREAM_CONNECTION_ERROR, SLIPSTREAM_TIMEOUT_ERROR, &
            SLIPSTREAM_PROTOCOL_ERROR, SLIPSTREAM_SERVER_ERROR, SLIPSTREAM_KEY_NOT_FOUND, &
            SLIPSTREAM_WRONG_TYPE, SLIPSTREAM_INVALID_ARGUMENT, SLIPSTREAM_BUFFER_TOO_SMALL, &
            SLIPSTREAM_OUT_OF_MEMORY, SLIPSTREAM_AUTH_ERROR, SLIPSTREAM_BACKEND_ERROR, &
            SLIPSTREAM_STEP_ABORTED, SLIPSTREAM_CLIENT_OUT_OF_MEMORY, SLIPSTREAM_INTERNAL_ERROR
  public :: SLIPSTREAM_FLOAT32, SLIPSTREAM_FLOAT64, SLIPSTREAM_INT8, SLIPSTREAM_INT16, &
            SLIPSTREAM_INT32, SLIPSTREAM_INT64, SLIPSTREAM_UINT8, SLIPSTREAM_UINT16, SLIPSTREAM_BOOL
  public :: SLIPSTREAM_META_DOUBLE, SLIPSTREAM_META_FLOAT, SLIPSTREAM_META_INT32, &
            SLIPSTREAM_META_INT64, SLIPSTREAM_META_UINT32, SLIPSTREAM_META_UINT64, &
            SLIPSTREAM_META_STRING

  !> Run statistics of a model or script (see slipstream::ModelInfo).
  type :: model_info_type
    character(len=:), allocatable :: key, type_name, backend, device, tag
    integer(c_int64_t) :: calls = 0, samples = 0, errors = 0, duration_us = 0, version = 0
    integer(c_int64_t) :: runs = 0, batches = 0, queue_wait_us = 0, run_time_us = 0
    real(c_double) :: mean_batch_size = 0
  end type model_info_type

  !> A connection to a server. initialize() connects, destroy() disconnects.
  type :: client_type
    type(c_ptr) :: handle = c_null_ptr  !< the C handle (internal)
  contains
    procedure :: initialize => client_initialize
    procedure :: destroy => client_destroy
    procedure :: get_address => client_get_address
    ! Tensors: put_tensor / unpack_tensor for real32, real64, int8, int16, int32, int64, rank 1-4.
    include "client_tensor_bindings.inc"
    procedure :: tensor_info => client_tensor_info
    procedure :: delete_tensor => client_delete_tensor
    procedure :: tensor_exists => client_tensor_exists
    procedure :: rename_tensor => client_rename_tensor
    procedure :: copy_tensor => client_copy_tensor
    procedure :: poll_tensor => client_poll_tensor
    ! Shared memory: loan(loan, data, dims) for real32 ... int64 pointers of rank 1-4 (with the
    ! tensor bindings above), put_tensor_loan, view_tensor, stats.
    procedure :: put_tensor_loan => client_put_tensor_loan
    procedure :: view_tensor => client_view_tensor
    procedure :: stats => client_stats
    ! Raw keys (no prefixes) and waits.
    procedure :: key_exists => client_key_exists
    procedure :: poll_key => client_poll_key
    procedure :: wait_for_keys => client_wait_for_keys
    procedure :: put_bytes => client_put_bytes
    procedure :: get_bytes => client_get_bytes
    procedure :: delete_bytes => client_delete_bytes
    ! Datasets.
    procedure :: put_dataset => client_put_dataset
    procedure :: get_dataset => client_get_dataset
    procedure :: delete_dataset => client_delete_dataset
    procedure :: dataset_exists => client_dataset_exists
    procedure :: poll_dataset => client_poll_dataset
    procedure :: copy_dataset => client_copy_dataset
    procedure :: rename_dataset => client_rename_dataset
    ! Aggregation lists.
    procedure :: append_to_list => client_append_to_list
    procedure :: delete_list => client_delete_list
    procedure :: copy_list => client_copy_list
    procedure :: rename_list => client_rename_list
    procedure :: get_list_length => client_get_list_length
    procedure :: poll_list_length => client_poll_list_length
    procedure :: poll_list_length_gte => client_poll_list_length_gte
    procedure :: poll_list_length_lte => client_poll_list_length_lte
    procedure :: get_datasets_from_list => client_get_datasets_from_list
    procedure :: get_dataset_list_range => client_get_dataset_list_range
    ! Models and scripts.
    procedure :: set_model => client_set_model
    procedure :: set_model_from_file => client_set_model_from_file
    procedure :: get_model => client_get_model
    procedure :: delete_model => client_delete_model
    procedure :: model_exists => client_model_exists
    procedure :: run_model => client_run_model
    procedure :: run_model_on => client_run_model_on
    procedure :: get_model_chunk_size => client_get_model_chunk_size
    procedure :: set_model_chunk_size => client_set_model_chunk_size
    procedure :: set_script => client_set_script
    procedure :: set_script_from_file => client_set_script_from_file
    procedure :: get_script => client_get_script
    procedure :: run_script => client_run_script
    procedure :: run_script_with_keys => client_run_script_with_keys
    procedure :: delete_script => client_delete_script
    procedure :: get_model_info => client_get_model_info
    procedure :: reset_model_stats => client_reset_model_stats
    ! Ensemble prefixes.
    procedure :: set_data_source => client_set_data_source
    procedure :: use_tensor_ensemble_prefix => client_use_tensor_ensemble_prefix
    procedure :: use_dataset_ensemble_prefix => client_use_dataset_ensemble_prefix
    procedure :: use_list_ensemble_prefix => client_use_list_ensemble_prefix
    procedure :: use_model_ensemble_prefix => client_use_model_ensemble_prefix
    procedure :: model_ensemble_prefix_enabled => client_model_ensemble_prefix_enabled
    ! Server info.
    procedure :: info => client_info
  end type client_type

contains

  !> The message of this thread's last failed call ("" if the last call succeeded).
  function slipstream_last_error() result(message)
    character(len=:), allocatable :: message
    message = last_error_text()
  end function slipstream_last_error

  ! ---- Connection --------------------------------------------------------------------------------

  !> Connects to `address` (tcp://host:port, unix:///path or host:port; absent or blank:
  !> SLIPSTREAM_ADDRESS, then SSDB) and sends AUTH with `password` (absent: SLIPSTREAM_PASSWORD if
  !> set). Timeouts in ms (absent: 5000 to connect, 60000 per command; 0 for the command timeout
  !> waits forever). key_prefix_out / key_prefixes_in override SSKEYOUT / SSKEYIN.
  !> Errors: SLIPSTREAM_INVALID_ARGUMENT, SLIPSTREAM_CONNECTION_ERROR, SLIPSTREAM_TIMEOUT_ERROR,
  !> SLIPSTREAM_AUTH_ERROR.
  integer function client_initialize(self, address, password, connect_timeout_ms, &
                                     command_timeout_ms, key_prefix_out, key_prefixes_in) &
      result(code)
    class(client_type), intent(inout) :: self
    character(len=*), optional, intent(in) :: address, password, key_prefix_out, key_prefixes_in
    integer, optional, intent(in) :: connect_timeout_ms, command_timeout_ms
    type(c_client_options_t) :: options
    character(kind=c_char), allocatable, target :: address_c(:), password_c(:), out_c(:), in_c(:)
    if (present(address)) then
      call copy_to_c_chars(address, .true., address_c, options%address, options%address_length)
    end if
    if (present(password)) then
      call copy_to_c_chars(password, .false., password_c, options%password, &
                           options%password_length)
    end if
    if (present(key_prefix_out)) then
      call copy_to_c_chars(key_prefix_out, .true., out_c, options%key_prefix_out, &
                           options%key_prefix_out_length)
    end if
    if (present(key_prefixes_in)) then
      call copy_to_c_chars(key_prefixes_in, .true., in_c, options%key_prefixes_in, &
                           options%key_prefixes_in_length)
    end if
    if (present(connect_timeout_ms)) options%connect_timeout_ms = connect_timeout_ms
    if (present(command_timeout_ms)) options%command_timeout_ms = command_timeout_ms
    code = c_client_create_with_options(options, self%handle)
  end function client_initialize

  !> Disconnects and frees the client; the handle becomes null (destroying it again is a no-op).
  integer function client_destroy(self) result(code)
    class(client_type), intent(inout) :: self
    code = c_client_destroy(self%handle)
  end function client_destroy

  !> The address connected to, normalised (tcp://... or unix://...).
  integer function client_get_address(self, address) result(code)
    class(client_type), intent(in) :: self
    character(len=:), allocatable, intent(out) :: address
    type(c_ptr) :: pointer
    integer(c_size_t) :: length
    character(kind=c_char), pointer :: chars(:)
    integer :: i
    code = c_client_address(self%handle, pointer, length)
    if (code /= SLIPSTREAM_OK) return
    allocate(character(len=length) :: address)
    if (length == 0) return
    call c_f_pointer(pointer, chars, [length])  ! borrowed: copied, not freed
    do i = 1, int(length)
      address(i:i) = chars(i)
    end do
  end function client_get_address

  ! ---- Tensors -----------------------------------------------------------------------------------

  !> Stores `data` (Fortran order, the Fortran shape) as tensor `name`; with `compression` ("zstd",
  !> "blosc", "bzip2", "zfp") and its `parameters` ("name=value,..."), compressed before it is sent
  !> (slipstream_put_tensor_compressed): stored compressed, read back as its elements.
  integer function put_array(self, name, data, dims, dtype, compression, parameters) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: name
    type(c_ptr), intent(in) :: data
    integer(c_int64_t), intent(in) :: dims(:)
    integer, intent(in) :: dtype
    character(len=*), intent(in), optional :: compression, parameters
    if (.not. present(compression)) then
      code = c_put_tensor(self%handle, name, c_text_length(name), data, dims, &
                          size(dims, kind=c_size_t), int(dtype, c_int), SLIPSTREAM_FORTRAN_ORDER)
    else if (present(parameters)) then
      code = c_put_tensor_compressed(self%handle, name, c_text_length(name), data, dims, &
                                     size(dims, kind=c_size_t), int(dtype, c_int), &
                                     SLIPSTREAM_FORTRAN_ORDER, compression, &
                                     c_text_length(compression), parameters, &
                                     c_text_length(parameters))
    else
      code = c_put_tensor_compressed(self%handle, name, c_text_length(name), data, dims, &
                                     size(dims, kind=c_size_t), int(dtype, c_int), &
                                     SLIPSTREAM_FORTRAN_ORDER, compression, &
                                     c_text_length(compression), "", 0_c_size_t)
    end if
  end function put_array

  !> Fetches tensor `name` into `data`, which must have the stored dtype and shape:
  !> SLIPSTREAM_KEY_NOT_FOUND, or SLIPSTREAM_INVALID_ARGUMENT naming both dtypes or shapes.
  integer function unpack_array(self, name, data, bytes, dims, dtype) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: name
    type(c_ptr), intent(in) :: data
    integer(c_size_t), intent(in) :: bytes
    integer(c_int64_t), intent(in) :: dims(:)
    integer, intent(in) :: dtype
    code = c_unpack_tensor(self%handle, name, c_text_length(name), data, bytes, dims, &
                           size(dims, kind=c_size_t), int(dtype, c_int), SLIPSTREAM_FORTRAN_ORDER)
  end function unpack_array

  !> The dtype (SLIPSTREAM_FLOAT32, ...) and shape of a stored tensor, e.g. to allocate the
  !> array for unpack_tensor. Fetches the tensor. SLIPSTREAM_KEY_NOT_FOUND if it does not exist.
  integer function client_tensor_info(self, name, dtype, dims) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: name
    integer, intent(out) :: dtype
    integer(c_int64_t), allocatable, intent(out) :: dims(:)
    type(c_ptr) :: tensor
    integer :: destroy_code
    code = c_get_tensor(self%handle, name, c_text_length(name), tensor)
    if (code /= SLIPSTREAM_OK) return
    code = tensor_handle_info(tensor, dtype, dims)
    destroy_code = c_tensor_destroy(tensor)
  end function client_tensor_info

  integer function client_delete_tensor(self, name, existed) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: name
    logical, optional, intent(out) :: existed
    integer(c_int) :: flag
    flag = 0
    code = c_delete_tensor(self%handle, name, c_text_length(name), flag)
    if (present(existed)) existed = flag /= 0
  end function client_delete_tensor

  integer function client_tensor_exists(self, name, exists) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: name
    logical, intent(out) :: exists
    integer(c_int) :: flag
    flag = 0
    code = c_tensor_exists(self%handle, name, c_text_length(name), flag)
    exists = flag /= 0
  end function client_tensor_exists

  integer function client_rename_tensor(self, old_name, new_name) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: old_name, new_name
    code = c_rename_tensor(self%handle, old_name, c_text_length(old_name), new_name, &
                           c_text_length(new_name))
  end function client_rename_tensor

  integer function client_copy_tensor(self, source, destination) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: source, destination
    code = c_copy_tensor(self%handle, source, c_text_length(source), destination, &
                         c_text_length(destination))
  end function client_copy_tensor

  !> Waits up to poll_ms * tries ms for the tensor to exist.
  integer function client_poll_tensor(self, name, poll_ms, tries, exists) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: name
    integer, intent(in) :: poll_ms, tries
    logical, intent(out) :: exists
    integer(c_int) :: flag
    flag = 0
    code = c_poll_tensor(self%handle, name, c_text_length(name), int(poll_ms, c_int), &
                         int(tries, c_int), flag)
    exists = flag /= 0
  end function client_poll_tensor

  ! ---- Shared memory (slipstream_shared_memory.f90: memory order, lifetimes) ---------------------
  ! loan(loan, data, dims): a loan of the kind and rank of the pointer `data` (real32, real64,
  ! int8, int16, int32 or int64, rank 1-4) with Fortran shape `dims` (integer(c_int64_t)), which
  ! `data` points at: fill it, then store it with put_tensor_loan. Server memory over the Unix
  ! socket with the fast path (stored without a copy), private memory otherwise. A loan still
  ! held in `loan` is given back first. Errors: SLIPSTREAM_INVALID_ARGUMENT (a dimension below
  ! 1), SLIPSTREAM_OUT_OF_MEMORY (the server is over its memory limit).

  !> Stores the filled loan as tensor `name`, the row-major tensor of the loan's shape reversed
  !> (see slipstream_shared_memory.f90), and consumes the loan whatever the result: its pointer is
  !> undefined afterwards. Errors: those of put_tensor; SLIPSTREAM_INVALID_ARGUMENT for a loan
  !> that is not held (never made, destroyed or already stored).
  integer function client_put_tensor_loan(self, name, loan) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: name
    type(tensor_loan_type), intent(inout) :: loan
    code = commit_loan(self%handle, name, loan)
  end function client_put_tensor_loan

  !> A read-only view of tensor `name` (a view still held in `view` is destroyed first); its
  !> get_data(pointer) gives the bytes with the stored shape reversed. Errors:
  !> SLIPSTREAM_KEY_NOT_FOUND, SLIPSTREAM_WRONG_TYPE.
  integer function client_view_tensor(self, name, view) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: name
    type(tensor_view_type), intent(inout) :: view
    code = open_view(self%handle, name, view)
  end function client_view_tensor

  !> Which path this client's tensor operations took (shared memory or the socket).
  integer function client_stats(self, stats) result(code)
    class(client_type), intent(in) :: self
    type(client_stats_type), intent(out) :: stats
    code = read_stats(self%handle, stats)
  end function client_stats

  ! ---- Raw keys ----------------------------------------------------------------------------------

  integer function client_key_exists(self, key, exists) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: key
    logical, intent(out) :: exists
    integer(c_int) :: flag
    flag = 0
    code = c_key_exists(self%handle, key, c_text_length(key), flag)
    exists = flag /= 0
  end function client_key_exists

  integer function client_poll_key(self, key, poll_ms, tries, exists) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: key
    integer, intent(in) :: poll_ms, tries
    logical, intent(out) :: exists
    integer(c_int) :: flag
    flag = 0
    code = c_poll_key(self%handle, key, c_text_length(key), int(poll_ms, c_int), &
                      int(tries, c_int), flag)
    exists = flag /= 0
  end function client_poll_key

  !> Waits until every key exists; timeout_ms 0 checks once, < 0 waits forever.
  integer function client_wait_for_keys(self, keys, timeout_ms, all_exist) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: keys(:)
    integer, intent(in) :: timeout_ms
    logical, intent(out) :: all_exist
    type(c_string_list), target :: list
    integer(c_int) :: flag
    flag = 0
    call make_string_list(keys, list)
    code = c_wait_for_keys(self%handle, list%pointers, list%lengths, list%count, &
                           int(timeout_ms, c_int64_t), flag)
    all_exist = flag /= 0
  end function client_wait_for_keys

  !> Stores `bytes` exactly as given (no trimming) under a raw key.
  integer function client_put_bytes(self, key, bytes) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: key, bytes
    code = c_put_bytes(self%handle, key, c_text_length(key), bytes, len(bytes, kind=c_size_t))
  end function client_put_bytes

  integer function client_get_bytes(self, key, bytes) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: key
    character(len=:), allocatable, intent(out) :: bytes
    type(c_ptr) :: pointer
    integer(c_size_t) :: length
    code = c_get_bytes(self%handle, key, c_text_length(key), pointer, length)
    if (code == SLIPSTREAM_OK) bytes = take_c_string(pointer, length)
  end function client_get_bytes

  integer function client_delete_bytes(self, key, existed) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: key
    logical, optional, intent(out) :: existed
    integer(c_int) :: flag
    flag = 0
    code = c_delete_bytes(self%handle, key, c_text_length(key), flag)
    if (present(existed)) existed = flag /= 0
  end function client_delete_bytes

  ! ---- Datasets ----------------------------------------------------------------------------------

  integer function client_put_dataset(self, dataset) result(code)
    class(client_type), intent(in) :: self
    type(dataset_type), intent(in) :: dataset
    code = c_put_dataset(self%handle, dataset%handle)
  end function client_put_dataset

  !> Fetches a dataset into a new dataset_type (destroy it when done).
  integer function client_get_dataset(self, name, dataset) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: name
    type(dataset_type), intent(out) :: dataset
    code = c_get_dataset(self%handle, name, c_text_length(name), dataset%handle)
  end function client_get_dataset

  integer function client_delete_dataset(self, name) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: name
    code = c_delete_dataset(self%handle, name, c_text_length(name))
  end function client_delete_dataset

  integer function client_dataset_exists(self, name, exists) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: name
    logical, intent(out) :: exists
    integer(c_int) :: flag
    flag = 0
    code = c_dataset_exists(self%handle, name, c_text_length(name), flag)
    exists = flag /= 0
  end function client_dataset_exists

  integer function client_poll_dataset(self, name, poll_ms, tries, exists) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: name
    integer, intent(in) :: poll_ms, tries
    logical, intent(out) :: exists
    integer(c_int) :: flag
    flag = 0
    code = c_poll_dataset(self%handle, name, c_text_length(name), int(poll_ms, c_int), &
                          int(tries, c_int), flag)
    exists = flag /= 0
  end function client_poll_dataset

  integer function client_copy_dataset(self, source, destination) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: source, destination
    code = c_copy_dataset(self%handle, source, c_text_length(source), destination, &
                          c_text_length(destination))
  end function client_copy_dataset

  integer function client_rename_dataset(self, old_name, new_name) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: old_name, new_name
    code = c_rename_dataset(self%handle, old_name, c_text_length(old_name), new_name, &
                            c_text_length(new_name))
  end function client_rename_dataset

  ! ---- Aggregation lists -------------------------------------------------------------------------

  integer function client_append_to_list(self, list_name, dataset) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: list_name
    type(dataset_type), intent(in) :: dataset
    code = c_append_to_list(self%handle, list_name, c_text_length(list_name), dataset%handle)
  end function client_append_to_list

  integer function client_delete_list(self, list_name) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: list_name
    code = c_delete_list(self%handle, list_name, c_text_length(list_name))
  end function client_delete_list

  integer function client_copy_list(self, source, destination) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: source, destination
    code = c_copy_list(self%handle, source, c_text_length(source), destination, &
                       c_text_length(destination))
  end function client_copy_list

  integer function client_rename_list(self, old_name, new_name) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: old_name, new_name
    code = c_rename_list(self%handle, old_name, c_text_length(old_name), new_name, &
                         c_text_length(new_name))
  end function client_rename_list

  integer function client_get_list_length(self, list_name, length) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: list_name
    integer, intent(out) :: length
    integer(c_int64_t) :: value
    value = 0
    code = c_get_list_length(self%handle, list_name, c_text_length(list_name), value)
    length = int(value)
  end function client_get_list_length

  !> Waits up to poll_ms * tries ms until the list has exactly `length` entries.
  integer function client_poll_list_length(self, list_name, length, poll_ms, tries, reached) &
      result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: list_name
    integer, intent(in) :: length, poll_ms, tries
    logical, intent(out) :: reached
    integer(c_int) :: flag
    flag = 0
    code = c_poll_list_length(self%handle, list_name, c_text_length(list_name), &
                              int(length, c_int64_t), int(poll_ms, c_int), int(tries, c_int), flag)
    reached = flag /= 0
  end function client_poll_list_length

  integer function client_poll_list_length_gte(self, list_name, length, poll_ms, tries, reached) &
      result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: list_name
    integer, intent(in) :: length, poll_ms, tries
    logical, intent(out) :: reached
    integer(c_int) :: flag
    flag = 0
    code = c_poll_list_length_gte(self%handle, list_name, c_text_length(list_name), &
                                  int(length, c_int64_t), int(poll_ms, c_int), int(tries, c_int), &
                                  flag)
    reached = flag /= 0
  end function client_poll_list_length_gte

  integer function client_poll_list_length_lte(self, list_name, length, poll_ms, tries, reached) &
      result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: list_name
    integer, intent(in) :: length, poll_ms, tries
    logical, intent(out) :: reached
    integer(c_int) :: flag
    flag = 0
    code = c_poll_list_length_lte(self%handle, list_name, c_text_length(list_name), &
                                  int(length, c_int64_t), int(poll_ms, c_int), int(tries, c_int), &
                                  flag)
    reached = flag /= 0
  end function client_poll_list_length_lte

  !> Every dataset the list references, in list order (destroy each when done).
  integer function client_get_datasets_from_list(self, list_name, datasets) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: list_name
    type(dataset_type), allocatable, intent(out) :: datasets(:)
    type(c_ptr) :: array
    integer(c_size_t) :: count
    code = c_get_datasets_from_list(self%handle, list_name, c_text_length(list_name), array, &
                                    count)
    if (code == SLIPSTREAM_OK) call adopt_datasets(array, count, datasets)
  end function client_get_datasets_from_list

  !> The datasets at list positions start..end (0-based, inclusive; negative counts from the end).
  integer function client_get_dataset_list_range(self, list_name, start_index, end_index, &
                                                 datasets) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: list_name
    integer, intent(in) :: start_index, end_index
    type(dataset_type), allocatable, intent(out) :: datasets(:)
    type(c_ptr) :: array
    integer(c_size_t) :: count
    code = c_get_dataset_list_range(self%handle, list_name, c_text_length(list_name), &
                                    int(start_index, c_int64_t), int(end_index, c_int64_t), &
                                    array, count)
    if (code == SLIPSTREAM_OK) call adopt_datasets(array, count, datasets)
  end function client_get_dataset_list_range

  ! Takes ownership of the handles of a C dataset array and frees the array itself.
  subroutine adopt_datasets(array, count, datasets)
    type(c_ptr), intent(in) :: array
    integer(c_size_t), intent(in) :: count
    type(dataset_type), allocatable, intent(out) :: datasets(:)
    type(c_ptr), pointer :: handles(:)
    integer(c_size_t) :: i
    allocate(datasets(count))
    if (count == 0) return
    call c_f_pointer(array, handles, [count])
    do i = 1, count
      datasets(i)%handle = handles(i)
    end do
    call c_free(array)
  end subroutine adopt_datasets

  ! ---- Models and scripts ------------------------------------------------------------------------

  ! Fills C model options from the optional arguments; the buffers hold what the pointers point to.
  subroutine fill_model_options(options, batch_size, min_batch_size, min_batch_timeout_ms, tag, &
                                inputs, outputs, tag_c, inputs_c, outputs_c, keep_versions)
    type(c_model_options_t), intent(out) :: options
    integer, optional, intent(in) :: batch_size, min_batch_size, min_batch_timeout_ms
    integer, optional, intent(in) :: keep_versions
    character(len=*), optional, intent(in) :: tag, inputs(:), outputs(:)
    character(kind=c_char), allocatable, target, intent(inout) :: tag_c(:)
    type(c_string_list), target, intent(inout) :: inputs_c, outputs_c
    if (present(batch_size)) options%batch_size = batch_size
    if (present(min_batch_size)) options%min_batch_size = min_batch_size
    if (present(min_batch_timeout_ms)) options%min_batch_timeout_ms = min_batch_timeout_ms
    if (present(keep_versions)) options%keep_versions = keep_versions
    if (present(tag)) call copy_to_c_chars(tag, .true., tag_c, options%tag, options%tag_length)
    if (present(inputs)) then
      call make_string_list(inputs, inputs_c)
      options%inputs = c_loc(inputs_c%pointers)
      options%input_lengths = c_loc(inputs_c%lengths)
      options%input_count = inputs_c%count
    end if
    if (present(outputs)) then
      call make_string_list(outputs, outputs_c)
      options%outputs = c_loc(outputs_c%pointers)
      options%output_lengths = c_loc(outputs_c%lengths)
      options%output_count = outputs_c%count
    end if
  end subroutine fill_model_options

  !> Stores a model from its bytes (for backend "TORCH", a TorchScript archive). backend absent:
  !> "TORCH"; device absent: "CPU" ("GPU", "GPU:n"). The options are AI.MODELSTORE's;
  !> keep_versions (KEEP) keeps that many earlier versions loaded for pinned runs.
  integer function client_set_model(self, name, model, backend, device, batch_size, &
                                    min_batch_size, min_batch_timeout_ms, tag, inputs, outputs, &
                                    keep_versions) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: name, model
    character(len=*), optional, intent(in) :: backend, device, tag, inputs(:), outputs(:)
    integer, optional, intent(in) :: batch_size, min_batch_size, min_batch_timeout_ms
    integer, optional, intent(in) :: keep_versions
    type(c_model_options_t) :: options
    character(kind=c_char), allocatable, target :: tag_c(:)
    type(c_string_list), target :: inputs_c, outputs_c
    call fill_model_options(options, batch_size, min_batch_size, min_batch_timeout_ms, tag, &
                            inputs, outputs, tag_c, inputs_c, outputs_c, keep_versions)
    code = c_set_model(self%handle, name, c_text_length(name), model, len(model, kind=c_size_t), &
                       optional_text(backend), c_text_length(optional_text(backend)), &
                       optional_text(device), c_text_length(optional_text(device)), options)
  end function client_set_model

  !> set_model with the bytes of the file at `path` (SLIPSTREAM_INVALID_ARGUMENT if unreadable).
  integer function client_set_model_from_file(self, name, path, backend, device, batch_size, &
                                              min_batch_size, min_batch_timeout_ms, tag, inputs, &
                                              outputs) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: name, path
    character(len=*), optional, intent(in) :: backend, device, tag, inputs(:), outputs(:)
    integer, optional, intent(in) :: batch_size, min_batch_size, min_batch_timeout_ms
    type(c_model_options_t) :: options
    character(kind=c_char), allocatable, target :: tag_c(:)
    type(c_string_list), target :: inputs_c, outputs_c
    call fill_model_options(options, batch_size, min_batch_size, min_batch_timeout_ms, tag, &
                            inputs, outputs, tag_c, inputs_c, outputs_c)
    code = c_set_model_from_file(self%handle, name, c_text_length(name), path, &
                                 c_text_length(path), optional_text(backend), &
                                 c_text_length(optional_text(backend)), optional_text(device), &
                                 c_text_length(optional_text(device)), options)
  end function client_set_model_from_file

  ! An absent optional string as "" (the C API then uses its default).
  function optional_text(text) result(value)
    character(len=*), optional, intent(in) :: text
    character(len=:), allocatable :: value
    value = ""
    if (present(text)) value = text
  end function optional_text

  !> The stored model bytes.
  integer function client_get_model(self, name, model) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: name
    character(len=:), allocatable, intent(out) :: model
    type(c_ptr) :: pointer
    integer(c_size_t) :: length
    code = c_get_model(self%handle, name, c_text_length(name), pointer, length)
    if (code == SLIPSTREAM_OK) model = take_c_string(pointer, length)
  end function client_get_model

  integer function client_delete_model(self, name, existed) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: name
    logical, optional, intent(out) :: existed
    integer(c_int) :: flag
    flag = 0
    code = c_delete_model(self%handle, name, c_text_length(name), flag)
    if (present(existed)) existed = flag /= 0
  end function client_delete_model

  integer function client_model_exists(self, name, exists) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: name
    logical, intent(out) :: exists
    integer(c_int) :: flag
    flag = 0
    code = c_model_exists(self%handle, name, c_text_length(name), flag)
    exists = flag /= 0
  end function client_model_exists

  !> Runs a stored model on the tensors named `inputs`, storing its results under `outputs`.
  !> timeout_ms (absent: none) bounds how long the run may wait to start. version (absent or 0:
  !> the newest) pins an earlier version the model keeps (set_model's keep_versions); ran gets
  !> the version that ran.
  integer function client_run_model(self, name, inputs, outputs, timeout_ms, version, ran) &
      result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: name, inputs(:), outputs(:)
    integer, optional, intent(in) :: timeout_ms
    integer(c_int64_t), optional, intent(in) :: version
    integer(c_int64_t), optional, intent(out) :: ran
    type(c_string_list), target :: inputs_c, outputs_c
    integer(c_int64_t) :: pin, version_ran
    call make_string_list(inputs, inputs_c)
    call make_string_list(outputs, outputs_c)
    if (.not. present(version) .and. .not. present(ran)) then
      code = c_run_model(self%handle, name, c_text_length(name), inputs_c%pointers, &
                         inputs_c%lengths, inputs_c%count, outputs_c%pointers, &
                         outputs_c%lengths, outputs_c%count, timeout_arg(timeout_ms))
      return
    end if
    pin = 0
    if (present(version)) pin = version
    version_ran = 0
    code = c_run_model_version(self%handle, name, c_text_length(name), inputs_c%pointers, &
                               inputs_c%lengths, inputs_c%count, outputs_c%pointers, &
                               outputs_c%lengths, outputs_c%count, timeout_arg(timeout_ms), pin, &
                               version_ran)
    if (present(ran)) ran = version_ran
  end function client_run_model

  !> The call a simulation makes every step, in one round trip (pipelined): stores `inputs`
  !> (tensor_ref(name, array), sent as put_tensor sends it), runs model `name` on them and fetches
  !> the outputs named in `outputs` into their arrays, which must have the outputs' kinds and
  !> Fortran shapes (tensor_ref(name, array) again). As the C++ run_model_on, inputs and outputs
  !> are this client's scratch tensors, stored under the write prefix (SSKEYOUT) and left on the
  !> server. timeout_ms as for run_model. Errors: those of put_tensor, run_model and
  !> unpack_tensor, and SLIPSTREAM_INVALID_ARGUMENT for a tensor name longer than
  !> TENSOR_REF_MAX_NAME (1024) characters; on failure the output arrays may hold part of the
  !> results.
  integer function client_run_model_on(self, name, inputs, outputs, timeout_ms) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: name
    type(tensor_ref_type), target, intent(in) :: inputs(:), outputs(:)
    integer, optional, intent(in) :: timeout_ms
    code = run_model_on_refs(self%handle, name, inputs, outputs, timeout_arg(timeout_ms))
  end function client_run_model_on

  pure integer(c_int64_t) function timeout_arg(timeout_ms)
    integer, optional, intent(in) :: timeout_ms
    timeout_arg = 0
    if (present(timeout_ms)) timeout_arg = timeout_ms
  end function timeout_arg

  integer function client_get_model_chunk_size(self, bytes) result(code)
    class(client_type), intent(in) :: self
    integer(c_int64_t), intent(out) :: bytes
    bytes = 0
    code = c_get_model_chunk_size(self%handle, bytes)
  end function client_get_model_chunk_size

  integer function client_set_model_chunk_size(self, bytes) result(code)
    class(client_type), intent(in) :: self
    integer(c_int64_t), intent(in) :: bytes
    code = c_set_model_chunk_size(self%handle, bytes)
  end function client_set_model_chunk_size

  !> Compiles and stores a TorchScript script (device: "CPU", "GPU", ...). Without entry_points
  !> it is run with run_script; with them, with run_script_with_keys.
  integer function client_set_script(self, name, device, source, entry_points) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: name, device, source
    character(len=*), optional, intent(in) :: entry_points(:)
    type(c_string_list), target :: entries
    character(len=1) :: none(0)
    if (present(entry_points)) then
      call make_string_list(entry_points, entries)
    else
      call make_string_list(none, entries)
    end if
    code = c_set_script(self%handle, name, c_text_length(name), device, c_text_length(device), &
                        source, len(source, kind=c_size_t), entries%pointers, entries%lengths, &
                        entries%count)
  end function client_set_script

  integer function client_set_script_from_file(self, name, device, path, entry_points) &
      result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: name, device, path
    character(len=*), optional, intent(in) :: entry_points(:)
    type(c_string_list), target :: entries
    character(len=1) :: none(0)
    if (present(entry_points)) then
      call make_string_list(entry_points, entries)
    else
      call make_string_list(none, entries)
    end if
    code = c_set_script_from_file(self%handle, name, c_text_length(name), device, &
                                  c_text_length(device), path, c_text_length(path), &
                                  entries%pointers, entries%lengths, entries%count)
  end function client_set_script_from_file

  integer function client_get_script(self, name, source) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: name
    character(len=:), allocatable, intent(out) :: source
    type(c_ptr) :: pointer
    integer(c_size_t) :: length
    code = c_get_script(self%handle, name, c_text_length(name), pointer, length)
    if (code == SLIPSTREAM_OK) source = take_c_string(pointer, length)
  end function client_get_script

  !> Calls `function_name` of a script with the input tensors as arguments.
  integer function client_run_script(self, name, function_name, inputs, outputs, timeout_ms) &
      result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: name, function_name, inputs(:), outputs(:)
    integer, optional, intent(in) :: timeout_ms
    type(c_string_list), target :: inputs_c, outputs_c
    call make_string_list(inputs, inputs_c)
    call make_string_list(outputs, outputs_c)
    code = c_run_script(self%handle, name, c_text_length(name), function_name, &
                        c_text_length(function_name), inputs_c%pointers, inputs_c%lengths, &
                        inputs_c%count, outputs_c%pointers, outputs_c%lengths, outputs_c%count, &
                        timeout_arg(timeout_ms))
  end function client_run_script

  !> Calls an entry point as function(tensors, keys, args) (AI.SCRIPTEXECUTE).
  integer function client_run_script_with_keys(self, name, function_name, keys, inputs, args, &
                                               outputs, timeout_ms) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: name, function_name, keys(:), inputs(:), args(:), outputs(:)
    integer, optional, intent(in) :: timeout_ms
    type(c_string_list), target :: keys_c, inputs_c, args_c, outputs_c
    call make_string_list(keys, keys_c)
    call make_string_list(inputs, inputs_c)
    call make_string_list(args, args_c)
    call make_string_list(outputs, outputs_c)
    code = c_run_script_with_keys(self%handle, name, c_text_length(name), function_name, &
                                  c_text_length(function_name), keys_c%pointers, keys_c%lengths, &
                                  keys_c%count, inputs_c%pointers, inputs_c%lengths, &
                                  inputs_c%count, args_c%pointers, args_c%lengths, args_c%count, &
                                  outputs_c%pointers, outputs_c%lengths, outputs_c%count, &
                                  timeout_arg(timeout_ms))
  end function client_run_script_with_keys

  integer function client_delete_script(self, name, existed) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: name
    logical, optional, intent(out) :: existed
    integer(c_int) :: flag
    flag = 0
    code = c_delete_script(self%handle, name, c_text_length(name), flag)
    if (present(existed)) existed = flag /= 0
  end function client_delete_script

  !> Run statistics of a model or script (AI.INFO).
  integer function client_get_model_info(self, name, info) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: name
    type(model_info_type), intent(out) :: info
    type(c_model_info_t) :: raw
    code = c_model_info(self%handle, name, c_text_length(name), raw)
    if (code /= SLIPSTREAM_OK) return
    ! take_c_string frees each string, so the C struct needs no clearing afterwards.
    info%key = take_c_string(raw%key, raw%key_length)
    info%type_name = take_c_string(raw%type, raw%type_length)
    info%backend = take_c_string(raw%backend, raw%backend_length)
    info%device = take_c_string(raw%device, raw%device_length)
    info%tag = take_c_string(raw%tag, raw%tag_length)
    info%calls = raw%calls
    info%samples = raw%samples
    info%errors = raw%errors
    info%duration_us = raw%duration_us
    info%version = raw%version
    info%runs = raw%runs
    info%batches = raw%batches
    info%mean_batch_size = raw%mean_batch_size
    info%queue_wait_us = raw%queue_wait_us
    info%run_time_us = raw%run_time_us
  end function client_get_model_info

  integer function client_reset_model_stats(self, name) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: name
    code = c_reset_model_stats(self%handle, name, c_text_length(name))
  end function client_reset_model_stats

  ! ---- Ensemble prefixes -------------------------------------------------------------------------

  !> Selects which SSKEYIN prefix reads use (SLIPSTREAM_INVALID_ARGUMENT if it is not one).
  integer function client_set_data_source(self, source) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: source
    code = c_set_data_source(self%handle, source, c_text_length(source))
  end function client_set_data_source

  integer function client_use_tensor_ensemble_prefix(self, enable) result(code)
    class(client_type), intent(in) :: self
    logical, intent(in) :: enable
    code = c_use_tensor_ensemble_prefix(self%handle, to_c_flag(enable))
  end function client_use_tensor_ensemble_prefix

  integer function client_use_dataset_ensemble_prefix(self, enable) result(code)
    class(client_type), intent(in) :: self
    logical, intent(in) :: enable
    code = c_use_dataset_ensemble_prefix(self%handle, to_c_flag(enable))
  end function client_use_dataset_ensemble_prefix

  integer function client_use_list_ensemble_prefix(self, enable) result(code)
    class(client_type), intent(in) :: self
    logical, intent(in) :: enable
    code = c_use_list_ensemble_prefix(self%handle, to_c_flag(enable))
  end function client_use_list_ensemble_prefix

  integer function client_use_model_ensemble_prefix(self, enable) result(code)
    class(client_type), intent(in) :: self
    logical, intent(in) :: enable
    code = c_use_model_ensemble_prefix(self%handle, to_c_flag(enable))
  end function client_use_model_ensemble_prefix

  integer function client_model_ensemble_prefix_enabled(self, enabled) result(code)
    class(client_type), intent(in) :: self
    logical, intent(out) :: enabled
    integer(c_int) :: flag
    flag = 0
    code = c_model_ensemble_prefix_enabled(self%handle, flag)
    enabled = flag /= 0
  end function client_model_ensemble_prefix_enabled

  ! ---- Server info -------------------------------------------------------------------------------

  !> The text of the server's INFO [section] (section absent: the default sections).
  integer function client_info(self, text, section) result(code)
    class(client_type), intent(in) :: self
    character(len=:), allocatable, intent(out) :: text
    character(len=*), optional, intent(in) :: section
    type(c_ptr) :: pointer
    integer(c_size_t) :: length
    code = c_info(self%handle, optional_text(section), c_text_length(optional_text(section)), &
                  pointer, length)
    if (code == SLIPSTREAM_OK) text = take_c_string(pointer, length)
  end function client_info

  include "client_tensor_procedures.inc"

end module slipstream
