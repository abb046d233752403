!> The learned EKE closure through a Slipstream server (module `slipstream`, Fortran bindings).
!> Per step and rank one batched call: the features go to the server as one tensor, the stored
!> TorchScript model runs there, and the predicted log EKE per cell comes back, in one round trip
!> (run_model_on: the three requests pipelined), or in three (put_tensor, run_model,
!> unpack_tensor; --server-round-trips 3, kept to measure the difference).
!>
!> Layout: features(4, ncell) is contiguous with the 4 values of a cell adjacent, i.e. the bytes
!> of a C-order [ncell][4] array. put_tensor of the rank-2 array would store the Fortran shape
!> (4, ncell) and transpose on the way; instead the same memory is sent as a rank-1 view of
!> 4*ncell values (no copy, no transpose), which the model reshapes to (ncell, 4). The answer is
!> a rank-1 (ncell) tensor unpacked straight into log_eke.
!>
!> Keys: 'ocean.features' and 'ocean.log_eke'. Under the launcher an ensemble member has
!> SSKEYOUT/SSKEYIN set, and the client stores and reads them as MEMBER.ocean.features, so members
!> sharing a server never see each other's tensors. The model key is not prefixed (model prefixes
!> are off by default): all members run the one model that the training step stored.
module ocean_server
  use, intrinsic :: iso_c_binding, only: c_float, c_loc, c_f_pointer
  use slipstream
  implicit none
  private

  logical, parameter, public :: server_closure_available = .true.

  type, public :: server_closure
    type(client_type) :: client
    character(len=:), allocatable :: model, prefix
    character(len=14) :: features_key = 'ocean.features'
    character(len=13) :: output_key = 'ocean.log_eke'
    logical :: one_round_trip = .true.  !< run_model_on, else put_tensor + run_model + unpack_tensor
  contains
    procedure :: connect => server_connect
    procedure :: predict => server_predict
    procedure :: disconnect => server_disconnect
  end type server_closure

contains

  !> Connects (SLIPSTREAM_ADDRESS, then SSDB) and checks that `model` is stored. ok = .false.
  !> with a message if there is no server or no such model.
  subroutine server_connect(self, model, ok, message)
    class(server_closure), intent(inout) :: self
    character(len=*), intent(in) :: model
    logical, intent(out) :: ok
    character(len=:), allocatable, intent(out) :: message
    integer :: code, length
    logical :: exists
    character(len=:), allocatable :: address

    self%model = model
    call get_environment_variable('SSKEYOUT', length=length)
    allocate(character(len=length) :: self%prefix)
    if (length > 0) call get_environment_variable('SSKEYOUT', self%prefix)
    call get_environment_variable('SSDB', length=length)
    allocate(character(len=length) :: address)
    if (length > 0) call get_environment_variable('SSDB', address)
    ok = .false.
    ! 5 s to connect: a missing server is an error at start-up, not a hang.
    code = self%client%initialize(connect_timeout_ms=5000)
    if (code /= SLIPSTREAM_OK) then
      message = 'cannot connect to a Slipstream server (SSDB=' // address // '): ' // &
                slipstream_last_error()
      return
    end if
    code = self%client%model_exists(model, exists)
    if (code /= SLIPSTREAM_OK) then
      message = 'cannot query model ' // model // ': ' // slipstream_last_error()
      return
    end if
    if (.not. exists) then
      message = 'model ' // model // ' is not stored on the server (SSDB=' // address // ')'
      return
    end if
    message = ''
    ok = .true.
  end subroutine server_connect

  !> features (n_features, ncell) -> log_eke (ncell) through the server.
  subroutine server_predict(self, features, log_eke, ok, message)
    class(server_closure), intent(inout) :: self
    real(c_float), contiguous, target, intent(in) :: features(:,:)
    real(c_float), contiguous, target, intent(inout) :: log_eke(:)
    logical, intent(out) :: ok
    character(len=:), allocatable, intent(out) :: message
    real(c_float), pointer, contiguous :: flat(:)
    integer :: code

    ok = .false.
    call c_f_pointer(c_loc(features), flat, [size(features)])
    if (self%one_round_trip) then
      code = self%client%run_model_on(self%model, [tensor_ref(self%features_key, flat)], &
                                      [tensor_ref(self%output_key, log_eke)])
      if (code /= SLIPSTREAM_OK) then
        message = 'run_model_on ' // self%model // ' (' // self%features_key // ' -> ' // &
                  self%output_key // ', expected float32 of shape (ncell)): ' // &
                  slipstream_last_error()
        return
      end if
      message = ''
      ok = .true.
      return
    end if
    code = self%client%put_tensor(self%features_key, flat)
    if (code /= SLIPSTREAM_OK) then
      message = 'put_tensor ' // self%features_key // ': ' // slipstream_last_error()
      return
    end if
    code = self%client%run_model(self%model, [self%features_key], [self%output_key])
    if (code /= SLIPSTREAM_OK) then
      message = 'run_model ' // self%model // ': ' // slipstream_last_error()
      return
    end if
    code = self%client%unpack_tensor(self%output_key, log_eke)
    if (code /= SLIPSTREAM_OK) then
      message = 'unpack_tensor ' // self%output_key // ' (expected float32 of shape (ncell)): ' // &
                slipstream_last_error()
      return
    end if
    message = ''
    ok = .true.
  end subroutine server_predict

  subroutine server_disconnect(self)
    class(server_closure), intent(inout) :: self
    integer :: code
    code = self%client%destroy()
    if (allocated(self%model)) deallocate(self%model)
    if (allocated(self%prefix)) deallocate(self%prefix)
  end subroutine server_disconnect
end module ocean_server
