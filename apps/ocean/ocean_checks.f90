!> slipstream-ocean-checks MODE: numerical checks of module ocean_model, exit status 1 on failure.
!>   conservation  volume to round-off; energy without wind, drag and viscosity; energy budget
!>   double_gyre   a year of wind: western intensification, gyre senses, Sverdrup transport
!>   features      feature array shape/values, closure caps, coarse-graining, training-file format
!>   all           all of the above
program ocean_checks
  use, intrinsic :: iso_fortran_env, only: int32, int64, error_unit
  use, intrinsic :: iso_c_binding, only: c_float
  use, intrinsic :: ieee_arithmetic, only: ieee_value, ieee_quiet_nan, ieee_positive_inf, &
                                           ieee_negative_inf, ieee_is_finite
  use ocean_model
  implicit none

  integer :: failures = 0
  character(len=32) :: mode

  mode = 'all'
  if (command_argument_count() >= 1) call get_command_argument(1, mode)
  select case (mode)
  case ('conservation')
    call check_conservation()
  case ('double_gyre')
    call check_double_gyre()
  case ('features')
    call check_features()
  case ('all')
    call check_conservation()
    call check_double_gyre()
    call check_features()
  case default
    write(error_unit, '(a)') 'usage: slipstream-ocean-checks conservation|double_gyre|features|all'
    stop 2
  end select
  if (failures > 0) then
    write(error_unit, '(i0,a)') failures, ' check(s) failed'
    stop 1
  end if
  write(*, '(a)') 'all checks passed'

contains

  !> Records one named check: `ok` decides, `detail` says what was measured against what bound.
  subroutine expect(ok, name, detail)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: name, detail
    if (ok) then
      write(*, '(a)') 'PASS ' // name // ': ' // detail
    else
      write(*, '(a)') 'FAIL ' // name // ': ' // detail
      failures = failures + 1
    end if
  end subroutine expect

  function fmt(x) result(text)
    real(dp), intent(in) :: x
    character(len=:), allocatable :: text
    character(len=32) :: buf
    write(buf, '(es10.3)') x
    text = trim(adjustl(buf))
  end function fmt

  !> A Gaussian thickness anomaly (amplitude 50 m, radius 200 km) off-centre in geostrophic
  !> balance, f v = g' dh/dx, f u = -g' dh/dy: an eddy that drifts west and sheds Rossby waves
  !> (nonlinear, beta), so every term of the equations works, with few inertia-gravity waves.
  subroutine add_eddy(s)
    type(ocean_state), intent(inout) :: s
    integer :: i, j
    real(dp) :: x, y, f
    do j = 1, s%ny
      do i = 1, s%nx
        x = (i - 0.5_dp) * s%dx - 0.6_dp * s%p%lx
        y = (j - 0.5_dp) * s%dy - 0.45_dp * s%p%ly
        s%h(i, j) = s%h(i, j) + 50.0_dp * exp(-(x**2 + y**2) / 2.0e5_dp**2)
      end do
    end do
    call fill_ghosts(s)
    do j = 1, s%ny        ! gradients averaged from the four neighbouring centred differences
      f = s%f_centre(j)
      do i = 2, s%nx
        s%u(i, j) = -s%p%gprime / f * 0.5_dp * (s%h(i-1, j+1) + s%h(i, j+1) - s%h(i-1, j-1) &
                                                - s%h(i, j-1)) / (2 * s%dy)
      end do
    end do
    do j = 2, s%ny
      f = 0.5_dp * (s%f_centre(j-1) + s%f_centre(j))
      do i = 1, s%nx
        s%v(i, j) = s%p%gprime / f * 0.5_dp * (s%h(i+1, j-1) + s%h(i+1, j) - s%h(i-1, j-1) &
                                               - s%h(i-1, j)) / (2 * s%dx)
      end do
    end do
    call fill_ghosts(s)
  end subroutine add_eddy

  !> Runs `steps` steps of the analytic closure (if chosen); returns the largest relative
  !> deviation of total energy and of volume from their initial values.
  subroutine run(s, steps, max_de, max_dv)
    type(ocean_state), intent(inout) :: s
    integer, intent(in) :: steps
    real(dp), intent(out) :: max_de, max_dv
    type(ocean_diag) :: d0, d
    real(c_float), allocatable :: features(:,:)
    integer :: n

    allocate(features(n_features, s%nx * s%ny))
    d0 = ocean_diagnostics(s)
    max_de = 0
    max_dv = 0
    do n = 1, steps
      if (s%p%closure == closure_analytic) then
        call compute_features(s, features)
        call apply_closure(s, analytic_log_eke(features))
      end if
      call ocean_step(s)
      d = ocean_diagnostics(s)
      if (d0%total > 0) max_de = max(max_de, abs(d%total - d0%total) / d0%total)
      max_dv = max(max_dv, abs(d%volume - d0%volume) / d0%volume)
    end do
  end subroutine run

  subroutine check_conservation()
    type(ocean_params) :: p
    type(ocean_state) :: s
    type(ocean_diag) :: d0, d
    real(dp) :: de, de_half, dv, residual, dissipated
    integer :: steps

    ! Volume: the flux-form continuity telescopes, so only round-off changes it, whatever the
    ! forcing, closure or boundary condition.
    p = ocean_params()
    p%no_slip = .true.
    call ocean_init(s, p)
    call add_eddy(s)
    call run(s, 3000, de, dv)
    call expect(dv < 1.0e-13_dp, 'volume conserved (wind, drag, closure, no slip, 3000 steps)', &
                'max |V-V0|/V0 = ' // fmt(dv) // ' < 1e-13')

    ! Energy, inviscid: no wind, drag or viscosity. The spatial scheme conserves energy exactly,
    ! so what remains is the time-stepping error: the forward-backward exchange between kinetic
    ! and potential energy, first order in dt, so halving dt must about halve it.
    p = ocean_params()
    p%forcing = 0
    p%drag = 0
    p%closure = closure_none
    call ocean_init(s, p)
    call add_eddy(s)
    steps = nint(60 * 86400 / s%dt)
    call run(s, steps, de, dv)
    call expect(de < 2.0e-3_dp, 'energy conserved, inviscid, 60 days', &
                'max |E-E0|/E0 = ' // fmt(de) // ' < 2e-3 (dt ' // fmt(s%dt) // ' s)')
    p%dt = s%dt / 2
    call ocean_init(s, p)
    call add_eddy(s)
    call run(s, 2 * steps, de_half, dv)
    call expect(de_half < 0.6_dp * de, 'energy error first order in dt', &
                'dt/2 gives ' // fmt(de_half) // ' < 0.6 x ' // fmt(de))

    ! Energy budget with every non-conservative term: E(t) - E(0) must equal the accumulated
    ! work of wind, drag and viscosity (both dissipations negative), up to the time-stepping error.
    p = ocean_params()
    call ocean_init(s, p)
    call add_eddy(s)
    d0 = ocean_diagnostics(s)
    call run(s, nint(60 * 86400 / s%dt), de, dv)
    d = ocean_diagnostics(s)
    dissipated = abs(d%work_drag) + abs(d%work_visc)
    residual = d%total - d0%total - (d%work_wind + d%work_drag + d%work_visc)
    call expect(d%work_drag < 0 .and. d%work_visc < 0, 'drag and viscosity dissipate', &
                'work drag ' // fmt(d%work_drag) // ' J, viscosity ' // fmt(d%work_visc) // ' J')
    call expect(abs(residual) < 0.01_dp * dissipated, 'energy budget closes, 60 days', &
                '|dE - work| = ' // fmt(abs(residual)) // ' J < 1% of dissipated ' // &
                fmt(dissipated) // ' J (wind work ' // fmt(d%work_wind) // ' J)')
  end subroutine check_conservation

  subroutine check_double_gyre()
    type(ocean_params) :: p
    type(ocean_state) :: s
    real(dp) :: de, dv, v_west, v_east, t_south, t_north, t_sverdrup, curl
    integer :: strip, j_south, j_north

    p = ocean_params()
    call ocean_init(s, p)
    call run(s, nint(365 * 86400 / s%dt), de, dv)
    strip = max(1, s%nx / 8)   ! 250 km at the default 50 km grid
    v_west = maxval(abs(s%v(1:strip, :)))
    v_east = maxval(abs(s%v(s%nx-strip+1:s%nx, :)))
    call expect(v_west > 5 * v_east, 'western intensification after 1 year', &
                'max|v| west ' // fmt(v_west) // ' m/s > 5 x east ' // fmt(v_east) // ' m/s')
    ! Northward transport h v dx across the western strip at y = Ly/4 and 3Ly/4: the subtropical
    ! boundary current flows north, the subpolar one south, each returning the interior Sverdrup
    ! transport Lx curl(tau)/(rho0 beta), |curl tau| = 2 pi tau0/Ly at those latitudes.
    j_south = s%ny / 4 + 1
    j_north = 3 * s%ny / 4 + 1
    t_south = transport(s, strip, j_south)
    t_north = transport(s, strip, j_north)
    curl = 2 * 3.14159265358979_dp * p%forcing * p%tau0 / p%ly
    t_sverdrup = p%lx * curl / (p%rho0 * p%beta)
    call expect(t_south > 0 .and. t_north < 0, 'double gyre senses', &
                'western transport ' // fmt(t_south / 1e6_dp) // ' Sv at Ly/4, ' // &
                fmt(t_north / 1e6_dp) // ' Sv at 3Ly/4')
    call expect(abs(t_south) > 0.5_dp * t_sverdrup .and. abs(t_south) < 1.5_dp * t_sverdrup, &
                'boundary current returns the Sverdrup transport', &
                fmt(t_south / 1e6_dp) // ' Sv against Sverdrup ' // fmt(t_sverdrup / 1e6_dp) // &
                ' Sv (between 0.5x and 1.5x)')
  end subroutine check_double_gyre

  real(dp) function transport(s, strip, j)
    type(ocean_state), intent(in) :: s
    integer, intent(in) :: strip, j
    transport = sum(0.5_dp * (s%h(1:strip, j-1) + s%h(1:strip, j)) * s%v(1:strip, j)) * s%dx
  end function transport

  subroutine check_features()
    type(ocean_params) :: p
    type(ocean_state) :: s, fine, coarse
    real(c_float), allocatable :: features(:,:), log_eke(:), cf(:,:)
    real(dp), allocatable :: eke(:)
    real(dp) :: de, dv, nu_lo, nu_hi, c, rd, err, a
    real(c_float) :: extremes(8)
    integer :: i, j, k, unit, ios, ncells
    character(len=8) :: magic
    integer(int32) :: header(6)
    integer(int64) :: fsize
    logical :: ok

    p = ocean_params()
    call ocean_init(s, p)
    allocate(features(n_features, s%nx * s%ny))
    call compute_features(s, features)
    call expect(size(features, 1) == 4 .and. size(features, 2) == s%nx * s%ny .and. &
                is_contiguous(features) .and. storage_size(features) == 32, &
                'feature array shape', '(4, nx*ny) contiguous float32, nx*ny = 1600')
    ! At rest: no flow, no slope, and Rd/dx known in closed form for every row.
    err = 0
    c = sqrt(p%gprime * p%h0)
    do j = 1, s%ny
      rd = c / sqrt(s%f_centre(j)**2 + 2 * p%beta * c)
      do i = 1, s%nx
        k = i + (j - 1) * s%nx
        err = max(err, abs(features(4, k) - rd / s%delta) / (rd / s%delta), &
                  real(maxval(abs(features(1:3, k))), dp))
      end do
    end do
    call expect(err < 1.0e-6_dp, 'features at rest', 'mke = slope = vorticity = 0, Rd/dx exact: ' &
                // 'max error ' // fmt(err))

    call run(s, 500, de, dv)
    call compute_features(s, features)
    call expect(all(ieee_is_finite(features)) .and. all(features(1:2, :) >= 0) .and. &
                all(features(4, :) > 0), 'features after 500 forced steps', &
                'finite; mke, slope >= 0; Rd/dx > 0; max mke ' &
                // fmt(real(maxval(features(1, :)), dp)) // ' m2/s2, max |vorticity| ' &
                // fmt(real(maxval(abs(features(3, :))), dp)) // ' 1/s')
    log_eke = analytic_log_eke(features)
    call expect(all(ieee_is_finite(log_eke)) .and. &
                all(log_eke >= real(log(analytic_eke_floor), c_float) - 1e-5), &
                'analytic log EKE', 'finite, >= log(1e-6); range ' // &
                fmt(real(minval(log_eke), dp)) // ' .. ' // fmt(real(maxval(log_eke), dp)))

    ! The closure must keep nu within its bounds whatever the network says.
    call viscosity_bounds(s, nu_lo, nu_hi)
    extremes = [-huge(1.0_c_float), huge(1.0_c_float), ieee_value(1.0_c_float, ieee_quiet_nan), &
                ieee_value(1.0_c_float, ieee_positive_inf), &
                ieee_value(1.0_c_float, ieee_negative_inf), -50.0, 50.0, -2.0]
    do k = 1, size(log_eke)
      log_eke(k) = extremes(mod(k - 1, size(extremes)) + 1)
    end do
    call apply_closure(s, log_eke)
    call expect(all(ieee_is_finite(s%nu)) .and. minval(s%nu) >= nu_lo .and. &
                maxval(s%nu) <= nu_hi .and. nu_hi <= 0.5_dp / (s%dt * (2 / s%dx**2)), &
                'closure caps', 'log EKE in {-huge, huge, NaN, +-Inf, -50, 50, -2}: nu in [' // &
                fmt(minval(s%nu)) // ', ' // fmt(maxval(s%nu)) // '] within [' // fmt(nu_lo) // &
                ', ' // fmt(nu_hi) // '] m2/s, below the stability limit')

    ! Coarse-graining against a field with known sub-grid energy: u = +-a alternating by row
    ! (walls excluded), so blocks of 2 x 2 have zero mean and EKE = a^2/2 away from the walls.
    p = ocean_params()
    p%nx = 80
    p%ny = 80
    p%closure = closure_none
    call ocean_init(fine, p)
    call add_eddy(fine)
    a = 0.3_dp
    fine%v = 0
    do j = 1, fine%ny
      fine%u(2:fine%nx, j) = a * (-1)**j
    end do
    call fill_ghosts(fine)
    allocate(eke(40 * 40))
    call coarse_grain(fine, 2, coarse, eke)
    err = 0
    do j = 2, 39
      do i = 2, 39
        err = max(err, abs(eke(i + (j - 1) * 40) - 0.5_dp * a**2))
      end do
    end do
    dv = abs(sum(coarse%h(1:40, 1:40)) * coarse%dx * coarse%dy &
             - sum(fine%h(1:80, 1:80)) * fine%dx * fine%dy) / (p%lx * p%ly * p%h0)
    call expect(err < 1.0e-12_dp .and. dv < 1.0e-14_dp .and. all(eke >= 0) .and. &
                maxval(abs(coarse%u)) < 1.0e-12_dp, 'coarse-graining', &
                'EKE = a^2/2 to ' // fmt(err) // ', volume kept to ' // fmt(dv) // &
                ', block-mean u = 0')

    ! Training file: header and size as documented in README.md.
    allocate(cf(n_features, 40 * 40))
    call compute_features(coarse, cf)
    call features_file_open(unit, 'ocean_checks_features.bin', 40, 40, 2, coarse%dx, coarse%dy, ok)
    if (ok) call features_file_append(unit, 10_int64, 1.0_dp, cf, eke, ok)
    if (ok) call features_file_append(unit, 20_int64, 2.0_dp, cf, eke, ok)
    if (ok) call features_file_close(unit, 2, ok)
    ncells = 40 * 40
    open(newunit=unit, file='ocean_checks_features.bin', access='stream', form='unformatted', &
         status='old', action='read', iostat=ios)
    if (ios == 0) read(unit, iostat=ios) magic, header
    if (ios == 0) inquire(unit=unit, size=fsize)
    if (ios == 0) close(unit, status='delete')
    call expect(ok .and. ios == 0 .and. magic == features_magic .and. &
                all(header == [48, n_record, 40, 40, 2, 2]) .and. &
                fsize == 48 + 2 * (16 + 4 * n_record * ncells), 'training file format', &
                'header SSOCEKE1 [48, 5, 40, 40, 2, 2], 48 + 2 x (16 + 20 x 1600) bytes')
  end subroutine check_features
end program ocean_checks
