! Example 07 (Fortran): a stream from 2 writer ranks to a group of 2 readers. Each rank owns half of
! the columns of a field t(NX, NY) and publishes them every step, in Fortran order; each reader
! takes its share and checks every element against the formula. The module reverses dimensions,
! so Fortran code gives and gets extents and offsets in Fortran order while C, C++ and Python
! readers see the same bytes as a row-major {NY, NX} array. In a simulation each rank is its own
! (MPI) process with one writer; here both ranks and both readers live in one program, taking
! turns, so the example is self-contained.
! Usage: 07_stream_fortran [ADDRESS]   (default: SLIPSTREAM_ADDRESS, then SSDB). Stops with status
! 1 on any error or mismatch, so it also runs as a test.
program stream_example
  use, intrinsic :: iso_c_binding
  use slipstream
  implicit none
  integer, parameter :: NX = 6, NY = 4, STEPS = 3
  integer(c_int64_t), parameter :: NX_ = NX, NY_ = NY  ! extents and offsets are int64
  type(stream_writer_type) :: writers(0:1)
  type(stream_reader_type) :: readers(0:1)
  type(stream_step_type) :: step
  real(c_double), target :: columns(NX, NY / 2)  ! a rank's columns of t
  real(c_double), pointer :: piece(:, :)
  integer(c_int64_t), allocatable :: offset(:), extent(:)
  integer(c_int64_t) :: s, number
  real(c_double) :: time, want
  character(len=256) :: address
  integer :: rank, kind, component, pieces, p, i, j, mismatches, elements

  call get_command_argument(1, address)
  mismatches = 0
  do rank = 0, 1
    ! The writers keep their steps until one reader group has joined.
    call check(writers(rank)%initialize("example07.field", rank, 2, address=address, &
                                        expected_groups=1), "writer initialize")
    call check(readers(rank)%initialize("example07.field", "analysis", rank, 2, address=address, &
                                        strategy="slicedataset"), "reader initialize")
  end do

  do s = 0, STEPS - 1
    do rank = 0, 1
      ! Rank r owns columns j = r*NY/2+1 .. (r+1)*NY/2: global offset (0, r*NY/2), Fortran order.
      ! put_chunk borrows the (contiguous) array until end_step: it is refilled only after that.
      do j = 1, NY / 2
        do i = 1, NX
          columns(i, j) = temperature(s, i, rank * (NY / 2) + j)
        end do
      end do
      call check(writers(rank)%begin_step(s), "begin_step")
      call check(writers(rank)%put_chunk("meshes/T", columns, global_extent=[NX_, NY_], &
                                         offset=[0_c_int64_t, rank * (NY_ / 2)]), "put_chunk")
      if (rank == 0) call check(writers(0)%set_attribute("/", "time", 0.1_c_double * s), "time")
      call check(writers(rank)%end_step(), "end_step")  ! visible once both ranks have ended it
    end do

    do rank = 0, 1
      call check(readers(rank)%next_step(kind, step, number), "next_step")
      if (kind /= SLIPSTREAM_STREAM_STEP) call fail("expected a step")
      call check(step%get_attribute("/", "time", time), "get_attribute time")
      call check(step%find_component("meshes/T", component), "find_component")
      call check(step%get_component(component, piece_count=pieces), "get_component")
      elements = 0
      do p = 1, pieces
        ! The piece's offset (from 0) and extent in Fortran order, and its elements as a Fortran
        ! array of that extent pointing into the step's memory (no copy).
        call check(step%get_piece(component, p, offset=offset, extent=extent), "get_piece")
        call check(step%get_piece_data(component, p, piece), "get_piece_data")
        do j = 1, int(extent(2))
          do i = 1, int(extent(1))
            want = temperature(s, int(offset(1)) + i, int(offset(2)) + j)
            if (abs(piece(i, j) - want) > 1e-9_c_double) mismatches = mismatches + 1
          end do
        end do
        elements = elements + size(piece)
      end do
      write(*, '(a, i0, a, i0, a, f4.1, a, i0, a, i0, a)') '  reader ', rank, ', step ', number, &
        ' (time ', time, '): ', elements, ' elements in ', pieces, ' piece(s)'
      call check(step%release(), "step release")  ! the writers may reuse the slot
      call check(step%destroy(), "step destroy")
    end do
  end do

  do rank = 0, 1
    call check(writers(rank)%close(), "close")
  end do
  do rank = 0, 1
    call check(readers(rank)%next_step(kind, step), "next_step")
    if (kind /= SLIPSTREAM_STREAM_END) call fail("expected the end of the stream")
    call check(readers(rank)%destroy(), "reader destroy")
    call check(writers(rank)%destroy(), "writer destroy")
  end do
  if (mismatches > 0) call fail("elements differ from the formula")
  write(*, '(a)') 'every element matched'
  ! A main program's allocatables are not freed when it ends: free them, as a leak checker
  ! expects.
  if (allocated(offset)) deallocate(offset)
  if (allocated(extent)) deallocate(extent)

contains

  pure real(c_double) function temperature(s, i, j)
    integer(c_int64_t), intent(in) :: s
    integer, intent(in) :: i, j
    temperature = 300.0_c_double + real(s, c_double) + 0.1_c_double * real(i + 10 * j, c_double)
  end function temperature

  subroutine check(code, what)
    integer, intent(in) :: code
    character(len=*), intent(in) :: what
    if (code /= SLIPSTREAM_OK) then
      write(*, '(a, a, i0, a, a)') what, ' failed (', code, '): ', slipstream_last_error()
      stop 1
    end if
  end subroutine check

  subroutine fail(what)
    character(len=*), intent(in) :: what
    write(*, '(a, a)') 'FAILED: ', what
    stop 1
  end subroutine fail

end program stream_example
