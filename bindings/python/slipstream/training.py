"""Training from a stream in Python: StreamDataset (a torch IterableDataset over a stream, with an
optional replay memory) and publish (a model stored for the simulation to call), for users who keep
their own PyTorch loop (e.g. with torch.distributed) instead of `slipstream train`.

    dataset = slipstream.StreamDataset("pic", samples=build, rank=rank, size=world,
                                       replay=slipstream.ReplayMemory("reservoir", 10000))
    for x, y in torch.utils.data.DataLoader(dataset, batch_size=64):
        ...
        slipstream.publish(client, "surrogate", model, keep_versions=2, step=step)
"""

import io

import torch

from slipstream._slipstream import StreamReader


class StreamDataset(torch.utils.data.IterableDataset):
    """The samples of a stream, read as reader `rank` of `size` of a consumer group.

    samples(records) turns one step into (input, target): records maps each component name to
    this reader's pieces of it (numpy arrays, copied, so they outlive the step), and input and
    target are tensors (or arrays) whose first dimension counts the samples. A step of which this
    reader has no piece is skipped; a step the builder raises on is skipped too, its error kept
    in `errors` (step number, message), so one bad step does not end the training.

    Without a replay memory each new sample is yielded once, in order. With one (a
    slipstream.ReplayMemory), each new sample is offered to it and, once it is ready, as many
    samples as the step brought are drawn from it and yielded: the loader's batches mix old and
    new samples as the policy decides. Iteration ends with the stream. Reader options
    (address, strategy, policy, start, next_timeout_ms, ...) go to slipstream.StreamReader.
    Iterate it in the main process (DataLoader num_workers=0): the reader is one member of the
    group.
    """

    def __init__(self, stream, samples, group="trainer", rank=0, size=1, replay=None,
                 strategy="roundrobin", **reader_options):
        super().__init__()
        self.stream, self.samples, self.group = stream, samples, group
        self.rank, self.size, self.replay = rank, size, replay
        self.reader_options = dict(reader_options, strategy=strategy)
        self.errors = []
        self.steps = 0

    def __iter__(self):
        with StreamReader(self.stream, self.group, self.rank, self.size,
                          **self.reader_options) as reader:
            for step in reader:
                with step:
                    records = {name: [piece.array.copy() for piece in step.load(name)]
                               for name in step.components}
                    number = step.number
                self.steps += 1
                if not any(records.values()):
                    continue
                try:
                    inputs, targets = self.samples(records)
                except Exception as error:  # a bad step costs its samples, not the run
                    self.errors.append((number, f"{type(error).__name__}: {error}"))
                    continue
                inputs, targets = torch.as_tensor(inputs), torch.as_tensor(targets)
                if inputs.shape[:1] != targets.shape[:1]:
                    self.errors.append((number, f"{inputs.shape[0]} inputs and "
                                                f"{targets.shape[0]} targets"))
                    continue
                new = list(zip(inputs, targets))
                if self.replay is None:
                    yield from new
                    continue
                for x, y in new:
                    self.replay.add((x, y), x.element_size() * x.nelement()
                                    + y.element_size() * y.nelement())
                if self.replay.ready():
                    yield from self.replay.draw(len(new))


def publish(client, name, model, keep_versions=0, **metadata):
    """Stores `model` (a torch.jit.ScriptModule, or TorchScript bytes) under `name` for the
    simulation's run_model calls, with `metadata` as its tag ("key=value ..."); keep_versions
    earlier versions stay loaded for callers that pin one (run_model(..., version=v)). Returns
    the version now stored, as the server counts stores of the key."""
    if isinstance(model, (bytes, bytearray, memoryview)):
        data = model
    else:
        buffer = io.BytesIO()
        torch.jit.save(model, buffer)
        data = buffer.getvalue()
    tag = " ".join(f"{key}={value}" for key, value in metadata.items())
    client.set_model(name, data, tag=tag, keep_versions=keep_versions)
    return client.model_info(name).version
