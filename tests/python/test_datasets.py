"""Datasets with metadata, aggregation lists and ensemble key prefixes from Python."""

import numpy as np
import pytest
import torch

import slipstream


def make_dataset(name, step=0):
    dataset = slipstream.Dataset(name)
    dataset.add_tensor("field", np.arange(12, dtype=np.float64).reshape(3, 4) + step)
    dataset.add_tensor("ids", np.array([7, 8, 9], dtype=np.int32))
    dataset.add_tensor("mask", torch.tensor([True, False]))
    dataset.add_meta_scalar("step", step)
    return dataset


def test_dataset_round_trip_with_every_metadata_type(client, key):
    dataset = make_dataset(key("ds"), step=3)
    fortran = np.asfortranarray(np.arange(6, dtype=np.int16).reshape(2, 3))
    dataset.add_tensor("fortran", fortran)
    dataset.add_meta_scalar("time", 0.125)               # float64
    dataset.add_meta_scalar("time", 0.25)                # appended
    dataset.add_meta_scalar("f32", np.float32(1.5))
    dataset.add_meta_scalar("i32", np.int32(-4))
    dataset.add_meta_scalar("i32", 5)                    # a Python int takes the field's type
    dataset.add_meta_scalar("u32", np.uint32(4_000_000_000))
    dataset.add_meta_scalar("u64", np.uint64(2**63 + 1))
    dataset.add_meta_string("model", "ocean-1deg")
    dataset.add_meta_string("model", "h\u00e9at")
    client.put_dataset(dataset)
    assert client.dataset_exists(key("ds"))
    assert client.poll_dataset(key("ds"), 10, 2)

    back = client.get_dataset(key("ds"))
    assert back.name == key("ds") == back.get_name()
    assert back.get_tensor_names() == ["field", "ids", "mask", "fortran"]
    np.testing.assert_array_equal(back.get_tensor("field"), dataset.get_tensor("field"))
    np.testing.assert_array_equal(back.get_tensor("ids"), [7, 8, 9])
    np.testing.assert_array_equal(back.get_tensor("mask"), [True, False])
    np.testing.assert_array_equal(back.get_tensor("fortran"), fortran)
    assert back.get_tensor_type("ids") == slipstream.DType.INT32
    assert back.get_tensor_dims("fortran") == [2, 3]

    expected = {
        "step": (slipstream.MetaDataType.INT64, np.int64, [3]),
        "time": (slipstream.MetaDataType.FLOAT64, np.float64, [0.125, 0.25]),
        "f32": (slipstream.MetaDataType.FLOAT32, np.float32, [1.5]),
        "i32": (slipstream.MetaDataType.INT32, np.int32, [-4, 5]),
        "u32": (slipstream.MetaDataType.UINT32, np.uint32, [4_000_000_000]),
        "u64": (slipstream.MetaDataType.UINT64, np.uint64, [2**63 + 1]),
    }
    for field, (meta_type, dtype, values) in expected.items():
        assert back.get_metadata_field_type(field) == meta_type, field
        scalars = back.get_meta_scalars(field)
        assert scalars.dtype == dtype, field
        assert scalars.tolist() == values, field
    assert back.get_meta_strings("model") == ["ocean-1deg", "h\u00e9at"]
    assert back.get_metadata_field_type("model") == slipstream.MetaDataType.STRING
    assert set(back.get_metadata_field_names()) == set(expected) | {"model"}


def test_dataset_tensors_are_read_only_views_that_keep_the_dataset_alive(client, key):
    client.put_dataset(make_dataset(key("ds")))
    back = client.get_dataset(key("ds"))
    field = back.get_tensor("field")
    assert not field.flags.writeable and not field.flags.owndata
    assert field.base is back
    del back
    np.testing.assert_array_equal(field, np.arange(12, dtype=np.float64).reshape(3, 4))
    with pytest.raises(ValueError):
        field[0, 0] = 1.0
    writable = field.copy()
    writable[0, 0] = 1.0


def test_dataset_local_errors():
    dataset = slipstream.Dataset("local")
    dataset.add_tensor("a", np.zeros(2))
    with pytest.raises(slipstream.InvalidArgumentError):
        dataset.add_tensor("a", np.zeros(2))                 # name already used
    with pytest.raises(slipstream.KeyNotFoundError):
        dataset.get_tensor("missing")
    with pytest.raises(KeyError):                            # also a KeyError
        dataset.get_meta_scalars("missing")
    dataset.add_meta_scalar("x", 1.0)
    with pytest.raises(slipstream.InvalidArgumentError):
        dataset.add_meta_scalar("x", np.int32(1))            # field holds float64
    with pytest.raises(slipstream.InvalidArgumentError):
        dataset.get_meta_strings("x")
    with pytest.raises(TypeError):
        dataset.add_meta_scalar("y", "text")
    with pytest.raises(TypeError):
        dataset.add_meta_scalar("y", np.int8(1))
    with pytest.raises(slipstream.InvalidArgumentError):
        slipstream.Dataset("")
    out = np.zeros(2)
    dataset.unpack_tensor("a", out)
    with pytest.raises(slipstream.InvalidArgumentError,
                       match=r"'a' has shape \{2\}, not the expected \{3\}"):
        dataset.unpack_tensor("a", np.zeros(3))
    assert "a" in dataset and "b" not in dataset
    dataset.clear_field("x")
    assert not dataset.has_field("x")


def test_dataset_management(client, key):
    client.put_dataset(make_dataset(key("ds")))
    client.copy_dataset(key("ds"), key("copy"))
    client.rename_dataset(key("copy"), key("moved"))
    assert not client.dataset_exists(key("copy"))
    np.testing.assert_array_equal(client.get_dataset(key("moved")).get_tensor("ids"), [7, 8, 9])
    client.delete_dataset(key("moved"))
    assert not client.dataset_exists(key("moved"))
    with pytest.raises(slipstream.KeyNotFoundError):
        client.get_dataset(key("moved"))
    assert not client.poll_dataset(key("moved"), 5, 2)


def test_aggregation_lists(client, key):
    for step in range(5):
        dataset = make_dataset(key(f"step{step}"), step)
        client.put_dataset(dataset)
        client.append_to_list(key("list"), dataset)
    assert client.get_list_length(key("list")) == 5
    assert client.poll_list_length(key("list"), 5, 10, 2)
    assert client.poll_list_length_gte(key("list"), 3, 10, 2)
    assert client.poll_list_length_lte(key("list"), 9, 10, 2)
    assert not client.poll_list_length(key("list"), 6, 5, 2)

    datasets = client.get_datasets_from_list(key("list"))
    assert [d.get_meta_scalars("step")[0] for d in datasets] == [0, 1, 2, 3, 4]
    for step, dataset in enumerate(datasets):
        np.testing.assert_array_equal(dataset.get_tensor("field"),
                                      np.arange(12.0).reshape(3, 4) + step)
    tail = client.get_dataset_list_range(key("list"), -2, -1)
    assert [d.get_meta_scalars("step")[0] for d in tail] == [3, 4]

    client.copy_list(key("list"), key("copy"))
    client.rename_list(key("copy"), key("moved"))
    assert client.get_list_length(key("copy")) == 0
    assert client.get_list_length(key("moved")) == 5
    client.delete_list(key("moved"))
    assert client.get_list_length(key("moved")) == 0
    with pytest.raises(slipstream.KeyNotFoundError):
        client.copy_list(key("moved"), key("again"))


def test_ensemble_prefixes(server, key):
    with slipstream.Client(server.unix_address, key_prefix_out="member1",
                           key_prefixes_in="member1,member2") as member1, \
            slipstream.Client(server.unix_address, key_prefix_out="member2",
                              key_prefixes_in="member1,member2") as member2:
        member1.put_tensor(key("t"), np.array([1.0]))
        member2.put_tensor(key("t"), np.array([2.0]))
        assert member1.key_exists("member1." + key("t"))
        assert member1.key_exists("member2." + key("t"))
        assert member1.get_tensor(key("t"))[0] == 1.0          # data source: first prefix
        member1.set_data_source("member2")
        assert member1.get_tensor(key("t"))[0] == 2.0
        with pytest.raises(slipstream.InvalidArgumentError):
            member1.set_data_source("member3")

        dataset = make_dataset(key("ds"))
        member2.put_dataset(dataset)
        member2.append_to_list(key("list"), dataset)
        assert member1.get_dataset(key("ds")).get_tensor_names()[0] == "field"
        assert member1.get_list_length(key("list")) == 1

        member1.use_tensor_ensemble_prefix(False)
        member1.put_tensor(key("plain"), np.array([3.0]))
        assert member1.key_exists(key("plain"))
        assert not member1.model_ensemble_prefix_enabled()
        member1.use_model_ensemble_prefix(True)
        assert member1.model_ensemble_prefix_enabled()
        member1.use_dataset_ensemble_prefix(False)
        member1.use_list_ensemble_prefix(False)
        assert member1.get_list_length(key("list")) == 0       # no prefix any more
