! The Fortran module against a real server: every dtype and rank 1-4 through put/unpack and
! datasets, metadata, lists, models and scripts, prefixes, waits, server info and error paths.
! Usage: fortran_test MODELS_DIR            (SLIPSTREAM_ADDRESS names the server)
!        fortran_test --auth PASSWORD       (the server requires PASSWORD)
! MODELS_DIR holds scale.pt (x * 2 + 1) from tests/integration/models/make_models.py.
! Exits with status 1 if any check fails.
program fortran_test
  use, intrinsic :: iso_c_binding
  use slipstream
  use fortran_test_support
  implicit none
  type(client_type) :: client
  character(len=4096) :: first, second

  call get_command_argument(1, first)
  call get_command_argument(2, second)
  if (trim(first) == "--auth") then
    call test_auth(trim(second))
    call finish("fortran_test --auth")
    stop
  end if
  if (command_argument_count() /= 1) then
    write(*, '(a)') 'usage: fortran_test MODELS_DIR | fortran_test --auth PASSWORD'
    error stop 2
  end if

  call test_connection_errors()
  call check(client%initialize(), "initialize")
  call test_all_roundtrips(client)
  call test_tensor_errors(client)
  call test_tensor_management(client)
  call test_compressed_tensors(client)
  call test_datasets(client)
  call test_lists(client)
  call test_models(client, trim(first))
  call test_prefixes_and_info(client)
  call check(client%destroy(), "destroy")
  call finish("fortran_test")

contains

  subroutine test_all_roundtrips(client)
    type(client_type), intent(inout) :: client
    include "roundtrip_calls.inc"
  end subroutine test_all_roundtrips

  subroutine test_connection_errors()
    type(client_type) :: other
    call expect_code(other%initialize("tcp://127.0.0.1:1"), SLIPSTREAM_CONNECTION_ERROR, &
                     "initialize with nothing listening")
    call expect(index(slipstream_last_error(), "127.0.0.1") > 0, "the message names the address")
    call expect_code(other%initialize("bogus://where"), SLIPSTREAM_INVALID_ARGUMENT, &
                     "initialize with a malformed address")
    ! A client that was never initialised: a clear error, not a crash.
    call expect_code(other%put_bytes("k", "v"), SLIPSTREAM_INVALID_ARGUMENT, "uninitialised client")
    call check(other%destroy(), "destroy of a null client")
    call expect(len(slipstream_last_error()) == 0, "no message after a successful call")
  end subroutine test_connection_errors

  subroutine test_auth(password)
    character(len=*), intent(in) :: password
    type(client_type) :: c
    logical :: exists
    call expect_code(c%initialize(password="wrong"), SLIPSTREAM_AUTH_ERROR, "wrong password")
    call check(c%initialize(), "initialize without a password")
    call expect_code(c%tensor_exists("x", exists), SLIPSTREAM_AUTH_ERROR, "a command without AUTH")
    call check(c%destroy(), "destroy")
    call check(c%initialize(password=password), "initialize with the password")
    call check(c%tensor_exists("x", exists), "a command after AUTH")
    call check(c%destroy(), "destroy")
  end subroutine test_auth

  subroutine test_tensor_errors(client)
    type(client_type), intent(inout) :: client
    real(c_float) :: a(3, 2), wrong_shape(2, 3), flat(6)
    real(c_double) :: wrong_dtype(3, 2)
    integer(c_int64_t), allocatable :: dims(:)
    integer :: dtype
    a = reshape([1, 2, 3, 4, 5, 6], [3, 2])
    call check(client%put_tensor("ftest.err", a), "put_tensor")
    call expect_code(client%unpack_tensor("ftest.missing", a), SLIPSTREAM_KEY_NOT_FOUND, &
                     "unpack of a missing key")
    call expect(index(slipstream_last_error(), "ftest.missing") > 0, "the message names the key")
    call expect_code(client%tensor_info("ftest.missing", dtype, dims), SLIPSTREAM_KEY_NOT_FOUND, &
                     "tensor_info of a missing key")
    call expect_code(client%unpack_tensor("ftest.err", wrong_dtype), SLIPSTREAM_INVALID_ARGUMENT, &
                     "unpack into real64")
    call expect(index(slipstream_last_error(), "DOUBLE") > 0, "the message names the dtypes")
    call expect_code(client%unpack_tensor("ftest.err", wrong_shape), SLIPSTREAM_INVALID_ARGUMENT, &
                     "unpack into another shape")
    call expect_code(client%unpack_tensor("ftest.err", flat), SLIPSTREAM_INVALID_ARGUMENT, &
                     "unpack into another rank")
    call check(client%put_bytes("ftest.plain", "text"), "put_bytes")
    call expect_code(client%unpack_tensor("ftest.plain", a), SLIPSTREAM_WRONG_TYPE, &
                     "unpack of a string key")
  end subroutine test_tensor_errors

  subroutine test_tensor_management(client)
    type(client_type), intent(inout) :: client
    integer(c_int32_t) :: a(4), b(4), strided(8)
    logical :: flag
    character(len=:), allocatable :: bytes
    a = [1, 2, 3, 4]
    call check(client%put_tensor("ftest.m", a), "put_tensor")
    call check(client%copy_tensor("ftest.m", "ftest.m2"), "copy_tensor")
    call check(client%rename_tensor("ftest.m2", "ftest.m3"), "rename_tensor")
    call check(client%tensor_exists("ftest.m2", flag), "tensor_exists")
    call expect(.not. flag, "renamed tensor is gone")
    b = 0
    call check(client%unpack_tensor("ftest.m3", b), "unpack_tensor")
    call expect(all(a == b), "copied and renamed values")
    ! A non-contiguous section goes in and out through a contiguous temporary.
    strided = 0
    call check(client%unpack_tensor("ftest.m3", strided(1:8:2)), "unpack into a strided section")
    call expect(all(strided(1:8:2) == a) .and. all(strided(2:8:2) == 0), "strided section")
    call check(client%put_tensor("ftest.strided", strided(1:8:2)), "put of a strided section")
    call check(client%unpack_tensor("ftest.strided", b), "unpack")
    call expect(all(a == b), "strided put")
    call check(client%poll_tensor("ftest.m3", 10, 3, flag), "poll_tensor")
    call expect(flag, "poll finds the tensor")
    call check(client%poll_tensor("ftest.never", 10, 2, flag), "poll_tensor")
    call expect(.not. flag, "poll gives up")
    call check(client%delete_tensor("ftest.m3", flag), "delete_tensor")
    call expect(flag, "delete reports the tensor existed")
    call expect_code(client%rename_tensor("ftest.m3", "x"), SLIPSTREAM_KEY_NOT_FOUND, &
                     "rename of a missing tensor")
    ! Raw keys and waits.
    call check(client%put_bytes("ftest.raw", "a b  "), "put_bytes")
    call check(client%get_bytes("ftest.raw", bytes), "get_bytes")
    call expect(bytes == "a b  " .and. len(bytes) == 5, "bytes are not trimmed")
    call check(client%key_exists("ftest.raw", flag), "key_exists")
    call expect(flag, "raw key exists")
    call check(client%poll_key("ftest.raw", 5, 2, flag), "poll_key")
    call check(client%wait_for_keys([character(len=12) :: "ftest.raw", "ftest.raw2"], 0, flag), &
               "wait_for_keys")
    call expect(.not. flag, "one key is missing")
    call check(client%put_bytes("ftest.raw2", ""), "put_bytes")
    call check(client%wait_for_keys([character(len=12) :: "ftest.raw", "ftest.raw2"], 1000, flag), &
               "wait_for_keys")
    call expect(flag, "both keys exist")
    call check(client%delete_bytes("ftest.raw2", flag), "delete_bytes")
    call expect_code(client%get_bytes("ftest.raw2", bytes), SLIPSTREAM_KEY_NOT_FOUND, &
                     "get_bytes of a missing key")
  end subroutine test_tensor_management

  ! Compressed tensors: lossless ones come back exactly (in their Fortran shape), zfp within its
  ! accuracy; an operator that does not fit the data is refused.
  subroutine test_compressed_tensors(client)
    type(client_type), intent(inout) :: client
    integer(c_int16_t) :: ids(12, 5), ids_back(12, 5)
    real(c_double) :: field(16, 8, 2), field_back(16, 8, 2)
    integer :: i, j, k
    do j = 1, 5
      do i = 1, 12
        ids(i, j) = int(100 * i - 7 * j, c_int16_t)
      end do
    end do
    do k = 1, 2
      do j = 1, 8
        do i = 1, 16
          field(i, j, k) = sin(0.1d0 * i) * cos(0.2d0 * j) + k
        end do
      end do
    end do
    call check(client%put_tensor("ftest.zstd", ids, "zstd", "level=7"), "put_tensor with zstd")
    call check(client%put_tensor("ftest.bzip2", ids, "bzip2"), "put_tensor with bzip2")
    ids_back = 0
    call check(client%unpack_tensor("ftest.zstd", ids_back), "unpack a zstd tensor")
    call expect(all(ids_back == ids), "zstd tensor comes back exactly")
    ids_back = 0
    call check(client%unpack_tensor("ftest.bzip2", ids_back), "unpack a bzip2 tensor")
    call expect(all(ids_back == ids), "bzip2 tensor comes back exactly")
    call check(client%put_tensor("ftest.zfp", field, "zfp", "accuracy=1e-6"), "put_tensor with zfp")
    field_back = 0
    call check(client%unpack_tensor("ftest.zfp", field_back), "unpack a zfp tensor")
    call expect(maxval(abs(field_back - field)) <= 1d-6, "zfp tensor within its accuracy")
    call expect(any(field_back /= field), "zfp tensor is lossy, not the raw bytes")
    call expect_code(client%put_tensor("ftest.zfpint", ids, "zfp", "rate=8"), &
                     SLIPSTREAM_INVALID_ARGUMENT, "zfp on integers")
  end subroutine test_compressed_tensors

  subroutine fill_dataset(dataset, name, step)
    type(dataset_type), intent(inout) :: dataset
    character(len=*), intent(in) :: name
    integer, intent(in) :: step
    real(c_double) :: field(2, 3)
    integer(c_int16_t) :: ids(3)
    integer :: i, j
    do j = 1, 3
      do i = 1, 2
        field(i, j) = 10 * (i - 1) + (j - 1)
      end do
    end do
    ids = [7_c_int16_t, 8_c_int16_t, 9_c_int16_t]
    call check(dataset%initialize(name), "dataset initialize")
    call check(dataset%add_tensor("field", field), "add_tensor field")
    call check(dataset%add_tensor("ids", ids), "add_tensor ids")
    call check(dataset%add_meta_scalar("time", 0.125_c_double), "add_meta_scalar real64")
    call check(dataset%add_meta_scalar("ratio", 0.5_c_float), "add_meta_scalar real32")
    call check(dataset%add_meta_scalar("step", int(step, c_int64_t)), "add_meta_scalar int64")
    call check(dataset%add_meta_scalar("step", int(step, c_int64_t)), "add_meta_scalar int64")
    call check(dataset%add_meta_scalar("small", -3_c_int32_t), "add_meta_scalar int32")
    call check(dataset%add_meta_string("model", "ocean   "), "add_meta_string")
    call check(dataset%add_meta_string("model", "1deg"), "add_meta_string")
  end subroutine fill_dataset

  subroutine check_dataset(dataset, step)
    type(dataset_type), intent(inout) :: dataset
    integer, intent(in) :: step
    real(c_double) :: field(2, 3), wrong(3, 2)
    integer(c_int16_t) :: ids(3)
    real(c_double), allocatable :: times(:)
    real(c_float), allocatable :: ratios(:)
    integer(c_int64_t), allocatable :: steps(:)
    integer(c_int32_t), allocatable :: smalls(:)
    character(len=:), allocatable :: strings(:), names(:)
    integer :: meta_type
    logical :: has
    call check(dataset%unpack_tensor("field", field), "dataset unpack field")
    call expect(field(2, 3) == 12 .and. field(1, 2) == 1, "field values")
    call check(dataset%unpack_tensor("ids", ids), "dataset unpack ids")
    call expect(all(ids == [7, 8, 9]), "ids values")
    call expect_code(dataset%unpack_tensor("field", wrong), SLIPSTREAM_INVALID_ARGUMENT, &
                     "dataset unpack into another shape")
    call expect_code(dataset%unpack_tensor("nothing", field), SLIPSTREAM_KEY_NOT_FOUND, &
                     "dataset unpack of a missing tensor")
    call check(dataset%get_meta_scalars("time", times), "get_meta_scalars real64")
    call expect(size(times) == 1, "one time")
    if (size(times) == 1) call expect(times(1) == 0.125_c_double, "time value")
    call check(dataset%get_meta_scalars("ratio", ratios), "get_meta_scalars real32")
    call expect(size(ratios) == 1, "one ratio")
    call check(dataset%get_meta_scalars("step", steps), "get_meta_scalars int64")
    call expect(size(steps) == 2, "two steps")
    if (size(steps) == 2) call expect(all(steps == step), "step values")
    call check(dataset%get_meta_scalars("small", smalls), "get_meta_scalars int32")
    call expect(size(smalls) == 1, "one small")
    if (size(smalls) == 1) call expect(smalls(1) == -3, "small value")
    call expect_code(dataset%get_meta_scalars("time", steps), SLIPSTREAM_INVALID_ARGUMENT, &
                     "get_meta_scalars of another type")
    call expect_code(dataset%get_meta_scalars("nofield", steps), SLIPSTREAM_KEY_NOT_FOUND, &
                     "get_meta_scalars of a missing field")
    call check(dataset%get_meta_strings("model", strings), "get_meta_strings")
    call expect(size(strings) == 2, "two strings")
    if (size(strings) == 2) call expect(strings(1) == "ocean" .and. strings(2) == "1deg", &
                                        "string values (trimmed)")
    call check(dataset%get_tensor_names(names), "get_tensor_names")
    call expect(size(names) == 2, "two tensor names")
    if (size(names) == 2) call expect(names(1) == "field" .and. names(2) == "ids", "tensor names")
    call check(dataset%get_metadata_field_names(names), "get_metadata_field_names")
    call expect(size(names) == 5, "five fields")
    call check(dataset%get_metadata_field_type("ratio", meta_type), "get_metadata_field_type")
    call expect(meta_type == SLIPSTREAM_META_FLOAT, "ratio is a float field")
    call check(dataset%has_field("time", has), "has_field")
    call expect(has, "has time")
    call check(dataset%has_tensor("ids", has), "has_tensor")
    call expect(has, "has ids")
  end subroutine check_dataset

  subroutine test_datasets(client)
    type(client_type), intent(inout) :: client
    type(dataset_type) :: dataset, back
    character(len=:), allocatable :: name
    logical :: flag
    call fill_dataset(dataset, "ftest.ds", 42)
    call check_dataset(dataset, 42)
    call expect_code(dataset%add_meta_string("time", "x"), SLIPSTREAM_INVALID_ARGUMENT, &
                     "a string in a real64 field")
    call check(client%put_dataset(dataset), "put_dataset")
    call check(client%dataset_exists("ftest.ds", flag), "dataset_exists")
    call expect(flag, "dataset exists")
    call check(client%poll_dataset("ftest.ds", 5, 2, flag), "poll_dataset")
    call check(client%get_dataset("ftest.ds", back), "get_dataset")
    call check(back%get_name(name), "get_name")
    call expect(name == "ftest.ds", "dataset name")
    call check_dataset(back, 42)
    call check(back%destroy(), "destroy")
    call check(client%copy_dataset("ftest.ds", "ftest.ds2"), "copy_dataset")
    call check(client%rename_dataset("ftest.ds2", "ftest.ds3"), "rename_dataset")
    call check(client%get_dataset("ftest.ds3", back), "get_dataset of the copy")
    call check_dataset(back, 42)
    call check(back%destroy(), "destroy")
    call check(client%delete_dataset("ftest.ds3"), "delete_dataset")
    call expect_code(client%get_dataset("ftest.ds3", back), SLIPSTREAM_KEY_NOT_FOUND, &
                     "get_dataset of a deleted dataset")
    call check(dataset%clear_field("time"), "clear_field")
    call check(dataset%has_field("time", flag), "has_field")
    call expect(.not. flag, "field cleared")
    call check(dataset%destroy(), "destroy")
    call expect_code(dataset%initialize(""), SLIPSTREAM_INVALID_ARGUMENT, "a blank dataset name")
  end subroutine test_datasets

  subroutine test_lists(client)
    type(client_type), intent(inout) :: client
    type(dataset_type) :: dataset
    type(dataset_type), allocatable :: datasets(:)
    character(len=32) :: name
    integer :: step, length, i
    logical :: reached
    do step = 0, 2
      write(name, '(a, i0)') 'ftest.step', step
      call fill_dataset(dataset, name, step)
      call check(client%put_dataset(dataset), "put_dataset")
      call check(client%append_to_list("ftest.list", dataset), "append_to_list")
      call check(dataset%destroy(), "destroy")
    end do
    call check(client%get_list_length("ftest.list", length), "get_list_length")
    call expect(length == 3, "list length")
    call check(client%poll_list_length("ftest.list", 3, 5, 2, reached), "poll_list_length")
    call expect(reached, "length reached")
    call check(client%poll_list_length_gte("ftest.list", 2, 5, 2, reached), "poll_list_length_gte")
    call expect(reached, "length >= 2")
    call check(client%poll_list_length_lte("ftest.list", 1, 5, 2, reached), "poll_list_length_lte")
    call expect(.not. reached, "length is not <= 1")
    call check(client%get_datasets_from_list("ftest.list", datasets), "get_datasets_from_list")
    call expect(size(datasets) == 3, "three datasets")
    do i = 1, size(datasets)
      call check_dataset(datasets(i), i - 1)
      call check(datasets(i)%destroy(), "destroy")
    end do
    call check(client%get_dataset_list_range("ftest.list", -2, -1, datasets), "list range")
    call expect(size(datasets) == 2, "two datasets in range")
    if (size(datasets) == 2) call check_dataset(datasets(1), 1)
    do i = 1, size(datasets)
      call check(datasets(i)%destroy(), "destroy")
    end do
    call check(client%copy_list("ftest.list", "ftest.list2"), "copy_list")
    call check(client%rename_list("ftest.list2", "ftest.list3"), "rename_list")
    call check(client%get_list_length("ftest.list3", length), "get_list_length")
    call expect(length == 3, "copied list length")
    call check(client%delete_list("ftest.list3"), "delete_list")
    call expect_code(client%copy_list("ftest.list3", "x"), SLIPSTREAM_KEY_NOT_FOUND, &
                     "copy of a missing list")
    call expect_code(client%poll_list_length("ftest.list", -1, 5, 2, reached), &
                     SLIPSTREAM_INVALID_ARGUMENT, "a negative length")
  end subroutine test_lists

  subroutine test_models(client, models_dir)
    type(client_type), intent(inout) :: client
    character(len=*), intent(in) :: models_dir
    real(c_float) :: x(2, 3), y(2, 3), a(3), b(3), out(3)
    real(c_float), target :: xt(2, 3), yt(2, 3), wrong_shape(3, 2)
    real(c_double), target :: wrong_kind(2, 3)
    character(len=:), allocatable :: blob, source
    type(model_info_type) :: info
    integer(c_int64_t) :: chunk, ran
    logical :: flag
    character(len=*), parameter :: script = &
      "def add_two(a, b):" // new_line("a") // "    return a + b" // new_line("a") // &
      new_line("a") // &
      "def scale(tensors: List[Tensor], keys: List[str], args: List[str]):" // new_line("a") // &
      "    return tensors[0] * float(args[0]), tensors[1] + float(len(keys))" // new_line("a")

    x = reshape([0, 1, 2, 3, 4, 5], [2, 3])
    call check(client%set_model_from_file("ftest.scale", models_dir // "/scale.pt", tag="v1"), &
               "set_model_from_file")
    call check(client%model_exists("ftest.scale", flag), "model_exists")
    call expect(flag, "model exists")
    call check(client%put_tensor("ftest.x", x), "put_tensor")
    call check(client%run_model("ftest.scale", ["ftest.x"], ["ftest.y"]), "run_model")
    y = 0
    call check(client%unpack_tensor("ftest.y", y), "unpack result")
    call expect(all(y == x * 2 + 1), "model output x * 2 + 1")
    call check(client%run_model("ftest.scale", ["ftest.x"], ["ftest.y"], timeout_ms=5000), &
               "run_model with a timeout")
    call check(client%get_model_info("ftest.scale", info), "get_model_info")
    call expect(info%type_name == "MODEL" .and. info%tag == "v1" .and. info%calls == 2, &
                "model info")
    call check(client%reset_model_stats("ftest.scale"), "reset_model_stats")
    ! run_model_on: put, run and get in one round trip, straight into an array of the output's
    ! Fortran shape; a shape or kind that does not fit is an error.
    xt = x
    yt = 0
    call check(client%run_model_on("ftest.scale", [tensor_ref("ftest.xt", xt)], &
                                   [tensor_ref("ftest.yt", yt)]), "run_model_on")
    call expect(all(yt == x * 2 + 1), "run_model_on output x * 2 + 1")
    call check(client%unpack_tensor("ftest.yt", y), "unpack run_model_on's stored output")
    call expect(all(y == x * 2 + 1), "run_model_on left its output on the server")
    call check(client%run_model_on("ftest.scale", [tensor_ref("ftest.xt", xt)], &
                                   [tensor_ref("ftest.yt", yt)], timeout_ms=5000), &
               "run_model_on with a timeout")
    call expect_code(client%run_model_on("ftest.scale", [tensor_ref("ftest.xt", xt)], &
                                         [tensor_ref("ftest.yt", wrong_shape)]), &
                     SLIPSTREAM_INVALID_ARGUMENT, "run_model_on into an array of another shape")
    call expect(index(slipstream_last_error(), "not the expected {3, 2}") > 0, &
                "run_model_on's shape message: " // slipstream_last_error())
    call expect_code(client%run_model_on("ftest.scale", [tensor_ref("ftest.xt", xt)], &
                                         [tensor_ref("ftest.yt", wrong_kind)]), &
                     SLIPSTREAM_INVALID_ARGUMENT, "run_model_on into an array of another kind")
    call expect_code(client%run_model_on("ftest.nomodel", [tensor_ref("ftest.xt", xt)], &
                                         [tensor_ref("ftest.yt", yt)]), &
                     SLIPSTREAM_KEY_NOT_FOUND, "run_model_on of a missing model")
    ! A tensor name longer than a tensor_ref holds (TENSOR_REF_MAX_NAME) is refused, not cut.
    call expect_code(client%run_model_on("ftest.scale", [tensor_ref(repeat("n", 1025), xt)], &
                                         [tensor_ref("ftest.yt", yt)]), &
                     SLIPSTREAM_INVALID_ARGUMENT, "run_model_on with a 1025-character name")
    call expect(index(slipstream_last_error(), "1024") > 0, &
                "run_model_on's long-name message: " // slipstream_last_error())
    call check(client%get_model("ftest.scale", blob), "get_model")
    call expect(len(blob) > 100, "model bytes")
    call check(client%set_model("ftest.scale2", blob, backend="TORCH", device="CPU", &
                                batch_size=4), "set_model from bytes")
    ! Version 2 keeps version 1: a run can pin it and learn which version ran.
    call check(client%set_model("ftest.scale2", blob, keep_versions=1), "set_model keeping one")
    call check(client%run_model("ftest.scale2", ["ftest.x"], ["ftest.y"], version=1_c_int64_t, &
                                ran=ran), "run_model pinned to version 1")
    call expect(ran == 1, "version 1 ran")
    call check(client%run_model("ftest.scale2", ["ftest.x"], ["ftest.y"], ran=ran), &
               "run_model reporting its version")
    call expect(ran == 2, "the newest version, 2, ran")
    call expect_code(client%run_model("ftest.scale2", ["ftest.x"], ["ftest.y"], &
                                      version=9_c_int64_t), SLIPSTREAM_SERVER_ERROR, &
                     "a version the model does not hold")
    call check(client%get_model_chunk_size(chunk), "get_model_chunk_size")
    call expect(chunk > 0, "chunk size")
    call expect_code(client%run_model("ftest.nomodel", ["ftest.x"], ["ftest.y"]), &
                     SLIPSTREAM_KEY_NOT_FOUND, "run of a missing model")
    call expect_code(client%run_model("ftest.scale", ["ftest.nox"], ["ftest.y"]), &
                     SLIPSTREAM_KEY_NOT_FOUND, "run on a missing input")
    call expect_code(client%set_model("ftest.bad", "not a model"), SLIPSTREAM_SERVER_ERROR, &
                     "a model the backend rejects")
    call expect_code(client%set_model_from_file("ftest.nofile", "/no/such/file.pt"), &
                     SLIPSTREAM_INVALID_ARGUMENT, "a missing model file")
    call check(client%delete_model("ftest.scale", flag), "delete_model")
    call expect(flag, "model existed")
    call check(client%delete_model("ftest.scale2"), "delete_model")

    a = [1, 2, 3]
    b = [10, 20, 30]
    call check(client%put_tensor("ftest.a", a), "put a")
    call check(client%put_tensor("ftest.b", b), "put b")
    call check(client%set_script("ftest.script", "CPU", script), "set_script")
    call check(client%get_script("ftest.script", source), "get_script")
    call expect(source == script, "script source")
    call check(client%run_script("ftest.script", "add_two", [character(len=7) :: "ftest.a", &
                                 "ftest.b"], ["ftest.sum"]), "run_script")
    call check(client%unpack_tensor("ftest.sum", out), "unpack sum")
    call expect(all(out == a + b), "script output")
    call expect_code(client%run_script("ftest.script", "nothing", ["ftest.a"], ["ftest.z"]), &
                     SLIPSTREAM_SERVER_ERROR, "an unknown script function")
    call check(client%set_script("ftest.script2", "CPU", script, entry_points=["scale"]), &
               "set_script with an entry point")
    call check(client%run_script_with_keys("ftest.script2", "scale", ["k1", "k2"], &
                                           [character(len=7) :: "ftest.a", "ftest.b"], ["2.5"], &
                                           [character(len=12) :: "ftest.scaled", "ftest.shift"]), &
               "run_script_with_keys")
    call check(client%unpack_tensor("ftest.scaled", out), "unpack scaled")
    call expect(all(out == a * 2.5), "scaled output")
    call check(client%delete_script("ftest.script", flag), "delete_script")
    call expect(flag, "script existed")
    call expect_code(client%get_script("ftest.script", source), SLIPSTREAM_KEY_NOT_FOUND, &
                     "get_script of a deleted script")
  end subroutine test_models

  subroutine test_prefixes_and_info(client)
    type(client_type), intent(inout) :: client
    type(client_type) :: member
    character(len=:), allocatable :: text, address
    real(c_double) :: v(2)
    logical :: flag
    call check(client%info(text, "server"), "info server")
    call expect(index(text, "# Server") > 0, "INFO server text")
    call check(client%info(text), "info")
    call check(client%get_address(address), "get_address")
    call expect(len(address) > 0, "address")

    call check(member%initialize(key_prefix_out="member0", key_prefixes_in="member0,member1"), &
               "initialize with prefixes")
    v = [1, 2]
    call check(member%put_tensor("t", v), "put with prefix")
    call check(client%key_exists("member0.t", flag), "key_exists")
    call expect(flag, "stored under member0.t")
    call check(member%set_data_source("member1"), "set_data_source")
    call check(member%tensor_exists("t", flag), "tensor_exists")
    call expect(.not. flag, "member1.t does not exist")
    call expect_code(member%set_data_source("nobody"), SLIPSTREAM_INVALID_ARGUMENT, &
                     "an unknown data source")
    call check(member%use_tensor_ensemble_prefix(.false.), "use_tensor_ensemble_prefix")
    call check(member%tensor_exists("member0.t", flag), "tensor_exists")
    call expect(flag, "raw name without prefixing")
    call check(member%use_dataset_ensemble_prefix(.false.), "use_dataset_ensemble_prefix")
    call check(member%use_list_ensemble_prefix(.false.), "use_list_ensemble_prefix")
    call check(member%use_model_ensemble_prefix(.true.), "use_model_ensemble_prefix")
    call check(member%model_ensemble_prefix_enabled(flag), "model_ensemble_prefix_enabled")
    call expect(flag, "model prefix enabled")
    call check(member%destroy(), "destroy")
  end subroutine test_prefixes_and_info

  include "roundtrip_cases.inc"

end program fortran_test
