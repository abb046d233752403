! One Fortran writer rank of the stream `fortran.stream` (run as ranks 0 and 1 of 2, two processes,
! by stream_fortran.sh; stream_check.cpp reads it in C++ and checks every element).
!
! The global field is a Fortran array f(NX, NY) = f(6, 8), so readers in C order see extent
! {8, 6} and element [j-1][i-1] == f(i, j). At step s the value of f(i, j) (1-based global
! indices) is  s * 1000 + i + 100 * j + c,  with c per component:
!   meshes/rho   c = 0     rank r owns columns j = 4r+1 .. 4r+4 (a contiguous local array)
!   meshes/E/x   c = 0.5   rank r owns rows    i = 3r+1 .. 3r+3 (a contiguous local array)
!   meshes/E/y   c = 0.25  the columns of meshes/rho, as the interior g(1:NX, 1:4) of an array
!                          with ghost cells g(0:NX+1, 0:5): a non-contiguous section (copied)
! Steps 0 .. STEPS-1. Attributes: step "/" time = 0.5 * s (real), "/" iteration = s (integer),
! "meshes/rho" unitSI = 1.0; stream "/" software = "fortran-test" (rank 0) and "meshes/E"
! axisLabels = ["y", "x"] (C order). The writers turn reserve_next_step off and send every chunk
! through shared memory (shared_memory_min_bytes = 1, over a Unix socket), so the checker also
! shows that those options are taken; a negative shared_memory_min_bytes must be refused.
! meshes/rho goes through zstd and meshes/E/x through blosc (lossless: still checked exactly).
! Usage: stream_writer RANK   (SLIPSTREAM_ADDRESS names the server). Exits 1 on any error.
program stream_writer
  use, intrinsic :: iso_c_binding
  use slipstream
  implicit none
  integer, parameter :: NX = 6, NY = 8, WRITERS = 2, STEPS = 4
  type(stream_writer_type) :: writer, refused
  real(c_double), allocatable, target :: rho(:, :), ex(:, :), ghosted(:, :)
  integer(c_int64_t) :: step
  integer :: rank, i, j, i0, j0
  character(len=16) :: argument

  call get_command_argument(1, argument)
  read(argument, *) rank
  i0 = 3 * rank  ! rows before this rank's rows of meshes/E/x
  j0 = 4 * rank  ! columns before this rank's columns of meshes/rho and meshes/E/y
  allocate(rho(NX, 4), ex(3, NY), ghosted(0:NX + 1, 0:5))

  if (refused%initialize("fortran.stream", rank, WRITERS, expected_groups=2, &
                         shared_memory_min_bytes=-1_c_int64_t) /= SLIPSTREAM_INVALID_ARGUMENT) then
    write(*, '(a)') 'stream_writer: a negative shared_memory_min_bytes was not refused'
    stop 1
  end if
  call check(writer%initialize("fortran.stream", rank, WRITERS, expected_groups=2, &
                               hostname="node" // achar(iachar('0') + rank), &
                               shared_memory_min_bytes=1_c_int64_t, reserve_next_step=.false.), &
             "initialize")
  ! Lossless operators on two components (the checker's exact comparison shows that readers get
  ! the decoded values); a zfp accuracy of 0 is refused.
  call check(writer%set_operator("meshes/rho", "zstd", "level=3"), "set_operator zstd")
  call check(writer%set_operator("meshes/E/x", "blosc", "clevel=5,doshuffle=BLOSC_SHUFFLE"), &
             "set_operator blosc")
  if (writer%set_operator("meshes/E/y", "zfp", "accuracy=0") /= SLIPSTREAM_INVALID_ARGUMENT) then
    write(*, '(a)') 'stream_writer: a zfp accuracy of 0 was not refused'
    stop 1
  end if
  if (rank == 0) then
    call check(writer%set_attribute("/", "software", "fortran-test", stream_level=.true.), &
               "stream attribute software")
    call check(writer%set_attribute("meshes/E", "axisLabels", ["y", "x"], stream_level=.true.), &
               "stream attribute axisLabels")
  end if
  do step = 0, STEPS - 1
    do j = 1, 4
      do i = 1, NX
        rho(i, j) = value(step, i, j0 + j, 0.0_c_double)
        ghosted(i, j) = value(step, i, j0 + j, 0.25_c_double)
      end do
    end do
    do j = 1, NY
      do i = 1, 3
        ex(i, j) = value(step, i0 + i, j, 0.5_c_double)
      end do
    end do
    call check(writer%begin_step(step), "begin_step")
    call check(writer%put_chunk("meshes/rho", rho, [int(NX, c_int64_t), int(NY, c_int64_t)], &
                                [0_c_int64_t, int(j0, c_int64_t)]), "put_chunk rho")
    call check(writer%put_chunk("meshes/E/x", ex, [int(NX, c_int64_t), int(NY, c_int64_t)], &
                                [int(i0, c_int64_t), 0_c_int64_t]), "put_chunk E/x")
    ! A non-contiguous section: copied by the library (the others are borrowed until end_step).
    call check(writer%put_chunk("meshes/E/y", ghosted(1:NX, 1:4), &
                                [int(NX, c_int64_t), int(NY, c_int64_t)], &
                                [0_c_int64_t, int(j0, c_int64_t)]), "put_chunk E/y")
    ghosted = -1  ! the copy was taken: changing the array now must not change the step
    if (rank == 0) then
      call check(writer%set_attribute("/", "time", 0.5_c_double * real(step, c_double)), "time")
      call check(writer%set_attribute("/", "iteration", step), "iteration")
      call check(writer%set_attribute("meshes/rho", "unitSI", 1.0_c_double), "unitSI")
    end if
    call check(writer%end_step(), "end_step")
  end do
  call check(writer%close(), "close")
  call check(writer%destroy(), "destroy")
  deallocate(rho, ex, ghosted)  ! so that the memcheck run reports only the library's leaks
  write(*, '(a, i0, a)') 'stream_writer rank ', rank, ': all steps written'

contains

  pure real(c_double) function value(s, i, j, c)
    integer(c_int64_t), intent(in) :: s
    integer, intent(in) :: i, j
    real(c_double), intent(in) :: c
    value = real(s * 1000 + i + 100 * j, c_double) + c
  end function value

  subroutine check(code, what)
    integer, intent(in) :: code
    character(len=*), intent(in) :: what
    if (code /= SLIPSTREAM_OK) then
      write(*, '(a, i0, a, a, a, i0, a, a)') 'stream_writer rank ', rank, ': ', what, &
        ' failed (', code, '): ', slipstream_last_error()
      stop 1
    end if
  end subroutine check

end program stream_writer
