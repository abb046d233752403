! The module `slipstream_local`: TorchScript models of tests/integration/models/make_models.py run
! in process on Fortran arrays, checked element by element (float32 and float64 of rank 2 in
! Fortran order, int64 of rank 1), and the errors. Usage: fortran_local_model_test MODELS_DIR
program fortran_local_model_test
  use, intrinsic :: iso_c_binding
  use slipstream_local
  use fortran_test_support, only: check, expect, expect_code, finish
  implicit none

  character(len=:), allocatable :: models
  integer :: length

  call get_command_argument(1, length=length)
  if (length == 0) then
    write(*, '(a)') 'usage: fortran_local_model_test MODELS_DIR'
    error stop 2
  end if
  allocate(character(len=length) :: models)
  call get_command_argument(1, models)

  call test_mlp()
  call test_two_outputs()
  call test_errors()
  deallocate(models)  ! main-program allocatables outlive the stack LeakSanitizer scans
  call finish('fortran_local_model_test')

contains

  !> make_models.py's Mlp on one row: relu(x W1^T + b1) W2^T + b2 with its fixed weights.
  real(c_float) function mlp_expected(x)
    real(c_float), intent(in) :: x(4)
    real(c_float) :: h
    integer :: i, j
    mlp_expected = 0.5
    do j = 0, 7
      h = 0.01 * j - 0.02
      do i = 0, 3
        h = h + (0.1 * (i + 1) - 0.05 * j) * x(i + 1)
      end do
      if (h > 0) mlp_expected = mlp_expected + (0.2 - 0.03 * j) * h
    end do
  end function mlp_expected

  !> x(3, 4) is the model's [3][4] input (row r = x(r, :)); y(3, 1) its [3][1] output.
  subroutine test_mlp()
    type(local_model_type) :: model
    real(c_float), allocatable, target :: x(:,:), y(:,:)
    character(len=:), allocatable :: device
    integer :: r
    allocate(x(3, 4), y(3, 1))
    x = reshape([0.5, 1.0, -2.0, -1.0, 1.0, 0.0, 2.0, 1.0, 3.0, 0.25, 1.0, -0.5], [3, 4])
    y = -7
    call check(model%load(models // '/mlp.pt', 'cpu'), 'load mlp.pt')
    call check(model%device(device), 'device')
    call expect(device == 'CPU', 'device is CPU, got ' // device)
    call check(model%run([local_tensor(x)], [local_tensor(y)]), 'run mlp')
    do r = 1, 3
      call expect(abs(y(r, 1) - mlp_expected(x(r, :))) < 1e-5, 'mlp row value')
    end do
    call check(model%destroy(), 'destroy')
    call check(model%destroy(), 'destroy again')
    ! The same MLP exported to ONNX: the format is told from the file.
    y = -7
    call check(model%load(models // '/mlp.onnx'), 'load mlp.onnx')
    call check(model%run([local_tensor(x)], [local_tensor(y)]), 'run mlp.onnx')
    do r = 1, 3
      call expect(abs(y(r, 1) - mlp_expected(x(r, :))) < 1e-5, 'mlp.onnx row value')
    end do
    call check(model%destroy(), 'destroy mlp.onnx')
  end subroutine test_mlp

  !> forward(a, b) = (a + b, a * b): real64 of rank 2 and int64 of rank 1.
  subroutine test_two_outputs()
    type(local_model_type) :: model
    real(c_double), target :: a(2, 3), b(2, 3), total(2, 3), product(2, 3)
    integer(c_int64_t), target :: i(5), j(5), isum(5), iproduct(5)
    integer :: k
    a = reshape([(1.5_c_double * k, k = 1, 6)], [2, 3])
    b = reshape([(10.0_c_double - k, k = 1, 6)], [2, 3])
    i = [(int(k, c_int64_t), k = 1, 5)]
    j = [(int(100 * k, c_int64_t), k = 1, 5)]
    call check(model%load(models // '/two_outputs.pt'), 'load two_outputs.pt')
    call check(model%run([local_tensor(a), local_tensor(b)], &
                         [local_tensor(total), local_tensor(product)]), 'run real64')
    call expect(all(total == a + b), 'a + b element by element')
    call expect(all(product == a * b), 'a * b element by element')
    call check(model%run([local_tensor(i), local_tensor(j)], &
                         [local_tensor(isum), local_tensor(iproduct)]), 'run int64')
    call expect(all(isum == i + j) .and. all(iproduct == i * j), 'int64 sum and product')
    call check(model%destroy(), 'destroy')
  end subroutine test_two_outputs

  subroutine test_errors()
    type(local_model_type) :: model
    real(c_float), target :: x(2, 4), y(2, 1), wrong(1, 2)
    real(c_double), target :: y64(2, 1)
    x = 1
    y = -7
    wrong = -7
    y64 = -7
    call expect_code(model%run([local_tensor(x)], [local_tensor(y)]), &
                     SLIPSTREAM_INVALID_ARGUMENT, 'run before load')
    call expect_code(model%load(models // '/no_such_model.pt'), SLIPSTREAM_INVALID_ARGUMENT, &
                     'load a missing file')
    call expect(index(slipstream_last_error(), 'no_such_model.pt') > 0, 'message names the file')
    call expect_code(model%load(models // '/mlp.pt', 'TPU'), SLIPSTREAM_INVALID_ARGUMENT, &
                     'load onto an unknown device')
    call check(model%load(models // '/mlp.pt'), 'load mlp.pt')
    call expect_code(model%run([local_tensor(x), local_tensor(x)], [local_tensor(y)]), &
                     SLIPSTREAM_BACKEND_ERROR, 'two inputs to a one-input model')
    call expect_code(model%run([local_tensor(x)], [local_tensor(wrong)]), &
                     SLIPSTREAM_INVALID_ARGUMENT, 'output of another shape')
    call expect(index(slipstream_last_error(), 'expects [1, 2]') > 0, 'message gives the shape')
    call expect_code(model%run([local_tensor(x)], [local_tensor(y64)]), &
                     SLIPSTREAM_INVALID_ARGUMENT, 'output of another kind')
    call expect_code(model%run([local_tensor(x)], [local_tensor(y), local_tensor(y)]), &
                     SLIPSTREAM_INVALID_ARGUMENT, 'two outputs of a one-output model')
    call expect(all(y == -7) .and. all(wrong == -7) .and. all(y64 == -7), &
                'failed runs leave the outputs untouched')
    call check(model%run([local_tensor(x)], [local_tensor(y)]), 'run after the errors')
    call expect(abs(y(2, 1) - mlp_expected(x(2, :))) < 1e-5, 'value after the errors')
    call check(model%destroy(), 'destroy')
  end subroutine test_errors

end program fortran_local_model_test
