! The shared-memory procedures of the module `slipstream` against a real server: loans filled
! through Fortran pointers and stored, views read through read-only pointers, client statistics,
! the memory order (dimensions reversed, no element moved), views keeping their bytes after their
! key is overwritten or deleted, and the errors (zero or negative dimensions, consumed or
! destroyed handles, a pointer of the wrong kind or rank, an uninitialised client).
! Usage: shm_fortran_test shared   (SLIPSTREAM_ADDRESS is the Unix socket, shared memory on)
!        shm_fortran_test socket   (no fast path, e.g. over TCP)
! Exits with status 1 if any check fails.
program shm_fortran_test
  use, intrinsic :: iso_c_binding
  use slipstream
  use fortran_test_support
  implicit none
  type(client_type) :: client
  character(len=16) :: mode
  logical :: expect_shared

  call get_command_argument(1, mode)
  if (command_argument_count() /= 1 .or. (mode /= "shared" .and. mode /= "socket")) then
    write(*, '(a)') 'usage: shm_fortran_test shared|socket'
    error stop 2
  end if
  expect_shared = mode == "shared"

  call check(client%initialize(), "initialize")
  call test_loan_round_trip(client)
  call test_large_loan(client)
  call test_views(client)
  call test_errors(client)
  call check(client%destroy(), "destroy")
  call finish("shm_fortran_test " // trim(mode))

contains

  !> The count a statistic should have grown by: `when_shared` on the fast path, else `otherwise`.
  integer(c_int64_t) function path_count(when_shared, otherwise)
    integer, intent(in) :: when_shared, otherwise
    path_count = int(merge(when_shared, otherwise, expect_shared), c_int64_t)
  end function path_count

  subroutine test_loan_round_trip(client)
    type(client_type), intent(inout) :: client
    type(tensor_loan_type) :: loan
    type(client_stats_type) :: before, after
    real(c_double), pointer :: a(:, :)
    real(c_double) :: expected(3, 4), unpacked(4, 3)
    integer(c_int64_t), allocatable :: dims(:)
    integer :: i, j, dtype

    call check(client%stats(before), "stats")
    call expect(before%shared_memory .eqv. expect_shared, "stats%shared_memory")
    call check(client%loan(loan, a, [3_c_int64_t, 4_c_int64_t]), "loan real64 (3, 4)")
    call expect(associated(a), "the loan's pointer is associated")
    if (.not. associated(a)) return
    call expect(all(shape(a) == [3, 4]), "the loan's pointer has the Fortran shape asked for")
    do j = 1, 4
      do i = 1, 3
        expected(i, j) = 10 * i + j + 0.5_c_double
      end do
    end do
    a = expected
    call check(client%put_tensor_loan("fshm.a", loan), "put_tensor_loan")
    nullify(a)
    call expect(.not. c_associated(loan%handle), "the loan is consumed")
    call check(client%stats(after), "stats")
    call expect(after%shm_loan_puts == before%shm_loan_puts + path_count(1, 0), "shm_loan_puts")
    call expect(after%socket_puts == before%socket_puts + path_count(0, 1), "socket_puts")
    call expect(after%fallbacks == 0, "no fallbacks")

    ! No element moved: C sees the shape reversed, (4, 3), with [j-1][i-1] == a(i, j). Unpacked
    ! in Fortran order into an array of that shape, it is the transpose of what was written.
    call check(client%tensor_info("fshm.a", dtype, dims), "tensor_info")
    call expect(dtype == SLIPSTREAM_FLOAT64, "stored dtype")
    call expect(size(dims) == 2, "stored rank")
    if (size(dims) == 2) call expect(all(dims == [4, 3]), "stored shape is the reversed one")
    call check(client%unpack_tensor("fshm.a", unpacked), "unpack_tensor")
    call expect(all(unpacked == transpose(expected)), "the stored elements, in C order")
  end subroutine test_loan_round_trip

  !> 1 MiB of int8, large enough for unpack to take shared memory as well.
  subroutine test_large_loan(client)
    type(client_type), intent(inout) :: client
    type(tensor_loan_type) :: loan
    type(client_stats_type) :: before, after
    integer(c_int8_t), pointer :: big(:, :, :)
    integer(c_int8_t), allocatable :: unpacked(:, :, :)
    integer :: i, j, k

    call check(client%stats(before), "stats")
    call check(client%loan(loan, big, [128_c_int64_t, 128_c_int64_t, 64_c_int64_t]), "loan int8")
    if (.not. associated(big)) return
    do k = 1, 64
      do j = 1, 128
        do i = 1, 128
          big(i, j, k) = int(mod(i * 7 + j * 13 + k * 31, 255) - 127, c_int8_t)
        end do
      end do
    end do
    call check(client%put_tensor_loan("fshm.big", loan), "put_tensor_loan int8")
    nullify(big)
    allocate(unpacked(64, 128, 128))
    call check(client%unpack_tensor("fshm.big", unpacked), "unpack_tensor int8")
    do k = 1, 64
      do j = 1, 128
        do i = 1, 128
          if (unpacked(k, j, i) /= int(mod(i * 7 + j * 13 + k * 31, 255) - 127, c_int8_t)) then
            call expect(.false., "element of the large loan")
            return
          end if
        end do
      end do
    end do
    call check(client%stats(after), "stats")
    call expect(after%shm_loan_puts == before%shm_loan_puts + path_count(1, 0), "shm_loan_puts")
    call expect(after%shm_gets == before%shm_gets + path_count(1, 0), "shm_gets")
    call expect(after%socket_gets == before%socket_gets + path_count(0, 1), "socket_gets")
  end subroutine test_large_loan

  subroutine test_views(client)
    type(client_type), intent(inout) :: client
    type(tensor_view_type) :: view
    type(client_stats_type) :: before, after
    integer(c_int32_t) :: x(2, 3), zeros(2, 3)
    integer(c_int32_t), pointer :: p(:, :)
    real(c_double), pointer :: a(:, :)
    integer(c_int64_t), allocatable :: dims(:)
    integer :: dtype
    logical :: existed

    ! A tensor put_tensor stored with the Fortran shape (2, 3) is C shape (2, 3); its view is the
    ! Fortran array of shape (3, 2): the transpose of x, no element moved.
    x = reshape([1, -2, 30000, 4, 123456789, -6], [2, 3])
    zeros = 0
    call check(client%put_tensor("fshm.x", x), "put_tensor int32")
    call check(client%stats(before), "stats")
    call check(client%view_tensor("fshm.x", view), "view_tensor")
    call check(client%stats(after), "stats")
    call expect(after%shm_views == before%shm_views + path_count(1, 0), "shm_views")
    call expect(after%socket_gets == before%socket_gets + path_count(0, 1), "socket_gets")
    call check(view%get_info(dtype, dims), "get_info")
    call expect(dtype == SLIPSTREAM_INT32, "view dtype")
    call expect(size(dims) == 2, "view rank")
    if (size(dims) == 2) call expect(all(dims == [3, 2]), "view shape, Fortran order")
    call check(view%get_data(p), "get_data int32")
    if (.not. associated(p)) return
    call expect(all(shape(p) == [3, 2]), "the pointer's shape")
    call expect(all(p == transpose(x)), "the view's elements")
    ! Overwritten, then deleted: the view keeps what it saw.
    call check(client%put_tensor("fshm.x", zeros), "overwrite")
    call expect(all(p == transpose(x)), "the view after its key was overwritten")
    call check(client%delete_tensor("fshm.x", existed), "delete_tensor")
    call expect(existed, "the key existed")
    call expect(all(p == transpose(x)), "the view after its key was deleted")
    ! The wrong kind or rank: refused with a message, the pointer left disassociated.
    call expect_code(view%get_data(a), SLIPSTREAM_INVALID_ARGUMENT, "get_data of another kind")
    call expect(.not. associated(a), "no pointer for another kind")
    call check(view%destroy(), "view destroy")
    nullify(p)
    call check(view%destroy(), "view destroy again")
    call expect_code(view%get_data(p), SLIPSTREAM_INVALID_ARGUMENT, "get_data of a destroyed view")

    ! A loan stored and viewed from Fortran keeps its Fortran shape.
    call view_of_a_loan(client)
  end subroutine test_views

  subroutine view_of_a_loan(client)
    type(client_type), intent(inout) :: client
    type(tensor_loan_type) :: loan
    type(tensor_view_type) :: view
    integer(c_int16_t), pointer :: w(:, :, :), r(:, :, :)
    integer(c_int16_t), pointer :: wrong_rank(:, :)
    integer(c_int16_t) :: expected(2, 3, 4)
    integer :: i
    call check(client%loan(loan, w, [2_c_int64_t, 3_c_int64_t, 4_c_int64_t]), "loan int16")
    if (.not. associated(w)) return
    expected = reshape([(int(i * 37 - 400, c_int16_t), i = 1, 24)], [2, 3, 4])
    w = expected
    call check(client%put_tensor_loan("fshm.w", loan), "put_tensor_loan int16")
    nullify(w)
    call check(client%view_tensor("fshm.w", view), "view_tensor int16")
    call check(view%get_data(r), "get_data int16")
    if (associated(r)) then
      call expect(all(shape(r) == [2, 3, 4]), "the loan's shape comes back")
      call expect(all(r == expected), "the loan's elements come back")
    end if
    call expect_code(view%get_data(wrong_rank), SLIPSTREAM_INVALID_ARGUMENT, "get_data of rank 2")
    call check(view%destroy(), "view destroy")
  end subroutine view_of_a_loan

  subroutine test_errors(client)
    type(client_type), intent(inout) :: client
    type(client_type) :: never_initialised
    type(tensor_loan_type) :: loan
    type(tensor_view_type) :: view
    type(client_stats_type) :: stats
    real(c_float), pointer :: f(:)
    integer(c_int64_t), pointer :: g(:, :)
    logical :: exists

    call expect_code(client%loan(loan, f, [0_c_int64_t]), SLIPSTREAM_INVALID_ARGUMENT, &
                     "loan of zero elements")
    call expect(.not. associated(f), "no pointer after a refused loan")
    call expect_code(client%loan(loan, g, [3_c_int64_t, -1_c_int64_t]), &
                     SLIPSTREAM_INVALID_ARGUMENT, "loan with a negative dimension")
    call expect_code(client%put_tensor_loan("fshm.none", loan), SLIPSTREAM_INVALID_ARGUMENT, &
                     "put_tensor_loan of a loan never made")

    ! A loan given back, then another in the same variable (the first given back by it).
    call check(client%loan(loan, f, [16_c_int64_t]), "loan real32")
    call check(loan%destroy(), "loan destroy")
    call expect(.not. c_associated(loan%handle), "destroyed loan handle")
    call expect_code(client%put_tensor_loan("fshm.none", loan), SLIPSTREAM_INVALID_ARGUMENT, &
                     "put_tensor_loan of a destroyed loan")
    call check(loan%destroy(), "loan destroy again")
    call check(client%loan(loan, f, [8_c_int64_t]), "loan real32")
    call check(client%loan(loan, g, [2_c_int64_t, 2_c_int64_t]), "loan int64 in the same variable")
    if (associated(g)) g = 7
    call check(client%put_tensor_loan("fshm.g", loan), "put_tensor_loan int64")
    call expect_code(client%put_tensor_loan("fshm.g", loan), SLIPSTREAM_INVALID_ARGUMENT, &
                     "put_tensor_loan of a loan already stored")
    call check(client%tensor_exists("fshm.none", exists), "tensor_exists")
    call expect(.not. exists, "nothing stored by the refused puts")

    call expect_code(client%view_tensor("fshm.missing", view), SLIPSTREAM_KEY_NOT_FOUND, &
                     "view of a missing tensor")
    call expect(.not. c_associated(view%handle), "no view handle after a failure")
    call check(client%put_bytes("fshm.bytes", "abc"), "put_bytes")
    call expect_code(client%view_tensor("fshm.bytes", view), SLIPSTREAM_WRONG_TYPE, &
                     "view of a string key")

    call expect_code(never_initialised%loan(loan, f, [4_c_int64_t]), &
                     SLIPSTREAM_INVALID_ARGUMENT, "loan of an uninitialised client")
    call expect_code(never_initialised%view_tensor("fshm.g", view), &
                     SLIPSTREAM_INVALID_ARGUMENT, "view of an uninitialised client")
    call expect_code(never_initialised%stats(stats), SLIPSTREAM_INVALID_ARGUMENT, &
                     "stats of an uninitialised client")
  end subroutine test_errors

end program shm_fortran_test
