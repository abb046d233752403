! A Fortran program written against SmartRedis 0.6's documented Fortran API (smartredis_client,
! smartredis_dataset, smartredis_configoptions, smartredis_logcontext, smartredis_logger,
! smartredis_errors, enum_fortran.inc), built against the installed-style module files and
! libslipstream_smartredis_fortran, run against a real Slipstream server (run_c_fortran.sh:
! SSDB=host:port, SSKEYOUT=member_a, SSKEYIN=member_a,member_b). Every value read back is
! checked, and the return codes of bad calls; the lines it logs are read back from SR_LOG_FILE.
! Usage: smartredis_fortran_program MODELS_DIR
program smartredis_fortran_program
  use iso_c_binding
  use smartredis_client, only: client_type
  use smartredis_dataset, only: dataset_type
  use smartredis_errors, only: get_last_error, print_last_error
  use smartredis_configoptions, only: configoptions_type
  use smartredis_logcontext, only: logcontext_type
  use smartredis_logger, only: log_data, log_warning, log_error
  implicit none

#include "enum_fortran.inc"

  type(client_type) :: client, simple
  integer :: failures = 0
  character(len=4096) :: models_dir

  if (command_argument_count() < 1) error stop 'usage: smartredis_fortran_program MODELS_DIR'
  call get_command_argument(1, models_dir)

  call expect(client%initialize(.false., 'fortran_program'), SRNoError, 'initialize(cluster)')
  call check(client%isinitialized(), 'isinitialized')
  call expect(simple%initialize(), SRNoError, 'initialize()')
  call check(index(client%to_string(), 'fortran_program') > 0, 'to_string names the client')
  call check(.not. client%SR_error_parser(SRNoError), 'SRNoError is not an error')

  call test_tensors()
  call test_datasets()
  call test_descriptions()
  call test_models()
  call test_prefixes()
  call test_configoptions()
  call test_logging()

  call expect(simple%destructor(), SRNoError, 'destructor')
  call expect(client%destructor(), SRNoError, 'destructor')
  if (failures > 0) then
    write(*, '(i0,a)') failures, ' check(s) failed'
    error stop 1
  end if
  write(*, '(a)') 'SmartRedis Fortran program: all checks passed'

contains

  subroutine check(condition, what)
    logical, intent(in) :: condition
    character(len=*), intent(in) :: what
    if (.not. condition) then
      write(*, '(a,a,a,a)') 'FAILED: ', what, '; last error: ', get_last_error()
      failures = failures + 1
    end if
  end subroutine check

  !> A call's code must be `expected`; an error must come with a message.
  subroutine expect(code, expected, what)
    integer, intent(in) :: code, expected
    character(len=*), intent(in) :: what
    character(len=:), allocatable :: message
    message = get_last_error()
    if (code /= expected) then
      write(*, '(a,a,a,i0,a,i0,a,a)') 'FAILED: ', what, ' returned ', code, ', expected ', &
          expected, '; last error: ', message
      failures = failures + 1
    else if (expected /= SRNoError .and. len(message) == 0) then
      write(*, '(a,a)') 'FAILED: no message for ', what
      failures = failures + 1
    end if
  end subroutine expect

  subroutine test_tensors()
    real(kind=c_double) :: a(5, 4), a_back(5, 4)
    real(kind=c_float) :: b(3, 4, 2), b_back(3, 4, 2)
    integer(kind=c_int32_t) :: c(7), c_back(7)
    integer(kind=c_int64_t) :: d(2, 3), d_back(2, 3)
    integer(kind=c_int8_t) :: e(4), e_back(4)
    integer(kind=c_int16_t) :: f(2, 2), f_back(2, 2)
    real(kind=c_double) :: section_back(3, 2)
    logical :: exists
    integer :: i, j

    do j = 1, 4
      do i = 1, 5
        a(i, j) = 10 * i + j
      end do
    end do
    call random_number(b)
    c = [(i * 3, i = 1, 7)]
    d = reshape([(int(i, c_int64_t) * 1000000000_c_int64_t, i = 1, 6)], [2, 3])
    e = [-127_c_int8_t, -1_c_int8_t, 0_c_int8_t, 127_c_int8_t]
    f = reshape([1_c_int16_t, -2_c_int16_t, 300_c_int16_t, -32767_c_int16_t], [2, 2])

    call expect(client%put_tensor('a', a, shape(a)), SRNoError, 'put_tensor real64')
    call expect(client%put_tensor('b', b, shape(b)), SRNoError, 'put_tensor real32')
    call expect(client%put_tensor('c', c, shape(c)), SRNoError, 'put_tensor int32')
    call expect(client%put_tensor('d', d, shape(d)), SRNoError, 'put_tensor int64')
    call expect(client%put_tensor('e', e, shape(e)), SRNoError, 'put_tensor int8')
    call expect(client%put_tensor('f', f, shape(f)), SRNoError, 'put_tensor int16')
    call expect(client%unpack_tensor('a', a_back, shape(a_back)), SRNoError, 'unpack real64')
    call check(all(a_back == a), 'real64 round trip')
    call expect(client%unpack_tensor('b', b_back, shape(b_back)), SRNoError, 'unpack real32')
    call check(all(b_back == b), 'real32 round trip')
    call expect(client%unpack_tensor('c', c_back, shape(c_back)), SRNoError, 'unpack int32')
    call check(all(c_back == c), 'int32 round trip')
    call expect(client%unpack_tensor('d', d_back, shape(d_back)), SRNoError, 'unpack int64')
    call check(all(d_back == d), 'int64 round trip')
    call expect(client%unpack_tensor('e', e_back, shape(e_back)), SRNoError, 'unpack int8')
    call check(all(e_back == e), 'int8 round trip')
    call expect(client%unpack_tensor('f', f_back, shape(f_back)), SRNoError, 'unpack int16')
    call check(all(f_back == f), 'int16 round trip')

    ! A non-contiguous section is sent as the array it describes.
    call expect(client%put_tensor('section', a(1:5:2, 2:3), shape(a(1:5:2, 2:3))), SRNoError, &
                'put_tensor section')
    call expect(client%unpack_tensor('section', section_back, shape(section_back)), SRNoError, &
                'unpack section')
    call check(all(section_back == a(1:5:2, 2:3)), 'section round trip')

    call expect(client%tensor_exists('a', exists), SRNoError, 'tensor_exists')
    call check(exists, 'a exists')
    call expect(client%key_exists('member_a.a', exists), SRNoError, 'key_exists')
    call check(exists, 'the key carries the SSKEYOUT prefix')
    call expect(client%poll_tensor('a', 10, 3, exists), SRNoError, 'poll_tensor')
    call check(exists, 'poll_tensor finds a')
    call expect(client%poll_key('nothing', 5, 2, exists), SRNoError, 'poll_key')
    call check(.not. exists, 'poll_key of a missing key')
    call expect(client%copy_tensor('a', 'a_copy'), SRNoError, 'copy_tensor')
    call expect(client%rename_tensor('a_copy', 'a_moved'), SRNoError, 'rename_tensor')
    a_back = 0
    call expect(client%unpack_tensor('a_moved', a_back, shape(a_back)), SRNoError, 'unpack moved')
    call check(all(a_back == a), 'moved tensor')
    call expect(client%delete_tensor('a_moved'), SRNoError, 'delete_tensor')
    call expect(client%tensor_exists('a_moved', exists), SRNoError, 'tensor_exists')
    call check(.not. exists, 'deleted')

    ! Errors: a missing tensor, dims that are not the stored shape or not the array's, a type.
    call expect(client%unpack_tensor('missing', a_back, shape(a_back)), SRKeyError, &
                'unpack missing')
    call expect(client%unpack_tensor('a', a_back, [4, 5]), SRParameterError, 'unpack other dims')
    call check(index(get_last_error(), '5') > 0, 'the message gives the shapes')
    call expect(client%unpack_tensor('a', a_back, [5, 5]), SRParameterError, &
                'dims larger than the array')
    call expect(client%put_tensor('g', a, [30]), SRParameterError, 'put dims larger than array')
    call expect(client%unpack_tensor('c', b_back, shape(b_back)), SRParameterError, &
                'unpack as another type')
  end subroutine test_tensors

  subroutine test_datasets()
    type(dataset_type) :: dataset, fetched
    type(dataset_type), allocatable :: listed(:)
    real(kind=c_float) :: field(4, 3), field_back(4, 3)
    real(kind=c_float), dimension(:), pointer :: times
    integer(kind=c_int64_t), dimension(:), pointer :: steps
    character(len=:), allocatable :: labels(:)
    logical :: exists
    integer :: i, length, count

    call random_number(field)
    call expect(dataset%initialize('fortran_ds'), SRNoError, 'dataset%initialize')
    call expect(dataset%add_tensor('field', field, shape(field)), SRNoError, 'add_tensor')
    call expect(dataset%unpack_dataset_tensor('field', field_back, shape(field_back)), &
                SRNoError, 'unpack_dataset_tensor (local)')
    call check(all(field_back == field), 'local dataset tensor')
    do i = 1, 3
      call expect(dataset%add_meta_scalar('time', real(i, c_float) / 4), SRNoError, &
                  'add_meta_scalar')
    end do
    call expect(dataset%add_meta_scalar('step', 42_c_int64_t), SRNoError, 'add_meta_scalar i64')
    call expect(dataset%add_meta_string('label', 'ocean'), SRNoError, 'add_meta_string')
    call expect(client%put_dataset(dataset), SRNoError, 'put_dataset')
    call expect(client%dataset_exists('fortran_ds', exists), SRNoError, 'dataset_exists')
    call check(exists, 'dataset exists')

    call expect(client%get_dataset('fortran_ds', fetched), SRNoError, 'get_dataset')
    field_back = 0
    call expect(fetched%unpack_dataset_tensor('field', field_back, shape(field_back)), &
                SRNoError, 'unpack_dataset_tensor')
    call check(all(field_back == field), 'dataset tensor through the server')
    call expect(fetched%get_meta_scalars('time', times), SRNoError, 'get_meta_scalars')
    call check(size(times) == 3, 'three times')
    if (size(times) == 3) call check(times(3) == 0.75, 'time values')
    call expect(fetched%get_meta_scalars('step', steps), SRNoError, 'get_meta_scalars i64')
    call check(steps(1) == 42, 'step value')
    call expect(fetched%get_meta_scalars('step', times), SRTypeError, 'get_meta_scalars type')
    call expect(fetched%get_meta_strings('label', labels), SRNoError, 'get_meta_strings')
    call check(size(labels) == 1, 'one label')
    if (size(labels) == 1) call check(labels(1) == 'ocean', 'label value')
    call expect(fetched%destroy(), SRNoError, 'dataset%destroy')

    call expect(client%append_to_list('fortran_list', dataset), SRNoError, 'append_to_list')
    call expect(client%append_to_list('fortran_list', dataset), SRNoError, 'append_to_list')
    call expect(client%get_list_length('fortran_list', length), SRNoError, 'get_list_length')
    call check(length == 2, 'list length')
    call expect(client%poll_list_length('fortran_list', 2, 10, 2, exists), SRNoError, &
                'poll_list_length')
    call check(exists, 'poll_list_length')
    call expect(client%get_datasets_from_list('fortran_list', listed, count), SRNoError, &
                'get_datasets_from_list')
    call check(count == 2, 'two datasets listed')
    do i = 1, count
      field_back = 0
      call expect(listed(i)%unpack_dataset_tensor('field', field_back, shape(field_back)), &
                  SRNoError, 'listed dataset tensor')
      call check(all(field_back == field), 'listed dataset values')
      call expect(listed(i)%destroy(), SRNoError, 'destroy listed')
    end do
    call expect(client%get_datasets_from_list_range('fortran_list', -1, -1, listed), SRNoError, &
                'get_datasets_from_list_range')
    call check(size(listed) == 1, 'one dataset in the range')
    do i = 1, size(listed)
      call expect(listed(i)%destroy(), SRNoError, 'destroy listed')
    end do
    call expect(client%delete_list('fortran_list'), SRNoError, 'delete_list')
    call expect(client%delete_dataset('fortran_ds'), SRNoError, 'delete_dataset')
    call expect(client%get_dataset('fortran_ds', fetched), SRKeyError, 'get deleted dataset')
    call expect(dataset%destroy(), SRNoError, 'dataset%destroy')
  end subroutine test_datasets

  subroutine test_models()
    real(kind=c_float) :: x(3, 2), y(3, 2)
    logical :: exists
    character(len=:), allocatable :: script_file, model_bytes, model_back
    character(len=10) :: short
    character(len=200) :: script_back
    character(len=*), parameter :: script_source = 'def plus_one(x):' // new_line('a') // &
                                                   '    return x + 1' // new_line('a')
    integer :: unit, model_size

    call random_number(x)
    call expect(client%set_model_from_file('scale', trim(models_dir) // '/scale.pt', 'TORCH', &
                                           'CPU'), SRNoError, 'set_model_from_file')
    call expect(client%model_exists('scale', exists), SRNoError, 'model_exists')
    call check(exists, 'model exists')
    call expect(client%poll_model('scale', 10, 2, exists), SRNoError, 'poll_model')
    call expect(client%put_tensor('x', x, shape(x)), SRNoError, 'put x')
    call expect(client%run_model('scale', ['x'], ['y']), SRNoError, 'run_model')
    call expect(client%unpack_tensor('y', y, shape(y)), SRNoError, 'unpack y')
    call check(all(abs(y - (2 * x + 1)) < 1e-6), 'y = 2 x + 1')
    call expect(client%set_model_from_file('scale_b', trim(models_dir) // '/scale.pt', 'TORCH', &
                                           'CPU', batch_size=4, min_batch_size=1, tag='b'), &
                SRNoError, 'set_model_from_file with options')
    call expect(client%delete_model('scale_b'), SRNoError, 'delete_model')
    call expect(client%run_model('no_model', ['x'], ['y']), SRKeyError, 'run a missing model')

    script_file = trim(models_dir) // '/smartredis_fortran_script.py'
    open(newunit=unit, file=script_file, status='replace', action='write')
    write(unit, '(a)') 'def times_two(x):'
    write(unit, '(a)') '    return 2 * x'
    close(unit)
    call expect(client%set_script_from_file('script', 'CPU', script_file), SRNoError, &
                'set_script_from_file')
    open(newunit=unit, file=script_file, status='old')
    close(unit, status='delete')
    call expect(client%run_script('script', 'times_two', ['x'], ['y2']), SRNoError, 'run_script')
    call expect(client%unpack_tensor('y2', y, shape(y)), SRNoError, 'unpack y2')
    call check(all(y == 2 * x), 'y2 = 2 x')
    call expect(client%delete_script('script'), SRNoError, 'delete_script')
    call expect(client%delete_model('scale'), SRNoError, 'delete_model')

    ! get_model gives back the bytes set_model stored (read from the file as a byte stream).
    open(newunit=unit, file=trim(models_dir) // '/scale.pt', access='stream', form='unformatted', &
         status='old', action='read')
    inquire(unit=unit, size=model_size)
    allocate(character(len=model_size) :: model_bytes, model_back)
    read(unit) model_bytes
    close(unit)
    call expect(client%set_model('scale_bytes', model_bytes, 'TORCH', 'CPU'), SRNoError, &
                'set_model from bytes')
    call expect(client%get_model('scale_bytes', model_back), SRNoError, 'get_model')
    call check(model_back == model_bytes, 'get_model returns the stored bytes')
    call expect(client%get_model('scale_bytes', short), SRParameterError, &
                'get_model into a short variable')
    call check(index(get_last_error(), 'holds 10') > 0, 'the message gives the lengths')
    call expect(client%get_model('no_model', model_back), SRKeyError, 'get_model of a missing model')
    call expect(client%delete_model('scale_bytes'), SRNoError, 'delete_model scale_bytes')

    ! get_script gives back the source set_script stored, blank-padded.
    call expect(client%set_script('plus', 'CPU', script_source), SRNoError, 'set_script')
    call expect(client%get_script('plus', script_back), SRNoError, 'get_script')
    call check(script_back == script_source, 'get_script returns the stored source')
    call expect(client%run_script('plus', 'plus_one', ['x'], ['y3']), SRNoError, 'run set_script')
    call expect(client%unpack_tensor('y3', y, shape(y)), SRNoError, 'unpack y3')
    call check(all(y == x + 1), 'y3 = x + 1')
    call expect(client%get_script('plus', short), SRParameterError, &
                'get_script into a short variable')
    call expect(client%delete_script('plus'), SRNoError, 'delete_script plus')
    call expect(client%get_script('plus', script_back), SRKeyError, 'get_script of a deleted script')

    call expect(client%set_model_from_file_multigpu('gpu', trim(models_dir) // '/scale.pt', &
                                                    'TORCH', 0, 0), SRParameterError, &
                'multigpu with no GPU')
    call expect(client%run_model_multigpu('gpu', ['x'], ['y'], 0, -1, 2), SRParameterError, &
                'multigpu with a negative first GPU')
  end subroutine test_models

  subroutine test_prefixes()
    integer(kind=c_int32_t) :: v(2)
    logical :: exists
    v = [1, 2]
    call expect(simple%put_tensor('mine', v, shape(v)), SRNoError, 'put mine')
    call expect(simple%set_data_source('member_b'), SRNoError, 'set_data_source')
    call expect(simple%tensor_exists('mine', exists), SRNoError, 'tensor_exists')
    call check(.not. exists, 'another member has no such tensor')
    call expect(simple%set_data_source('member_a'), SRNoError, 'set_data_source')
    call expect(simple%tensor_exists('mine', exists), SRNoError, 'tensor_exists')
    call check(exists, 'own tensor')
    call expect(simple%use_tensor_ensemble_prefix(.false.), SRNoError, 'use_tensor_ensemble_prefix')
    call expect(simple%put_tensor('plain', v, shape(v)), SRNoError, 'put plain')
    call expect(simple%key_exists('plain', exists), SRNoError, 'key_exists')
    call check(exists, 'unprefixed key')
    call expect(simple%use_model_ensemble_prefix(.false.), SRNoError, 'use_model_ensemble_prefix')
    call expect(simple%use_list_ensemble_prefix(.true.), SRNoError, 'use_list_ensemble_prefix')
    call expect(simple%use_dataset_ensemble_prefix(.true.), SRNoError, &
                'use_dataset_ensemble_prefix')
  end subroutine test_prefixes

  !> ConfigOptions of database "FORTRAN": SSDB_FORTRAN and SR_CMD_TIMEOUT_FORTRAN set here,
  !> read back, overridden, and a client made from them.
  subroutine test_configoptions()
    type(configoptions_type) :: options, never_created
    type(client_type) :: configured
    character(len=:), allocatable :: text
    character(len=512) :: ssdb
    integer(kind=c_int64_t) :: number
    integer(kind=c_int32_t) :: v(3)
    logical :: flag
    interface
      integer(c_int) function setenv(name, value, overwrite) bind(C, name="setenv")
        import :: c_int, c_char
        character(kind=c_char), intent(in) :: name(*), value(*)
        integer(c_int), value :: overwrite
      end function setenv
    end interface

    call get_environment_variable('SSDB', ssdb)
    call check(setenv('SSDB_FORTRAN' // c_null_char, trim(ssdb) // c_null_char, 1) == 0, 'setenv')
    call check(setenv('SR_CMD_TIMEOUT_FORTRAN' // c_null_char, '4321' // c_null_char, 1) == 0, &
               'setenv')
    call expect(options%create_configoptions_from_environment('FORTRAN'), SRNoError, &
                'create_configoptions_from_environment')
    flag = .false.
    call expect(options%is_configured('SSDB', flag), SRNoError, 'is_configured SSDB')
    call check(flag, 'SSDB_FORTRAN is configured')
    call expect(options%is_configured('SR_DB_TYPE', flag), SRNoError, 'is_configured SR_DB_TYPE')
    call check(.not. flag, 'SR_DB_TYPE_FORTRAN is not configured')
    call expect(options%get_string_option('SSDB', text), SRNoError, 'get_string_option SSDB')
    call check(text == trim(ssdb), 'SSDB_FORTRAN read from the environment')
    number = 0
    call expect(options%get_integer_option('SR_CMD_TIMEOUT', number), SRNoError, &
                'get_integer_option SR_CMD_TIMEOUT')
    call check(number == 4321, 'SR_CMD_TIMEOUT_FORTRAN read from the environment')
    call expect(options%get_integer_option('SR_CONN_TIMEOUT', number), SRKeyError, &
                'get_integer_option of an unset option')
    call check(number == 4321, 'a failed get_integer_option leaves the result')
    call expect(options%get_integer_option('SSDB', number), SRParameterError, &
                'get_integer_option of a string')
    call expect(options%get_string_option('SSKEYOUT', text), SRKeyError, &
                'get_string_option of an unset option')
    call expect(options%override_integer_option('SR_CMD_TIMEOUT', 7000_c_int64_t), SRNoError, &
                'override_integer_option')
    call expect(options%get_integer_option('SR_CMD_TIMEOUT', number), SRNoError, &
                'get_integer_option after override')
    call check(number == 7000, 'the override wins')
    call expect(options%override_string_option('SSKEYOUT', 'configured_member'), SRNoError, &
                'override_string_option')
    call expect(options%is_configured('SSKEYOUT', flag), SRNoError, 'is_configured SSKEYOUT')
    call check(flag, 'an override is configured')

    ! A client from the options writes with the overridden prefix.
    call expect(configured%initialize(options, 'fortran_configured'), SRNoError, &
                'initialize(cfgopts)')
    call check(index(configured%to_string(), 'fortran_configured') > 0, &
               'to_string names the configured client')
    v = [7, 8, 9]
    call expect(configured%put_tensor('from_options', v, shape(v)), SRNoError, 'put from_options')
    call expect(client%key_exists('configured_member.from_options', flag), SRNoError, &
                'key_exists configured_member.from_options')
    call check(flag, 'the client takes SSKEYOUT from the override')
    call expect(configured%destructor(), SRNoError, 'destructor of the configured client')
    call expect(configured%initialize(never_created, 'fortran_none'), SRParameterError, &
                'initialize with options never created')
  end subroutine test_configoptions

  !> A new scratch unit to print to.
  integer function scratch_unit() result(unit)
    open(newunit=unit, status='scratch', action='readwrite')
  end function scratch_unit

  !> The first line written to the scratch `unit`, which is closed.
  function first_line(unit) result(line)
    integer, intent(in) :: unit
    character(len=1024) :: line
    line = ''
    rewind(unit)
    read(unit, '(a)') line
    close(unit)
  end function first_line

  !> dataset_type's type, dimension and description calls; print_client, print_dataset and
  !> print_last_error to a unit.
  subroutine test_descriptions()
    type(dataset_type) :: dataset
    real(kind=c_double) :: field(4, 3)
    integer(kind=c_int16_t) :: counts(5)
    integer :: ttype, mdtype, dims(4), ndims, unit

    field = 1
    counts = 2
    call expect(dataset%initialize('fortran_described'), SRNoError, 'dataset%initialize')
    call expect(dataset%add_tensor('field', field, shape(field)), SRNoError, 'add_tensor')
    call expect(dataset%add_tensor('counts', counts, shape(counts)), SRNoError, 'add_tensor')
    call expect(dataset%add_meta_scalar('time', 0.5_c_float), SRNoError, 'add_meta_scalar')
    call expect(dataset%add_meta_string('label', 'ocean'), SRNoError, 'add_meta_string')

    call expect(dataset%get_tensor_type('field', ttype), SRNoError, 'get_tensor_type')
    call check(ttype == tensor_dbl, 'get_tensor_type of a real64 tensor')
    call expect(dataset%get_tensor_type('counts   ', ttype), SRNoError, 'get_tensor_type')
    call check(ttype == tensor_int16, 'get_tensor_type of an int16 tensor (padded name)')
    call expect(dataset%get_tensor_type('missing', ttype), SRKeyError, 'get_tensor_type missing')
    ndims = size(dims)
    dims = 0
    call expect(dataset%get_tensor_dims('field', dims, ndims), SRNoError, 'get_tensor_dims')
    call check(ndims == 2 .and. dims(1) == 4 .and. dims(2) == 3, 'dims keep the Fortran shape')
    ndims = 1
    call expect(dataset%get_tensor_dims('field', dims, ndims), SRBadAllocError, &
                'get_tensor_dims with room for one dimension')
    call check(ndims == 2, 'get_tensor_dims gives the rank when the room is short')
    ndims = size(dims) + 1
    call expect(dataset%get_tensor_dims('field', dims, ndims), SRParameterError, &
                'get_tensor_dims with dims_length beyond size(dims)')
    call expect(dataset%get_metadata_field_type('time', mdtype), SRNoError, &
                'get_metadata_field_type')
    call check(mdtype == meta_flt, 'metadata type of a real32 field')
    call expect(dataset%get_metadata_field_type('label', mdtype), SRNoError, &
                'get_metadata_field_type')
    call check(mdtype == meta_string, 'metadata type of a string field')
    call expect(dataset%get_metadata_field_type('none', mdtype), SRKeyError, &
                'get_metadata_field_type missing')

    call check(dataset%to_string() == 'DataSet (fortran_described): 2 tensors, 2 metadata fields', &
               'dataset%to_string: '//dataset%to_string())
    unit = scratch_unit()
    call dataset%print_dataset(unit)
    call check(first_line(unit) == dataset%to_string(), 'print_dataset(unit)')
    unit = scratch_unit()
    call client%print_client(unit)
    call check(first_line(unit) == client%to_string(), 'print_client(unit)')
    call expect(client%rename_tensor('no_such_tensor', 'other'), SRKeyError, 'rename missing')
    unit = scratch_unit()
    call print_last_error(unit)
    call check(index(first_line(unit), 'no_such_tensor') > 0, 'print_last_error(unit)')
    call expect(dataset%destroy(), SRNoError, 'dataset%destroy')
  end subroutine test_descriptions

  !> smartredis_logger with a client, a dataset, a logcontext and a string as context, read back
  !> from SR_LOG_FILE (SR_LOG_LEVEL=DEBUG: the LLDeveloper line must not be there).
  subroutine test_logging()
    type(dataset_type) :: dataset
    type(logcontext_type) :: logcontext
    character(len=4096) :: log_file
    character(len=1024) :: line
    integer :: unit, status
    logical :: found(8)

    call expect(logcontext%initialize('fortran_logcontext  '), SRNoError, 'logcontext%initialize')
    call log_data(logcontext, LLInfo, 'fortran log_data from a logcontext')
    call log_warning(logcontext, LLDebug, 'fortran log_warning from a logcontext')
    call expect(logcontext%destroy(), SRNoError, 'logcontext%destroy')
    call expect(logcontext%destroy(), SRNoError, 'logcontext%destroy again')
    call expect(dataset%initialize('fortran_log_ds'), SRNoError, 'dataset%initialize')
    call log_data(client, LLInfo, 'fortran log_data from a client')
    call log_warning(client, LLDebug, 'fortran log_warning from a client')
    call log_error(dataset, LLQuiet, 'fortran log_error from a dataset')
    call log_data('fortran_context', LLInfo, 'fortran log_data from a string')
    call log_error('fortran_context', LLDeveloper, 'fortran line above the level')
    call expect(dataset%destroy(), SRNoError, 'dataset%destroy')

    call get_environment_variable('SR_LOG_FILE', log_file, status=status)
    call check(status == 0, 'SR_LOG_FILE is set')
    if (status /= 0) return
    found = .false.
    open(newunit=unit, file=trim(log_file), status='old', action='read')
    do
      read(unit, '(a)', iostat=status) line
      if (status /= 0) exit
      if (index(line, 'fortran_program@') == 1 .and. &
          index(line, ':fortran log_data from a client') > 0) found(1) = .true.
      if (index(line, 'fortran_program@') == 1 .and. &
          index(line, ':WARNING: fortran log_warning from a client') > 0) found(2) = .true.
      if (index(line, 'fortran_log_ds@') == 1 .and. &
          index(line, ':ERROR: fortran log_error from a dataset') > 0) found(3) = .true.
      if (index(line, 'fortran_context@') == 1 .and. &
          index(line, ':fortran log_data from a string') > 0) found(4) = .true.
      if (index(line, 'fortran line above the level') > 0) found(5) = .true.
      if (index(line, 'fortran_logcontext@') == 1 .and. &
          index(line, ':New LogContext created') > 0) found(6) = .true.
      if (index(line, 'fortran_logcontext@') == 1 .and. &
          index(line, ':fortran log_data from a logcontext') > 0) found(7) = .true.
      if (index(line, 'fortran_logcontext@') == 1 .and. &
          index(line, ':WARNING: fortran log_warning from a logcontext') > 0) found(8) = .true.
    end do
    close(unit)
    call check(found(1), 'log_data(client) line in SR_LOG_FILE')
    call check(found(2), 'log_warning(client) line in SR_LOG_FILE')
    call check(found(3), 'log_error(dataset) line in SR_LOG_FILE')
    call check(found(4), 'log_data(string) line in SR_LOG_FILE')
    call check(.not. found(5), 'no line above SR_LOG_LEVEL')
    call check(found(6), 'logcontext creation line (LLDebug) in SR_LOG_FILE')
    call check(found(7), 'log_data(logcontext) line in SR_LOG_FILE')
    call check(found(8), 'log_warning(logcontext) line in SR_LOG_FILE')
  end subroutine test_logging

end program smartredis_fortran_program
