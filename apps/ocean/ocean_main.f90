!> slipstream-ocean: runs the wind-driven reduced-gravity basin of module ocean_model.
!> One process is one ensemble member (no domain decomposition); members differ by --forcing.
!> Exit status: 0 success, 1 the run blew up (non-finite energy or h <= 0), output failed or the
!> server closure failed (no server, no model, a failed call), 2 bad command line.
!> --closure server: the log EKE comes from a model on a Slipstream server (module ocean_server),
!> one batched call per step; --closure local: from the same TorchScript model run in this process
!> (module ocean_local). The call's wall time is reported as a fraction of the step time.
program slipstream_ocean
  use, intrinsic :: iso_fortran_env, only: int64, error_unit
  use, intrinsic :: iso_c_binding, only: c_float
  use, intrinsic :: ieee_arithmetic, only: ieee_is_finite
  use ocean_model
  use ocean_server
  use ocean_local
  implicit none

  type(ocean_params) :: p
  type(ocean_state) :: s, coarse
  type(ocean_diag) :: d
  integer :: steps = 1000, csv_every = 0, progress_every = 0, factor = 0
  integer :: snap_every = 0, snap_start = 0, nsnap = 0, csv_unit = 0, feat_unit = 0, n
  character(len=:), allocatable :: csv_path, features_path, closure_name, model_name, message
  character(len=:), allocatable :: model_file
  real(c_float), allocatable, target :: features(:,:), log_eke(:)
  real(c_float), allocatable :: coarse_features(:,:)
  type(server_closure) :: server
  type(local_closure) :: local
  logical :: use_server = .false., use_local = .false.
  real(dp) :: check_tol = -1, check_max = 0  !< --check-analytic: largest |served - analytic|
  ! Clock counts in the model call and in whole steps, since the last CSV row / progress line /
  ! start: the inference fraction of each is infer / step.
  integer(int64) :: infer_csv = 0, step_csv = 0, infer_prog = 0, step_prog = 0
  integer(int64) :: infer_all = 0, ts0, ts1, ti0, ti1
  real(dp), allocatable :: eke(:)
  real(dp) :: nu_lo, nu_hi, seconds
  real :: cpu0, cpu1  !< this process's CPU time over the steps (start-up excluded)
  integer(int64) :: t0, t1, rate
  logical :: ok

  csv_path = ''
  features_path = ''
  closure_name = 'analytic'
  model_name = ''
  model_file = ''
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

  allocate(features(n_features, s%nx * s%ny), log_eke(s%nx * s%ny))
  if (use_server) then
    call server%connect(model_name, ok, message)
    if (.not. ok) call fail('--closure server: ' // message)
    ! Said in the log so that a run can be checked for the closure and the keys it used.
    write(*, '(a)') '  server closure: model ' // model_name // ', key prefix "' // &
      server%prefix // '", features ' // trim(server%features_key) // ' -> ' // &
      trim(server%output_key) // ', one call per step (' // &
      trim(merge('1 round trip ', '3 round trips', server%one_round_trip)) // ')'
  end if
  if (use_local) then
    call local%load(model_file, ok, message)
    if (.not. ok) call fail('--closure local: ' // message)
    write(*, '(a)') '  local closure: model file ' // model_file // ' in process on ' // &
      local%device // ', one call per step'
  end if
  if (len(csv_path) > 0) then
    open(newunit=csv_unit, file=csv_path, status='replace', action='write', iostat=n)
    if (n /= 0) call fail('cannot open ' // csv_path)
    write(csv_unit, '(a)') 'step,time,kinetic_energy,potential_energy,total_energy,volume,' // &
                           'max_cfl,mean_viscosity,inference_fraction'
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
  call cpu_time(cpu0)
  do n = 1, steps
    call system_clock(ts0)
    ! The closure call site: features -> log EKE -> viscosity, once per step; with the server,
    ! one batched network call per step (and rank) replaces analytic_log_eke.
    if (use_server .or. use_local) then
      call compute_features(s, features)
      call system_clock(ti0)
      if (use_server) then
        call server%predict(features, log_eke, ok, message)
      else
        call local%predict(features, log_eke, ok, message)
      end if
      call system_clock(ti1)
      if (.not. ok) call fail('--closure ' // closure_name // ', step ' // itoa(n) // ': ' // message)
      infer_csv = infer_csv + (ti1 - ti0)
      infer_prog = infer_prog + (ti1 - ti0)
      infer_all = infer_all + (ti1 - ti0)
      if (check_tol >= 0) check_max = max(check_max, &
        real(maxval(abs(log_eke - analytic_log_eke(features))), dp))
      call apply_closure(s, log_eke)
    else if (p%closure == closure_analytic) then
      call compute_features(s, features)
      call apply_closure(s, analytic_log_eke(features))
    end if
    call ocean_step(s)
    call system_clock(ts1)
    step_csv = step_csv + (ts1 - ts0)
    step_prog = step_prog + (ts1 - ts0)
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
  call cpu_time(cpu1)
  seconds = real(t1 - t0, dp) / real(rate, dp)
  write(*, '(a,f0.3,a,f0.2,a)') 'slipstream-ocean: done, ', seconds, ' s wall, ', &
    1e6_dp * seconds / max(steps, 1), ' us/step'
  write(*, '(a,f0.2,a)') 'slipstream-ocean: CPU time ', &
    1e6_dp * real(cpu1 - cpu0, dp) / max(steps, 1), ' us/step in this process'
  if (use_server .or. use_local) then
    write(*, '(a,f0.2,a,f0.4,a)') 'slipstream-ocean: ' // closure_name // ' closure ', &
      1e6_dp * real(infer_all, dp) / real(rate, dp) / max(steps, 1), ' us/step, ', &
      real(infer_all, dp) / real(max(t1 - t0, 1_int64), dp), ' of the step time'
  end if
  if (use_server) call server%disconnect()
  if (use_local) call local%unload()
  if (check_tol >= 0) then
    write(*, '(a,es10.3,a,es10.3)') 'slipstream-ocean: served vs analytic log EKE, max |diff| ', &
      check_max, ', tolerance ', check_tol
    if (.not. (check_max <= check_tol)) call fail('served model does not match analytic_log_eke')
  end if
  if (csv_unit /= 0) close(csv_unit)
  if (factor > 0) then
    call features_file_close(feat_unit, nsnap, ok)
    if (.not. ok) call fail('cannot write ' // features_path)
    write(*, '(a,i0,a,i0,a,i0,a)') 'slipstream-ocean: wrote ', nsnap, ' snapshots of ', &
      size(eke), ' coarse cells to ' // features_path // ' (', n_record, ' float32 per cell)'
  end if
  ! Main-program allocatables are not freed at exit; LeakSanitizer builds would count them.
  deallocate(features, log_eke, csv_path, features_path, closure_name, model_name, model_file)
  if (allocated(eke)) deallocate(eke, coarse_features)
  if (allocated(message)) deallocate(message)

contains

  subroutine write_csv()
    if (csv_unit == 0) return
    write(csv_unit, '(i0,8(",",a))') d%step, num(d%time), num(d%kinetic), num(d%potential), &
      num(d%total), num(d%volume), num(d%max_cfl), num(d%mean_nu), &
      num(real(infer_csv, dp) / real(max(step_csv, 1_int64), dp))
    infer_csv = 0
    step_csv = 0
  end subroutine write_csv

  function num(x) result(text)
    real(dp), intent(in) :: x
    character(len=:), allocatable :: text
    character(len=24) :: buf
    write(buf, '(es16.9)') x
    text = trim(adjustl(buf))
  end function num

  subroutine progress()
    write(*, '(a,i8,a,f9.2,a,es11.4,a,es9.2,a,f6.3,a,f8.1,a,f7.1,a,f6.3)') 'step', d%step, '  day', &
      d%time / 86400, '  E', d%total, ' J  KE/E', d%kinetic / max(d%total, tiny(1.0_dp)), &
      '  cfl', d%max_cfl, '  nu', d%mean_nu, '  min h', d%min_h, &
      '  infer', real(infer_prog, dp) / real(max(step_prog, 1_int64), dp)
    infer_prog = 0
    step_prog = 0
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
        case ('server')
          ! Start from the analytic viscosity (the background at rest); the server's
          ! predictions take over from the first step.
          p%closure = closure_analytic
          use_server = .true.
        case ('local')
          p%closure = closure_analytic
          use_local = .true.
        case default
          call usage_error('--closure must be analytic, none, constant, server or local')
        end select
      case ('--model');          model_name = text_value(i)
      case ('--model-file');     model_file = text_value(i)
      case ('--server-round-trips')
        select case (int_value(i))
        case (1); server%one_round_trip = .true.
        case (3); server%one_round_trip = .false.
        case default; call usage_error('--server-round-trips must be 1 or 3')
        end select
      case ('--check-analytic'); check_tol = real_value(i)
      case default
        call usage_error('unknown option ' // opt)
      end select
      i = i + 1
    end do
    if (p%nx < 4 .or. p%ny < 4 .or. steps < 0 .or. factor < 0) &
      call usage_error('need nx, ny >= 4, steps >= 0, coarse-grain factor >= 0')
    if (use_server .and. len(model_name) == 0) call usage_error('--closure server needs --model NAME')
    if (use_local .and. len(model_file) == 0) &
      call usage_error('--closure local needs --model-file FILE')
    if (check_tol >= 0 .and. .not. (use_server .or. use_local)) &
      call usage_error('--check-analytic needs --closure server or local')
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
      '  --closure server        log EKE from a model on a Slipstream server (SSDB), one call', &
      '                          per step; keys ocean.features (4*nx*ny float32, cell-major,', &
      '                          = C [nx*ny][4]) -> ocean.log_eke (nx*ny), prefixed by SSKEYOUT', &
      '  --model NAME            the server model of --closure server', &
      '  --server-round-trips N  1 (default): put, run and get pipelined (run_model_on);', &
      '                          3: put_tensor, run_model, unpack_tensor one after the other', &
      '  --closure local         the same, with the TorchScript model of --model-file run in', &
      '                          this process (no server)', &
      '  --model-file FILE       the TorchScript file of --closure local (train_closure.py)', &
      '  --check-analytic TOL    (test) fail unless the served log EKE equals the analytic', &
      '                          formula to TOL: checks the layout with an analytic model', &
      '                          (--closure server or local)', &
      '  --no-slip               no-slip walls (default free slip)', &
      '  --csv FILE              step,time,kinetic_energy,potential_energy,total_energy,volume,', &
      '                          max_cfl,mean_viscosity,inference_fraction (SI units; the', &
      '                          last: model call time / step time since the last row)', &
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

  function itoa(k) result(text)
    integer, intent(in) :: k
    character(len=:), allocatable :: text
    character(len=12) :: buf
    write(buf, '(i0)') k
    text = trim(buf)
  end function itoa

  subroutine fail(message)
    character(len=*), intent(in) :: message
    write(error_unit, '(a)') 'slipstream-ocean: ' // message
    stop 1
  end subroutine fail
end program slipstream_ocean
