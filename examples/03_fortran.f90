! Example 03 (Fortran): put a 2-D array, read it back, run a TorchScript model on it (scale.pt
! computes x * 2 + 1) and read the result; then round-trip a dataset with metadata.
! Usage: 03_fortran MODEL_FILE [ADDRESS]   (default address: SLIPSTREAM_ADDRESS, then SSDB).
! Stops with a non-zero status on any error or mismatch, so it also runs as a test.
program example_03_fortran
  use, intrinsic :: iso_c_binding
  use slipstream
  implicit none
  type(client_type) :: client
  type(dataset_type) :: step, got
  character(len=4096) :: model_file, address
  character(len=:), allocatable :: connected
  real(c_float) :: field(4, 3), back(4, 3), scaled(4, 3)
  real(c_double), allocatable :: times(:)
  integer :: i, j, code
  logical :: ok

  if (command_argument_count() < 1) then
    write(*, '(a)') 'usage: 03_fortran MODEL_FILE [ADDRESS]'
    error stop 2
  end if
  call get_command_argument(1, model_file)
  address = ''
  if (command_argument_count() > 1) call get_command_argument(2, address)

  call require(client%initialize(address), 'initialize')
  call require(client%get_address(connected), 'get_address')
  write(*, '(a, a)') 'connected to ', connected
  deallocate(connected)  ! a main program's allocatables are never freed implicitly

  ! field(i, j) = 10 (i-1) + (j-1). C, C++ and Python see shape (4, 3) with
  ! [i][j] == field(i+1, j+1).
  do j = 1, 3
    do i = 1, 4
      field(i, j) = 10.0 * (i - 1) + (j - 1)
    end do
  end do
  call require(client%put_tensor('example.field', field), 'put_tensor')
  call require(client%unpack_tensor('example.field', back), 'unpack_tensor')
  ok = all(back == field)
  call report('put and unpacked example.field real32 (4, 3)', ok)

  ! Store the model, run it on the array, read the result.
  call require(client%set_model_from_file('example.scale', model_file, 'TORCH', 'CPU'), &
               'set_model_from_file')
  call require(client%run_model('example.scale', ['example.field'], ['example.scaled']), &
               'run_model')
  call require(client%unpack_tensor('example.scaled', scaled), 'unpack_tensor')
  call report('ran model example.scale (x * 2 + 1)', all(scaled == field * 2 + 1))
  ok = ok .and. all(scaled == field * 2 + 1)

  ! Errors are values: a missing key gives SLIPSTREAM_KEY_NOT_FOUND and a message.
  code = client%unpack_tensor('example.missing', back)
  write(*, '(a, i0, a, a)') 'unpack of a missing key: code ', code, ': ', slipstream_last_error()
  ok = ok .and. code == SLIPSTREAM_KEY_NOT_FOUND

  ! A dataset: the array plus metadata.
  call require(step%initialize('example.step'), 'dataset initialize')
  call require(step%add_tensor('field', field), 'add_tensor')
  call require(step%add_meta_scalar('time', 0.125_c_double), 'add_meta_scalar')
  call require(step%add_meta_string('model', 'ocean-1deg'), 'add_meta_string')
  call require(client%put_dataset(step), 'put_dataset')
  call require(step%destroy(), 'dataset destroy')
  call require(client%get_dataset('example.step', got), 'get_dataset')
  call require(got%get_meta_scalars('time', times), 'get_meta_scalars')
  call require(got%destroy(), 'dataset destroy')
  call report('dataset example.step metadata time', size(times) == 1 .and. times(1) == 0.125)
  ok = ok .and. size(times) == 1
  deallocate(times)

  call require(client%delete_model('example.scale'), 'delete_model')
  call require(client%delete_tensor('example.field'), 'delete_tensor')
  call require(client%delete_tensor('example.scaled'), 'delete_tensor')
  call require(client%delete_dataset('example.step'), 'delete_dataset')
  call require(client%destroy(), 'destroy')
  if (.not. ok) error stop 'SOME CHECKS FAILED'
  write(*, '(a)') 'all checks passed'

contains

  ! Every call returns a status code; on failure print the message and stop.
  subroutine require(status, what)
    integer, intent(in) :: status
    character(len=*), intent(in) :: what
    if (status /= SLIPSTREAM_OK) then
      write(*, '(a, a, i0, a, a)') what, ' failed with code ', status, ': ', slipstream_last_error()
      error stop 1
    end if
  end subroutine require

  subroutine report(what, passed)
    character(len=*), intent(in) :: what
    logical, intent(in) :: passed
    write(*, '(a, a, a)') what, ': ', merge('ok      ', 'MISMATCH', passed)
  end subroutine report

end program example_03_fortran
