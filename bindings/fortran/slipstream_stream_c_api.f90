! Interfaces to the "Streams" section of the C API (include/slipstream.h) and its option structs,
! used by the module `slipstream_streams`. Not meant for direct use.
module slipstream_stream_c_api
  use, intrinsic :: iso_c_binding
  use slipstream_c_api, only: c_client_options_t
  implicit none
  public

  !> slipstream_stream_writer_options_t
  type, bind(C) :: c_stream_writer_options_t
    integer(c_int64_t) :: queue_limit = 2
    integer(c_int64_t) :: expected_groups = 0
    integer(c_int) :: end_on_writer_failure = 0
    integer(c_int64_t) :: step_timeout_ms = 0
    integer(c_int64_t) :: begin_timeout_ms = 0
    type(c_ptr) :: hostname = c_null_ptr
    integer(c_size_t) :: hostname_length = 0
    integer(c_int64_t) :: shared_memory_min_bytes = 65536
    integer(c_int) :: reserve_next_step = 1
    integer(c_int) :: first_step_precious = 0
  end type c_stream_writer_options_t

  !> slipstream_stream_reader_options_t
  type, bind(C) :: c_stream_reader_options_t
    integer(c_int32_t) :: policy = 0
    integer(c_int32_t) :: start = 0
    type(c_ptr) :: strategy = c_null_ptr
    integer(c_size_t) :: strategy_length = 0
    integer(c_int64_t) :: split_dimension = 0
    integer(c_int) :: no_empty_readers = 0
    integer(c_int64_t) :: next_timeout_ms = 0
    type(c_ptr) :: hostname = c_null_ptr
    integer(c_size_t) :: hostname_length = 0
    integer(c_int32_t) :: step_distribution = 0
  end type c_stream_reader_options_t

  interface
    integer(c_int) function c_stream_writer_create(client_options, stream, stream_length, rank, &
        writers, options, writer) bind(C, name="slipstream_stream_writer_create")
      import :: c_client_options_t, c_stream_writer_options_t, c_char, c_int, c_int32_t, c_ptr, &
                c_size_t
      type(c_client_options_t), intent(in) :: client_options
      character(kind=c_char), intent(in) :: stream(*)
      integer(c_size_t), value :: stream_length
      integer(c_int32_t), value :: rank, writers
      type(c_stream_writer_options_t), intent(in) :: options
      type(c_ptr), intent(out) :: writer
    end function
    integer(c_int) function c_stream_writer_destroy(writer) &
        bind(C, name="slipstream_stream_writer_destroy")
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: writer
    end function
    integer(c_int) function c_stream_set_operator(writer, component, component_length, type, &
        type_length, parameters, parameters_length) bind(C, name="slipstream_stream_set_operator")
      import :: c_char, c_int, c_ptr, c_size_t
      type(c_ptr), value :: writer
      character(kind=c_char), intent(in) :: component(*), type(*), parameters(*)
      integer(c_size_t), value :: component_length, type_length, parameters_length
    end function
    integer(c_int) function c_stream_begin_step(writer, step) &
        bind(C, name="slipstream_stream_begin_step")
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: writer
      integer(c_int64_t), value :: step
    end function
    integer(c_int) function c_stream_put_chunk(writer, component, component_length, dtype, ndims, &
        global_extent, offset, extent, data, bytes) bind(C, name="slipstream_stream_put_chunk")
      import :: c_char, c_int, c_int64_t, c_ptr, c_size_t
      type(c_ptr), value :: writer
      character(kind=c_char), intent(in) :: component(*)
      integer(c_size_t), value :: component_length
      integer(c_int), value :: dtype
      integer(c_size_t), value :: ndims
      integer(c_int64_t), intent(in) :: global_extent(*), offset(*), extent(*)
      type(c_ptr), value :: data
      integer(c_size_t), value :: bytes
    end function
    integer(c_int) function c_stream_put_chunk_copy(writer, component, component_length, dtype, &
        ndims, global_extent, offset, extent, data, bytes) &
        bind(C, name="slipstream_stream_put_chunk_copy")
      import :: c_char, c_int, c_int64_t, c_ptr, c_size_t
      type(c_ptr), value :: writer
      character(kind=c_char), intent(in) :: component(*)
      integer(c_size_t), value :: component_length
      integer(c_int), value :: dtype
      integer(c_size_t), value :: ndims
      integer(c_int64_t), intent(in) :: global_extent(*), offset(*), extent(*)
      type(c_ptr), value :: data
      integer(c_size_t), value :: bytes
    end function
    integer(c_int) function c_stream_set_attribute_string(writer, level, path, path_length, name, &
        name_length, value, value_length) bind(C, name="slipstream_stream_set_attribute_string")
      import :: c_char, c_int, c_int32_t, c_ptr, c_size_t
      type(c_ptr), value :: writer
      integer(c_int32_t), value :: level
      character(kind=c_char), intent(in) :: path(*), name(*), value(*)
      integer(c_size_t), value :: path_length, name_length, value_length
    end function
    integer(c_int) function c_stream_set_attribute_strings(writer, level, path, path_length, &
        name, name_length, values, value_lengths, count) &
        bind(C, name="slipstream_stream_set_attribute_strings")
      import :: c_char, c_int, c_int32_t, c_ptr, c_size_t
      type(c_ptr), value :: writer
      integer(c_int32_t), value :: level
      character(kind=c_char), intent(in) :: path(*), name(*)
      integer(c_size_t), value :: path_length, name_length
      type(c_ptr), intent(in) :: values(*)
      integer(c_size_t), intent(in) :: value_lengths(*)
      integer(c_size_t), value :: count
    end function
    integer(c_int) function c_stream_set_attribute_int64(writer, level, path, path_length, name, &
        name_length, value) bind(C, name="slipstream_stream_set_attribute_int64")
      import :: c_char, c_int, c_int32_t, c_int64_t, c_ptr, c_size_t
      type(c_ptr), value :: writer
      integer(c_int32_t), value :: level
      character(kind=c_char), intent(in) :: path(*), name(*)
      integer(c_size_t), value :: path_length, name_length
      integer(c_int64_t), value :: value
    end function
    integer(c_int) function c_stream_set_attribute_double(writer, level, path, path_length, name, &
        name_length, value) bind(C, name="slipstream_stream_set_attribute_double")
      import :: c_char, c_double, c_int, c_int32_t, c_ptr, c_size_t
      type(c_ptr), value :: writer
      integer(c_int32_t), value :: level
      character(kind=c_char), intent(in) :: path(*), name(*)
      integer(c_size_t), value :: path_length, name_length
      real(c_double), value :: value
    end function
    integer(c_int) function c_stream_set_attribute_int64s(writer, level, path, path_length, name, &
        name_length, values, count) bind(C, name="slipstream_stream_set_attribute_int64s")
      import :: c_char, c_int, c_int32_t, c_int64_t, c_ptr, c_size_t
      type(c_ptr), value :: writer
      integer(c_int32_t), value :: level
      character(kind=c_char), intent(in) :: path(*), name(*)
      integer(c_size_t), value :: path_length, name_length
      integer(c_int64_t), intent(in) :: values(*)
      integer(c_size_t), value :: count
    end function
    integer(c_int) function c_stream_set_attribute_doubles(writer, level, path, path_length, name, &
        name_length, values, count) bind(C, name="slipstream_stream_set_attribute_doubles")
      import :: c_char, c_double, c_int, c_int32_t, c_ptr, c_size_t
      type(c_ptr), value :: writer
      integer(c_int32_t), value :: level
      character(kind=c_char), intent(in) :: path(*), name(*)
      integer(c_size_t), value :: path_length, name_length
      real(c_double), intent(in) :: values(*)
      integer(c_size_t), value :: count
    end function
    integer(c_int) function c_stream_end_step(writer) bind(C, name="slipstream_stream_end_step")
      import :: c_int, c_ptr
      type(c_ptr), value :: writer
    end function
    integer(c_int) function c_stream_writer_close(writer) &
        bind(C, name="slipstream_stream_writer_close")
      import :: c_int, c_ptr
      type(c_ptr), value :: writer
    end function

    integer(c_int) function c_stream_reader_create(client_options, stream, stream_length, group, &
        group_length, rank, size, options, reader) bind(C, name="slipstream_stream_reader_create")
      import :: c_client_options_t, c_stream_reader_options_t, c_char, c_int, c_int32_t, c_ptr, &
                c_size_t
      type(c_client_options_t), intent(in) :: client_options
      character(kind=c_char), intent(in) :: stream(*), group(*)
      integer(c_size_t), value :: stream_length, group_length
      integer(c_int32_t), value :: rank, size
      type(c_stream_reader_options_t), intent(in) :: options
      type(c_ptr), intent(out) :: reader
    end function
    integer(c_int) function c_stream_reader_destroy(reader) &
        bind(C, name="slipstream_stream_reader_destroy")
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: reader
    end function
    integer(c_int) function c_stream_next_step(reader, kind, step_number, step) &
        bind(C, name="slipstream_stream_next_step")
      import :: c_int, c_int32_t, c_int64_t, c_ptr
      type(c_ptr), value :: reader
      integer(c_int32_t), intent(out) :: kind
      integer(c_int64_t), intent(out) :: step_number
      type(c_ptr), intent(out) :: step
    end function
    integer(c_int) function c_stream_reader_skip_reason(reader, reason, length) &
        bind(C, name="slipstream_stream_reader_skip_reason")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: reader
      type(c_ptr), intent(out) :: reason
      integer(c_size_t), intent(out) :: length
    end function

    integer(c_int) function c_stream_step_destroy(step) &
        bind(C, name="slipstream_stream_step_destroy")
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: step
    end function
    integer(c_int) function c_stream_step_release(step) &
        bind(C, name="slipstream_stream_step_release")
      import :: c_int, c_ptr
      type(c_ptr), value :: step
    end function
    integer(c_int) function c_stream_step_number(step, number) &
        bind(C, name="slipstream_stream_step_number")
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: step
      integer(c_int64_t), intent(out) :: number
    end function
    integer(c_int) function c_stream_step_component_count(step, count) &
        bind(C, name="slipstream_stream_step_component_count")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: step
      integer(c_size_t), intent(out) :: count
    end function
    integer(c_int) function c_stream_step_find_component(step, name, name_length, component) &
        bind(C, name="slipstream_stream_step_find_component")
      import :: c_char, c_int, c_ptr, c_size_t
      type(c_ptr), value :: step
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: name_length
      integer(c_size_t), intent(out) :: component
    end function
    integer(c_int) function c_stream_step_component(step, component, name, name_length, dtype, &
        ndims, global_extent, piece_count) bind(C, name="slipstream_stream_step_component")
      import :: c_int, c_int32_t, c_ptr, c_size_t
      type(c_ptr), value :: step
      integer(c_size_t), value :: component
      type(c_ptr), intent(out) :: name
      integer(c_size_t), intent(out) :: name_length
      integer(c_int32_t), intent(out) :: dtype
      integer(c_size_t), intent(out) :: ndims
      type(c_ptr), intent(out) :: global_extent
      integer(c_size_t), intent(out) :: piece_count
    end function
    integer(c_int) function c_stream_step_piece(step, component, piece, offset, extent, &
        source_rank) bind(C, name="slipstream_stream_step_piece")
      import :: c_int, c_int32_t, c_ptr, c_size_t
      type(c_ptr), value :: step
      integer(c_size_t), value :: component, piece
      type(c_ptr), intent(out) :: offset, extent
      integer(c_int32_t), intent(out) :: source_rank
    end function
    integer(c_int) function c_stream_step_piece_data(step, component, piece, dtype, &
        expected_ndims, data, bytes) bind(C, name="slipstream_stream_step_piece_data")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: step
      integer(c_size_t), value :: component, piece
      integer(c_int), value :: dtype
      integer(c_size_t), value :: expected_ndims
      type(c_ptr), intent(out) :: data
      integer(c_size_t), intent(out) :: bytes
    end function
    integer(c_int) function c_stream_step_attribute_string(step, level, path, path_length, name, &
        name_length, value, length) bind(C, name="slipstream_stream_step_attribute_string")
      import :: c_char, c_int, c_int32_t, c_ptr, c_size_t
      type(c_ptr), value :: step
      integer(c_int32_t), value :: level
      character(kind=c_char), intent(in) :: path(*), name(*)
      integer(c_size_t), value :: path_length, name_length
      type(c_ptr), intent(out) :: value
      integer(c_size_t), intent(out) :: length
    end function
    integer(c_int) function c_stream_step_attribute_int64(step, level, path, path_length, name, &
        name_length, value) bind(C, name="slipstream_stream_step_attribute_int64")
      import :: c_char, c_int, c_int32_t, c_int64_t, c_ptr, c_size_t
      type(c_ptr), value :: step
      integer(c_int32_t), value :: level
      character(kind=c_char), intent(in) :: path(*), name(*)
      integer(c_size_t), value :: path_length, name_length
      integer(c_int64_t), intent(out) :: value
    end function
    integer(c_int) function c_stream_step_attribute_double(step, level, path, path_length, name, &
        name_length, value) bind(C, name="slipstream_stream_step_attribute_double")
      import :: c_char, c_double, c_int, c_int32_t, c_ptr, c_size_t
      type(c_ptr), value :: step
      integer(c_int32_t), value :: level
      character(kind=c_char), intent(in) :: path(*), name(*)
      integer(c_size_t), value :: path_length, name_length
      real(c_double), intent(out) :: value
    end function
    integer(c_int) function c_stream_step_attribute_int64s(step, level, path, path_length, name, &
        name_length, values, count) bind(C, name="slipstream_stream_step_attribute_int64s")
      import :: c_char, c_int, c_int32_t, c_ptr, c_size_t
      type(c_ptr), value :: step
      integer(c_int32_t), value :: level
      character(kind=c_char), intent(in) :: path(*), name(*)
      integer(c_size_t), value :: path_length, name_length
      type(c_ptr), intent(out) :: values
      integer(c_size_t), intent(out) :: count
    end function
    integer(c_int) function c_stream_step_attribute_doubles(step, level, path, path_length, name, &
        name_length, values, count) bind(C, name="slipstream_stream_step_attribute_doubles")
      import :: c_char, c_int, c_int32_t, c_ptr, c_size_t
      type(c_ptr), value :: step
      integer(c_int32_t), value :: level
      character(kind=c_char), intent(in) :: path(*), name(*)
      integer(c_size_t), value :: path_length, name_length
      type(c_ptr), intent(out) :: values
      integer(c_size_t), intent(out) :: count
    end function
  end interface

end module slipstream_stream_c_api
