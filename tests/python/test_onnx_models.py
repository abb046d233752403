"""ONNX models exported from PyTorch (torch.onnx.export, Debian's python3-torch) and stored
through the session's real server as ONNX: an MLP, a small CNN, an LSTM and a GRU, each at
opsets 13 and 17 with a dynamic batch dimension; every output compared with PyTorch's own
(within 1e-5 relative). Also: several inputs and outputs bound by position, batching across
clients' requests, AI.MODELGET's blob and backend, and the errors for TF and TFLITE."""

import io
import threading

import numpy as np
import pytest
import torch

import slipstream

RTOL, ATOL = 1e-5, 1e-6


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = torch.nn.Linear(6, 16)
        self.out = torch.nn.Linear(16, 3)

    def forward(self, x):
        return torch.softmax(self.out(torch.tanh(self.hidden(x))), dim=-1)


class Cnn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(2, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
            torch.nn.MaxPool2d(2), torch.nn.Conv2d(8, 4, 3, stride=2), torch.nn.ReLU(),
            torch.nn.AdaptiveAvgPool2d(1))
        self.head = torch.nn.Linear(4, 5)

    def forward(self, x):
        return self.head(torch.flatten(self.features(x), 1))


class Recurrent(torch.nn.Module):
    def __init__(self, kind):
        super().__init__()
        self.cell = kind(input_size=3, hidden_size=5, num_layers=2, batch_first=True,
                         bidirectional=True)
        self.out = torch.nn.Linear(10, 2)

    def forward(self, x):
        y, _ = self.cell(x)
        return self.out(y[:, -1])


class TwoInTwoOut(torch.nn.Module):
    def forward(self, a, b):
        return a + 2 * b, torch.matmul(a, b.t())


def exported(module, example, opset, names=("x",), outputs=("y",)):
    buffer = io.BytesIO()
    torch.onnx.export(module, example, buffer, opset_version=opset, input_names=list(names),
                      output_names=list(outputs),
                      dynamic_axes={name: {0: "batch"} for name in names})
    return buffer.getvalue()


def check_against_torch(client, key, module, example, opset, batch):
    """Stores `module` exported at `opset` and compares a run on a batch of another size with
    PyTorch's own output."""
    module.eval()
    client.set_model(key("m"), exported(module, example, opset), "ONNX", "CPU")
    torch.manual_seed(opset)
    x = torch.randn(batch, *example.shape[1:])
    with torch.no_grad():
        expected = module(x).numpy()
    (got,) = client.run_model_on(key("m"), {key("x"): x.numpy()}, [key("y")])
    assert got.dtype == np.float32 and got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("opset", [13, 17])
def test_mlp(client, key, opset):
    torch.manual_seed(0)
    check_against_torch(client, key, Mlp(), torch.randn(4, 6), opset, batch=7)


@pytest.mark.parametrize("opset", [13, 17])
def test_cnn(client, key, opset):
    torch.manual_seed(1)
    module = Cnn()
    with torch.no_grad():  # batch norm statistics that are not the identity
        module.features[1].running_mean.uniform_(-0.5, 0.5)
        module.features[1].running_var.uniform_(0.5, 2.0)
    check_against_torch(client, key, module, torch.randn(2, 2, 12, 12), opset, batch=3)


@pytest.mark.parametrize("opset", [13, 17])
@pytest.mark.parametrize("kind", [torch.nn.LSTM, torch.nn.GRU], ids=["lstm", "gru"])
def test_recurrent(client, key, opset, kind):
    torch.manual_seed(2)
    check_against_torch(client, key, Recurrent(kind), torch.randn(2, 7, 3), opset, batch=4)


def test_inputs_and_outputs_bound_by_position(client, key):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.full((2, 3), 0.5, dtype=np.float32)
    blob = exported(TwoInTwoOut(), (torch.from_numpy(a), torch.from_numpy(b)), 17,
                    names=("a", "b"), outputs=("s", "p"))
    client.set_model(key("m"), blob, "ONNX", "CPU", inputs=["a", "b"], outputs=["s", "p"])
    client.put_tensors({key("a"): a, key("b"): b})
    client.run_model(key("m"), [key("a"), key("b")], [key("s"), key("p")])
    np.testing.assert_allclose(client.get_tensor(key("s")), a + 2 * b)
    np.testing.assert_allclose(client.get_tensor(key("p")), a @ b.T)
    assert client.get_model(key("m")) == blob


def test_batched_requests_of_several_clients(server, client, key):
    """BATCHSIZE / MINBATCHSIZE: requests of three clients (2 rows each) are run as one batch,
    and each gets its own rows back. MINBATCHSIZE 6 waits for all three (up to 30 s), whichever
    executor thread takes each."""
    torch.manual_seed(3)
    module = Mlp().eval()
    client.set_model(key("m"), exported(module, torch.randn(1, 6), 17), "ONNX", "CPU",
                     batch_size=6, min_batch_size=6, min_batch_timeout_ms=30_000)
    results, errors = {}, []

    def one(rank):
        try:
            own = slipstream.Client(server.unix_address)
            x = np.full((2, 6), rank, dtype=np.float32)
            (results[rank],) = own.run_model_on(key("m"), {key(f"x{rank}"): x}, [key(f"y{rank}")],
                                                timeout_ms=60_000)
        except Exception as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=one, args=(rank,)) for rank in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not errors, errors
    info = client.model_info(key("m"))
    assert info.backend == "ONNX"
    figures = (info.calls, info.samples, info.runs, info.batches)
    assert figures == (3, 6, 1, 1), figures
    for rank in range(3):
        with torch.no_grad():
            expected = module(torch.full((2, 6), float(rank))).numpy()
        np.testing.assert_allclose(results[rank], expected, rtol=RTOL, atol=ATOL)


def test_other_backends_say_what_exists(client, key):
    for backend in ("TF", "TFLITE"):
        with pytest.raises(slipstream.ServerError, match="TORCH.*or ONNX"):
            client.set_model(key("m"), b"not a graph", backend, "CPU")
    with pytest.raises(slipstream.ServerError, match="not an ONNX model"):
        client.set_model(key("m"), b"not a graph", "ONNX", "CPU")
    assert not client.model_exists(key("m"))
