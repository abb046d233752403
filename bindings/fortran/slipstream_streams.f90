! Streams in Fortran: stream_writer_type (a simulation rank publishing its chunks of every step),
! stream_reader_type and stream_step_type (a reader of a group taking its share), over the
! "Streams" section of the C API. Re-exported by the module `slipstream`; see docs/streams.md.
!
! Memory order: a stream's components are row-major (C order) for every language. A Fortran
! array a(n1, n2, ..., nk) is, byte for byte, the row-major array of extent (nk, ..., n2, n1), so
! this module reverses every extent and offset it passes: Fortran code gives and gets them in
! Fortran order (the order of its own array's dimensions) and no element is ever moved. A C, C++ or
! Python reader of a Fortran writer sees the dimensions reversed: a(i, j) is element [j-1][i-1].
! Offsets count from 0 in every language (the chunk a(1, 1) is at global (offset(1)+1,
! offset(2)+1) in Fortran terms). Attribute arrays are sent as given, never reversed: write
! per-axis openPMD attributes (axisLabels, gridSpacing, gridGlobalOffset) in the C order the
! readers see, i.e. reversed.
! Component and piece numbers count from 1. Every procedure returns a status code
! (SLIPSTREAM_OK, or a code with slipstream_last_error() giving the message).
module slipstream_streams
  use, intrinsic :: iso_c_binding
  use slipstream_c_api
  use slipstream_interop
  use slipstream_stream_c_api
  implicit none
  private
  public :: stream_writer_type, stream_reader_type, stream_step_type
  public :: SLIPSTREAM_STREAM_STEP, SLIPSTREAM_STREAM_SKIPPED, SLIPSTREAM_STREAM_END, &
            SLIPSTREAM_STREAM_TIMEOUT
  public :: SLIPSTREAM_ATTRIBUTE_STRING, SLIPSTREAM_ATTRIBUTE_INT64, SLIPSTREAM_ATTRIBUTE_DOUBLE, &
            SLIPSTREAM_ATTRIBUTE_STRINGS, SLIPSTREAM_ATTRIBUTE_INT64S, SLIPSTREAM_ATTRIBUTE_DOUBLES
  public :: SLIPSTREAM_STREAM_DISTRIBUTE_ALL, SLIPSTREAM_STREAM_DISTRIBUTE_ROUND_ROBIN, &
            SLIPSTREAM_STREAM_DISTRIBUTE_ON_DEMAND

  ! What next_step found (slipstream_stream_next_kind).
  integer, parameter :: SLIPSTREAM_STREAM_STEP = 0
  integer, parameter :: SLIPSTREAM_STREAM_SKIPPED = 1
  integer, parameter :: SLIPSTREAM_STREAM_END = 2
  integer, parameter :: SLIPSTREAM_STREAM_TIMEOUT = 3
  ! How a group shares its steps (slipstream_stream_distribution): reader%initialize's
  ! step_distribution.
  integer, parameter :: SLIPSTREAM_STREAM_DISTRIBUTE_ALL = 0
  integer, parameter :: SLIPSTREAM_STREAM_DISTRIBUTE_ROUND_ROBIN = 1
  integer, parameter :: SLIPSTREAM_STREAM_DISTRIBUTE_ON_DEMAND = 2
  ! Attribute types (slipstream_attribute_type).
  integer, parameter :: SLIPSTREAM_ATTRIBUTE_STRING = 0
  integer, parameter :: SLIPSTREAM_ATTRIBUTE_INT64 = 1
  integer, parameter :: SLIPSTREAM_ATTRIBUTE_DOUBLE = 2
  integer, parameter :: SLIPSTREAM_ATTRIBUTE_STRINGS = 3
  integer, parameter :: SLIPSTREAM_ATTRIBUTE_INT64S = 4
  integer, parameter :: SLIPSTREAM_ATTRIBUTE_DOUBLES = 5
  ! Attribute levels (slipstream_attribute_level).
  integer(c_int32_t), parameter :: LEVEL_OF_STEP = 0, LEVEL_OF_STREAM = 1

  !> One writer rank of a stream, with its own connection. initialize() attaches, destroy()
  !> closes (if close() was not called) and frees. Assignment copies the handle: destroy one copy.
  !> put_chunk and set_attribute send nothing until end_step; put_chunk borrows a contiguous array
  !> until end_step returns (keep it alive and unchanged until then) and copies any other.
  type :: stream_writer_type
    type(c_ptr) :: handle = c_null_ptr  !< the C handle (internal)
  contains
    procedure :: initialize => writer_initialize
    procedure :: destroy => writer_destroy
    procedure :: begin_step => writer_begin_step
    procedure :: set_operator => writer_set_operator
    ! put_chunk(component, data, global_extent, offset) for real32, real64, int8, int16, int32,
    ! int64 arrays of rank 1-4.
    include "stream_chunk_bindings.inc"
    procedure, private :: set_attribute_string, set_attribute_strings, set_attribute_int32, &
                          set_attribute_int64, set_attribute_int64s, set_attribute_real32, &
                          set_attribute_real64, set_attribute_real64s
    generic :: set_attribute => set_attribute_string, set_attribute_strings, set_attribute_int32, &
                                set_attribute_int64, set_attribute_int64s, set_attribute_real32, &
                                set_attribute_real64, set_attribute_real64s
    procedure :: end_step => writer_end_step
    procedure :: close => writer_close
  end type stream_writer_type

  !> One reader of a group, with its own connection. initialize() joins, destroy() leaves.
  type :: stream_reader_type
    type(c_ptr) :: handle = c_null_ptr  !< the C handle (internal)
  contains
    procedure :: initialize => reader_initialize
    procedure :: destroy => reader_destroy
    procedure :: next_step => reader_next_step
    procedure :: skip_reason => reader_skip_reason
  end type stream_reader_type

  !> A step handed to a reader: its components, this reader's pieces of them and the attributes.
  !> destroy() frees it and what it loaded; a step not released is given back no later than the
  !> reader's next request (release() gives it back at once). Piece data
  !> (get_piece_data) points into memory the step holds: valid until destroy(), read-only.
  type :: stream_step_type
    type(c_ptr) :: handle = c_null_ptr  !< the C handle (internal)
  contains
    procedure :: number => step_number
    procedure :: release => step_release
    procedure :: destroy => step_destroy
    procedure :: component_count => step_component_count
    procedure :: find_component => step_find_component
    procedure :: get_component => step_get_component
    procedure :: get_piece => step_get_piece
    ! get_piece_data(component, piece, data) for pointers to real32 ... int64 arrays of rank 1-4.
    include "stream_piece_bindings.inc"
    procedure, private :: get_attribute_string, get_attribute_int64, get_attribute_real64, &
                          get_attribute_int64s, get_attribute_real64s
    generic :: get_attribute => get_attribute_string, get_attribute_int64, get_attribute_real64, &
                                get_attribute_int64s, get_attribute_real64s
  end type stream_step_type

contains

  ! ---- Helpers -----------------------------------------------------------------------------------

  !> The attribute level of an optional `stream_level` flag (absent: the step).
  pure integer(c_int32_t) function level_of(stream_level)
    logical, optional, intent(in) :: stream_level
    level_of = LEVEL_OF_STEP
    if (present(stream_level)) then
      if (stream_level) level_of = LEVEL_OF_STREAM
    end if
  end function level_of

  !> Client options for a writer's or reader's connection (see client_type%initialize).
  subroutine make_client_options(address, password, options, address_c, password_c)
    character(len=*), optional, intent(in) :: address, password
    type(c_client_options_t), intent(out) :: options
    character(kind=c_char), allocatable, target, intent(inout) :: address_c(:), password_c(:)
    if (present(address)) then
      call copy_to_c_chars(address, .true., address_c, options%address, options%address_length)
    end if
    if (present(password)) then
      call copy_to_c_chars(password, .false., password_c, options%password, &
                           options%password_length)
    end if
  end subroutine make_client_options

  !> A Fortran copy of `length` bytes at `pointer`, which the library still owns.
  function borrowed_text(pointer, length) result(text)
    type(c_ptr), intent(in) :: pointer
    integer(c_size_t), intent(in) :: length
    character(len=:), allocatable :: text
    character(kind=c_char), pointer :: chars(:)
    integer :: i
    allocate(character(len=length) :: text)
    if (length == 0) return
    call c_f_pointer(pointer, chars, [length])
    do i = 1, int(length)
      text(i:i) = chars(i)
    end do
  end function borrowed_text

  !> `count` int64 values at `pointer` (borrowed), in reverse order when `reverse`.
  function borrowed_int64s(pointer, count, reverse) result(values)
    type(c_ptr), intent(in) :: pointer
    integer(c_size_t), intent(in) :: count
    logical, intent(in) :: reverse
    integer(c_int64_t), allocatable :: values(:)
    integer(c_int64_t), pointer :: view(:)
    allocate(values(count))
    if (count == 0) return
    call c_f_pointer(pointer, view, [count])
    if (reverse) then
      values = view(count:1:-1)
    else
      values = view
    end if
  end function borrowed_int64s

  ! ---- Writers -----------------------------------------------------------------------------------

  !> Connects to `address` (absent or blank: SLIPSTREAM_ADDRESS, then SSDB) and attaches as writer
  !> `rank` of `writers` (0 <= rank < writers) to `stream`. Options (absent: the defaults):
  !> queue_limit (steps held at once, 2), expected_groups (0), end_on_writer_failure (.false.),
  !> step_timeout_ms (0: none), begin_timeout_ms (0: begin_step waits as long as it takes),
  !> hostname (blank: this machine's), shared_memory_min_bytes (over a Unix socket, chunks of at
  !> least this many bytes go through shared memory; 65536; negative is refused),
  !> reserve_next_step (.true.: end_step also reserves the next step when a slot is free, so its
  !> begin_step costs no round trip; .false.: every begin_step is a round trip),
  !> first_step_precious (.true.: the first step that completes is kept for the stream's life and
  !> handed first to every group that joins later; default .false.). Every writer of a stream
  !> must give the same queue_limit, expected_groups, end_on_writer_failure, step_timeout_ms and
  !> first_step_precious.
  integer function writer_initialize(self, stream, rank, writers, address, password, queue_limit, &
                                     expected_groups, end_on_writer_failure, step_timeout_ms, &
                                     begin_timeout_ms, hostname, shared_memory_min_bytes, &
                                     reserve_next_step, first_step_precious) result(code)
    class(stream_writer_type), intent(inout) :: self
    character(len=*), intent(in) :: stream
    integer, intent(in) :: rank, writers
    character(len=*), optional, intent(in) :: address, password, hostname
    integer, optional, intent(in) :: queue_limit, expected_groups
    logical, optional, intent(in) :: end_on_writer_failure, reserve_next_step
    logical, optional, intent(in) :: first_step_precious
    integer(c_int64_t), optional, intent(in) :: step_timeout_ms, begin_timeout_ms
    integer(c_int64_t), optional, intent(in) :: shared_memory_min_bytes
    type(c_client_options_t) :: client_options
    type(c_stream_writer_options_t) :: options
    character(kind=c_char), allocatable, target :: address_c(:), password_c(:), host_c(:)
    call make_client_options(address, password, client_options, address_c, password_c)
    if (present(queue_limit)) options%queue_limit = queue_limit
    if (present(expected_groups)) options%expected_groups = expected_groups
    if (present(end_on_writer_failure)) then
      options%end_on_writer_failure = to_c_flag(end_on_writer_failure)
    end if
    if (present(step_timeout_ms)) options%step_timeout_ms = step_timeout_ms
    if (present(begin_timeout_ms)) options%begin_timeout_ms = begin_timeout_ms
    if (present(hostname)) then
      call copy_to_c_chars(hostname, .true., host_c, options%hostname, options%hostname_length)
    end if
    if (present(shared_memory_min_bytes)) then
      options%shared_memory_min_bytes = shared_memory_min_bytes
    end if
    if (present(reserve_next_step)) options%reserve_next_step = to_c_flag(reserve_next_step)
    if (present(first_step_precious)) then
      options%first_step_precious = to_c_flag(first_step_precious)
    end if
    code = c_stream_writer_create(client_options, stream, c_text_length(stream), &
                                  int(rank, c_int32_t), int(writers, c_int32_t), options, &
                                  self%handle)
  end function writer_initialize

  !> Closes the stream for this writer if close() was not called (errors not reported), frees
  !> the writer; the handle becomes null (destroying it again does nothing).
  integer function writer_destroy(self) result(code)
    class(stream_writer_type), intent(inout) :: self
    code = c_stream_writer_destroy(self%handle)
  end function writer_destroy

  !> Begins `step` (increasing per writer, the same for every writer); waits while the queue is
  !> full. SLIPSTREAM_TIMEOUT_ERROR after begin_timeout_ms.
  integer function writer_begin_step(self, step) result(code)
    class(stream_writer_type), intent(in) :: self
    integer(c_int64_t), intent(in) :: step
    code = c_stream_begin_step(self%handle, step)
  end function writer_begin_step

  !> Sets the compression operator of `component` ("*": every component without its own) for the
  !> chunks put from now on: `type` "zstd", "blosc", "bzip2" or "zfp" (an empty `type` removes it)
  !> and `parameters` as "name=value" pairs separated by commas, ADIOS2's names: "level=3",
  !> "clevel=5,doshuffle=BLOSC_SHUFFLE", "accuracy=1e-4" (zfp: real32 and real64 data only).
  !> Readers get the decoded values. SLIPSTREAM_INVALID_ARGUMENT for an unknown operator or
  !> parameter (print_last_error names it).
  integer function writer_set_operator(self, component, type, parameters) result(code)
    class(stream_writer_type), intent(in) :: self
    character(len=*), intent(in) :: component, type
    character(len=*), intent(in), optional :: parameters
    if (present(parameters)) then
      code = c_stream_set_operator(self%handle, component, c_text_length(component), type, &
                                   c_text_length(type), parameters, c_text_length(parameters))
    else
      code = c_stream_set_operator(self%handle, component, c_text_length(component), type, &
                                   c_text_length(type), "", 0_c_size_t)
    end if
  end function writer_set_operator

  !> Adds the chunk `data` of `component` (an openPMD path, e.g. "meshes/E/x") to the step begun:
  !> the box at `offset` (from 0) with the shape of `data`, in a component of `global_extent`, both
  !> in Fortran order (see the top of this file). Sent by end_step. `copy`: copied now, else
  !> borrowed until end_step.
  integer function put_chunk_address(self, component, data, shape_f, global_extent, offset, &
                                     element_bits, dtype, copy) result(code)
    class(stream_writer_type), intent(in) :: self
    character(len=*), intent(in) :: component
    type(c_ptr), intent(in) :: data
    integer(c_int64_t), intent(in) :: shape_f(:), global_extent(:), offset(:)
    integer, intent(in) :: element_bits, dtype
    logical, intent(in) :: copy
    integer(c_int64_t) :: global_c(size(shape_f)), offset_c(size(shape_f)), extent_c(size(shape_f))
    integer(c_size_t) :: ndims, bytes
    ndims = size(shape_f, kind=c_size_t)
    global_c = global_extent(ndims:1:-1)
    offset_c = offset(ndims:1:-1)
    extent_c = shape_f(ndims:1:-1)
    bytes = int(product(shape_f), c_size_t) * int(element_bits / 8, c_size_t)
    if (copy) then
      code = c_stream_put_chunk_copy(self%handle, component, c_text_length(component), &
                                     int(dtype, c_int), ndims, global_c, offset_c, extent_c, &
                                     data, bytes)
    else
      code = c_stream_put_chunk(self%handle, component, c_text_length(component), &
                                int(dtype, c_int), ndims, global_c, offset_c, extent_c, data, bytes)
    end if
  end function put_chunk_address

  include "stream_chunk_procedures.inc"

  ! set_attribute(path, name, value [, stream_level]): an attribute of the step begun, or with
  ! stream_level=.true. of the whole stream (sent with the next end_step, or at once when no step
  ! is open). `path` "/" is the step or stream itself. Scalars and arrays of strings, integers
  ! (kept as int64) and reals (kept as double); values are copied, arrays sent as given.

  integer function set_attribute_string(self, path, name, value, stream_level) result(code)
    class(stream_writer_type), intent(in) :: self
    character(len=*), intent(in) :: path, name, value
    logical, optional, intent(in) :: stream_level
    code = c_stream_set_attribute_string(self%handle, level_of(stream_level), path, &
                                         c_text_length(path), name, c_text_length(name), value, &
                                         int(len(value), c_size_t))
  end function set_attribute_string

  !> An array of strings, each with trailing blanks removed.
  integer function set_attribute_strings(self, path, name, value, stream_level) result(code)
    class(stream_writer_type), intent(in) :: self
    character(len=*), intent(in) :: path, name, value(:)
    logical, optional, intent(in) :: stream_level
    type(c_string_list), target :: list
    call make_string_list(value, list)
    code = c_stream_set_attribute_strings(self%handle, level_of(stream_level), path, &
                                          c_text_length(path), name, c_text_length(name), &
                                          list%pointers, list%lengths, list%count)
  end function set_attribute_strings

  integer function set_attribute_int32(self, path, name, value, stream_level) result(code)
    class(stream_writer_type), intent(in) :: self
    character(len=*), intent(in) :: path, name
    integer(c_int32_t), intent(in) :: value
    logical, optional, intent(in) :: stream_level
    code = c_stream_set_attribute_int64(self%handle, level_of(stream_level), path, &
                                        c_text_length(path), name, c_text_length(name), &
                                        int(value, c_int64_t))
  end function set_attribute_int32

  integer function set_attribute_int64(self, path, name, value, stream_level) result(code)
    class(stream_writer_type), intent(in) :: self
    character(len=*), intent(in) :: path, name
    integer(c_int64_t), intent(in) :: value
    logical, optional, intent(in) :: stream_level
    code = c_stream_set_attribute_int64(self%handle, level_of(stream_level), path, &
                                        c_text_length(path), name, c_text_length(name), value)
  end function set_attribute_int64

  integer function set_attribute_int64s(self, path, name, value, stream_level) result(code)
    class(stream_writer_type), intent(in) :: self
    character(len=*), intent(in) :: path, name
    integer(c_int64_t), intent(in) :: value(:)
    logical, optional, intent(in) :: stream_level
    integer(c_int64_t) :: values(max(size(value), 1))
    values(1:size(value)) = value
    code = c_stream_set_attribute_int64s(self%handle, level_of(stream_level), path, &
                                         c_text_length(path), name, c_text_length(name), values, &
                                         size(value, kind=c_size_t))
  end function set_attribute_int64s

  integer function set_attribute_real32(self, path, name, value, stream_level) result(code)
    class(stream_writer_type), intent(in) :: self
    character(len=*), intent(in) :: path, name
    real(c_float), intent(in) :: value
    logical, optional, intent(in) :: stream_level
    code = c_stream_set_attribute_double(self%handle, level_of(stream_level), path, &
                                         c_text_length(path), name, c_text_length(name), &
                                         real(value, c_double))
  end function set_attribute_real32

  integer function set_attribute_real64(self, path, name, value, stream_level) result(code)
    class(stream_writer_type), intent(in) :: self
    character(len=*), intent(in) :: path, name
    real(c_double), intent(in) :: value
    logical, optional, intent(in) :: stream_level
    code = c_stream_set_attribute_double(self%handle, level_of(stream_level), path, &
                                         c_text_length(path), name, c_text_length(name), value)
  end function set_attribute_real64

  integer function set_attribute_real64s(self, path, name, value, stream_level) result(code)
    class(stream_writer_type), intent(in) :: self
    character(len=*), intent(in) :: path, name
    real(c_double), intent(in) :: value(:)
    logical, optional, intent(in) :: stream_level
    real(c_double) :: values(max(size(value), 1))
    values(1:size(value)) = value
    code = c_stream_set_attribute_doubles(self%handle, level_of(stream_level), path, &
                                          c_text_length(path), name, c_text_length(name), values, &
                                          size(value, kind=c_size_t))
  end function set_attribute_real64s

  !> Sends the step's chunks and attributes in one round trip and ends the step for this writer;
  !> the arrays put_chunk borrowed are free again. Returns the first error of the step.
  integer function writer_end_step(self) result(code)
    class(stream_writer_type), intent(in) :: self
    code = c_stream_end_step(self%handle)
  end function writer_end_step

  !> This writer is done; readers get the end of the stream once every writer has closed.
  integer function writer_close(self) result(code)
    class(stream_writer_type), intent(in) :: self
    code = c_stream_writer_close(self%handle)
  end function writer_close

  ! ---- Readers -----------------------------------------------------------------------------------

  !> Connects (address and password as writer_initialize) and joins `group` of `size` readers as
  !> `rank` (0 <= rank < size) on `stream`. Options (absent: the defaults): strategy (blank:
  !> "hostname_binpacking_slicedataset"; see docs/streams.md), discard (.true.: the DISCARD
  !> policy; default BLOCK), start_newest (.true.: start at the next step begun; default the
  !> oldest held), split_dimension (a C-order dimension number, from 0), no_empty_readers,
  !> next_timeout_ms (0: next_step waits as long as it takes), hostname, step_distribution
  !> (SLIPSTREAM_STREAM_DISTRIBUTE_ALL, the default: every reader gets its share of every step;
  !> _ROUND_ROBIN: each step whole to one reader, in turn by rank; _ON_DEMAND: each step whole to
  !> the reader that asks first; every reader of a group must give the same).
  integer function reader_initialize(self, stream, group, rank, size, address, password, &
                                     strategy, discard, start_newest, split_dimension, &
                                     no_empty_readers, next_timeout_ms, hostname, &
                                     step_distribution) result(code)
    class(stream_reader_type), intent(inout) :: self
    character(len=*), intent(in) :: stream, group
    integer, intent(in) :: rank, size
    character(len=*), optional, intent(in) :: address, password, strategy, hostname
    logical, optional, intent(in) :: discard, start_newest, no_empty_readers
    integer, optional, intent(in) :: split_dimension, step_distribution
    integer(c_int64_t), optional, intent(in) :: next_timeout_ms
    type(c_client_options_t) :: client_options
    type(c_stream_reader_options_t) :: options
    character(kind=c_char), allocatable, target :: address_c(:), password_c(:), strategy_c(:), &
                                                   host_c(:)
    call make_client_options(address, password, client_options, address_c, password_c)
    if (present(strategy)) then
      call copy_to_c_chars(strategy, .true., strategy_c, options%strategy, options%strategy_length)
    end if
    if (present(discard)) then
      if (discard) options%policy = 1
    end if
    if (present(start_newest)) then
      if (start_newest) options%start = 1
    end if
    if (present(split_dimension)) options%split_dimension = split_dimension
    if (present(no_empty_readers)) options%no_empty_readers = to_c_flag(no_empty_readers)
    if (present(next_timeout_ms)) options%next_timeout_ms = next_timeout_ms
    if (present(hostname)) then
      call copy_to_c_chars(hostname, .true., host_c, options%hostname, options%hostname_length)
    end if
    if (present(step_distribution)) then
      options%step_distribution = int(step_distribution, c_int32_t)
    end if
    code = c_stream_reader_create(client_options, stream, c_text_length(stream), group, &
                                  c_text_length(group), int(rank, c_int32_t), &
                                  int(size, c_int32_t), options, self%handle)
  end function reader_initialize

  !> Leaves the group and frees the reader; the handle becomes null.
  integer function reader_destroy(self) result(code)
    class(stream_reader_type), intent(inout) :: self
    code = c_stream_reader_destroy(self%handle)
  end function reader_destroy

  !> Waits for this reader's next step (releasing the one it holds). `kind` is
  !> SLIPSTREAM_STREAM_STEP (then `step` is the step: destroy it when done; a step it held before
  !> is destroyed first), SLIPSTREAM_STREAM_SKIPPED (`number` is the step skipped; skip_reason()
  !> says why), SLIPSTREAM_STREAM_END or SLIPSTREAM_STREAM_TIMEOUT. `number` (optional) is the
  !> step's number, -1 for END and TIMEOUT.
  integer function reader_next_step(self, kind, step, number) result(code)
    class(stream_reader_type), intent(in) :: self
    integer, intent(out) :: kind
    type(stream_step_type), intent(inout) :: step
    integer(c_int64_t), optional, intent(out) :: number
    integer(c_int32_t) :: c_kind
    integer(c_int64_t) :: c_number
    code = c_stream_step_destroy(step%handle)
    kind = SLIPSTREAM_STREAM_TIMEOUT
    c_number = -1
    code = c_stream_next_step(self%handle, c_kind, c_number, step%handle)
    if (code == SLIPSTREAM_OK) kind = c_kind
    if (present(number)) number = c_number
  end function reader_next_step

  !> Why the last SKIPPED step was skipped.
  integer function reader_skip_reason(self, reason) result(code)
    class(stream_reader_type), intent(in) :: self
    character(len=:), allocatable, intent(out) :: reason
    type(c_ptr) :: pointer
    integer(c_size_t) :: length
    code = c_stream_reader_skip_reason(self%handle, pointer, length)
    if (code /= SLIPSTREAM_OK) return
    reason = borrowed_text(pointer, length)
  end function reader_skip_reason

  ! ---- Steps -------------------------------------------------------------------------------------

  integer function step_number(self, number) result(code)
    class(stream_step_type), intent(in) :: self
    integer(c_int64_t), intent(out) :: number
    code = c_stream_step_number(self%handle, number)
  end function step_number

  !> Done with the step (the writers may reuse its slot); what was loaded stays readable.
  integer function step_release(self) result(code)
    class(stream_step_type), intent(in) :: self
    code = c_stream_step_release(self%handle)
  end function step_release

  !> Frees the step and its loaded pieces (see the type for when a held step is given back); the
  !> handle becomes null.
  integer function step_destroy(self) result(code)
    class(stream_step_type), intent(inout) :: self
    code = c_stream_step_destroy(self%handle)
  end function step_destroy

  integer function step_component_count(self, count) result(code)
    class(stream_step_type), intent(in) :: self
    integer, intent(out) :: count
    integer(c_size_t) :: c_count
    code = c_stream_step_component_count(self%handle, c_count)
    count = int(c_count)
  end function step_component_count

  !> The number (from 1) of the component called `name`; SLIPSTREAM_KEY_NOT_FOUND if none.
  integer function step_find_component(self, name, component) result(code)
    class(stream_step_type), intent(in) :: self
    character(len=*), intent(in) :: name
    integer, intent(out) :: component
    integer(c_size_t) :: index
    component = 0
    code = c_stream_step_find_component(self%handle, name, c_text_length(name), index)
    if (code == SLIPSTREAM_OK) component = int(index) + 1
  end function step_find_component

  !> Component `component` (from 1): name, dtype (SLIPSTREAM_FLOAT64, ...), global extent in
  !> Fortran order (its size is the number of dimensions) and the number of this reader's pieces.
  integer function step_get_component(self, component, name, dtype, global_extent, piece_count) &
      result(code)
    class(stream_step_type), intent(in) :: self
    integer, intent(in) :: component
    character(len=:), allocatable, optional, intent(out) :: name
    integer, optional, intent(out) :: dtype, piece_count
    integer(c_int64_t), allocatable, optional, intent(out) :: global_extent(:)
    type(c_ptr) :: name_pointer, extent_pointer
    integer(c_size_t) :: name_length, ndims, pieces
    integer(c_int32_t) :: c_dtype
    code = c_stream_step_component(self%handle, int(component - 1, c_size_t), name_pointer, &
                                   name_length, c_dtype, ndims, extent_pointer, pieces)
    if (code /= SLIPSTREAM_OK) return
    if (present(name)) name = borrowed_text(name_pointer, name_length)
    if (present(dtype)) dtype = c_dtype
    if (present(global_extent)) global_extent = borrowed_int64s(extent_pointer, ndims, .true.)
    if (present(piece_count)) piece_count = int(pieces)
  end function step_get_component

  !> Piece `piece` (from 1) of this reader's share of `component`: offset (from 0) and extent in
  !> Fortran order, and the writer rank it comes from. Needs no load.
  integer function step_get_piece(self, component, piece, offset, extent, source_rank) &
      result(code)
    class(stream_step_type), intent(in) :: self
    integer, intent(in) :: component, piece
    integer(c_int64_t), allocatable, optional, intent(out) :: offset(:), extent(:)
    integer, optional, intent(out) :: source_rank
    type(c_ptr) :: name_pointer, extent_pointer, offset_pointer
    integer(c_size_t) :: name_length, ndims, pieces
    integer(c_int32_t) :: c_dtype, c_source
    code = c_stream_step_component(self%handle, int(component - 1, c_size_t), name_pointer, &
                                   name_length, c_dtype, ndims, extent_pointer, pieces)
    if (code /= SLIPSTREAM_OK) return
    code = c_stream_step_piece(self%handle, int(component - 1, c_size_t), &
                               int(piece - 1, c_size_t), offset_pointer, extent_pointer, c_source)
    if (code /= SLIPSTREAM_OK) return
    if (present(offset)) offset = borrowed_int64s(offset_pointer, ndims, .true.)
    if (present(extent)) extent = borrowed_int64s(extent_pointer, ndims, .true.)
    if (present(source_rank)) source_rank = int(c_source)
  end function step_get_piece

  !> The address of piece `piece` of `component` (loading the component's pieces, in one round
  !> trip, the first time) and its extent in Fortran order. SLIPSTREAM_INVALID_ARGUMENT if the
  !> component's dtype is not `dtype` or it does not have `rank` dimensions. get_piece_data makes
  !> it a Fortran pointer array of that extent: no copy, a(i, j) is the row-major [j-1][i-1].
  !> An empty piece gives a disassociated pointer.
  integer function piece_address(self, component, piece, dtype, rank, address, extent) &
      result(code)
    class(stream_step_type), intent(in) :: self
    integer, intent(in) :: component, piece, dtype, rank
    type(c_ptr), intent(out) :: address
    integer(c_int64_t), allocatable, intent(out) :: extent(:)
    integer(c_size_t) :: bytes
    address = c_null_ptr
    code = c_stream_step_piece_data(self%handle, int(component - 1, c_size_t), &
                                    int(piece - 1, c_size_t), int(dtype, c_int), &
                                    int(rank, c_size_t), address, bytes)
    if (code /= SLIPSTREAM_OK) return
    code = step_get_piece(self, component, piece, extent=extent)
  end function piece_address

  include "stream_piece_procedures.inc"

  ! get_attribute(path, name, value [, stream_level]): an attribute of the step (or, with
  ! stream_level=.true., of the stream) by path and name. SLIPSTREAM_KEY_NOT_FOUND if missing,
  ! SLIPSTREAM_WRONG_TYPE if it holds another type than `value`'s.

  integer function get_attribute_string(self, path, name, value, stream_level) result(code)
    class(stream_step_type), intent(in) :: self
    character(len=*), intent(in) :: path, name
    character(len=:), allocatable, intent(out) :: value
    logical, optional, intent(in) :: stream_level
    type(c_ptr) :: pointer
    integer(c_size_t) :: length
    code = c_stream_step_attribute_string(self%handle, level_of(stream_level), path, &
                                          c_text_length(path), name, c_text_length(name), &
                                          pointer, length)
    if (code == SLIPSTREAM_OK) value = borrowed_text(pointer, length)
  end function get_attribute_string

  integer function get_attribute_int64(self, path, name, value, stream_level) result(code)
    class(stream_step_type), intent(in) :: self
    character(len=*), intent(in) :: path, name
    integer(c_int64_t), intent(out) :: value
    logical, optional, intent(in) :: stream_level
    code = c_stream_step_attribute_int64(self%handle, level_of(stream_level), path, &
                                         c_text_length(path), name, c_text_length(name), value)
  end function get_attribute_int64

  integer function get_attribute_real64(self, path, name, value, stream_level) result(code)
    class(stream_step_type), intent(in) :: self
    character(len=*), intent(in) :: path, name
    real(c_double), intent(out) :: value
    logical, optional, intent(in) :: stream_level
    code = c_stream_step_attribute_double(self%handle, level_of(stream_level), path, &
                                          c_text_length(path), name, c_text_length(name), value)
  end function get_attribute_real64

  integer function get_attribute_int64s(self, path, name, value, stream_level) result(code)
    class(stream_step_type), intent(in) :: self
    character(len=*), intent(in) :: path, name
    integer(c_int64_t), allocatable, intent(out) :: value(:)
    logical, optional, intent(in) :: stream_level
    type(c_ptr) :: pointer
    integer(c_size_t) :: count
    code = c_stream_step_attribute_int64s(self%handle, level_of(stream_level), path, &
                                          c_text_length(path), name, c_text_length(name), &
                                          pointer, count)
    if (code == SLIPSTREAM_OK) value = borrowed_int64s(pointer, count, .false.)
  end function get_attribute_int64s

  integer function get_attribute_real64s(self, path, name, value, stream_level) result(code)
    class(stream_step_type), intent(in) :: self
    character(len=*), intent(in) :: path, name
    real(c_double), allocatable, intent(out) :: value(:)
    logical, optional, intent(in) :: stream_level
    type(c_ptr) :: pointer
    integer(c_size_t) :: count
    real(c_double), pointer :: view(:)
    code = c_stream_step_attribute_doubles(self%handle, level_of(stream_level), path, &
                                           c_text_length(path), name, c_text_length(name), &
                                           pointer, count)
    if (code /= SLIPSTREAM_OK) return
    allocate(value(count))
    if (count == 0) return
    call c_f_pointer(pointer, view, [count])
    value = view
  end function get_attribute_real64s

end module slipstream_streams
