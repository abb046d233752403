!> Wind-driven reduced-gravity (1.5-layer) shallow-water basin with an eddy-kinetic-energy (EKE)
!> viscosity closure: a scaled-down stand-in for the MOM6 double-gyre runs of the SmartSim paper.
!>
!> Equations (vector-invariant form, h = layer thickness, u = (u, v), q = (f + zeta)/h):
!>   du/dt - q (h v) = -d/dx (g' h + K) + F_visc,x - r u + tau_x / (rho0 h)
!>   dv/dt + q (h u) = -d/dy (g' h + K) + F_visc,y - r v
!>   dh/dt + div(h u) = 0,            K = (u^2 + v^2)/2,   f = f0 + beta (y - Ly/2)
!> Arakawa C grid in a closed rectangle; Sadourny's energy-conserving PV flux, so without wind,
!> drag and viscosity the semi-discrete total energy is conserved exactly (only the time stepping
!> errs). Time stepping: continuity forward, pressure gradient backward (forward-backward for the
!> gravity waves), PV flux and K gradient by third-order Adams-Bashforth, viscosity, drag and wind
!> forward (lagged) as dissipative terms usually are.
!>
!> Index conventions (dx = Lx/nx, dy = Ly/ny, x fastest):
!>   h(i,j)  cell centre  ((i-1/2)dx, (j-1/2)dy), i = 1..nx,   j = 1..ny, ghosts 0 and nx+1/ny+1
!>   u(i,j)  west face    ((i-1)dx,   (j-1/2)dy), i = 1..nx+1, j = 1..ny, u(1,:) = u(nx+1,:) = 0
!>   v(i,j)  south face   ((i-1/2)dx, (j-1)dy),   i = 1..nx,   j = 1..ny+1, v(:,1) = v(:,ny+1) = 0
!>   corner  (vorticity)  ((i-1)dx,   (j-1)dy),   i = 1..nx+1, j = 1..ny+1
!> Ghost values are kept valid between calls: h and nu zero-gradient, tangential velocity mirrored
!> (free slip) or negated (no slip), so wall vorticity and shear follow the boundary condition.
module ocean_model
  use, intrinsic :: iso_fortran_env, only: dp => real64, int32, int64
  use, intrinsic :: iso_c_binding, only: c_float
  use, intrinsic :: ieee_arithmetic, only: ieee_is_nan
  implicit none
  private

  public :: dp, ocean_init, ocean_step, ocean_diagnostics, compute_features, apply_closure, &
            analytic_log_eke, viscosity_bounds, coarse_grain, fill_ghosts, &
            features_file_open, features_file_append, features_file_close

  integer, parameter, public :: n_features = 4  !< mke, slope, vorticity, rd/dx per cell
  integer, parameter, public :: n_record = 5    !< per cell in the training file: features + log EKE
  integer, parameter, public :: closure_none = 0, closure_constant = 1, closure_analytic = 2
  !> Floor of the analytic EKE guess [m^2/s^2]; keeps its log finite over a fluid at rest.
  real(dp), parameter, public :: analytic_eke_floor = 1.0e-6_dp
  character(len=8), parameter, public :: features_magic = 'SSOCEKE1'
  real(dp), parameter :: pi = 3.14159265358979323846_dp

  !> Physical and numerical parameters; the defaults are the reference configuration.
  type, public :: ocean_params
    integer :: nx = 40, ny = 40                 !< cells in x and y
    real(dp) :: lx = 2.0e6_dp, ly = 2.0e6_dp    !< basin size [m]
    real(dp) :: f0 = 1.0e-4_dp                  !< Coriolis parameter at mid-basin [1/s]
    real(dp) :: beta = 2.0e-11_dp               !< df/dy [1/(m s)]
    real(dp) :: gprime = 0.02_dp                !< reduced gravity [m/s^2]
    real(dp) :: h0 = 1000.0_dp                  !< resting layer thickness [m]
    real(dp) :: rho0 = 1000.0_dp                !< reference density [kg/m^3]
    real(dp) :: tau0 = 0.1_dp                   !< wind stress amplitude [N/m^2]
    real(dp) :: forcing = 1.0_dp                !< multiplier on tau0 (differs between members)
    real(dp) :: drag = 1.0e-7_dp                !< linear drag coefficient r [1/s]
    real(dp) :: dt = 0.0_dp                     !< time step [s]; <= 0 picks one from cfl_target
    real(dp) :: cfl_target = 0.3_dp             !< gravity-wave CFL of the automatic time step
    logical :: no_slip = .false.                !< walls: no slip (true) or free slip (false)
    integer :: closure = closure_analytic       !< closure_none | _constant | _analytic
    real(dp) :: nu_const = 2000.0_dp            !< viscosity of closure_constant [m^2/s]
    real(dp) :: nu_bg = -1.0_dp                 !< background under the EKE closure; < 0: beta dx^3
    real(dp) :: c_nu = 0.2_dp                   !< nu = nu_bg + c_nu * L_mix * sqrt(EKE)
    real(dp) :: log_eke_min = -13.815510557964274_dp  !< cap: EKE >= 1e-6 m^2/s^2
    real(dp) :: log_eke_max = 0.0_dp                  !< cap: EKE <= 1 m^2/s^2
  end type ocean_params

  !> Model state: prognostic fields, viscosity, Adams-Bashforth history and work arrays.
  type, public :: ocean_state
    type(ocean_params) :: p
    integer :: nx = 0, ny = 0
    real(dp) :: dx = 0, dy = 0, dt = 0, time = 0
    real(dp) :: delta = 0          !< grid spacing sqrt(dx dy), also the closure's mixing length
    real(dp) :: nu_bg = 0          !< background viscosity actually used [m^2/s]
    integer(int64) :: nstep = 0
    real(dp), allocatable :: h(:,:), u(:,:), v(:,:), nu(:,:)
    real(dp), allocatable :: f_corner(:), f_centre(:), taux(:)
    real(dp), allocatable :: gu(:,:,:), gv(:,:,:)        !< AB3 history of the adiabatic terms
    real(dp), allocatable :: uh(:,:), vh(:,:), ke(:,:), q(:,:), tension(:,:), shear(:,:)
    real(dp), allocatable :: fu(:,:), fv(:,:)            !< viscosity + drag + wind
    !> Time-integrated work of each non-conservative term [J]: the energy budget's right side.
    real(dp) :: work_wind = 0, work_drag = 0, work_visc = 0
  end type ocean_state

  type, public :: ocean_diag
    integer(int64) :: step = 0
    real(dp) :: time = 0, kinetic = 0, potential = 0, total = 0  !< energies [J]
    real(dp) :: volume = 0, max_cfl = 0, mean_nu = 0, min_h = 0
    real(dp) :: work_wind = 0, work_drag = 0, work_visc = 0      !< [J], cumulative
  end type ocean_diag

contains

  !> Allocates and initialises a fluid at rest (h = h0), the Coriolis and wind profiles, the time
  !> step and the viscosity of the chosen closure.
  subroutine ocean_init(s, p)
    type(ocean_state), intent(out) :: s
    type(ocean_params), intent(in) :: p
    integer :: nx, ny, j
    real(c_float), allocatable :: features(:,:)

    if (p%nx < 4 .or. p%ny < 4) error stop 'ocean_init: nx and ny must be at least 4'
    s%p = p
    nx = p%nx
    ny = p%ny
    s%nx = nx
    s%ny = ny
    s%dx = p%lx / nx
    s%dy = p%ly / ny
    s%delta = sqrt(s%dx * s%dy)
    s%dt = p%dt
    if (s%dt <= 0) then
      ! Forward-backward gravity waves are stable for c dt sqrt(1/dx^2 + 1/dy^2) <= 1; aim at
      ! cfl_target of that and round down so that a whole number of steps makes a day.
      s%dt = p%cfl_target / (sqrt(p%gprime * p%h0) * sqrt(1 / s%dx**2 + 1 / s%dy**2))
      s%dt = 86400.0_dp / ceiling(86400.0_dp / s%dt)
    end if
    s%nu_bg = p%nu_bg
    if (s%nu_bg < 0) s%nu_bg = p%beta * s%delta**3  ! Munk layer (nu/beta)^(1/3) one cell wide

    allocate(s%h(0:nx+1, 0:ny+1), source=p%h0)
    allocate(s%u(1:nx+1, 0:ny+1), s%v(0:nx+1, 1:ny+1), source=0.0_dp)
    allocate(s%nu(0:nx+1, 0:ny+1), source=0.0_dp)
    allocate(s%gu(nx+1, ny, 3), s%gv(nx, ny+1, 3), source=0.0_dp)
    allocate(s%uh(nx+1, ny), s%fu(nx+1, ny), s%vh(nx, ny+1), s%fv(nx, ny+1), source=0.0_dp)
    allocate(s%ke(nx, ny), s%tension(nx, ny), source=0.0_dp)
    allocate(s%q(nx+1, ny+1), s%shear(nx+1, ny+1), source=0.0_dp)
    allocate(s%f_corner(ny+1), s%f_centre(ny), s%taux(ny))
    do j = 1, ny + 1
      s%f_corner(j) = p%f0 + p%beta * ((j - 1) * s%dy - 0.5_dp * p%ly)
    end do
    do j = 1, ny
      s%f_centre(j) = p%f0 + p%beta * ((j - 0.5_dp) * s%dy - 0.5_dp * p%ly)
      ! Double gyre: easterlies at the southern and northern walls, westerlies mid-basin.
      s%taux(j) = -p%forcing * p%tau0 * cos(2 * pi * (j - 0.5_dp) * s%dy / p%ly)
    end do

    select case (p%closure)
    case (closure_none)
      s%nu = 0
    case (closure_constant)
      s%nu = min(p%nu_const, nu_stable(s))
    case (closure_analytic)
      allocate(features(n_features, nx * ny))
      call compute_features(s, features)
      call apply_closure(s, analytic_log_eke(features))
    case default
      error stop 'ocean_init: unknown closure'
    end select
    call fill_ghosts(s)
  end subroutine ocean_init

  !> Largest viscosity the forward (lagged) Laplacian takes safely: forward Euler needs
  !> nu dt (1/dx^2 + 1/dy^2) <= 1/2; 0.2 leaves room for thickness variations and drag.
  pure real(dp) function nu_stable(s)
    type(ocean_state), intent(in) :: s
    nu_stable = 0.2_dp / (s%dt * (1 / s%dx**2 + 1 / s%dy**2))
  end function nu_stable

  !> Refreshes ghost cells from the interior (see the module header for the rules); call it after
  !> setting h, u, v or nu directly.
  subroutine fill_ghosts(s)
    type(ocean_state), intent(inout) :: s
    real(dp) :: sgn
    integer :: nx, ny

    nx = s%nx
    ny = s%ny
    sgn = merge(-1.0_dp, 1.0_dp, s%p%no_slip)
    s%h(0, 1:ny) = s%h(1, 1:ny)
    s%h(nx+1, 1:ny) = s%h(nx, 1:ny)
    s%h(:, 0) = s%h(:, 1)
    s%h(:, ny+1) = s%h(:, ny)
    s%nu(0, 1:ny) = s%nu(1, 1:ny)
    s%nu(nx+1, 1:ny) = s%nu(nx, 1:ny)
    s%nu(:, 0) = s%nu(:, 1)
    s%nu(:, ny+1) = s%nu(:, ny)
    s%u(:, 0) = sgn * s%u(:, 1)
    s%u(:, ny+1) = sgn * s%u(:, ny)
    s%v(0, :) = sgn * s%v(1, :)
    s%v(nx+1, :) = sgn * s%v(nx, :)
  end subroutine fill_ghosts

  !> Relative vorticity at corner (i,j), walls included through the ghost velocities.
  pure real(dp) function corner_vorticity(s, i, j)
    type(ocean_state), intent(in) :: s
    integer, intent(in) :: i, j
    corner_vorticity = (s%v(i, j) - s%v(i-1, j)) / s%dx - (s%u(i, j) - s%u(i, j-1)) / s%dy
  end function corner_vorticity

  !> Mass fluxes, kinetic energy, potential vorticity and the AB3-stepped tendencies
  !> gu = q <h v> - dK/dx, gv = -q <h u> - dK/dy (Sadourny's energy-conserving averaging).
  subroutine adiabatic_tendencies(s, k0)
    type(ocean_state), intent(inout) :: s
    integer, intent(in) :: k0  !< AB3 slot that receives the tendencies
    integer :: i, j, nx, ny
    real(dp) :: hq

    nx = s%nx
    ny = s%ny
    s%uh = 0
    s%vh = 0
    do j = 1, ny
      do i = 2, nx
        s%uh(i, j) = 0.5_dp * (s%h(i-1, j) + s%h(i, j)) * s%u(i, j)
      end do
    end do
    do j = 2, ny
      do i = 1, nx
        s%vh(i, j) = 0.5_dp * (s%h(i, j-1) + s%h(i, j)) * s%v(i, j)
      end do
    end do
    do j = 1, ny
      do i = 1, nx
        s%ke(i, j) = 0.25_dp * (s%u(i, j)**2 + s%u(i+1, j)**2 + s%v(i, j)**2 + s%v(i, j+1)**2)
      end do
    end do
    do j = 1, ny + 1
      do i = 1, nx + 1
        hq = 0.25_dp * (s%h(i-1, j-1) + s%h(i, j-1) + s%h(i-1, j) + s%h(i, j))
        s%q(i, j) = (s%f_corner(j) + corner_vorticity(s, i, j)) / hq
      end do
    end do
    s%gu(:, :, k0) = 0
    s%gv(:, :, k0) = 0
    do j = 1, ny
      do i = 2, nx
        s%gu(i, j, k0) = 0.25_dp * (s%q(i, j+1) * (s%vh(i-1, j+1) + s%vh(i, j+1)) &
                                    + s%q(i, j) * (s%vh(i-1, j) + s%vh(i, j))) &
                         - (s%ke(i, j) - s%ke(i-1, j)) / s%dx
      end do
    end do
    do j = 2, ny
      do i = 1, nx
        s%gv(i, j, k0) = -0.25_dp * (s%q(i+1, j) * (s%uh(i+1, j) + s%uh(i+1, j-1)) &
                                     + s%q(i, j) * (s%uh(i, j) + s%uh(i, j-1))) &
                         - (s%ke(i, j) - s%ke(i, j-1)) / s%dy
      end do
    end do
  end subroutine adiabatic_tendencies

  !> Viscosity (thickness-weighted stress-tensor Laplacian, as in MOM6: dissipative for any
  !> nu >= 0), linear drag and wind into s%fu, s%fv; returns the power of each [W].
  !> Needs s%uh, s%vh of the same time level (adiabatic_tendencies first).
  subroutine dissipation_and_forcing(s, p_wind, p_drag, p_visc)
    type(ocean_state), intent(inout) :: s
    real(dp), intent(out) :: p_wind, p_drag, p_visc
    integer :: i, j, nx, ny
    real(dp) :: hq, nuq, hu, hv, wind, scale

    nx = s%nx
    ny = s%ny
    do j = 1, ny           ! tension h nu (du/dx - dv/dy) at centres
      do i = 1, nx
        s%tension(i, j) = s%h(i, j) * s%nu(i, j) * ((s%u(i+1, j) - s%u(i, j)) / s%dx &
                                                    - (s%v(i, j+1) - s%v(i, j)) / s%dy)
      end do
    end do
    do j = 1, ny + 1       ! shear h nu (du/dy + dv/dx) at corners; zero at free-slip walls
      do i = 1, nx + 1
        hq = 0.25_dp * (s%h(i-1, j-1) + s%h(i, j-1) + s%h(i-1, j) + s%h(i, j))
        nuq = 0.25_dp * (s%nu(i-1, j-1) + s%nu(i, j-1) + s%nu(i-1, j) + s%nu(i, j))
        s%shear(i, j) = hq * nuq * ((s%u(i, j) - s%u(i, j-1)) / s%dy &
                                    + (s%v(i, j) - s%v(i-1, j)) / s%dx)
      end do
    end do
    s%fu = 0
    s%fv = 0
    p_wind = 0
    p_drag = 0
    p_visc = 0
    do j = 1, ny
      do i = 2, nx
        hu = 0.5_dp * (s%h(i-1, j) + s%h(i, j))
        s%fu(i, j) = ((s%tension(i, j) - s%tension(i-1, j)) / s%dx &
                      + (s%shear(i, j+1) - s%shear(i, j)) / s%dy) / hu
        p_visc = p_visc + s%uh(i, j) * s%fu(i, j)
        p_drag = p_drag - s%p%drag * s%uh(i, j) * s%u(i, j)
        wind = s%taux(j) / (s%p%rho0 * hu)
        p_wind = p_wind + s%uh(i, j) * wind
        s%fu(i, j) = s%fu(i, j) - s%p%drag * s%u(i, j) + wind
      end do
    end do
    do j = 2, ny
      do i = 1, nx
        hv = 0.5_dp * (s%h(i, j-1) + s%h(i, j))
        s%fv(i, j) = ((s%shear(i+1, j) - s%shear(i, j)) / s%dx &
                      - (s%tension(i, j) - s%tension(i, j-1)) / s%dy) / hv
        p_visc = p_visc + s%vh(i, j) * s%fv(i, j)
        p_drag = p_drag - s%p%drag * s%vh(i, j) * s%v(i, j)
        s%fv(i, j) = s%fv(i, j) - s%p%drag * s%v(i, j)
      end do
    end do
    scale = s%p%rho0 * s%dx * s%dy
    p_wind = p_wind * scale
    p_drag = p_drag * scale
    p_visc = p_visc * scale
  end subroutine dissipation_and_forcing

  !> Advances one time step: continuity forward, momentum with the new thickness in the pressure
  !> gradient, AB3 for the PV flux and K gradient (Euler, then AB2 while the history fills up).
  subroutine ocean_step(s)
    type(ocean_state), intent(inout) :: s
    integer :: i, j, k0, k1, k2
    real(dp) :: a0, a1, a2, p_wind, p_drag, p_visc

    k0 = int(mod(s%nstep, 3_int64)) + 1      ! slot of this step's tendencies
    k1 = int(mod(s%nstep + 2, 3_int64)) + 1  ! one step back
    k2 = int(mod(s%nstep + 1, 3_int64)) + 1  ! two steps back
    call adiabatic_tendencies(s, k0)
    call dissipation_and_forcing(s, p_wind, p_drag, p_visc)
    if (s%nstep == 0) then
      a0 = 1; a1 = 0; a2 = 0
    else if (s%nstep == 1) then
      a0 = 1.5_dp; a1 = -0.5_dp; a2 = 0
    else
      a0 = 23.0_dp / 12; a1 = -16.0_dp / 12; a2 = 5.0_dp / 12
    end if
    do j = 1, s%ny
      do i = 1, s%nx
        s%h(i, j) = s%h(i, j) - s%dt * ((s%uh(i+1, j) - s%uh(i, j)) / s%dx &
                                        + (s%vh(i, j+1) - s%vh(i, j)) / s%dy)
      end do
    end do
    do j = 1, s%ny
      do i = 2, s%nx
        s%u(i, j) = s%u(i, j) + s%dt * (a0 * s%gu(i, j, k0) + a1 * s%gu(i, j, k1) &
                    + a2 * s%gu(i, j, k2) - s%p%gprime * (s%h(i, j) - s%h(i-1, j)) / s%dx &
                    + s%fu(i, j))
      end do
    end do
    do j = 2, s%ny
      do i = 1, s%nx
        s%v(i, j) = s%v(i, j) + s%dt * (a0 * s%gv(i, j, k0) + a1 * s%gv(i, j, k1) &
                    + a2 * s%gv(i, j, k2) - s%p%gprime * (s%h(i, j) - s%h(i, j-1)) / s%dy &
                    + s%fv(i, j))
      end do
    end do
    s%work_wind = s%work_wind + s%dt * p_wind
    s%work_drag = s%work_drag + s%dt * p_drag
    s%work_visc = s%work_visc + s%dt * p_visc
    s%nstep = s%nstep + 1
    s%time = s%time + s%dt
    call fill_ghosts(s)
  end subroutine ocean_step

  !> Energies (the discrete ones the scheme conserves), volume, CFL and viscosity statistics.
  !> max_cfl = dt sqrt(1/dx^2 + 1/dy^2) max(sqrt(g' h) + |u|): forward-backward needs < 1.
  function ocean_diagnostics(s) result(d)
    type(ocean_state), intent(in) :: s
    type(ocean_diag) :: d
    integer :: i, j
    real(dp) :: ke, speed, cfl_factor

    cfl_factor = s%dt * sqrt(1 / s%dx**2 + 1 / s%dy**2)
    d%step = s%nstep
    d%time = s%time
    d%min_h = huge(1.0_dp)
    do j = 1, s%ny
      do i = 1, s%nx
        ke = 0.25_dp * (s%u(i, j)**2 + s%u(i+1, j)**2 + s%v(i, j)**2 + s%v(i, j+1)**2)
        d%kinetic = d%kinetic + s%h(i, j) * ke
        d%potential = d%potential + 0.5_dp * s%p%gprime * (s%h(i, j) - s%p%h0)**2
        d%volume = d%volume + s%h(i, j)
        speed = sqrt(0.25_dp * ((s%u(i, j) + s%u(i+1, j))**2 + (s%v(i, j) + s%v(i, j+1))**2))
        d%max_cfl = max(d%max_cfl, cfl_factor * (sqrt(s%p%gprime * max(s%h(i, j), 0.0_dp)) + speed))
        d%min_h = min(d%min_h, s%h(i, j))
      end do
    end do
    d%kinetic = d%kinetic * s%p%rho0 * s%dx * s%dy
    d%potential = d%potential * s%p%rho0 * s%dx * s%dy
    d%total = d%kinetic + d%potential
    d%volume = d%volume * s%dx * s%dy
    d%mean_nu = sum(s%nu(1:s%nx, 1:s%ny)) / (s%nx * s%ny)
    d%work_wind = s%work_wind
    d%work_drag = s%work_drag
    d%work_visc = s%work_visc
  end function ocean_diagnostics

  !> Closure inputs per cell k = i + (j-1) nx, as float32 so one contiguous buffer of shape
  !> (4, nx*ny) (C order: [nx*ny][4]) goes to the server in one call:
  !>   1 mean kinetic energy (u^2 + v^2)/2 at the centre [m^2/s^2]
  !>   2 slope |grad h| of the interface (one layer: the thickness gradient) [-]
  !>   3 relative vorticity, mean of the 4 corners [1/s]
  !>   4 deformation radius over grid spacing, Rd = c / sqrt(f^2 + 2 beta c), c = sqrt(g' h) [-]
  subroutine compute_features(s, features)
    type(ocean_state), intent(in) :: s
    real(c_float), contiguous, intent(out) :: features(:,:)
    integer :: i, j, k
    real(dp) :: mke, sx, sy, zeta, c, rd
    real(dp), allocatable :: zc(:,:)

    if (size(features, 1) /= n_features .or. size(features, 2) /= s%nx * s%ny) &
      error stop 'compute_features: features must have shape (4, nx*ny)'
    allocate(zc(s%nx + 1, s%ny + 1))  ! corner vorticity once, not four times per cell
    do j = 1, s%ny + 1
      do i = 1, s%nx + 1
        zc(i, j) = corner_vorticity(s, i, j)
      end do
    end do
    do j = 1, s%ny
      do i = 1, s%nx
        k = i + (j - 1) * s%nx
        mke = 0.25_dp * (s%u(i, j)**2 + s%u(i+1, j)**2 + s%v(i, j)**2 + s%v(i, j+1)**2)
        ! Centred differences; the zero-gradient ghosts make them one-sided (halved) at walls.
        sx = (s%h(i+1, j) - s%h(i-1, j)) / (2 * s%dx)
        sy = (s%h(i, j+1) - s%h(i, j-1)) / (2 * s%dy)
        zeta = 0.25_dp * (zc(i, j) + zc(i+1, j) + zc(i, j+1) + zc(i+1, j+1))
        c = sqrt(s%p%gprime * max(s%h(i, j), 0.0_dp))
        ! The 2 beta c term gives the equatorial radius where f vanishes (as MOM6 does).
        rd = c / sqrt(s%f_centre(j)**2 + 2 * s%p%beta * c + tiny(1.0_dp))
        features(:, k) = real([mke, sqrt(sx**2 + sy**2), zeta, rd / s%delta], c_float)
      end do
    end do
  end subroutine compute_features

  !> Fixed stand-in for the network: a share of the resolved MKE that fades as the grid resolves
  !> the deformation radius (resolution function 1/(1 + (Rd/dx)^2), as in Hallberg 2013):
  !>   EKE = 1e-6 + MKE / (1 + (Rd/dx)^2),   returned as log EKE (natural log).
  function analytic_log_eke(features) result(log_eke)
    real(c_float), intent(in) :: features(:,:)
    real(c_float) :: log_eke(size(features, 2))
    integer :: k
    real(dp) :: mke, r

    do k = 1, size(features, 2)
      mke = max(real(features(1, k), dp), 0.0_dp)
      r = real(features(4, k), dp)
      log_eke(k) = real(log(analytic_eke_floor + mke / (1 + r**2)), c_float)
    end do
  end function analytic_log_eke

  !> The viscosity range apply_closure guarantees: log EKE capped to [log_eke_min, log_eke_max],
  !> then nu = nu_bg + c_nu * delta * sqrt(EKE), never above the stability limit nu_stable.
  subroutine viscosity_bounds(s, nu_lo, nu_hi)
    type(ocean_state), intent(in) :: s
    real(dp), intent(out) :: nu_lo, nu_hi
    nu_lo = min(s%nu_bg + s%p%c_nu * s%delta * exp(0.5_dp * s%p%log_eke_min), nu_stable(s))
    nu_hi = min(s%nu_bg + s%p%c_nu * s%delta * exp(0.5_dp * s%p%log_eke_max), nu_stable(s))
  end subroutine viscosity_bounds

  !> Turns a predicted log EKE per cell (k = i + (j-1) nx) into the viscosity of the next step.
  !> NaN (a failed prediction) counts as the lower cap, so it leaves the background viscosity.
  subroutine apply_closure(s, log_eke)
    type(ocean_state), intent(inout) :: s
    real(c_float), intent(in) :: log_eke(:)
    integer :: i, j
    real(dp) :: le, nu_lo, nu_hi

    if (size(log_eke) /= s%nx * s%ny) error stop 'apply_closure: log_eke must have nx*ny values'
    call viscosity_bounds(s, nu_lo, nu_hi)
    do j = 1, s%ny
      do i = 1, s%nx
        le = real(log_eke(i + (j - 1) * s%nx), dp)
        if (ieee_is_nan(le)) le = s%p%log_eke_min
        le = min(max(le, s%p%log_eke_min), s%p%log_eke_max)
        s%nu(i, j) = min(max(s%nu_bg + s%p%c_nu * s%delta * exp(0.5_dp * le), nu_lo), nu_hi)
      end do
    end do
    call fill_ghosts(s)
  end subroutine apply_closure

  !> Coarse-grains a fine state by `factor` in each direction (for training data):
  !>   coarse h = block mean; coarse face velocity = mean of the fine faces on that coarse face;
  !>   eke(kc) = mean over the block's fine cells of (u'^2 + v'^2)/2, primes = deviation of
  !>   the cell-centred fine velocity from its block mean (the energy the coarse grid cannot hold).
  !> `coarse` is initialised (closure none) on first use and then reused.
  subroutine coarse_grain(fine, factor, coarse, eke)
    type(ocean_state), intent(in) :: fine
    integer, intent(in) :: factor
    type(ocean_state), intent(inout) :: coarse
    real(dp), intent(out) :: eke(:)
    type(ocean_params) :: cp
    integer :: ic, jc, i, j, i0, j0
    real(dp) :: ub, vb, acc, uc, vc, w

    if (factor < 1 .or. mod(fine%nx, factor) /= 0 .or. mod(fine%ny, factor) /= 0) &
      error stop 'coarse_grain: the factor must divide nx and ny'
    if (.not. allocated(coarse%h)) then
      cp = fine%p
      cp%nx = fine%nx / factor
      cp%ny = fine%ny / factor
      cp%closure = closure_none
      cp%dt = 0
      call ocean_init(coarse, cp)
    end if
    if (coarse%nx * factor /= fine%nx .or. coarse%ny * factor /= fine%ny) &
      error stop 'coarse_grain: coarse state of the wrong size'
    if (size(eke) /= coarse%nx * coarse%ny) error stop 'coarse_grain: eke needs ncx*ncy values'
    w = 1.0_dp / factor
    do jc = 1, coarse%ny
      do ic = 1, coarse%nx
        i0 = (ic - 1) * factor
        j0 = (jc - 1) * factor
        coarse%h(ic, jc) = sum(fine%h(i0+1:i0+factor, j0+1:j0+factor)) * w**2
        if (ic > 1) coarse%u(ic, jc) = sum(fine%u(i0+1, j0+1:j0+factor)) * w
        if (jc > 1) coarse%v(ic, jc) = sum(fine%v(i0+1:i0+factor, j0+1)) * w
        ub = 0
        vb = 0
        do j = j0 + 1, j0 + factor
          do i = i0 + 1, i0 + factor
            ub = ub + 0.5_dp * (fine%u(i, j) + fine%u(i+1, j))
            vb = vb + 0.5_dp * (fine%v(i, j) + fine%v(i, j+1))
          end do
        end do
        ub = ub * w**2
        vb = vb * w**2
        acc = 0  ! second pass: deviations, so no cancellation between large means
        do j = j0 + 1, j0 + factor
          do i = i0 + 1, i0 + factor
            uc = 0.5_dp * (fine%u(i, j) + fine%u(i+1, j)) - ub
            vc = 0.5_dp * (fine%v(i, j) + fine%v(i, j+1)) - vb
            acc = acc + uc**2 + vc**2
          end do
        end do
        eke(ic + (jc - 1) * coarse%nx) = 0.5_dp * acc * w**2
      end do
    end do
    coarse%time = fine%time
    coarse%nstep = fine%nstep
    call fill_ghosts(coarse)
  end subroutine coarse_grain

  !> Training-data file, stream access, native (little-endian on x86/ARM) byte order.
  !> Header, 48 bytes: char[8] 'SSOCEKE1'; int32 header_bytes (48), values_per_cell (5), ncx, ncy,
  !> coarse factor, snapshot count; float64 dx, dy of the coarse grid [m].
  !> Each snapshot: int64 step; float64 time [s]; float32 [ncx*ncy][5] = mke, slope, vorticity,
  !> rd/dx, log EKE (cell k = i + (j-1) ncx, x fastest; EKE floored at 1e-12 before the log).
  subroutine features_file_open(unit, path, ncx, ncy, factor, dx, dy, ok)
    integer, intent(out) :: unit
    character(len=*), intent(in) :: path
    integer, intent(in) :: ncx, ncy, factor
    real(dp), intent(in) :: dx, dy
    logical, intent(out) :: ok
    integer :: ios

    open(newunit=unit, file=path, access='stream', form='unformatted', status='replace', &
         action='write', iostat=ios)
    ok = ios == 0
    if (.not. ok) return
    write(unit, iostat=ios) features_magic, 48_int32, int(n_record, int32), int(ncx, int32), &
      int(ncy, int32), int(factor, int32), 0_int32, dx, dy
    ok = ios == 0
  end subroutine features_file_open

  subroutine features_file_append(unit, step, time, features, eke, ok)
    integer, intent(in) :: unit
    integer(int64), intent(in) :: step
    real(dp), intent(in) :: time
    real(c_float), intent(in) :: features(:,:)
    real(dp), intent(in) :: eke(:)
    logical, intent(out) :: ok
    real(c_float), allocatable :: rec(:,:)
    integer :: ios

    allocate(rec(n_record, size(eke)))
    rec(1:n_features, :) = features
    rec(n_record, :) = real(log(max(eke, 1.0e-12_dp)), c_float)
    write(unit, iostat=ios) step, time, rec
    ok = ios == 0
  end subroutine features_file_append

  !> Patches the snapshot count into the header (byte 29) and closes the file.
  subroutine features_file_close(unit, nsnap, ok)
    integer, intent(in) :: unit, nsnap
    logical, intent(out) :: ok
    integer :: ios

    write(unit, pos=29, iostat=ios) int(nsnap, int32)
    ok = ios == 0
    close(unit)
  end subroutine features_file_close
end module ocean_model
