! Interfaces to the C API (include/slipstream.h) used by the Fortran module `slipstream`, and the
! status, dtype and metadata-type constants with the header's values. Not meant for direct use.
module slipstream_c_api
  use, intrinsic :: iso_c_binding
  implicit none
  public

  ! Status codes (slipstream_status_t).
  integer, parameter :: SLIPSTREAM_OK = 0
  integer, parameter :: SLIPSTREAM_CONNECTION_ERROR = 1
  integer, parameter :: SLIPSTREAM_TIMEOUT_ERROR = 2
  integer, parameter :: SLIPSTREAM_PROTOCOL_ERROR = 3
  integer, parameter :: SLIPSTREAM_SERVER_ERROR = 4
  integer, parameter :: SLIPSTREAM_KEY_NOT_FOUND = 5
  integer, parameter :: SLIPSTREAM_WRONG_TYPE = 6
  integer, parameter :: SLIPSTREAM_INVALID_ARGUMENT = 7
  integer, parameter :: SLIPSTREAM_BUFFER_TOO_SMALL = 8
  integer, parameter :: SLIPSTREAM_OUT_OF_MEMORY = 9
  integer, parameter :: SLIPSTREAM_AUTH_ERROR = 10
  integer, parameter :: SLIPSTREAM_BACKEND_ERROR = 11
  integer, parameter :: SLIPSTREAM_STEP_ABORTED = 12
  integer, parameter :: SLIPSTREAM_CLIENT_OUT_OF_MEMORY = 100
  integer, parameter :: SLIPSTREAM_INTERNAL_ERROR = 101

  ! Element types (slipstream_dtype_t).
  integer, parameter :: SLIPSTREAM_FLOAT32 = 0
  integer, parameter :: SLIPSTREAM_FLOAT64 = 1
  integer, parameter :: SLIPSTREAM_INT8 = 2
  integer, parameter :: SLIPSTREAM_INT16 = 3
  integer, parameter :: SLIPSTREAM_INT32 = 4
  integer, parameter :: SLIPSTREAM_INT64 = 5
  integer, parameter :: SLIPSTREAM_UINT8 = 6
  integer, parameter :: SLIPSTREAM_UINT16 = 7
  integer, parameter :: SLIPSTREAM_BOOL = 8

  ! Memory orders (slipstream_memory_order_t).
  integer(c_int), parameter :: SLIPSTREAM_C_ORDER = 0
  integer(c_int), parameter :: SLIPSTREAM_FORTRAN_ORDER = 1

  ! Metadata field types (slipstream_meta_type_t).
  integer, parameter :: SLIPSTREAM_META_DOUBLE = 1
  integer, parameter :: SLIPSTREAM_META_FLOAT = 2
  integer, parameter :: SLIPSTREAM_META_INT32 = 3
  integer, parameter :: SLIPSTREAM_META_INT64 = 4
  integer, parameter :: SLIPSTREAM_META_UINT32 = 5
  integer, parameter :: SLIPSTREAM_META_UINT64 = 6
  integer, parameter :: SLIPSTREAM_META_STRING = 7

  !> slipstream_client_options_t
  type, bind(C) :: c_client_options_t
    type(c_ptr) :: address = c_null_ptr
    integer(c_size_t) :: address_length = 0
    type(c_ptr) :: password = c_null_ptr
    integer(c_size_t) :: password_length = 0
    integer(c_int64_t) :: connect_timeout_ms = 0
    integer(c_int64_t) :: command_timeout_ms = -1
    type(c_ptr) :: key_prefix_out = c_null_ptr
    integer(c_size_t) :: key_prefix_out_length = 0
    type(c_ptr) :: key_prefixes_in = c_null_ptr
    integer(c_size_t) :: key_prefixes_in_length = 0
  end type c_client_options_t

  !> slipstream_model_options_t
  type, bind(C) :: c_model_options_t
    integer(c_int64_t) :: batch_size = 0
    integer(c_int64_t) :: min_batch_size = 0
    integer(c_int64_t) :: min_batch_timeout_ms = 0
    type(c_ptr) :: tag = c_null_ptr
    integer(c_size_t) :: tag_length = 0
    type(c_ptr) :: inputs = c_null_ptr
    type(c_ptr) :: input_lengths = c_null_ptr
    integer(c_size_t) :: input_count = 0
    type(c_ptr) :: outputs = c_null_ptr
    type(c_ptr) :: output_lengths = c_null_ptr
    integer(c_size_t) :: output_count = 0
    integer(c_int64_t) :: keep_versions = 0
  end type c_model_options_t

  !> slipstream_model_info_t
  type, bind(C) :: c_model_info_t
    type(c_ptr) :: key = c_null_ptr
    integer(c_size_t) :: key_length = 0
    type(c_ptr) :: type = c_null_ptr
    integer(c_size_t) :: type_length = 0
    type(c_ptr) :: backend = c_null_ptr
    integer(c_size_t) :: backend_length = 0
    type(c_ptr) :: device = c_null_ptr
    integer(c_size_t) :: device_length = 0
    type(c_ptr) :: tag = c_null_ptr
    integer(c_size_t) :: tag_length = 0
    integer(c_int64_t) :: calls = 0
    integer(c_int64_t) :: samples = 0
    integer(c_int64_t) :: errors = 0
    integer(c_int64_t) :: duration_us = 0
    integer(c_int64_t) :: version = 0
    integer(c_int64_t) :: runs = 0
    integer(c_int64_t) :: batches = 0
    real(c_double) :: mean_batch_size = 0
    integer(c_int64_t) :: queue_wait_us = 0
    integer(c_int64_t) :: run_time_us = 0
  end type c_model_info_t

  interface
    ! ---- Errors and helpers
    type(c_ptr) function c_last_error() bind(C, name="slipstream_last_error")
      import :: c_ptr
    end function
    subroutine c_free(pointer) bind(C, name="slipstream_free")
      import :: c_ptr
      type(c_ptr), value :: pointer
    end subroutine

    integer(c_int) function c_client_create_with_options(options, client) &
        bind(C, name="slipstream_client_create_with_options")
      import :: c_client_options_t, c_int, c_ptr
      type(c_client_options_t), intent(in) :: options
      type(c_ptr), intent(out) :: client
    end function
    integer(c_int) function c_client_destroy(client) &
        bind(C, name="slipstream_client_destroy")
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: client
    end function
    integer(c_int) function c_client_address(client, address, length) &
        bind(C, name="slipstream_client_address")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: client
      type(c_ptr), intent(out) :: address
      integer(c_size_t), intent(out) :: length
    end function
    integer(c_int) function c_put_tensor(client, name, name_length, data, shape, rank, dtype, &
        order) &
        bind(C, name="slipstream_put_tensor")
      import :: c_char, c_int, c_int64_t, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
      type(c_ptr), value :: data
      integer(c_int64_t), intent(in) :: shape(*)
      integer(c_size_t), value :: rank
      integer(c_int), value :: dtype
      integer(c_int), value :: order
    end function

    integer(c_int) function c_put_tensor_compressed(client, name, name_length, data, shape, rank, &
        dtype, order, type, type_length, parameters, parameters_length) &
        bind(C, name="slipstream_put_tensor_compressed")
      import :: c_char, c_int, c_int64_t, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
      type(c_ptr), value :: data
      integer(c_int64_t), intent(in) :: shape(*)
      integer(c_size_t), value :: rank
      integer(c_int), value :: dtype
      integer(c_int), value :: order
      character(kind=c_char), intent(in) :: type(*)
      integer(c_size_t), value :: type_length
      character(kind=c_char), intent(in) :: parameters(*)
      integer(c_size_t), value :: parameters_length
    end function
    integer(c_int) function c_unpack_tensor(client, name, name_length, buffer, buffer_bytes, &
        expected_shape, expected_rank, dtype, order) &
        bind(C, name="slipstream_unpack_tensor")
      import :: c_char, c_int, c_int64_t, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
      type(c_ptr), value :: buffer
      integer(c_size_t), value :: buffer_bytes
      integer(c_int64_t), intent(in) :: expected_shape(*)
      integer(c_size_t), value :: expected_rank
      integer(c_int), value :: dtype
      integer(c_int), value :: order
    end function
    integer(c_int) function c_get_tensor(client, name, name_length, tensor) &
        bind(C, name="slipstream_get_tensor")
      import :: c_char, c_int, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
      type(c_ptr), intent(out) :: tensor
    end function
    integer(c_int) function c_tensor_destroy(tensor) &
        bind(C, name="slipstream_tensor_destroy")
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: tensor
    end function
    integer(c_int) function c_tensor_dtype(tensor, dtype) &
        bind(C, name="slipstream_tensor_dtype")
      import :: c_int, c_ptr
      type(c_ptr), value :: tensor
      integer(c_int), intent(out) :: dtype
    end function
    integer(c_int) function c_tensor_shape(tensor, shape, rank) &
        bind(C, name="slipstream_tensor_shape")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: tensor
      type(c_ptr), intent(out) :: shape
      integer(c_size_t), intent(out) :: rank
    end function
    integer(c_int) function c_delete_tensor(client, name, name_length, existed) &
        bind(C, name="slipstream_delete_tensor")
      import :: c_char, c_int, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
      integer(c_int), intent(out) :: existed
    end function
    integer(c_int) function c_tensor_exists(client, name, name_length, exists) &
        bind(C, name="slipstream_tensor_exists")
      import :: c_char, c_int, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
      integer(c_int), intent(out) :: exists
    end function
    integer(c_int) function c_rename_tensor(client, old_name, old_name_length, new_name, &
        new_name_length) &
        bind(C, name="slipstream_rename_tensor")
      import :: c_char, c_int, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: old_name(*)
      integer(c_size_t), value :: old_name_length
      character(kind=c_char), intent(in) :: new_name(*)
      integer(c_size_t), value :: new_name_length
    end function
    integer(c_int) function c_copy_tensor(client, source, source_length, destination, &
        destination_length) &
        bind(C, name="slipstream_copy_tensor")
      import :: c_char, c_int, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: source(*)
      integer(c_size_t), value :: source_length
      character(kind=c_char), intent(in) :: destination(*)
      integer(c_size_t), value :: destination_length
    end function
    integer(c_int) function c_poll_tensor(client, name, name_length, poll_ms, tries, exists) &
        bind(C, name="slipstream_poll_tensor")
      import :: c_char, c_int, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
      integer(c_int), value :: poll_ms
      integer(c_int), value :: tries
      integer(c_int), intent(out) :: exists
    end function
    integer(c_int) function c_key_exists(client, key, key_length, exists) &
        bind(C, name="slipstream_key_exists")
      import :: c_char, c_int, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: key(*)
      integer(c_size_t), value :: key_length
      integer(c_int), intent(out) :: exists
    end function
    integer(c_int) function c_poll_key(client, key, key_length, poll_ms, tries, exists) &
        bind(C, name="slipstream_poll_key")
      import :: c_char, c_int, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: key(*)
      integer(c_size_t), value :: key_length
      integer(c_int), value :: poll_ms
      integer(c_int), value :: tries
      integer(c_int), intent(out) :: exists
    end function
    integer(c_int) function c_wait_for_keys(client, keys, keys_lengths, keys_count, timeout_ms, &
        all_exist) &
        bind(C, name="slipstream_wait_for_keys")
      import :: c_int, c_int64_t, c_ptr, c_size_t
      type(c_ptr), value :: client
      type(c_ptr), intent(in) :: keys(*)
      integer(c_size_t), intent(in) :: keys_lengths(*)
      integer(c_size_t), value :: keys_count
      integer(c_int64_t), value :: timeout_ms
      integer(c_int), intent(out) :: all_exist
    end function
    integer(c_int) function c_put_bytes(client, key, key_length, bytes, bytes_length) &
        bind(C, name="slipstream_put_bytes")
      import :: c_char, c_int, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: key(*)
      integer(c_size_t), value :: key_length
      character(kind=c_char), intent(in) :: bytes(*)
      integer(c_size_t), value :: bytes_length
    end function
    integer(c_int) function c_get_bytes(client, key, key_length, bytes, length) &
        bind(C, name="slipstream_get_bytes")
      import :: c_char, c_int, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: key(*)
      integer(c_size_t), value :: key_length
      type(c_ptr), intent(out) :: bytes
      integer(c_size_t), intent(out) :: length
    end function
    integer(c_int) function c_delete_bytes(client, key, key_length, existed) &
        bind(C, name="slipstream_delete_bytes")
      import :: c_char, c_int, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: key(*)
      integer(c_size_t), value :: key_length
      integer(c_int), intent(out) :: existed
    end function
    integer(c_int) function c_dataset_create(name, name_length, dataset) &
        bind(C, name="slipstream_dataset_create")
      import :: c_char, c_int, c_ptr, c_size_t
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
      type(c_ptr), intent(out) :: dataset
    end function
    integer(c_int) function c_dataset_destroy(dataset) &
        bind(C, name="slipstream_dataset_destroy")
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: dataset
    end function
    integer(c_int) function c_dataset_name(dataset, name, length) &
        bind(C, name="slipstream_dataset_name")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: dataset
      type(c_ptr), intent(out) :: name
      integer(c_size_t), intent(out) :: length
    end function
    integer(c_int) function c_dataset_add_tensor(dataset, name, name_length, data, shape, rank, &
        dtype, order) &
        bind(C, name="slipstream_dataset_add_tensor")
      import :: c_char, c_int, c_int64_t, c_ptr, c_size_t
      type(c_ptr), value :: dataset
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
      type(c_ptr), value :: data
      integer(c_int64_t), intent(in) :: shape(*)
      integer(c_size_t), value :: rank
      integer(c_int), value :: dtype
      integer(c_int), value :: order
    end function
    integer(c_int) function c_dataset_get_tensor(dataset, name, name_length, tensor) &
        bind(C, name="slipstream_dataset_get_tensor")
      import :: c_char, c_int, c_ptr, c_size_t
      type(c_ptr), value :: dataset
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
      type(c_ptr), intent(out) :: tensor
    end function
    integer(c_int) function c_dataset_unpack_tensor(dataset, name, name_length, buffer, &
        buffer_bytes, expected_shape, expected_rank, dtype, order) &
        bind(C, name="slipstream_dataset_unpack_tensor")
      import :: c_char, c_int, c_int64_t, c_ptr, c_size_t
      type(c_ptr), value :: dataset
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
      type(c_ptr), value :: buffer
      integer(c_size_t), value :: buffer_bytes
      integer(c_int64_t), intent(in) :: expected_shape(*)
      integer(c_size_t), value :: expected_rank
      integer(c_int), value :: dtype
      integer(c_int), value :: order
    end function
    integer(c_int) function c_dataset_has_tensor(dataset, name, name_length, has) &
        bind(C, name="slipstream_dataset_has_tensor")
      import :: c_char, c_int, c_ptr, c_size_t
      type(c_ptr), value :: dataset
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
      integer(c_int), intent(out) :: has
    end function
    integer(c_int) function c_dataset_tensor_count(dataset, count) &
        bind(C, name="slipstream_dataset_tensor_count")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: dataset
      integer(c_size_t), intent(out) :: count
    end function
    integer(c_int) function c_dataset_tensor_name(dataset, index, name, length) &
        bind(C, name="slipstream_dataset_tensor_name")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: dataset
      integer(c_size_t), value :: index
      type(c_ptr), intent(out) :: name
      integer(c_size_t), intent(out) :: length
    end function
    integer(c_int) function c_dataset_add_meta_scalar(dataset, field, field_length, value, &
        meta_type) &
        bind(C, name="slipstream_dataset_add_meta_scalar")
      import :: c_char, c_int, c_ptr, c_size_t
      type(c_ptr), value :: dataset
      character(kind=c_char), intent(in) :: field(*)
      integer(c_size_t), value :: field_length
      type(c_ptr), value :: value
      integer(c_int), value :: meta_type
    end function
    integer(c_int) function c_dataset_add_meta_string(dataset, field, field_length, value, &
        value_length) &
        bind(C, name="slipstream_dataset_add_meta_string")
      import :: c_char, c_int, c_ptr, c_size_t
      type(c_ptr), value :: dataset
      character(kind=c_char), intent(in) :: field(*)
      integer(c_size_t), value :: field_length
      character(kind=c_char), intent(in) :: value(*)
      integer(c_size_t), value :: value_length
    end function
    integer(c_int) function c_dataset_get_meta_scalars(dataset, field, field_length, meta_type, &
        values, capacity, count) &
        bind(C, name="slipstream_dataset_get_meta_scalars")
      import :: c_char, c_int, c_ptr, c_size_t
      type(c_ptr), value :: dataset
      character(kind=c_char), intent(in) :: field(*)
      integer(c_size_t), value :: field_length
      integer(c_int), value :: meta_type
      type(c_ptr), value :: values
      integer(c_size_t), value :: capacity
      integer(c_size_t), intent(out) :: count
    end function
    integer(c_int) function c_dataset_get_meta_string_count(dataset, field, field_length, count) &
        bind(C, name="slipstream_dataset_get_meta_string_count")
      import :: c_char, c_int, c_ptr, c_size_t
      type(c_ptr), value :: dataset
      character(kind=c_char), intent(in) :: field(*)
      integer(c_size_t), value :: field_length
      integer(c_size_t), intent(out) :: count
    end function
    integer(c_int) function c_dataset_get_meta_string(dataset, field, field_length, index, &
        value, length) &
        bind(C, name="slipstream_dataset_get_meta_string")
      import :: c_char, c_int, c_ptr, c_size_t
      type(c_ptr), value :: dataset
      character(kind=c_char), intent(in) :: field(*)
      integer(c_size_t), value :: field_length
      integer(c_size_t), value :: index
      type(c_ptr), intent(out) :: value
      integer(c_size_t), intent(out) :: length
    end function
    integer(c_int) function c_dataset_field_count(dataset, count) &
        bind(C, name="slipstream_dataset_field_count")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: dataset
      integer(c_size_t), intent(out) :: count
    end function
    integer(c_int) function c_dataset_field_name(dataset, index, name, length) &
        bind(C, name="slipstream_dataset_field_name")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: dataset
      integer(c_size_t), value :: index
      type(c_ptr), intent(out) :: name
      integer(c_size_t), intent(out) :: length
    end function
    integer(c_int) function c_dataset_has_field(dataset, field, field_length, has) &
        bind(C, name="slipstream_dataset_has_field")
      import :: c_char, c_int, c_ptr, c_size_t
      type(c_ptr), value :: dataset
      character(kind=c_char), intent(in) :: field(*)
      integer(c_size_t), value :: field_length
      integer(c_int), intent(out) :: has
    end function
    integer(c_int) function c_dataset_field_type(dataset, field, field_length, meta_type) &
        bind(C, name="slipstream_dataset_field_type")
      import :: c_char, c_int, c_ptr, c_size_t
      type(c_ptr), value :: dataset
      character(kind=c_char), intent(in) :: field(*)
      integer(c_size_t), value :: field_length
      integer(c_int), intent(out) :: meta_type
    end function
    integer(c_int) function c_dataset_clear_field(dataset, field, field_length) &
        bind(C, name="slipstream_dataset_clear_field")
      import :: c_char, c_int, c_ptr, c_size_t
      type(c_ptr), value :: dataset
      character(kind=c_char), intent(in) :: field(*)
      integer(c_size_t), value :: field_length
    end function
    integer(c_int) function c_put_dataset(client, dataset) &
        bind(C, name="slipstream_put_dataset")
      import :: c_int, c_ptr
      type(c_ptr), value :: client
      type(c_ptr), value :: dataset
    end function
    integer(c_int) function c_get_dataset(client, name, name_length, dataset) &
        bind(C, name="slipstream_get_dataset")
      import :: c_char, c_int, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
      type(c_ptr), intent(out) :: dataset
    end function
    integer(c_int) function c_delete_dataset(client, name, name_length) &
        bind(C, name="slipstream_delete_dataset")
      import :: c_char, c_int, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
    end function
    integer(c_int) function c_dataset_exists(client, name, name_length, exists) &
        bind(C, name="slipstream_dataset_exists")
      import :: c_char, c_int, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
      integer(c_int), intent(out) :: exists
    end function
    integer(c_int) function c_poll_dataset(client, name, name_length, poll_ms, tries, exists) &
        bind(C, name="slipstream_poll_dataset")
      import :: c_char, c_int, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
      integer(c_int), value :: poll_ms
      integer(c_int), value :: tries
      integer(c_int), intent(out) :: exists
    end function
    integer(c_int) function c_copy_dataset(client, source, source_length, destination, &
        destination_length) &
        bind(C, name="slipstream_copy_dataset")
      import :: c_char, c_int, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: source(*)
      integer(c_size_t), value :: source_length
      character(kind=c_char), intent(in) :: destination(*)
      integer(c_size_t), value :: destination_length
    end function
    integer(c_int) function c_rename_dataset(client, old_name, old_name_length, new_name, &
        new_name_length) &
        bind(C, name="slipstream_rename_dataset")
      import :: c_char, c_int, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: old_name(*)
      integer(c_size_t), value :: old_name_length
      character(kind=c_char), intent(in) :: new_name(*)
      integer(c_size_t), value :: new_name_length
    end function
    integer(c_int) function c_append_to_list(client, list_name, list_name_length, dataset) &
        bind(C, name="slipstream_append_to_list")
      import :: c_char, c_int, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: list_name(*)
      integer(c_size_t), value :: list_name_length
      type(c_ptr), value :: dataset
    end function
    integer(c_int) function c_delete_list(client, list_name, list_name_length) &
        bind(C, name="slipstream_delete_list")
      import :: c_char, c_int, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: list_name(*)
      integer(c_size_t), value :: list_name_length
    end function
    integer(c_int) function c_copy_list(client, source, source_length, destination, &
        destination_length) &
        bind(C, name="slipstream_copy_list")
      import :: c_char, c_int, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: source(*)
      integer(c_size_t), value :: source_length
      character(kind=c_char), intent(in) :: destination(*)
      integer(c_size_t), value :: destination_length
    end function
    integer(c_int) function c_rename_list(client, old_name, old_name_length, new_name, &
        new_name_length) &
        bind(C, name="slipstream_rename_list")
      import :: c_char, c_int, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: old_name(*)
      integer(c_size_t), value :: old_name_length
      character(kind=c_char), intent(in) :: new_name(*)
      integer(c_size_t), value :: new_name_length
    end function
    integer(c_int) function c_get_list_length(client, list_name, list_name_length, length) &
        bind(C, name="slipstream_get_list_length")
      import :: c_char, c_int, c_int64_t, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: list_name(*)
      integer(c_size_t), value :: list_name_length
      integer(c_int64_t), intent(out) :: length
    end function
    integer(c_int) function c_poll_list_length(client, list_name, list_name_length, length, &
        poll_ms, tries, reached) &
        bind(C, name="slipstream_poll_list_length")
      import :: c_char, c_int, c_int64_t, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: list_name(*)
      integer(c_size_t), value :: list_name_length
      integer(c_int64_t), value :: length
      integer(c_int), value :: poll_ms
      integer(c_int), value :: tries
      integer(c_int), intent(out) :: reached
    end function
    integer(c_int) function c_poll_list_length_gte(client, list_name, list_name_length, length, &
        poll_ms, tries, reached) &
        bind(C, name="slipstream_poll_list_length_gte")
      import :: c_char, c_int, c_int64_t, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: list_name(*)
      integer(c_size_t), value :: list_name_length
      integer(c_int64_t), value :: length
      integer(c_int), value :: poll_ms
      integer(c_int), value :: tries
      integer(c_int), intent(out) :: reached
    end function
    integer(c_int) function c_poll_list_length_lte(client, list_name, list_name_length, length, &
        poll_ms, tries, reached) &
        bind(C, name="slipstream_poll_list_length_lte")
      import :: c_char, c_int, c_int64_t, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: list_name(*)
      integer(c_size_t), value :: list_name_length
      integer(c_int64_t), value :: length
      integer(c_int), value :: poll_ms
      integer(c_int), value :: tries
      integer(c_int), intent(out) :: reached
    end function
    integer(c_int) function c_get_datasets_from_list(client, list_name, list_name_length, &
        datasets, count) &
        bind(C, name="slipstream_get_datasets_from_list")
      import :: c_char, c_int, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: list_name(*)
      integer(c_size_t), value :: list_name_length
      type(c_ptr), intent(out) :: datasets
      integer(c_size_t), intent(out) :: count
    end function
    integer(c_int) function c_get_dataset_list_range(client, list_name, list_name_length, &
        start_index, end_index, datasets, count) &
        bind(C, name="slipstream_get_dataset_list_range")
      import :: c_char, c_int, c_int64_t, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: list_name(*)
      integer(c_size_t), value :: list_name_length
      integer(c_int64_t), value :: start_index
      integer(c_int64_t), value :: end_index
      type(c_ptr), intent(out) :: datasets
      integer(c_size_t), intent(out) :: count
    end function
    integer(c_int) function c_set_model(client, name, name_length, model, model_length, &
        backend, backend_length, device, device_length, options) &
        bind(C, name="slipstream_set_model")
      import :: c_char, c_int, c_model_options_t, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
      character(kind=c_char), intent(in) :: model(*)
      integer(c_size_t), value :: model_length
      character(kind=c_char), intent(in) :: backend(*)
      integer(c_size_t), value :: backend_length
      character(kind=c_char), intent(in) :: device(*)
      integer(c_size_t), value :: device_length
      type(c_model_options_t), intent(in) :: options
    end function
    integer(c_int) function c_set_model_from_file(client, name, name_length, path, path_length, &
        backend, backend_length, device, device_length, options) &
        bind(C, name="slipstream_set_model_from_file")
      import :: c_char, c_int, c_model_options_t, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
      character(kind=c_char), intent(in) :: path(*)
      integer(c_size_t), value :: path_length
      character(kind=c_char), intent(in) :: backend(*)
      integer(c_size_t), value :: backend_length
      character(kind=c_char), intent(in) :: device(*)
      integer(c_size_t), value :: device_length
      type(c_model_options_t), intent(in) :: options
    end function
    integer(c_int) function c_get_model(client, name, name_length, model, length) &
        bind(C, name="slipstream_get_model")
      import :: c_char, c_int, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
      type(c_ptr), intent(out) :: model
      integer(c_size_t), intent(out) :: length
    end function
    integer(c_int) function c_delete_model(client, name, name_length, existed) &
        bind(C, name="slipstream_delete_model")
      import :: c_char, c_int, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
      integer(c_int), intent(out) :: existed
    end function
    integer(c_int) function c_model_exists(client, name, name_length, exists) &
        bind(C, name="slipstream_model_exists")
      import :: c_char, c_int, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
      integer(c_int), intent(out) :: exists
    end function
    integer(c_int) function c_run_model(client, name, name_length, inputs, inputs_lengths, &
        inputs_count, outputs, outputs_lengths, outputs_count, timeout_ms) &
        bind(C, name="slipstream_run_model")
      import :: c_char, c_int, c_int64_t, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
      type(c_ptr), intent(in) :: inputs(*)
      integer(c_size_t), intent(in) :: inputs_lengths(*)
      integer(c_size_t), value :: inputs_count
      type(c_ptr), intent(in) :: outputs(*)
      integer(c_size_t), intent(in) :: outputs_lengths(*)
      integer(c_size_t), value :: outputs_count
      integer(c_int64_t), value :: timeout_ms
    end function
    integer(c_int) function c_run_model_version(client, name, name_length, inputs, &
        inputs_lengths, inputs_count, outputs, outputs_lengths, outputs_count, timeout_ms, &
        version, ran) bind(C, name="slipstream_run_model_version")
      import :: c_char, c_int, c_int64_t, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
      type(c_ptr), intent(in) :: inputs(*)
      integer(c_size_t), intent(in) :: inputs_lengths(*)
      integer(c_size_t), value :: inputs_count
      type(c_ptr), intent(in) :: outputs(*)
      integer(c_size_t), intent(in) :: outputs_lengths(*)
      integer(c_size_t), value :: outputs_count
      integer(c_int64_t), value :: timeout_ms
      integer(c_int64_t), value :: version
      integer(c_int64_t), intent(out) :: ran
    end function
    integer(c_int) function c_get_model_chunk_size(client, bytes) &
        bind(C, name="slipstream_get_model_chunk_size")
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: client
      integer(c_int64_t), intent(out) :: bytes
    end function
    integer(c_int) function c_set_model_chunk_size(client, bytes) &
        bind(C, name="slipstream_set_model_chunk_size")
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: client
      integer(c_int64_t), value :: bytes
    end function
    integer(c_int) function c_set_script(client, name, name_length, device, device_length, &
        source, source_length, entry_points, entry_points_lengths, entry_points_count) &
        bind(C, name="slipstream_set_script")
      import :: c_char, c_int, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
      character(kind=c_char), intent(in) :: device(*)
      integer(c_size_t), value :: device_length
      character(kind=c_char), intent(in) :: source(*)
      integer(c_size_t), value :: source_length
      type(c_ptr), intent(in) :: entry_points(*)
      integer(c_size_t), intent(in) :: entry_points_lengths(*)
      integer(c_size_t), value :: entry_points_count
    end function
    integer(c_int) function c_set_script_from_file(client, name, name_length, device, &
        device_length, path, path_length, entry_points, entry_points_lengths, &
        entry_points_count) &
        bind(C, name="slipstream_set_script_from_file")
      import :: c_char, c_int, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
      character(kind=c_char), intent(in) :: device(*)
      integer(c_size_t), value :: device_length
      character(kind=c_char), intent(in) :: path(*)
      integer(c_size_t), value :: path_length
      type(c_ptr), intent(in) :: entry_points(*)
      integer(c_size_t), intent(in) :: entry_points_lengths(*)
      integer(c_size_t), value :: entry_points_count
    end function
    integer(c_int) function c_get_script(client, name, name_length, source, length) &
        bind(C, name="slipstream_get_script")
      import :: c_char, c_int, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
      type(c_ptr), intent(out) :: source
      integer(c_size_t), intent(out) :: length
    end function
    integer(c_int) function c_run_script(client, name, name_length, function_name, &
        function_name_length, inputs, inputs_lengths, inputs_count, outputs, outputs_lengths, &
        outputs_count, timeout_ms) &
        bind(C, name="slipstream_run_script")
      import :: c_char, c_int, c_int64_t, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
      character(kind=c_char), intent(in) :: function_name(*)
      integer(c_size_t), value :: function_name_length
      type(c_ptr), intent(in) :: inputs(*)
      integer(c_size_t), intent(in) :: inputs_lengths(*)
      integer(c_size_t), value :: inputs_count
      type(c_ptr), intent(in) :: outputs(*)
      integer(c_size_t), intent(in) :: outputs_lengths(*)
      integer(c_size_t), value :: outputs_count
      integer(c_int64_t), value :: timeout_ms
    end function
    integer(c_int) function c_run_script_with_keys(client, name, name_length, function_name, &
        function_name_length, keys, keys_lengths, keys_count, inputs, inputs_lengths, &
        inputs_count, args, args_lengths, args_count, outputs, outputs_lengths, outputs_count, &
        timeout_ms) &
        bind(C, name="slipstream_run_script_with_keys")
      import :: c_char, c_int, c_int64_t, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
      character(kind=c_char), intent(in) :: function_name(*)
      integer(c_size_t), value :: function_name_length
      type(c_ptr), intent(in) :: keys(*)
      integer(c_size_t), intent(in) :: keys_lengths(*)
      integer(c_size_t), value :: keys_count
      type(c_ptr), intent(in) :: inputs(*)
      integer(c_size_t), intent(in) :: inputs_lengths(*)
      integer(c_size_t), value :: inputs_count
      type(c_ptr), intent(in) :: args(*)
      integer(c_size_t), intent(in) :: args_lengths(*)
      integer(c_size_t), value :: args_count
      type(c_ptr), intent(in) :: outputs(*)
      integer(c_size_t), intent(in) :: outputs_lengths(*)
      integer(c_size_t), value :: outputs_count
      integer(c_int64_t), value :: timeout_ms
    end function
    integer(c_int) function c_delete_script(client, name, name_length, existed) &
        bind(C, name="slipstream_delete_script")
      import :: c_char, c_int, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
      integer(c_int), intent(out) :: existed
    end function
    integer(c_int) function c_model_info(client, name, name_length, info) &
        bind(C, name="slipstream_model_info")
      import :: c_char, c_int, c_model_info_t, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
      type(c_model_info_t), intent(inout) :: info
    end function
    integer(c_int) function c_model_info_clear(info) &
        bind(C, name="slipstream_model_info_clear")
      import :: c_int, c_model_info_t
      type(c_model_info_t), intent(inout) :: info
    end function
    integer(c_int) function c_reset_model_stats(client, name, name_length) &
        bind(C, name="slipstream_reset_model_stats")
      import :: c_char, c_int, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
    end function
    integer(c_int) function c_set_data_source(client, source, source_length) &
        bind(C, name="slipstream_set_data_source")
      import :: c_char, c_int, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: source(*)
      integer(c_size_t), value :: source_length
    end function
    integer(c_int) function c_use_tensor_ensemble_prefix(client, enable) &
        bind(C, name="slipstream_use_tensor_ensemble_prefix")
      import :: c_int, c_ptr
      type(c_ptr), value :: client
      integer(c_int), value :: enable
    end function
    integer(c_int) function c_use_dataset_ensemble_prefix(client, enable) &
        bind(C, name="slipstream_use_dataset_ensemble_prefix")
      import :: c_int, c_ptr
      type(c_ptr), value :: client
      integer(c_int), value :: enable
    end function
    integer(c_int) function c_use_list_ensemble_prefix(client, enable) &
        bind(C, name="slipstream_use_list_ensemble_prefix")
      import :: c_int, c_ptr
      type(c_ptr), value :: client
      integer(c_int), value :: enable
    end function
    integer(c_int) function c_use_model_ensemble_prefix(client, enable) &
        bind(C, name="slipstream_use_model_ensemble_prefix")
      import :: c_int, c_ptr
      type(c_ptr), value :: client
      integer(c_int), value :: enable
    end function
    integer(c_int) function c_model_ensemble_prefix_enabled(client, enabled) &
        bind(C, name="slipstream_model_ensemble_prefix_enabled")
      import :: c_int, c_ptr
      type(c_ptr), value :: client
      integer(c_int), intent(out) :: enabled
    end function
    integer(c_int) function c_info(client, section, section_length, text, length) &
        bind(C, name="slipstream_info")
      import :: c_char, c_int, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: section(*)
      integer(c_size_t), value :: section_length
      type(c_ptr), intent(out) :: text
      integer(c_size_t), intent(out) :: length
    end function

  end interface
end module slipstream_c_api
