!> slipstream-ocean: runs the wind-driven reduced-gravity basin of module ocean_model.
!> One process is one ensemble member (no domain decomposition); members differ by --forcing.
!> Exit status: 0 success, 1 the run blew up (non-finite energy or h <= 0) or output failed,
!> 2 bad command line.
program slipstream_ocean
  use, intrinsic :: iso_fortran_env, only: int64, error_unit
  use, intrinsic :: iso_c_binding, only: c_float
  use, intrinsic :: ieee_arithmetic, only: ieee_is_finite
  use ocean_model
  implicit none

  type(ocean_params) :: p
  type(ocean_state) :: s, coarse
  type(ocean_diag) :: d
  integer :: steps = 1000, csv_every = 0, progress_every = 0, factor = 0
  integer :: snap_every = 0, snap_start = 0, nsnap = 0, csv_unit = 0, feat_unit = 0, n
  character(len=:), allocatable :: csv_path, features_path, closure_name
  real(c_float), allocatable :: features(:,:), coarse_features(:,:)
  real(dp), allocatable :: eke(:)
  real(dp) :: nu_lo, nu_hi, seconds
  integer(int64) :: t0, t1, rate
  logical :: ok

  csv_path = ''
  features_path = ''
  closure_name = 'analytic'
  call parse_command_line()
  if (csv_every <= 0) csv_every = max(1, steps / 1000)
  if (progress_every <= 0) progress_every = max(1, steps / 10)
  if (snap_every <= 0) snap_every = max(1, steps / 50)

  call ocean_init(s, p)
  call viscosity_bounds(s, nu_lo, nu_hi)
  write(*, '(a,i0,a,i0,a,f0.1,a,f0.1,a,f0.1,a)') 'slipstream-ocean: grid ', s%nx, ' x ', s%ny, &
    ', dx ', s%dx / 1e3_dp, ' km, dt ', s%dt, ' s, ', steps * s%dt / 86400, ' days'
  write(*, '(a,a,a,f0.3,a,es10.3,a,es10.3,a,es10.3,a)') '  closure ', closure_name, &
    ', forcing x', p%forcing, ', nu ', nu_lo, ' .. ', nu_hi, ' m2/s (bg ', s%nu_bg, ')'

  allocate(features(n_features, s%nx * s%ny))
  if (len(csv_path) > 0) then
    open(newunit=csv_unit, file=csv_path, status='replace', action='write', iostat=n)
    if (n /= 0) call fail('cannot open ' // csv_path)
    write(csv_unit, '(a)') 'step,time,kinetic_energy,potential_energy,total_energy,volume,' // &
                           'max_cfl,mean_viscosity'
  end if
  if (factor == 0 .and. len(features_path) > 0) &
    call usage_error('--features-out needs --coarse-grain F')
  if (factor > 0) then
    if (len(features_path) == 0) call usage_error('--coarse-grain needs --features-out FILE')
    if (mod(s%nx, factor) /= 0 .or. mod(s%ny, factor) /= 0) &
      call usage_error('--coarse-grain FACTOR must divide nx and ny')
    allocate(eke((s%nx / factor) * (s%ny / factor)))
    allocate(coarse_features(n_features, size(eke)))
    call features_file_open(feat_unit, features_path, s%nx / factor, s%ny / factor, factor, &
                            s%dx * factor, s%dy * factor, ok)
    if (.not. ok) call fail('cannot write ' // features_path)
  end if

  d = ocean_diagnostics(s)
  call write_csv()
  call system_clock(t0, rate)
  do n = 1, steps
    ! The closure call site: features -> log EKE -> viscosity, once per step (the server later
    ! replaces analytic_log_eke with one batched network call).
    if (p%closure == closure_analytic) then
      call compute_features(s, features)
      call apply_closure(s, analytic_log_eke(features))
    end if
    call ocean_step(s)
    if (mod(n, csv_every) == 0 .or. mod(n, progress_every) == 0 .or. n == steps) then
      d = ocean_diagnostics(s)
      if (.not. ieee_is_finite(d%total) .or. d%min_h <= 0) then
        write(error_unit, '(a,i0,a,es10.3,a,f0.3)') 'slipstream-ocean: blew up at step ', n, &
          ', min h ', d%min_h, ' m, max CFL ', d%max_cfl
        call fail('unstable run (reduce --dt)')
      end if
      if (mod(n, csv_every) == 0 .or. n == steps) call write_csv()
      if (mod(n, progress_every) == 0 .or. n == steps) call progress()
    end if
    if (factor > 0 .and. n >= snap_start .and. mod(n, snap_every) == 0) then
      call coarse_grain(s, factor, coarse, eke)
      call compute_features(coarse, coarse_features)
      call features_file_append(feat_unit, s%nstep, s%time, coarse_features, eke, ok)
      if (.not. ok) call fail('cannot write ' // features_path)
      nsnap = nsnap + 1
    end if
  end do
  call system_clock(t1)
  seconds = real(t1 - t0, dp) / real(rate, dp)
  write(*, '(a,f0.3,a,f0.2,a)') 'slipstream-ocean: done, ', seconds, ' s wall, ', &
    1e6_dp * seconds / max(steps, 1), ' us/step'
  if (csv_unit /= 0) close(csv_unit)
  if (factor > 0) then
    call features_file_close(feat_unit, nsnap, ok)
    if (.not. ok) call fail('cannot write ' // features_path)
    write(*, '(a,i0,a,i0,a,i0,a)') 'slipstream-ocean: wrote ', nsnap, ' snapshots of ', &
      size(eke), ' coarse cells to ' // features_path // ' (', n_record, ' float32 per cell)'
  end if
  ! Main-program allocatables are not freed at exit; LeakSanitizer builds would count them.
  deallocate(features, csv_path, features_path, closure_name)
  if (allocated(eke)) deallocate(eke, coarse_features)

contains

  subroutine write_csv()
    if (csv_unit == 0) return
    write(csv_unit, '(i0,7(",",a))') d%step, num(d%time), num(d%kinetic), num(d%potential), &
      num(d%total), num(d%volume), num(d%max_cfl), num(d%mean_nu)
  end subroutine write_csv

  function num(x) result(text)
    real(dp), intent(in) :: x
    character(len=:), allocatable :: text
    character(len=24) :: buf
    write(buf, '(es16.9)') x
    text = trim(adjustl(buf))
  end function num

  subroutine progress()
    write(*, '(a,i8,a,f9.2,a,es11.4,a,es9.2,a,f6.3,a,f8.1,a,f7.1)') 'step', d%step, '  day', &
      d%time / 86400, '  E', d%total, ' J  KE/E', d%kinetic / max(d%total, tiny(1.0_dp)), &
      '  cfl', d%max_cfl, '  nu', d%mean_nu, '  min h', d%min_h
  end subroutine progress

  subroutine parse_command_line()
    integer :: i, nargs
    character(len=:), allocatable :: opt

    nargs = command_argument_count()
    i = 1
    do while (i <= nargs)
      opt = argument(i)
      select case (opt)
      case ('-h', '--help')
        call print_help()
        stop
      case ('--no-slip')
        p%no_slip = .true.
      case ('--nx');             p%nx = int_value(i)
      case ('--ny');             p%ny = int_value(i)
      case ('--steps');          steps = int_value(i)
      case ('--dt');             p%dt = real_value(i)
      case ('--forcing');        p%forcing = real_value(i)
      case ('--drag');           p%drag = real_value(i)
      case ('--nu');             p%nu_const = real_value(i)
      case ('--csv');            csv_path = text_value(i)
      case ('--csv-every');      csv_every = int_value(i)
      case ('--progress-every'); progress_every = int_value(i)
      case ('--coarse-grain');   factor = int_value(i)
      case ('--features-out');   features_path = text_value(i)
      case ('--snapshot-every'); snap_every = int_value(i)
      case ('--snapshot-start'); snap_start = int_value(i)
      case ('--closure')
        closure_name = text_value(i)
        select case (closure_name)
        case ('analytic'); p%closure = closure_analytic
        case ('none');     p%closure = closure_none
        case ('constant'); p%closure = closure_constant
        case default;      call usage_error('--closure must be analytic, none or constant')
        end select
      case default
        call usage_error('unknown option ' // opt)
      end select
      i = i + 1
    end do
    if (p%nx < 4 .or. p%ny < 4 .or. steps < 0 .or. factor < 0) &
      call usage_error('need nx, ny >= 4, steps >= 0, coarse-grain factor >= 0')
  end subroutine parse_command_line

  function argument(i) result(a)
    integer, intent(in) :: i
    character(len=:), allocatable :: a
    integer :: length
    call get_command_argument(i, length=length)
    allocate(character(len=length) :: a)
    call get_command_argument(i, a)
  end function argument

  !> The value after option i (advances i past it).
  function text_value(i) result(a)
    integer, intent(inout) :: i
    character(len=:), allocatable :: a
    if (i + 1 > command_argument_count()) call usage_error(argument(i) // ' needs a value')
    i = i + 1
    a = argument(i)
  end function text_value

  integer function int_value(i)
    integer, intent(inout) :: i
    integer :: ios
    character(len=:), allocatable :: a
    a = text_value(i)
    read(a, *, iostat=ios) int_value
    if (ios /= 0) call usage_error('not an integer: ' // a)
  end function int_value

  real(dp) function real_value(i)
    integer, intent(inout) :: i
    integer :: ios
    character(len=:), allocatable :: a
    a = text_value(i)
    read(a, *, iostat=ios) real_value
    if (ios /= 0) call usage_error('not a number: ' // a)
  end function real_value

  subroutine print_help()
    write(*, '(a)') &
      'usage: slipstream-ocean [options]', &
      '  --nx N, --ny N          cells (default 40 x 40 over 2000 km x 2000 km)', &
      '  --steps N               time steps (default 1000)', &
      '  --dt S                  time step in s (default: CFL 0.3, whole steps per day)', &
      '  --forcing X             wind stress multiplier of tau0 = 0.1 N/m2 (default 1)', &
      '  --drag R                linear drag in 1/s (default 1e-7)', &
      '  --closure NAME          analytic (default) | none (nu = 0) | constant (nu = --nu)', &
      '  --nu NU                 viscosity of --closure constant in m2/s (default 2000)', &
      '  --no-slip               no-slip walls (default free slip)', &
      '  --csv FILE              step,time,kinetic_energy,potential_energy,total_energy,volume,', &
      '                          max_cfl,mean_viscosity (SI units)', &
      '  --csv-every N           CSV row interval (default steps/1000)', &
      '  --progress-every N      progress line interval (default steps/10)', &
      '  --coarse-grain F        write training data on the grid coarsened F times ...', &
      '  --features-out FILE     ... into FILE (float32 records, see README.md)', &
      '  --snapshot-every N      steps between snapshots (default steps/50)', &
      '  --snapshot-start N      first step that may write a snapshot (spin-up; default 0)'
  end subroutine print_help

  subroutine usage_error(message)
    character(len=*), intent(in) :: message
    write(error_unit, '(a)') 'slipstream-ocean: ' // message // ' (see --help)'
    stop 2
  end subroutine usage_error

  subroutine fail(message)
    character(len=*), intent(in) :: message
    write(error_unit, '(a)') 'slipstream-ocean: ' // message
    stop 1
  end subroutine fail
end program slipstream_ocean
