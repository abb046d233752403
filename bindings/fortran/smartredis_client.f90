! SmartRedis's Fortran module smartredis_client: client_type with SmartRedis 0.6's method
! names, argument orders and optional arguments, over the SmartRedis-compatible C API (and so
! over Slipstream's C API). Every method returns an SRError code (enum_fortran.inc: SRNoError on
! success); get_last_error() (module smartredis_errors) gives the message.
! - initialize([logger_name]): the server from SSDB, the mode from SR_DB_TYPE (or the server's
!   replies), prefixes from SSKEYOUT / SSKEYIN; initialize(cfgopts[, logger_name]) takes them
!   from a configoptions_type (module smartredis_configoptions); initialize(cluster[,
!   logger_name]) is the 0.4 form.
! - get_model / get_script copy into the caller's character variable, blank-padded; one too
!   short for the stored model or script is SRParameterError (nothing copied).
! - put_tensor(name, x, shape(x)) / unpack_tensor(name, x, shape(x)): x of any rank, of
!   int8/16/32/64 or real32/64; it keeps its Fortran shape: C, C++ and Python read shape(x)
!   with [i][j] == x(i+1, j+1). unpack_tensor needs the stored type and shape.
! - Names have trailing blanks removed. The handle is copied on assignment: destroy one copy.
module smartredis_client
  use, intrinsic :: iso_c_binding
  use smartredis_c_api
  use smartredis_errors, only: set_fortran_error
  use smartredis_dataset, only: dataset_type
  use smartredis_configoptions, only: configoptions_type
  use slipstream_interop, only: c_string_list, make_string_list
  implicit none
  private

  include "enum_fortran.inc"

  public :: enum_kind

  !> A connection to a server.
  type, public :: client_type
    private
    type(c_ptr) :: client_ptr = c_null_ptr
    logical :: is_initialized = .false.
  contains
    generic :: initialize => initialize_client_simple, initialize_client_cfgopts, &
                             initialize_client_deprecated
    procedure, private :: initialize_client_simple, initialize_client_cfgopts, &
                          initialize_client_deprecated
    procedure :: isinitialized
    procedure :: destructor
    procedure :: get_c_pointer
    procedure :: SR_error_parser
    procedure :: to_string
    procedure :: print_client
    ! Tensors.
    procedure, private :: put_tensor_i8, put_tensor_i16, put_tensor_i32, put_tensor_i64, &
                          put_tensor_float, put_tensor_double
    generic :: put_tensor => put_tensor_i8, put_tensor_i16, put_tensor_i32, put_tensor_i64, &
                             put_tensor_float, put_tensor_double
    procedure, private :: unpack_tensor_i8, unpack_tensor_i16, unpack_tensor_i32, &
                          unpack_tensor_i64, unpack_tensor_float, unpack_tensor_double
    generic :: unpack_tensor => unpack_tensor_i8, unpack_tensor_i16, unpack_tensor_i32, &
                                unpack_tensor_i64, unpack_tensor_float, unpack_tensor_double
    procedure :: rename_tensor
    procedure :: delete_tensor
    procedure :: copy_tensor
    ! Existence and polling.
    procedure :: key_exists
    procedure :: tensor_exists
    procedure :: model_exists
    procedure :: dataset_exists
    procedure :: poll_key
    procedure :: poll_tensor
    procedure :: poll_model
    procedure :: poll_dataset
    ! Models and scripts.
    procedure :: set_model_from_file
    procedure :: set_model_from_file_multigpu
    procedure :: set_model
    procedure :: get_model
    procedure :: set_model_multigpu
    procedure :: run_model
    procedure :: run_model_multigpu
    procedure :: delete_model
    procedure :: delete_model_multigpu
    procedure :: set_script_from_file
    procedure :: set_script_from_file_multigpu
    procedure :: set_script
    procedure :: get_script
    procedure :: set_script_multigpu
    procedure :: run_script
    procedure :: run_script_multigpu
    procedure :: delete_script
    procedure :: delete_script_multigpu
    ! Datasets.
    procedure :: put_dataset
    procedure :: get_dataset
    procedure :: rename_dataset
    procedure :: copy_dataset
    procedure :: delete_dataset
    ! Ensemble prefixes.
    procedure :: use_tensor_ensemble_prefix
    procedure :: use_dataset_ensemble_prefix
    procedure :: use_model_ensemble_prefix
    procedure :: use_list_ensemble_prefix
    procedure :: set_data_source
    ! Aggregation lists.
    procedure :: append_to_list
    procedure :: delete_list
    procedure :: copy_list
    procedure :: rename_list
    procedure :: get_list_length
    procedure :: poll_list_length
    procedure :: poll_list_length_gte
    procedure :: poll_list_length_lte
    procedure :: get_datasets_from_list
    procedure :: get_datasets_from_list_range
  end type client_type

contains

  ! ---- Construction -------------------------------------------------------------------------

  !> Connects with the environment's settings (SSDB, SR_DB_TYPE, SSKEYIN, SSKEYOUT).
  function initialize_client_simple(self, logger_name) result(code)
    class(client_type), intent(inout) :: self
    character(len=*), optional, intent(in) :: logger_name
    integer(kind=enum_kind) :: code
    if (present(logger_name)) then
      code = simple_create_client_c(logger_name, len_trim(logger_name, kind=c_size_t), &
                                    self%client_ptr)
    else
      code = simple_create_client_c('default', 7_c_size_t, self%client_ptr)
    end if
    self%is_initialized = code == SRNoError
  end function initialize_client_simple

  !> Connects with the settings of `cfgopts` (its database's environment and overrides).
  function initialize_client_cfgopts(self, cfgopts, logger_name) result(code)
    class(client_type), intent(inout) :: self
    type(configoptions_type), intent(in) :: cfgopts
    character(len=*), optional, intent(in) :: logger_name
    integer(kind=enum_kind) :: code
    if (present(logger_name)) then
      code = create_client_c(cfgopts%get_c_pointer(), logger_name, &
                             len_trim(logger_name, kind=c_size_t), self%client_ptr)
    else
      code = create_client_c(cfgopts%get_c_pointer(), 'default', 7_c_size_t, self%client_ptr)
    end if
    self%is_initialized = code == SRNoError
  end function initialize_client_cfgopts

  !> SmartRedis 0.4's form: `cluster` says whether the server is a cluster (Slipstream also
  !> recognises a cluster from its replies).
  function initialize_client_deprecated(self, cluster, logger_name) result(code)
    class(client_type), intent(inout) :: self
    logical, intent(in) :: cluster
    character(len=*), optional, intent(in) :: logger_name
    integer(kind=enum_kind) :: code
    if (present(logger_name)) then
      code = smartredis_c_client_c(logical(cluster, c_bool), logger_name, &
                                   len_trim(logger_name, kind=c_size_t), self%client_ptr)
    else
      code = smartredis_c_client_c(logical(cluster, c_bool), 'default', 7_c_size_t, &
                                   self%client_ptr)
    end if
    self%is_initialized = code == SRNoError
  end function initialize_client_deprecated

  logical function isinitialized(self)
    class(client_type) :: self
    isinitialized = self%is_initialized
  end function isinitialized

  !> Disconnects and frees the client.
  function destructor(self) result(code)
    class(client_type), intent(inout) :: self
    integer(kind=enum_kind) :: code
    code = delete_c_client_c(self%client_ptr)
    self%is_initialized = .false.
  end function destructor

  type(c_ptr) function get_c_pointer(self)
    class(client_type), intent(in) :: self
    get_c_pointer = self%client_ptr
  end function get_c_pointer

  !> .true. (after writing what the code means to standard error) unless response_code is
  !> SRNoError.
  logical function SR_error_parser(self, response_code) result(is_error)
    use, intrinsic :: iso_fortran_env, only: error_unit
    class(client_type), intent(in) :: self
    integer(kind=enum_kind), intent(in) :: response_code
    is_error = response_code /= SRNoError
    if (.not. self%is_initialized) then
      write(error_unit, '(a)') 'SmartRedis client has not been initialized'
      is_error = .true.
      return
    end if
    select case (response_code)
    case (SRNoError)
    case (SRBadAllocError)
      write(error_unit, '(a)') 'Memory allocation error'
    case (SRDatabaseError)
      write(error_unit, '(a)') 'Backend database error'
    case (SRInternalError)
      write(error_unit, '(a)') 'Internal SmartRedis error'
    case (SRRuntimeError)
      write(error_unit, '(a)') 'Runtime error executing an operation'
    case (SRParameterError)
      write(error_unit, '(a)') 'Bad parameter error'
    case (SRTimeoutError)
      write(error_unit, '(a)') 'Timeout error'
    case (SRKeyError)
      write(error_unit, '(a)') 'Key error'
    case (SRTypeError)
      write(error_unit, '(a)') 'Type mismatch error'
    case default
      write(error_unit, '(a)') 'Invalid or uninitialized response code'
    end select
  end function SR_error_parser

  !> A description of the client (its address).
  function to_string(self) result(text)
    class(client_type), intent(in) :: self
    character(len=:), allocatable :: text
    text = c_string_copy(client_to_string_c(self%client_ptr))
  end function to_string

  !> Writes to_string() to `unit` (standard error when absent), as SmartRedis does.
  subroutine print_client(self, unit)
    use, intrinsic :: iso_fortran_env, only: error_unit
    class(client_type), intent(in) :: self
    integer, optional, intent(in) :: unit
    integer :: target_unit
    target_unit = error_unit
    if (present(unit)) target_unit = unit
    write(target_unit, '(a)') self%to_string()
  end subroutine print_client

  ! ---- Tensors ------------------------------------------------------------------------------

  !> Stores the `n_elements` elements at `data` (Fortran order, dims `dims`) as tensor `name`.
  function put_array(self, name, data, n_elements, dims, data_type) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: name
    type(c_ptr), intent(in) :: data
    integer, intent(in) :: n_elements, dims(:), data_type
    integer(kind=enum_kind) :: code
    code = tensor_with(put_tensor_c, self%client_ptr, name, data, n_elements, dims, data_type)
  end function put_array

  !> Fetches tensor `name` into the `n_elements` elements at `data`: dims and type must be the
  !> stored ones (SRParameterError naming both otherwise; SRKeyError if it does not exist).
  function unpack_array(self, name, data, n_elements, dims, data_type) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: name
    type(c_ptr), intent(in) :: data
    integer, intent(in) :: n_elements, dims(:), data_type
    integer(kind=enum_kind) :: code
    code = tensor_with(unpack_tensor_c, self%client_ptr, name, data, n_elements, dims, &
                       data_type)
  end function unpack_array

  include "smartredis_client_tensors.inc"

  function rename_tensor(self, old_name, new_name) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: old_name, new_name
    integer(kind=enum_kind) :: code
    code = rename_tensor_c(self%client_ptr, old_name, len_trim(old_name, kind=c_size_t), &
                           new_name, len_trim(new_name, kind=c_size_t))
  end function rename_tensor

  function delete_tensor(self, name) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: name
    integer(kind=enum_kind) :: code
    code = delete_tensor_c(self%client_ptr, name, len_trim(name, kind=c_size_t))
  end function delete_tensor

  function copy_tensor(self, src_name, dest_name) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: src_name, dest_name
    integer(kind=enum_kind) :: code
    code = copy_tensor_c(self%client_ptr, src_name, len_trim(src_name, kind=c_size_t), &
                         dest_name, len_trim(dest_name, kind=c_size_t))
  end function copy_tensor

  ! ---- Existence and polling ----------------------------------------------------------------

  !> Whether raw key `key` exists (no prefix is applied).
  function key_exists(self, key, exists) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: key
    logical, intent(out) :: exists
    integer(kind=enum_kind) :: code
    code = exists_with(key_exists_c, self%client_ptr, key, exists)
  end function key_exists

  function tensor_exists(self, tensor_name, exists) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: tensor_name
    logical, intent(out) :: exists
    integer(kind=enum_kind) :: code
    code = exists_with(tensor_exists_c, self%client_ptr, tensor_name, exists)
  end function tensor_exists

  function model_exists(self, model_name, exists) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: model_name
    logical, intent(out) :: exists
    integer(kind=enum_kind) :: code
    code = exists_with(model_exists_c, self%client_ptr, model_name, exists)
  end function model_exists

  function dataset_exists(self, dataset_name, exists) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: dataset_name
    logical, intent(out) :: exists
    integer(kind=enum_kind) :: code
    code = exists_with(dataset_exists_c, self%client_ptr, dataset_name, exists)
  end function dataset_exists

  !> Checks num_tries times, poll_frequency_ms apart, whether raw key `key` exists.
  function poll_key(self, key, poll_frequency_ms, num_tries, exists) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: key
    integer, intent(in) :: poll_frequency_ms, num_tries
    logical, intent(out) :: exists
    integer(kind=enum_kind) :: code
    code = poll_with(poll_key_c, self%client_ptr, key, poll_frequency_ms, num_tries, exists)
  end function poll_key

  function poll_tensor(self, tensor_name, poll_frequency_ms, num_tries, exists) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: tensor_name
    integer, intent(in) :: poll_frequency_ms, num_tries
    logical, intent(out) :: exists
    integer(kind=enum_kind) :: code
    code = poll_with(poll_tensor_c, self%client_ptr, tensor_name, poll_frequency_ms, num_tries, exists)
  end function poll_tensor

  function poll_model(self, model_name, poll_frequency_ms, num_tries, exists) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: model_name
    integer, intent(in) :: poll_frequency_ms, num_tries
    logical, intent(out) :: exists
    integer(kind=enum_kind) :: code
    code = poll_with(poll_model_c, self%client_ptr, model_name, poll_frequency_ms, num_tries, exists)
  end function poll_model

  function poll_dataset(self, dataset_name, poll_frequency_ms, num_tries, exists) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: dataset_name
    integer, intent(in) :: poll_frequency_ms, num_tries
    logical, intent(out) :: exists
    integer(kind=enum_kind) :: code
    code = poll_with(poll_dataset_c, self%client_ptr, dataset_name, poll_frequency_ms, num_tries, exists)
  end function poll_dataset

  ! ---- Models and scripts -------------------------------------------------------------------

  !> The optional model arguments as the C API takes them (absent: 0, no tag, no node names).
  subroutine model_arguments(batch_size, min_batch_size, min_batch_timeout, tag, inputs, &
                             outputs, c_batch, c_min_batch, c_timeout, c_tag, input_list, &
                             output_list)
    integer, optional, intent(in) :: batch_size, min_batch_size, min_batch_timeout
    character(len=*), optional, intent(in) :: tag
    character(len=*), optional, intent(in) :: inputs(:), outputs(:)
    integer(c_int), intent(out) :: c_batch, c_min_batch, c_timeout
    character(len=:), allocatable, intent(out) :: c_tag
    type(c_string_list), target, intent(out) :: input_list, output_list
    character(len=1) :: none(0)
    c_batch = 0
    c_min_batch = 0
    c_timeout = 0
    if (present(batch_size)) c_batch = batch_size
    if (present(min_batch_size)) c_min_batch = min_batch_size
    if (present(min_batch_timeout)) c_timeout = min_batch_timeout
    c_tag = ' '
    if (present(tag)) c_tag = trim(tag) // ' '
    if (present(inputs)) then
      call make_string_list(inputs, input_list)
    else
      call make_string_list(none, input_list)
    end if
    if (present(outputs)) then
      call make_string_list(outputs, output_list)
    else
      call make_string_list(none, output_list)
    end if
  end subroutine model_arguments

  !> Stores the model in file `model_file` (backend "TORCH", "TF", ...; device "CPU", "GPU",
  !> "GPU:n"). inputs / outputs name TensorFlow graph nodes.
  function set_model_from_file(self, name, model_file, backend, device, batch_size, &
                               min_batch_size, min_batch_timeout, tag, inputs, outputs) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: name, model_file, backend, device
    integer, optional, intent(in) :: batch_size, min_batch_size, min_batch_timeout
    character(len=*), optional, intent(in) :: tag
    character(len=*), dimension(:), optional, intent(in) :: inputs, outputs
    integer(kind=enum_kind) :: code
    integer(c_int) :: c_batch, c_min_batch, c_timeout
    character(len=:), allocatable :: c_tag
    type(c_string_list), target :: input_list, output_list
    call model_arguments(batch_size, min_batch_size, min_batch_timeout, tag, inputs, outputs, &
                         c_batch, c_min_batch, c_timeout, c_tag, input_list, output_list)
    code = set_model_from_file_c(self%client_ptr, name, len_trim(name, kind=c_size_t), &
        model_file, len_trim(model_file, kind=c_size_t), backend, &
        len_trim(backend, kind=c_size_t), device, len_trim(device, kind=c_size_t), c_batch, &
        c_min_batch, c_timeout, c_tag, len_trim(c_tag, kind=c_size_t), input_list%pointers, &
        input_list%lengths, input_list%count, output_list%pointers, output_list%lengths, &
        output_list%count)
  end function set_model_from_file

  !> Stores one copy of the model per GPU, first_gpu to first_gpu + num_gpus - 1.
  function set_model_from_file_multigpu(self, name, model_file, backend, first_gpu, num_gpus, &
      batch_size, min_batch_size, min_batch_timeout, tag, inputs, outputs) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: name, model_file, backend
    integer, intent(in) :: first_gpu, num_gpus
    integer, optional, intent(in) :: batch_size, min_batch_size, min_batch_timeout
    character(len=*), optional, intent(in) :: tag
    character(len=*), dimension(:), optional, intent(in) :: inputs, outputs
    integer(kind=enum_kind) :: code
    integer(c_int) :: c_batch, c_min_batch, c_timeout
    character(len=:), allocatable :: c_tag
    type(c_string_list), target :: input_list, output_list
    call model_arguments(batch_size, min_batch_size, min_batch_timeout, tag, inputs, outputs, &
                         c_batch, c_min_batch, c_timeout, c_tag, input_list, output_list)
    code = set_model_from_file_multigpu_c(self%client_ptr, name, len_trim(name, kind=c_size_t), &
        model_file, len_trim(model_file, kind=c_size_t), backend, &
        len_trim(backend, kind=c_size_t), int(first_gpu, c_int), int(num_gpus, c_int), c_batch, &
        c_min_batch, c_timeout, c_tag, len_trim(c_tag, kind=c_size_t), input_list%pointers, &
        input_list%lengths, input_list%count, output_list%pointers, output_list%lengths, &
        output_list%count)
  end function set_model_from_file_multigpu

  !> Stores the model whose bytes are `model` (all of it, blanks included).
  function set_model(self, name, model, backend, device, batch_size, min_batch_size, &
                     min_batch_timeout, tag, inputs, outputs) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: name, model, backend, device
    integer, optional, intent(in) :: batch_size, min_batch_size, min_batch_timeout
    character(len=*), optional, intent(in) :: tag
    character(len=*), dimension(:), optional, intent(in) :: inputs, outputs
    integer(kind=enum_kind) :: code
    integer(c_int) :: c_batch, c_min_batch, c_timeout
    character(len=:), allocatable :: c_tag
    type(c_string_list), target :: input_list, output_list
    call model_arguments(batch_size, min_batch_size, min_batch_timeout, tag, inputs, outputs, &
                         c_batch, c_min_batch, c_timeout, c_tag, input_list, output_list)
    code = set_model_c(self%client_ptr, name, len_trim(name, kind=c_size_t), model, &
        len(model, kind=c_size_t), backend, len_trim(backend, kind=c_size_t), device, &
        len_trim(device, kind=c_size_t), c_batch, c_min_batch, c_timeout, c_tag, &
        len_trim(c_tag, kind=c_size_t), input_list%pointers, input_list%lengths, &
        input_list%count, output_list%pointers, output_list%lengths, output_list%count)
  end function set_model

  !> The bytes of model `name` (SRKeyError if it does not exist).
  function get_model(self, name, model) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: name
    character(len=*), intent(out) :: model
    integer(kind=enum_kind) :: code
    type(c_ptr) :: bytes
    integer(kind=c_size_t) :: length
    code = get_model_c(self%client_ptr, name, len_trim(name, kind=c_size_t), length, bytes)
    if (code == SRNoError) code = copy_out('get_model', bytes, length, model)
  end function get_model

  function set_model_multigpu(self, name, model, backend, first_gpu, num_gpus, batch_size, &
      min_batch_size, min_batch_timeout, tag, inputs, outputs) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: name, model, backend
    integer, intent(in) :: first_gpu, num_gpus
    integer, optional, intent(in) :: batch_size, min_batch_size, min_batch_timeout
    character(len=*), optional, intent(in) :: tag
    character(len=*), dimension(:), optional, intent(in) :: inputs, outputs
    integer(kind=enum_kind) :: code
    integer(c_int) :: c_batch, c_min_batch, c_timeout
    character(len=:), allocatable :: c_tag
    type(c_string_list), target :: input_list, output_list
    call model_arguments(batch_size, min_batch_size, min_batch_timeout, tag, inputs, outputs, &
                         c_batch, c_min_batch, c_timeout, c_tag, input_list, output_list)
    code = set_model_multigpu_c(self%client_ptr, name, len_trim(name, kind=c_size_t), model, &
        len(model, kind=c_size_t), backend, len_trim(backend, kind=c_size_t), &
        int(first_gpu, c_int), int(num_gpus, c_int), c_batch, c_min_batch, c_timeout, c_tag, &
        len_trim(c_tag, kind=c_size_t), input_list%pointers, input_list%lengths, &
        input_list%count, output_list%pointers, output_list%lengths, output_list%count)
  end function set_model_multigpu

  !> Runs model `name` on the tensors `inputs`, storing its results as `outputs`.
  function run_model(self, name, inputs, outputs) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: name
    character(len=*), dimension(:), intent(in) :: inputs, outputs
    integer(kind=enum_kind) :: code
    type(c_string_list), target :: input_list, output_list
    call make_string_list(inputs, input_list)
    call make_string_list(outputs, output_list)
    code = run_model_c(self%client_ptr, name, len_trim(name, kind=c_size_t), &
                       input_list%pointers, input_list%lengths, input_list%count, &
                       output_list%pointers, output_list%lengths, output_list%count)
  end function run_model

  !> Runs the copy of the model on GPU first_gpu + mod(offset, num_gpus).
  function run_model_multigpu(self, name, inputs, outputs, offset, first_gpu, num_gpus) &
      result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: name
    character(len=*), dimension(:), intent(in) :: inputs, outputs
    integer, intent(in) :: offset, first_gpu, num_gpus
    integer(kind=enum_kind) :: code
    type(c_string_list), target :: input_list, output_list
    call make_string_list(inputs, input_list)
    call make_string_list(outputs, output_list)
    code = run_model_multigpu_c(self%client_ptr, name, len_trim(name, kind=c_size_t), &
                                input_list%pointers, input_list%lengths, input_list%count, &
                                output_list%pointers, output_list%lengths, output_list%count, &
                                int(offset, c_int), int(first_gpu, c_int), int(num_gpus, c_int))
  end function run_model_multigpu

  function delete_model(self, name) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: name
    integer(kind=enum_kind) :: code
    code = delete_model_c(self%client_ptr, name, len_trim(name, kind=c_size_t))
  end function delete_model

  function delete_model_multigpu(self, name, first_gpu, num_gpus) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: name
    integer, intent(in) :: first_gpu, num_gpus
    integer(kind=enum_kind) :: code
    code = delete_model_multigpu_c(self%client_ptr, name, len_trim(name, kind=c_size_t), &
                                   int(first_gpu, c_int), int(num_gpus, c_int))
  end function delete_model_multigpu

  !> Stores the TorchScript script in file `script_file` for `device`.
  function set_script_from_file(self, name, device, script_file) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: name, device, script_file
    integer(kind=enum_kind) :: code
    code = set_script_from_file_c(self%client_ptr, name, len_trim(name, kind=c_size_t), device, &
                                  len_trim(device, kind=c_size_t), script_file, &
                                  len_trim(script_file, kind=c_size_t))
  end function set_script_from_file

  function set_script_from_file_multigpu(self, name, script_file, first_gpu, num_gpus) &
      result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: name, script_file
    integer, intent(in) :: first_gpu, num_gpus
    integer(kind=enum_kind) :: code
    code = set_script_from_file_multigpu_c(self%client_ptr, name, len_trim(name, kind=c_size_t), &
                                           script_file, len_trim(script_file, kind=c_size_t), &
                                           int(first_gpu, c_int), int(num_gpus, c_int))
  end function set_script_from_file_multigpu

  !> Stores the script whose source is `script` (all of it).
  function set_script(self, name, device, script) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: name, device, script
    integer(kind=enum_kind) :: code
    code = set_script_c(self%client_ptr, name, len_trim(name, kind=c_size_t), device, &
                        len_trim(device, kind=c_size_t), script, len(script, kind=c_size_t))
  end function set_script

  !> The source of script `name` (SRKeyError if it does not exist).
  function get_script(self, name, script) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: name
    character(len=*), intent(out) :: script
    integer(kind=enum_kind) :: code
    type(c_ptr) :: source
    integer(kind=c_size_t) :: length
    code = get_script_c(self%client_ptr, name, len_trim(name, kind=c_size_t), source, length)
    if (code == SRNoError) code = copy_out('get_script', source, length, script)
  end function get_script

  !> Copies the `length` characters at `text` into `buffer`, blank-padded; SRParameterError
  !> naming `caller` and both lengths if `buffer` is shorter.
  function copy_out(caller, text, length, buffer) result(code)
    character(len=*), intent(in) :: caller
    type(c_ptr), intent(in) :: text
    integer(kind=c_size_t), intent(in) :: length
    character(len=*), intent(out) :: buffer
    integer(kind=enum_kind) :: code
    character(len=160) :: message
    if (length > len(buffer, kind=c_size_t)) then
      write(message, '(a,a,i0,a,i0,a)') caller, ': the stored value has ', length, &
          ' characters but the variable holds ', len(buffer), '; pass a longer one'
      call set_fortran_error(trim(message))
      code = SRParameterError
      return
    end if
    buffer = c_chars_copy(text, length)
    code = SRNoError
  end function copy_out

  function set_script_multigpu(self, name, script, first_gpu, num_gpus) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: name, script
    integer, intent(in) :: first_gpu, num_gpus
    integer(kind=enum_kind) :: code
    code = set_script_multigpu_c(self%client_ptr, name, len_trim(name, kind=c_size_t), script, &
                                 len(script, kind=c_size_t), int(first_gpu, c_int), &
                                 int(num_gpus, c_int))
  end function set_script_multigpu

  !> Calls function `func` of script `name` on `inputs`, storing the results as `outputs`.
  function run_script(self, name, func, inputs, outputs) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: name, func
    character(len=*), dimension(:), intent(in) :: inputs, outputs
    integer(kind=enum_kind) :: code
    type(c_string_list), target :: input_list, output_list
    call make_string_list(inputs, input_list)
    call make_string_list(outputs, output_list)
    code = run_script_c(self%client_ptr, name, len_trim(name, kind=c_size_t), func, &
                        len_trim(func, kind=c_size_t), input_list%pointers, input_list%lengths, &
                        input_list%count, output_list%pointers, output_list%lengths, &
                        output_list%count)
  end function run_script

  function run_script_multigpu(self, name, func, inputs, outputs, offset, first_gpu, num_gpus) &
      result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: name, func
    character(len=*), dimension(:), intent(in) :: inputs, outputs
    integer, intent(in) :: offset, first_gpu, num_gpus
    integer(kind=enum_kind) :: code
    type(c_string_list), target :: input_list, output_list
    call make_string_list(inputs, input_list)
    call make_string_list(outputs, output_list)
    code = run_script_multigpu_c(self%client_ptr, name, len_trim(name, kind=c_size_t), func, &
                                 len_trim(func, kind=c_size_t), input_list%pointers, &
                                 input_list%lengths, input_list%count, output_list%pointers, &
                                 output_list%lengths, output_list%count, int(offset, c_int), &
                                 int(first_gpu, c_int), int(num_gpus, c_int))
  end function run_script_multigpu

  function delete_script(self, name) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: name
    integer(kind=enum_kind) :: code
    code = delete_script_c(self%client_ptr, name, len_trim(name, kind=c_size_t))
  end function delete_script

  function delete_script_multigpu(self, name, first_gpu, num_gpus) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: name
    integer, intent(in) :: first_gpu, num_gpus
    integer(kind=enum_kind) :: code
    code = delete_script_multigpu_c(self%client_ptr, name, len_trim(name, kind=c_size_t), &
                                    int(first_gpu, c_int), int(num_gpus, c_int))
  end function delete_script_multigpu

  ! ---- Datasets -----------------------------------------------------------------------------

  function put_dataset(self, dataset) result(code)
    class(client_type), intent(in) :: self
    type(dataset_type), intent(in) :: dataset
    integer(kind=enum_kind) :: code
    code = put_dataset_c(self%client_ptr, dataset%dataset_ptr)
  end function put_dataset

  !> Fetches dataset `name` into a new `dataset` (destroy it when done).
  function get_dataset(self, name, dataset) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: name
    type(dataset_type), intent(out) :: dataset
    integer(kind=enum_kind) :: code
    code = get_dataset_c(self%client_ptr, name, len_trim(name, kind=c_size_t), dataset%dataset_ptr)
  end function get_dataset

  function rename_dataset(self, old_name, new_name) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: old_name, new_name
    integer(kind=enum_kind) :: code
    code = rename_dataset_c(self%client_ptr, old_name, len_trim(old_name, kind=c_size_t), &
                            new_name, len_trim(new_name, kind=c_size_t))
  end function rename_dataset

  function copy_dataset(self, src_name, dest_name) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: src_name, dest_name
    integer(kind=enum_kind) :: code
    code = copy_dataset_c(self%client_ptr, src_name, len_trim(src_name, kind=c_size_t), &
                          dest_name, len_trim(dest_name, kind=c_size_t))
  end function copy_dataset

  function delete_dataset(self, name) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: name
    integer(kind=enum_kind) :: code
    code = delete_dataset_c(self%client_ptr, name, len_trim(name, kind=c_size_t))
  end function delete_dataset

  ! ---- Ensemble prefixes --------------------------------------------------------------------

  function use_tensor_ensemble_prefix(self, use_prefix) result(code)
    class(client_type), intent(in) :: self
    logical, intent(in) :: use_prefix
    integer(kind=enum_kind) :: code
    code = use_tensor_ensemble_prefix_c(self%client_ptr, logical(use_prefix, c_bool))
  end function use_tensor_ensemble_prefix

  function use_dataset_ensemble_prefix(self, use_prefix) result(code)
    class(client_type), intent(in) :: self
    logical, intent(in) :: use_prefix
    integer(kind=enum_kind) :: code
    code = use_dataset_ensemble_prefix_c(self%client_ptr, logical(use_prefix, c_bool))
  end function use_dataset_ensemble_prefix

  function use_model_ensemble_prefix(self, use_prefix) result(code)
    class(client_type), intent(in) :: self
    logical, intent(in) :: use_prefix
    integer(kind=enum_kind) :: code
    code = use_model_ensemble_prefix_c(self%client_ptr, logical(use_prefix, c_bool))
  end function use_model_ensemble_prefix

  function use_list_ensemble_prefix(self, use_prefix) result(code)
    class(client_type), intent(in) :: self
    logical, intent(in) :: use_prefix
    integer(kind=enum_kind) :: code
    code = use_list_ensemble_prefix_c(self%client_ptr, logical(use_prefix, c_bool))
  end function use_list_ensemble_prefix

  !> Reads use prefix `source_id`, one of SSKEYIN's (SRParameterError otherwise).
  function set_data_source(self, source_id) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: source_id
    integer(kind=enum_kind) :: code
    code = set_data_source_c(self%client_ptr, source_id, len_trim(source_id, kind=c_size_t))
  end function set_data_source

  ! ---- Aggregation lists --------------------------------------------------------------------

  !> Appends a reference to `dataset` (stored before with put_dataset) to list `list_name`.
  function append_to_list(self, list_name, dataset) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: list_name
    type(dataset_type), intent(in) :: dataset
    integer(kind=enum_kind) :: code
    code = append_to_list_c(self%client_ptr, list_name, len_trim(list_name, kind=c_size_t), &
                            dataset%dataset_ptr)
  end function append_to_list

  function delete_list(self, list_name) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: list_name
    integer(kind=enum_kind) :: code
    code = delete_list_c(self%client_ptr, list_name, len_trim(list_name, kind=c_size_t))
  end function delete_list

  function copy_list(self, src_name, dest_name) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: src_name, dest_name
    integer(kind=enum_kind) :: code
    code = copy_list_c(self%client_ptr, src_name, len_trim(src_name, kind=c_size_t), &
                       dest_name, len_trim(dest_name, kind=c_size_t))
  end function copy_list

  function rename_list(self, src_name, dest_name) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: src_name, dest_name
    integer(kind=enum_kind) :: code
    code = rename_list_c(self%client_ptr, src_name, len_trim(src_name, kind=c_size_t), &
                         dest_name, len_trim(dest_name, kind=c_size_t))
  end function rename_list

  function get_list_length(self, list_name, result_length) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: list_name
    integer, intent(out) :: result_length
    integer(kind=enum_kind) :: code
    integer(c_int) :: length
    length = 0
    code = get_list_length_c(self%client_ptr, list_name, len_trim(list_name, kind=c_size_t), &
                             length)
    result_length = length
  end function get_list_length

  !> Checks num_tries times, poll_frequency_ms apart, whether the list has list_length entries.
  function poll_list_length(self, list_name, list_length, poll_frequency_ms, num_tries, &
                            poll_result) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: list_name
    integer, intent(in) :: list_length, poll_frequency_ms, num_tries
    logical, intent(out) :: poll_result
    integer(kind=enum_kind) :: code
    code = poll_length_with(poll_list_length_c, self%client_ptr, list_name, list_length, &
                            poll_frequency_ms, num_tries, poll_result)
  end function poll_list_length

  function poll_list_length_gte(self, list_name, list_length, poll_frequency_ms, num_tries, &
                                poll_result) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: list_name
    integer, intent(in) :: list_length, poll_frequency_ms, num_tries
    logical, intent(out) :: poll_result
    integer(kind=enum_kind) :: code
    code = poll_length_with(poll_list_length_gte_c, self%client_ptr, list_name, list_length, &
                            poll_frequency_ms, num_tries, poll_result)
  end function poll_list_length_gte

  function poll_list_length_lte(self, list_name, list_length, poll_frequency_ms, num_tries, &
                                poll_result) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: list_name
    integer, intent(in) :: list_length, poll_frequency_ms, num_tries
    logical, intent(out) :: poll_result
    integer(kind=enum_kind) :: code
    code = poll_length_with(poll_list_length_lte_c, self%client_ptr, list_name, list_length, &
                            poll_frequency_ms, num_tries, poll_result)
  end function poll_list_length_lte

  !> Every dataset of the list, as new dataset_type values (destroy each).
  function get_datasets_from_list(self, list_name, datasets, num_datasets) result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: list_name
    type(dataset_type), dimension(:), allocatable, intent(out) :: datasets
    integer, intent(out) :: num_datasets
    integer(kind=enum_kind) :: code
    code = get_datasets_from_list_range(self, list_name, 0, -1, datasets)
    num_datasets = 0
    if (allocated(datasets)) num_datasets = size(datasets)
  end function get_datasets_from_list

  !> The datasets at positions start_index..end_index (from 0, inclusive; negative counts from
  !> the end), as new dataset_type values (destroy each).
  function get_datasets_from_list_range(self, list_name, start_index, end_index, datasets) &
      result(code)
    class(client_type), intent(in) :: self
    character(len=*), intent(in) :: list_name
    integer, intent(in) :: start_index, end_index
    type(dataset_type), dimension(:), allocatable, intent(out) :: datasets
    integer(kind=enum_kind) :: code
    type(c_ptr) :: array
    type(c_ptr), pointer :: handles(:)
    integer(c_size_t) :: count
    integer :: i
    count = 0
    code = get_dataset_list_range_c(self%client_ptr, list_name, &
                                    len_trim(list_name, kind=c_size_t), int(start_index, c_int), &
                                    int(end_index, c_int), array, count)
    allocate(datasets(count))
    if (code /= SRNoError .or. count == 0) return
    call c_f_pointer(array, handles, [count])
    do i = 1, int(count)
      datasets(i)%dataset_ptr = handles(i)
    end do
  end function get_datasets_from_list_range

end module smartredis_client
