"""Training from Python: ReplayMemory (the trainer's policies over Python objects), StreamDataset
(a stream as a torch IterableDataset) and publish, closing the loop with a Python training loop
against a real server."""

import math
import threading

import numpy as np
import pytest
import torch

import slipstream

from test_stream import run_threads
from test_train import Mlp


def test_replay_memory_policies_bounds_and_errors():
    fifo = slipstream.ReplayMemory("fifo", max_samples=3, seed=1)
    for i in range(5):
        fifo.add(("sample", i))
    assert len(fifo) == 3
    assert {value for _, value in fifo.draw(200)} == {2, 3, 4}  # the most recent window
    stats = fifo.stats()
    assert stats["seen"] == 5 and stats["evicted"] == 2 and stats["draws"] == 200
    reservoir = slipstream.ReplayMemory("reservoir", max_samples=10, min_fill=4, seed=3)
    assert not reservoir.ready() and reservoir.draw(3) == []
    for i in range(1000):
        reservoir.add(i)
    assert reservoir.ready() and len(reservoir) == 10
    assert max(reservoir.draw(100)) > 100  # not just the first ten
    bounded = slipstream.ReplayMemory("firo", max_samples=100, max_bytes=10)
    assert bounded.add("a", 8) and not bounded.add("too big", 11)
    with pytest.raises(slipstream.InvalidArgumentError, match="replay policy"):
        slipstream.ReplayMemory("lifo")
    with pytest.raises(slipstream.InvalidArgumentError):
        slipstream.ReplayMemory("fifo", max_samples=2, min_fill=3)


def build(records):
    xy = np.concatenate(records["samples/xy"])
    if np.isnan(xy).any():
        raise ValueError("this step holds NaN")
    return xy[:, :1], xy[:, 1:]


def test_a_python_loop_learns_from_a_stream_and_publishes(server, client, key):
    stream, name = key("sine"), key("model")
    rng = np.random.default_rng(5)

    def write():
        with slipstream.StreamWriter(stream, address=server.unix_address,
                                     expected_groups=1) as writer:
            for step in range(40):
                x = rng.uniform(-math.pi, math.pi, 128).astype(np.float32)
                xy = np.stack([x, np.sin(x)], axis=1)
                if step == 3:
                    xy[0, 0] = np.nan
                writer.begin_step(step)
                writer.put_chunk("samples/xy", xy, xy.shape, (0, 0))
                writer.end_step()

    versions = []
    dataset = slipstream.StreamDataset(stream, build, address=server.unix_address,
                                       replay=slipstream.ReplayMemory("reservoir", 4096, seed=2),
                                       next_timeout_ms=10000)

    def train():
        model = torch.jit.script(Mlp())
        optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
        loader = torch.utils.data.DataLoader(dataset, batch_size=64)
        for batch, (x, y) in enumerate(loader):
            optimizer.zero_grad()
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
            if batch % 20 == 19:
                versions.append(slipstream.publish(client, name, model, keep_versions=1,
                                                   batch=batch, loss=f"{loss.item():.5f}"))
        for _ in range(300):  # the stream has ended: more passes over the memory
            x, y = (torch.stack(t) for t in zip(*dataset.replay.draw(64)))
            optimizer.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
        versions.append(slipstream.publish(client, name, model, keep_versions=1, final=1))

    run_threads(write, train)
    assert dataset.steps == 40
    assert [step for step, _ in dataset.errors] == [3] and "NaN" in dataset.errors[0][1]
    assert versions == list(range(1, len(versions) + 1)) and len(versions) >= 3
    probe = np.linspace(-3, 3, 61, dtype=np.float32).reshape(-1, 1)
    (y,), ran = client.run_model_on(name, [(key("probe"), probe)], [key("out")], version=0)
    assert ran == versions[-1]
    assert float(np.mean((y - np.sin(probe)) ** 2)) < 0.01
    meta = client.command(["AI.MODELGET", name, "META"])
    fields = {(k.decode() if isinstance(k, bytes) else k): v for k, v in zip(meta[::2], meta[1::2])}
    tag = fields["tag"].decode() if isinstance(fields["tag"], bytes) else fields["tag"]
    assert "final=1" in tag, tag
    # The version before the last is kept for callers that pin it.
    assert client.run_model(name, key("probe"), key("out"), version=versions[-2]) == versions[-2]
