"""Models and scripts from Python: set_model from bytes, a file and a torch.jit.ScriptModule;
run_model results equal torch's own; run_model_on; scripts in both forms; model errors."""

import io

import numpy as np
import pytest
import torch

import slipstream


class TwoLayer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = torch.nn.Linear(4, 8)
        self.out = torch.nn.Linear(8, 2)

    def forward(self, x):
        return self.out(torch.relu(self.hidden(x)))


class SumAndProduct(torch.nn.Module):
    def forward(self, a, b):
        return a + b, a * b


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(1234)
    return torch.jit.script(TwoLayer().eval())


def model_bytes(module):
    buffer = io.BytesIO()
    torch.jit.save(module, buffer)
    return buffer.getvalue()


def expected_output(module, x):
    with torch.no_grad():
        return module(torch.from_numpy(x)).numpy()


def inputs(rows=5):
    return np.random.default_rng(7).standard_normal((rows, 4)).astype(np.float32)


def test_script_module_bytes_and_file_store_the_same_model(client, key, model, tmp_path):
    x = inputs()
    client.put_tensor(key("x"), x)
    expected = expected_output(model, x)

    client.set_model(key("from_module"), model)
    blob = model_bytes(model)
    client.set_model(key("from_bytes"), blob)
    client.set_model(key("from_bytearray"), memoryview(bytearray(blob)), "TORCH", "CPU",
                     tag="v1", inputs=["x"], outputs=["y"])
    path = tmp_path / "model.pt"
    torch.jit.save(model, str(path))
    client.set_model_from_file(key("from_file"), path)
    client.set_model_from_file(key("from_str_path"), str(path), device="CPU")

    for name in ("from_module", "from_bytes", "from_bytearray", "from_file", "from_str_path"):
        assert client.model_exists(key(name))
        client.run_model(key(name), [key("x")], [key(f"y.{name}")])
        got = client.get_tensor(key(f"y.{name}"))
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6, err_msg=name)
    assert client.get_model(key("from_bytes")) == blob
    assert client.model_info(key("from_bytearray")).tag == "v1"


def test_traced_model_with_two_inputs_and_outputs(client, key):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.full((2, 3), 2.0, dtype=np.float32)
    traced = torch.jit.trace(SumAndProduct(), (torch.from_numpy(a), torch.from_numpy(b)))
    client.set_model(key("m"), traced)
    client.put_tensors({key("a"): a, key("b"): b})
    client.run_model(key("m"), [key("a"), key("b")], [key("sum"), key("product")])
    np.testing.assert_array_equal(client.get_tensor(key("sum")), a + b)
    np.testing.assert_array_equal(client.get_tensor(key("product")), a * b)


def test_run_model_on_in_one_round_trip(client, key, model):
    client.set_model(key("m"), model, batch_size=8)
    for step in range(3):
        x = inputs(rows=step + 1)
        (y,) = client.run_model_on(key("m"), {key("x"): x}, [key("y")], timeout_ms=10_000)
        np.testing.assert_allclose(y, expected_output(model, x), rtol=1e-6, atol=1e-6)
        assert not y.flags.owndata  # handed over like get_tensor
    # torch inputs too
    x = torch.from_numpy(inputs())
    (y,) = client.run_model_on(key("m"), [(key("x"), x)], key("y"))
    np.testing.assert_allclose(y, expected_output(model, x.numpy()), rtol=1e-6, atol=1e-6)


def test_versions_report_which_ran_and_pin_a_kept_one(client, key, model):
    doubled = torch.jit.script(SumAndProduct())  # version 2: another model under the same key
    client.set_model(key("m"), model)
    client.set_model(key("m"), doubled, keep_versions=1)
    x = inputs()
    client.put_tensor(key("x"), x)
    assert client.run_model(key("m"), key("x"), key("y"), version=1) == 1
    np.testing.assert_allclose(client.get_tensor(key("y")), expected_output(model, x), rtol=1e-6,
                               atol=1e-6)
    (s, _), ran = client.run_model_on(key("m"), [(key("a"), x), (key("b"), x)],
                                      [key("s"), key("p")], version=0)
    assert ran == 2
    np.testing.assert_array_equal(s, x + x)
    # No version asked: the newest, and None back.
    assert client.run_model(key("m"), [key("a"), key("b")], [key("s"), key("p")]) is None
    with pytest.raises(slipstream.ServerError, match="has no version 3"):
        client.run_model(key("m"), key("x"), key("y"), version=3)
    with pytest.raises(slipstream.InvalidArgumentError):
        client.run_model(key("m"), key("x"), key("y"), version=-1)
    with pytest.raises(slipstream.InvalidArgumentError):
        client.set_model(key("m"), model, keep_versions=65)


def test_model_management_and_statistics(client, key, model):
    client.set_model(key("m"), model)
    client.put_tensor(key("x"), inputs())
    for _ in range(3):
        client.run_model(key("m"), key("x"), key("y"))
    info = client.model_info(key("m"))
    assert isinstance(info, slipstream.ModelInfo)
    assert (info.type, info.backend, info.device) == ("MODEL", "TORCH", "CPU")
    assert info.calls == 3 and info.samples == 15 and info.errors == 0 and info.version == 1
    client.reset_model_stats(key("m"))
    assert client.model_info(key("m")).calls == 0
    assert client.model_chunk_size() > 0
    assert client.delete_model(key("m"))
    assert not client.delete_model(key("m"))
    assert not client.model_exists(key("m"))
    with pytest.raises(slipstream.KeyNotFoundError):
        client.get_model(key("m"))
    with pytest.raises(slipstream.KeyNotFoundError):
        client.run_model(key("m"), [key("x")], [key("y")])
    with pytest.raises(slipstream.KeyNotFoundError):
        client.model_info(key("m"))


def test_model_errors_carry_the_servers_message(client, key, model):
    with pytest.raises(slipstream.ServerError) as bad_blob:
        client.set_model(key("bad"), b"this is not a torchscript archive")
    assert "PytorchStreamReader" in bad_blob.value.server_text  # libtorch's own words
    assert bad_blob.value.server_text in str(bad_blob.value)
    assert key("bad") in str(bad_blob.value)

    client.set_model(key("m"), model)
    client.put_tensor(key("wrong_width"), np.zeros((2, 5), dtype=np.float32))
    with pytest.raises(slipstream.ServerError) as rejected:
        client.run_model(key("m"), [key("wrong_width")], [key("y")])
    assert "mat1 and mat2 shapes cannot be multiplied" in rejected.value.server_text
    assert not client.tensor_exists(key("y"))
    with pytest.raises(slipstream.KeyNotFoundError):
        client.run_model(key("m"), [key("no_input")], [key("y")])

    with pytest.raises(TypeError, match="torch.jit.script"):
        client.set_model(key("plain"), TwoLayer())
    with pytest.raises(TypeError, match="set_model_from_file"):
        client.set_model(key("path"), "model.pt")
    with pytest.raises(slipstream.InvalidArgumentError):
        client.set_model(key("empty"), b"")
    with pytest.raises(slipstream.InvalidArgumentError):
        client.set_model_from_file(key("nofile"), "/nonexistent/model.pt")


SCRIPT = """
def add_two(a, b):
    return a + b

def scale(tensors: List[Tensor], keys: List[str], args: List[str]):
    return tensors[0] * float(args[0]), tensors[1] + float(len(keys))
"""


def test_scripts_in_both_forms(client, key, tmp_path):
    a = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    b = np.array([10.0, 20.0, 30.0], dtype=np.float32)
    client.put_tensors({key("a"): a, key("b"): b})

    client.set_script(key("old"), SCRIPT)
    assert client.get_script(key("old")) == SCRIPT
    client.run_script(key("old"), "add_two", [key("a"), key("b")], [key("sum")])
    np.testing.assert_array_equal(client.get_tensor(key("sum")), a + b)

    client.set_script(key("new"), SCRIPT, "CPU", entry_points=["scale"])
    client.run_script(key("new"), "scale", [key("a"), key("b")], [key("scaled"), key("shifted")],
                      keys=["k1", "k2"], args=["2.5"])
    np.testing.assert_array_equal(client.get_tensor(key("scaled")), a * 2.5)
    np.testing.assert_array_equal(client.get_tensor(key("shifted")), b + 2.0)
    assert client.model_info(key("new")).type == "SCRIPT"

    with pytest.raises(slipstream.ServerError) as unknown:
        client.run_script(key("old"), "no_such_function", [key("a")], [key("z")])
    assert "no_such_function" in unknown.value.server_text
    with pytest.raises(slipstream.ServerError):
        client.set_script(key("broken"), "def f(a):\n    return a +\n")

    path = tmp_path / "script.py"
    path.write_text(SCRIPT)
    client.set_script_from_file(key("file"), path)
    assert client.get_script(key("file")) == SCRIPT
    assert client.delete_script(key("old"))
    assert not client.delete_script(key("old"))
    with pytest.raises(slipstream.KeyNotFoundError):
        client.get_script(key("old"))
