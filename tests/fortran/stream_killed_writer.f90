! The victim of tests/python/test_stream_killed_writers.py in Fortran: writer 1 of 2 of a stream
! writes its half of step 0, whose end_step reserves step 1 (the default), begins step 1 (which
! sends nothing: the step is already reserved), prints "inside 1" and sleeps until the test
! SIGKILLs it. Chunks of 1 byte or more go through shared memory over a Unix socket.
! Usage: stream_killed_writer ADDRESS STREAM. Exits 1 on any error.
program stream_killed_writer
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: output_unit
  use slipstream
  implicit none
  interface
    ! POSIX sleep(3): Fortran has no standard way to wait.
    integer(c_int) function posix_sleep(seconds) bind(C, name="sleep")
      import :: c_int
      integer(c_int), value, intent(in) :: seconds
    end function posix_sleep
  end interface
  type(stream_writer_type) :: writer
  real(c_double), target :: rho(4)  ! meshes/rho(5:8) of step 0 (offset 4 from 0)
  character(len=:), allocatable :: address, stream
  integer :: second

  if (command_argument_count() /= 2) then
    write(*, '(a)') 'usage: stream_killed_writer ADDRESS STREAM'
    error stop 1
  end if
  address = argument(1)
  stream = argument(2)
  rho = 1.0_c_double
  call check(writer%initialize(stream, 1, 2, address=address, &
                               shared_memory_min_bytes=1_c_int64_t), "initialize")
  call check(writer%begin_step(0_c_int64_t), "begin_step 0")
  call check(writer%put_chunk("meshes/rho", rho, [8_c_int64_t], [4_c_int64_t]), "put_chunk")
  call check(writer%end_step(), "end_step 0")  ! reserves step 1
  call check(writer%begin_step(1_c_int64_t), "begin_step 1")
  write(*, '(a)') 'inside 1'
  flush(output_unit)
  do second = 1, 600  ! killed here, before any chunk of step 1
    if (posix_sleep(1_c_int) /= 0) exit
  end do
  write(*, '(a)') 'stream_killed_writer: not killed within 600 s'
  error stop 1

contains

  function argument(position) result(value)
    integer, intent(in) :: position
    character(len=:), allocatable :: value
    integer :: length
    call get_command_argument(position, length=length)
    allocate(character(len=length) :: value)
    call get_command_argument(position, value)
  end function argument

  subroutine check(code, what)
    integer, intent(in) :: code
    character(len=*), intent(in) :: what
    if (code /= SLIPSTREAM_OK) then
      write(*, '(a, a, a, i0, a, a)') 'stream_killed_writer: ', what, ' failed (', code, '): ', &
        slipstream_last_error()
      error stop 1
    end if
  end subroutine check

end program stream_killed_writer
