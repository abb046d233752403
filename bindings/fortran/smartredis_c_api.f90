! Interfaces to the SmartRedis-compatible C API (include/smartredis/c_client.h, c_dataset.h,
! c_configoptions.h, c_logger.h, c_logcontext.h) for the Fortran modules smartredis_client,
! smartredis_dataset, smartredis_configoptions, smartredis_logcontext and smartredis_logger.
! Internal: programs use those.
! Strings are passed as character arrays plus a length (trailing blanks removed by the caller).
module smartredis_c_api
  use, intrinsic :: iso_c_binding
  implicit none
  private
  public :: enum_kind

  !> The kind of the SRError codes and other enumerators (a C enum).
  integer, parameter :: enum_kind = c_int

  ! The shapes of the C functions that share a signature; the procedures follow.
  abstract interface
    ! put_tensor, unpack_tensor (on a client) and add_tensor, unpack_dataset_tensor (a dataset).
    integer(c_int) function tensor_call(handle, name, name_length, data, dims, n_dims, &
                                        data_type, mem_layout) bind(C)
      import :: c_int, c_char, c_size_t, c_ptr
      type(c_ptr), value :: handle, data
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length, n_dims
      integer(c_size_t), intent(in) :: dims(*)
      integer(c_int), value :: data_type, mem_layout
    end function
    ! The calls on one name: delete_tensor, delete_dataset, delete_model, delete_script,
    ! delete_list.
    integer(c_int) function name_call(client, name, name_length) bind(C)
      import :: c_int, c_char, c_size_t, c_ptr
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
    end function
    ! The calls from one name to another: rename_* and copy_* of tensors, datasets and lists.
    integer(c_int) function two_names_call(client, source, source_length, destination, &
                                             destination_length) bind(C)
      import :: c_int, c_char, c_size_t, c_ptr
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: source(*), destination(*)
      integer(c_size_t), value :: source_length, destination_length
    end function
    ! The existence checks: key_exists, tensor_exists, model_exists, dataset_exists.
    integer(c_int) function exists_call(client, name, name_length, exists) bind(C)
      import :: c_int, c_char, c_size_t, c_ptr, c_bool
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
      logical(c_bool), intent(out) :: exists
    end function
    ! The polls: poll_key, poll_tensor, poll_model, poll_dataset.
    integer(c_int) function poll_call(client, name, name_length, poll_ms, tries, exists) bind(C)
      import :: c_int, c_char, c_size_t, c_ptr, c_bool
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
      integer(c_int), value :: poll_ms, tries
      logical(c_bool), intent(out) :: exists
    end function
    ! The list-length polls: poll_list_length, poll_list_length_gte, poll_list_length_lte.
    integer(c_int) function poll_length_call(client, name, name_length, length, poll_ms, &
                                               tries, reached) bind(C)
      import :: c_int, c_char, c_size_t, c_ptr, c_bool
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
      integer(c_int), value :: length, poll_ms, tries
      logical(c_bool), intent(out) :: reached
    end function
    ! use_*_ensemble_prefix.
    integer(c_int) function flag_call(client, flag) bind(C)
      import :: c_int, c_ptr, c_bool
      type(c_ptr), value :: client
      logical(c_bool), value :: flag
    end function
    ! set_script_from_file and set_script (`script` is a file name or the source).
    integer(c_int) function set_script_call(client, name, name_length, device, device_length, &
                                              script, script_length) bind(C)
      import :: c_int, c_char, c_size_t, c_ptr
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*), device(*), script(*)
      integer(c_size_t), value :: name_length, device_length, script_length
    end function
    ! set_script_from_file_multigpu and set_script_multigpu.
    integer(c_int) function set_script_multigpu_call(client, name, name_length, script, &
                                                       script_length, first_gpu, num_gpus) bind(C)
      import :: c_int, c_char, c_size_t, c_ptr
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*), script(*)
      integer(c_size_t), value :: name_length, script_length
      integer(c_int), value :: first_gpu, num_gpus
    end function
    ! delete_model_multigpu and delete_script_multigpu.
    integer(c_int) function delete_multigpu_call(client, name, name_length, first_gpu, &
                                                   num_gpus) bind(C)
      import :: c_int, c_char, c_size_t, c_ptr
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
      integer(c_int), value :: first_gpu, num_gpus
    end function
  end interface

  ! Tensors.
  procedure(tensor_call), bind(C, name="put_tensor") :: put_tensor_c
  procedure(tensor_call), bind(C, name="unpack_tensor") :: unpack_tensor_c
  procedure(tensor_call), bind(C, name="add_tensor") :: add_tensor_c
  procedure(tensor_call), bind(C, name="unpack_dataset_tensor") :: unpack_dataset_tensor_c
  ! Calls on one name.
  procedure(name_call), bind(C, name="delete_tensor") :: delete_tensor_c
  procedure(name_call), bind(C, name="delete_dataset") :: delete_dataset_c
  procedure(name_call), bind(C, name="delete_model") :: delete_model_c
  procedure(name_call), bind(C, name="delete_script") :: delete_script_c
  procedure(name_call), bind(C, name="delete_list") :: delete_list_c
  ! From one name to another.
  procedure(two_names_call), bind(C, name="rename_tensor") :: rename_tensor_c
  procedure(two_names_call), bind(C, name="copy_tensor") :: copy_tensor_c
  procedure(two_names_call), bind(C, name="rename_dataset") :: rename_dataset_c
  procedure(two_names_call), bind(C, name="copy_dataset") :: copy_dataset_c
  procedure(two_names_call), bind(C, name="rename_list") :: rename_list_c
  procedure(two_names_call), bind(C, name="copy_list") :: copy_list_c
  ! Existence checks and polls.
  procedure(exists_call), bind(C, name="key_exists") :: key_exists_c
  procedure(exists_call), bind(C, name="tensor_exists") :: tensor_exists_c
  procedure(exists_call), bind(C, name="model_exists") :: model_exists_c
  procedure(exists_call), bind(C, name="dataset_exists") :: dataset_exists_c
  procedure(poll_call), bind(C, name="poll_key") :: poll_key_c
  procedure(poll_call), bind(C, name="poll_tensor") :: poll_tensor_c
  procedure(poll_call), bind(C, name="poll_model") :: poll_model_c
  procedure(poll_call), bind(C, name="poll_dataset") :: poll_dataset_c
  procedure(poll_length_call), bind(C, name="poll_list_length") :: poll_list_length_c
  procedure(poll_length_call), bind(C, name="poll_list_length_gte") :: poll_list_length_gte_c
  procedure(poll_length_call), bind(C, name="poll_list_length_lte") :: poll_list_length_lte_c
  ! Ensemble prefixes.
  procedure(flag_call), bind(C, name="use_tensor_ensemble_prefix") :: use_tensor_ensemble_prefix_c
  procedure(flag_call), bind(C, name="use_dataset_ensemble_prefix") :: use_dataset_ensemble_prefix_c
  procedure(flag_call), bind(C, name="use_model_ensemble_prefix") :: use_model_ensemble_prefix_c
  procedure(flag_call), bind(C, name="use_list_ensemble_prefix") :: use_list_ensemble_prefix_c
  ! Scripts.
  procedure(set_script_call), bind(C, name="set_script_from_file") :: set_script_from_file_c
  procedure(set_script_call), bind(C, name="set_script") :: set_script_c
  procedure(set_script_multigpu_call), bind(C, name="set_script_from_file_multigpu") :: &
      set_script_from_file_multigpu_c
  procedure(set_script_multigpu_call), bind(C, name="set_script_multigpu") :: set_script_multigpu_c
  procedure(delete_multigpu_call), bind(C, name="delete_model_multigpu") :: delete_model_multigpu_c
  procedure(delete_multigpu_call), bind(C, name="delete_script_multigpu") :: &
      delete_script_multigpu_c

  interface
    ! ---- Errors -------------------------------------------------------------------------------
    type(c_ptr) function sr_get_last_error_c() bind(C, name="SRGetLastError")
      import :: c_ptr
    end function
    subroutine sr_set_fortran_error_c(message, length) &
        bind(C, name="slipstream_smartredis_set_fortran_error")
      import :: c_char, c_size_t
      character(kind=c_char), intent(in) :: message(*)
      integer(c_size_t), value :: length
    end subroutine

    ! ---- Clients ------------------------------------------------------------------------------
    integer(c_int) function simple_create_client_c(logger_name, logger_name_length, new_client) &
        bind(C, name="SimpleCreateClient")
      import :: c_int, c_char, c_size_t, c_ptr
      character(kind=c_char), intent(in) :: logger_name(*)
      integer(c_size_t), value :: logger_name_length
      type(c_ptr), intent(out) :: new_client
    end function
    integer(c_int) function smartredis_c_client_c(cluster, logger_name, logger_name_length, &
                                                  new_client) bind(C, name="SmartRedisCClient")
      import :: c_int, c_bool, c_char, c_size_t, c_ptr
      logical(c_bool), value :: cluster
      character(kind=c_char), intent(in) :: logger_name(*)
      integer(c_size_t), value :: logger_name_length
      type(c_ptr), intent(out) :: new_client
    end function
    integer(c_int) function create_client_c(config_options, logger_name, logger_name_length, &
                                            new_client) bind(C, name="CreateClient")
      import :: c_int, c_char, c_size_t, c_ptr
      type(c_ptr), value :: config_options
      character(kind=c_char), intent(in) :: logger_name(*)
      integer(c_size_t), value :: logger_name_length
      type(c_ptr), intent(out) :: new_client
    end function
    integer(c_int) function delete_c_client_c(client) bind(C, name="DeleteCClient")
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: client
    end function
    type(c_ptr) function client_to_string_c(client) bind(C, name="client_to_string")
      import :: c_ptr
      type(c_ptr), value :: client
    end function

    ! ---- Tensors ------------------------------------------------------------------------------

    ! ---- Models and scripts -------------------------------------------------------------------
    ! set_model_from_file and set_model (`model` is a file name or the model's bytes): `device`
    ! is a device name, or for the *_multigpu forms first_gpu and num_gpus as two c_int values
    ! (see the wrappers).
    integer(c_int) function set_model_from_file_c(client, name, name_length, model, &
        model_length, backend, backend_length, device, device_length, batch_size, &
        min_batch_size, min_batch_timeout, tag, tag_length, inputs, input_lengths, n_inputs, &
        outputs, output_lengths, n_outputs) bind(C, name="set_model_from_file")
      import :: c_int, c_char, c_size_t, c_ptr
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*), model(*), backend(*), device(*), tag(*)
      integer(c_size_t), value :: name_length, model_length, backend_length, device_length, &
                                  tag_length, n_inputs, n_outputs
      integer(c_int), value :: batch_size, min_batch_size, min_batch_timeout
      type(c_ptr), intent(in) :: inputs(*), outputs(*)
      integer(c_size_t), intent(in) :: input_lengths(*), output_lengths(*)
    end function
    integer(c_int) function set_model_c(client, name, name_length, model, &
        model_length, backend, backend_length, device, device_length, batch_size, &
        min_batch_size, min_batch_timeout, tag, tag_length, inputs, input_lengths, n_inputs, &
        outputs, output_lengths, n_outputs) bind(C, name="set_model")
      import :: c_int, c_char, c_size_t, c_ptr
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*), model(*), backend(*), device(*), tag(*)
      integer(c_size_t), value :: name_length, model_length, backend_length, device_length, &
                                  tag_length, n_inputs, n_outputs
      integer(c_int), value :: batch_size, min_batch_size, min_batch_timeout
      type(c_ptr), intent(in) :: inputs(*), outputs(*)
      integer(c_size_t), intent(in) :: input_lengths(*), output_lengths(*)
    end function
    integer(c_int) function set_model_from_file_multigpu_c(client, name, name_length, model, &
        model_length, backend, backend_length, first_gpu, num_gpus, batch_size, &
        min_batch_size, min_batch_timeout, tag, tag_length, inputs, input_lengths, n_inputs, &
        outputs, output_lengths, n_outputs) bind(C, name="set_model_from_file_multigpu")
      import :: c_int, c_char, c_size_t, c_ptr
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*), model(*), backend(*), tag(*)
      integer(c_size_t), value :: name_length, model_length, backend_length, tag_length, &
                                  n_inputs, n_outputs
      integer(c_int), value :: first_gpu, num_gpus, batch_size, min_batch_size, min_batch_timeout
      type(c_ptr), intent(in) :: inputs(*), outputs(*)
      integer(c_size_t), intent(in) :: input_lengths(*), output_lengths(*)
    end function
    integer(c_int) function set_model_multigpu_c(client, name, name_length, model, &
        model_length, backend, backend_length, first_gpu, num_gpus, batch_size, &
        min_batch_size, min_batch_timeout, tag, tag_length, inputs, input_lengths, n_inputs, &
        outputs, output_lengths, n_outputs) bind(C, name="set_model_multigpu")
      import :: c_int, c_char, c_size_t, c_ptr
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*), model(*), backend(*), tag(*)
      integer(c_size_t), value :: name_length, model_length, backend_length, tag_length, &
                                  n_inputs, n_outputs
      integer(c_int), value :: first_gpu, num_gpus, batch_size, min_batch_size, min_batch_timeout
      type(c_ptr), intent(in) :: inputs(*), outputs(*)
      integer(c_size_t), intent(in) :: input_lengths(*), output_lengths(*)
    end function
    ! The bytes (get_model) or source (get_script) stay the client's until DeleteCClient.
    integer(c_int) function get_model_c(client, name, name_length, model_length, model) &
        bind(C, name="get_model")
      import :: c_int, c_char, c_size_t, c_ptr
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
      integer(c_size_t), intent(out) :: model_length
      type(c_ptr), intent(out) :: model
    end function
    integer(c_int) function get_script_c(client, name, name_length, script, script_length) &
        bind(C, name="get_script")
      import :: c_int, c_char, c_size_t, c_ptr
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
      type(c_ptr), intent(out) :: script
      integer(c_size_t), intent(out) :: script_length
    end function
    integer(c_int) function run_model_c(client, name, name_length, inputs, input_lengths, &
        n_inputs, outputs, output_lengths, n_outputs) bind(C, name="run_model")
      import :: c_int, c_char, c_size_t, c_ptr
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length, n_inputs, n_outputs
      type(c_ptr), intent(in) :: inputs(*), outputs(*)
      integer(c_size_t), intent(in) :: input_lengths(*), output_lengths(*)
    end function
    integer(c_int) function run_model_multigpu_c(client, name, name_length, inputs, &
        input_lengths, n_inputs, outputs, output_lengths, n_outputs, offset, first_gpu, &
        num_gpus) bind(C, name="run_model_multigpu")
      import :: c_int, c_char, c_size_t, c_ptr
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length, n_inputs, n_outputs
      type(c_ptr), intent(in) :: inputs(*), outputs(*)
      integer(c_size_t), intent(in) :: input_lengths(*), output_lengths(*)
      integer(c_int), value :: offset, first_gpu, num_gpus
    end function
    integer(c_int) function run_script_c(client, name, name_length, func, func_length, inputs, &
        input_lengths, n_inputs, outputs, output_lengths, n_outputs) bind(C, name="run_script")
      import :: c_int, c_char, c_size_t, c_ptr
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*), func(*)
      integer(c_size_t), value :: name_length, func_length, n_inputs, n_outputs
      type(c_ptr), intent(in) :: inputs(*), outputs(*)
      integer(c_size_t), intent(in) :: input_lengths(*), output_lengths(*)
    end function
    integer(c_int) function run_script_multigpu_c(client, name, name_length, func, &
        func_length, inputs, input_lengths, n_inputs, outputs, output_lengths, n_outputs, &
        offset, first_gpu, num_gpus) bind(C, name="run_script_multigpu")
      import :: c_int, c_char, c_size_t, c_ptr
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*), func(*)
      integer(c_size_t), value :: name_length, func_length, n_inputs, n_outputs
      type(c_ptr), intent(in) :: inputs(*), outputs(*)
      integer(c_size_t), intent(in) :: input_lengths(*), output_lengths(*)
      integer(c_int), value :: offset, first_gpu, num_gpus
    end function

    ! ---- Datasets through the client ----------------------------------------------------------
    integer(c_int) function put_dataset_c(client, dataset) bind(C, name="put_dataset")
      import :: c_int, c_ptr
      type(c_ptr), value :: client, dataset
    end function
    integer(c_int) function get_dataset_c(client, name, name_length, dataset) &
        bind(C, name="get_dataset")
      import :: c_int, c_char, c_size_t, c_ptr
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
      type(c_ptr), intent(out) :: dataset
    end function
    integer(c_int) function set_data_source_c(client, source, source_length) &
        bind(C, name="set_data_source")
      import :: c_int, c_char, c_size_t, c_ptr
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: source(*)
      integer(c_size_t), value :: source_length
    end function
    integer(c_int) function append_to_list_c(client, name, name_length, dataset) &
        bind(C, name="append_to_list")
      import :: c_int, c_char, c_size_t, c_ptr
      type(c_ptr), value :: client, dataset
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
    end function
    integer(c_int) function get_list_length_c(client, name, name_length, length) &
        bind(C, name="get_list_length")
      import :: c_int, c_char, c_size_t, c_ptr
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
      integer(c_int), intent(out) :: length
    end function
    integer(c_int) function get_dataset_list_range_c(client, name, name_length, start_index, &
        end_index, datasets, count) bind(C, name="get_dataset_list_range")
      import :: c_int, c_char, c_size_t, c_ptr
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
      integer(c_int), value :: start_index, end_index
      type(c_ptr), intent(out) :: datasets
      integer(c_size_t), intent(out) :: count
    end function

    ! ---- Datasets -----------------------------------------------------------------------------
    integer(c_int) function c_dataset_c(name, name_length, dataset) bind(C, name="CDataSet")
      import :: c_int, c_char, c_size_t, c_ptr
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
      type(c_ptr), intent(out) :: dataset
    end function
    integer(c_int) function deallocate_dataset_c(dataset) bind(C, name="DeallocateDataSet")
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: dataset
    end function
    integer(c_int) function add_meta_scalar_c(dataset, name, name_length, data, meta_type) &
        bind(C, name="add_meta_scalar")
      import :: c_int, c_char, c_size_t, c_ptr
      type(c_ptr), value :: dataset, data
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
      integer(c_int), value :: meta_type
    end function
    integer(c_int) function add_meta_string_c(dataset, name, name_length, data, data_length) &
        bind(C, name="add_meta_string")
      import :: c_int, c_char, c_size_t, c_ptr
      type(c_ptr), value :: dataset
      character(kind=c_char), intent(in) :: name(*), data(*)
      integer(c_size_t), value :: name_length, data_length
    end function
    integer(c_int) function get_meta_scalars_c(dataset, name, name_length, length, meta_type, &
                                               data) bind(C, name="get_meta_scalars")
      import :: c_int, c_char, c_size_t, c_ptr
      type(c_ptr), value :: dataset
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
      integer(c_size_t), intent(out) :: length
      integer(c_int), intent(out) :: meta_type
      type(c_ptr), intent(out) :: data
    end function
    integer(c_int) function get_meta_strings_c(dataset, name, name_length, data, count, &
                                               lengths) bind(C, name="get_meta_strings")
      import :: c_int, c_char, c_size_t, c_ptr
      type(c_ptr), value :: dataset
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
      type(c_ptr), intent(out) :: data, lengths
      integer(c_size_t), intent(out) :: count
    end function
    integer(c_int) function get_tensor_type_c(dataset, name, name_length, ttype) &
        bind(C, name="get_tensor_type")
      import :: c_int, c_char, c_size_t, c_ptr
      type(c_ptr), value :: dataset
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
      integer(c_int), intent(out) :: ttype
    end function
    integer(c_int) function get_metadata_field_type_c(dataset, name, name_length, mdtype) &
        bind(C, name="get_metadata_field_type")
      import :: c_int, c_char, c_size_t, c_ptr
      type(c_ptr), value :: dataset
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
      integer(c_int), intent(out) :: mdtype
    end function
    !> dims: the caller's array of ndims entries (in), the rank (out).
    integer(c_int) function get_tensor_dims_c(dataset, name, name_length, dims, ndims) &
        bind(C, name="get_tensor_dims")
      import :: c_int, c_char, c_size_t, c_ptr
      type(c_ptr), value :: dataset
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
      type(c_ptr), intent(inout) :: dims
      integer(c_size_t), intent(inout) :: ndims
    end function
    type(c_ptr) function dataset_to_string_c(dataset) bind(C, name="dataset_to_string")
      import :: c_ptr
      type(c_ptr), value :: dataset
    end function

    ! ---- Logging contexts (c_logcontext.h) ----------------------------------------------------
    integer(c_int) function smartredis_c_logcontext_c(context, context_length, new_logcontext) &
        bind(C, name="SmartRedisCLogContext")
      import :: c_int, c_char, c_size_t, c_ptr
      character(kind=c_char), intent(in) :: context(*)
      integer(c_size_t), value :: context_length
      type(c_ptr), intent(out) :: new_logcontext
    end function
    integer(c_int) function deallocate_logcontext_c(logcontext) &
        bind(C, name="DeallocateLogContext")
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: logcontext
    end function

    ! ---- ConfigOptions (c_configoptions.h; the objects live until the process ends) ----------
    integer(c_int) function create_configoptions_from_environment_c(db_suffix, &
        db_suffix_length, new_configoptions) bind(C, name="create_configoptions_from_environment")
      import :: c_int, c_char, c_size_t, c_ptr
      character(kind=c_char), intent(in) :: db_suffix(*)
      integer(c_size_t), value :: db_suffix_length
      type(c_ptr), intent(out) :: new_configoptions
    end function
    integer(c_int) function get_integer_option_c(options, option_name, option_name_length, &
                                                 result) bind(C, name="get_integer_option")
      import :: c_int, c_char, c_size_t, c_ptr, c_int64_t
      type(c_ptr), value :: options
      character(kind=c_char), intent(in) :: option_name(*)
      integer(c_size_t), value :: option_name_length
      integer(c_int64_t), intent(out) :: result
    end function
    integer(c_int) function get_string_option_c(options, option_name, option_name_length, &
                                                result, result_length) &
        bind(C, name="get_string_option")
      import :: c_int, c_char, c_size_t, c_ptr
      type(c_ptr), value :: options
      character(kind=c_char), intent(in) :: option_name(*)
      integer(c_size_t), value :: option_name_length
      type(c_ptr), intent(out) :: result
      integer(c_size_t), intent(out) :: result_length
    end function
    integer(c_int) function is_configured_c(options, option_name, option_name_length, &
                                            result) bind(C, name="is_configured")
      import :: c_int, c_char, c_size_t, c_ptr, c_bool
      type(c_ptr), value :: options
      character(kind=c_char), intent(in) :: option_name(*)
      integer(c_size_t), value :: option_name_length
      logical(c_bool), intent(out) :: result
    end function
    integer(c_int) function override_integer_option_c(options, option_name, &
        option_name_length, value) bind(C, name="override_integer_option")
      import :: c_int, c_char, c_size_t, c_ptr, c_int64_t
      type(c_ptr), value :: options
      character(kind=c_char), intent(in) :: option_name(*)
      integer(c_size_t), value :: option_name_length
      integer(c_int64_t), value :: value
    end function
    integer(c_int) function override_string_option_c(options, option_name, &
        option_name_length, value, value_length) bind(C, name="override_string_option")
      import :: c_int, c_char, c_size_t, c_ptr
      type(c_ptr), value :: options
      character(kind=c_char), intent(in) :: option_name(*), value(*)
      integer(c_size_t), value :: option_name_length, value_length
    end function
  end interface

  ! ---- Logging (c_logger.h): a client or dataset handle as context, or the context as text ----
  abstract interface
    subroutine log_handle_call(context, level, data, data_length) bind(C)
      import :: c_int, c_char, c_size_t, c_ptr
      type(c_ptr), value :: context
      integer(c_int), value :: level
      character(kind=c_char), intent(in) :: data(*)
      integer(c_size_t), value :: data_length
    end subroutine
    subroutine log_text_call(context, context_length, level, data, data_length) bind(C)
      import :: c_int, c_char, c_size_t
      character(kind=c_char), intent(in) :: context(*), data(*)
      integer(c_size_t), value :: context_length, data_length
      integer(c_int), value :: level
    end subroutine
  end interface
  procedure(log_handle_call), bind(C, name="log_data_noexcept") :: log_data_c
  procedure(log_handle_call), bind(C, name="log_warning_noexcept") :: log_warning_c
  procedure(log_handle_call), bind(C, name="log_error_noexcept") :: log_error_c
  procedure(log_text_call), bind(C, name="log_data_noexcept_string") :: log_data_string_c
  procedure(log_text_call), bind(C, name="log_warning_noexcept_string") :: log_warning_string_c
  procedure(log_text_call), bind(C, name="log_error_noexcept_string") :: log_error_string_c

  public :: sr_get_last_error_c, sr_set_fortran_error_c
  public :: create_client_c, get_model_c, get_script_c
  public :: create_configoptions_from_environment_c, get_integer_option_c, get_string_option_c, &
            is_configured_c, override_integer_option_c, override_string_option_c
  public :: log_handle_call, log_text_call, log_data_c, log_warning_c, log_error_c, &
            log_data_string_c, log_warning_string_c, log_error_string_c
  public :: simple_create_client_c, smartredis_c_client_c, delete_c_client_c, client_to_string_c
  public :: put_tensor_c, unpack_tensor_c
  public :: delete_tensor_c, delete_dataset_c, delete_model_c, delete_script_c, delete_list_c
  public :: rename_tensor_c, copy_tensor_c, rename_dataset_c, copy_dataset_c, rename_list_c, &
            copy_list_c
  public :: key_exists_c, tensor_exists_c, model_exists_c, dataset_exists_c, poll_key_c, &
            poll_tensor_c, poll_model_c, poll_dataset_c, poll_list_length_c, &
            poll_list_length_gte_c, poll_list_length_lte_c
  public :: use_tensor_ensemble_prefix_c, use_dataset_ensemble_prefix_c, &
            use_model_ensemble_prefix_c, use_list_ensemble_prefix_c
  public :: set_script_from_file_c, set_script_c, set_script_from_file_multigpu_c, &
            set_script_multigpu_c, delete_model_multigpu_c, delete_script_multigpu_c
  public :: set_model_from_file_c, set_model_c, set_model_from_file_multigpu_c, &
            set_model_multigpu_c, run_model_c, run_model_multigpu_c, run_script_c, &
            run_script_multigpu_c
  public :: put_dataset_c, get_dataset_c, set_data_source_c, append_to_list_c, &
            get_list_length_c, get_dataset_list_range_c
  public :: c_dataset_c, deallocate_dataset_c, add_tensor_c, unpack_dataset_tensor_c, &
            add_meta_scalar_c, add_meta_string_c, get_meta_scalars_c, get_meta_strings_c, &
            get_tensor_type_c, get_metadata_field_type_c, get_tensor_dims_c, dataset_to_string_c
  public :: smartredis_c_logcontext_c, deallocate_logcontext_c
  public :: tensor_call, exists_call, poll_call, poll_length_call, flag_call
  public :: tensor_with, exists_with, poll_with, poll_length_with, c_string_copy, c_chars_copy

contains

  !> Calls `call` (a tensor_call) on `handle` for the `n_elements` elements at `data`, a
  !> Fortran array of dims `dims` (checked by dims_for_c) and type `data_type`.
  integer(enum_kind) function tensor_with(call, handle, name, data, n_elements, dims, &
                                          data_type) result(code)
    procedure(tensor_call) :: call
    type(c_ptr), intent(in) :: handle, data
    character(len=*), intent(in) :: name
    integer, intent(in) :: n_elements, dims(:), data_type
    integer(c_size_t), allocatable :: c_dims(:)
    integer(c_int), parameter :: fortran_contiguous = 4  ! SRMemLayoutFortranContiguous
    code = dims_for_c(dims, n_elements, c_dims)
    if (code /= 0) return
    code = call(handle, name, len_trim(name, kind=c_size_t), data, c_dims, &
                size(c_dims, kind=c_size_t), int(data_type, c_int), fortran_contiguous)
  end function tensor_with

  !> An existence check (an exists_call) of `name` on `client`.
  integer(enum_kind) function exists_with(call, client, name, exists) result(code)
    procedure(exists_call) :: call
    type(c_ptr), intent(in) :: client
    character(len=*), intent(in) :: name
    logical, intent(out) :: exists
    logical(c_bool) :: flag
    flag = .false.
    code = call(client, name, len_trim(name, kind=c_size_t), flag)
    exists = flag
  end function exists_with

  !> A poll (a poll_call) for `name` on `client`.
  integer(enum_kind) function poll_with(call, client, name, poll_ms, tries, exists) result(code)
    procedure(poll_call) :: call
    type(c_ptr), intent(in) :: client
    character(len=*), intent(in) :: name
    integer, intent(in) :: poll_ms, tries
    logical, intent(out) :: exists
    logical(c_bool) :: flag
    flag = .false.
    code = call(client, name, len_trim(name, kind=c_size_t), int(poll_ms, c_int), &
                int(tries, c_int), flag)
    exists = flag
  end function poll_with

  !> A list-length poll (a poll_length_call) of list `name` on `client`.
  integer(enum_kind) function poll_length_with(call, client, name, length, poll_ms, tries, &
                                               reached) result(code)
    procedure(poll_length_call) :: call
    type(c_ptr), intent(in) :: client
    character(len=*), intent(in) :: name
    integer, intent(in) :: length, poll_ms, tries
    logical, intent(out) :: reached
    logical(c_bool) :: flag
    flag = .false.
    code = call(client, name, len_trim(name, kind=c_size_t), int(length, c_int), &
                int(poll_ms, c_int), int(tries, c_int), flag)
    reached = flag
  end function poll_length_with

  !> A Fortran copy of the NUL-terminated C string at `pointer` (borrowed, not freed).
  function c_string_copy(pointer) result(text)
    type(c_ptr), intent(in) :: pointer
    character(len=:), allocatable :: text
    interface
      integer(c_size_t) function c_strlen(s) bind(C, name="strlen")
        import :: c_ptr, c_size_t
        type(c_ptr), value :: s
      end function c_strlen
    end interface
    text = c_chars_copy(pointer, c_strlen(pointer))
  end function c_string_copy

  !> A Fortran copy of the `length` characters at `pointer` (borrowed, not freed; no NUL needed).
  function c_chars_copy(pointer, length) result(text)
    type(c_ptr), intent(in) :: pointer
    integer(c_size_t), intent(in) :: length
    character(len=:), allocatable :: text
    character(kind=c_char), pointer :: chars(:)
    integer(c_size_t) :: i
    allocate(character(len=length) :: text)
    if (length == 0) return
    call c_f_pointer(pointer, chars, [length])
    do i = 1, length
      text(i:i) = chars(i)
    end do
  end function c_chars_copy

  !> The dims of a tensor as the C API takes them; SRParameterError (5) with a message when they
  !> do not describe the `n_elements` elements of the caller's array (so that nothing is read or
  !> written beyond it), else SRNoError (0).
  integer(enum_kind) function dims_for_c(dims, n_elements, c_dims) result(code)
    integer, intent(in) :: dims(:)
    integer, intent(in) :: n_elements
    integer(c_size_t), allocatable, intent(out) :: c_dims(:)
    character(len=160) :: message
    integer(c_int64_t) :: count
    count = product(int(dims, c_int64_t))
    if (size(dims) == 0 .or. any(dims < 1) .or. count /= n_elements) then
      write(message, '(a,i0,a,i0,a)') 'dims (', size(dims), ' dimensions, ', count, &
          ' elements) do not match the array; pass shape(array)'
      if (size(dims) > 0 .and. all(dims >= 1)) then
        write(message, '(a,i0,a,i0,a)') 'dims hold ', count, ' elements but the array has ', &
            n_elements, '; pass shape(array)'
      end if
      call sr_set_fortran_error_c(trim(message), len_trim(message, kind=c_size_t))
      code = 5  ! SRParameterError
      return
    end if
    c_dims = int(dims, c_size_t)
    code = 0  ! SRNoError
  end function dims_for_c

end module smartredis_c_api
